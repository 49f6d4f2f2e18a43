"""Golden-level agreement: context precision under human labels versus under judge labels.

Each statistic is a function of sums over the goldens complete under both label sets, so the
report gets the estimate and every bootstrap replicate from one expression (nan = undefined).
Columns: ``n`` goldens, ``h``/``j`` sums of CP, ``hh``/``jj``/``hj`` sums of products, ``ad``
sum of |judge - human|, ``dd`` sum of squared differences, ``big`` goldens with |difference|
over 0.1, ``pass_h``/``pass_j`` goldens passing, ``change`` goldens whose pass/fail differs.
Rank correlations (Spearman, Kendall) have no such form and come from annotator.stats.ranks
(checked against scipy), without intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotator.stats import ranks
from annotator.stats.bootstrap import Sums
from annotator.stats.stat import Counts, Stat, ratio

BIG_DIFFERENCE = 0.1
"""A golden whose CP moves by more than this between label sets counts as a big difference."""
TINY = 1e-12
"""Variances below this are treated as zero (constant CP): correlations are then undefined."""
SAME_CP = 1e-9
"""CP values this close are equal: RAGAS's 1e-10 epsilon makes 1/(1+e) and 2/(2+e) differ."""


def mean_human(s: Sums) -> Counts:
    """Mean CP under human labels."""
    return ratio(s["h"], s["n"])


def mean_judge(s: Sums) -> Counts:
    """Mean CP under judge labels."""
    return ratio(s["j"], s["n"])


def bias(s: Sums) -> Counts:
    """Mean of CP(judge) - CP(human): positive when the judge flatters the retriever."""
    return ratio(s["j"] - s["h"], s["n"])


def mae(s: Sums) -> Counts:
    """Mean absolute difference between CP under the two label sets."""
    return ratio(s["ad"], s["n"])


def rmse(s: Sums) -> Counts:
    """Root mean squared difference between CP under the two label sets."""
    return np.sqrt(ratio(s["dd"], s["n"]))


def big_differences(differences: np.ndarray) -> np.ndarray:
    """1.0 where a golden's CP moves by more than BIG_DIFFERENCE between label sets: values
    equal within SAME_CP are equal, so a move of 0.1 that RAGAS's epsilon nudges past it is
    not big."""
    return np.asarray(np.abs(differences) > BIG_DIFFERENCE + SAME_CP, dtype=float)


def share_big(s: Sums) -> Counts:
    """Share of goldens whose CP differs by more than BIG_DIFFERENCE."""
    return ratio(s["big"], s["n"])


def pass_rate_human(s: Sums) -> Counts:
    """Share of goldens reaching the pass mark under human labels."""
    return ratio(s["pass_h"], s["n"])


def pass_rate_judge(s: Sums) -> Counts:
    """Share of goldens reaching the pass mark under judge labels."""
    return ratio(s["pass_j"], s["n"])


def _moments(s: Sums) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Means, 1/n variances and covariance of (human, judge)."""
    mh, mj = mean_human(s), mean_judge(s)
    var_h = ratio(s["hh"], s["n"]) - mh * mh
    var_j = ratio(s["jj"], s["n"]) - mj * mj
    cov = ratio(s["hj"], s["n"]) - mh * mj
    return mh, mj, var_h, var_j, cov


def pearson(s: Sums) -> Counts:
    """Pearson correlation of CP under the two label sets (nan when either is constant)."""
    _, _, var_h, var_j, cov = _moments(s)
    defined = (var_h > TINY) & (var_j > TINY)
    return np.where(defined, ratio(cov, np.sqrt(np.abs(var_h * var_j))), np.nan)


def ccc(s: Sums) -> Counts:
    """Lin's concordance correlation (1/n moments): agreement, so it penalises bias."""
    mh, mj, var_h, var_j, cov = _moments(s)
    den = var_h + var_j + (mh - mj) ** 2
    return np.where(den > TINY, ratio(2 * cov, den), np.nan)


def bland_altman(differences: Sequence[float]) -> tuple[Stat, Stat]:
    """Bland-Altman 95% limits of agreement: bias -/+ 1.96 sd of the differences (ddof 1)."""
    if len(differences) < 2:
        none = Stat.undefined("needs at least two goldens")
        return none, none
    d = np.asarray(differences, dtype=float)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    return Stat(mean - 1.96 * sd), Stat(mean + 1.96 * sd)


def rank_correlations(human: Sequence[float], judge: Sequence[float]) -> tuple[Stat, Stat]:
    """Spearman's rho and Kendall's tau-b (ties handled), or undefined with the reason."""
    reason = constant_reason(human, judge)
    if reason is not None:
        return Stat.undefined(reason), Stat.undefined(reason)
    return Stat(ranks.spearman_rho(human, judge)), Stat(ranks.kendall_tau_b(human, judge))


def ccc_reason(human: Sequence[float], judge: Sequence[float]) -> str | None:
    """Why Lin's CCC is undefined, or None: it needs CP to vary under at least one label set."""
    if len(human) < 2:
        return "needs at least two goldens"
    if np.ptp(np.concatenate([np.asarray(human), np.asarray(judge)])) <= SAME_CP:
        return "CP is the same on every golden under both label sets"
    return None


def constant_reason(human: Sequence[float], judge: Sequence[float]) -> str | None:
    """Why a correlation of the two CP lists is undefined, or None."""
    if len(human) < 2:
        return "needs at least two goldens"
    if np.ptp(np.asarray(human)) <= SAME_CP:
        return "CP under human labels is the same on every golden"
    if np.ptp(np.asarray(judge)) <= SAME_CP:
        return "CP under judge labels is the same on every golden"
    return None
