"""The report as JSON-ready data, with stable keys (bumped with SCHEMA_VERSION when they change).

A statistic is a number or null; beside each group of statistics, ``ci95`` holds the bootstrap
intervals and ``why_undefined`` the reason for every null.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from annotator.formats import csv_cell
from annotator.jsonout import Each
from annotator.probes import KINDS, ProbeRate
from annotator.report.model import GoldenRow, Report
from annotator.stats.chunk_agreement import Confusion
from annotator.stats.multiple import ALPHA
from annotator.stats.stat import Stat

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard
    from annotator.stats.raters import PairAgreement

SCHEMA_VERSION = 1


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


def _confusion(c: Confusion) -> dict[str, int]:
    return {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn}


def _golden(row: GoldenRow) -> dict[str, Any]:
    return {"golden_id": row.golden_id, "annotator": row.annotator, "human": row.human,
            "judge": row.judge, "difference": row.difference, "passes_human": row.passes_human,
            "passes_judge": row.passes_judge, "human_verdicts": list(row.human_verdicts),
            "judge_verdicts": list(row.judge_verdicts)}


def report_dict(report: Report) -> dict[str, Any]:
    """Every number of the report as plain JSON-ready data."""
    c, g = report.chunks, report.goldens
    m = c.mcnemar
    agreement = {
        "n": c.confusion.n,
        # Chunks someone answered unsure: never counted as 0 or 1, so left out of n.
        "unsure_left_out": sum(a.chunks_unsure for a in report.coverage.annotators),
        **stats_dict(c.stats),
        "confusion": _confusion(c.confusion),
        "percent_wilson95": list(c.wilson) if c.wilson else None,
        "direction": c.direction,
        "kappa_ac1_note": c.note,
        "mcnemar": {"looser_fp": m.looser, "stricter_fn": m.stricter,
                    **stats_dict({"cluster_chi2": m.cluster_statistic, "cluster_p": m.cluster_p,
                                  "exact_p_iid": m.exact_p})},
        "by_rank": [{"rank": r.rank, "n": r.confusion.n, "confusion": _confusion(r.confusion),
                     **stats_dict(r.stats)} for r in c.by_rank],
    }
    context_precision = {
        "goldens": g.goldens,
        **stats_dict(g.stats),
        "no_relevant_chunk": g.no_relevant,
        "per_golden": Each(g.per_golden, _golden),
        "verdict_changes": Each(g.verdict_changes, _golden),
        "worst": [{**_golden(w.row), "question": w.question} for w in g.worst],
    }
    systems = None
    if (s := report.systems) is not None:
        systems = {
            "key": s.key,
            "systems": [{"system": r.system, "goldens": r.goldens, "rank_human": r.rank_human,
                         "rank_judge": r.rank_judge,
                         **stats_dict({"mean_human": r.mean_human, "mean_judge": r.mean_judge})}
                        for r in s.systems],
            **stats_dict({"kendall_tau_b": s.kendall, "tau_ap": s.tau_ap}),
            "best_human": s.best_human, "best_judge": s.best_judge,
            "same_best": s.best_human == s.best_judge,
            "separated_pairs": [[p.first, p.second] for p in s.separated],
            "pairs": [{"first": p.first, "second": p.second, "swapped": p.swapped,
                       "significant_human": p.significant_human,
                       "significant_judge": p.significant_judge,
                       **stats_dict({"difference_human": p.difference_human,
                                     "difference_judge": p.difference_judge})}
                      for p in s.pairs],
            "swapped_pairs": [[p.first, p.second] for p in s.swapped],
        }
    people = report.people
    blind = None
    if (b := people.blind) is not None:
        blind = {"blind_chunks": b.blind_chunks, "prefilled_chunks": b.prefilled_chunks,
                 "blind": stats_dict(b.blind), "prefilled": stats_dict(b.prefilled),
                 "disagreed_blind": b.disagreed_blind, "switched_to_judge": b.switched_to_judge,
                 **stats_dict({"switch_rate": b.switch_rate})}
    confidence = None
    if (conf := report.confidence) is not None:
        confidence = {"chunks": conf.chunks, **stats_dict(conf.stats),
                      "ece_conventions": conf.ece_conventions,
                      "reliability": [{"low": b.low, "high": b.high, "chunks": b.chunks,
                                       "mean_p": b.mean_p, "human_rate": b.human_rate}
                                      for b in conf.bins]}
    raters = None
    if (team := report.raters) is not None:
        def pairs(items: list[PairAgreement]) -> list[dict[str, Any]]:
            return [{"first": p.first, "second": p.second, "chunks": p.chunks,
                     **stats_dict({"cohen_kappa": p.kappa})} for p in items]

        raters = {"annotators": team.people, "judge": team.judge,
                  "shared_chunks": team.shared_chunks, "complete_chunks": team.complete_chunks,
                  **stats_dict(team.stats), "pairs": pairs(team.pairs),
                  "judge_vs_annotator": pairs(team.judge_vs), "ceiling": team.ceiling}
    ppi = None
    if (p := report.ppi) is not None:
        ppi = {"sampled": p.sampled, "labelled": p.labelled, "unlabelled": p.unlabelled,
               **stats_dict({**p.stats, "lambda": p.lam,
                             "effective_labelled": p.effective_labelled}),
               "systems": stats_dict(p.systems)}
    cov = report.coverage
    return {
        "schema_version": SCHEMA_VERSION,
        "session": report.session,
        "judge": report.judge,
        "annotators": report.annotators,
        "pass_mark": report.pass_mark,
        "convention": report.convention,
        "bootstrap": {"resamples": report.resamples, "seed": report.seed, "level": 0.95,
                      "unit": "golden", "dropped_replicates": report.dropped_replicates},
        "headline": report.headline,
        "coverage": {
            "goldens": cov.goldens, "chunks": cov.chunks, "chunks_judged": cov.chunks_judged,
            "goldens_judged": cov.goldens_judged, "compared_chunks": cov.compared_chunks,
            "compared_goldens": cov.compared_goldens, "distinct_chunks": cov.distinct_chunks,
            "from_goldens": cov.from_goldens, "distinct_complete": cov.distinct_complete,
            "annotators": [{"annotator": a.annotator, "chunks_decided": a.chunks_decided,
                            "goldens_complete": a.goldens_complete,
                            "chunks_unsure": a.chunks_unsure,
                            "goldens_unsure": a.goldens_unsure} for a in cov.annotators],
        },
        "agreement": agreement,
        "context_precision": context_precision,
        "systems": systems,
        "top_k": None if report.top_k is None else {
            "keep": report.top_k.keep,
            "smallest_k": [{"system": system, "human": h, "judge": j}
                           for system, (h, j) in report.top_k.smallest.items()],
            "rows": [{"system": r.system, "k": r.k,
                      **stats_dict({"cp_human": r.cp_human, "cp_judge": r.cp_judge,
                                    "precision_human": r.precision_human,
                                    "precision_judge": r.precision_judge,
                                    "lost_human": r.lost_human, "lost_judge": r.lost_judge})}
                     for r in report.top_k.rows]},
        "reranking": [{"system": r.system, "goldens": r.goldens,
                       **stats_dict({"mean_cp_retrieved": r.retrieved, "mean_cp_ceiling": r.ceiling,
                                     "mean_cp_judge_order": r.judge,
                                     "captured_share": r.captured})}
                      for r in report.reranking],
        "errors": None if report.errors is None else {
            "tests": report.errors.tests, "family_alpha": ALPHA, "correction": "holm",
            "slices": [{"dimension": e.dimension, "slice": e.label, "chunks": e.chunks,
                        **stats_dict({"fp_rate": e.fp_rate, "fp_rate_rest": e.fp_rest,
                                      "fn_rate": e.fn_rate, "fn_rate_rest": e.fn_rest}),
                        "fp_p": e.fp_p, "fn_p": e.fn_p, "fp_finding": e.fp_finding,
                        "fn_finding": e.fn_finding} for e in report.errors.slices]},
        "probes": probes_dict(report.probes),
        "reasons": {"accepted": report.reasons.accepted, "marked_wrong": report.reasons.wrong,
                    **stats_dict({"rate": report.reasons.rate})},
        "people": {
            "annotators": [{"annotator": a.annotator, "chunks_decided": a.chunks_decided,
                            "shown_judge": a.shown_judge, "checks_answered": a.checks,
                            "longest_fast_accept_run": a.longest_fast_accept_run,
                            "warning": a.warning, **stats_dict(a.stats)}
                           for a in people.annotators],
            "blind": blind,
        },
        "confidence": confidence,
        "confidence_gaps": report.confidence_gaps,
        "inter_annotator": raters,
        "ppi": ppi,
        "design": None if (d := report.design) is None else {
            "design": d.design, "sampled": d.sampled, "labelled": d.labelled,
            **stats_dict(d.stats), "systems": stats_dict(d.systems),
            "target_width": d.target, "half_width": d.half_width, "more_needed": d.more},
    }


def leaderboard_dict(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as plain JSON-ready data."""
    return {
        "schema_version": SCHEMA_VERSION,
        "session": board.session,
        "truth": {"source": board.truth.source, "adjudicated": board.truth.adjudicated,
                  "pending_adjudication": board.truth.pending},
        "split": board.split,
        "chunks": board.chunks,
        "goldens": board.goldens,
        "bootstrap": {"resamples": board.resamples, "seed": board.seed, "level": 0.95,
                      "unit": "golden", "paired": True},
        "sort": board.sort,
        "best": board.best,
        "headline": board.headline,
        "pairwise": board.pairwise,
        "left_out": board.left_out,
        "excluded_goldens": board.excluded,
        "group_by": board.group_by,
        "judges": [{"judge": row.judge, "chunks": row.chunks, "goldens": row.goldens,
                    "best_system_human": row.best_system[0] if row.best_system else None,
                    "best_system_judge": row.best_system[1] if row.best_system else None,
                    **stats_dict(row.stats),
                    "probes": probes_dict(row.probes.values()),
                    "prompt": row.calls.style, "examples": row.calls.examples,
                    "calls": row.calls.calls, "failed_calls": row.calls.failed,
                    **{f"call_{k}": v for k, v in stats_dict(row.calls.figures).items()},
                    "unstable_chunks": [{"golden_id": g, "rank": rank, "verdicts": said}
                                        for g, rank, said in row.calls.unstable]}
                   for row in board.judges],
        "judge_agreement": [{"first": a.first, "second": a.second, "chunks": a.chunks,
                             **stats_dict({"cohen_kappa": a.kappa})} for a in board.agreement],
        "pairs": [{"first": p.first, "second": p.second, "chunks": p.chunks,
                   "first_only_right": p.first_only_right,
                   "second_only_right": p.second_only_right, "better": p.better,
                   **stats_dict({"kappa_difference": p.kappa_difference, "mcnemar_p": p.p,
                                 "holm_p": p.p_holm})} for p in board.pairs],
    }


def write_leaderboard_csv(board: Leaderboard, out: IO[str]) -> None:
    """One row per judge: every statistic with its interval, and the cost of its calls."""
    from annotator.report.leaderboard import CALL_FIGURES

    keys = list(board.judges[0].stats) if board.judges else []
    names = [row.judge for row in board.judges]
    kappa = {(a.first, a.second): a.kappa.value for a in board.agreement}
    kappa.update({(a.second, a.first): a.kappa.value for a in board.agreement})
    writer = csv.writer(out, lineterminator="\n")
    kinds = [k for k in KINDS if any(k in row.probes for row in board.judges)]
    writer.writerow(["judge", "prompt", "examples",
                     *(f"{k}{part}" for k in keys for part in ("", "_low", "_high")),
                     *(f"probe_{k}{part}" for k in kinds for part in ("", "_low", "_high")),
                     "calls", "failed_calls", *CALL_FIGURES,
                     *(csv_cell(f"kappa_with_{name}") for name in names)])
    for row in board.judges:
        cells: list[object] = [csv_cell(row.judge), csv_cell(row.calls.style),
                               row.calls.examples]
        probed = [row.probes[k].rate if k in row.probes else Stat.undefined("not probed")
                  for k in kinds]
        for stat in [*(row.stats[k] for k in keys), *probed]:
            low, high = stat.interval or ("", "")
            cells += ["" if stat.value is None else stat.value, low, high]
        calls = row.calls
        cells += [calls.calls, calls.failed] + [
            "" if (v := calls.figures[k].value) is None else v for k in CALL_FIGURES]
        cells += ["" if other == row.judge or (v := kappa.get((row.judge, other))) is None
                  else v for other in names]
        writer.writerow(cells)
