"""Where a session lives: a SQLite file's path, or a PostgreSQL database's URL.

Every command takes either. A URL's login is never shown: ``shown`` is what a sentence, a log
line or the screen may say of a place.
"""

from __future__ import annotations

from pathlib import Path

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(place: str | Path) -> bool:
    """Whether a session's place is a PostgreSQL URL (anything else is a file's path)."""
    return isinstance(place, str) and place.lower().startswith(URL_SCHEMES)


def shown(place: str | Path) -> str:
    """A place as it may be printed: a URL's login (user and password) hidden as ***, as
    every line this tool prints hides any URL's (annotator.redact)."""
    if not is_url(place):
        return str(place)
    from annotator.redact import scrub  # only for a URL: start-up does without it

    return scrub(str(place))


def place_name(place: str | Path) -> str:
    """A short name for a place: a file's name, or a database's (a URL's path)."""
    if is_url(place):
        from urllib.parse import urlsplit

        return urlsplit(str(place)).path.lstrip("/") or "postgresql"
    return Path(place).name


def place_of(text: str | Path) -> str | Path:
    """A command's SESSION argument as the store takes it: a URL stays text, a path a Path."""
    return str(text) if is_url(text) else Path(text)
