"""The team's guidelines over the annotation screen: on the i key, and before a person's first
golden under a version they have not been shown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from annotator.models import Guideline
from annotator.text import visible


class GuidelinesScreen(ModalScreen[None]):
    """One version of the guidelines, rendered as Markdown (the file's own text, with control
    characters made visible: never obeyed by the terminal)."""

    BINDINGS = [Binding("escape,enter,i,q", "dismiss", "Close")]  # noqa: RUF012

    def __init__(self, guideline: Guideline, *, new: bool) -> None:
        super().__init__()
        self.guideline = guideline
        self.new = new
        """Shown because the person has not seen this version yet (not on their asking)."""

    def compose(self) -> ComposeResult:
        g = self.guideline
        when = g.set_at[:16].replace("T", " ")
        title = (f"New guidelines: version {g.version}, set {when}"
                 f"{f' by {g.set_by}' if g.set_by else ''}. Your labels from now on record "
                 "this version." if self.new else
                 f"Guidelines, version {g.version} (set {when}"
                 f"{f' by {g.set_by}' if g.set_by else ''})")
        with VerticalScroll(id="dialog"):
            yield Static(Text(title, style="bold"), id="guidelines-title")
            yield Markdown(visible(g.text), id="guidelines-text")
            yield Static(Text("enter or escape closes; i shows them again", style="dim"))
