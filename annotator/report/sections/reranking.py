"""Reranking: what these chunks score under people's labels as retrieved, in people's order
(the ceiling) and in the judge's."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import with_interval
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.stat import Stat


def blocks(report: Report) -> list[Block]:
    """One row per system (and every system)."""
    if not report.reranking or not report.reranking[0].goldens:
        return []
    return [Grid(
        "reranking", "Reranking these chunks, scored under people's labels",
        ["goldens of", "goldens", "mean CP as retrieved", "ceiling (people's order)",
         "judge's order", "share of the gain the judge captures"],
        [[r.system or "every system", str(r.goldens), with_interval(r.retrieved),
          with_interval(r.ceiling), with_interval(r.judge), with_interval(r.captured)]
         for r in report.reranking],
        ["The ceiling puts people's useful chunks first: the most any reranker can reach on "
         "these chunks. The judge's order sorts by its verdict, then its P(relevant) where it "
         "gives one, then the retriever's rank."])]


def json(report: Report) -> dict[str, Any]:
    """The reranking list."""
    return {"reranking": [{"system": r.system, "goldens": r.goldens,
                           **stats_dict({"mean_cp_retrieved": r.retrieved,
                                         "mean_cp_ceiling": r.ceiling,
                                         "mean_cp_judge_order": r.judge,
                                         "captured_share": r.captured})}
                          for r in report.reranking]}


def _share(stat: Stat) -> str:
    """A share's interval as percentages, in brackets ('' without one)."""
    if stat.interval is None:
        return ""
    low, high = stat.interval
    return f" (95% CI {low:.0%} to {high:.0%})"


def reranking_sentence(retrieved: float | None, judged: float | None, ceiling: float | None,
                       captured: Stat) -> str:
    """The judge as a reranker in one sentence: a share of the way to the ceiling only when it
    is one (0-100%); an order that makes CP worse, or overshoots, said as what it is."""
    move = f"the judge would take mean CP from {retrieved:.4f} to {judged:.4f}"
    share = captured.value or 0.0
    if share < 0:
        return (f"As a reranker of these chunks, {move}: its order makes CP worse than the "
                f"retriever's (a perfect reranker reaches {ceiling:.4f}){_share(captured)}.")
    if share > 1:
        return (f"As a reranker of these chunks, {move}, past the {ceiling:.4f} people's own "
                f"order reaches{_share(captured)}.")
    return (f"As a reranker of these chunks, {move}, {share:.0%} of the way to the "
            f"{ceiling:.4f} a perfect reranker reaches{_share(captured)}.")


def headline(report: Report) -> list[str]:
    """The judge as a reranker, over every system."""
    if not report.reranking or (every := report.reranking[0]).captured.value is None:
        return []
    return [reranking_sentence(every.retrieved.value, every.judge.value, every.ceiling.value,
                               every.captured)]


SECTION = Section("reranking", blocks, json, headline)
