"""Secrets never reach a session file, a log, an export or the terminal, in any encoding.

A key comes from the environment and a password may ride in a ``--base-url``; a server may
echo either back in an error (as the key itself, URL-quoted, or inside an ``Authorization:
Basic`` header, base64-encoded). Every secret the process learns is remembered here with the
forms it may take, and ``scrub`` replaces each of them, along with any URL's user name and
password and any Basic or Bearer credential, in text about to be stored or shown.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

HIDDEN = "***"
MIN_LENGTH = 4
"""A shorter secret cannot be found without hiding ordinary text."""

_forms: set[str] = set()
_ordered: list[str] = []
_CREDENTIAL = re.compile(r"(?i)\b(basic|bearer)(\s+|%20)[A-Za-z0-9+/._~=-]{4,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"']+@")


def _encodings(text: str) -> set[str]:
    raw = text.encode("utf-8", "surrogatepass")
    return {text, quote(text, safe=""), base64.b64encode(raw).decode("ascii"),
            base64.urlsafe_b64encode(raw).decode("ascii")}


def remember(*secrets: str | None, user: str | None = None) -> None:
    """Hide these secrets from now on (and ``user:secret``, as a Basic header carries it)."""
    for secret in secrets:
        if not secret or len(secret) < MIN_LENGTH:
            continue
        _forms.update(_encodings(secret))
        if user:
            _forms.update(_encodings(f"{user}:{secret}"))
    # Longest first: a form inside another is never left half-hidden.
    _ordered[:] = sorted(_forms, key=len, reverse=True)


def without_credentials(url: str | None) -> tuple[str | None, tuple[str, ...]]:
    """A URL without the user name and password in it, and those secrets (now remembered)."""
    if url is None:
        return None, ()
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, ()
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    remember(password, user=user)  # a user name alone is no secret (and may be a common word)
    secrets = tuple(s for s in (password, user) if s)
    return urlunsplit(parts._replace(netloc=netloc)), secrets


def scrub(text: str) -> str:
    """``text`` with every remembered secret, URL credential and Basic/Bearer token hidden."""
    if not text:
        return text
    for form in _ordered:
        if form in text:
            text = text.replace(form, HIDDEN)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{HIDDEN}@", text)
    return _CREDENTIAL.sub(lambda m: f"{m.group(1)}{m.group(2)}{HIDDEN}", text)


def scrubbed(text: str | None) -> str | None:
    """``scrub`` that lets None through (a column with no text)."""
    return None if text is None else scrub(text)
