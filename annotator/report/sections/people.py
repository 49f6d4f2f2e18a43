"""People: each person's decisions, pace, agreement with the judge and attention checks; and
anchoring, blind answers against pre-filled labels."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import value, with_interval
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section


def blocks(report: Report) -> list[Block]:
    """The people table, and the blind-versus-pre-filled one when some chunks were blind."""
    people = report.people
    out: list[Block] = [Grid(
        "people", "People",
        ["annotator", "decided", "with judge shown", "acceptance rate", "median decision ms",
         "agreement", "Cohen's kappa", "longest fast-accept run",
         "attention checks right (Wilson 95%)"],
        [[a.annotator, str(a.chunks_decided), str(a.shown_judge),
          value(a.stats["acceptance_rate"], 3, short=True),
          value(a.stats["median_decision_ms"], 0, short=True),
          value(a.stats["percent"], 3, short=True), value(a.stats["cohen_kappa"], 3, short=True),
          str(a.longest_fast_accept_run),
          f"{with_interval(a.stats['check_accuracy'], 3)} of {a.checks}" if a.checks else "-"]
         for a in people.annotators],
        [a.warning for a in people.annotators if a.warning is not None])]
    if (b := people.blind) is not None:
        out.append(Grid(
            "blind", "Anchoring: blind answers versus pre-filled labels",
            ["", "chunks", "agreement with the judge", "Cohen's kappa"],
            [["blind answers", str(b.blind_chunks), value(b.blind["percent"], 3),
              value(b.blind["cohen_kappa"], 3)],
             ["pre-filled", str(b.prefilled_chunks), value(b.prefilled["percent"], 3),
              value(b.prefilled["cohen_kappa"], 3)]],
            [f"After the reveal, {b.switched_to_judge} of {b.disagreed_blind} blind answers that "
             f"disagreed with the judge were changed to its verdict (switch rate "
             f"{value(b.switch_rate, 3)})."]))
    return out


def json(report: Report) -> dict[str, Any]:
    """The people object."""
    people = report.people
    blind = None
    if (b := people.blind) is not None:
        blind = {"blind_chunks": b.blind_chunks, "prefilled_chunks": b.prefilled_chunks,
                 "blind": stats_dict(b.blind), "prefilled": stats_dict(b.prefilled),
                 "disagreed_blind": b.disagreed_blind, "switched_to_judge": b.switched_to_judge,
                 **stats_dict({"switch_rate": b.switch_rate})}
    return {"people": {
        "annotators": [{"annotator": a.annotator, "chunks_decided": a.chunks_decided,
                        "shown_judge": a.shown_judge, "checks_answered": a.checks,
                        "longest_fast_accept_run": a.longest_fast_accept_run,
                        "warning": a.warning, **stats_dict(a.stats)}
                       for a in people.annotators],
        "blind": blind,
    }}


def headline(report: Report) -> list[str]:
    """A warning about a person (accepting too fast, failing attention checks)."""
    return [f"{row.annotator}: {row.warning}" for row in report.people.annotators if row.warning]


SECTION = Section("people", blocks, json, headline)
