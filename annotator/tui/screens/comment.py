"""The note box: a comment, an unsure answer's note, what is wrong with a judge's reason."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from annotator.people.review import Outcome
from annotator.text import visible


class CommentModal(ModalScreen[Outcome | None]):
    """Saves what is typed through ``save`` and closes only once it is saved.

    A refusal (an unsure answer with no note, a busy session file) is said inside the box and
    the box stays open, so what the person types next goes into it and never reaches the
    screen behind as commands. Dismisses with the saved outcome, or None on escape.
    """

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]  # noqa: RUF012

    def __init__(self, rank: int, current: str | None, save: Callable[[str], Outcome],
                 prompt: str | None = None) -> None:
        super().__init__()
        self.rank = rank
        self.current = current or ""
        self._save = save
        self.prompt = prompt or (f"Comment on rank {rank} (enter saves, escape cancels, empty "
                                 "removes):")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.prompt, markup=False)
            yield Input(value=self.current, id="comment-input")
            yield Static(id="comment-refusal", classes="-error")

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        """Save the note; on a refusal stay open and say why."""
        event.stop()
        outcome = self._save(event.value.strip())
        if outcome.ok:
            self.dismiss(outcome)
            return
        refusal = self.query_one("#comment-refusal", Static)
        refusal.update(Text(visible(outcome.message) + " (escape cancels)"))
        refusal.display = True
