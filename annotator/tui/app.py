"""The Textual app: wiring only. The review (and its session) are built by the CLI."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from annotator.adjudication import Adjudication
from annotator.review import Review
from annotator.tui.keys import KEYS
from annotator.tui.screens.adjudicate import AdjudicateScreen
from annotator.tui.screens.annotate import AnnotateScreen


class AnnotatorApp(App[None]):
    """Accept or flip every judge verdict from the keyboard."""

    CSS_PATH = "app.tcss"
    TITLE = "cp-annotator"
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, review: Review, session_name: str) -> None:
        super().__init__()
        self.review = review
        self.session_name = session_name

    def get_default_screen(self) -> Screen[None]:
        return AnnotateScreen(self.review, self.session_name)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every annotation action in the command palette, beside Textual's own."""
        yield from super().get_system_commands(screen)
        if isinstance(screen, AnnotateScreen):
            for key in KEYS:
                if key.action == "app.quit":
                    continue
                yield SystemCommand(f"{key.label} ({key.shown})", key.help,
                                    lambda action=key.action: self._run_on(screen, action))

    async def _run_on(self, screen: Screen[Any], action: str) -> None:
        await screen.run_action(action)


class AdjudicatorApp(App[None]):
    """Settle, from the keyboard, every chunk people labelled differently."""

    CSS_PATH = "app.tcss"
    TITLE = "cp-annotator: adjudication"

    def __init__(self, adjudication: Adjudication, session_name: str) -> None:
        super().__init__()
        self.adjudication = adjudication
        self.session_name = session_name

    def get_default_screen(self) -> Screen[None]:
        return AdjudicateScreen(self.adjudication, self.session_name)
