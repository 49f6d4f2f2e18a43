"""The statistics screen: the agreement report for this person and judge, from the same code.

It is the report ``annotator report`` prints, without the bootstrap; the command adds the 95%
intervals. The report is built in a worker thread (Review.report reads through its own
connection), so on a large session the screen says it is computing and keys keep working.
Below 100 columns each table keeps its rows with a value and says in one line how many are
undefined and why (report.render.fold_undefined).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from annotator.errors import SessionError
from annotator.people.review import Review
from annotator.report.model import Report
from annotator.report.render import rich_report
from annotator.tui.render import NARROW_BELOW

COMPUTING = "Computing the statistics for this session…  (escape goes back; keys keep working)"


class StatsScreen(Screen[None]):
    """Agreement, which way the judge errs, CP under both label sets, systems, anchoring."""

    BINDINGS = [Binding("escape,s,q", "app.pop_screen", "Back")]  # noqa: RUF012

    def __init__(self, review: Review) -> None:
        super().__init__()
        self.review = review
        self.ready = False
        """True once the report is on the screen."""
        self._report: Report | Text | None = None
        self._narrow = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="stats"):
            yield Static(Text(COMPUTING, style="italic"), id="stats-body")
        yield Footer()

    def on_mount(self) -> None:
        self._build()

    @work(thread=True, exclusive=True, group="stats")
    def _build(self) -> None:
        outcome: Report | Text
        try:
            outcome = self.review.report()
        except SessionError as error:
            outcome = Text(str(error))
        if not get_current_worker().is_cancelled:  # the screen may be gone by now
            self.app.call_from_thread(self._show, outcome)

    def _show(self, outcome: Report | Text) -> None:
        if self.is_attached:
            self._report = outcome
            self._narrow = self.size.width < NARROW_BELOW
            self.query_one("#stats-body", Static).update(
                outcome if isinstance(outcome, Text) else rich_report(outcome,
                                                                      narrow=self._narrow))
            self.ready = True

    def on_resize(self) -> None:
        # Crossing NARROW_BELOW draws the report again, folded or in full.
        if self._report is not None and (self.size.width < NARROW_BELOW) != self._narrow:
            self._show(self._report)
