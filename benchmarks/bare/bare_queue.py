"""The floor for the queue screen's fill: every golden's row in a plain Textual DataTable.

The simplest program doing the work the queue screen does on a session: one SQL read of every
chunk's golden, rank, this person's answer, note and the judge's verdict; per golden in numpy the
chunk count, how many are decided, CP both ways, the disagreements and whether a note was
written; one more query for how far the others are; then every row into a DataTable at once.
Prints the CPU seconds from the read to the table done with its rows (headless, through Pilot),
as benchmarks/queue_fill.py prints ours.
Run: python benchmarks/bare/bare_queue.py SESSION.db JUDGE ANNOTATOR
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time

import numpy as np
from textual.app import App, ComposeResult
from textual.widgets import DataTable


def rows(path: str, judge: str, annotator: str) -> list[tuple[str, ...]]:
    """Every golden's queue row, as text."""
    conn = sqlite3.connect(path)
    read = np.array(conn.execute(
        """SELECT g.position, c.rank, coalesce(l.verdict, -1), l.note IS NOT NULL,
                  coalesce(v.verdict, -1)
           FROM goldens g JOIN chunks c ON c.golden_id = g.id
           LEFT JOIN labels l ON l.chunk_id = c.id AND l.annotator = ?
           LEFT JOIN (SELECT chunk_id, verdict, max(id) FROM verdicts
                      WHERE judge = ? AND error IS NULL AND repetition = 1 GROUP BY chunk_id) v
             ON v.chunk_id = c.id
           ORDER BY g.position, c.rank""", [annotator, judge]).fetchall(), dtype=np.int64)
    ids = [row[0] for row in conn.execute("SELECT id FROM goldens ORDER BY position")]
    others: dict[str, list[str]] = {}
    for golden_id, person, decided in conn.execute(
            """SELECT c.golden_id, l.annotator, count(*) FROM labels l
               JOIN chunks c ON c.id = l.chunk_id
               WHERE l.annotator <> ? AND l.answer IS NOT NULL
               GROUP BY c.golden_id, l.annotator ORDER BY l.annotator""", [annotator]):
        others.setdefault(golden_id, []).append(f"{person} {decided}")
    golden = np.unique(read[:, 0], return_inverse=True)[1].ravel()
    first = np.flatnonzero(np.diff(golden, prepend=-1))
    sizes = np.diff(np.append(first, len(golden)))
    h, note, j = read[:, 2], read[:, 3], read[:, 4]

    def per_golden(values: np.ndarray) -> np.ndarray:
        return np.bincount(golden, weights=values, minlength=len(ids))

    def cp(v: np.ndarray) -> np.ndarray:
        relevant = (v > 0).astype(float)
        cum = np.cumsum(relevant)
        hits = cum - np.repeat(np.concatenate([[0.0], cum[first[1:] - 1]]), sizes)
        value = per_golden(hits / read[:, 1] * relevant) / (per_golden(relevant) + 1e-10)
        return np.where(per_golden((v < 0).astype(float)) > 0, np.nan, value)

    decided = per_golden((h >= 0).astype(float))
    cp_h, cp_j = cp(h), cp(j)
    disagree = per_golden(((h >= 0) & (j >= 0) & (h != j)).astype(float))
    noted = per_golden(note.astype(float))
    return [(str(i + 1), golden_id, f"{int(decided[i])}/{sizes[i]}",
             "-" if np.isnan(cp_h[i]) else f"{cp_h[i]:.2f}",
             "-" if np.isnan(cp_j[i]) else f"{cp_j[i]:.2f}", str(int(disagree[i])),
             "yes" if noted[i] else "", ", ".join(others.get(golden_id, [])))
            for i, golden_id in enumerate(ids)]


class Bare(App[None]):
    """A DataTable, nothing else."""

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")


async def main(path: str, judge: str, annotator: str) -> float:
    """CPU seconds from the read to every row in the table and the table idle."""
    app = Bare()
    async with app.run_test(size=(140, 45)) as pilot:
        start = time.process_time()
        table = app.query_one(DataTable)
        table.add_columns("#", "golden", "decided", "CP you", "CP judge", "disagree", "note",
                          "others")
        table.add_rows(rows(path, judge, annotator))
        await pilot.pause()
        return time.process_time() - start


if __name__ == "__main__":
    print(f"{asyncio.run(main(*sys.argv[1:4])):.3f}")
