"""The judge leaderboard's sections, each in a file of its own, as the report's are
(report/section.py says what one is): its blocks, its JSON keys, its headline sentences. Every
judge's figures are computed once by report/leaderboard.py (with what it shares with the
report's sections: ``inputs.chunk_stat``, ``systems.add_columns``, ``systems.means``); each
section here lays out, writes and says its part. A new part is a file here and a line in
BOARD_SECTIONS.
"""

from __future__ import annotations

from annotator.report.board import agreement, alt_test, judges, pairs, probes, unstable
from annotator.report.section import BoardSection

BOARD_SECTIONS: tuple[BoardSection, ...] = (
    judges.SECTION,
    alt_test.SECTION,
    agreement.SECTION,
    probes.SECTION,
    unstable.SECTION,
    pairs.SECTION,
)
"""Every section, in reading order."""

JSON_ORDER = ("judges", "agreement", "pairs")
HEADLINE_ORDER = ("judges", "pairs", "unstable", "probes", "alt_test")
"""The orders the JSON document and the headline keep (a section not named comes after)."""


def ordered(first: tuple[str, ...]) -> list[BoardSection]:
    """The sections named in ``first``, in that order, then every other in reading order."""
    by_id = {s.id: s for s in BOARD_SECTIONS}
    return [by_id[i] for i in first] + [s for s in BOARD_SECTIONS if s.id not in first]
