"""The floor for a merge: ATTACH the files and combine them with INSERT ... SELECT in SQLite.

The simplest program merging session files over the same goldens: the schema copied from the
first file, goldens and chunks once, each file's chunk ids mapped by (golden id, rank), every
distinct judge call once with every column it has, the newest label per person and chunk with
every column it has, and every file's event log once (an event in several files once), in
time order, its chunk ids mapped. (The tool also re-points each undo at the event it undoes,
and finds label conflicts, splits, probes and settings: work this floor leaves out.)
Run: python benchmarks/bare/bare_merge.py OUT.db A.db B.db ...
"""

from __future__ import annotations

import sqlite3
import sys


def main() -> None:
    """Merge the files named after the output."""
    out, *files = sys.argv[1:]
    conn = sqlite3.connect(out, isolation_level=None)
    first = sqlite3.connect(files[0])
    for (sql,) in first.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                                "AND name NOT LIKE 'sqlite_%'"):
        conn.execute(sql)
    first.close()
    for i, path in enumerate(files):
        conn.execute(f"ATTACH DATABASE ? AS s{i}", [path])
    conn.execute("BEGIN")
    conn.execute("INSERT OR IGNORE INTO goldens SELECT * FROM s0.goldens")
    conn.execute("INSERT INTO chunks SELECT * FROM s0.chunks")
    conn.execute("INSERT INTO judges SELECT * FROM s0.judges")
    conn.execute("CREATE TEMP TABLE map(src INTEGER, old INTEGER, new INTEGER, "
                 "PRIMARY KEY (src, old)) WITHOUT ROWID")
    for i in range(len(files)):
        conn.execute(f"INSERT INTO map SELECT {i}, o.id, n.id FROM s{i}.chunks o JOIN chunks n "
                     "ON n.golden_id = o.golden_id AND n.rank = o.rank")
    union = " UNION ALL ".join(
        f"SELECT m.new AS chunk_id, t.* FROM s{i}.{{table}} t JOIN map m ON m.src = {i} "
        f"AND m.old = t.chunk_id" for i in range(len(files)))
    def stored(table: str, leave_out: set[str]) -> list[str]:
        """A table's stored columns (not generated ones), but those left out."""
        return [row[1] for row in conn.execute(f"PRAGMA s0.table_xinfo({table})")
                if row[6] == 0 and row[1] not in leave_out]

    calls = ", ".join(stored("verdicts", {"id", "chunk_id", "created_at"}))
    conn.execute(f"""INSERT INTO verdicts(chunk_id, {calls}, created_at)
                     SELECT chunk_id, {calls}, min(created_at)
                     FROM ({union.format(table='verdicts')}) GROUP BY chunk_id, {calls}""")
    said = ", ".join(stored("labels", {"id", "annotator", "chunk_id", "updated_at"}))
    conn.execute(f"""INSERT INTO labels(annotator, chunk_id, {said}, updated_at)
                     SELECT annotator, chunk_id, {said}, max(updated_at)
                     FROM ({union.format(table='labels')}) GROUP BY annotator, chunk_id""")
    log = " UNION ALL ".join(
        f"SELECT e.at, e.annotator, e.kind, m.new AS chunk_id, e.golden_id, e.payload "
        f"FROM s{i}.events e LEFT JOIN map m ON m.src = {i} AND m.old = e.chunk_id"
        for i in range(len(files)))
    conn.execute(f"""INSERT INTO events(at, annotator, kind, chunk_id, golden_id, payload)
                     SELECT * FROM ({log}) GROUP BY at, annotator, kind, chunk_id, golden_id,
                     payload ORDER BY at""")
    conn.execute("COMMIT")


if __name__ == "__main__":
    main()
