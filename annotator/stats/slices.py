"""Where the judge errs: chunks cut into slices (by rank, length, overlap with the question,
system), the judge's error rates in each, and which slices differ from the rest beyond chance.

A slice is compared with every other chunk by the golden bootstrap: the difference of the two
rates has a bootstrap standard error, and its two-sided p-value (normal approximation) goes
through Holm's correction over every comparison the report makes, so twenty slices looked at
do not give one finding by luck.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

RANK_BINS = ((1, 1), (2, 2), (3, 3), (4, 5), (6, 10), (11, 20), (21, None))
"""Ranks in slices: the first three alone (where CP weighs most), then wider."""
QUARTILES = (0.25, 0.5, 0.75)
ERROR_RATES = ("fp_rate", "fn_rate", "fp_rest", "fn_rest")
"""The statistics of a slice: its false-positive and false-negative rates, and the rest's."""
MIN_TESTED = 20
"""A rate is compared with the rest only when both stand on this many chunks: below it, a
slice's few chunks can repeat in every bootstrap replicate, and the test would be sure of
nothing."""


@dataclass(frozen=True, slots=True)
class Bins:
    """Each item's slice (-1: in none) and each slice's label, in order."""

    code: np.ndarray
    labels: list[str]


def rank_bins(rank: np.ndarray) -> Bins:
    """Ranks 1, 2, 3, 4-5, 6-10, 11-20 and 21 on, keeping the slices some chunk is in."""
    code = np.full(len(rank), -1, dtype=np.int64)
    labels: list[str] = []
    for low, high in RANK_BINS:
        inside = (rank >= low) & (rank <= (high if high is not None else np.iinfo(np.int64).max))
        if inside.any():
            code[inside] = len(labels)
            labels.append(f"rank {low}" if low == high else
                          f"ranks {low}-{high}" if high is not None else f"ranks {low}+")
    return Bins(code, labels)


def quartile_bins(values: np.ndarray, written: Callable[[float], str], unit: str) -> Bins:
    """Quarters of the values (NaN in none); tied values stay in one slice, so there may be
    fewer than four. Labels give each slice's range, each end ``written``, then the unit: '120-480 chars'."""
    code = np.full(len(values), -1, dtype=np.int64)
    known = ~np.isnan(values)
    if not known.any():
        return Bins(code, [])
    edges = np.quantile(values[known], QUARTILES)
    raw = np.searchsorted(edges, values[known], side="right")
    labels: list[str] = []
    placed = np.full(int(known.sum()), -1, dtype=np.int64)
    for quarter in range(len(QUARTILES) + 1):
        mine = raw == quarter
        if mine.any():
            placed[mine] = len(labels)
            low, high = (float(f(values[known][mine])) for f in (np.min, np.max))
            span = written(low) if low == high else f"{written(low)}-{written(high)}"
            labels.append(f"{span} {unit}")
    code[known] = placed
    return Bins(code, labels)


def testable(inside: float, outside: float) -> bool:
    """Whether a slice and the rest hold enough chunks (of the rate's class) to compare."""
    return min(inside, outside) >= MIN_TESTED


def wald_p(point: float, replicates: np.ndarray) -> float | None:
    """Two-sided p-value of a difference being 0, from its bootstrap standard error (None
    without replicates or with no spread)."""
    values = np.asarray(replicates, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) < 2 or math.isnan(point):
        return None
    se = float(values.std(ddof=1))
    if se == 0.0:
        return None
    return math.erfc(abs(point) / se / math.sqrt(2))
