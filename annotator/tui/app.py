"""The Textual apps: wiring only. The review (or adjudication) and its session come from the CLI."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from annotator.people.adjudication import Adjudication
from annotator.people.review import Review
from annotator.tui.keys import ADJUDICATE_KEYS, KEYS, Key
from annotator.tui.screens.adjudicate import AdjudicateScreen
from annotator.tui.screens.annotate import AnnotateScreen


class _KeyedApp(App[None]):
    """An app whose main screen's keys are also commands in the palette (ctrl+p)."""

    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = True
    MAIN_SCREEN: type[Screen[None]]
    MAIN_KEYS: tuple[Key, ...]

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every action of the main screen in the command palette, beside Textual's own."""
        yield from super().get_system_commands(screen)
        if isinstance(screen, self.MAIN_SCREEN):
            for key in self.MAIN_KEYS:
                if key.action == "app.quit":
                    continue
                for pressed, action in key.actions():
                    shown = key.shown if pressed == key.keys else pressed
                    yield SystemCommand(f"{key.label} ({shown})", key.help,
                                        lambda action=action: self._run_on(screen, action))

    async def _run_on(self, screen: Screen[Any], action: str) -> None:
        await screen.run_action(action)


class AnnotatorApp(_KeyedApp):
    """Accept or flip every judge verdict from the keyboard."""

    TITLE = "cp-annotator"
    MAIN_SCREEN = AnnotateScreen
    MAIN_KEYS = KEYS

    def __init__(self, review: Review, session_name: str) -> None:
        super().__init__()
        self.review = review
        self.session_name = session_name

    def get_default_screen(self) -> Screen[None]:
        return AnnotateScreen(self.review, self.session_name)


class AdjudicatorApp(_KeyedApp):
    """Settle, from the keyboard, every chunk people labelled differently."""

    TITLE = "cp-annotator: adjudication"
    MAIN_SCREEN = AdjudicateScreen
    MAIN_KEYS = ADJUDICATE_KEYS

    def __init__(self, adjudication: Adjudication, session_name: str) -> None:
        super().__init__()
        self.adjudication = adjudication
        self.session_name = session_name

    def get_default_screen(self) -> Screen[None]:
        return AdjudicateScreen(self.adjudication, self.session_name)
