"""Coverage simulations of the project's intervals: the suite runs them small and seeded
(tests/test_coverage.py), benchmarks/coverage.py large, and docs/statistics.md holds the large
run's figures.

Every simulation draws goldens of ``CHUNKS`` chunks from a population whose statistic is known,
computes the tool's own 95% interval on each sample, and counts how often the truth falls
inside, below (the interval above it) and above.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.stats.bootstrap import (
    ClusterSums,
    Sums,
    add_confusion,
    confusion_formula,
    percentile_interval,
)
from annotator.stats.chunk_agreement import McNemar, kappa_values
from annotator.stats.graded import gwet_ac2

CHUNKS = 5
RESAMPLES = 1000
SCALE = 4
"""Grades 0-3 in the AC2 simulation."""


@dataclass(frozen=True, slots=True)
class Coverage:
    """How often an interval held the truth, out of ``runs``."""

    runs: int
    inside: int
    truth_below: int
    """Runs whose interval lay wholly above the truth."""
    truth_above: int

    @property
    def rate(self) -> float:
        """The share of runs whose interval held the truth."""
        return self.inside / self.runs

    def __str__(self) -> str:
        return (f"{self.rate:.3f} (truth below the interval {self.truth_below / self.runs:.3f}, "
                f"above {self.truth_above / self.runs:.3f}; {self.runs} runs)")


def _binary(rng: np.random.Generator, goldens: int, error: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """People's labels (each golden's share of useful chunks uniform in 0.1-0.7) and a judge
    that flips ``error`` of them."""
    p = rng.uniform(0.1, 0.7, goldens)[:, None]
    human = (rng.random((goldens, CHUNKS)) < p).astype(int)
    return human, np.where(rng.random((goldens, CHUNKS)) < error, 1 - human, human)


def _kappa(human: np.ndarray, judge: np.ndarray) -> float:
    h, j = human.ravel(), judge.ravel()
    return float(kappa_values(((h == 1) & (j == 1)).sum(), ((h == 0) & (j == 1)).sum(),
                              ((h == 1) & (j == 0)).sum(), ((h == 0) & (j == 0)).sum()))


def _covered(truth: float, runs: int, sample: Callable[[int], tuple[Any, Any, int]]
             ) -> Coverage:
    """Count where ``truth`` falls for the interval of each run's sample: (replicates, point,
    goldens) from ``sample(run)``."""
    inside = below = above = 0
    for run in range(runs):
        replicates, point, goldens = sample(run)
        interval = percentile_interval(np.asarray(replicates, dtype=float), point, goldens)
        assert interval is not None
        inside += interval.low <= truth <= interval.high
        below += truth < interval.low
        above += truth > interval.high
    return Coverage(runs, inside, below, above)


def kappa_coverage(goldens: int, runs: int, seed: int = 1, error: float = 0.15) -> Coverage:
    """Cohen's kappa's golden-bootstrap interval from ``goldens`` goldens."""
    rng = np.random.default_rng(seed)
    truth = _kappa(*_binary(rng, 200_000, error))
    formula = confusion_formula(kappa_values)

    def sample(run: int) -> tuple[Any, float, int]:
        human, judge = _binary(rng, goldens, error)
        sums = ClusterSums(goldens)
        add_confusion(sums, np.repeat(np.arange(goldens), CHUNKS), human.ravel(), judge.ravel())
        return formula(sums.resample(RESAMPLES, seed=run)), float(formula(sums.totals())), goldens

    return _covered(truth, runs, sample)


def _grades(rng: np.random.Generator, goldens: int) -> tuple[np.ndarray, np.ndarray]:
    """People's grades (around a level per golden) and a judge one grade off a third of the
    time."""
    base = rng.integers(0, SCALE, goldens)[:, None]
    human = np.clip(base + rng.integers(-1, 2, (goldens, CHUNKS)), 0, SCALE - 1)
    off = rng.choice([-1, 0, 0, 0, 0, 1], size=(goldens, CHUNKS))
    return human, np.clip(human + off, 0, SCALE - 1)


def _ac2(sums: Sums) -> np.ndarray:
    cells = np.stack([np.asarray(sums[f"c{c}"]) for c in range(SCALE * SCALE)], -1)
    return np.asarray(gwet_ac2(cells.reshape(*cells.shape[:-1], SCALE, SCALE), "quadratic"))


def ac2_coverage(goldens: int, runs: int, seed: int = 3) -> Coverage:
    """Gwet's AC2 (quadratic weights) on grades 0-3, its golden-bootstrap interval."""
    rng = np.random.default_rng(seed)
    human, judge = _grades(rng, 200_000)
    table = np.zeros((SCALE, SCALE))
    np.add.at(table, (human.ravel(), judge.ravel()), 1)
    truth = float(gwet_ac2(table, "quadratic"))

    def sample(run: int) -> tuple[Any, float, int]:
        human, judge = _grades(rng, goldens)
        sums = ClusterSums(goldens)
        cluster = np.repeat(np.arange(goldens), CHUNKS)
        code = human.ravel() * SCALE + judge.ravel()
        for cell in range(SCALE * SCALE):
            sums.add(f"c{cell}", cluster[code == cell])
        return _ac2(sums.resample(RESAMPLES, seed=run)), float(_ac2(sums.totals())), goldens

    return _covered(truth, runs, sample)


def keeps_no_better(goldens: int, runs: int, seed: int = 7, error: float = 0.15,
                    better_error: float | None = None) -> float:
    """The share of runs where align's keep rule keeps a candidate: the paired interval of its
    kappa minus the judge's above 0, and it right significantly more often (cluster-adjusted
    McNemar, p < 0.05). Both err ``error`` (no better), or the candidate ``better_error``."""
    rng = np.random.default_rng(seed)
    judge_kappa = confusion_formula(kappa_values, "a:")
    candidate_kappa = confusion_formula(kappa_values, "b:")
    kept = 0
    for run in range(runs):
        human, judge = _binary(rng, goldens, error)
        candidate = np.where(rng.random(human.shape) < (better_error or error), 1 - human, human)
        sums = ClusterSums(goldens)
        cluster = np.repeat(np.arange(goldens), CHUNKS)
        add_confusion(sums, cluster, human.ravel(), judge.ravel(), prefix="a:")
        add_confusion(sums, cluster, human.ravel(), candidate.ravel(), prefix="b:")
        replicates, totals = sums.resample(RESAMPLES, seed=run), sums.totals()
        interval = percentile_interval(
            np.asarray(candidate_kappa(replicates) - judge_kappa(replicates), dtype=float),
            float(candidate_kappa(totals) - judge_kappa(totals)), goldens)
        right_c, right_j = candidate == human, judge == human
        only_c, only_j = (right_c & ~right_j).sum(1), (right_j & ~right_c).sum(1)
        p = McNemar.of(only_c.tolist(), only_j.tolist()).cluster_p.value
        kept += (interval is not None and interval.low > 0 and p is not None and p < 0.05
                 and only_c.sum() > only_j.sum())
    return kept / runs


def ppi_coverage(labelled: int, runs: int, seed: int = 0) -> dict[str, float]:
    """The report's mean CP from a random sample of ``labelled`` of 440 goldens (a judge off by
    +0.05): how often each estimate's interval holds the session's own mean."""
    from annotator.stats.ppi import ppi_estimate
    from tests.test_ppi import cp_like

    rng = np.random.default_rng(seed)
    covered = {"ppi_plus_plus": 0, "ppi": 0, "human_only": 0}
    for _ in range(runs):
        human, judge = cp_like(rng, 440, 0.05, 0.08)
        truth = float(human.mean())
        chosen = rng.choice(440, labelled, replace=False)
        rest = np.setdiff1d(np.arange(440), chosen)
        estimate = ppi_estimate(labelled, human[chosen], judge[chosen], judge[rest])
        for key in covered:
            interval = estimate.stats[key].interval
            covered[key] += interval is not None and interval[0] <= truth <= interval[1]
    return {key: n / runs for key, n in covered.items()}
