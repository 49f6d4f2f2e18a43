"""Bootstrap replicates left out: statistics undefined in some replicates, or in too many for
an interval."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Paragraphs
from annotator.report.inputs import Inputs
from annotator.report.model import LABELS, Report
from annotator.report.section import Section
from annotator.stats.bootstrap import MIN_VALID_SHARE, SCOPE, Estimates, scoped
from annotator.stats.slices import ERROR_RATES


def _dropped(report: Report) -> list[str]:
    """At most four lines: statistics left out of some replicates, statistics left without an
    interval because too many replicates left them undefined, system statistics and error
    rates by slice."""
    kept: list[str] = []
    lost: list[str] = []
    systems = slices = 0
    for key, n in sorted(report.dropped_replicates.items()):
        if key.rpartition(SCOPE)[2] in ERROR_RATES:  # a slice's rate, or the rest's
            slices = max(slices, n)
            continue
        if scoped(key):  # a system's mean or a pair's difference
            systems = max(systems, n)
            continue
        within = n <= (1 - MIN_VALID_SHARE) * report.resamples
        (kept if within else lost).append(f"{LABELS.get(key, key)} ({n:,})")
    lines = []
    of = f"of {report.resamples:,} replicates"
    if kept:
        lines.append(f"Undefined in some {of} (for example a single class or constant CP), which "
                     "are left out of their intervals: " + ", ".join(kept) + ".")
    if lost:
        lines.append(f"Undefined in too many {of} for an interval, so none is given: "
                     + ", ".join(lost) + ".")
    if systems:
        lines.append(f"System means and differences: up to {systems:,} {of} drew no golden of a "
                     "system and were left out.")
    if slices:
        lines.append(f"Error rates by slice: up to {slices:,} {of} drew no chunk of a slice's "
                     "class and were left out.")
    return lines


def blocks(report: Report) -> list[Block]:
    """A paragraph when some replicates were left out (the JSON has them under bootstrap)."""
    if not report.dropped_replicates:
        return []
    return [Paragraphs("dropped", "Bootstrap replicates left out", _dropped(report))]


def data(_: Inputs, est: Estimates, __: None) -> dict[str, Any]:
    """Bootstrap replicates in which a statistic was undefined."""
    return {"dropped": est.dropped}


SECTION = Section("dropped", blocks, data=data)
