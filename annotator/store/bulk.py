"""Bulk loads into a new session: secondary indexes built once after the rows, not kept up row
by row (the import into a fresh session, and the merge). Inside the caller's transaction, so a
failed load puts them back with everything else."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def drop_indexes(conn: sqlite3.Connection, tables: Sequence[str]) -> list[str]:
    """Drop the secondary indexes of these tables; return the SQL that makes them again."""
    marks = ",".join("?" * len(tables))
    found = conn.execute(  # read whole: an open read of the schema blocks DROP INDEX
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({marks}) ORDER BY name", list(tables)).fetchall()
    for name, _ in found:
        conn.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in found]


def build_indexes(conn: sqlite3.Connection, statements: Sequence[str]) -> None:
    """Make the dropped indexes again."""
    for sql in statements:
        conn.execute(sql)
