"""Between people: agreement among several annotators, each pair's kappa, the judge beside them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from annotator.columns import MISSING
from annotator.report.blocks import Block, Grid
from annotator.report.cells import stat_rows, value
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates
from annotator.stats.raters import RaterColumns, add_rater_columns, rater_agreement

if TYPE_CHECKING:
    from annotator.stats.raters import PairAgreement


def blocks(report: Report) -> list[Block]:
    """Agreement among people, and the pairwise Cohen's kappa matrix with the judge beside it."""
    if (team := report.raters) is None:
        return []
    kappa = {(p.first, p.second): p for p in team.pairs}
    kappa.update({(p.second, p.first): p for p in team.pairs})
    judge = {p.second: p for p in team.judge_vs}

    def cell(pair: PairAgreement | None) -> str:
        if pair is None:
            return "-"
        return f"{value(pair.kappa, 3, short=True)} (n={pair.chunks})"

    return [
        Grid("raters", f"Between people: {len(team.people)} annotators",
             ["statistic", "value", "95% CI"], stat_rows(team.stats),
             [f"Alpha counts the {team.shared_chunks} chunks labelled by two or more people "
              "(missing labels allowed); Fleiss' kappa the "
              f"{team.complete_chunks} chunks labelled by every person.", team.ceiling]),
        Grid("rater_matrix", "Cohen's kappa for each pair (chunks both labelled)",
             ["", *team.people, *([f"judge {team.judge}"] if team.judge else [])],
             [[a, *("-" if a == b else cell(kappa.get((a, b))) for b in team.people),
               *([cell(judge.get(a))] if team.judge else [])] for a in team.people]),
    ]


def json(report: Report) -> dict[str, Any]:
    """The inter_annotator object (null with one person)."""
    if (team := report.raters) is None:
        return {"inter_annotator": None}

    def pairs(items: list[PairAgreement]) -> list[dict[str, Any]]:
        return [{"first": p.first, "second": p.second, "chunks": p.chunks,
                 **stats_dict({"cohen_kappa": p.kappa})} for p in items]

    return {"inter_annotator": {
        "annotators": team.people, "judge": team.judge,
        "shared_chunks": team.shared_chunks, "complete_chunks": team.complete_chunks,
        **stats_dict(team.stats), "pairs": pairs(team.pairs),
        "judge_vs_annotator": pairs(team.judge_vs), "ceiling": team.ceiling}}


def headline(report: Report) -> list[str]:
    """How the judge compares with people's agreement among themselves."""
    team = report.raters
    if team is None or None in (team.stats["light_kappa"].value,
                                team.stats["judge_mean_kappa"].value):
        return []
    return [team.ceiling]


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> RaterColumns | None:
    """With two people or more: everyone's labels and the judge's verdicts as rows over every
    chunk (NaN where missing), added to the sums."""
    everyone = inputs.everyone
    if len(everyone) < 2:
        return None
    frame = columns.frame

    def row(verdict: np.ndarray) -> np.ndarray:
        return np.where(verdict == MISSING, np.nan, verdict.astype(float))

    # Everyone, not only the people compared: one row at a time.
    ratings = np.vstack([row((columns.people[p] if p in columns.people
                              else inputs.session.label_columns(p, frame)).verdict)
                         for p in everyone])
    return add_rater_columns(sums, everyone, ratings, frame.cluster.astype(np.int64),
                             inputs.judge, row(columns.said.verdict))


def data(_: Inputs, est: Estimates, made: RaterColumns | None) -> dict[str, Any]:
    """Agreement among everyone who labelled, and with the judge."""
    return {"raters": rater_agreement(est, made) if made else None}


SECTION = Section("raters", blocks, json, headline, prepare, data)
