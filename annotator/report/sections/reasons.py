"""Right verdict, wrong reason: how often people accepted the judge's verdict but marked its
reason wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotator.report.blocks import Block, Paragraphs
from annotator.report.cells import with_interval
from annotator.report.inputs import Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import Estimates
from annotator.stats.chunk_agreement import rate
from annotator.stats.stat import Stat
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class ReasonCheck:
    """How often people who accepted the judge's verdict marked its reason wrong."""

    accepted: int
    """Verdicts accepted with the judge's reason on screen."""
    wrong: int
    """Of those, the ones whose reason was marked wrong."""

    @property
    def rate(self) -> Stat:
        """The share of accepted verdicts whose reason was marked wrong (Wilson 95%)."""
        return rate(self.wrong, self.accepted, "no verdict of this judge was accepted yet")


def blocks(report: Report) -> list[Block]:
    """One paragraph, when a reason was marked wrong."""
    reasons = report.reasons
    if not reasons.wrong:
        return []
    return [Paragraphs("reasons", "Right verdict, wrong reason", [
        f"People accepted {counted(reasons.accepted, 'verdict')} of this judge with its "
        f"reason on screen and marked the reason wrong on {reasons.wrong}: "
        f"{with_interval(reasons.rate, 3)} (Wilson 95%, chunks as independent). Those "
        "chunks are left out of the RAGAS annotation export and of --examples, so their "
        "reasoning is not taught."])]


def json(report: Report) -> dict[str, Any]:
    """The reasons object."""
    reasons = report.reasons
    return {"reasons": {"accepted": reasons.accepted, "marked_wrong": reasons.wrong,
                        **stats_dict({"rate": reasons.rate})}}


def data(inputs: Inputs, _: Estimates, __: None) -> dict[str, Any]:
    """How often the people compared marked the judge's reason wrong on a verdict they
    accepted (with ``gold``: everyone)."""
    options = inputs.options
    people = None if options.gold or not options.annotators else list(options.annotators)
    return {"reasons": ReasonCheck(*inputs.session.reason_marks(people).get(inputs.judge,
                                                                            (0, 0)))}


SECTION = Section("reasons", blocks, json, data=data)
