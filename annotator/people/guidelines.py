"""The team's guidelines: read from a Markdown file, stored whole as numbered versions, shown on
the annotation screen, and recorded on every label made under them.

A label records the version in force when it was decided (the store reads it inside the
decision's own write), so the report can give agreement per version and an export says which
instructions each label was made under.
"""

from __future__ import annotations

from pathlib import Path

from annotator.errors import InputError
from annotator.models import Guideline
from annotator.store.session import Session

MAX_BYTES = 100_000
"""The largest guidelines file taken: a team's instructions (some 25 pages), not a corpus; the
screen renders it as Markdown in under two seconds (tried: 105 KB in 1.7 s, 527 KB in 8.4 s)."""


def read_file(path: str | Path) -> str:
    """A guidelines file's text, or InputError with a sentence saying what is wrong with it."""
    path = Path(path)
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(name, "there is no such file; give the guidelines' Markdown file."
                         ) from None
    except OSError as error:
        raise InputError(name, f"cannot be read ({error.strerror}).") from None
    if len(raw) > MAX_BYTES:
        raise InputError(name, f"it is {len(raw):,} bytes; guidelines are at most "
                         f"{MAX_BYTES:,} bytes (some 25 pages of instructions). Is it the right "
                         "file?")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(name, f"not UTF-8 text (byte {error.start}); save the guidelines as "
                         "UTF-8 Markdown.", line=raw[:error.start].count(b"\n") + 1) from None
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise InputError(name, "it is empty; guidelines need some text.")
    return text


def due(session: Session, annotator: str) -> Guideline | None:
    """The guidelines this person should be shown before their next golden: the version in
    force when they have not yet been shown it; else None."""
    version = session.guideline_in_force()
    if version is None or session.guidelines_read(annotator) >= version:
        return None
    return session.guideline(version)
