"""Reading goldens files: JSON lines, a JSON document, CSV, parquet and a tracer's export
(through its importer), with the column map (--map) that reads other shapes. Each line is
checked by formats/validation.py; an error names the file, the line and the field.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from annotator.errors import InputError, install_hint
from annotator.formats.validation import (
    ALIASES,
    CHECK_FIELD,
    CSV_JSON_COLUMNS,
    KNOWN_FIELDS,
    NAMED_FIELDS,
    described,
    validate_check,
    validate_golden,
)
from annotator.formats.writing import from_csv_cell
from annotator.importers import IMPORTERS, SOURCES, Importer, langfuse
from annotator.models import (
    GOLDENS_SUFFIXES,
    CheckRecord,
    GoldenRecord,
)
from annotator.text import visible
from annotator.untrusted import UnsafeJson, parse_json, parse_stream

csv.field_size_limit(2**31 - 1)  # chunks may be megabytes long; csv's 128 KiB default is too small


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
              notes: Notices) -> dict[str, Any]:
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
        raise fail(f"found {described(value)} where '{key}' was to be looked up.")
    if each:
        if not isinstance(value, list):
            raise fail(f"'{key}[]' needs a list, and found {described(value)}.")
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
    notes = Notices(notices, str(path), mapping, path.suffix.lower() == ".csv")
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


class Notices:
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


def _read_json_lines(path: Path, notes: Notices, checks: list[CheckRecord] | None
                     ) -> Iterator[GoldenRecord]:
    name = str(path)
    ids: dict[str, tuple[str, int]] = {}
    seen_any = False
    with path.open("rb") as handle:
        first = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
        handle.seek(0)
        one, head = (_one_document(handle) if first.startswith(b"{") else (False, _UNREAD))
        if first.startswith(b"[") or one:
            yield from _read_json_document(path, handle, ids, notes)
            return
        lines = _json_lines(handle, name, head)
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
              notes: Notices) -> list[Any]:
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


_UNREAD = object()
"""No line parsed yet (``_one_document`` gives the first line's value when it parsed it)."""


def _json_lines(handle: IO[bytes], name: str, head: Any = _UNREAD) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of each line of a JSON lines file, blank lines skipped; a
    line that is not UTF-8 or not JSON is an InputError naming it. ``head``: the first line,
    already parsed (a one-line export of 100 MB is parsed once)."""
    # A regular file (read_goldens refuses others): its size bounds every line, and a one-line
    # JSON document of hundreds of MB is a file of this kind.
    for line_no, raw in enumerate(handle, 1):
        if line_no == 1 and head is not _UNREAD:
            del raw
            yield 1, head
            head = _UNREAD  # not kept alive while the rest is read
            continue
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


def _one_document(handle: IO[bytes]) -> tuple[bool, Any]:
    """Whether a file starting with '{' is one JSON document (pretty-printed, or one object
    holding a whole table) rather than JSON Lines: its first line alone does not parse; and,
    for JSON Lines, that line parsed (``_UNREAD`` where its reading must say what is wrong:
    not UTF-8, or JSON a session cannot hold)."""
    first_line = handle.readline()
    handle.seek(0)
    try:
        text = first_line.decode("utf-8").removeprefix("\ufeff")
        strict = True
    except UnicodeDecodeError:  # decided on the readable part; the reading names the byte
        text, strict = first_line.decode("utf-8-sig", "replace"), False
    del first_line
    try:
        value = parse_json(text)
    except json.JSONDecodeError:
        return True, _UNREAD
    except UnsafeJson:
        return False, _UNREAD  # the line parses far enough to be JSON Lines; its error comes there
    return False, value if strict else _UNREAD


def _read_json_document(
    path: Path, handle: IO[bytes], ids: dict[str, tuple[str, int]], notes: Notices
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
                     notes: Notices) -> Iterator[GoldenRecord]:
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
    field_names = NAMED_FIELDS
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


def _read_csv(path: Path, delimiter: str, notes: Notices) -> Iterator[GoldenRecord]:
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
            obj[column] = from_csv_cell(cell)
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
