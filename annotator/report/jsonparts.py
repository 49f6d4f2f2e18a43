"""The pieces the report's and the leaderboard's JSON are made of: statistics with their
intervals and reasons, a confusion table, a golden's row, probe rates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from annotator.report.inputs import GoldenRow
from annotator.scoring.probes import ProbeRate
from annotator.stats.chunk_agreement import Confusion
from annotator.stats.stat import Stat

if TYPE_CHECKING:
    from annotator.stats.alt_test import AltTest


def stats_dict(stats: dict[str, Stat]) -> dict[str, Any]:
    """{key: value, ..., "ci95": {key: [low, high]}, "why_undefined": {key: reason}}, and
    "why_no_interval": {key: reason} for values whose interval is undefined (when any is)."""
    out: dict[str, Any] = {key: stat.value for key, stat in stats.items()}
    out["ci95"] = {key: list(stat.interval) for key, stat in stats.items()
                   if stat.interval is not None}
    out["why_undefined"] = {key: stat.reason for key, stat in stats.items() if stat.value is None}
    bare = {key: stat.reason for key, stat in stats.items()
            if stat.value is not None and stat.reason}
    if bare:
        out["why_no_interval"] = bare
    return out


def probes_dict(rates: Iterable[ProbeRate]) -> dict[str, Any]:
    """Kind -> probes with a verdict, those judged useful, and the false-positive rate."""
    return {r.kind: {"probes": r.probes, "useful": r.useful,
                     **stats_dict({"fp_rate": r.rate})} for r in rates}


def confusion_dict(c: Confusion) -> dict[str, int]:
    """A confusion table as its four counts."""
    return {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn}


def golden_dict(row: GoldenRow) -> dict[str, Any]:
    """One golden's CP under both label sets, its pass/fail and its verdicts."""
    return {"golden_id": row.golden_id, "annotator": row.annotator, "human": row.human,
            "judge": row.judge, "difference": row.difference, "passes_human": row.passes_human,
            "passes_judge": row.passes_judge, "human_verdicts": list(row.human_verdicts),
            "judge_verdicts": list(row.judge_verdicts)}


def alt_test_dict(test: AltTest | None) -> dict[str, Any] | None:
    """The alternative annotator test as JSON: its decision and each person's test, or why it
    could not be run."""
    if test is None:
        return None
    out: dict[str, Any] = {"epsilon": test.epsilon, "alpha": test.alpha, "scoring": test.scoring,
                           "items": test.items}
    if test.why is not None:
        return {**out, "why": test.why}
    return {**out, "winning_rate": test.winning_rate,
            "advantage_probability": test.advantage_probability, "passed": test.passed,
            "judge_agreement": test.judge_score, "human_ceiling": test.ceiling,
            "per_annotator": [{"annotator": p.annotator, "items": p.items,
                               "p_value": p.p_value, "rejected": p.rejected,
                               "rho_judge": p.rho_judge, "rho_person": p.rho_person}
                              for p in test.people],
            "skipped": [{"annotator": name, "items": n} for name, n in test.skipped]}
