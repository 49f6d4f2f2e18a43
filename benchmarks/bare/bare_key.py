"""The floor for a key on the annotation screen: a minimal Textual app showing what the screen
shows after each decision, in plain Statics. A header with the count; a status line; one Static
a chunk (rank with P@k under both label sets, the text, the judge's verdict and reason, the
decision), the selected one tinted; a summary (CP both ways, their difference, agreement and
kappa on the golden and overall). a or f commits one label row (one INSERT and its COMMIT, in a
scratch file of its own), then redraws what the decision changed: the header, the status, the
decided chunk, the cursor moved to the next chunk (scrolled into view), the summary; past a
golden's last chunk, the next golden's chunks.
Run: python benchmarks/bare/bare_key.py SESSION.db JUDGE
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

CHUNKS = 10


def precision_at_k(verdicts: Sequence[int | None]) -> list[float | None]:
    """P@k over the decided prefix (None past the first undecided rank)."""
    out: list[float | None] = []
    useful = 0
    for k, verdict in enumerate(verdicts, 1):
        if verdict is None:
            return out + [None] * (len(verdicts) - len(out))
        useful += verdict
        out.append(useful / k)
    return out


def cp(verdicts: Sequence[int | None]) -> float | None:
    """RAGAS context precision, None until every rank is decided or when none is useful."""
    if None in verdicts or not any(verdicts):
        return None
    p = precision_at_k(verdicts)
    return sum(pk for pk, v in zip(p, verdicts, strict=True) if v and pk is not None) / sum(
        v for v in verdicts if v)


def kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa from counts."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    p_judge, p_human = (tp + fp) / n, (tp + fn) / n
    expected = p_judge * p_human + (1 - p_judge) * (1 - p_human)
    return None if expected == 1 else ((tp + tn) / n - expected) / (1 - expected)


class Bare(App[None]):
    """Header, status, the chunks (one Static each, scrolled) beside the summary; a and f
    decide."""

    CSS = """
    .chunk { margin-bottom: 1; }
    .chunk.-selected { background: $accent 15%; }
    #summary { width: 40; }
    """
    BINDINGS = [("q", "quit", "Quit"), ("a", "decide(False)", "Accept"),  # noqa: RUF012
                ("f", "decide(True)", "Flip")]

    def __init__(self, path: str, judge: str, scratch: Path) -> None:
        super().__init__()
        self.conn, self.judge = sqlite3.connect(path), judge
        self.ids = [row[0] for row in self.conn.execute("SELECT id FROM goldens ORDER BY position")]
        self.out = sqlite3.connect(scratch, isolation_level=None)
        self.out.execute("PRAGMA journal_mode=WAL")
        self.out.execute("CREATE TABLE labels (chunk_id INTEGER PRIMARY KEY, verdict INTEGER)")
        self.at, self.cursor, self.decided = 0, 0, 0
        self.overall = [0, 0, 0, 0]  # tp, fp, fn, tn
        self.chunks: list[tuple[int, int, str, int, str]] = []
        self.human: list[int | None] = []

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="status")
        with Horizontal():
            with VerticalScroll():
                for _ in range(CHUNKS):
                    yield Static(classes="chunk")
            yield Static(id="summary")

    def on_mount(self) -> None:
        self.load()

    def load(self) -> None:
        """The current golden's chunks, each in its Static."""
        self.chunks = self.conn.execute(
            """SELECT c.id, c.rank, c.text, v.verdict, v.reason FROM chunks c LEFT JOIN verdicts v
               ON v.chunk_id = c.id AND v.judge = ? WHERE c.golden_id = ? ORDER BY c.rank""",
            [self.judge, self.ids[self.at]]).fetchall()
        self.human = [None] * len(self.chunks)
        self.cursor = 0
        lines = list(self.query(".chunk").results(Static))
        p_judge, p_human = self.precisions()
        for i, line in enumerate(lines):
            line.update(self.block(i, p_judge[i], p_human[i]) if i < len(self.chunks) else "")
            line.set_class(i == 0, "-selected")
        self.query_one(VerticalScroll).scroll_home(animate=False)
        self.texts()

    def precisions(self) -> tuple[list[float | None], list[float | None]]:
        """P@k under the judge's verdicts and under the decisions so far."""
        return precision_at_k([c[3] for c in self.chunks]), precision_at_k(self.human)

    def block(self, i: int, p_judge: float | None, p_human: float | None) -> Text:
        """A chunk: rank and P@k both ways, the text, the judge's verdict and reason, the
        decision."""
        _, rank, text, verdict, reason = self.chunks[i]
        decision = self.human[i]
        return Text(f"#{rank}   P@{rank} judge {fmt(p_judge)}   you {fmt(p_human)}\n{text}\n"
                    f"judge  {'USEFUL' if verdict else 'NOISE'}  {reason or ''}\n"
                    f"you    {'pending' if decision is None else decision}")

    def texts(self) -> None:
        """The header's count and the summary."""
        self.query_one("#header", Static).update(
            f" cp-annotator   golden {self.at + 1} of {len(self.ids)}  chunks {self.decided}/"
            f"{len(self.ids) * CHUNKS}  judge {self.judge}")
        judged = [c[3] for c in self.chunks]
        here = [0, 0, 0, 0]
        for human, judge in zip(self.human, judged, strict=True):
            if human is not None:
                here[{(1, 1): 0, (0, 1): 1, (1, 0): 2, (0, 0): 3}[human, judge]] += 1
        cp_judge, cp_human = cp(judged), cp(self.human)
        diff = None if cp_judge is None or cp_human is None else cp_judge - cp_human
        self.query_one("#summary", Static).update(
            f"Context precision\njudge  {fmt(cp_judge)}\nyou    {fmt(cp_human)}\n"
            f"diff   {fmt(diff)}\n\nAgreement\ngolden   {here[0] + here[3]}/{sum(here)}\n"
            f"         kappa {fmt(kappa(*here))}\noverall  "
            f"{self.overall[0] + self.overall[3]}/{sum(self.overall)}\n"
            f"         kappa {fmt(kappa(*self.overall))}")

    def action_decide(self, flip: bool) -> None:
        """Commit one label row, then redraw what it changed."""
        chunk_id, _, _, verdict, _ = self.chunks[self.cursor]
        decision = 1 - verdict if flip else verdict
        self.out.execute("BEGIN")
        self.out.execute("INSERT OR REPLACE INTO labels VALUES (?, ?)", [chunk_id, decision])
        self.out.execute("COMMIT")
        self.decided += 1
        self.overall[{(1, 1): 0, (0, 1): 1, (1, 0): 2, (0, 0): 3}[decision, verdict]] += 1
        self.human[self.cursor] = decision
        self.query_one("#status", Static).update(
            f"{'flipped' if flip else 'accepted'} rank {self.cursor + 1}")
        lines = list(self.query(".chunk").results(Static))
        p_judge, p_human = self.precisions()
        lines[self.cursor].update(self.block(self.cursor, p_judge[self.cursor],
                                             p_human[self.cursor]))
        lines[self.cursor].set_class(False, "-selected")
        if self.cursor + 1 < len(self.chunks):
            self.cursor += 1
            lines[self.cursor].set_class(True, "-selected")
            self.query_one(VerticalScroll).scroll_to_widget(lines[self.cursor], animate=False,
                                                            top=False)
            self.texts()
        else:
            self.at = (self.at + 1) % len(self.ids)
            self.load()


def fmt(x: float | None) -> str:
    """A number to 4 places, or a dash."""
    return "-" if x is None else f"{x:.4f}"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        Bare(sys.argv[1], sys.argv[2], Path(folder) / "labels.db").run()
