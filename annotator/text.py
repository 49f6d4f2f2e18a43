"""Words for people: counts with the right plural, text cut to fit one line.

The one home of these rules, so every command and screen says "1 golden" and cuts the same way.
"""

from __future__ import annotations

import re


def counted(n: int, word: str, plural: str | None = None) -> str:
    """'1 golden', '3 goldens', '1,200 chunks'; ``plural`` for words that add more than an s."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def shortened(text: str, width: int = 60) -> str:
    """The text on one line (runs of whitespace become one space), cut with '…' to ``width``."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


_CONTROLS = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL and C1 controls: what a terminal would obey (ESC starts
every CSI, OSC and DCS sequence; 0x9b is an 8-bit CSI)."""


def visible(text: str) -> str:
    """Text with every control character a terminal would obey shown as a visible escape:
    ESC as '␛' (so '␛]52;…' shows an OSC 52 clipboard write instead of doing it), the others
    as '\\x07' and so on; a Windows line ending stays a line ending."""
    return _CONTROLS.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    return "␛" if char == "\x1b" else f"\\x{ord(char):02x}"
