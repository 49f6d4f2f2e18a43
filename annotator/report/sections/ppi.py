"""Mean context precision corrected by a uniform random sample of people's labels (PPI++)."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable
from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import stat_rows, stopping, system_rows, value
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section, prepared_as
from annotator.scoring.grouping import system_values
from annotator.stats.bootstrap import ClusterSums
from annotator.stats.ppi import PpiEstimate, ppi_estimate


def blocks(report: Report) -> list[Block]:
    """The estimates, with lambda and how far the sample is from its target width."""
    if (ppi := report.ppi) is None:
        return []
    return [Grid(
        "ppi", "Mean context precision, corrected by a random sample of people's labels",
        ["estimate", "value", "95% CI"], stat_rows(ppi.stats) + system_rows(ppi.systems),
        [f"{ppi.labelled} of the {ppi.sampled} goldens drawn at random are labelled and "
         f"judged (n); {ppi.unlabelled} other goldens carry the judge's CP only (N).",
         *([f"PPI++ leans on the judge with lambda = {value(ppi.lam, 3)} (0: people only, "
            f"1: plain PPI); its interval is as narrow as people alone would give with "
            f"about {value(ppi.effective_labelled, 0)} labelled goldens."]
           if ppi.lam.value is not None and ppi.effective_labelled.value is not None
           else []),
         "Valid only because the goldens were drawn at random ('annotator annotate "
         "--sample'); the judge's own mean is biased and has no valid interval.",
         *stopping(ppi.stats["ppi_plus_plus"], ppi.labelled, report.target_width)])]


def json(report: Report) -> dict[str, Any]:
    """The ppi object (null without a uniform sample)."""
    if (p := report.ppi) is None:
        return {"ppi": None}
    return {"ppi": {"sampled": p.sampled, "labelled": p.labelled, "unlabelled": p.unlabelled,
                    **stats_dict({**p.stats, "lambda": p.lam,
                                  "effective_labelled": p.effective_labelled}),
                    "systems": stats_dict(p.systems)}}


def headline(report: Report) -> list[str]:
    """The bias-corrected mean beside the judge's own."""
    if report.ppi is None or (best := report.ppi.stats["ppi_plus_plus"]).value is None:
        return []
    judge = report.ppi.stats["judge_only"]
    low, high = best.interval or (best.value, best.value)
    return [f"Bias-corrected mean CP (PPI++, {report.ppi.labelled} goldens drawn at "
            f"random): {best.value:.4f} (95% CI {low:.4f} to {high:.4f}), against "
            f"{judge.format(4)} from the judge alone."]


def prepare(inputs: Inputs, _columns: Columns, _sums: ClusterSums) -> PpiEstimate | None:
    """PPI++ from the session's uniform random sample: human CP on its labelled goldens, judge
    CP on every fully judged golden; the same for the pass rate, and per system (each system's
    goldens of a random sample are a random sample of that system's)."""
    sample = inputs.sample
    if sample is None or inputs.designed or inputs.unranked:
        return None
    pass_mark = inputs.options.pass_mark
    in_sample = set(sample["golden_ids"])
    human: dict[str, list[float]] = {}
    for row in inputs.rows:
        if row.golden_id in in_sample:
            human.setdefault(row.golden_id, []).append(row.human)
    judge = {g: cp for g, cp in zip(inputs.golden_ids, inputs.cp_judge.tolist(), strict=True)
             if not math.isnan(cp)}
    labelled = [g for g in sample["golden_ids"] if g in human and g in judge]
    people = {g: statistics.fmean(human[g]) for g in labelled}

    def estimate(value: Callable[[float], float], keep: Callable[[str], bool]) -> PpiEstimate:
        return ppi_estimate(sum(1 for g in in_sample if keep(g)),
                            [value(people[g]) for g in labelled if keep(g)],
                            [value(judge[g]) for g in labelled if keep(g)],
                            [value(cp) for g, cp in judge.items() if g not in human and keep(g)])

    def passes(x: float) -> float:
        return float(x >= pass_mark - 1e-9)

    def every(_: str) -> bool:
        return True

    def within(name: str) -> Callable[[str], bool]:
        return lambda g: system_of.get(g, "(none)") == name

    overall = estimate(float, every)
    _, system_of = system_values(inputs.session, inputs.options.group_by)
    names = sorted({system_of.get(g, "(none)") for g in judge})
    systems = ({name: estimate(float, within(name)).stats["ppi_plus_plus"] for name in names}
               if len(names) > 1 else {})
    return dataclasses.replace(
        overall, stats={**overall.stats,
                        "pass_rate_ppi": estimate(passes, every).stats["ppi_plus_plus"]},
        systems=systems)


SECTION = Section("ppi", blocks, json, headline, prepare, prepared_as("ppi"))
