"""One ranked chunk on the annotation screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import Static

from annotator.models import Scale
from annotator.review import ChunkView
from annotator.tui.render import chunk_card


class ChunkCard(Static):
    """A chunk with its precision@k bars, the judge's verdict and reason, and the decision."""

    @dataclass
    class Selected(Message):
        """The person clicked this chunk."""

        rank: int

    def __init__(self, view: ChunkView, p_judge: float | None, p_human: float | None, *,
                 ranked: bool = True, scale: Scale | None = None) -> None:
        super().__init__(classes="chunk-card")
        self.unfolded = False
        self.ranked, self.scale = ranked, scale
        self.show(view, p_judge, p_human)

    def show(self, view: ChunkView, p_judge: float | None, p_human: float | None) -> None:
        """Render the chunk's current state."""
        self.view = view
        self.update(chunk_card(view, p_judge, p_human, unfolded=self.unfolded,
                               ranked=self.ranked, scale=self.scale))
        self.set_class(view.hidden, "-blind")
        self.set_class(view.decision is not None, "-decided")
        self.set_class(view.state == "unsure", "-unsure")
        judge = None if view.verdict is None or view.hidden else view.verdict.verdict
        self.set_class(view.decision is not None and judge is not None
                       and view.decision != judge, "-disagree")

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Selected(self.view.chunk.rank))
