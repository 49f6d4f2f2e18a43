"""Where a session lives: a SQLite file's path, or a PostgreSQL database's URL.

Every command takes either. A URL's password is never shown: ``shown`` is what a sentence,
a log line or the screen may say of a place.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(place: str | Path) -> bool:
    """Whether a session's place is a PostgreSQL URL (anything else is a file's path)."""
    return isinstance(place, str) and place.lower().startswith(URL_SCHEMES)


def shown(place: str | Path) -> str:
    """A place as it may be printed: a URL with its password (and any password= in its
    query) replaced by ***."""
    if not is_url(place):
        return str(place)
    text = str(place)
    try:
        parts = urlsplit(text)
        netloc = parts.netloc
        if "@" in netloc:
            login, host = netloc.rsplit("@", 1)
            if ":" in login:
                login = login.split(":", 1)[0] + ":***"
            netloc = f"{login}@{host}"
        query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # unparseable: say nothing of it that could be a secret
        return text.split("://", 1)[0] + "://***"


def place_of(text: str | Path) -> str | Path:
    """A command's SESSION argument as the store takes it: a URL stays text, a path a Path."""
    return str(text) if is_url(text) else Path(text)
