"""Mean context precision corrected by a uniform random sample of people's labels (PPI++)."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import stat_rows, stopping, system_rows, value
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section


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


SECTION = Section("ppi", blocks, json, headline)
