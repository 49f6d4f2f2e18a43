"""What a section of the report is: its tables and sentences, its JSON, its headline sentences.

Each section lives in a file of its own under report/sections/ and is listed once, in the
order a person reads the report, in ``report.sections.SECTIONS``; the table, Markdown and HTML
layouts, the JSON document and the headline are loops over that list. A section reads the
built ``Report`` (report/build.py makes it) and never another section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotator.report.blocks import Block
    from annotator.report.model import Report


def _nothing(_: Report) -> Any:
    return {}


def _no_sentence(_: Report) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class Section:
    """One section: ``blocks`` for the text formats, ``json`` its top-level keys of the JSON
    document (none when it adds nothing there), ``headline`` its sentences for the headline
    (most sections have none)."""

    id: str
    blocks: Callable[[Report], list[Block]]
    json: Callable[[Report], dict[str, Any]] = _nothing
    headline: Callable[[Report], list[str]] = _no_sentence
