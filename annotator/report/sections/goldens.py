"""Context precision golden by golden: means under both label sets, their difference and
agreement, the goldens whose pass/fail changes, and the worst ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.jsonout import Each
from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.cells import interval_text, stat_rows, verdict_string
from annotator.report.inputs import NO_COMPLETE_GOLDEN, Columns, GoldenRow, Inputs, cp_columns
from annotator.report.jsonparts import golden_dict, stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats import cp_agreement
from annotator.stats.bootstrap import ClusterSums, Estimates
from annotator.stats.stat import Stat, number
from annotator.store.session import Session
from annotator.text import counted, shortened


@dataclass(frozen=True, slots=True)
class WorstGolden:
    """A golden with a large |difference|, with its question for the reader."""

    row: GoldenRow
    question: str


@dataclass(frozen=True, slots=True)
class GoldenSection:
    """Context precision per golden under both label sets, and how they agree."""

    goldens: int
    stats: dict[str, Stat]
    per_golden: list[GoldenRow]
    verdict_changes: list[GoldenRow]
    worst: list[WorstGolden]
    no_relevant: dict[str, int]
    """Goldens with no relevant chunk: under both, human only, judge only."""


MAX_LISTED = 20
"""Longer lists (goldens whose verdict changes) show this many rows and a count of the rest."""
QUESTION_CHARS = 90


def _changed(row: GoldenRow) -> list[str]:
    return [row.golden_id, row.annotator, f"{row.human:.4f}", f"{row.judge:.4f}",
            number(row.difference, sign=True), "pass" if row.passes_human else "fail",
            "pass" if row.passes_judge else "fail"]


UNRANKED = ("An unranked pool: its chunks have no order, so context precision, agreement by "
            "rank, CP at k, reranking and every CP per golden are left out; agreement chunk by "
            "chunk stands as it is.")
"""Why a pool's report has no CP, said once (the headline and this section's place)."""


def blocks(report: Report) -> list[Block]:
    """The golden statistics, the changed verdicts, the worst goldens."""
    g = report.goldens
    if g is None:
        return [Paragraphs("goldens", "Context precision", [UNRANKED])]
    golden_rows = [["goldens", str(g.goldens), ""], *stat_rows(g.stats)]
    golden_rows += [
        ["no relevant chunk under both", str(g.no_relevant["both"]), ""],
        ["no relevant chunk, human labels only", str(g.no_relevant["human_only"]), ""],
        ["no relevant chunk, judge labels only", str(g.no_relevant["judge_only"]), ""],
    ]
    out: list[Block] = [Grid("goldens", "Context precision per golden (complete goldens)",
                             ["statistic", "value", "95% CI"], golden_rows,
                             ["Spearman, Kendall and the Bland-Altman limits have no bootstrap "
                              "interval."])]
    changes = g.verdict_changes
    if changes:
        out.append(Grid(
            "changes", f"Goldens whose pass/fail changes at {report.pass_mark:g}",
            ["golden", "annotator", "CP human", "CP judge", "difference", "human", "judge"],
            [_changed(r) for r in changes[:MAX_LISTED]],
            [f"and {len(changes) - MAX_LISTED} more"] if len(changes) > MAX_LISTED else []))
    if g.worst:
        out.append(Grid(
            "worst", "Worst goldens by |difference|",
            ["golden", "question", "CP human", "CP judge", "difference", "human verdicts",
             "judge verdicts"],
            [[w.row.golden_id, shortened(w.question, QUESTION_CHARS), f"{w.row.human:.4f}",
              f"{w.row.judge:.4f}",
              number(w.row.difference, sign=True), verdict_string(w.row.human_verdicts),
              verdict_string(w.row.judge_verdicts)] for w in g.worst]))
    return out


def json(report: Report) -> dict[str, Any]:
    """The context_precision object (null on an unranked pool)."""
    g = report.goldens
    if g is None:
        return {"context_precision": None, "unranked": True}
    return {"context_precision": {
        "goldens": g.goldens,
        **stats_dict(g.stats),
        "no_relevant_chunk": g.no_relevant,
        "per_golden": Each(g.per_golden, golden_dict),
        "verdict_changes": Each(g.verdict_changes, golden_dict),
        "worst": [{**golden_dict(w.row), "question": w.question} for w in g.worst],
    }}


def _bias(bias: Stat, resamples: int) -> str:
    """Which way the judge moves mean CP, said firmly only when the interval excludes 0."""
    amount = bias.value or 0.0  # defined whenever a golden is complete
    if number(amount) == number(0.0):
        return "the judge gives the same mean"
    way = "overstates" if amount > 0 else "understates"
    if bias.interval is None:
        why = ("'annotator report --bootstrap 2000' gives one" if not resamples else
               "too few complete goldens for one; finish more goldens")
        return (f"the judge's is {number(abs(amount))} {'higher' if amount > 0 else 'lower'}, "
                f"with no interval to tell that from chance ({why})")
    low, high = bias.interval
    interval = f"bias 95% CI {number(low, sign=True)} to {number(high, sign=True)}"
    if low > 0 or high < 0:
        return f"the judge {way} it by {number(abs(amount))} ({interval})"
    return (f"the difference, {number(amount, sign=True)}, is within chance ({interval}): "
            "no sign the judge over- or understates it")


def headline(report: Report) -> list[str]:
    """Mean CP under both label sets and the pass rates, or why there is none yet; and the
    kappa-AC1 note when they disagree."""
    c, g, cov = report.chunks, report.goldens, report.coverage
    lines = []
    if g is None:
        lines.append(UNRANKED)
    elif g.goldens:
        pooled = len(report.annotators) > 1
        complete = (f"{counted(g.goldens, 'person-golden pair')} ("
                    f"{counted(cov.distinct_complete, 'golden')})" if pooled
                    else counted(g.goldens, "golden"))
        lines.append(
            f"Over {complete} complete under both label sets, mean context precision is "
            f"{g.stats['mean_human'].format(4)} under human labels and "
            f"{g.stats['mean_judge'].format(4)} under the judge's: "
            f"{_bias(g.stats['bias'], report.resamples)}.")
        changes = len(g.verdict_changes)
        lines.append(
            f"At pass mark {report.pass_mark:g}, {interval_text(g.stats['pass_rate_human'], 2, True)}"
            f" of goldens pass under human labels and "
            f"{interval_text(g.stats['pass_rate_judge'], 2, True)} under the judge's; "
            f"{counted(changes, 'golden')} {'changes' if changes == 1 else 'change'} verdict.")
    else:
        waiting = sum(a.goldens_unsure for a in report.coverage.annotators)
        lines.append("No golden is complete under both label sets yet, so context precision "
                     "cannot be compared: " + (
                         f"{counted(waiting, 'golden')} {'waits' if waiting == 1 else 'wait'} "
                         "for an adjudicator to settle an unsure chunk ('annotator annotate "
                         f"{report.session} --adjudicate')." if waiting else "finish whole goldens."))
    if c.note:
        lines.append(c.note)
    return lines


def prepare(inputs: Inputs, _: Columns, sums: ClusterSums) -> None:
    """The columns stats/cp_agreement.py reads, summed per golden."""
    if inputs.unranked:
        return
    rows = inputs.rows
    cluster, h, j = cp_columns(inputs)
    d = j - h
    for name, values in (("n", 1.0), ("h", h), ("j", j), ("hh", h * h), ("jj", j * j),
                         ("hj", h * j), ("ad", np.abs(d)), ("dd", d * d),
                         ("big", cp_agreement.big_differences(d)),
                         ("pass_h", np.asarray([r.passes_human for r in rows], dtype=float)),
                         ("pass_j", np.asarray([r.passes_judge for r in rows], dtype=float))):
        sums.add(name, cluster, values)


def data(inputs: Inputs, est: Estimates, _: None) -> dict[str, Any]:
    """CP per golden under both label sets, compared (none on an unranked pool)."""
    if inputs.unranked:
        return {"goldens": None}
    rows = inputs.rows
    none = NO_COMPLETE_GOLDEN if not rows else None
    human = [r.human for r in rows]
    judge = [r.judge for r in rows]
    constant = cp_agreement.constant_reason(human, judge)
    low, high = cp_agreement.bland_altman([r.difference for r in rows])
    spearman, kendall = cp_agreement.rank_correlations(human, judge)
    stats = {
        "mean_human": est.stat("mean_human", cp_agreement.mean_human, none),
        "mean_judge": est.stat("mean_judge", cp_agreement.mean_judge, none),
        "bias": est.stat("bias", cp_agreement.bias, none),
        "mae": est.stat("mae", cp_agreement.mae, none),
        "rmse": est.stat("rmse", cp_agreement.rmse, none),
        "limits_low": low,
        "limits_high": high,
        "pearson": est.stat("pearson", cp_agreement.pearson, constant),
        "spearman": spearman,
        "kendall": kendall,
        "ccc": est.stat("ccc", cp_agreement.ccc, none or cp_agreement.ccc_reason(human, judge)),
        "share_big_difference": est.stat("share_big_difference", cp_agreement.share_big, none),
        "pass_rate_human": est.stat("pass_rate_human", cp_agreement.pass_rate_human, none),
        "pass_rate_judge": est.stat("pass_rate_judge", cp_agreement.pass_rate_judge, none),
    }
    return {"goldens": GoldenSection(len(rows), stats, rows,
                                     [r for r in rows if r.passes_human != r.passes_judge],
                                     _worst(inputs.session, rows, inputs.options.worst),
                                     _no_relevant(rows))}


def _worst(session: Session, rows: list[GoldenRow], worst: int) -> list[WorstGolden]:
    """The ``worst`` goldens by |difference| (ties by id), with their questions."""
    ranked = sorted((r for r in rows if abs(r.difference) > 1e-9),
                    key=lambda r: (-abs(r.difference), r.golden_id, r.annotator))[:worst]
    questions = {g.id: g.user_input for g in session.goldens(sorted({r.golden_id for r in ranked}))}
    return [WorstGolden(r, questions[r.golden_id]) for r in ranked]


def _no_relevant(rows: list[GoldenRow]) -> dict[str, int]:
    """How many complete goldens have no relevant chunk under both label sets, or one only."""
    return {
        "both": sum(1 for r in rows if not any(r.human_verdicts) and not any(r.judge_verdicts)),
        "human_only": sum(1 for r in rows if not any(r.human_verdicts) and any(r.judge_verdicts)),
        "judge_only": sum(1 for r in rows if any(r.human_verdicts) and not any(r.judge_verdicts)),
    }


SECTION = Section("goldens", blocks, json, headline, prepare, data)
