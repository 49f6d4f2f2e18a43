"""Read and validate goldens from JSONL, JSON and CSV; write session JSONL and CSV.

Reading yields one validated :class:`GoldenRecord` per golden, or raises :class:`InputError`
naming the file, the line and the field. Nothing here touches a session file.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from types import NoneType
from typing import IO, Any

from annotator.errors import InputError, install_hint
from annotator.importers import IMPORTERS, SOURCES, Importer, langfuse
from annotator.models import (
    GOLD_FIELDS,
    GOLDENS_SUFFIXES,
    MARK_FIELDS,
    CheckRecord,
    GoldenRecord,
    JudgeVerdict,
    stable_golden_id,
)
from annotator.text import counted, visible
from annotator.untrusted import UnsafeJson, parse_json, parse_stream
from annotator.verdict import SPOKEN, VALUES, Answer, is_answer, is_verdict, kind_of

ALIASES = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
}
"""RAGAS v1 column names and the v0.4 names they stand for."""

KNOWN_FIELDS = (
    "id",
    "user_input",
    "reference",
    "response",
    "retrieved_contexts",
    "retrieved_context_ids",
    "retrieved_context_scores",
    "judge",
    "judge_verdicts",
    "judges",
    "human_labels",
    "human_notes",
    "human_marks",
    "gold_labels",
    "metadata",
)
"""Fields with a meaning of their own; any other field is kept in the golden's metadata."""

CHECK_FIELD = "attention_check"
"""A session JSONL line holding an attention check (and people's answers on it), not a golden."""
_VERDICTS = frozenset(VALUES)

_NAMED = frozenset(KNOWN_FIELDS) | frozenset(ALIASES)
"""Every field name read as itself (a set: looked up for every field of every golden)."""

CSV_JSON_COLUMNS = ("retrieved_contexts", "retrieved_context_ids", "retrieved_context_scores",
                    "judge_verdicts", "judges", "human_labels",
                    "human_notes", "human_marks", "gold_labels", "metadata")
"""CSV columns whose cells hold JSON (lists or objects)."""

MAX_CHUNKS = 1000
"""The most ranked chunks one golden may hold: more would hang the screen that shows them."""

IMPORTED_JUDGE = "imported"
"""The judge name given to ``judge_verdicts`` that come without a ``judge``."""

csv.field_size_limit(2**31 - 1)  # chunks may be megabytes long; csv's 128 KiB default is too small


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True, slots=True)
class ColumnMap:
    """Where each golden field is found in a file of another shape: ``--map TARGET=PATH``.

    TARGET is a golden field (``user_input``, ``retrieved_contexts``, ``reference``, ``id``,
    ``retrieved_context_ids``, ...; RAGAS v1 names too) or ``metadata.NAME``. PATH is a column
    or key, dotted into nested objects (``inputs.question``); ``[]`` after a key takes the rest
    of the path from each item of its list (``outputs.documents[].page_content``), and a whole
    number picks one item (``outputs.0``). A row mapped so holds the mapped fields and its other
    top-level numbers and strings as metadata.
    """

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, given: Sequence[str]) -> ColumnMap:
        """From ``TARGET=PATH`` strings, or ValueError saying what is wrong with one."""
        pairs: list[tuple[str, str]] = []
        for item in given:
            target, sep, source = item.partition("=")
            target, source = target.strip(), source.strip()
            if not sep or not target or not source:
                raise ValueError(f"'{item}' is not TARGET=PATH (e.g. user_input=inputs.question)")
            canonical = ALIASES.get(target, target)
            if canonical not in KNOWN_FIELDS and not (
                    canonical.startswith("metadata.") and len(canonical) > len("metadata.")):
                raise ValueError(f"'{target}' is no golden field; map to one of "
                                 f"{', '.join(KNOWN_FIELDS)}, or to metadata.NAME")
            if any(canonical == t for t, _ in pairs):
                raise ValueError(f"'{target}' is mapped twice")
            pairs.append((canonical, source))
        return cls(tuple(pairs))

    def targets(self) -> set[str]:
        """The golden fields this map fills."""
        return {target for target, _ in self.pairs}

    def apply(self, row: dict[str, Any], fail: Callable[..., InputError],
              notes: _Notices) -> dict[str, Any]:
        """The golden object a row maps to (fail names the path that is missing)."""
        obj: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        used = set()
        for target, source in self.pairs:
            used.add(source if source in row else source.split(".")[0].removesuffix("[]"))

            def missing(why: str, target: str = target, source: str = source) -> InputError:
                return fail(f"--map {target}={source}: {why}", target)

            value = _pluck(row, source, missing)
            if notes.csv_cells and isinstance(value, str) and target in CSV_JSON_COLUMNS:
                value = _parse_csv_json_cell(value, notes.path, 0, source)
            if target.startswith("metadata."):
                metadata[target.removeprefix("metadata.")] = value
            else:
                obj[target] = value
        left = [key for key in row if key not in used]
        for key in left:
            if isinstance(row[key], str | int | float) and not isinstance(row[key], bool):
                metadata.setdefault(key, row[key])
        dropped = [key for key in left if key not in metadata]
        if dropped:
            notes.add(f"--map left out the unmapped fields {', '.join(dropped)} (lists and "
                      "objects); map what you need, e.g. --map metadata.NAME=PATH.", "map-left")
        if metadata:
            obj["metadata"] = {**metadata, **(obj.get("metadata") or {})}
        return obj


def _pluck(value: Any, path: str, fail: Callable[[str], InputError]) -> Any:
    """The value at a --map PATH (see ColumnMap), or fail saying which step found nothing."""
    if isinstance(value, dict) and path in value:  # a column whose name holds a dot
        return value[path]
    head, _, rest = path.partition(".")
    each = head.endswith("[]")
    key = head.removesuffix("[]")
    if isinstance(value, dict):
        if key not in value:
            found = ", ".join(list(value)[:12]) or "nothing"
            raise fail(f"found no '{key}' (this level holds: {found}).")
        value = value[key]
    elif isinstance(value, list) and key.isdigit():
        if int(key) >= len(value):
            raise fail(f"item {key} is past the end of a list of {len(value)}.")
        value = value[int(key)]
    else:
        raise fail(f"found {_kind(value)} where '{key}' was to be looked up.")
    if each:
        if not isinstance(value, list):
            raise fail(f"'{key}[]' needs a list, and found {_kind(value)}.")
        return [_pluck(item, rest, fail) if rest else item for item in value]
    return _pluck(value, rest, fail) if rest else value


def read_goldens(path: str | Path, *, delimiter: str = ",", notices: list[str] | None = None,
                 checks: list[CheckRecord] | None = None,
                 mapping: ColumnMap | None = None, source: str = "ragas",
                 retriever: str | None = None,
                 companions: Sequence[Any] = ()) -> Iterator[GoldenRecord]:
    """Yield the validated goldens of a JSONL, JSON or CSV file, in file order.

    ``delimiter`` separates a CSV file's cells; ``mapping`` says where each golden field is
    found in a file of another shape (``--map``). What was changed on the way in (an annotator's
    name trimmed of spaces) is said in ``notices``, once per case, when a list is given. A
    session JSONL's attention checks (lines with CHECK_FIELD) are validated and appended to
    ``checks`` when a list is given, else passed over: they are not goldens. ``source`` names
    the importer the file must be for (``importers.SOURCES``; a tracer's export is detected
    without it); ``retriever`` the name of the spans a tracer's goldens come from, where they
    are not marked as retrievers; ``companions`` documents of other files a tracer's export is
    read with (Langfuse's dataset items: see ``companion_files``).
    """
    path = Path(path)
    notes = _Notices(notices, str(path), mapping, path.suffix.lower() == ".csv")
    notes.source = source
    notes.retriever = retriever
    notes.companions = list(companions)
    name = str(path)
    if not path.exists():
        raise InputError(name, "there is no such file. Check the path and try again.")
    if path.is_dir():
        raise InputError(name, "this is a folder; give the path of a .jsonl or .csv file.")
    if not path.is_file():  # a pipe or a device: no size, and reading it twice is not possible
        raise InputError(name, "this is not a regular file (a pipe or a device); save the goldens "
                               "to a file and import that.")
    if path.stat().st_size == 0:
        raise InputError(name, "the file is empty (0 bytes): there is no golden to import.")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        rows = _parquet_rows(path)
        if (importer := notes.importer(rows, None)) is not None:  # a tracer's dataframe
            rows = _imported(importer, [(None, rows)], notes)
        yield from _rows_as_goldens(rows, name, {}, notes)
    elif suffix == ".csv":
        notes.refuse_other(None)
        yield from _read_csv(path, delimiter, notes)
    elif suffix in GOLDENS_SUFFIXES:
        yield from _read_json_lines(path, notes, checks)
    else:
        raise InputError(
            name,
            f"'{suffix or path.name}' is not a format this tool reads; use .jsonl (one golden per "
            "line, RAGAS EvaluationDataset style), .json (a list of goldens), .csv or .parquet.",
        )


def _decode(raw: bytes, name: str, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            name,
            f"the file is not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
            f"{error.start + 1}). Save it as UTF-8 and import it again.",
            line=line,
        ) from None


class _Notices:
    """What reading a file goes by: the column map, if any, and the sentences about what it
    changed on the way in, each said once."""

    def __init__(self, out: list[str] | None, path: str, mapping: ColumnMap | None = None,
                 csv_cells: bool = False) -> None:
        self.out = out
        self.path = path
        self.mapping = mapping
        self.csv_cells = csv_cells
        """Cells are CSV text: a mapped list or object arrives as JSON text."""
        self._said: set[str] = set()
        self.source = "ragas"
        """The importer asked for (--from); 'ragas' reads RAGAS-shaped files and detects others."""
        self.retriever: str | None = None
        """--retriever: the name of the spans a tracer's goldens come from."""
        self.companions: list[Any] = []
        """Documents of other files a tracer's export is read with (dataset items)."""

    def importer(self, document: Any, line: int | None) -> Importer | None:
        """The importer whose export ``document`` (a file's first) is: the one --from named,
        which must fit (else an InputError), or the one that recognises it (None: RAGAS)."""
        asked = SOURCES[self.source]
        if asked is None:
            found = next((m for m in IMPORTERS if m.detect(document)), None)
            if found is None and self.retriever is not None:
                raise InputError(self.path, "--retriever names the spans of a tracer's export, "
                                 "and this file is not one (no tracer's spans were found in "
                                 "it); import it without --retriever.", line=line)
            return found
        if not asked.detect(document):
            raise InputError(self.path, f"this is not {asked.KIND_OF_FILE}, which --from "
                             f"{self.source} reads.", line=line)
        return asked

    def refuse_other(self, line: int | None) -> None:
        """Raise when an importer was asked for a file no importer reads (a CSV)."""
        if SOURCES[self.source] is not None or self.retriever is not None:
            self.importer(None, line)

    def add(self, sentence: str, kind: str | None = None) -> None:
        """Say this about the file, unless it (or another of its ``kind``) was said already."""
        key = kind or sentence
        if self.out is not None and key not in self._said:
            self._said.add(key)
            self.out.append(f"{self.path}: {sentence}")


def _read_json_lines(path: Path, notes: _Notices, checks: list[CheckRecord] | None
                     ) -> Iterator[GoldenRecord]:
    name = str(path)
    ids: dict[str, tuple[str, int]] = {}
    seen_any = False
    with path.open("rb") as handle:
        first = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
        handle.seek(0)
        if first.startswith(b"[") or (first.startswith(b"{") and _one_document(handle)):
            yield from _read_json_document(path, handle, ids, notes)
            return
        lines = _json_lines(handle, name)
        for line_no, obj in lines:
            seen_any = True
            if line_no == 1 and (importer := notes.importer(obj, 1)) is not None:
                # A source's export as JSON lines (a collector's file of requests): read whole.
                given = [(1, obj), *lines]
                del obj
                found = _imported(importer, given, notes)
                del given  # the export's documents, freed before its goldens are stored
                yield from _rows_as_goldens(found, name, ids, notes)
                return
            if line_no == 1 and (rows := _table_rows(obj, name, notes.mapping)) is not None:
                yield from _rows_as_goldens(rows, name, ids, notes)
                continue
            if type(obj) is dict and CHECK_FIELD in obj:
                if checks is not None:
                    checks.append(validate_check(obj, name, line_no))
                continue
            yield _checked_unique(validate_golden(obj, name, line_no, notes), name, ids)
    if not seen_any:
        raise InputError(name, "the file holds only blank lines: there is no golden to import.")


def companion_files(paths: Sequence[str], source: str) -> tuple[list[str], list[Any]]:
    """Split the files of one import into those imported and those read beside them: a file
    of Langfuse dataset items alone holds no golden, only the references of the traces its
    items name. Returns (files to import, the companions' documents)."""
    if source not in ("ragas", "langfuse") or len(paths) < 2:
        return list(paths), []
    kept, companions = [], []
    for given in paths:
        path = Path(given)
        document = None
        if path.suffix.lower() == ".json" and path.is_file():
            try:
                document = parse_json(path.read_text(encoding="utf-8-sig"))
            except (ValueError, UnicodeDecodeError, OSError):
                document = None  # its own import says what is wrong with it
        if document is not None and langfuse.dataset_items_only(document):
            companions.append(document)
        else:
            kept.append(given)
    return kept, companions


def _imported(importer: Importer, documents: Sequence[tuple[int | None, Any]],
              notes: _Notices) -> list[Any]:
    """The goldens an importer finds in a source's export, with what it said on the way."""
    said: list[str] = []
    if notes.companions and importer is langfuse:
        documents = [*documents, *((None, c) for c in notes.companions)]
    try:
        found: list[Any] = importer.rows(documents, notes.path, said,
                                         retriever=notes.retriever)
    except (AttributeError, TypeError, KeyError, IndexError) as error:
        # A field of the wrong type somewhere in the export (a list where an object belongs):
        # the importers read the shapes their sources write, and this one is not among them.
        raise InputError(notes.path, f"is not {importer.KIND_OF_FILE} this tool can read: "
                         f"a field holds {_wrong_shape(error)}. Check that the file is the "
                         "source's own export, unedited.") from None
    for sentence in said:
        notes.add(sentence)
    return found


def _wrong_shape(error: Exception) -> str:
    """What a type error inside an importer met, in a person's words."""
    text = str(error)
    if match := re.match(r"'(\w+)' object (?:has no attribute|is not subscriptable|is not "
                         r"iterable)", text):
        return f"a {match.group(1)} where another kind of value belongs"
    return "a value of an unexpected kind" if not isinstance(error, KeyError) else (
        f"no {visible(text)[:60]}")


def _json_lines(handle: IO[bytes], name: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of each line of a JSON lines file, blank lines skipped; a
    line that is not UTF-8 or not JSON is an InputError naming it."""
    # A regular file (read_goldens refuses others): its size bounds every line, and a one-line
    # JSON document of hundreds of MB is a file of this kind.
    for line_no, raw in enumerate(handle, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = _decode(raw, name, line_no)  # raises, naming the byte
        if line_no == 1:
            text = text.removeprefix("\ufeff")
        if not text or text.isspace():
            continue
        try:
            value = parse_json(text)
        except json.JSONDecodeError as error:
            raise InputError(
                name,
                f"this line is not valid JSON ({error.msg} at column {error.colno}). Each line "
                "must hold one golden (or one record of the file's source) as a JSON object.",
                line=line_no,
            ) from None
        except UnsafeJson as error:
            raise InputError(name, str(error), line=line_no) from None
        del raw, text  # a one-line export of 100 MB: its bytes and text freed while it is read
        yield line_no, value


def _one_document(handle: IO[bytes]) -> bool:
    """Whether a file starting with '{' is one JSON document (pretty-printed, or one object
    holding a whole table) rather than JSON Lines: its first line alone does not parse."""
    first_line = handle.readline()
    handle.seek(0)
    try:
        parse_json(first_line.decode("utf-8-sig", "replace"))
    except json.JSONDecodeError:
        return True
    except UnsafeJson:
        return False  # the line parses far enough to be JSON Lines; its error comes there
    return False


def _read_json_document(
    path: Path, handle: IO[bytes], ids: dict[str, tuple[str, int]], notes: _Notices
) -> Iterator[GoldenRecord]:
    name = str(path)
    text = _decode_whole(handle.read(), name)
    try:
        document = parse_json(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" and (stream := _stream(text, name)) is not None:
            # Documents one after another, pretty-printed (the OpenTelemetry SDK's console
            # output): read whole when a tracer's importer knows the first.
            importer = notes.importer(stream[0], None)
            if importer is not None:
                found = _imported(importer, [(None, d) for d in stream], notes)
                yield from _rows_as_goldens(found, name, ids, notes)
                return
        raise InputError(
            name, f"the file is not valid JSON ({error.msg} at column {error.colno}).",
            line=error.lineno,
        ) from None
    except UnsafeJson as error:
        raise InputError(name, str(error)) from None
    del text
    if (importer := notes.importer(document, None)) is not None:
        found = _imported(importer, [(None, document)], notes)
        del document  # freed before the export's goldens are stored
        yield from _rows_as_goldens(found, name, ids, notes)
        return
    rows = document if isinstance(document, list) else _table_rows(document, name,
                                                                     notes.mapping)
    if rows is None:
        # One object that is not a table: one golden, as a JSON Lines file of one line would be.
        yield _checked_unique(validate_golden(document, name, None, notes), name, ids)
        return
    if not rows:
        raise InputError(name, "a .json file must hold a non-empty list of goldens.")
    yield from _rows_as_goldens(rows, name, ids, notes)


def _stream(text: str, name: str) -> list[Any] | None:
    """The documents of a file that holds several one after another; None when it holds no
    such sequence (the error of reading it as one document is then the one to give)."""
    try:
        documents = parse_stream(text)
    except json.JSONDecodeError:
        return None
    except UnsafeJson as error:
        raise InputError(name, str(error)) from None
    return documents if len(documents) > 1 else None


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    """A parquet file's rows (a Hugging Face dataset's to_parquet(), a dataframe's), as
    objects; its nulls are fields a golden does not have."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(str(path), f"reading parquet needs pyarrow: {install_hint('parquet')}, "
                         "or save the dataset as JSON lines.") from None
    try:
        table = pq.read_table(path)
    except Exception as error:  # pyarrow raises its own kinds for a damaged or foreign file
        raise InputError(str(path), f"is not a parquet file pyarrow can read ({error}).") from None
    return [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]


def _rows_as_goldens(rows: list[Any], name: str, ids: dict[str, tuple[str, int]],
                     notes: _Notices) -> Iterator[GoldenRecord]:
    for index, obj in enumerate(rows, 1):
        # A JSON document has no useful line numbers; name the item instead.
        yield _checked_unique(validate_golden(obj, f"{name}, item {index}", None, notes), name,
                              ids)


def _table_rows(document: Any, name: str, mapping: ColumnMap | None = None
                ) -> list[Any] | None:
    """The goldens of a table written by pandas' ``to_json`` in another orientation than
    records: 'columns' (its default: column -> index -> value), 'index' (index -> golden) or
    'split' (columns, index, data), or a dict of column lists (Hugging Face datasets'
    ``to_dict()``); None when the object is not such a table.

    Under a column map, the question's column is the one the map names, and an object of
    objects is one row (its fields nested, as the map's paths say), never a pandas table."""
    if not isinstance(document, dict) or not document:
        return None
    question = {"user_input", "question"}
    if mapping is not None:
        question = {source.split(".")[0].removesuffix("[]")
                    for target, source in mapping.pairs if target == "user_input"}
    if set(document) in ({"columns", "data"}, {"columns", "index", "data"}) and isinstance(
            document["columns"], list) and isinstance(document["data"], list):
        return [{c: v for c, v in zip(document["columns"], row, strict=False) if v is not None}
                if isinstance(row, list) else row for row in document["data"]]
    values = list(document.values())
    if set(document) & question and all(isinstance(v, list) for v in values):
        # Hugging Face datasets' to_dict() (or a dict of columns): column -> one cell a golden.
        lengths = {len(v) for v in values}
        if len(lengths) != 1:
            raise InputError(name, "this looks like a table of columns (Hugging Face's to_dict()), "
                             "but its columns differ in length ("
                             + ", ".join(f"{k}: {len(v)}" for k, v in document.items())
                             + "); every column needs one cell per golden.")
        return [{column: cells[i] for column, cells in document.items() if cells[i] is not None}
                for i in range(lengths.pop())]
    if mapping is not None or not all(isinstance(v, dict) for v in values):
        return None
    field_names = _NAMED
    if set(document) & {"user_input", "question"}:  # 'columns': every value an index -> cell
        index = list(values[0])
        if any(list(v) != index for v in values):
            return None
        # A cell pandas wrote as null is a field that golden does not have.
        return [{column: cells[i] for column, cells in document.items() if cells[i] is not None}
                for i in index]
    if all(set(v) & field_names for v in values):  # 'index': every value a golden
        return values
    return None


def _decode_whole(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(
            name,
            f"the file is not UTF-8 text (byte 0x{raw[error.start]:02x}). Save it as UTF-8 and "
            "import it again.",
            line=line,
        ) from None


def _read_csv(path: Path, delimiter: str, notes: _Notices) -> Iterator[GoldenRecord]:
    name = str(path)
    before = _stamp(path)
    # Check the encoding line by line first, so the error can name the line.
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, 1):
            _decode(raw.removeprefix(b"\xef\xbb\xbf") if line_no == 1 else raw, name, line_no)
    ids: dict[str, tuple[str, int]] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        first_line = handle.readline()
        handle.seek(0)
        if first_line.lstrip().startswith(("{", "[")):
            # JSON saved under a .csv name: say so, not the whole first golden as "columns".
            raise InputError(name, "this file holds JSON, not comma-separated values, though "
                             "its name ends in .csv. Rename it to .jsonl (a golden a line) or "
                             ".json and import that.", line=1)
        _check_delimiter(first_line, delimiter, name)
        # strict: a quote opened and never closed is an error, not one cell running to the end.
        reader = csv.DictReader(handle, delimiter=delimiter, strict=True)
        header = reader.fieldnames
        if not header:
            raise InputError(name, "the file has no header row.", line=1)
        canonical = {ALIASES.get(column, column) for column in header}
        if notes.mapping is not None:
            canonical = notes.mapping.targets()  # each row is checked as it is mapped
        for required in ("user_input", "retrieved_contexts"):
            if required not in canonical:
                alias = next(a for a, c in ALIASES.items() if c == required)
                raise InputError(
                    name,
                    f"the header has no '{required}' column (nor its RAGAS v1 name '{alias}'). "
                    f"The columns found are: {_shown_columns(header)}.",
                    line=1,
                    field=required,
                )
        if len(set(header)) != len(header):
            raise InputError(name, "the header names a column twice.", line=1)
        count = 0
        start = 2
        for row in _csv_rows(reader, name):
            line_no = start
            start = reader.line_num + 1
            if None in row:
                raise InputError(
                    name, "this row has more cells than the header has columns.", line=line_no
                )
            obj = _csv_row_to_object(row, name, line_no)
            count += 1
            yield _checked_unique(validate_golden(obj, name, line_no, notes), name, ids)
        if count == 0:
            raise InputError(name, "the file has a header but no rows: there is no golden to import.")
    if _stamp(path) != before:  # read twice: both passes must have seen the same file
        raise InputError(name, "the file changed while it was being read; import it again once "
                               "nothing is writing to it.")


SEPARATORS = {";": "semicolon", "\t": "tab", "|": "pipe"}
"""Cell separators spreadsheets write instead of commas, by name."""


def _shown_columns(header: Sequence[str], limit: int = 12, width: int = 40) -> str:
    """A header's columns for a sentence: the first few, each cut short."""
    shown = [visible(c if len(c) <= width else c[:width] + "...") for c in header[:limit]]
    more = f" and {len(header) - limit:,} more" if len(header) > limit else ""
    return ", ".join(shown) + more


def _check_delimiter(header: str, delimiter: str, name: str) -> None:
    """Refuse a header that holds none of the delimiter but another separator: the file was
    saved with another one (a spreadsheet in a locale that writes ';'), and read as it is, every
    row would be one cell."""
    if delimiter in header:
        return
    for separator, word in SEPARATORS.items():
        if separator != delimiter and separator in header:
            shown = "\\t" if separator == "\t" else separator
            raise InputError(
                name, f"this looks like a {word}-separated file: the header has '{shown}' between "
                f"its columns and no '{delimiter}'. Save it as comma-separated, or pass "
                f"--delimiter '{shown}'.", line=1)


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _csv_rows(reader: csv.DictReader[str], name: str) -> Iterator[dict[str, str | None]]:
    """The rows of a CSV file; a cell the csv module cannot read is an error naming its line."""
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except UnicodeDecodeError:  # the first pass read it all as UTF-8: it changed since
            raise InputError(name, "the file changed while it was being read (from this line on "
                             "it is no longer the UTF-8 text checked a moment ago); import it "
                             "again once nothing is writing to it.", line=start) from None
        except csv.Error as error:
            unclosed = "unexpected end of data" in str(error) or "EOF" in str(error)
            raise InputError(
                name, "a quoted cell that starts on this line is never closed (a \" is "
                "missing); every quote that opens a cell must close it." if unclosed else
                f"this row cannot be read as CSV ({error}).", line=start) from None
        start = reader.line_num + 1
        yield row


def _csv_row_to_object(row: dict[str, str | None], name: str, line: int) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for column, cell in row.items():
        if cell is None or cell == "":
            continue  # an empty cell is an absent field
        canonical = ALIASES.get(column, column)
        if canonical in CSV_JSON_COLUMNS:
            obj[column] = _parse_csv_json_cell(cell, name, line, column)
        else:
            obj[column] = _from_csv_cell(cell)
    return obj


def _parse_csv_json_cell(cell: str, name: str, line: int, column: str) -> Any:
    try:
        return parse_json(cell)
    except json.JSONDecodeError:
        pass
    except UnsafeJson as error:
        raise InputError(name, str(error), line=line, field=column) from None
    # RAGAS's own to_csv writes list columns as Python reprs (['a', 'b']); read those too.
    if cell.lstrip().startswith(("[", "{")):
        try:
            return ast.literal_eval(cell)
        except (ValueError, SyntaxError):
            pass
    raise InputError(
        name,
        "this cell must hold a JSON array or object, e.g. [\"first chunk\", \"second chunk\"].",
        line=line,
        field=column,
    )


def _checked_unique(
    record: GoldenRecord, name: str, ids: dict[str, tuple[str, int]]
) -> GoldenRecord:
    """Refuse a second golden with the same id but other content within one file."""
    key = record.content_sha256()
    seen = ids.setdefault(record.id, (key, record.line))
    if seen[0] != key:
        raise InputError(
            name,
            f"the id '{record.id}' was already used on line {seen[1]} for a different golden. "
            "Give each golden its own id.",
            line=record.line or None,
            field="id",
        )
    return record


def validate_golden(obj: Any, name: str, line: int | None, notes: _Notices | None = None
                    ) -> GoldenRecord:
    """Check one golden's JSON object and turn it into a GoldenRecord, or raise InputError."""

    def fail(message: str, field: str | None = None) -> InputError:
        return InputError(name, message, line=line, field=field)

    if not isinstance(obj, dict):
        raise fail(f"a golden must be a JSON object, not {_kind(obj)}.")
    if notes is not None and notes.mapping is not None:
        obj = notes.mapping.apply(obj, fail, notes)
    if not obj.keys().isdisjoint(ALIASES):  # renamed in a copy; the usual golden has none
        obj = dict(obj)
    for alias, canonical in ALIASES.items():
        if alias in obj:
            if canonical in obj and obj[canonical] != obj[alias]:
                raise fail(
                    f"both '{alias}' and '{canonical}' are given with different values; keep one "
                    f"('{alias}' is the RAGAS v1 name of '{canonical}').",
                    alias,
                )
            obj[canonical] = obj.pop(alias)

    user_input = obj.get("user_input")
    if user_input is None:
        raise fail("the question is missing; every golden needs a 'user_input'.", "user_input")
    if not isinstance(user_input, str) or not user_input.strip():
        raise fail(f"must be a non-empty string, not {_kind(user_input)}.", "user_input")

    reference = _optional_text(obj, "reference", fail)
    response = _optional_text(obj, "response", fail)
    trec = isinstance(obj.get("metadata"), dict) and obj["metadata"].get("trec") in ("run", "pool")
    if reference is None and response is None and not trec:  # TREC: relevance is to the query
        raise fail(
            "a golden needs a 'reference' answer (or a 'response') to judge its chunks against "
            "(a query of an IR collection, whose metadata says trec, needs none).",
            "reference",
        )

    contexts = obj.get("retrieved_contexts")
    if contexts is None:
        raise fail("the ranked chunks are missing; give them as a list of strings.",
                   "retrieved_contexts")
    if not isinstance(contexts, list):
        raise fail(f"must be a list of strings (the ranked chunks), not {_kind(contexts)}.",
                   "retrieved_contexts")
    if not contexts:
        raise fail("the list is empty; a golden needs at least one ranked chunk.",
                   "retrieved_contexts")
    if len(contexts) > MAX_CHUNKS:
        raise fail(f"the golden has {len(contexts):,} ranked chunks; at most {MAX_CHUNKS:,} are "
                   "read (a retriever's top-k, not a corpus): keep the top ranks.",
                   "retrieved_contexts")
    if set(map(type, contexts)) != {str}:  # checked in C; the rank only when one is wrong
        rank, chunk = next((r, c) for r, c in enumerate(contexts, 1) if not isinstance(c, str))
        raise fail(f"the chunk at rank {rank} must be a string, not {_kind(chunk)}.",
                   "retrieved_contexts")

    ids = _chunk_ids(obj.get("retrieved_context_ids"), len(contexts), fail)
    scores = _chunk_scores(obj.get("retrieved_context_scores"), len(contexts), fail)

    golden_id = obj.get("id")
    if golden_id is None or golden_id == "":
        golden_id = stable_golden_id(user_input, reference, response, contexts)
    elif isinstance(golden_id, bool) or not isinstance(golden_id, str | int):
        raise fail(f"must be a string, not {_kind(golden_id)}.", "id")
    golden_id = _clean_id(str(golden_id), notes)
    if not golden_id:
        raise fail("the id holds only spaces or invisible characters; give it a visible name.",
                   "id")

    metadata = obj.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise fail(f"must be a JSON object, not {_kind(metadata)}.", "metadata")
    metadata = dict(metadata)
    extra = [key for key in obj if key not in _NAMED]
    for key in extra:  # keep what we don't use (e.g. reference_contexts)
        if key in metadata and metadata[key] != obj[key]:
            raise fail(f"'{key}' is given both at the top level and in metadata, differently.",
                       key)
        metadata[key] = obj[key]

    k = len(contexts)
    judge_verdicts: dict[str, list[JudgeVerdict | None]] = {}
    if "judge_verdicts" in obj:
        judge_name = obj.get("judge", IMPORTED_JUDGE)
        if not isinstance(judge_name, str) or not judge_name.strip():
            raise fail(f"must be the judge's name as a string, not {_kind(judge_name)}.", "judge")
        judge_verdicts[judge_name] = _judge_list(obj["judge_verdicts"], k, "judge_verdicts", fail,
                                                 golden_id)
    elif "judge" in obj:
        raise fail("'judge' is given but 'judge_verdicts' is missing.", "judge_verdicts")
    judges = obj.get("judges")
    if judges is not None:
        if not isinstance(judges, dict):
            raise fail("must be an object from judge name to a list of verdicts.", "judges")
        for judge_name, verdicts in judges.items():
            if judge_name in judge_verdicts:
                raise fail(f"the judge '{judge_name}' is given twice.", "judges")
            judge_verdicts[judge_name] = _judge_list(verdicts, k, f"judges.{judge_name}", fail,
                                                     golden_id)

    human_labels: dict[str, list[Answer | None]] = {}
    raw_labels = obj.get("human_labels")
    if raw_labels is not None:
        if not isinstance(raw_labels, dict):
            raise fail('must be an object from annotator name to a list of 0/1/"unsure"/null, '
                       'e.g. {"alice": [1, 0, null]}.', "human_labels")
        for given, labels in raw_labels.items():
            where = f"human_labels.{given}"
            annotator = _person(given, human_labels, where, fail, notes)
            if not isinstance(labels, list):
                raise fail(f'must be a list of 0, 1, "unsure" or null, not {_kind(labels)}.',
                           where)
            _one_per_chunk(labels, k, "label", where, fail, golden_id)
            for rank, label in enumerate(labels, 1):
                if label is not None and not is_answer(label):
                    raise fail(f'the label at rank {rank} is {json.dumps(label)}; use 0, 1, '
                               '"unsure" or null.', where)
            human_labels[annotator] = labels

    human_notes: dict[str, list[str | None]] = {}
    raw_notes = obj.get("human_notes")
    if raw_notes is not None:
        if not isinstance(raw_notes, dict):
            raise fail("must be an object from annotator name to a list of notes.", "human_notes")
        for given, comments in raw_notes.items():
            where = f"human_notes.{given}"
            annotator = _person(given, human_notes, where, fail, notes)
            if not isinstance(comments, list):
                raise fail(f"must be a list of {k} strings or nulls, not {_kind(comments)}.",
                           where)
            _one_per_chunk(comments, k, "note", where, fail, golden_id)
            if any(note is not None and not isinstance(note, str) for note in comments):
                raise fail("every note must be a string or null.", where)
            human_notes[annotator] = comments
    human_marks: dict[str, list[dict[str, Any] | None]] = {}
    raw_marks = obj.get("human_marks")
    if raw_marks is not None:
        if not isinstance(raw_marks, dict):
            raise fail("must be an object from annotator name to a list of marks.", "human_marks")
        for given, marks in raw_marks.items():
            where = f"human_marks.{given}"
            annotator = _person(given, human_marks, where, fail, notes)
            if annotator not in human_labels and annotator not in human_notes:
                raise fail(f"'{annotator}' has marks but no human_labels or human_notes.", where)
            if not isinstance(marks, list):
                raise fail(f"must be a list of {k} objects or nulls, not {_kind(marks)}.", where)
            _one_per_chunk(marks, k, "mark", where, fail, golden_id)
            held = (human_labels.get(annotator) or [None] * k,
                    human_notes.get(annotator) or [None] * k)
            human_marks[annotator] = [None if mark is None else _mark(mark, rank, where, fail)
                                      for rank, mark in enumerate(marks, 1)]
            if any(mark is not None and held[0][i] is None and held[1][i] is None
                   for i, mark in enumerate(marks)):
                raise fail("a mark stands on a rank where this person has no label or note.",
                           where)
    gold_labels = None
    raw_gold = obj.get("gold_labels")
    if raw_gold is not None:
        if not isinstance(raw_gold, list):
            raise fail(f"must be a list of {k} gold labels or nulls, not {_kind(raw_gold)}.",
                       "gold_labels")
        _one_per_chunk(raw_gold, k, "gold label", "gold_labels", fail, golden_id)
        gold_labels = [None if gold is None else _gold(gold, rank, fail)
                       for rank, gold in enumerate(raw_gold, 1)]
    for annotator, labels in human_labels.items():
        said = human_notes.get(annotator, [])
        for rank, label in enumerate(labels, 1):
            if label is None or not kind_of(label).needs_note:
                continue
            if not (rank <= len(said) and (said[rank - 1] or "").strip()):
                word = kind_of(label).word
                raise fail(f'the label at rank {rank} is "{word}" without a note: an {word} '
                           f"label needs one in human_notes.{annotator} saying what is unclear.",
                           f"human_labels.{annotator}")

    return GoldenRecord(
        id=golden_id,
        user_input=user_input,
        reference=reference,
        response=response,
        retrieved_contexts=contexts,
        metadata=metadata,
        judge_verdicts=judge_verdicts,
        human_labels=human_labels,
        human_notes=human_notes,
        human_marks=human_marks,
        gold_labels=gold_labels,
        retrieved_context_ids=ids,
        retrieved_context_scores=scores,
        line=line or 0,
    )


def _chunk_ids(given: Any, k: int, fail: Callable[..., InputError]
               ) -> list[str | None] | None:
    """A golden's chunk ids: one per chunk (a string, a whole number or null), distinct."""
    if given is None:
        return None
    field = "retrieved_context_ids"
    if not isinstance(given, list) or len(given) != k:
        raise fail(f"must be a list of {k} chunk ids (one per ranked chunk, null where a chunk "
                   f"has none), not {_kind(given) if not isinstance(given, list) else len(given)}"
                   ".", field)
    ids: list[str | None] = []
    for rank, value in enumerate(given, 1):
        if value is None:
            ids.append(None)
        elif isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
            raise fail(f"the id at rank {rank} must be a non-empty string, not {_kind(value)}.",
                       field)
        else:
            ids.append(str(value).strip())
    named = [i for i in ids if i is not None]
    if len(set(named)) != len(named):
        twice = next(i for i in named if named.count(i) > 1)
        raise fail(f"the id {json.dumps(twice, ensure_ascii=False)} is given to two chunks of "
                   "this golden; a chunk id names one chunk of a ranking.", field)
    return ids if named else None


def _chunk_scores(given: Any, k: int, fail: Callable[..., InputError]
                  ) -> list[float | None] | None:
    """A golden's retrieval scores: one finite number (or null) per chunk."""
    if given is None:
        return None
    field = "retrieved_context_scores"
    if not isinstance(given, list) or len(given) != k:
        raise fail(f"must be a list of {k} scores (one per ranked chunk, null where a chunk has "
                   f"none), not {_kind(given) if not isinstance(given, list) else len(given)}.",
                   field)
    scores: list[float | None] = []
    for rank, value in enumerate(given, 1):
        if value is None:
            scores.append(None)
        elif isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise fail(f"the score at rank {rank} must be a finite number, not {_kind(value)}.",
                       field)
        else:
            scores.append(float(value))
    return scores if any(v is not None for v in scores) else None


INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
"""Zero-width characters: in an id they make two ids that look the same differ."""


def _clean_id(given: str, notes: _Notices | None) -> str:
    """A golden id in one spelling: Unicode NFC (an accent composed or not is one id), without
    zero-width characters or spaces around it; a changed id is said once per file."""
    # An ASCII id is already NFC and holds no zero-width character.
    cleaned = (given.strip() if given.isascii()
               else unicodedata.normalize("NFC", given).translate(INVISIBLE).strip())
    if cleaned != given and notes is not None:
        notes.add("golden ids were written in one spelling (Unicode NFC, no zero-width "
                  "characters, no spaces around them), e.g. "
                  f"{json.dumps(given)} is {json.dumps(cleaned, ensure_ascii=False)}.", "ids")
    return cleaned


def _person(given: str, taken: dict[str, Any], where: str, fail: Any,
            notes: _Notices | None) -> str:
    """An annotator's name without the spaces around it (' alice' is alice), said once."""
    trimmed = given.strip()
    if not trimmed:
        raise fail("the annotator's name is empty; name who gave these labels.", where)
    if trimmed in taken:
        raise fail(f"two names here are {json.dumps(trimmed, ensure_ascii=False)} once the spaces "
                   "around them are dropped; give that person's labels once.", where)
    if trimmed != given and notes is not None:
        notes.add(f"the annotator name {json.dumps(given, ensure_ascii=False)} has spaces "
                  f"around it; its labels are kept under {json.dumps(trimmed, ensure_ascii=False)}.")
    return trimmed


def _optional_text(obj: dict[str, Any], key: str, fail: Any) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(f"must be a string, not {_kind(value)}.", key)
    return value


def _one_per_chunk(items: list[Any], k: int, what: str, where: str, fail: Any,
                   golden_id: str) -> None:
    """A list of one entry per ranked chunk: a longer or shorter one is almost always a list
    from another golden, or a chunk added or removed without its entry."""
    if len(items) != k:
        raise fail(f"golden '{golden_id}' has {counted(k, 'ranked chunk')} but "
                   f"{counted(len(items), what)} here; give one per ranked chunk, in rank order "
                   "(null where there is none).", where)


_MARK_KINDS: dict[str, tuple[type, ...]] = {
    "action": (str,), "judge": (str,), "shown_verdict": (int,), "blind_verdict": (int,),
    "reason_wrong": (bool,), "decision_ms": (int, float), "created_at": (str,),
    "updated_at": (str,), "grade": (int,)}
_ACTIONS = ("accept", "flip", "set", "import")


def _mark(item: Any, rank: int, where: str, fail: Any) -> dict[str, Any]:
    """One entry of a person's human_marks list (MARK_FIELDS), each fault with its sentence."""
    if not isinstance(item, dict):
        raise fail(f"the mark at rank {rank} must be an object, not {_kind(item)}.", where)
    for key, value in item.items():
        kinds = _MARK_KINDS.get(key)
        if kinds is None:
            raise fail(f"the mark at rank {rank} has '{key}'; a mark holds "
                       f"{', '.join(MARK_FIELDS)}.", where)
        if value is None:
            continue
        if type(value) not in kinds or (key.endswith("_verdict") and not is_verdict(value)) or (
                key == "action" and value not in _ACTIONS) or (
                key == "decision_ms" and not (math.isfinite(value) and value >= 0)) or (
                key == "grade" and value < 0):
            raise fail(f"'{key}' in the mark at rank {rank} is {_kind(value)}, which it cannot "
                       "be.", where)
    return {key: item[key] for key in MARK_FIELDS if item.get(key) is not None}


def _gold(item: Any, rank: int, fail: Any) -> dict[str, Any]:
    """One entry of gold_labels: a verdict and who decided it, when, with an optional note."""
    if not isinstance(item, dict) or set(item) - set(GOLD_FIELDS):
        raise fail(f"the gold label at rank {rank} must be an object holding "
                   f"{', '.join(GOLD_FIELDS)}.", "gold_labels")
    if not is_verdict(item.get("verdict")):
        raise fail(f"the gold label at rank {rank} has verdict "
                   f"{json.dumps(item.get('verdict'))}; it must be {SPOKEN}.", "gold_labels")
    for key in ("decided_by", "decided_at"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise fail(f"the gold label at rank {rank} needs '{key}' as a string.", "gold_labels")
    if item.get("note") is not None and not isinstance(item["note"], str):
        raise fail(f"the gold label's note at rank {rank} must be a string.", "gold_labels")
    return {key: item[key] for key in GOLD_FIELDS if item.get(key) is not None}


CHECK_ANSWER_KINDS: dict[str, tuple[type, ...]] = {
    "truth": (int,), "answer": (int,), "unsure": (bool,), "shown_verdict": (int,),
    "note": (str,), "answered_at": (str,), "distractor": (bool,)}
"""What a person's answer on one rank of an attention check holds in the session JSONL."""


def validate_check(obj: dict[str, Any], name: str, line: int) -> CheckRecord:
    """A session JSONL line holding an attention check and the answers on it, or InputError."""

    def fail(message: str, field: str) -> InputError:
        return InputError(name, message, line=line, field=field)

    check = obj[CHECK_FIELD]
    if not isinstance(check, dict):
        raise fail(f"must be an object, not {_kind(check)}.", CHECK_FIELD)
    for key in ("source", "golden_id", "created_at"):
        if not isinstance(check.get(key), str) or not check[key]:
            raise fail(f"needs '{key}' as a string.", f"{CHECK_FIELD}.{key}")
    record = check.get("record")
    if not isinstance(record, dict):
        record = {}
    chunks = record.get("chunks")
    if not isinstance(chunks, list) or not chunks or not isinstance(record.get("truth"), list) \
            or len(record["truth"]) != len(chunks):
        raise fail("needs a record with its chunks and one truth per chunk, as the session "
                   "stored it.", f"{CHECK_FIELD}.record")
    answers = obj.get("check_answers", {})
    if not isinstance(answers, dict):
        raise fail("must be an object from annotator name to a list of answers.", "check_answers")
    out: dict[str, list[dict[str, Any] | None]] = {}
    for person, given in answers.items():
        where = f"check_answers.{person}"
        if not isinstance(given, list) or len(given) != len(chunks):
            raise fail(f"must be a list of {len(chunks)} answers or nulls.", where)
        out[person] = []
        for rank, answer in enumerate(given, 1):
            if answer is None:
                out[person].append(None)
                continue
            if not isinstance(answer, dict) or not isinstance(answer.get("answered_at"), str) \
                    or any(key not in CHECK_ANSWER_KINDS or (value is not None and (
                        type(value) not in CHECK_ANSWER_KINDS[key]
                        or (key in ("truth", "answer", "shown_verdict") and not is_verdict(value))))
                           for key, value in answer.items()):
                raise fail(f"the answer at rank {rank} must be an object holding "
                           f"{', '.join(CHECK_ANSWER_KINDS)} (answered_at needed).", where)
            out[person].append({key: answer[key] for key in CHECK_ANSWER_KINDS
                                if answer.get(key) is not None})
    return CheckRecord(check["source"], check["golden_id"], record, check["created_at"], out,
                       line)


def _judge_list(raw: Any, k: int, where: str, fail: Any, golden_id: str
                ) -> list[JudgeVerdict | None]:
    if not isinstance(raw, list):
        raise fail(f"must be a list with one verdict per chunk, not {_kind(raw)}.", where)
    _one_per_chunk(raw, k, "verdict", where, fail, golden_id)
    # The usual list, an object per chunk with a verdict, a reason and perhaps P(relevant) as a
    # float, is checked as a whole, in C where it can be (an import reads a million of them);
    # any other list is checked entry by entry, each fault with its own sentence.
    if set(map(type, raw)) == {dict}:
        verdicts: list[Any] = list(map(dict.get, raw, repeat("verdict")))
        reasons: list[Any] = list(map(dict.get, raw, repeat("reason")))
        chances: list[Any] = list(map(dict.get, raw, repeat("p_relevant")))
        grades: list[Any] = list(map(dict.get, raw, repeat("grade")))
        given = [p for p in chances if p is not None]
        if (set(map(type, verdicts)) == {int} and set(verdicts) <= _VERDICTS
                and set(map(type, reasons)) <= {str, NoneType}
                and set(map(type, given)) <= {float}
                and set(map(type, grades)) == {NoneType}
                and all(map(_ZERO.__le__, given)) and all(map(_ONE.__ge__, given))):  # no NaN
            return list(map(JudgeVerdict, verdicts, reasons, chances))
    return [_judge_verdict(item, rank, where, fail) for rank, item in enumerate(raw, 1)]


_ZERO, _ONE = 0.0, 1.0


def _judge_verdict(item: Any, rank: int, where: str, fail: Any) -> JudgeVerdict | None:
    """One entry of a judge's verdict list, every check with its sentence."""
    if item is None:
        return None
    if is_verdict(item):  # a bare 0 or 1 is a verdict without a reason
        return JudgeVerdict(verdict=item)
    if not isinstance(item, dict):
        raise fail(f"the verdict at rank {rank} must be an object like "
                   f'{{"verdict": 1, "reason": "..."}}, not {_kind(item)}.', where)
    verdict = item.get("verdict")
    if not is_verdict(verdict):
        raise fail(f"the verdict at rank {rank} is {json.dumps(verdict)}; a verdict must be "
                   f"{SPOKEN}.", where)
    reason = item.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise fail(f"the reason at rank {rank} must be a string.", where)
    p = item.get("p_relevant")
    if p is not None and (isinstance(p, bool) or not isinstance(p, int | float)
                          or not 0.0 <= p <= 1.0 or math.isnan(p)):
        raise fail(f"p_relevant at rank {rank} must be a number from 0 to 1.", where)
    grade = item.get("grade")
    if grade is not None and (type(grade) is not int or grade < 0):
        raise fail(f"the grade at rank {rank} must be a whole number from 0 up, not "
                   f"{_kind(grade)}.", where)
    return JudgeVerdict(verdict=verdict, reason=reason,
                        p_relevant=None if p is None else float(p), grade=grade)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:17] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# ---------------------------------------------------------------------------------------------
# Writing


def golden_to_object(record: GoldenRecord) -> dict[str, Any]:
    """The session-JSONL object of a golden: the input format, with every judge and label."""
    obj: dict[str, Any] = {"id": record.id, "user_input": record.user_input}
    if record.reference is not None:
        obj["reference"] = record.reference
    if record.response is not None:
        obj["response"] = record.response
    obj["retrieved_contexts"] = record.retrieved_contexts
    if record.retrieved_context_ids is not None:
        obj["retrieved_context_ids"] = record.retrieved_context_ids
    if record.retrieved_context_scores is not None:
        obj["retrieved_context_scores"] = record.retrieved_context_scores
    if len(record.judge_verdicts) == 1:
        [(name, verdicts)] = record.judge_verdicts.items()
        obj["judge"] = name
        obj["judge_verdicts"] = [_verdict_object(v) for v in verdicts]
    elif record.judge_verdicts:
        obj["judges"] = {
            name: [_verdict_object(v) for v in verdicts]
            for name, verdicts in sorted(record.judge_verdicts.items())
        }
    if record.human_labels:
        obj["human_labels"] = dict(sorted(record.human_labels.items()))
    if record.human_notes:
        obj["human_notes"] = dict(sorted(record.human_notes.items()))
    if record.human_marks:
        obj["human_marks"] = dict(sorted(record.human_marks.items()))
    if record.gold_labels is not None:
        obj["gold_labels"] = record.gold_labels
    if record.metadata:
        obj["metadata"] = record.metadata
    return obj


def _verdict_object(verdict: JudgeVerdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    obj: dict[str, Any] = {"verdict": verdict.verdict, "reason": verdict.reason}
    if verdict.p_relevant is not None:
        obj["p_relevant"] = verdict.p_relevant
    if verdict.grade is not None:
        obj["grade"] = verdict.grade
    return obj


def check_to_object(check: CheckRecord) -> dict[str, Any]:
    """The session-JSONL object of an attention check, with every person's answers on it."""
    obj: dict[str, Any] = {CHECK_FIELD: {"source": check.source, "golden_id": check.golden_id,
                                         "record": check.record, "created_at": check.created_at}}
    if check.answers:
        obj["check_answers"] = dict(sorted(check.answers.items()))
    return obj


def write_jsonl(records: Iterable[GoldenRecord], out: IO[str],
                checks: Iterable[CheckRecord] = ()) -> int:
    """Write goldens as session JSONL (UTF-8, one object per line), then the attention checks;
    return how many goldens."""
    count = 0
    for record in records:
        out.write(_json_text(golden_to_object(record)))
        out.write("\n")
        count += 1
    for check in checks:
        out.write(_json_text(check_to_object(check)))
        out.write("\n")
    return count


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's CSV injection list)."""


def csv_cell(value: object) -> object:
    """A value as a CSV cell safe to open in a spreadsheet: text with a leading formula
    character gets a leading apostrophe (read back by this tool without it), and control
    characters are shown (annotator.text.visible); numbers are left as they are."""
    if not isinstance(value, str):
        return value
    text = visible(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


_UNESCAPED = re.compile(r"[\x7f-\x9f]")
"""Controls json.dumps leaves raw when it writes non-ASCII text as it is (it escapes C0)."""


def _json_text(value: Any) -> str:
    """JSON with non-ASCII text as it is but every control character escaped, DEL and C1 too
    (json.dumps escapes only C0): it reads back exactly and shows nothing a terminal obeys."""
    text = json.dumps(value, ensure_ascii=False)
    return _UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)



def _from_csv_cell(cell: str) -> str:
    """The text of a cell written by csv_cell (its protecting apostrophe dropped)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


CSV_COLUMNS = ("id", "user_input", "reference", "response", "retrieved_contexts", "judge",
               "judge_verdicts", "judges", "human_labels", "human_notes", "metadata")


def write_csv(records: Iterable[GoldenRecord], out: IO[str]) -> int:
    """Write goldens as CSV, one row per golden, list and object columns as JSON; return how many."""
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for record in records:
        obj = golden_to_object(record)
        writer.writerow({
            # A list or object column starts with [ or {: never a formula.
            column: _json_text(obj[column]) if column in CSV_JSON_COLUMNS
            else csv_cell(obj[column])
            for column in CSV_COLUMNS if column in obj
        })
        count += 1
    return count


def chunk_table(records: Iterable[GoldenRecord], judges: Sequence[str],
                annotators: Sequence[str]) -> Iterator[dict[str, Any]]:
    """One dict a chunk: golden_id, rank, question, chunk, doc_id and score (the chunk's own
    id and retrieval score, None where the file gave none); each judge's ``verdict:``,
    ``reason:`` and ``p_relevant:`` NAME; each person's ``label:`` and ``note:`` NAME (None
    where there is none)."""
    for record in records:
        for k, text in enumerate(record.retrieved_contexts):
            ids, scores = record.retrieved_context_ids, record.retrieved_context_scores
            row: dict[str, Any] = {"golden_id": record.id, "rank": k + 1,
                                   "question": record.user_input, "chunk": text,
                                   "doc_id": ids[k] if ids else None,
                                   "score": scores[k] if scores else None}
            for judge in judges:
                verdicts = record.judge_verdicts.get(judge, [])
                verdict = verdicts[k] if k < len(verdicts) else None
                row[f"verdict:{judge}"] = None if verdict is None else verdict.verdict
                row[f"reason:{judge}"] = None if verdict is None else verdict.reason
                row[f"p_relevant:{judge}"] = None if verdict is None else verdict.p_relevant
            for name in annotators:
                labels = record.human_labels.get(name, [])
                notes = record.human_notes.get(name, [])
                row[f"label:{name}"] = labels[k] if k < len(labels) else None
                row[f"note:{name}"] = notes[k] if k < len(notes) else None
            yield row


def write_chunk_csv(records: Iterable[GoldenRecord], out: IO[str], judge: str,
                    annotators: Sequence[str]) -> int:
    """Write one row per chunk: golden, rank, text, the judge's verdict and reason, and each
    annotator's label and note (chunk_table's columns for one judge); return how many rows."""
    columns = ["golden_id", "rank", "question", "chunk", "judge", "judge_verdict", "judge_reason",
               "judge_p_relevant"]
    for name in annotators:
        columns += [f"label:{name}", f"note:{name}"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    rows = 0
    for row in chunk_table(records, [judge], annotators):
        cells: list[object] = [row["golden_id"], row["rank"], row["question"], row["chunk"], judge,
                               row[f"verdict:{judge}"], row[f"reason:{judge}"],
                               row[f"p_relevant:{judge}"]]
        for name in annotators:
            cells += [row[f"label:{name}"], row[f"note:{name}"] or ""]
        writer.writerow([csv_cell("" if cell is None else cell) for cell in cells])
        rows += 1
    return rows
