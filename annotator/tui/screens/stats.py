"""The statistics screen: the agreement report for this person and judge, from the same code.

It is the report ``annotator report`` prints, without the bootstrap (so it opens at once);
the command adds the 95% intervals.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotator.errors import SessionError
from annotator.review import Review


class StatsScreen(Screen[None]):
    """Agreement, which way the judge errs, CP under both label sets, systems, anchoring."""

    BINDINGS = [Binding("escape,s,q", "app.pop_screen", "Back")]  # noqa: RUF012

    def __init__(self, review: Review) -> None:
        super().__init__()
        self.review = review

    def compose(self) -> ComposeResult:
        from annotator.report.build import build_report
        from annotator.report.render import rich_report

        review = self.review
        body: RenderableType
        try:
            report = build_report(review.session, judge=review.judge,
                                  annotators=[review.annotator], pass_mark=review.pass_mark,
                                  resamples=0)
            body = rich_report(report)
        except SessionError as error:
            body = Text(str(error))
        with VerticalScroll(id="stats"):
            yield Static(body)
        yield Footer()
