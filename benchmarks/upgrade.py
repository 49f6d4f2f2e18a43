"""Upgrade benchmark: opening a session file of a million labels that a release before answer
kinds wrote (the schema before m010), as `annotator info` does: every migration since, once.

Prints the CPU seconds of the command (process start to the info printed; the table rebuilds
of m010 and m012 are most of it) and of a second run (nothing left to upgrade), with the budget
beside the first. Run: python benchmarks/upgrade.py [--labels N]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

from measure import measured
from sqlite_utils import Database

from annotator.store.migrations import migrations

BUDGET_S = 30.0
CHUNKS_A_GOLDEN = 10


def old_file(path: Path, labels: int) -> None:
    """A file at the schema before m010: goldens, chunks and one person's labels (an unsure
    one every tenth, a verdict otherwise), as that release stored them."""
    conn = sqlite3.connect(path)
    migrations.apply(Database(conn), stop_before="m010_answer_kinds")
    goldens = labels // CHUNKS_A_GOLDEN
    conn.executemany("INSERT INTO goldens(id, position, user_input, metadata, content_sha256, "
                     "created_at) VALUES (?, ?, 'q', '{}', ?, 't')",
                     ((f"g{g}", g, f"sha{g}") for g in range(goldens)))
    conn.executemany("INSERT INTO chunks(id, golden_id, rank, text) VALUES (?, ?, ?, 'c')",
                     ((c + 1, f"g{c // CHUNKS_A_GOLDEN}", c % CHUNKS_A_GOLDEN + 1)
                      for c in range(labels)))
    conn.executemany("INSERT INTO labels(annotator, chunk_id, verdict, unsure, note, created_at, "
                     "updated_at) VALUES ('alice', ?, ?, ?, ?, 't', 't')",
                     ((c + 1, None if c % 10 == 0 else c % 2, int(c % 10 == 0),
                       "why" if c % 10 == 0 else None) for c in range(labels)))
    conn.commit()
    conn.close()


def main() -> None:
    """Write the old file, then time opening it twice."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--labels", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old.db"
        old_file(path, args.labels)
        command = [sys.executable, "-m", "annotator", "info", str(path)]
        first, mb = measured(command)
        again, _ = measured(command)
        print(f"{args.labels:,} labels written before m010")
        print(f"first open (m010, m011, m012)  : {first:6.2f} s CPU, {mb:4.0f} MB "
              f"(budget {BUDGET_S:.0f} s)")
        print(f"second open (nothing to do)    : {again:6.2f} s CPU (no budget)")


if __name__ == "__main__":
    main()
