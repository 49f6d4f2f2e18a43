"""The cluster bootstrap: resample goldens (never chunks) with replacement, reproducibly.

Statistics are written as functions of per-golden sums (counts, sums of CP, sums of squares),
so a replicate is a weighted sum: the weights are how often each golden was drawn. That keeps
2,000 replicates over 10,000 goldens to a few matrix products.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

from annotator.stats.distributions import student_t_quantile
from annotator.stats.stat import Stat

Sums = Mapping[str, np.ndarray]
"""Column name -> total (a 0-d array) or one total per replicate."""

LEVEL = 0.95
MIN_VALID_SHARE = 0.9
"""An interval needs at least this share of replicates where the statistic is defined."""
BLOCK = 200
"""Replicates drawn at once, at most: bounds memory at BLOCK x goldens weights."""
WEIGHTS = 10_000_000
"""At most this many weights at once (80 MB): a million-chunk report's 100,000 goldens draw 100
replicates a block, not 200."""


class ClusterSums:
    """Named columns summed per golden, for the estimate and for every bootstrap replicate."""

    def __init__(self, clusters: int) -> None:
        self.clusters = clusters
        self.columns: dict[str, np.ndarray] = {}

    def add(self, name: str, cluster: np.ndarray, values: np.ndarray | float = 1.0) -> None:
        """Add values (one per row, or a constant) to each row's golden in column ``name``."""
        weights = np.broadcast_to(np.asarray(values, dtype=float), cluster.shape)
        # Float even when no row is added (bincount of nothing counts in int64).
        column = np.bincount(cluster, weights=weights, minlength=self.clusters).astype(
            float, copy=False)
        if name in self.columns:
            self.columns[name] += column
        else:
            self.columns[name] = column

    def totals(self) -> dict[str, np.ndarray]:
        """Each column's total over the goldens as observed."""
        return {name: np.asarray(column.sum()) for name, column in self.columns.items()}

    def resample(self, resamples: int, seed: int | None,
                 progress: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        """Each column's total under ``resamples`` draws of the goldens with replacement."""
        names = list(self.columns)
        matrix = np.column_stack([self.columns[n] for n in names]) if names else np.zeros(
            (self.clusters, 0))
        # The columns become views of the matrix: one copy of the per-golden sums, not two.
        self.columns = {name: matrix[:, i] for i, name in enumerate(names)}
        rng = np.random.default_rng(seed)
        blocks = []
        done = 0
        g = self.clusters
        block = max(1, min(BLOCK, WEIGHTS // max(g, 1), resamples))
        weights = np.empty((block, g))
        while done < resamples:
            b = min(block, resamples - done)
            # One replicate's draws at a time (the generator's stream is the same however it is
            # cut), into one block of float weights: memory stays at block x goldens floats.
            for row in range(b):
                weights[row] = np.bincount(rng.integers(0, g, size=g), minlength=g)
            blocks.append(weights[:b] @ matrix)
            done += b
            if progress is not None:
                progress(done)
        out = np.vstack(blocks) if blocks else np.zeros((0, len(names)))
        return {name: out[:, i] for i, name in enumerate(names)}


SCOPE = ":"
"""Ends each scope in a column's name: 'sys_n:bm25', '0:tp', 'raters:p:ones'."""


def scope(*parts: object) -> str:
    """The prefix every column (or estimate key) inside a scope starts with: a judge, a
    system, a pair of people. With column() and scoped(), the one place names are spelt."""
    return "".join(f"{part}{SCOPE}" for part in parts)


def column(name: str, *scopes: object) -> str:
    """The name of a column (or estimate key) inside the given scopes."""
    return scope(*scopes) + name


def scoped(key: str) -> bool:
    """Whether a column or key belongs to a scope (a system, a judge, a pair)."""
    return SCOPE in key


def in_scope(sums: Sums, prefix: str) -> dict[str, np.ndarray]:
    """The columns of one scope, named without its prefix."""
    return {k[len(prefix):]: v for k, v in sums.items() if k.startswith(prefix)}


COUNTS = ("tp", "fp", "fn", "tn")


def add_confusion(sums: ClusterSums, cluster: np.ndarray, human: np.ndarray, judge: np.ndarray,
                  prefix: str = "") -> None:
    """Count each (human, judge) pair into its golden's tp/fp/fn/tn columns (named prefix+tp...)."""
    for name, mask in (("tp", (human == 1) & (judge == 1)), ("fp", (human == 0) & (judge == 1)),
                       ("fn", (human == 1) & (judge == 0)), ("tn", (human == 0) & (judge == 0))):
        sums.add(f"{prefix}{name}", cluster[mask])


def columns_formula(formula: Callable[..., np.ndarray], prefix: str, columns: Sequence[str],
                    **fixed: Any) -> Callable[[Sums], np.ndarray]:
    """A formula of the columns named prefix+column (in order), as a statistic of the sums."""
    return lambda s: formula(*(s[f"{prefix}{k}"] for k in columns), **fixed)


def confusion_formula(formula: Callable[..., np.ndarray], prefix: str = ""
                      ) -> Callable[[Sums], np.ndarray]:
    """A formula of (tp, fp, fn, tn), as a statistic of the sums."""
    return columns_formula(formula, prefix, COUNTS)


@dataclass(frozen=True, slots=True)
class Interval:
    """A percentile interval and how many replicates had the statistic undefined."""

    low: float
    high: float
    dropped: int


def percentile_interval(replicates: np.ndarray, point: float | None = None,
                        clusters: int | None = None) -> Interval | None:
    """The 95% interval from the defined replicates, or None when too few are defined.

    Two corrections make it hold at small samples (tests/test_coverage.py; docs/statistics.md):
    with the ``point`` estimate, the percentiles are bias-corrected (Efron's BC: shifted by
    twice the normal quantile of the share of replicates below the point), so a statistic
    skewed near its bound (AC2 near 1) misses as often on each side; with the number of
    ``clusters`` resampled, they are expanded (Hesterberg's expanded percentile interval: the
    normal quantile becomes sqrt(n / (n - 1)) times Student's t with n - 1 degrees of freedom),
    so 10-20 goldens no longer give intervals that run narrow. Without either, the plain
    central 95%.
    """
    values = np.asarray(replicates, dtype=float)
    defined = values[~np.isnan(values)]
    if len(values) == 0 or len(defined) < MIN_VALID_SHARE * len(values):
        return None
    z = expanded_z(clusters) if clusters is not None and clusters >= 2 else _Z
    bias = 0.0
    if point is not None and math.isfinite(point):
        below = (np.count_nonzero(defined < point) + 0.5 * np.count_nonzero(defined == point))
        share = min(max(below / len(defined), 0.5 / len(defined)), 1 - 0.5 / len(defined))
        bias = _NORMAL.inv_cdf(share)
    low, high = np.quantile(defined, [_NORMAL.cdf(2 * bias - z), _NORMAL.cdf(2 * bias + z)])
    return Interval(float(low), float(high), len(values) - len(defined))


_NORMAL = NormalDist()
_Z = _NORMAL.inv_cdf(0.5 + LEVEL / 2)


@lru_cache(maxsize=64)
def expanded_z(clusters: int) -> float:
    """The quantile the expanded percentile interval uses for ``clusters`` goldens:
    sqrt(n / (n - 1)) t_{n-1} (Hesterberg 2015); 2.38 at 10 goldens, 2.08 at 30, near 1.96 from
    a few hundred on."""
    n = clusters
    return math.sqrt(n / (n - 1)) * student_t_quantile(0.5 + LEVEL / 2, n - 1)


class Estimates:
    """Point estimates with (bias-corrected, expanded) percentile intervals from one shared set
    of bootstrap replicates."""

    def __init__(self, sums: ClusterSums, resamples: int, seed: int | None,
                 progress: Callable[[int], None] | None) -> None:
        self.totals = sums.totals()
        # One golden resampled is that golden every time: a zero-width "interval" that would
        # read as certainty. Intervals need at least two goldens.
        self.replicates = (sums.resample(resamples, seed, progress)
                           if resamples and sums.clusters >= 2 else None)
        self.clusters = sums.clusters
        self.dropped: dict[str, int] = {}

    def attach(self, key: str, point: Stat, formula: Callable[[Sums], np.ndarray]) -> Stat:
        """The point estimate with its bootstrap interval (unchanged when undefined)."""
        if point.value is None or self.replicates is None:
            return point
        values = np.asarray(formula(self.replicates), dtype=float)
        interval = percentile_interval(values, point.value, self.clusters)
        if interval is None:
            self.dropped[key] = int(np.isnan(values).sum())
            return point
        if interval.dropped:
            self.dropped[key] = interval.dropped
        return point.with_interval((interval.low, interval.high))

    def stat(self, key: str, formula: Callable[[Sums], np.ndarray], reason: str | None = None,
             interval_from: int = 2) -> Stat:
        """A statistic of the sums: undefined with ``reason``, else estimated with its interval
        (none, with why, below ``interval_from`` goldens: a statistic whose interval the
        coverage simulations showed running narrow there)."""
        if reason is not None:
            return Stat.undefined(reason)
        value = float(formula(self.totals))
        if math.isnan(value):
            return Stat.undefined("undefined for these data")
        if self.clusters < interval_from:
            return Stat(value).without_interval(
                f"an interval needs {interval_from} goldens here; {self.clusters} so far")
        return self.attach(key, Stat(value), formula)
