"""What was compared: the session, the judge, the people, how much is judged and labelled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING
from annotator.place import place_name
from annotator.report.blocks import Block, Grid
from annotator.report.cells import who
from annotator.report.inputs import Columns, Inputs
from annotator.report.model import Report
from annotator.report.section import Section, prepared_as
from annotator.stats.bootstrap import ClusterSums
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class AnnotatorCoverage:
    """How far one annotator has got."""

    annotator: str
    chunks_decided: int
    goldens_complete: int
    chunks_unsure: int = 0
    """Chunks answered unsure (and not adjudicated): left out of agreement, never a 0 or 1."""
    goldens_unsure: int = 0
    """Goldens with no CP under these labels because one of their chunks is unsure."""


@dataclass(frozen=True, slots=True)
class Coverage:
    """Goldens and chunks in all, judged, and decided."""

    goldens: int
    chunks: int
    chunks_judged: int
    goldens_judged: int
    annotators: list[AnnotatorCoverage]
    compared_chunks: int
    """Chunks with a verdict from the judge and a label from the person (pairs, when pooled)."""
    compared_goldens: int
    """Goldens complete under both label sets (pairs, when several annotators are pooled)."""
    distinct_chunks: int
    """Different chunks among the compared ones (fewer than compared_chunks when pooled)."""
    from_goldens: int
    """Different goldens the compared chunks come from."""
    distinct_complete: int
    """Different goldens among the complete ones (fewer than compared_goldens when pooled)."""


def blocks(report: Report) -> list[Block]:
    """The 'What was compared' table."""
    cov = report.coverage
    compared = [
        ["session", place_name(report.session)],
        ["judge", report.judge],
        ["annotators", who(report)],
        ["goldens / chunks", f"{cov.goldens} / {cov.chunks}"],
        ["chunks judged", f"{cov.chunks_judged} ({counted(cov.goldens_judged, 'golden')} fully "
         "judged)"],
        *[[f"decided by {a.annotator}", f"{counted(a.chunks_decided, 'chunk')}, "
           f"{counted(a.goldens_complete, 'golden')} complete"
           + (f"; {counted(a.chunks_unsure, 'chunk')} unsure, left out (no CP for "
              f"{counted(a.goldens_unsure, 'golden')} until adjudicated)"
              if a.chunks_unsure else "")] for a in cov.annotators],
        *([["labels compared (person-chunk pairs)", f"{cov.compared_chunks:,} "
            f"({counted(cov.distinct_chunks, 'chunk')} from {counted(cov.from_goldens, 'golden')})"],
           ["person-golden pairs compared (complete under both)", f"{cov.compared_goldens:,} "
            f"({counted(cov.distinct_complete, 'golden')})"]] if len(report.annotators) > 1 else
          [["chunks compared", f"{cov.compared_chunks:,} (from "
            f"{counted(cov.from_goldens, 'golden')})"],
           ["goldens compared (complete under both)", f"{cov.compared_goldens:,}"]]),
        *([["relevance", f"grades 0-{report.grades.top}, relevant from "
                           f"{report.grades.relevant_from}"]] if report.grades else []),
        *([["order", "none: an unranked pool (no CP)"]] if report.unranked else
          [["context precision convention", report.convention],
           ["pass mark", f"{report.pass_mark:g}"]]),
        ["intervals", f"95% percentile bootstrap over goldens, {report.resamples} resamples, "
         f"seed {report.seed}" if report.resamples else "none (0 resamples): 'annotator report "
         "--bootstrap 2000' gives 95% bootstrap intervals"],
    ]
    return [Grid("coverage", "What was compared", ["", ""], compared)]


def json(report: Report) -> dict[str, Any]:
    """The coverage object."""
    cov = report.coverage
    return {"coverage": {
        "goldens": cov.goldens, "chunks": cov.chunks, "chunks_judged": cov.chunks_judged,
        "goldens_judged": cov.goldens_judged, "compared_chunks": cov.compared_chunks,
        "compared_goldens": cov.compared_goldens, "distinct_chunks": cov.distinct_chunks,
        "from_goldens": cov.from_goldens, "distinct_complete": cov.distinct_complete,
        "annotators": [{"annotator": a.annotator, "chunks_decided": a.chunks_decided,
                        "goldens_complete": a.goldens_complete,
                        "chunks_unsure": a.chunks_unsure,
                        "goldens_unsure": a.goldens_unsure} for a in cov.annotators],
    }}


def prepare(inputs: Inputs, columns: Columns, _: ClusterSums) -> Coverage:
    """How much is judged, labelled and compared, counted on the session's columns."""
    frame, said, pairs, rows = columns.frame, columns.said, inputs.pairs, inputs.rows
    return Coverage(
        goldens=len(frame.golden_ids),
        chunks=len(frame),
        chunks_judged=int((said.verdict != MISSING).sum()),
        goldens_judged=int(frame.complete(said.verdict).sum()),
        annotators=[AnnotatorCoverage(side.name, int((side.human != MISSING).sum()),
                                      int(frame.complete(side.human).sum()),
                                      int(side.unsure.sum()),
                                      int((frame.per_golden(side.unsure) > 0).sum()))
                    for side in columns.sides],
        compared_chunks=len(pairs.cluster),
        compared_goldens=len(rows),
        distinct_chunks=len(np.unique(np.stack([pairs.cluster, pairs.rank]), axis=1).T),
        from_goldens=len(np.unique(pairs.cluster)),
        distinct_complete=len({row.golden_id for row in rows}),
    )


SECTION = Section("coverage", blocks, json, prepare=prepare, data=prepared_as("coverage"))
