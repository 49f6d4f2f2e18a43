"""Guidelines: agreement with the judge per version of the team's guidelines a label was made
under. Shown once the compared labels span two versions (or labels made before any guidelines
beside labels made under some), since a changed clause can move people's labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING
from annotator.report.blocks import Block, Grid
from annotator.report.cells import with_interval
from annotator.report.inputs import Columns, Inputs, chunk_stat
from annotator.report.jsonparts import confusion_dict, stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import COUNTS, ClusterSums, Estimates, add_confusion
from annotator.stats.chunk_agreement import Confusion
from annotator.stats.stat import Stat

STATISTICS = ("percent", "cohen_kappa", "gwet_ac1")
"""What each version's row gives, each with its golden-bootstrap interval."""


@dataclass(frozen=True, slots=True)
class VersionRow:
    """The labels made under one version of the guidelines, against the judge."""

    version: int | None
    """None: labels made before the person had been shown any guidelines."""
    people: int
    confusion: Confusion
    stats: dict[str, Stat]


def _prefix(version: int | None) -> str:
    return f"gl{version or 0}_"


def prepare(_: Inputs, columns: Columns, sums: ClusterSums
            ) -> list[tuple[int | None, int]] | None:
    """Each version's (person, judge) pairs counted into its golden's confusion columns; None
    while the compared labels were all made under one version."""
    said, frame = columns.said, columns.frame
    people: dict[int, int] = {}
    for labels in columns.people.values():
        both = labels.decided & (said.verdict != MISSING)
        for version in np.unique(labels.guideline[both]).tolist():
            people[version] = people.get(version, 0) + 1
    if len(people) < 2:
        return None
    for labels in columns.people.values():
        both = labels.decided & (said.verdict != MISSING)
        for version in people:
            at = both & (labels.guideline == version)
            add_confusion(sums, frame.cluster[at], labels.verdict[at], said.verdict[at],
                          _prefix(None if version == MISSING else version))
    return [(None if v == MISSING else v, n) for v, n in sorted(people.items())]


def data(_: Inputs, est: Estimates, made: list[tuple[int | None, int]] | None
         ) -> dict[str, Any]:
    """Each version's agreement with the judge, with its interval."""
    if made is None:
        return {"guidelines": None}
    rows = []
    for version, people in made:
        prefix = _prefix(version)
        c = Confusion(*(int(est.totals[prefix + k]) for k in COUNTS))
        rows.append(VersionRow(version, people, c, {
            key: chunk_stat(est, c, key, prefix, "guideline", version or 0)
            for key in STATISTICS}))
    return {"guidelines": rows}


def _name(version: int | None) -> str:
    return "before any" if version is None else f"version {version}"


def blocks(report: Report) -> list[Block]:
    """One row per version: its labels, its people, its agreement with the judge."""
    rows: list[VersionRow] | None = report.sections.get("guidelines")
    if rows is None:
        return []
    return [Grid(
        "guidelines", "Agreement with the judge by guideline version",
        ["guidelines", "labels", "people", "agreement", "Cohen's kappa", "Gwet's AC1"],
        [[_name(r.version), str(r.confusion.n), str(r.people),
          *(with_interval(r.stats[key], 3) for key in STATISTICS)] for r in rows],
        ["Each label counts under the version its person had been shown when deciding it "
         "('annotator guidelines SESSION list'); intervals are 95% golden bootstraps. A "
         "version that moves agreement changed what people call useful, or the judge's "
         "prompt now reads the task otherwise."])]


def json(report: Report) -> dict[str, Any]:
    """The guidelines list (absent while the labels span one version)."""
    rows: list[VersionRow] | None = report.sections.get("guidelines")
    if rows is None:
        return {}
    return {"guidelines": [{"version": r.version, "labels": r.confusion.n, "people": r.people,
                            "confusion": confusion_dict(r.confusion), **stats_dict(r.stats)}
                           for r in rows]}


SECTION = Section("guidelines", blocks, json, prepare=prepare, data=data)
