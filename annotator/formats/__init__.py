"""Goldens files in and out, one job a module: ``reading`` (JSON lines, JSON, CSV, parquet and
tracers' exports, the column map), ``validation`` (what a golden and a check may hold, field by
field) and ``writing`` (session JSONL, CSV, the chunk table). Reading yields one validated
GoldenRecord per golden, or raises InputError naming the file, the line and the field. Nothing
here touches a session file.
"""

from __future__ import annotations

from annotator.formats.reading import ColumnMap, companion_files, read_goldens
from annotator.formats.validation import (
    ALIASES,
    CHECK_FIELD,
    IMPORTED_JUDGE,
    KNOWN_FIELDS,
    validate_check,
    validate_golden,
)
from annotator.formats.writing import (
    check_to_object,
    chunk_table,
    csv_cell,
    golden_to_object,
    write_chunk_csv,
    write_csv,
    write_jsonl,
)

__all__ = ["ALIASES", "CHECK_FIELD", "IMPORTED_JUDGE", "KNOWN_FIELDS", "ColumnMap",
           "check_to_object", "chunk_table", "companion_files", "csv_cell", "golden_to_object",
           "read_goldens", "validate_check", "validate_golden", "write_chunk_csv", "write_csv",
           "write_jsonl"]
