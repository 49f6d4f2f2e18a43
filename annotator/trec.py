"""TREC in and out of a session: an IR collection imported (``import_collection``: the rules of
its grade scale, its settings, one transaction), and qrels (the truth on each chunk) and a run
(each golden's chunks in their retrieved order) written for trec_eval and ir_measures.

Out:

- A query is a golden and a document is one of its chunks, named by the chunk's own id where
  the goldens file gave one (``retrieved_context_ids``: the team's document or passage id),
  else by the golden's id and the chunk's rank (``g17#3``): names that survive a merge, since
  a merge keeps ids and ranks.
  TREC files are split on whitespace, so whitespace and ``%`` in an id are written as
  ``%20``-style escapes (``urllib.parse.quote``); ``#`` too, so the name reads back unambiguously.
- The qrels hold only a golden's own chunks, so a query's relevant documents are the relevant
  chunks retrieved for it. Average precision is then RAGAS's context precision of the golden:
  both divide by the number of relevant chunks in its list (pooling chunks of several systems
  under one query would divide by the pool's, and change the figure).
- A run names each golden's system (its metadata value under the grouping key) as the run tag;
  ``system`` keeps one system's goldens, one run per system as trec_eval expects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import quote

import numpy as np

from annotator.collection import Collection, named_file, read_collection, scale_of
from annotator.columns import MISSING, ChunkFrame
from annotator.errors import SessionError
from annotator.files import new_session_file
from annotator.grouping import system_values
from annotator.models import ImportSummary, Scale
from annotator.resolve import one_judge
from annotator.store.session import Session
from annotator.truth import truth as team_or_person

NO_SYSTEM = "cp-annotator"
"""The run tag of goldens whose metadata names no system."""


def query_id(golden_id: str) -> str:
    """A golden's id as a TREC query id (one token)."""
    return quote(golden_id, safe="")


def doc_id(golden_id: str, rank: int) -> str:
    """A chunk's TREC document id: its golden's id and its rank."""
    return f"{query_id(golden_id)}#{rank}"


def _rows(session: Session, frame: ChunkFrame) -> Iterator[tuple[str, int, int, str]]:
    """(golden id, rank, row of the frame, document id) of every chunk, golden by golden: the
    chunk's own id where it has one (escaped, so it never reads as another chunk's ``g17#3``;
    a golden's own ids are distinct, formats checks), else its golden's id and rank."""
    ids = frame.golden_ids
    own = session.chunk_doc_ids()
    for row, (cluster, rank, chunk_id) in enumerate(zip(
            frame.cluster.tolist(), frame.rank.tolist(), frame.chunk_id.tolist(), strict=True)):
        golden_id = ids[cluster]
        name = own.get(chunk_id)
        yield golden_id, rank, row, (doc_id(golden_id, rank) if name is None
                                     else quote(name, safe=""))


def relevance(session: Session, frame: ChunkFrame, truth: str, annotator: str | None
              ) -> np.ndarray:
    """The relevance the qrels give each chunk of the frame (MISSING: unjudged): 'human' (the
    team's truth, or ``annotator``'s labels), 'gold' (adjudicated labels only), or a judge's
    verdicts. On a graded session a person's or a judge's grade is written where it has one
    (graded qrels, as they came in)."""
    graded = session.scale() is not None
    if truth == "human":
        found = team_or_person(session, annotator, frame)
        people = session.annotators()
        person = annotator or (people[0] if len(people) == 1 else None)
        if not graded or person is None:
            return found.verdict
        return _graded(found.verdict, session.label_columns(person, frame).grade)
    if truth == "gold":
        return session.gold_column(frame)
    try:
        judge = one_judge(session.judges_judged(), truth)
    except SessionError as error:
        raise SessionError(f"--truth takes 'human', 'gold' or a judge's name. {error}") from None
    assert judge is not None  # a name was given
    said = session.judge_columns(judge, frame)
    return _graded(said.verdict, said.grade) if graded else said.verdict


def _graded(verdict: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """The grade where there is one, else the verdict."""
    return np.where(grade != MISSING, grade, verdict).astype(np.int8)


def write_qrels(session: Session, frame: ChunkFrame, verdict: np.ndarray, out: IO[str]) -> int:
    """Write ``qid 0 docid relevance`` for every chunk with a verdict in ``verdict`` (aligned to
    the frame; chunks without one are left unjudged); return the lines written."""
    count = 0
    for golden_id, _, row, name in _rows(session, frame):
        said = int(verdict[row])
        if said != MISSING:
            out.write(f"{query_id(golden_id)} 0 {name} {said}\n")
            count += 1
    return count


def write_run(session: Session, frame: ChunkFrame, out: IO[str], group_by: str | None,
              system: str | None = None) -> int:
    """Write ``qid Q0 docid rank score tag`` for every chunk, in retrieved order (the score
    falls with the rank, so no tie reorders it), tagged with its golden's system; ``system``:
    only that system's goldens. Returns the lines written."""
    group_by, systems = system_values(session, group_by)
    if system is not None and system not in set(systems.values()):
        known = ", ".join(sorted(set(systems.values()))) or "none"
        raise SessionError(f"No golden has '{group_by}' = '{system}' (the systems are: "
                           f"{known}); name one of them with --system, or choose the key with "
                           "--group-by.")
    count = 0
    sizes = frame.sizes
    for golden_id, rank, row, name in _rows(session, frame):
        tag = systems.get(golden_id, NO_SYSTEM)
        if system is not None and tag != system:
            continue
        score = int(sizes[frame.cluster[row]]) - rank + 1
        out.write(f"{query_id(golden_id)} Q0 {name} {rank} {score} "
                  f"{quote(tag, safe='')}\n")
        count += 1
    return count


@dataclass(frozen=True, slots=True)
class CollectionImport:
    """What importing an IR collection did, and what a person should be told of it."""

    summary: ImportSummary
    scale: Scale
    """The grade scale the qrels were read on (0-1 for binary ones)."""
    graded: bool
    ranked: bool
    """False for an unranked pool: no CP, no rank statistics."""
    notes: list[str] = field(default_factory=list)
    """Documents a qrels file grades that no query's list holds, and the like."""


@dataclass(frozen=True, slots=True)
class CollectionRead:
    """An IR collection read and checked, not yet stored (``read_collection_files``)."""

    collection: Collection
    queries: str
    given: Scale | None
    """The scale asked for ('0-N'), if one was."""
    from_files: Scale | None
    """The scale the qrels were read on, if any qrels came."""
    relevant_from: int | None


def import_collection(session_path: str | Path, queries: str | Path, *,
                      run: str | Path | None = None, pool: str | Path | None = None,
                      corpus: str | Path | None = None, labels: Sequence[str] = (),
                      judges: Sequence[str] = (), scale: str | None = None,
                      relevant_from: int | None = None, replace: bool = False,
                      reading: Callable[[int], None] | None = None,
                      importing: Callable[[int], None] | None = None) -> CollectionImport:
    """Import an IR collection into a session file, made if missing (and removed again when
    nothing went in): ``labels`` and ``judges`` are NAME=QRELS; ``scale`` is '0-N' (default:
    0 to the highest grade in the qrels, else the session's scale, else binary);
    ``relevant_from`` the lowest relevant grade (default: 2 on 0-3, else half-way up), stored
    with the session. ``reading`` and ``importing`` hear the lines read and the queries
    stored. A fault raises an error naming the option, or the file, line and value."""
    read = read_collection_files(session_path, queries, run=run, pool=pool, corpus=corpus,
                                 labels=labels, judges=judges, scale=scale,
                                 relevant_from=relevant_from, reading=reading)
    return store_collection(session_path, read, replace=replace, importing=importing)


def read_collection_files(session_path: str | Path, queries: str | Path, *,
                          run: str | Path | None = None, pool: str | Path | None = None,
                          corpus: str | Path | None = None, labels: Sequence[str] = (),
                          judges: Sequence[str] = (), scale: str | None = None,
                          relevant_from: int | None = None,
                          reading: Callable[[int], None] | None = None) -> CollectionRead:
    """``import_collection``'s first half: the files read and checked against the scale given,
    else the session's (it is only read)."""
    given: Scale | None = None
    try:
        if scale is not None:
            given = Scale.parse(scale, relevant_from)
        named = {option: [named_file(v, option) for v in values]
                 for option, values in (("--labels", labels), ("--judge", judges))}
    except ValueError as error:
        raise SessionError(str(error)) from None
    stored = None  # a session that has a scale holds each file's grades to it, line by line
    if given is None and Path(session_path).exists():
        with Session(session_path, create=False) as session:
            stored = session.scale()
    top = given.top if given is not None else stored.top if stored is not None else None
    try:
        found = read_collection(
            Path(queries), run=None if run is None else Path(run),
            pool=None if pool is None else Path(pool),
            corpus=None if corpus is None else Path(corpus), labels=named["--labels"],
            judges=named["--judge"], top=top, progress=reading)
        from_files = scale_of(found, given or stored)
    except ValueError as error:
        raise SessionError(str(error)) from None
    return CollectionRead(found, str(queries), given, from_files, relevant_from)


def store_collection(session_path: str | Path, read: CollectionRead, *, replace: bool = False,
                     importing: Callable[[int], None] | None = None) -> CollectionImport:
    """``import_collection``'s second half: the collection stored in one transaction, with its
    scale (and whether it is an unranked pool) as the session's settings."""
    done: list[CollectionImport] = []
    found = read.collection
    with new_session_file(session_path, keep=lambda: bool(done)), \
            Session(session_path, create=True) as session:
        # No qrels and no --scale: the session's own scale, else binary.
        read_on = read.from_files or session.scale() or Scale(1, 1)
        try:
            if read.relevant_from is not None and read.given is None:
                read_on = Scale(read_on.top, read.relevant_from)
        except ValueError as error:
            raise SessionError(f"--relevant-from: {error}") from None
        graded = read_on.top > 1 or read.given is not None
        settings: dict[str, object] = (
            {"grade_scale": [read_on.top, read_on.relevant_from]} if graded else {})
        if not found.ranked:
            settings["unranked"] = True
        session.refuse_collection(read_on, not found.ranked)
        summary = session.import_goldens(found.goldens(read_on), path=read.queries,
                                         replace=replace, progress=importing,
                                         settings=settings)
        done.append(CollectionImport(summary, read_on, graded, found.ranked,
                                     list(found.unplaced())))
    return done[0]
