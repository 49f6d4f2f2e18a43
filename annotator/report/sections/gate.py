"""The qualification gate: where each person stands at it, and whose labels it leaves out of
the truth (and out of "everyone"). Shown only on a session with a gate (scoring/gate.py)."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.inputs import Columns, Inputs
from annotator.report.model import Report
from annotator.report.section import Section, prepared_as
from annotator.scoring.gate import Standing, standing
from annotator.stats.bootstrap import ClusterSums


def prepare(inputs: Inputs, _: Columns, __: ClusterSums) -> dict[str, Standing] | None:
    """Everyone's standing at the session's gate; None without one."""
    return standing(inputs.session)


def blocks(report: Report) -> list[Block]:
    """One row per person: their standing, and whether their labels count."""
    people: dict[str, Standing] | None = report.sections.get("gate")
    if people is None:
        return []
    gate = next(iter(people.values())) if people else None
    note = (f"A newcomer answers {gate.needed} attention-check chunks first; their labels count "
            f"toward the truth once {gate.minimum:.0%} of their check answers are right."
            if gate else "Nobody has reached the gate yet.")
    return [Grid("gate", "Qualification gate", ["annotator", "labels count", "standing"],
                 [[name, "yes" if s.counts else "no", s.sentence] for name, s in people.items()],
                 [note])]


def json(report: Report) -> dict[str, Any]:
    """The gate object (absent on a session without a gate)."""
    people: dict[str, Standing] | None = report.sections.get("gate")
    if people is None:
        return {}
    return {"gate": {name: {"status": s.status, "counts": s.counts, "answered": s.answered,
                            "right": s.right, "needed": s.needed, "minimum": s.minimum}
                     for name, s in people.items()}}


def headline(report: Report) -> list[str]:
    """Whose labels the gate leaves out, in one sentence."""
    people: dict[str, Standing] | None = report.sections.get("gate")
    out = [f"{name} ({s.sentence.split(';')[0]})" for name, s in (people or {}).items()
           if not s.counts]
    if not out:
        return []
    return [f"Left out of the truth by the qualification gate: {', '.join(out)}."]


SECTION = Section("gate", blocks, json, headline, prepare, prepared_as("gate"))
