"""Agreement and context precision for this person and judge, from the report's functions."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotator.agreement import ChunkAgreement, Confusion
from annotator.compare import BlindSummary, CpSummary, compare_session
from annotator.review import Review
from annotator.tui import render


class StatsScreen(Screen[None]):
    """Confusion, agreement, which way the judge errs, CP under both label sets, anchoring."""

    BINDINGS = [Binding("escape,s,q", "app.pop_screen", "Back")]  # noqa: RUF012

    def __init__(self, review: Review) -> None:
        super().__init__()
        self.review = review

    def compose(self) -> ComposeResult:
        review = self.review
        comparisons = compare_session(review.session, review.judge, review.annotator)
        confusion = sum((c.confusion() for c in comparisons), Confusion())
        title = Text.assemble(("Statistics", "bold underline"), f"  {review.annotator} versus "
                              f"judge {review.judge or '(none)'}")
        parts: list[object] = [
            title, "",
            render.agreement_table("Chunks", ChunkAgreement.of(confusion)), "",
            render.cp_table(CpSummary.of(comparisons, review.pass_mark), review.pass_mark),
        ]
        blind = BlindSummary.of(comparisons)
        if blind.blind_chunks:
            parts += ["", render.blind_table(blind)]
        with VerticalScroll(id="stats"):
            yield Static(Group(*parts))  # type: ignore[arg-type]
        yield Footer()
