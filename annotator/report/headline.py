"""The few sentences a person needs to decide whether to trust the judge, from the report: each
section's, most important first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report.cells import who
from annotator.report.sections import ordered

if TYPE_CHECKING:
    from annotator.report.model import Report

HEADLINE_ORDER = ("chunks", "goldens", "top_k", "reranking", "systems", "errors", "probes",
                  "people", "raters", "design", "ppi")
"""Whose sentences come first: agreement, then CP, then what the report found elsewhere (a
section not named here comes after, in reading order)."""


def headline(report: Report) -> list[str]:
    """The headline sentences, most important first; with nothing compared yet, what to do."""
    if report.chunks.confusion.n == 0:
        label = f"a label from {who(report)}" if report.annotators else "a person's label yet"
        return [f"No chunk has both a verdict from judge '{report.judge}' and {label}: "
                "annotate some goldens first ('annotator annotate "
                f"{report.session} --judge {report.judge}')."]
    return [line for section in ordered(HEADLINE_ORDER) for line in section.headline(report)]
