"""Words for people: counts with the right plural, text cut to fit one line.

The one home of these rules, so every command and screen says "1 golden" and cuts the same way.
"""

from __future__ import annotations


def counted(n: int, word: str, plural: str | None = None) -> str:
    """'1 golden', '3 goldens', '1,200 chunks'; ``plural`` for words that add more than an s."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def shortened(text: str, width: int = 60) -> str:
    """The text on one line (runs of whitespace become one space), cut with '…' to ``width``."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
