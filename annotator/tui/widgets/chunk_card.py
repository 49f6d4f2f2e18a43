"""One ranked chunk on the annotation screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import Static

from annotator.models import Scale
from annotator.people.review import ChunkView
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
        self._shown: tuple[ChunkView, float | None, float | None, bool] | None = None
        self.show(view, p_judge, p_human)

    def show(self, view: ChunkView, p_judge: float | None, p_human: float | None) -> None:
        """Render the chunk's current state (nothing to do when it has not changed)."""
        shown = (view, p_judge, p_human, self.unfolded)
        if shown == self._shown:
            # A decision changes one card or two; the others' text and size stay, and updating
            # them would lay out and draw every card again at each key.
            return
        self._shown = shown
        self.view = view
        self.update(chunk_card(view, p_judge, p_human, unfolded=self.unfolded,
                               ranked=self.ranked, scale=self.scale))
        judge = None if view.verdict is None or view.hidden else view.verdict.verdict
        # One restyle for all four (each set_class that changes a class restyles the card),
        # and no search for transitions to animate: app.tcss has none.
        self.update_classes(animate=False, classes={
            "-blind": view.hidden,
            "-decided": view.decision is not None,
            "-unsure": view.state == "unsure",
            "-disagree": view.decision is not None and judge is not None and view.decision != judge,
        })

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Selected(self.view.chunk.rank))
