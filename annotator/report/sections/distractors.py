"""Distractors: how often people call a chunk noise that misleads (on topic, plausible, wrong for
this question), overall, per system and per golden. Shown once someone has. Every rate has one
denominator: the chunks people decided (each person's decision counted), of every golden, or of
every golden of the system."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING
from annotator.report.blocks import Block, Grid
from annotator.report.cells import with_interval
from annotator.report.inputs import Columns, Inputs, ratio_of
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.scoring.grouping import system_values
from annotator.stats.bootstrap import ClusterSums, Estimates, column
from annotator.stats.stat import Stat
from annotator.text import counted
from annotator.verdict import DISTRACTOR


@dataclass(frozen=True, slots=True)
class DistractorSection:
    """How often people call a chunk a distractor (noise that misleads), overall, per system
    and per golden; the judge's rate where a judge can say it."""

    rate: Stat
    """Distractors among the chunks people gave a verdict, with its golden-bootstrap interval."""
    judge_rate: Stat
    """The same under the judge's labels (undefined while no judge can say distractor)."""
    chunks: int
    distractors: int
    systems: dict[str, Stat]
    """Each system's rate (with two systems or more)."""
    goldens: list[tuple[str, int, int]]
    """The goldens with the most distractors: (golden id, distractors, chunks with a verdict)."""


NO_JUDGE = "no judge here can say distractor: a judge's verdict is useful or noise"
MOST = 10

Made = tuple[int, int, list[tuple[str, int, int]], list[str]]


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> Made | None:
    """Per golden (and per system), the people's distractors and the chunks they gave a
    verdict; none until someone called a chunk a distractor."""
    if not any(labels.of_kind(DISTRACTOR).any() for labels in columns.people.values()):
        return None
    frame = columns.frame
    # Each system's rate is over all its goldens people decided chunks of, as the overall rate
    # is (inputs.system_of holds only the goldens compared with the judge).
    every = system_values(inputs.session, inputs.options.group_by)[1] if inputs.system_of \
        else {}
    golden_system = [every.get(g, "(none)") if every else "" for g in frame.golden_ids]
    systems = sorted(set(golden_system) - {""})
    distractors = np.zeros(len(frame.golden_ids), dtype=np.int64)
    decided = np.zeros(len(frame.golden_ids), dtype=np.int64)
    for labels in columns.people.values():
        has = labels.verdict != MISSING
        distractors += np.bincount(frame.cluster[labels.of_kind(DISTRACTOR)],
                                   minlength=len(frame.golden_ids))
        decided += np.bincount(frame.cluster[has], minlength=len(frame.golden_ids))
    at = np.arange(len(frame.golden_ids))
    sums.add("dis_n", at, distractors.astype(float))
    sums.add("dec_n", at, decided.astype(float))
    mine = np.asarray(golden_system)
    for name in systems:
        sums.add(column("dis_n", name), at[mine == name], distractors[mine == name].astype(float))
        sums.add(column("dec_n", name), at[mine == name], decided[mine == name].astype(float))
    order = np.lexsort((at, -distractors))
    most = [(frame.golden_ids[g], int(distractors[g]), int(decided[g]))
            for g in order[:MOST].tolist() if distractors[g]]
    return int(decided.sum()), int(distractors.sum()), most, systems


def data(_: Inputs, est: Estimates, made: Made | None) -> dict[str, Any]:
    """The rates, each with its golden-bootstrap interval."""
    if made is None:
        return {"distractors": None}
    chunks, distractors, most, systems = made

    def rate(*scopes: str) -> Stat:
        key = column("distractor_rate", *scopes)
        return est.stat(key, ratio_of(lambda s: s[column("dis_n", *scopes)],
                                      lambda s: s[column("dec_n", *scopes)]))

    return {"distractors": DistractorSection(
        rate(), Stat.undefined(NO_JUDGE), chunks, distractors,
        {name: rate(name) for name in systems}, most)}


def blocks(report: Report) -> list[Block]:
    """The rates, and the goldens with the most distractors."""
    d = report.distractors
    if d is None:
        return []
    rows = [["distractor rate, human labels", with_interval(d.rate, 3)],
            ["distractor rate, judge labels", d.judge_rate.format(style="cell")],
            *([f"  {name}", with_interval(stat, 3)] for name, stat in d.systems.items())]
    return [
        Grid("distractors", "Distractors: noise that misleads", ["rate", "value"], rows,
             [f"{counted(d.distractors, 'distractor')} among {counted(d.chunks, 'chunk')} "
              "people gave a verdict. A distractor counts as noise for CP and every agreement "
              "statistic; readers are misled by it where plain noise only wastes room."]),
        Grid("distractor_goldens", "Goldens with the most distractors",
             ["golden", "distractors", "chunks with a verdict"],
             [[g, str(n), str(of)] for g, n, of in d.goldens]),
    ]


def json(report: Report) -> dict[str, Any]:
    """The distractors object (absent until someone called a chunk a distractor)."""
    d = report.distractors
    if d is None:
        return {}
    return {"distractors": {
        "chunks": d.chunks, "distractors": d.distractors,
        **stats_dict({"rate_human": d.rate, "rate_judge": d.judge_rate}),
        "systems": stats_dict(d.systems),
        "goldens": [{"golden_id": g, "distractors": n, "chunks": of} for g, n, of in d.goldens],
    }}


def headline(report: Report) -> list[str]:
    """The distractor rate in one sentence."""
    d = report.distractors
    if d is None or d.rate.value is None:
        return []
    return [f"People called {d.rate.format(3, percent=True, interval=True)} of the chunks they "
            "decided distractors (noise that misleads); no judge here can say so."]


SECTION = Section("distractors", blocks, json, headline, prepare, data)
