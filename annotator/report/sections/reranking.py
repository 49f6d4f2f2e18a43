"""Reranking: what these chunks score under people's labels as retrieved, in people's order
(the ceiling) and in the judge's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.report.blocks import Block, Grid
from annotator.report.cells import with_interval
from annotator.report.inputs import NO_COMPLETE_GOLDEN, Columns, Inputs, add_per_golden, zero_columns
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column
from annotator.stats.reranking import captured, reordered_cp
from annotator.stats.stat import Stat, ratio


@dataclass(frozen=True, slots=True)
class RerankRow:
    """What reordering the chunks could buy, over all goldens or one system's, scored under
    people's labels (annotator.stats.reranking)."""

    system: str | None
    """None: every golden."""
    goldens: int
    retrieved: Stat
    """Mean CP in the retriever's order."""
    ceiling: Stat
    """Mean CP with people's useful chunks first: the most any reranker can reach."""
    judge: Stat
    """Mean CP in the judge's order (its verdict, then its P(relevant), then the rank)."""
    captured: Stat
    """The share of the ceiling's gain over the retrieved order that the judge's order gains."""


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


RERANK_ORDERS = ("ret", "ceil", "judge")
"""The orders a golden's chunks are scored in: as retrieved, people's, the judge's."""


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> None:
    """Per golden complete under both label sets (per label set compared): CP under people's
    labels as retrieved, in people's order and in the judge's (annotator.stats.reranking)."""
    if inputs.unranked:
        return
    frame, said, scopes = columns.frame, columns.said, inputs.scopes
    zero_columns(sums, [column(name, scope_name) for scope_name, _ in scopes
                        for name in ("rr_n", *(f"rr_{order}" for order in RERANK_ORDERS))])
    for side in columns.sides:
        complete = ~np.isnan(side.cp) & ~np.isnan(inputs.cp_judge)
        scored = {
            "ret": side.cp,
            "ceil": reordered_cp(side.human, frame.cluster, frame.rank, frame.sizes, side.human),
            "judge": reordered_cp(side.human, frame.cluster, frame.rank, frame.sizes,
                                  said.verdict, said.p_relevant),
        }
        for scope_name, scope in scopes:
            mine = complete & scope
            add_per_golden(sums, column("rr_n", scope_name), mine)
            for order in RERANK_ORDERS:
                add_per_golden(sums, column(f"rr_{order}", scope_name), mine, scored[order])


def data(inputs: Inputs, est: Estimates, _: None) -> dict[str, Any]:
    """Every golden's reranking figures, then each system's (none on an unranked pool)."""
    out: list[RerankRow] = []
    if inputs.unranked:
        return {"reranking": out}
    for name in inputs.scope_names:
        goldens = int(est.totals[column("rr_n", name)])
        none = None if goldens else NO_COMPLETE_GOLDEN

        def mean(order: str, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: ratio(s[column(f"rr_{order}", name)], s[column("rr_n", name)])

        retrieved, ceiling, judge = orders = [mean(order) for order in RERANK_ORDERS]

        def share(s: Sums, orders: list[Callable[[Sums], np.ndarray]] = orders) -> np.ndarray:
            return captured(*(order(s) for order in orders))

        def key(stat: str, name: str = name) -> str:  # every golden's, or a system's
            return column(stat, name) if name else stat

        gained = est.stat(key("rerank_captured"), share, none)
        if none is None and gained.value is None:
            gained = Stat.undefined("the chunks are already in people's order: nothing to gain")
        out.append(RerankRow(name or None, goldens,
                             est.stat(key("rerank_retrieved"), retrieved, none),
                             est.stat(key("rerank_ceiling"), ceiling, none),
                             est.stat(key("rerank_judge"), judge, none), gained))
    return {"reranking": out}


SECTION = Section("reranking", blocks, json, headline, prepare, data)
