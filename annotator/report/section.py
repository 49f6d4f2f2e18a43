"""What a section of the report is: the bootstrap columns it adds, the data it makes, its tables
and sentences, its JSON, its headline sentences.

Each section lives in a file of its own under report/sections/ and is listed once, in the
order a person reads the report, in ``report.sections.SECTIONS``; ``build_report``, the table,
Markdown and HTML layouts, the JSON document and the headline are loops over that list. A
section builds from the ``Inputs`` and ``Columns`` that report/inputs.py gathers once, reads the
built ``Report``, and never imports another section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotator.report.blocks import Block
    from annotator.report.inputs import Columns, Inputs
    from annotator.report.leaderboard import Leaderboard
    from annotator.report.model import Report
    from annotator.stats.bootstrap import ClusterSums, Estimates


def _nothing(_: Report) -> Any:
    return {}


def _no_sentence(_: Report) -> list[str]:
    return []


def _keeps_nothing(_: Inputs, __: Columns, ___: ClusterSums) -> None:
    return None


def _no_data(_: Inputs, __: Estimates, ___: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class Section:
    """One section, in the order the report is made.

    ``prepare`` runs before the bootstrap: it adds the section's columns to the sums and returns
    what ``data`` needs afterwards (never the session's ``Columns``, which are let go before the
    bootstrap's weights arrive). ``data`` returns ``{its id: its data}``, which the report keeps
    in ``Report.sections`` (so a new section is its file and a line in SECTIONS).
    ``blocks`` lays it out for the text formats, ``json`` gives its top-level keys of the JSON
    document (none when it adds nothing there), ``headline`` its sentences for the headline
    (most sections have none).
    """

    id: str
    blocks: Callable[[Report], list[Block]]
    json: Callable[[Report], dict[str, Any]] = _nothing
    headline: Callable[[Report], list[str]] = _no_sentence
    prepare: Callable[[Inputs, Columns, ClusterSums], Any] = _keeps_nothing
    data: Callable[[Inputs, Estimates, Any], dict[str, Any]] = _no_data


def _no_keys(_: Leaderboard) -> dict[str, Any]:
    return {}


def _says_nothing(_: Leaderboard) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class BoardSection:
    """One section of the judge leaderboard (report/board/), as a report section is one of
    the report: ``blocks`` lays it out for the text formats, ``json`` gives its keys of the JSON
    document, ``headline`` its sentences. The board's figures are computed once for every
    section (report/leaderboard.py)."""

    id: str
    blocks: Callable[[Leaderboard], list[Block]]
    json: Callable[[Leaderboard], dict[str, Any]] = _no_keys
    headline: Callable[[Leaderboard], list[str]] = _says_nothing


def prepared_as(field: str) -> Callable[[Inputs, Estimates, Any], dict[str, Any]]:
    """The ``data`` of a section whose ``prepare`` already built all of it: that is kept under
    ``field``, the section's id."""
    def data(_: Inputs, __: Estimates, made: Any) -> dict[str, Any]:
        return {field: made}

    return data
