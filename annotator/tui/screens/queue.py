"""Every golden as a row, with filters; enter jumps to one.

The rows are computed in a worker thread (Review.queue reads through its own connection) and
shown in batches, so on a large session the screen answers keys at once: a filter chosen
while it computes is the one shown when the rows arrive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import get_current_worker

from annotator.review import Review
from annotator.stats.comparison import GoldenComparison
from annotator.stats.stat import number
from annotator.text import visible
from annotator.tui import render

FILTERS: dict[str, Callable[[GoldenComparison], bool]] = {
    "all": lambda c: True,
    "pending": lambda c: not c.human_complete,
    "disagreements": lambda c: c.disagreements > 0,
    "commented": lambda c: c.has_note,
}


class QueueScreen(Screen[str | None]):
    """Dismisses with the id of the golden to jump to, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "filter('all')", "All"),
        Binding("2", "filter('pending')", "Pending"),
        Binding("3", "filter('disagreements')", "Disagreements"),
        Binding("4", "filter('commented')", "Commented"),
        Binding("escape,g,q", "dismiss(None)", "Back"),
    ]

    def __init__(self, review: Review) -> None:
        super().__init__()
        self.review = review
        self.comparisons: list[GoldenComparison] = []
        self.positions: dict[str, int] = {}
        self.current = "all"
        self.ready = False
        """True once the rows are computed (they may still be arriving in batches)."""

    def compose(self) -> ComposeResult:
        yield Static(id="queue-title")
        yield DataTable(id="queue", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "golden", "state", "decided", "CP you", "CP judge", "diff",
                          "disagree", "note")
        self.query_one("#queue-title", Static).update(Text.assemble(
            ("Queue", "bold underline"), "  computing every golden's state…  (escape goes back)"))
        table.focus()
        self._compute()

    @work(thread=True, exclusive=True, group="queue-compute")
    def _compute(self) -> None:
        comparisons = self.review.queue()
        if not get_current_worker().is_cancelled:  # the screen may be gone by now
            self.app.call_from_thread(self._computed, comparisons)

    def _computed(self, comparisons: list[GoldenComparison]) -> None:
        if not self.is_attached:
            return
        self.comparisons = comparisons
        self.positions = {c.golden_id: i for i, c in enumerate(comparisons, 1)}
        self.ready = True
        self.action_filter(self.current)

    FIRST_ROWS = 300
    """Rows shown at once; the rest are added in batches so the screen answers immediately."""
    BATCH = 1000

    def action_filter(self, name: str) -> None:
        """Show the goldens that pass a filter (remembered until the rows are computed)."""
        self.current = name
        if not self.ready:
            self.query_one("#queue-title", Static).update(Text.assemble(
                ("Queue", "bold underline"), f"  computing every golden's state…  (then: {name})"))
            return
        rows = [c for c in self.comparisons if FILTERS[name](c)]
        table = self.query_one(DataTable)
        table.clear()
        self._add(rows[: self.FIRST_ROWS])
        self._fill(name, rows)
        table.focus()

    @work(exclusive=True, group="queue-fill")
    async def _fill(self, name: str, rows: list[GoldenComparison]) -> None:
        """Add the rows past the first ones in batches, yielding to keys in between."""
        table = self.query_one(DataTable)
        for start in range(self.FIRST_ROWS, len(rows), self.BATCH):
            self._title(name, start, len(rows))
            await asyncio.sleep(0)
            self._add(rows[start:start + self.BATCH])
        self._title(name, len(rows), len(rows))
        current = next((i for i, c in enumerate(rows) if c.golden_id == self.review.golden.id), 0)
        if rows:
            table.move_cursor(row=current)

    def _add(self, rows: list[GoldenComparison]) -> None:
        table = self.query_one(DataTable)
        for c in rows:
            table.add_row(*self._row(c), key=c.golden_id)

    def _row(self, c: GoldenComparison) -> list[object]:
        cp_h, cp_j = c.cp_human(), c.cp_judge()
        diff = "-" if cp_h is None or cp_j is None else number(cp_j - cp_h, sign=True)
        # Text(...) cells: a golden id like "list[int]" must not be read as markup.
        return [str(self.positions[c.golden_id]), Text(visible(c.golden_id)),
                render.queue_state(c),
                f"{c.decided}/{len(c.human)}", render.fmt(cp_h), render.fmt(cp_j), diff,
                str(c.disagreements), "yes" if c.has_note else ""]

    def _title(self, name: str, loaded: int, shown: int) -> None:
        loading = f"  (loading {loaded:,} of {shown:,})" if loaded < shown else ""
        self.query_one("#queue-title", Static).update(Text.assemble(
            ("Queue", "bold underline"), f"  {name}: {shown:,} of {len(self.comparisons):,} "
            f"goldens{loading}   (1 all, 2 pending, 3 disagreements, 4 commented; enter jumps)"))

    @on(DataTable.RowSelected)
    def jump(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))
