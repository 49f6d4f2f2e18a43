"""Errors that reach a person: each one reads as a sentence and says what to do next."""

from __future__ import annotations


class AnnotatorError(Exception):
    """Base for every error the CLI shows as a sentence instead of a traceback."""


MESSAGE_CHARS = 600
"""The longest message an InputError gives (a quoted value is cut in its middle)."""


class InputError(AnnotatorError):
    """A file that cannot be imported, naming the file, the line and the field that are wrong."""

    def __init__(
        self, path: str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        if len(message) > MESSAGE_CHARS:
            # A value quoted from the file may be 10 KB of brackets: the sentence stays short,
            # keeping its start (what is wrong) and its end (what to do).
            message = f"{message[:MESSAGE_CHARS * 2 // 3]} [...] {message[-MESSAGE_CHARS // 3:]}"
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        where = path
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class SessionError(AnnotatorError):
    """A session file that cannot be used as asked (wrong judge, unknown golden, ...)."""


class NotSaved(SessionError):
    """A write the session file could not take (busy, full disk, read-only, I/O error): it was
    rolled back, so nothing changed, and the same write may be tried again."""

    def __init__(self, message: str, *, busy: bool = False) -> None:
        super().__init__(message)
        self.busy = busy
        """Only busy: another command holds the file, and waiting is all it takes."""


class ReadStopped(SessionError):
    """A read given up on purpose (``Session.stop_when`` said stop): a worker's count cut short
    because its screen is closing."""


def install_hint(extra: str) -> str:
    """The command that installs an optional extra, as this copy of the tool was installed: from
    a checkout (an editable install) pip cannot find 'cp-annotator' on an index, so the hint
    names the checkout instead."""
    from pathlib import Path

    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file():
        return f"pip install -e '{checkout}[{extra}]'"
    return f"pip install 'cp-annotator[{extra}]'"


class NotHeld(SessionError):
    """Under a quota of people per golden: a decision on a golden this person no longer holds
    (their claim lapsed and others filled it). Nothing was written."""
