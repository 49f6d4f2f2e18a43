"""Write or edit a comment on a chunk."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class CommentModal(ModalScreen[str | None]):
    """Dismisses with the comment ("" removes it), or None when cancelled with escape."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]  # noqa: RUF012

    def __init__(self, rank: int, current: str | None, prompt: str | None = None) -> None:
        super().__init__()
        self.rank = rank
        self.current = current or ""
        self.prompt = prompt or (f"Comment on rank {rank} (enter saves, escape cancels, empty "
                                 "removes):")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.prompt, markup=False)
            yield Input(value=self.current, id="comment-input")

    @on(Input.Submitted)
    def save(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())
