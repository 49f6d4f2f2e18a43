"""Agreement on grades (0 to a scale's top, as TREC and UMBRELA grade relevance 0-3).

Every statistic here is a function of the grade table ``C``: ``C[h, j]`` counts the chunks a
person graded h and the judge graded j, over every grade of the scale (a grade nobody gave is
a row and a column of zeros, so each statistic knows the whole scale). They take ``C`` with any
leading axes (``(..., q, q)``) and return one value per table, so the golden bootstrap (which
sums each golden's table per replicate) evaluates them on every replicate at once. A value is
NaN where the statistic is undefined (no chunk, or no spread to correct for chance against).

- ``cohen_kappa``: Cohen's kappa on the grades as categories (scikit-learn's
  ``cohen_kappa_score``).
- ``weighted_kappa``: Cohen's weighted kappa with linear (|h - j|) or quadratic ((h - j)^2)
  disagreement weights on the grades' values (scikit-learn's with ``labels`` the whole scale).
- ``krippendorff_alpha``: two coders, every chunk graded by both, so the coincidence matrix is
  ``C + C.T``; ordinal, interval or nominal distances (Krippendorff 2011; the ``krippendorff``
  package's on the same data).
- ``gwet_ac2``: Gwet's AC2 for two raters, identity (AC1), linear or quadratic agreement
  weights over the q grades (Gwet 2014, the Handbook's formulas; irrCAC's table form).
- ``threshold_kappas``: Cohen's kappa on relevant/not relevant for every pair of thresholds
  (people's grade >= t_h, the judge's >= t_j), t from 1 to the top grade.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

WEIGHTINGS = ("identity", "linear", "quadratic")


def _safe(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def _grades(q: int) -> tuple[np.ndarray, np.ndarray]:
    """The grade of each row and each column of a q x q table."""
    g = np.arange(q, dtype=float)
    return g[:, None], g[None, :]


def cohen_kappa(table: np.ndarray) -> np.ndarray:
    """Cohen's kappa with every grade its own category."""
    return weighted_kappa(table, "identity")


def weighted_kappa(table: np.ndarray, weights: str) -> np.ndarray:
    """Cohen's kappa weighted by the distance between grades ('linear', 'quadratic'; 'identity'
    is the unweighted kappa)."""
    c = np.asarray(table, dtype=float)
    q = c.shape[-1]
    rows, cols = _grades(q)
    distance = {"identity": (rows != cols).astype(float), "linear": np.abs(rows - cols),
                "quadratic": (rows - cols) ** 2}[weights]
    n = c.sum(axis=(-2, -1))
    expected = _safe(c.sum(axis=-1)[..., :, None] * c.sum(axis=-2)[..., None, :],
                     n[..., None, None])
    observed = (distance * c).sum(axis=(-2, -1))
    chance = (distance * expected).sum(axis=(-2, -1))
    return 1.0 - _safe(observed, chance)


def krippendorff_alpha(table: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha of two coders who graded every chunk: 'ordinal', 'interval' or
    'nominal'."""
    c = np.asarray(table, dtype=float)
    q = c.shape[-1]
    coincidence = c + np.swapaxes(c, -1, -2)
    counts = coincidence.sum(axis=-1)  # n_g: how often each grade was given, by either
    total = counts.sum(axis=-1)  # every value given: twice the chunks
    rows, cols = _grades(q)
    if level == "interval":
        delta = np.broadcast_to((rows - cols) ** 2, coincidence.shape)
    elif level == "nominal":
        delta = np.broadcast_to((rows != cols).astype(float), coincidence.shape)
    elif level == "ordinal":
        # The values between two grades, both ends counted half: cumulative counts.
        before = np.cumsum(counts, axis=-1) - counts  # n_0 + ... + n_(g-1)
        low, high = np.minimum(rows, cols).astype(int), np.maximum(rows, cols).astype(int)
        spanned = (np.take(before + counts, high, axis=-1) - np.take(before, low, axis=-1))
        ends = (np.take(counts, low, axis=-1) + np.take(counts, high, axis=-1)) / 2
        delta = (spanned - ends) ** 2
    else:
        raise ValueError(f"no level of measurement {level!r}")
    observed = (coincidence * delta).sum(axis=(-2, -1))
    expected = (counts[..., :, None] * counts[..., None, :] * delta).sum(axis=(-2, -1))
    return 1.0 - _safe((total - 1) * observed, expected)


def agreement_weights(q: int, weights: str) -> np.ndarray:
    """Gwet's agreement weights over q grades: 1 on the diagonal, falling with distance."""
    rows, cols = _grades(q)
    span = max(q - 1, 1)
    weighted: dict[str, np.ndarray] = {"identity": (rows == cols).astype(float),
                                       "linear": 1.0 - np.abs(rows - cols) / span,
                                       "quadratic": 1.0 - (rows - cols) ** 2 / span ** 2}
    return weighted[weights]


def gwet_ac2(table: np.ndarray, weights: str) -> np.ndarray:
    """Gwet's AC2 of two raters ('identity' weights give AC1)."""
    c = np.asarray(table, dtype=float)
    q = c.shape[-1]
    w = agreement_weights(q, weights)
    n = c.sum(axis=(-2, -1))
    p = _safe(c, n[..., None, None])
    agreed = (w * p).sum(axis=(-2, -1))
    pi = (p.sum(axis=-1) + p.sum(axis=-2)) / 2
    chance = w.sum() * (pi * (1 - pi)).sum(axis=-1) / (q * (q - 1))
    return _safe(agreed - chance, 1 - chance)


def binary_kappa(table: np.ndarray, human_from: int, judge_from: int) -> np.ndarray:
    """Cohen's kappa on relevant (grade >= the threshold) against not, for both raters."""
    c = np.asarray(table, dtype=float)
    tp = c[..., human_from:, judge_from:].sum(axis=(-2, -1))
    fn = c[..., human_from:, :judge_from].sum(axis=(-2, -1))
    fp = c[..., :human_from, judge_from:].sum(axis=(-2, -1))
    tn = c[..., :human_from, :judge_from].sum(axis=(-2, -1))
    return cohen_kappa(np.stack([np.stack([tn, fp], -1), np.stack([fn, tp], -1)], -2))


def threshold_kappas(table: np.ndarray) -> np.ndarray:
    """Kappa at every (people's threshold, judge's threshold), thresholds 1 to the top grade:
    shape (..., top, top), entry [a, b] for thresholds a + 1 and b + 1."""
    q = np.asarray(table).shape[-1]
    return np.stack([np.stack([binary_kappa(table, h, j) for j in range(1, q)], -1)
                     for h in range(1, q)], -2)


GRADED_STATISTICS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "grade_kappa": cohen_kappa,
    "kappa_linear": lambda c: weighted_kappa(c, "linear"),
    "kappa_quadratic": lambda c: weighted_kappa(c, "quadratic"),
    "alpha_ordinal": lambda c: krippendorff_alpha(c, "ordinal"),
    "alpha_interval": lambda c: krippendorff_alpha(c, "interval"),
    "alpha_nominal": lambda c: krippendorff_alpha(c, "nominal"),
    "gwet_ac2": lambda c: gwet_ac2(c, "quadratic"),
}
"""Each statistic on grades, by its key in the report and the leaderboard (AC2 with Gwet's
quadratic weights)."""

GRADED_INTERVAL_FROM = 20
"""Goldens the statistics on grades need for an interval: AC2's covered 92.6% at 10 goldens
even bias-corrected and expanded (skewed near its bound), 94.1% from 20
(benchmarks/coverage.py)."""
