"""Rows into dataclasses by column name: the SELECT list is made from the dataclass's fields.

A dataclass read from a table names its fields after the table's columns; ``columns(Label)``
spells the SELECT list from those names, in field order, so ``Label(*row)`` cannot drift out of
step with the SQL. ``TABLES`` says which table each one comes from, and the schema test
(tests/test_session.py) checks every field against a real column of a migrated session.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from annotator.models import Chunk, GoldLabel, Guideline, Judge, Label, StoredVerdict

TABLES: dict[type[Any], str] = {
    Label: "labels",
    GoldLabel: "gold_labels",
    StoredVerdict: "verdicts",
    Judge: "judges",
    Chunk: "chunks",
    Guideline: "guidelines",
}
"""Each row dataclass and the table whose columns its fields are."""


def field_names(cls: type[Any]) -> tuple[str, ...]:
    """The dataclass's field names, in order."""
    return tuple(f.name for f in fields(cls))


def columns(cls: type[Any], alias: str = "") -> str:
    """The SELECT list for cls: its field names as columns, in field order (optionally qualified)."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name in field_names(cls))
