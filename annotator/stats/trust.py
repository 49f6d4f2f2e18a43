"""Trust or escalate: keep the judge's verdict only where it is confident enough, with a
guarantee on the agreement of what it keeps (Jung, Brahman & Choi, ICLR 2025).

A threshold on the judge's confidence is chosen on calibration chunks by fixed-sequence
testing: walking a grid of thresholds fixed in advance from the strictest down, each is tested
for H0 "the disagreement rate of the chunks kept exceeds alpha" with the exact binomial test at
level delta, and the walk stops at the first it cannot reject. The lowest threshold rejected
keeps chunks whose agreement with people is at least 1 - alpha, with probability at least
1 - delta over the calibration draw. Thresholds keeping too few chunks to pass with a margin
(``fewest_kept``) are passed over: which they are depends on the confidences alone, not on
people's labels, so the guarantee holds given the confidences.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.lazy import np
from annotator.stats.distributions import binomial_cdf

GRID = tuple(round(1 - i / 100, 2) for i in range(101))
"""The thresholds tried, strictest first: 1.00, 0.99, ..., 0.00, fixed before any data."""


@dataclass(frozen=True, slots=True)
class ThresholdFit:
    """The threshold chosen on calibration chunks, and the walk that chose it."""

    alpha: float
    delta: float
    threshold: float | None
    """The lowest threshold whose kept chunks pass; None: none passes (escalate everything)."""
    chunks: int
    kept: int
    """Calibration chunks at or above the threshold."""
    disagreements: int
    p_value: float | None
    """The binomial p-value of the threshold chosen."""
    stopped_at: float | None
    """The first threshold that did not pass (where the walk stopped), if any."""


def verdict_confidence(verdict: np.ndarray, p_relevant: np.ndarray) -> np.ndarray:
    """The judge's confidence in the verdict it gave: P(relevant) for a 1, 1 - P for a 0."""
    return np.asarray(np.where(verdict == 1, p_relevant, 1.0 - p_relevant), dtype=np.float64)


def runs_confidence(verdict: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """The share of a chunk's K runs (one row per chunk) that gave the verdict in force."""
    return np.asarray((runs == verdict[:, None]).mean(axis=1), dtype=np.float64)


def fit_threshold(confidence: np.ndarray, agrees: np.ndarray, alpha: float,
                  delta: float) -> ThresholdFit:
    """The threshold (on GRID) by fixed-sequence testing on calibration chunks: their
    ``confidence`` and whether the judge ``agrees`` with people on each."""
    confidence = np.asarray(confidence, dtype=np.float64)
    wrong = ~np.asarray(agrees, dtype=bool)
    least = fewest_kept(alpha, delta)
    chosen: tuple[float, int, int, float] | None = None
    stopped = None
    for threshold in GRID:
        kept = kept_at(confidence, threshold)
        n = int(kept.sum())
        if n < least:
            continue  # too few kept to pass with a margin, whatever people say
        errors = int(wrong[kept].sum())
        p = binomial_cdf(errors, n, alpha)
        if p > delta:
            stopped = threshold
            break
        chosen = (threshold, n, errors, p)
    if chosen is None:
        return ThresholdFit(alpha, delta, None, len(confidence), 0, 0, None, stopped)
    threshold, n, errors, p = chosen
    return ThresholdFit(alpha, delta, threshold, len(confidence), n, errors, p, stopped)


def fewest_kept(alpha: float, delta: float) -> int:
    """The fewest kept chunks a threshold is tested on: those that pass when they disagree at
    half the rate alpha allows (38 at alpha = delta = 0.1). A strict threshold keeps few
    chunks, and testing it on a dozen (where one disagreement fails it) would end the walk
    before the thresholds that matter."""
    n = 1
    while binomial_cdf(int(alpha * n / 2), n, alpha) > delta:
        n += 1
    return n


def kept_at(confidence: np.ndarray, threshold: float | None) -> np.ndarray:
    """The chunks a threshold keeps (None keeps none)."""
    if threshold is None:
        return np.zeros(len(confidence), dtype=bool)
    return np.asarray(np.asarray(confidence) >= threshold - 1e-12)


def clopper_pearson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    tail = (1 - level) / 2

    def solve(target: float, k: int) -> float:
        # binomial_cdf(k, n, p) falls as p grows: bisect p where it equals target.
        low, high = 0.0, 1.0
        for _ in range(60):
            mid = (low + high) / 2
            if binomial_cdf(k, n, mid) > target:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    lower = 0.0 if successes == 0 else 1.0 - solve(tail, n - successes)
    upper = 1.0 if successes == n else solve(tail, successes)
    return lower, upper
