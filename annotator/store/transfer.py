"""A session copied whole between stores (a file and a PostgreSQL database, either way):
every table's rows in one transaction of the target, then counted on both sides; and a
PostgreSQL session upgraded by laying this release's schema out and bringing its rows back.

A copy from a file to a file uses SQLite's backup API instead (Session.copy_to); a file is
upgraded by its migrations (store/migrations.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING

from annotator.errors import SessionError
from annotator.store import schema
from annotator.store.schema import MIGRATIONS_TABLE
from annotator.store.versions import MIGRATION_SET, NAMES

if TYPE_CHECKING:
    from annotator.store.session import Session

BATCH = 5_000
"""Rows read and written at a time: a million chunks never sit in memory at once."""


@cache
def layout() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each table in creation order (a row's references come before it), with the columns a
    copy writes: all but the generated ones, which the target computes."""
    out = []
    for statement in schema.statements():
        made = re.match(r'CREATE TABLE "?(\w+)"?\s*\((.*)\)\s*$', statement, re.DOTALL)
        if made is None:
            continue
        columns = [m.group(1) for m in re.finditer(
            r'(?:^|,|\()\s*"?(\w+)"?\s+(?:INTEGER|TEXT|REAL|BLOB)\b(?![^,]*GENERATED)',
            made.group(2))]
        out.append((made.group(1), tuple(columns)))
    return tuple(out)


OLD = "cp_annotator_before_upgrade"
"""The schema an upgrade moves a PostgreSQL session's tables into while it lays them out anew."""


def relay(session: Session, script: Sequence[str]) -> None:
    """Upgrade a PostgreSQL session written by an older release, inside the caller's
    transaction: its tables move aside, this release's schema is laid out, and every row comes
    back with the columns both know (a table or column the release added starts empty or at
    its default; a new CHECK holds every old row, or the upgrade fails and changes nothing).
    The migrations' own record comes along, and this release's are added to it. A migration
    that changes what rows hold, not only their shape, needs a step of its own here."""
    conn = session.conn
    old = set(session.conn.tables())  # type: ignore[union-attr]
    conn.execute(f'CREATE SCHEMA "{OLD}"')
    for table in sorted(old):
        conn.execute(f'ALTER TABLE "{table}" SET SCHEMA "{OLD}"')
    for statement in script:
        conn.execute(statement)
    for table, columns in layout():
        if table not in old:
            continue
        there = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = ?", [OLD, table])}
        names = ", ".join(f'"{c}"' for c in columns if c in there)
        order = "id" if "id" in columns else "1"
        conn.execute(f'INSERT INTO "{table}"({names}) SELECT {names} FROM "{OLD}"."{table}" '
                     f"ORDER BY {order}")
    conn.execute(f'DROP SCHEMA "{OLD}" CASCADE')
    session.ids_after_copy()
    applied = {row[0] for row in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
    stamp = str(datetime.now(UTC))
    conn.executemany(f"INSERT INTO {MIGRATIONS_TABLE}(migration_set, name, applied_at) "
                     "VALUES (?, ?, ?)", [(MIGRATION_SET, name, stamp) for name in NAMES
                                          if name not in applied])


def copy_rows(source: Session, target: Session,
              advance: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Every row of ``source`` (read in one snapshot) into ``target`` (a session just laid
    out, holding nothing of its own yet), in one transaction; each table's count, checked equal
    on both sides."""
    counts: dict[str, int] = {}
    # Every table read in one snapshot, whoever writes to the source meanwhile.
    with source.snapshot(), target.transaction():
        for table, _ in layout():  # what laying out the target wrote (its id, its migrations)
            target.conn.execute(f'DELETE FROM "{table}"')
        for table, columns in layout():
            names = ", ".join(f'"{c}"' for c in columns)
            marks = ", ".join("?" * len(columns))
            # In a set order: an event's undo names an earlier event; a golden's position.
            order = {"goldens": "position", "events": "id"}.get(table, ", ".join(
                f'"{c}"' for c in columns[:2]))
            rows = source.conn.execute(f'SELECT {names} FROM "{table}" ORDER BY {order}')
            insert = f'INSERT INTO "{table}"({names}) VALUES ({marks})'
            copied = 0
            while batch := rows.fetchmany(BATCH):
                target.conn.executemany(insert, batch)
                copied += len(batch)
                if advance is not None:
                    advance(table, len(batch))
            counts[table] = copied
        target.ids_after_copy()
        if target.dialect == "postgresql":
            target.conn.execute("ANALYZE")  # a million new rows: the planner must know them
        for table, copied in counts.items():
            there = int(target.conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
            if there != copied:
                raise SessionError(f"The copy of {table} holds {there} rows where "
                                   f"{source.where} gave {copied}; nothing was copied.")
    return counts
