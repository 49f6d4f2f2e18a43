"""A new session file's schema in one script: what the migrations make, without sqlite-utils.

A new file is the start of every first import. Running the migrations through sqlite-utils
costs it about 0.07 s of CPU (importing sqlite-utils, its plugin look-up, one transaction per
migration), more than the rest of start-up. A new file instead gets ``schema.sql`` (the
statements the migrations leave, as ``sqlite_master`` holds them, in creation order) and one
row per migration in sqlite-utils' own table, so the next migration applies to it as to any
file. tests/test_migrations.py holds the script to the migrations, table for table and index
for index; after adding a migration, write it again with ``python -m annotator.store.schema``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from annotator.store.versions import MIGRATION_SET, NAMES

if TYPE_CHECKING:
    from annotator.store import postgres

SCRIPT = Path(__file__).with_name("schema.sql")
MIGRATIONS_TABLE = "_sqlite_migrations"


def statements() -> list[str]:
    """The schema's statements, in the order they run."""
    return [s.strip() for s in SCRIPT.read_text(encoding="utf-8").split(";\n") if s.strip()]


def create(conn: sqlite3.Connection | postgres.Connection, script: Sequence[str] | None = None) -> None:
    """Lay the whole schema into an empty file (or the ``script`` given, a PostgreSQL
    database's), inside the caller's transaction, with the session's own identity and every
    migration recorded as applied."""
    for statement in statements() if script is None else script:
        conn.execute(statement)
    # What m001_initial writes, and sqlite-utils' record of each migration (its time format).
    # 32 random hex digits, as m001's uuid4().hex (the uuid module costs start-up time).
    conn.execute("INSERT INTO settings(key, value) VALUES ('session_id', ?)",
                 [os.urandom(16).hex()])
    stamp = str(datetime.now(UTC))
    conn.executemany(f"INSERT INTO {MIGRATIONS_TABLE}(migration_set, name, applied_at) "
                     "VALUES (?, ?, ?)", [(MIGRATION_SET, name, stamp) for name in NAMES])


def dumped(conn: sqlite3.Connection) -> str:
    """The script for a file the migrations made: every statement in ``sqlite_master``, in the
    order it was created."""
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                        "AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
    return "".join(f"{sql};\n" for (sql,) in rows)


def main() -> None:
    """Write schema.sql from a file migrated from scratch."""
    from annotator.store.migrations import migrations

    conn = sqlite3.connect(":memory:")
    import sqlite_utils

    migrations.apply(sqlite_utils.Database(conn))
    SCRIPT.write_text(dumped(conn), encoding="utf-8")
    print(f"wrote {SCRIPT}")


if __name__ == "__main__":
    main()
