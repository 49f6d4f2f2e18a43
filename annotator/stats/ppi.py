"""Prediction-powered inference for mean context precision (Angelopoulos et al. 2023; PPI++).

The judge scores every golden; people label a uniformly random subset. The judge's mean over
all goldens, corrected by its average error on the labelled ones, is an unbiased estimate of
the human mean, with a narrower interval than the people's labels alone whenever the judge
tracks them. PPI++ tunes how much to lean on the judge (lambda in [0, 1]): lambda = 0 is the
human-only mean, so a poor judge never widens the interval.

The mean estimated is the session's own (its goldens are the whole population, every one
judged), and the labelled goldens are drawn without replacement, so every design's variance
takes the finite-population correction 1 - n/N (``fpc_variance``, the one rule the estimates,
the stopping rule and ``annotator plan`` share). The point estimate is ppi-python's
(``ppi_mean_pointestimate`` with the judge's CP on every golden); intervals take Student's t
with n - 1 degrees of freedom where ppi-python takes the normal z, so a few labelled goldens
widen them as they should.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from annotator.stats.distributions import student_t_quantile
from annotator.stats.stat import Stat

LEVEL = 0.95


TUNED_FROM = 20
"""Labelled goldens PPI++ needs for an interval: with lambda tuned on 5-15 of them it covered
92-94% at 95% even with Student's t (tests/test_coverage.py); PPI (lambda 1) and people's own
mean hold from 5."""


def draw_sample(golden_ids: Sequence[str], size: int, seed: int) -> list[str]:
    """``size`` goldens drawn uniformly at random from the seed alone, in a random order (so
    any prefix is a random sample too)."""
    ordered = sorted(golden_ids)
    return random.Random(seed).sample(ordered, min(size, len(ordered)))


def _quantile(level: float, n: int) -> float:
    """The quantile of a two-sided interval at ``level`` from ``n`` labelled goldens (one
    fewer when lambda was tuned on them): Student's t with n - 1 degrees of freedom (the
    normal one covered 88-91% at 10-20 labelled goldens; tests/test_coverage.py), which is
    the normal one from a few hundred on."""
    if n < 2:
        return NormalDist().inv_cdf(0.5 + level / 2)  # the variance is infinite anyway
    return student_t_quantile(0.5 + level / 2, n - 1)


def fpc_variance(residual: np.ndarray, population: int) -> float:
    """The variance of the mean of ``residual``, a sample drawn without replacement from
    ``population`` goldens: (1 - n/N) s^2 / n, s^2 with ddof 1 (inf below 2 values)."""
    n = len(residual)
    if n < 2:
        return math.inf
    return max(0.0, 1 - n / population) * float(np.var(residual, ddof=1)) / n


def regression_lambda(y: np.ndarray, f: np.ndarray) -> float:
    """PPI++'s lambda when the judge's mean is known exactly (it scores every golden): the
    regression coefficient of y on f, clipped to [0, 1] (0 for a judge that tracks nothing, or
    is constant here)."""
    variance = float(np.var(f))
    if variance == 0 or len(y) < 2:
        return 0.0
    return float(np.clip(np.mean((y - y.mean()) * (f - f.mean())) / variance, 0.0, 1.0))


def ppi_mean(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, lam: float | None = None,
             level: float = LEVEL) -> tuple[float, tuple[float, float], float]:
    """(estimate, interval, lambda) of the mean of Y over all ``f_all``'s goldens, from a simple
    random sample ``y`` of them (the judge's ``f`` on the same); lambda None: tuned (PPI++)."""
    tuned = lam is None
    if lam is None:
        lam = regression_lambda(y, f)
    residual = y - lam * f
    point = lam * float(np.mean(f_all)) + float(np.mean(residual))
    # A lambda tuned on the same goldens spends one more degree of freedom.
    half = _quantile(level, len(y) - tuned) * math.sqrt(fpc_variance(residual, len(f_all)))
    return point, (point - half, point + half), lam


def classical_mean(y: np.ndarray, population: int,
                   level: float = LEVEL) -> tuple[float, tuple[float, float]]:
    """People's mean alone, with its interval (a sample of ``population`` goldens)."""
    point, interval, _ = ppi_mean(y, y, np.zeros(population), lam=0.0, level=level)
    return point, interval


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
        human = Stat(float(ya.mean())) if n else none
        return PpiEstimate(sampled, n, big_n, none,
                           {"ppi_plus_plus": none, "ppi": none, "human_only": human,
                            "judge_only": judge_only}, none)
    tuned, tuned_ci, lam = ppi_mean(ya, fa, judge_all)
    plain, plain_ci, _ = ppi_mean(ya, fa, judge_all, lam=1.0)
    human_mean, human_ci = classical_mean(ya, len(judge_all))
    width = tuned_ci[1] - tuned_ci[0]
    effective = (Stat(n * ((human_ci[1] - human_ci[0]) / width) ** 2) if width > 0 else
                 Stat.undefined("the interval has no width"))
    ppi_plus_plus = Stat(tuned, interval=tuned_ci)
    if n < TUNED_FROM:
        ppi_plus_plus = ppi_plus_plus.without_interval(
            f"lambda tuned on fewer than {TUNED_FROM} labelled goldens ({n} here) gives an "
            "interval that runs narrow; read PPI's or people's own until then")
    return PpiEstimate(sampled, n, big_n, Stat(lam), {
        "ppi_plus_plus": ppi_plus_plus,
        "ppi": Stat(plain, interval=plain_ci),
        "human_only": Stat(human_mean, interval=human_ci),
        "judge_only": judge_only,
    }, effective)
