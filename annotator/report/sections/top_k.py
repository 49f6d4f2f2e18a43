"""Top-k: each golden cut to its first k chunks, under both label sets (--top-k)."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import k_text, with_interval
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section


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


SECTION = Section("top_k", blocks, json, headline)
