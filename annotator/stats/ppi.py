"""Prediction-powered inference for mean context precision (Angelopoulos et al. 2023; PPI++).

The judge scores every golden; people label a uniformly random subset. The judge's mean over
all goldens, corrected by its average error on the labelled ones, is an unbiased estimate of
the human mean, with a narrower interval than the people's labels alone whenever the judge
tracks them. PPI++ tunes how much to lean on the judge (lambda in [0, 1]): lambda = 0 is the
human-only mean, so a poor judge never widens the interval.

Standard deviations use ddof = 0 and intervals are normal (z), as in ppi-python.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from annotator.stats.stat import Stat

LEVEL = 0.95


def draw_sample(golden_ids: Sequence[str], size: int, seed: int) -> list[str]:
    """``size`` goldens drawn uniformly at random from the seed alone, in a random order (so
    any prefix is a random sample too)."""
    ordered = sorted(golden_ids)
    return random.Random(seed).sample(ordered, min(size, len(ordered)))


def _z(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level``."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def power_tuned_lambda(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> float:
    """PPI++'s lambda for a mean: Cov(Y, f) / ((1 + n/N) Var(f)), clipped to [0, 1]."""
    n, big_n = len(y), len(f_unlabelled)
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    variance = float(np.var(np.concatenate([f, f_unlabelled]), ddof=1))
    if variance == 0 or math.isnan(variance):
        return 0.0  # a constant judge carries no information
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray, lam: float | None = None,
             level: float = LEVEL) -> tuple[float, tuple[float, float], float]:
    """(estimate, interval, lambda) of the mean of Y; lambda None: power-tuned (PPI++)."""
    if lam is None:
        lam = power_tuned_lambda(y, f, f_unlabelled)
    point = float(np.mean(lam * f_unlabelled) + np.mean(y - lam * f))
    se = math.sqrt(np.var(lam * f_unlabelled) / len(f_unlabelled) + np.var(y - lam * f) / len(y))
    return point, (point - _z(level) * se, point + _z(level) * se), lam


def classical_mean(y: np.ndarray, level: float = LEVEL) -> tuple[float, tuple[float, float]]:
    """The mean of Y with its normal interval (ddof 0), as ppi-python's classical_mean_ci."""
    point = float(np.mean(y))
    se = float(np.std(y)) / math.sqrt(len(y))
    return point, (point - _z(level) * se, point + _z(level) * se)


@dataclass(frozen=True, slots=True)
class PpiEstimate:
    """Mean context precision four ways, from a random sample of human-labelled goldens."""

    sampled: int
    """Goldens in the random sample."""
    labelled: int
    """Sampled goldens complete under human labels and judged (n)."""
    unlabelled: int
    """Judged goldens without human labels (N)."""
    lam: Stat
    stats: dict[str, Stat]
    """ppi_plus_plus, ppi, human_only (with 95% intervals) and judge_only (no interval)."""
    effective_labelled: Stat
    """How many human-labelled goldens the human-only interval would need to be as narrow."""
    systems: dict[str, Stat] = field(default_factory=dict)
    """Per system: mean CP under human labels by PPI++ on that system's goldens."""


def ppi_estimate(sampled: int, y: npt.ArrayLike, f: npt.ArrayLike,
                 f_unlabelled: npt.ArrayLike) -> PpiEstimate:
    """The PPI++ and PPI estimates beside the human-only and judge-only means."""
    ya, fa, fu = (np.asarray(v, dtype=float) for v in (y, f, f_unlabelled))
    n, big_n = len(ya), len(fu)
    reason = None
    if n < 2:
        reason = f"needs at least 2 labelled goldens of the random sample ({n} so far)"
    elif big_n < 1:
        reason = "needs judged goldens outside the labelled sample"
    judge_all = np.concatenate([fa, fu])
    judge_only = (Stat(float(judge_all.mean())) if len(judge_all) else
                  Stat.undefined("no golden is fully judged"))
    if reason is not None:
        none = Stat.undefined(reason)
        human = Stat(classical_mean(ya)[0]) if n else none
        return PpiEstimate(sampled, n, big_n, none,
                           {"ppi_plus_plus": none, "ppi": none, "human_only": human,
                            "judge_only": judge_only}, none)
    tuned, tuned_ci, lam = ppi_mean(ya, fa, fu)
    plain, plain_ci, _ = ppi_mean(ya, fa, fu, lam=1.0)
    human_mean, human_ci = classical_mean(ya)
    width = tuned_ci[1] - tuned_ci[0]
    effective = (Stat(n * ((human_ci[1] - human_ci[0]) / width) ** 2) if width > 0 else
                 Stat.undefined("the interval has no width"))
    return PpiEstimate(sampled, n, big_n, Stat(lam), {
        "ppi_plus_plus": Stat(tuned, interval=tuned_ci),
        "ppi": Stat(plain, interval=plain_ci),
        "human_only": Stat(human_mean, interval=human_ci),
        "judge_only": judge_only,
    }, effective)
