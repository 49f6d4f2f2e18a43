"""The key table, from annotator.tui.keys."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from annotator.tui.keys import KEYS, Key

INTRO = (
    "Each chunk shows the judge's verdict and reason. Accept it when it is right, flip it when "
    "it is wrong. A verdict is 'useful' when the chunk helped arrive at the reference answer, "
    "'noise' otherwise. Every decision is written to the session file before the screen shows it."
)


class HelpScreen(ModalScreen[None]):
    """What each key does."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]  # noqa: RUF012

    def __init__(self, keys: tuple[Key, ...] = KEYS, intro: str = INTRO) -> None:
        super().__init__()
        self.keys = keys
        self.intro = intro

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, box=None, padding=(0, 2), title="Keys",
                      title_justify="left")
        table.add_column("key", style="bold")
        table.add_column("what it does")
        for key in self.keys:
            table.add_row(key.shown, key.help)
        table.add_row("ctrl+p", "Command palette: every action by name.")
        with VerticalScroll(id="dialog"):
            yield Static(Text(self.intro), id="help-intro")
            yield Static(table)
            yield Static(Text("escape closes this help", style="dim"))
