"""The report laid out as titled paragraphs and tables: what every text format renders.

The Rich table, Markdown and HTML renderers only turn these blocks into their own markup, so
all three always say the same thing in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Paragraphs:
    """A titled group of sentences."""

    id: str
    title: str
    lines: list[str]


@dataclass(frozen=True, slots=True)
class Grid:
    """A titled table of text cells."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


Block = Paragraphs | Grid
