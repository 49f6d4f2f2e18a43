"""An IR collection into goldens: TREC topics, runs, pools and qrels, and a corpus of texts.

A query is a golden (its text the question; no reference answer: relevance is to the query, as
TREC defines it), its documents the chunks: a run's ranking (trec_eval's order: score
descending, then document id descending), or an unranked pool (``qid 0 docid`` lines, or a
qrels file whose grades are ignored) in the order the file lists it. Each chunk keeps its
document id, so every qrels and run export names it again. Qrels come in as a person's labels
or a judge's verdicts, graded: the grade is kept, and the verdict is the grade read through the
session's threshold (``relevant_from``).

File formats (whitespace-separated, ``#`` lines and blank lines skipped):

- topics: TSV ``qid<TAB>text``, or JSON lines ``{"_id": ..., "text": ...}`` as BEIR writes them;
- run: ``qid Q0 docid rank score tag``;
- pool: ``qid 0 docid`` (or a qrels file);
- qrels: ``qid 0 docid grade``, grades whole numbers from 0 to the scale's top;
- corpus: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``) or TSV ``docid<TAB>text``.

Every fault is an InputError naming the file, the line and the value; nothing here touches a
session file. A collection is several files, so it is no ``import --from`` source (IMPORTERS):
``annotator import-trec`` reads and stores it through annotator/intake/trec.py.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotator.errors import InputError
from annotator.models import MAX_CHUNKS, GoldenRecord, JudgeVerdict, Scale, default_threshold
from annotator.text import counted
from annotator.untrusted import LineTooLong, UnsafeJson, bounded_lines, parse_json

NO_TEXT = "(text not provided)"
"""What a chunk shows when no corpus gave its document's text (its id follows)."""

@dataclass
class _Query:
    text: str
    docs: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, blank and '#' lines skipped; a line too long to be
    any of these files' (a device, a pipe with no end of line) is an InputError."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError(str(path), "there is no such file. Check the path and try again.") \
            from None
    except OSError as error:
        raise InputError(str(path), f"cannot be read ({error.strerror or error}); check that "
                         "it is a file you may read.") from None
    number = 0
    with handle:
        try:
            for number, raw in enumerate(bounded_lines(handle), 1):
                line = raw.decode("utf-8")
                if number == 1:
                    line = line.removeprefix("\ufeff")  # a byte-order mark is no part of an id
                stripped = line.strip()
                if stripped and not stripped.startswith("#"):
                    yield number, line.rstrip("\r\n")
        except UnicodeDecodeError:
            raise InputError(str(path), "is not UTF-8 text.", line=number) from None
        except LineTooLong as error:
            raise InputError(str(path), str(error), line=number + 1) from None


def _json_line(path: Path, number: int, line: str) -> dict[str, object]:
    try:
        obj = parse_json(line)
    except json.JSONDecodeError as error:
        raise InputError(str(path), f"is not a JSON object ({error.msg}).", line=number) from None
    except UnsafeJson as error:
        raise InputError(str(path), str(error), line=number) from None
    if not isinstance(obj, dict):
        raise InputError(str(path), "must be a JSON object.", line=number)
    return obj


ID_KEYS = ("_id", "id", "docid", "doc_id", "pid", "qid", "query_id")
"""Where a JSON line keeps its id: BEIR's _id first, then the names other collections use."""
TEXT_KEYS = ("text", "passage", "contents", "body", "query")
"""Where a JSON line keeps its text: BEIR's text first (ir_datasets, MS MARCO, pyserini...)."""


def _first(obj: dict[str, object], keys: tuple[str, ...]) -> object:
    return next((obj[k] for k in keys if obj.get(k) is not None), None)


def _id_and_text(path: Path, number: int, line: str, what: str) -> tuple[str, str]:
    """One ``id<TAB>text`` line, or a JSON line as BEIR writes it (``_id``, ``text``, the text
    after its ``title`` when it has one) or under the names of ID_KEYS and TEXT_KEYS."""
    if line.lstrip().startswith("{"):
        obj = _json_line(path, number, line)
        key = _first(obj, ID_KEYS)
        if not isinstance(key, (str, int)) or isinstance(key, bool) or str(key).strip() == "":
            raise InputError(str(path), f"a {what} needs an id (\"_id\", text or a number; "
                             f"or one of {', '.join(ID_KEYS[1:])}).", line=number, field="_id")
        text = _first(obj, TEXT_KEYS)
        if not isinstance(text, str):
            raise InputError(str(path), f"a {what} needs its \"text\" as a string (or one of "
                             f"{', '.join(TEXT_KEYS[1:])}).", line=number, field="text")
        title = obj.get("title")
        return str(key).strip(), (f"{title}\n{text}" if isinstance(title, str) and title.strip()
                                  else text)
    key, tab, text = line.partition("\t")
    if not tab or not key.strip():
        raise InputError(str(path), f"a {what} line is its id, a tab, then its text; this one "
                         "has no tab.", line=number)
    return key.strip(), text


def read_queries(path: Path) -> dict[str, str]:
    """Query id -> text, in the file's order."""
    out: dict[str, str] = {}
    for number, line in _lines(path):
        key, text = _id_and_text(path, number, line, "query")
        if key in out:
            raise InputError(str(path), f"query '{key}' is listed twice.", line=number)
        if not text.strip():
            raise InputError(str(path), f"query '{key}' has no text.", line=number)
        out[key] = text
    if not out:
        raise InputError(str(path), "holds no query.")
    return out


def _fields(path: Path, number: int, line: str, count: int, layout: str) -> list[str]:
    parts = line.split()
    if len(parts) != count:
        raise InputError(str(path), f"a line holds {layout} ({count} fields); this one has "
                         f"{len(parts)}.", line=number)
    return parts


def read_run(path: Path) -> tuple[dict[str, list[tuple[str, float]]], dict[str, str]]:
    """Query id -> (document id, score) in trec_eval's order: score descending, then document
    id descending; and query id -> the run's tag (the system that ranked it)."""
    found: dict[str, dict[str, float]] = {}
    tags: dict[str, str] = {}
    for number, line in _lines(path):
        qid, _, doc, _, score, tag = _fields(path, number, line, 6,
                                             "qid Q0 docid rank score tag")
        try:
            value = float(score)
        except ValueError:
            raise InputError(str(path), f"the score {score!r} is not a number.", line=number,
                             field="score") from None
        if not math.isfinite(value):  # trec_eval and our own export could not order it
            raise InputError(str(path), f"the score {score!r} is not a finite number.",
                             line=number, field="score")
        tags.setdefault(qid, tag)
        docs = found.setdefault(qid, {})
        if doc in docs:
            raise InputError(str(path), f"document '{doc}' is ranked twice for query '{qid}'.",
                             line=number)
        docs[doc] = value
    return {qid: sorted(docs.items(), key=lambda d: (d[1], d[0]), reverse=True)
            for qid, docs in found.items()}, tags


def read_pool(path: Path) -> dict[str, list[str]]:
    """Query id -> its pooled documents, as listed (``qid 0 docid``, or qrels lines)."""
    found: dict[str, dict[str, None]] = {}
    for number, line in _lines(path):
        parts = line.split()
        if len(parts) not in (3, 4):
            raise InputError(str(path), "a pool line is 'qid 0 docid' (a qrels line's grade may "
                             f"follow); this one has {len(parts)} fields.", line=number)
        found.setdefault(parts[0], {})[parts[2]] = None
    return {qid: list(docs) for qid, docs in found.items()}


UNGRADED = -1
"""A pair a qrels file does not grade, in its grades array."""
HIGHEST_GRADE = 2**31 - 1
"""The highest grade a qrels file may give (its grades are kept as 32-bit numbers)."""


@dataclass
class Qrels:
    """One qrels file's grades over the collection's pairs (``Collection.slots``: UNGRADED
    where it gives none), how many pairs outside them it grades, and where its highest grade
    first appears (for messages). An array, not a dict of pairs: at a hundred times TREC DL's
    size, 43 files are 19 million grades."""

    grades: array[int]
    outside: int = 0
    top: int | None = None
    top_line: int | None = None


def read_qrels(path: Path, top: int | None, slots: dict[tuple[str, str], int]) -> Qrels:
    """The grade of each (query id, document id) of ``slots``, each a whole number from 0 to
    ``top`` (any from 0 when the scale is not known yet); pairs outside ``slots`` are checked
    the same way and counted."""
    grades = array("i", [UNGRADED]) * len(slots)
    outside: dict[tuple[str, str], int] = {}
    highest: int | None = None
    highest_line: int | None = None
    for number, line in _lines(path):
        qid, _, doc, given = _fields(path, number, line, 4, "qid 0 docid grade")
        try:
            grade = int(given)
        except ValueError:
            raise InputError(str(path), f"the grade {given!r} is not a whole number.",
                             line=number, field="grade") from None
        if grade < 0 or grade > (HIGHEST_GRADE if top is None else top):
            scale = f"0 to {top}" if top is not None else "0 up"
            raise InputError(str(path), f"the grade {grade} is outside the scale ({scale}).",
                             line=number, field="grade")
        key = (qid, doc)
        at = slots.get(key)
        before = (outside.get(key, UNGRADED) if at is None else grades[at])
        if before not in (UNGRADED, grade):
            raise InputError(str(path), f"document '{doc}' of query '{qid}' is graded twice "
                             f"({before} and {grade}).", line=number)
        if at is None:
            outside[key] = grade
        else:
            grades[at] = grade
        if highest is None or grade > highest:
            highest, highest_line = grade, number
    return Qrels(grades, len(outside), highest, highest_line)


def read_corpus(path: Path, wanted: set[str],
                progress: Callable[[int], None] | None = None) -> dict[str, str]:
    """Document id -> text, for the ``wanted`` documents only (a corpus may be millions of
    documents: ``progress`` is told how many lines were read, every 100,000)."""
    out: dict[str, str] = {}
    for number, line in _lines(path):
        key, text = _id_and_text(path, number, line, "document")
        if key in wanted:
            out[key] = text
        if progress is not None and number % 100_000 == 0:
            progress(number)
    return out


@dataclass
class Collection:
    """What import-trec reads, before it becomes goldens."""

    queries: dict[str, str]
    ranked: bool
    docs: dict[str, list[str]]
    scores: dict[str, list[float]]
    slots: dict[tuple[str, str], int] = field(default_factory=dict)
    """Each (query, document) of the run or pool -> its place in every qrels' grades: a
    query's documents together, in its order (``starts``)."""
    starts: dict[str, int] = field(default_factory=dict)
    labels: dict[str, Qrels] = field(default_factory=dict)
    judges: dict[str, Qrels] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    """Where each label set or judge came from (a qrels file), for messages."""
    tags: dict[str, str] = field(default_factory=dict)
    """Each query's run tag: the system that ranked it (a golden's ``retriever``)."""
    tops: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Each label set's or judge's highest grade, and the line it first appears on."""

    def goldens(self, scale: Scale) -> Iterator[GoldenRecord]:
        """Each query with documents, in the topics file's order: its documents as chunks,
        each label set's grades (and the verdicts they read as), each judge's."""
        for qid, text in self.queries.items():
            docs = self.docs.get(qid)
            if not docs:
                continue
            record = GoldenRecord(
                id=qid, user_input=text,
                retrieved_contexts=[self.texts.get(d, f"{NO_TEXT} {d}") for d in docs],
                retrieved_context_ids=list(docs),
                retrieved_context_scores=list(self.scores[qid]) if self.ranked else None,
                metadata={"trec": "run" if self.ranked else "pool",
                          **({"retriever": self.tags[qid]} if qid in self.tags else {})})
            start = self.starts[qid]
            for name, qrels in self.labels.items():
                grades = _given(qrels, start, len(docs))
                if any(g is not None for g in grades):
                    record.human_labels[name] = [None if g is None else scale.verdict(g)
                                                 for g in grades]
                    record.human_marks[name] = [None if g is None else
                                                {"action": "import", "grade": g}
                                                for g in grades]
            for name, qrels in self.judges.items():
                grades = _given(qrels, start, len(docs))
                if any(g is not None for g in grades):
                    record.judge_verdicts[name] = [
                        None if g is None else JudgeVerdict(scale.verdict(g), None, None, g)
                        for g in grades]
            yield record

    def unplaced(self) -> list[str]:
        """Sentences for qrels that grade documents outside the run or pool (left out)."""
        out = []
        for name, qrels in (*self.labels.items(), *self.judges.items()):
            if missing := qrels.outside:
                out.append(f"{self.sources[name]} grades {counted(missing, 'document')} that "
                           f"the {'run' if self.ranked else 'pool'} does not hold for its "
                           "query; they are left out.")
        return out


def _given(qrels: Qrels, start: int, count: int) -> list[int | None]:
    """A query's grades from a qrels file (None where it gives none)."""
    return [None if g == UNGRADED else g for g in qrels.grades[start:start + count]]


def named_file(given: str, option: str) -> tuple[str, Path]:
    """NAME=PATH as --labels and --judge take it."""
    name, equals, path = given.partition("=")
    if not equals or not name.strip() or not path.strip():
        raise ValueError(f"{option} takes NAME=QRELS (e.g. {option} nist=qrels.txt), not "
                         f"{given!r}")
    return name.strip(), Path(path.strip())


def read_collection(queries: Path, *, run: Path | None, pool: Path | None,
                    corpus: Path | None, labels: list[tuple[str, Path]],
                    judges: list[tuple[str, Path]], top: int | None,
                    progress: Callable[[int], None] | None = None) -> Collection:
    """Read every file of an import-trec; ``top``: the scale's top grade, when known;
    ``progress``: told the corpus's lines read so far."""
    if (run is None) == (pool is None):
        raise ValueError("give one of --run (a ranking) and --pool (an unranked pool)")
    topics = read_queries(queries)
    if run is not None:
        ranking, tags = read_run(run)
        docs = {q: [d for d, _ in ranked] for q, ranked in ranking.items()}
        scores = {q: [s for _, s in ranked] for q, ranked in ranking.items()}
        listing = run
    else:
        assert pool is not None
        docs, scores, listing, tags = read_pool(pool), {}, pool, {}
    crowded = next((q for q, ds in docs.items() if len(ds) > MAX_CHUNKS), None)
    if crowded is not None:
        raise InputError(str(listing), f"query '{crowded}' has {len(docs[crowded]):,} "
                         f"documents; a golden holds at most {MAX_CHUNKS:,} (a run's top "
                         "1,000, as trec_eval reads it): keep each query's top ranks.")
    unknown = [q for q in docs if q not in topics]
    if unknown:
        raise InputError(str(listing), f"query '{unknown[0]}' is not in {queries} "
                         f"({counted(len(unknown), 'query id')} are not).")
    found = Collection(topics, run is not None, docs, scores, tags=tags)
    for qid, listed in docs.items():  # a query's documents are distinct: its places in a row
        start = found.starts[qid] = len(found.slots)
        found.slots.update(((qid, d), start + k) for k, d in enumerate(listed))
    for target, given in ((found.labels, labels), (found.judges, judges)):
        for name, path in given:
            if name in found.sources:
                raise ValueError(f"'{name}' is named twice among --labels and --judge")
            qrels = read_qrels(path, top, found.slots)
            target[name] = qrels
            found.sources[name] = str(path)
            if qrels.top is not None and qrels.top_line is not None:
                found.tops[name] = (qrels.top, qrels.top_line)
    if corpus is not None:
        found.texts = read_corpus(corpus, {d for ds in docs.values() for d in ds}, progress)
    return found


def scale_of(collection: Collection, given: Scale | None) -> Scale | None:
    """The scale asked for, else the one the qrels' grades show (binary when all are 0/1;
    None when there are no qrels). Files whose highest grades differ are refused: one stray
    grade in one file would otherwise rescale the whole session, and with it every other
    judge's binary statistics."""
    if given is not None:
        return given
    if not collection.tops:
        return None
    tops = {name: top for name, (top, _) in collection.tops.items()}
    top = max(tops.values())
    if len(set(tops.values())) > 1:
        shown = ", ".join(f"{collection.sources[name]} grades 0 to {t}"
                          for name, t in sorted(tops.items(), key=lambda item: item[1]))
        name = next(n for n, t in tops.items() if t == top)
        line = collection.tops[name][1]
        raise InputError(collection.sources[name],
                         f"the qrels files disagree on the grade scale ({shown}); the first "
                         f"{top} is on line {line}. Give the scale with --scale 0-N (a grade "
                         "above it is then an error naming its line), so no single file sets "
                         "it for the whole session.", line=line, field="grade")
    return Scale(max(top, 1), default_threshold(max(top, 1)))
