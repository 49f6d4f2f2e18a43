"""Judge confidence: how well the judge's P(relevant) predicts people's labels (Brier, ECE,
AUROC) and its reliability diagram; and the verdicts left without one, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.cells import stat_rows
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats import confidence
from annotator.stats.bootstrap import ClusterSums, Estimates
from annotator.stats.confidence import BINS, ReliabilityBin
from annotator.stats.stat import Stat


@dataclass(frozen=True, slots=True)
class ConfidenceSection:
    """Calibration of the judge's P(relevant) against human labels."""

    chunks: int
    stats: dict[str, Stat]
    ece_conventions: dict[str, str]
    bins: list[ReliabilityBin]


@dataclass(frozen=True, slots=True)
class Calibration:
    """The section's data: the calibration (None: no verdict carries P(relevant)), and why
    verdicts in force carry none -> how many."""

    section: ConfidenceSection | None
    gaps: dict[str, int]


def blocks(report: Report) -> list[Block]:
    """The confidence statistics and bins; the gaps in a paragraph."""
    out: list[Block] = []
    if (conf := report.confidence) is not None:
        out.append(Grid("confidence", f"Judge confidence: P(relevant) on {conf.chunks} chunks",
                        ["statistic", "value", "95% CI"], stat_rows(conf.stats),
                        [f"ECE {name}: {text}." for name, text in conf.ece_conventions.items()]))
        out.append(Grid(
            "reliability", f"Reliability ({BINS} equal-width bins on P(relevant))",
            ["bin", "chunks", "mean P(relevant)", "human relevant rate"],
            [[f"{b.low:.1f}-{b.high:.1f}", str(b.chunks),
              "-" if b.mean_p is None else f"{b.mean_p:.3f}",
              "-" if b.human_rate is None else f"{b.human_rate:.3f}"] for b in conf.bins]))
    if report.confidence_gaps:
        out.append(Paragraphs("confidence_gaps", "Verdicts without P(relevant)", [
            f"{sum(report.confidence_gaps.values())} of the judge's verdicts carry no "
            "P(relevant) although logprobs were asked for; none is stored rather than a wrong "
            "one: " + "; ".join(f"{count} because {why}"
                                for why, count in report.confidence_gaps.items()) + "."]))
    return out


def json(report: Report) -> dict[str, Any]:
    """The confidence object (null without P(relevant)) and the confidence gaps."""
    confidence = None
    if (conf := report.confidence) is not None:
        confidence = {"chunks": conf.chunks, **stats_dict(conf.stats),
                      "ece_conventions": conf.ece_conventions,
                      "reliability": [{"low": b.low, "high": b.high, "chunks": b.chunks,
                                       "mean_p": b.mean_p, "human_rate": b.human_rate}
                                      for b in conf.bins]}
    return {"confidence": confidence, "confidence_gaps": report.confidence_gaps}


def prepare(inputs: Inputs, _: Columns, sums: ClusterSums) -> None:
    """The calibration columns, on the compared chunks whose verdict carries P(relevant)."""
    pairs = inputs.pairs
    has_p = ~np.isnan(pairs.p)
    if has_p.any():
        confidence.add_columns(sums, pairs.cluster[has_p], pairs.p[has_p],
                               pairs.human[has_p].astype(float))


def data(inputs: Inputs, est: Estimates, _: None) -> dict[str, Any]:
    """How well the judge's P(relevant) is calibrated against people's labels, and why verdicts
    carry none."""
    gaps = inputs.session.confidence_gaps(inputs.judge)
    has_p = ~np.isnan(inputs.pairs.p)
    if not has_p.any():
        return {"confidence": Calibration(None, gaps)}
    p, y = inputs.pairs.p[has_p], inputs.pairs.human[has_p]
    auroc = confidence.auroc(p, y)
    stats = {
        "brier": est.stat("brier", confidence.brier),
        "log_loss": est.stat("log_loss", confidence.log_loss),
        "ece_class1": est.stat("ece_class1", confidence.ece_class1),
        "ece_top_label": est.stat("ece_top_label", confidence.ece_top_label),
        "auroc": Stat(auroc) if auroc is not None else Stat.undefined(
            "the human labels on these chunks are all one class"),
    }
    return {"confidence": Calibration(ConfidenceSection(int(has_p.sum()), stats,
                                                        dict(confidence.ECE_CONVENTIONS),
                                                        confidence.reliability(est.totals)),
                                      gaps)}


SECTION = Section("confidence", blocks, json, prepare=prepare, data=data)
