"""Bulk loads into a new session (the import into a fresh session, and the merge): secondary
indexes built once after the rows, not kept up row by row (inside the caller's transaction, so a
failed load puts them back with everything else), and each page written once."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.store import postgres

    Connection = sqlite3.Connection | postgres.Connection


def drop_indexes(conn: Connection, tables: Sequence[str]) -> list[str]:
    """Drop the secondary indexes of these tables; return the SQL that makes them again
    (PostgreSQL's indexes stay: its load is its own, see store/postgres.py)."""
    if not isinstance(conn, sqlite3.Connection):
        return []
    marks = ",".join("?" * len(tables))
    found = conn.execute(  # read whole: an open read of the schema blocks DROP INDEX
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({marks}) ORDER BY name", list(tables)).fetchall()
    for name, _ in found:
        conn.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in found]


def build_indexes(conn: Connection, statements: Sequence[str]) -> None:
    """Make the dropped indexes again."""
    for sql in statements:
        conn.execute(sql)


@contextlib.contextmanager
def fresh_load(conn: Connection, when: bool = True, *, own_rows: bool = False
               ) -> Iterator[bool]:
    """Run a bulk load into a session that holds no goldens yet (``when``) as a bare program
    would; yields whether it could.

    - A rollback journal instead of the write-ahead log: the log writes every page twice (into
      the log, then into the file at the checkpoint), a third of a fresh import's CPU. Only when
      no other connection has the file open (SQLite refuses the switch otherwise, and the load
      runs in the log as usual). A load killed midway is rolled back from the journal by the
      next open, as it would be from the log.
    - ``own_rows``: foreign keys are not checked row by row, since every row the load writes
      refers to rows the same load made (the importer's goldens, chunks and judges); a fifth of
      the inserts' time. A merge copies other files' rows, and keeps the checks.

    Both are set back when the load ends, however it ends. On PostgreSQL neither applies; the
    tables' statistics are gathered again after the load instead, so the planner meets a
    million new rows knowing them (its own autovacuum would, minutes later).
    """
    if not isinstance(conn, sqlite3.Connection):
        try:
            yield False
        finally:
            conn.execute("ANALYZE")
        return
    switched = False
    if when and not conn.in_transaction:
        with contextlib.suppress(sqlite3.OperationalError):
            switched = conn.execute("PRAGMA main.journal_mode = delete").fetchone()[0] == "delete"
    try:
        if switched and own_rows:
            conn.execute("PRAGMA foreign_keys = OFF")
        yield switched
    finally:
        if switched:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA main.journal_mode = wal")
