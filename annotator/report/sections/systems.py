"""Systems (the goldens' retriever, or --group-by): mean CP per system under both label sets,
their rankings, and which pairs each label set tells apart."""

from __future__ import annotations

from typing import Any

from annotator.report.blocks import Block, Grid
from annotator.report.cells import value, with_interval, yes
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.text import counted


def blocks(report: Report) -> list[Block]:
    """The systems, and their pairs."""
    if (s := report.systems) is None:
        return []
    return [
        Grid(
            "systems", f"Systems by metadata '{s.key}'",
            ["system", "goldens", "mean CP human", "mean CP judge", "rank human", "rank judge"],
            [[r.system, str(r.goldens), with_interval(r.mean_human), with_interval(r.mean_judge),
              str(r.rank_human), str(r.rank_judge)] for r in s.systems],
            [f"Kendall tau-b between the two rankings: {value(s.kendall, 3)}; tau_AP of the "
             f"judge's ranking against people's (swaps near the top weigh more): "
             f"{value(s.tau_ap, 3)}.",
             f"Best {s.key}: {s.best_human} under people's labels, {s.best_judge} under the "
             "judge's."]),
        Grid(
            "system_pairs", "System pairs (difference = first - second)",
            ["pair", "difference, human", "difference, judge", "same order", "significant (h/j)"],
            [[f"{p.first} - {p.second}", with_interval(p.difference_human),
              with_interval(p.difference_judge), "no: swapped" if p.swapped else "yes",
              f"{yes(p.significant_human)} / {yes(p.significant_judge)}"] for p in s.pairs]),
    ]


def json(report: Report) -> dict[str, Any]:
    """The systems object (null without systems)."""
    if (s := report.systems) is None:
        return {"systems": None}
    return {"systems": {
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
    }}


def headline(report: Report) -> list[str]:
    """Whether both label sets rank the systems alike and pick the same best one."""
    if (systems := report.systems) is None:
        return []
    lines = []
    swapped = systems.swapped
    if swapped:
        lines.append(f"Ranking {systems.key} values: "
                     f"{counted(len(swapped), 'pair')} swap between label sets ("
                     + "; ".join(f"{s.first} vs {s.second}" for s in swapped) + ").")
    else:
        lines.append(f"Both label sets rank the {systems.key} values the same way.")
    if systems.best_human != systems.best_judge:
        lines.append(f"The judge would pick a different best {systems.key}: "
                     f"{systems.best_judge}, where people's labels pick "
                     f"{systems.best_human}.")
    for pair in systems.separated:
        sees, misses = (("people's labels", "the judge's verdicts") if pair.significant_human
                        else ("the judge's verdicts", "people's labels"))
        lines.append(f"Only {sees} tell {pair.first} and {pair.second} apart (the 95% "
                     f"interval of their difference excludes 0); {misses} do not.")
    return lines


SECTION = Section("systems", blocks, json, headline)
