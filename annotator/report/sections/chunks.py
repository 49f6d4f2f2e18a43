"""Chunks: the judge against human labels, overall and by rank; which way the judge errs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.report.blocks import Block, Grid
from annotator.report.cells import interval_text, stat_rows, value, who
from annotator.report.inputs import Columns, Inputs, chunk_stat
from annotator.report.jsonparts import confusion_dict, stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import COUNTS, ClusterSums, Estimates
from annotator.stats.chunk_agreement import (
    CHUNK_STATISTICS,
    Confusion,
    McNemar,
    cohen_kappa,
    direction,
    gwet_ac1,
    kappa_paradox_note,
    percent_agreement,
    wilson_interval,
)
from annotator.stats.stat import Stat
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class RankRow:
    """Agreement at one rank position."""

    rank: int
    confusion: Confusion
    stats: dict[str, Stat]


@dataclass(frozen=True, slots=True)
class ChunkSection:
    """Chunk-level agreement, human = truth, relevant = positive."""

    confusion: Confusion
    stats: dict[str, Stat]
    wilson: tuple[float, float] | None
    """Wilson 95% interval on percent agreement, treating chunks as independent."""
    direction: str
    mcnemar: McNemar
    note: str | None
    """Set when kappa and AC1 tell different stories because prevalence is extreme."""
    by_rank: list[RankRow]


def blocks(report: Report) -> list[Block]:
    """The chunk statistics, and agreement by rank."""
    c = report.chunks
    cf = c.confusion
    rows = [["confusion (human = truth)", f"tp {cf.tp}  fp {cf.fp}  fn {cf.fn}  tn {cf.tn}", ""]]
    rows += stat_rows(c.stats)
    if c.wilson is not None:
        rows.append(["percent agreement, Wilson 95% (chunks as independent)",
                     f"{c.wilson[0]:.4f} to {c.wilson[1]:.4f}", ""])
    m = c.mcnemar
    rows += [
        ["judge looser (fp) / stricter (fn)", f"{m.looser} / {m.stricter}", ""],
        ["McNemar, cluster-adjusted chi-square", value(m.cluster_statistic), ""],
        ["McNemar, cluster-adjusted p", value(m.cluster_p), ""],
        ["McNemar, exact p (chunks as independent)", value(m.exact_p), ""],
    ]
    notes = [c.direction] + ([c.note] if c.note else [])
    chunks = Grid("chunks", "Chunks: the judge against human labels",
                  ["statistic", "value", "95% CI"], rows, notes)
    if report.unranked:
        return [chunks]  # a pool has no ranks
    return [
        Grid("chunks", "Chunks: the judge against human labels",
             ["statistic", "value", "95% CI"], rows, notes),
        Grid("by_rank", "Agreement by rank", ["rank", "chunks", "tp", "fp", "fn", "tn", "percent",
                                              "Cohen's kappa", "Gwet's AC1"],
             [[str(r.rank), str(r.confusion.n), str(r.confusion.tp), str(r.confusion.fp),
               str(r.confusion.fn), str(r.confusion.tn), value(r.stats["percent"], 3, short=True),
               value(r.stats["cohen_kappa"], 3, short=True),
               value(r.stats["gwet_ac1"], 3, short=True)]
              for r in c.by_rank]),
    ]


def json(report: Report) -> dict[str, Any]:
    """The agreement object."""
    c = report.chunks
    m = c.mcnemar
    return {"agreement": {
        "n": c.confusion.n,
        # Chunks someone answered unsure: never counted as 0 or 1, so left out of n.
        "unsure_left_out": sum(a.chunks_unsure for a in report.coverage.annotators),
        **stats_dict(c.stats),
        "confusion": confusion_dict(c.confusion),
        "percent_wilson95": list(c.wilson) if c.wilson else None,
        "direction": c.direction,
        "kappa_ac1_note": c.note,
        "mcnemar": {"looser_fp": m.looser, "stricter_fn": m.stricter,
                    **stats_dict({"cluster_chi2": m.cluster_statistic, "cluster_p": m.cluster_p,
                                  "exact_p_iid": m.exact_p})},
        "by_rank": [{"rank": r.rank, "n": r.confusion.n, "confusion": confusion_dict(r.confusion),
                     **stats_dict(r.stats)} for r in c.by_rank],
    }}


def headline(report: Report) -> list[str]:
    """How often the judge and the people agree, and which way the judge leans."""
    c, cov = report.chunks, report.coverage
    pooled = len(report.annotators) > 1  # each person-chunk pair counts
    on = (f"{counted(c.confusion.n, 'label')} ({counted(cov.distinct_chunks, 'chunk')} from "
          f"{counted(cov.from_goldens, 'golden')})" if pooled else
          f"{counted(c.confusion.n, 'chunk')} from {counted(cov.from_goldens, 'golden')}")
    lines = [
        f"Judge '{report.judge}' against {who(report)} on {on}: agreement "
        f"{interval_text(c.stats['percent'], 2, True)}, "
        f"Cohen's kappa {interval_text(c.stats['cohen_kappa'])}, Gwet's AC1 "
        f"{interval_text(c.stats['gwet_ac1'])}.",
    ]
    p = c.mcnemar.cluster_p
    test = (f" (cluster-adjusted McNemar p = {p.value:.3f})" if p.value is not None else "")
    lines.append(c.direction.rstrip(".") + test + ".")
    return lines


def prepare(inputs: Inputs, _: Columns, sums: ClusterSums) -> tuple[McNemar, list[RankRow]]:
    """Which way the judge errs (McNemar's test on the goldens' confusion counts, which the
    report adds for every section) and agreement by rank: neither is bootstrapped."""
    pairs = inputs.pairs
    by_rank = []
    for k in range(1, int(pairs.rank.max()) + 1 if len(pairs.rank) and not inputs.unranked
                   else 1):
        at = pairs.rank == k
        rc = Confusion.of_arrays(pairs.human[at], pairs.judge[at])
        if rc.n:
            by_rank.append(RankRow(k, rc, {"percent": percent_agreement(rc),
                                           "cohen_kappa": cohen_kappa(rc),
                                           "gwet_ac1": gwet_ac1(rc)}))
    looser = sums.columns.get("fp", np.zeros(0))
    stricter = sums.columns.get("fn", np.zeros(0))
    return McNemar.of(looser.astype(int).tolist(), stricter.astype(int).tolist()), by_rank


def data(_: Inputs, est: Estimates, made: tuple[McNemar, list[RankRow]]) -> dict[str, Any]:
    """The chunk statistics with their intervals."""
    test, by_rank = made
    c = Confusion(*(int(est.totals[k]) for k in COUNTS))
    stats = {key: chunk_stat(est, c, key) for key in CHUNK_STATISTICS}
    return {"chunks": ChunkSection(c, stats, wilson_interval(c.agreements, c.n),
                                   direction(c, test.cluster_p.value), test,
                                   kappa_paradox_note(c), by_rank)}


SECTION = Section("chunks", blocks, json, headline, prepare, data)
