"""The floor for the annotation app's first screen: a minimal Textual app showing the same
header (golden 1 of N, the annotator, the judge) and the first golden with its chunks and the
judge's verdicts, read with plain sqlite3.
Run: python benchmarks/bare/bare_first_screen.py SESSION.db JUDGE
"""

from __future__ import annotations

import sqlite3
import sys

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class Bare(App[None]):
    """Header and golden, nothing else."""

    BINDINGS = [("q", "quit", "Quit")]  # noqa: RUF012

    def __init__(self, path: str, judge: str) -> None:
        super().__init__()
        conn = sqlite3.connect(path)
        ids = [row[0] for row in conn.execute("SELECT id FROM goldens ORDER BY position")]
        question, reference = conn.execute(
            "SELECT user_input, reference FROM goldens WHERE id = ?", [ids[0]]).fetchone()
        chunks = conn.execute(
            """SELECT c.rank, c.text, v.verdict FROM chunks c LEFT JOIN verdicts v
               ON v.chunk_id = c.id AND v.judge = ? WHERE c.golden_id = ? ORDER BY c.rank""",
            [judge, ids[0]]).fetchall()
        self.header = Text(f" cp-annotator   golden 1 of {len(ids)}  annotator bare  judge "
                           f"{judge}")
        self.body = Text(f"{question}\n{reference}\n\n" + "\n".join(
            f"#{rank} [{verdict}] {text}" for rank, text, verdict in chunks))

    def compose(self) -> ComposeResult:
        yield Static(self.header)
        yield Static(self.body)
        yield Footer()


if __name__ == "__main__":
    Bare(sys.argv[1], sys.argv[2]).run()
