"""How well the judge's P(relevant) is calibrated against human labels (human = outcome).

Like ``cp_agreement``, every statistic is a function of per-golden sums, so the report can
bootstrap it over goldens. Columns: ``np`` chunks with a probability, ``brier`` sum of
(p - y)^2, ``logloss`` sum of the log loss, and per bin b of BINS equal-width bins:
``c1:n{b}``/``c1:p{b}``/``c1:y{b}`` (class-1: bins on P(relevant), against the human rate) and
``tl:n{b}``/``tl:p{b}``/``tl:y{b}`` (top-label: bins on max(p, 1-p), against whether the label
p implies matches the human).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.stats.bootstrap import ClusterSums, Sums, column
from annotator.stats.ranks import average_ranks
from annotator.stats.stat import ratio

BINS = 10
EPS = 1e-15
"""Probabilities are clipped to [EPS, 1 - EPS] for the log loss, as scikit-learn does."""
ECE_CONVENTIONS = {
    "class-1": "10 equal-width bins on P(relevant); per bin |human relevant rate - mean P|, "
               "weighted by the bin's share of chunks",
    "top-label": "10 equal-width bins on max(P, 1-P); per bin |share where the label P implies "
                 "(P >= 0.5 -> relevant) matches the human - mean confidence|, weighted",
}


def bin_of(p: np.ndarray) -> np.ndarray:
    """The equal-width bin of each probability; an edge value goes to the lower bin (as sklearn)."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    return np.searchsorted(edges[1:-1], p)


def add_columns(sums: ClusterSums, cluster: np.ndarray, p: np.ndarray, y: np.ndarray) -> None:
    """Add the calibration columns for chunks with probability p and human label y."""
    sums.add("np", cluster)
    sums.add("brier", cluster, (p - y) ** 2)
    clipped = np.clip(p, EPS, 1 - EPS)
    sums.add("logloss", cluster, -(y * np.log(clipped) + (1 - y) * np.log(1 - clipped)))
    confidence = np.maximum(p, 1 - p)
    correct = ((p >= 0.5).astype(float) == y).astype(float)
    for prefix, score, outcome in (("c1", p, y), ("tl", confidence, correct)):
        bins = bin_of(score)
        for b in range(BINS):
            inside = bins == b
            sums.add(column(f"n{b}", prefix), cluster[inside])
            sums.add(column(f"p{b}", prefix), cluster[inside], score[inside])
            sums.add(column(f"y{b}", prefix), cluster[inside], outcome[inside])


def _per_chunk(s: Sums, key: str) -> np.ndarray:
    return ratio(s[key], s["np"])  # type: ignore[no-any-return]


def brier(s: Sums) -> np.ndarray:
    """Mean squared difference between P(relevant) and the human label."""
    return _per_chunk(s, "brier")


def log_loss(s: Sums) -> np.ndarray:
    """Mean log loss of P(relevant) against the human label."""
    return _per_chunk(s, "logloss")


def _ece(s: Sums, prefix: str) -> np.ndarray:
    gap = sum(np.abs(s[column(f"y{b}", prefix)] - s[column(f"p{b}", prefix)]) for b in range(BINS))
    return ratio(gap, s["np"])  # type: ignore[no-any-return]


def ece_class1(s: Sums) -> np.ndarray:
    """Expected calibration error, class-1 convention."""
    return _ece(s, "c1")


def ece_top_label(s: Sums) -> np.ndarray:
    """Expected calibration error, top-label convention."""
    return _ece(s, "tl")


def auroc(p: np.ndarray, y: np.ndarray) -> float | None:
    """Area under the ROC curve of P(relevant) against the human label (ties count half)."""
    positives = int(y.sum())
    negatives = len(y) - positives
    if positives == 0 or negatives == 0:
        return None
    ranks = average_ranks(p)
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One bin of the reliability diagram (class-1 convention)."""

    low: float
    high: float
    chunks: int
    mean_p: float | None
    human_rate: float | None


def reliability(s: Sums) -> list[ReliabilityBin]:
    """The class-1 reliability diagram's bins from observed totals."""
    out = []
    for b in range(BINS):
        n = int(s[column(f"n{b}", "c1")])
        out.append(ReliabilityBin(b / BINS, (b + 1) / BINS, n,
                                  float(s[column(f"p{b}", "c1")]) / n if n else None,
                                  float(s[column(f"y{b}", "c1")]) / n if n else None))
    return out
