"""Mean context precision under a stratified or active sample (annotator sample --design)."""

from __future__ import annotations

import math
import statistics
from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import stat_rows, stopping, system_rows
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section, prepared_as
from annotator.scoring.sampling import design_section
from annotator.stats.bootstrap import ClusterSums
from annotator.stats.designs import DesignSection

DESIGN_WORDS = {
    "stratified": "Stratified PPI++: the judge's mean in each stratum (its CP quartile, per "
                  "system) corrected by that stratum's labelled goldens, weighted by the "
                  "stratum's share of the goldens; valid because each stratum's goldens were "
                  "drawn at random, in the allocation stored with the sample.",
    "active": "Inverse-probability-weighted PPI++: each draw picked a golden with a known "
              "probability (higher where the judge was expected to err), and each labelled "
              "draw is weighted by one over it, so the estimate stays unbiased.",
}


def blocks(report: Report) -> list[Block]:
    """The design's estimates, and how far it is from its target width."""
    if (design := report.design) is None:
        return []
    return [Grid(
        "design", f"Mean context precision under the {design.design} sample",
        ["estimate", "value", "95% CI"],
        stat_rows(design.stats) + system_rows(design.systems),
        [f"{design.labelled} of the {design.sampled} goldens drawn are labelled"
         + (" (active: the draws up to the first golden not yet labelled)"
            if design.design == "active" else "") + ".",
         DESIGN_WORDS[design.design],
         "False-positive and false-negative rates are per chunk over every golden, each "
         "labelled golden weighted by one over its chance of being drawn (linearised "
         "intervals).",
         *stopping(design.stats["ppi_plus_plus"], design.labelled, report.target_width)])]


def json(report: Report) -> dict[str, Any]:
    """The design object (null without a stratified or active sample)."""
    if (d := report.design) is None:
        return {"design": None}
    return {"design": {
        "design": d.design, "sampled": d.sampled, "labelled": d.labelled,
        **stats_dict(d.stats), "systems": stats_dict(d.systems),
        "target_width": d.target, "half_width": d.half_width, "more_needed": d.more}}


def headline(report: Report) -> list[str]:
    """The design's mean against the judge's own, and how many more goldens the target needs."""
    if (design := report.design) is None or (
            best := design.stats["ppi_plus_plus"]).value is None:
        return []
    low, high = best.interval or (best.value, best.value)
    return [f"Mean CP under the {design.design} sample ({design.labelled} goldens "
            f"labelled): {best.value:.4f} (95% CI {low:.4f} to {high:.4f}), against "
            f"{design.stats['judge_only'].format(4)} from the judge alone" + (
                "; the target width is reached." if design.more == 0 else
                f"; about {design.more:,} more goldens for +-{design.target:g}.")]


def prepare(inputs: Inputs, _: Columns, __: ClusterSums) -> DesignSection | None:
    """The estimates a stratified or active sample allows (annotator.scoring.sampling): people's CP
    per labelled golden (the mean over label sets), the judge's on every golden it judged."""
    if inputs.sample is None or not inputs.designed or inputs.unranked:
        return None
    human: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for row in inputs.rows:
        human.setdefault(row.golden_id, []).append(row.human)
        tally = counts.setdefault(row.golden_id, [0, 0, 0, 0])
        for h, j in zip(row.human_verdicts, row.judge_verdicts, strict=True):
            tally[0] += int(h == 0 and j == 1)
            tally[1] += int(h == 0)
            tally[2] += int(h == 1 and j == 0)
            tally[3] += int(h == 1)
    judge = {g: cp for g, cp in zip(inputs.golden_ids, inputs.cp_judge.tolist(), strict=True)
             if not math.isnan(cp)}
    return design_section(inputs.sample, {g: statistics.fmean(v) for g, v in human.items()},
                          judge, {g: (a, b, c, d) for g, (a, b, c, d) in counts.items()},
                          inputs.options.pass_mark, inputs.options.target_width)


SECTION = Section("design", blocks, json, headline, prepare, prepared_as("design"))
