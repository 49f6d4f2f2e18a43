"""Systems (the goldens' retriever, or --group-by): mean CP per system under both label sets,
their rankings, and which pairs each label set tells apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from annotator.report.blocks import Block, Grid
from annotator.report.cells import value, with_interval, yes
from annotator.report.inputs import Columns, Inputs, cp_columns
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column
from annotator.stats.stat import Stat, ratio
from annotator.stats.systems import ranking_agreement
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class SystemRow:
    """One retriever (or --group-by value): mean CP under both label sets."""

    system: str
    goldens: int
    mean_human: Stat
    mean_judge: Stat
    rank_human: int
    rank_judge: int


@dataclass(frozen=True, slots=True)
class SystemPair:
    """Two systems compared under both label sets (difference = first - second)."""

    first: str
    second: str
    difference_human: Stat
    difference_judge: Stat

    @property
    def swapped(self) -> bool:
        """The two label sets order this pair differently."""
        h, j = self.difference_human.value, self.difference_judge.value
        return h is not None and j is not None and h * j < 0

    @staticmethod
    def _significant(stat: Stat) -> bool | None:
        if stat.interval is None:
            return None
        low, high = stat.interval
        return low > 0 or high < 0

    @property
    def significant_human(self) -> bool | None:
        """Whether the 95% interval of the difference under human labels excludes 0."""
        return self._significant(self.difference_human)

    @property
    def significant_judge(self) -> bool | None:
        """Whether the 95% interval of the difference under judge labels excludes 0."""
        return self._significant(self.difference_judge)


@dataclass(frozen=True, slots=True)
class SystemSection:
    """Systems ranked under both label sets."""

    key: str
    systems: list[SystemRow]
    """In the order people's labels rank them (best first)."""
    kendall: Stat
    """Kendall's tau-b between the two rankings (undefined for two systems: see the pair)."""
    pairs: list[SystemPair]
    tau_ap: Stat
    """tau_AP_b between the judge's ranking and people's (Urbano & Marrero, ICTIR 2017): the
    tie-aware, symmetric form of Yilmaz et al.'s tau_AP (the mean of its two directions), where
    swaps near the top cost more than swaps near the bottom."""

    @property
    def swapped(self) -> list[SystemPair]:
        """Pairs the two label sets order differently."""
        return [p for p in self.pairs if p.swapped]

    @property
    def best_human(self) -> str:
        """The system people's labels rank first."""
        return self.systems[0].system

    @property
    def best_judge(self) -> str:
        """The system the judge's verdicts rank first."""
        return min(self.systems, key=lambda r: r.rank_judge).system

    @property
    def separated(self) -> list[SystemPair]:
        """Pairs one label set tells apart (the difference's 95% interval excludes 0) and the
        other does not: a decision the judge would make differently, or not at all."""
        return [p for p in self.pairs if None not in (p.significant_human, p.significant_judge)
                and p.significant_human != p.significant_judge]


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
            [f"Kendall tau-b between the two rankings: {value(s.kendall, 3)}; tau_AP_b "
             f"between them (swaps near the top weigh more; symmetric: the mean of both "
             f"directions, Urbano & Marrero, ICTIR 2017): {value(s.tau_ap, 3)}.",
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


ONE_GOLDEN = "one golden"
"""Why a system's mean CP has no interval when it holds a single golden."""


def add_columns(sums: ClusterSums, cluster: np.ndarray, h: np.ndarray, j: np.ndarray,
                system: np.ndarray, names: Sequence[str], *scopes: object) -> None:
    """Per system (``system`` names each golden row's): its goldens' count and CP sums under
    people's labels (h) and the judge's (j), in ``scopes`` (the leaderboard's: a judge)."""
    for name in names:
        mine = system == name
        sums.add(column("sys_n", *scopes, name), cluster[mine])
        sums.add(column("sys_h", *scopes, name), cluster[mine], h[mine])
        sums.add(column("sys_j", *scopes, name), cluster[mine], j[mine])


def mean(name: str, side: str, *scopes: object) -> Callable[[Sums], np.ndarray]:
    """A system's mean CP under people's labels (side 'h') or the judge's ('j'), as a
    statistic of the sums ``add_columns`` made."""
    return lambda s: ratio(s[column(f"sys_{side}", *scopes, name)],
                           s[column("sys_n", *scopes, name)])


def means(names: Sequence[str], side: str, *scopes: object) -> Callable[[Sums], np.ndarray]:
    """Every system's mean CP under one label set, stacked on the last axis (the scores
    stats.systems.ranking_agreement ranks)."""
    return lambda s: np.stack([mean(name, side, *scopes)(s) for name in names], axis=-1)


def prepare(inputs: Inputs, _: Columns, sums: ClusterSums) -> None:
    """Per system (with two or more): its goldens' count and CP sums."""
    if not inputs.system_of or inputs.unranked:
        return
    cluster, h, j = cp_columns(inputs)
    system = np.asarray([inputs.system_of[r.golden_id] for r in inputs.rows])
    add_columns(sums, cluster, h, j, system, sorted(set(inputs.system_of.values())))


def data(inputs: Inputs, est: Estimates, _: None) -> dict[str, Any]:
    """Each system's mean CP under both label sets, their differences, and whether the judge
    ranks the systems as people do."""
    if not inputs.system_of or inputs.unranked:
        return {"systems": None}
    names = sorted({inputs.system_of[r.golden_id] for r in inputs.rows})
    stated = {name: (est.stat(column(name, "mean_human"), mean(name, "h")),
                     est.stat(column(name, "mean_judge"), mean(name, "j"))) for name in names}
    for name in names:  # one golden: resampling it says nothing of the system's spread
        if est.totals[column("sys_n", name)] == 1:
            human, judge = stated[name]
            stated[name] = (human.without_interval(ONE_GOLDEN), judge.without_interval(ONE_GOLDEN))
    order_h = sorted(names, key=lambda n: -(stated[n][0].value or 0.0))
    order_j = sorted(names, key=lambda n: -(stated[n][1].value or 0.0))
    systems = [SystemRow(name, int(est.totals[column("sys_n", name)]), stated[name][0], stated[name][1],
                         order_h.index(name) + 1, order_j.index(name) + 1) for name in order_h]
    pairs = []
    for a, b in combinations(order_h, 2):
        def diff(side: str, a: str = a, b: str = b) -> Callable[[Sums], np.ndarray]:
            return lambda s: mean(a, side)(s) - mean(b, side)(s)

        human = est.stat(column(f"{a}-{b}", "difference_human"), diff("h"))
        judge = est.stat(column(f"{a}-{b}", "difference_judge"), diff("j"))
        single = [n for n in (a, b) if est.totals[column("sys_n", n)] == 1]
        if single:  # resampling one golden says nothing of that system's spread
            why = f"{' and '.join(single)} {'holds' if len(single) == 1 else 'hold'} {ONE_GOLDEN}"
            human, judge = human.without_interval(why), judge.without_interval(why)
        pairs.append(SystemPair(a, b, human, judge))

    kendall, tau_ap = ranking_agreement(est, "", means(names, "h"), means(names, "j"), len(names))
    return {"systems": SystemSection(inputs.systems_key, systems, kendall, pairs, tau_ap)}


SECTION = Section("systems", blocks, json, headline, prepare, data)
