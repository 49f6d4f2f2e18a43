"""Every golden as a row, with filters; enter jumps to one.

The rows are read in a worker thread a page of goldens at a time (Review.queue reads through
its own connection) and shown as each page arrives, so on a large session the first rows come
at once and the screen answers keys meanwhile.
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

from annotator.people.review import QueueRow, Review
from annotator.stats.stat import number
from annotator.text import visible
from annotator.tui import render
from annotator.tui.widgets.growing_table import GrowingTable

FILTERS: dict[str, Callable[[QueueRow], bool]] = {
    "all": lambda c: True,
    "pending": lambda c: c.decided < c.chunks,
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
        self.rows: list[QueueRow] = []
        """The rows read so far, every filter's."""
        self.current = "all"
        self.shown = 0
        """Rows of the current filter in the table."""
        self.scanned = 0
        """Rows read so far that the current filter has looked at."""
        self.placed = False
        """Whether the cursor was put on the golden being annotated."""
        self.ready = False
        """True once every page is read."""

    def compose(self) -> ComposeResult:
        yield Static(id="queue-title")
        yield GrowingTable(id="queue", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "golden", "state", "decided", "CP you", "CP judge", "diff",
                          "disagree", "note", "others")
        self._title()
        table.focus()
        self._read()

    @work(thread=True, exclusive=True, group="queue-read")
    def _read(self) -> None:
        worker = get_current_worker()
        for page in self.review.queue():
            if worker.is_cancelled:  # the screen is gone
                return
            self.app.call_from_thread(self._arrived, page)
        self.app.call_from_thread(self._finished)

    def _arrived(self, page: list[QueueRow]) -> None:
        if not self.is_attached:
            return
        self.rows.extend(page)
        self._pump()

    def _finished(self) -> None:
        if self.is_attached:
            self.ready = True
            self._title()

    BATCH = 1000
    """Rows looked at per step when filling the table, yielding to keys in between."""

    def action_filter(self, name: str) -> None:
        """Show the goldens that pass a filter (the rows read so far, then each page read)."""
        self.current = name
        self.query_one(DataTable).clear()
        self.shown = self.scanned = 0
        self.placed = False
        self._pump()
        self.query_one(DataTable).focus()

    @work(exclusive=True, group="queue-fill")
    async def _pump(self) -> None:
        """Add the rows not yet looked at that pass the filter, a batch at a time."""
        while self.scanned < len(self.rows):
            batch = self.rows[self.scanned:self.scanned + self.BATCH]
            self.scanned += len(batch)
            self._add([row for row in batch if FILTERS[self.current](row)])
            self._title()
            await asyncio.sleep(0)
        self._to_current()

    def _to_current(self) -> None:
        """Put the cursor on the golden being annotated, once, when it is in the table."""
        table = self.query_one(DataTable)
        if self.placed or self.review.golden.id not in table.rows:
            return
        table.move_cursor(row=table.get_row_index(self.review.golden.id))
        self.placed = True

    def _add(self, rows: list[QueueRow]) -> None:
        table = self.query_one(DataTable)
        for c in rows:
            table.add_row(*self._row(c), key=c.golden_id)
        self.shown += len(rows)

    @staticmethod
    def _row(c: QueueRow) -> list[object]:
        diff = ("-" if c.cp_human is None or c.cp_judge is None
                else number(c.cp_judge - c.cp_human, sign=True))
        # Text(...) cells: a golden id like "list[int]" must not be read as markup.
        return [str(c.number), Text(visible(c.golden_id)), c.state, f"{c.decided}/{c.chunks}",
                render.fmt(c.cp_human), render.fmt(c.cp_judge), diff, str(c.disagreements),
                "yes" if c.has_note else "", Text(visible(c.others_text))]

    def _title(self) -> None:
        total = len(self.review.golden_ids)
        reading = "" if self.ready else f"  (reading {len(self.rows):,} of {total:,}…)"
        self.query_one("#queue-title", Static).update(Text.assemble(
            ("Queue", "bold underline"), f"  {self.current}: {self.shown:,} of {total:,} "
            f"goldens{reading}   (1 all, 2 pending, 3 disagreements, 4 commented; enter jumps)"))

    @on(DataTable.RowSelected)
    def jump(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))
