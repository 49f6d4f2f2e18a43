"""People: each person's decisions, pace, agreement with the judge and attention checks; and
anchoring, blind answers against pre-filled labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING, action_code
from annotator.report.blocks import Block, Grid
from annotator.report.cells import value, with_interval
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section, prepared_as
from annotator.scoring import checks
from annotator.scoring.checks import CheckScore
from annotator.stats.bootstrap import ClusterSums
from annotator.stats.chunk_agreement import ChunkAgreement, Confusion, cohen_kappa, percent_agreement
from annotator.stats.comparison import BlindSummary
from annotator.stats.stat import Stat


@dataclass(frozen=True, slots=True)
class AnnotatorRow:
    """One person's behaviour: acceptance, speed, agreement with the judge."""

    annotator: str
    chunks_decided: int
    shown_judge: int
    """Decisions made with the judge's verdict on screen (not blind, not imported)."""
    stats: dict[str, Stat]
    longest_fast_accept_run: int
    warning: str | None
    checks: int = 0
    """Attention-check chunks with a settled truth the person answered 0 or 1."""


@dataclass(frozen=True, slots=True)
class BlindRow:
    """Anchoring: agreement on blind answers versus pre-filled labels."""

    blind_chunks: int
    prefilled_chunks: int
    blind: dict[str, Stat]
    prefilled: dict[str, Stat]
    disagreed_blind: int
    switched_to_judge: int
    switch_rate: Stat


@dataclass(frozen=True, slots=True)
class PeopleSection:
    """Per-annotator behaviour and, where there are blind labels, anchoring."""

    annotators: list[AnnotatorRow]
    blind: BlindRow | None


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


FAST_ACCEPT_MS = 1500.0
"""An accept faster than this is too quick to have read the chunk."""
RUBBER_STAMP_RUN = 20
"""This many fast accepts in a row earns a rubber-stamping warning."""
SHOWN_ACTIONS = ("accept", "flip", "set")
"""Decisions made with the judge's verdict on screen (an import shows nothing)."""


def prepare(inputs: Inputs, columns: Columns, _: ClusterSums) -> PeopleSection:
    """How each person labelled: acceptance, speed, rubber-stamping, agreement, checks; and
    blind answers against pre-filled ones."""
    said = columns.said
    scores = checks.scores(inputs.session)
    rows = []
    accepted_code, shown_codes = action_code("accept"), [action_code(a) for a in SHOWN_ACTIONS]
    for name, labels in columns.people.items():
        decided = labels.decided
        shown = (decided & (labels.shown != MISSING) & (labels.blind == MISSING)
                 & np.isin(labels.action, shown_codes))
        accepted = int((shown & (labels.verdict == labels.shown)).sum())
        times = labels.decision_ms[decided & ~np.isnan(labels.decision_ms)]
        # Fast accepts in a row, in the order the person made their decisions.
        ordered = labels.order[decided[labels.order]]
        fast = ((labels.action[ordered] == accepted_code)
                & (labels.decision_ms[ordered] < FAST_ACCEPT_MS))
        longest = _longest_run(fast)
        both = decided & (said.verdict != MISSING)
        agreement = Confusion.of_arrays(labels.verdict[both], said.verdict[both])
        score = scores.get(name, CheckScore(0, 0))
        warnings = [f"{longest} accepts in a row, each under {FAST_ACCEPT_MS / 1000:g} s: "
                    "check these were read, not rubber-stamped."
                    if longest >= RUBBER_STAMP_RUN else None,
                    score.warning(inputs.options.checks_min)]
        n_shown = int(shown.sum())
        rows.append(AnnotatorRow(
            name, int(decided.sum()), n_shown,
            {"acceptance_rate": Stat(accepted / n_shown) if n_shown else Stat.undefined(
                "judge never shown: no decision was made with its verdict on screen"),
             "median_decision_ms": Stat(float(np.median(times))) if len(times) else
             Stat.undefined("not timed: no decision was made on the annotation screen"),
             "percent": percent_agreement(agreement),
             "cohen_kappa": cohen_kappa(agreement),
             "check_accuracy": score.accuracy},
            longest, " ".join(w for w in warnings if w) or None, score.answered))
    mine = columns.mine
    blind = BlindSummary.of_columns(
        *(np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8) for parts in (
            [side.human for side in mine], [said.verdict for _ in mine],
            [side.blind for side in mine])))
    blind_row = None
    if blind.blind_chunks:
        def pick(a: ChunkAgreement) -> dict[str, Stat]:
            return {"percent": a.percent, "cohen_kappa": a.cohen_kappa}

        blind_row = BlindRow(blind.blind_chunks, blind.prefilled_chunks, pick(blind.blind_agreement),
                             pick(blind.prefilled_agreement), blind.disagreed_blind,
                             blind.switched_to_judge, blind.switch_rate)
    return PeopleSection(rows, blind_row)


def _longest_run(flags: np.ndarray) -> int:
    """The length of the longest run of True."""
    if not flags.any():
        return 0
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


SECTION = Section("people", blocks, json, headline, prepare, prepared_as("people"))
