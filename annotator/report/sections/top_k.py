"""Top-k: each golden cut to its first k chunks, under both label sets (--top-k)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.report.blocks import Block, Grid
from annotator.report.cells import k_text, with_interval
from annotator.report.inputs import NO_COMPLETE_GOLDEN, Columns, Inputs, add_per_golden, zero_columns
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column
from annotator.stats.stat import Stat, ratio
from annotator.stats.topk import first_k, smallest_k


@dataclass(frozen=True, slots=True)
class TopKRow:
    """Goldens cut to their first k chunks, over every golden or one system's, under both
    label sets (annotator.stats.topk)."""

    system: str | None
    """None: every golden."""
    k: int
    cp_human: Stat
    cp_judge: Stat
    precision_human: Stat
    precision_judge: Stat
    lost_human: Stat
    """The share of people's relevant chunks the cut leaves out."""
    lost_judge: Stat
    """The share of the judge's relevant chunks the cut leaves out."""


@dataclass(frozen=True, slots=True)
class TopKSection:
    """How many chunks to keep, and whether the judge would keep as many as people."""

    keep: float
    """The share of relevant chunks a cut must keep."""
    rows: list[TopKRow]
    smallest: dict[str | None, tuple[int | None, int | None]]
    """Per system (None: every golden): the smallest k keeping ``keep`` of the relevant
    chunks under people's labels, and under the judge's."""


def blocks(report: Report) -> list[Block]:
    """CP@k, P@k and the relevant chunks lost, for every k."""
    if (t := report.top_k) is None:
        return []
    return [Grid(
        "top_k", "Top-k: each golden cut to its first k chunks",
        ["goldens of", "k", "CP@k human", "CP@k judge", "P@k human", "P@k judge",
         "relevant lost, human", "relevant lost, judge"],
        [[r.system or "every system", str(r.k), with_interval(r.cp_human),
          with_interval(r.cp_judge), with_interval(r.precision_human),
          with_interval(r.precision_judge), with_interval(r.lost_human),
          with_interval(r.lost_judge)] for r in t.rows],
        [f"Smallest k keeping {t.keep:.0%} of the relevant chunks, under people's labels / "
         "the judge's: " + "; ".join(
             f"{system or 'every system'} {k_text(h)} / {k_text(j)}"
             for system, (h, j) in t.smallest.items()) + "."])]


def json(report: Report) -> dict[str, Any]:
    """The top_k object (null without --top-k)."""
    if (t := report.top_k) is None:
        return {"top_k": None}
    return {"top_k": {
        "keep": t.keep,
        "smallest_k": [{"system": system, "human": h, "judge": j}
                       for system, (h, j) in t.smallest.items()],
        "rows": [{"system": r.system, "k": r.k,
                  **stats_dict({"cp_human": r.cp_human, "cp_judge": r.cp_judge,
                                "precision_human": r.precision_human,
                                "precision_judge": r.precision_judge,
                                "lost_human": r.lost_human, "lost_judge": r.lost_judge})}
                 for r in t.rows]}}


def headline(report: Report) -> list[str]:
    """Which k each label set would choose."""
    if report.top_k is None or (pick := report.top_k.smallest.get(None)) is None:
        return []
    k_human, k_judge = pick
    if k_human is None or k_judge is None:
        return []
    return [f"Cutting to the top k: people's labels keep {report.top_k.keep:.0%} of the "
            f"relevant chunks from k = {k_human}, the judge's from k = {k_judge}: " + (
                "the judge would choose the same k." if k_human == k_judge else
                f"the judge would choose {'a smaller' if k_judge < k_human else 'a larger'}"
                " k.")]


TOP_K_FIGURES = ("cp_h", "cp_j", "kept_h", "kept_j", "prec_h", "prec_j")


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> int | None:
    """With ``--top-k``, per golden complete under both label sets and per k: the first k
    chunks' CP, relevant chunks and precision under both; returns the longest golden's length
    (the last k)."""
    if not inputs.options.top_k or inputs.unranked:
        return None
    frame, said, scopes = columns.frame, columns.said, inputs.scopes
    longest = int(frame.sizes.max(initial=0))
    for scope_name, _ in scopes:
        zero_columns(sums, [column(name, scope_name)
                            for name in ("topk_n", "topk_rel_h", "topk_rel_j")])
        zero_columns(sums, [column(f"topk_{figure}", scope_name, k)
                            for figure in TOP_K_FIGURES for k in range(1, longest + 1)])
    for side in columns.sides:
        complete = ~np.isnan(side.cp) & ~np.isnan(inputs.cp_judge)
        relevant = {label: frame.per_golden((verdict == 1).astype(float))
                    for label, verdict in (("h", side.human), ("j", said.verdict))}
        for scope_name, scope in scopes:
            mine = complete & scope
            add_per_golden(sums, column("topk_n", scope_name), mine)
            for label in ("h", "j"):
                add_per_golden(sums, column(f"topk_rel_{label}", scope_name), mine,
                               relevant[label])
        for k in range(1, longest + 1):
            figures: dict[str, np.ndarray] = {}
            for label, verdict in (("h", side.human), ("j", said.verdict)):
                cp, kept = first_k(verdict, frame.cluster, frame.rank, frame.sizes, k)
                figures[f"cp_{label}"], figures[f"kept_{label}"] = cp, kept
                figures[f"prec_{label}"] = kept / k  # trec_eval's P@k: a short list's missing
                # ranks count as not relevant
            for scope_name, scope in scopes:
                for figure in TOP_K_FIGURES:
                    add_per_golden(sums, column(f"topk_{figure}", scope_name, k),
                                   complete & scope, figures[figure])
    return longest


def data(inputs: Inputs, est: Estimates, longest: int | None) -> dict[str, Any]:
    """The cut to the first k chunks, every golden first, then each system's."""
    if longest is None:
        return {"top_k": None}
    rows: list[TopKRow] = []
    smallest: dict[str | None, tuple[int | None, int | None]] = {}
    keep = inputs.options.keep_share
    for name in inputs.scope_names:
        none = None if est.totals[column("topk_n", name)] else NO_COMPLETE_GOLDEN

        def mean(figure: str, k: int, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: ratio(s[column(f"topk_{figure}", name, k)],
                                   s[column("topk_n", name)])

        def lost(label: str, k: int, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: 1.0 - ratio(s[column(f"topk_kept_{label}", name, k)],
                                         s[column(f"topk_rel_{label}", name)])

        def stat(key: str, formula: Callable[[Sums], np.ndarray], k: int, name: str = name,
                 none: str | None = none) -> Stat:
            return est.stat(column(f"topk_{key}", name, k), formula, none)

        for k in range(1, longest + 1):
            rows.append(TopKRow(name or None, k, stat("cp_human", mean("cp_h", k), k),
                                stat("cp_judge", mean("cp_j", k), k),
                                stat("precision_human", mean("prec_h", k), k),
                                stat("precision_judge", mean("prec_j", k), k),
                                stat("lost_human", lost("h", k), k),
                                stat("lost_judge", lost("j", k), k)))

        def least(label: str, name: str = name) -> int | None:
            kept = np.asarray([est.totals[column(f"topk_kept_{label}", name, k)]
                               for k in range(1, longest + 1)], dtype=float)
            return smallest_k(kept, float(est.totals[column(f"topk_rel_{label}", name)]), keep)

        smallest[name or None] = (least("h"), least("j"))
    return {"top_k": TopKSection(keep, rows, smallest)}


SECTION = Section("top_k", blocks, json, headline, prepare, data)
