"""Rank statistics and two p-values in numpy, so the report never imports scipy.stats.

Importing scipy.stats costs about 0.7 s of CPU, more than everything else a small report
does; these few functions are all the report needs from it. Each is checked against scipy on
random data with ties in tests/test_ranks.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from annotator.lazy import np

if TYPE_CHECKING:
    import numpy.typing as npt


def average_ranks(values: npt.ArrayLike) -> np.ndarray:
    """Ranks 1..n, tied values sharing their mean rank (scipy.stats.rankdata's 'average')."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    # Each run of equal values gets the mean of the positions it spans.
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(x)]
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(len(x), dtype=float)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman_rho(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (nan when one is constant)."""
    return _pearson(average_ranks(x), average_ranks(y))


def kendall_tau_b(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Kendall's tau-b, ties adjusted, in O(n log^2 n) (nan when one side is constant)."""
    a, b = _dense(x), _dense(y)
    n = len(a)
    order = np.lexsort((b, a))  # by x, then y: pairs tied in x are never counted discordant
    a, b = a[order], b[order]
    pairs = n * (n - 1) // 2
    tied_x = _tied_pairs(a)
    tied_y = _tied_pairs(b)
    tied_both = _tied_pairs(a * (int(b.max(initial=0)) + 1) + b)
    discordant = _inversions(b)
    concordant = pairs - tied_x - tied_y + tied_both - discordant
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return (concordant - discordant) / denominator if denominator else math.nan


def binomial_two_sided_p(k: int, n: int) -> float:
    """The exact two-sided p of k or fewer successes in n fair trials (McNemar's exact test)."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    # log C(n, i) by a running sum of log((n - i + 1) / i), then a stable log-sum-exp.
    i = np.arange(1, k + 1, dtype=float)
    log_choose = np.r_[0.0, np.cumsum(np.log((n - i + 1) / i))]
    top = float(log_choose.max())
    log_cdf = top + math.log(float(np.exp(log_choose - top).sum())) - n * math.log(2.0)
    return min(1.0, 2.0 * math.exp(log_cdf))


def chi_square_1df_p(statistic: float) -> float:
    """The upper-tail p of a chi-square statistic with one degree of freedom."""
    return math.erfc(math.sqrt(max(statistic, 0.0) / 2.0))


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return float((dx * dy).sum()) / denominator if denominator else math.nan


def _dense(values: npt.ArrayLike) -> np.ndarray:
    """Values as dense integer ranks 0..m-1 (equal values, equal rank)."""
    return np.unique(np.asarray(values, dtype=float), return_inverse=True)[1].astype(np.int64)


def _tied_pairs(values: np.ndarray) -> int:
    """How many pairs hold equal values."""
    counts = np.unique(values, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _inversions(values: np.ndarray) -> int:
    """Pairs i < j with values[i] > values[j], by a bottom-up merge sort done a level at a
    time: within each block of 2w, every right-half value counts the left-half values above
    it, found by one searchsorted over all blocks (block number * m + value keeps each block's
    values apart and in order)."""
    n = len(values)
    m = int(values.max(initial=0)) + 1
    a = values.astype(np.int64)
    index = np.arange(n)
    count = 0
    width = 1
    while width < n:
        block = index // (2 * width)
        right = index % (2 * width) >= width
        key = block * m + a
        left_keys = key[~right]  # each half is sorted (the previous level), blocks in order
        ends = np.searchsorted(left_keys, (block[right] + 1) * m, side="left")
        above = np.searchsorted(left_keys, key[right], side="right")
        count += int((ends - above).sum())
        a = np.sort(key) - block * m  # merge: every block of 2w sorted
        width *= 2
    return count


# -- rankings of a few systems, for every bootstrap replicate at once ---------------------------
# A ranking is a row of scores, one per system (the last axis); any leading axes are
# replicates. Higher scores rank first. Scores within TIE_TOLERANCE of each other are tied: two
# systems' mean CP summed in another order may differ in the last bit, never in substance.

TIE_TOLERANCE = 1e-9
"""Scores closer than this rank equal (docs/statistics.md)."""


def _order(scores: np.ndarray) -> np.ndarray:
    """[..., i, j] = +1 where system j scores above system i, -1 below, 0 within tolerance."""
    gap = scores[..., None, :] - scores[..., :, None]
    return np.where(gap > TIE_TOLERANCE, 1, np.where(gap < -TIE_TOLERANCE, -1, 0))


def ranking_tau_b(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between two rankings of the same systems, per row (nan where either
    ranks every system equal): concordant minus discordant pairs, over the untied pairs."""
    n = truth.shape[-1]
    a, b = np.triu_indices(n, 1)
    by_truth = _order(np.asarray(truth, dtype=float))[..., a, b]
    by_estimate = _order(np.asarray(estimate, dtype=float))[..., a, b]
    pairs = len(a)
    untied = ((pairs - (by_truth == 0).sum(-1)) * (pairs - (by_estimate == 0).sum(-1))
              ).astype(float)
    agree = (by_truth * by_estimate).sum(-1).astype(float)
    out = np.full(np.shape(agree), np.nan)
    np.divide(agree, np.sqrt(untied), out=out, where=untied > 0)
    return out


def _tau_ap_ties(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One direction of tau_AP_b: down ``y``'s order, each system not in y's top tie group
    scores the share of the systems strictly above it in y that ``x`` also ranks strictly
    above it (a tie in x is no agreement); 2 x the mean score - 1 (nan: y ties every system)."""
    above_in_y = _order(y) > 0  # [i, j]: j strictly above i in y
    above_in_x = _order(x) > 0
    p = above_in_y.sum(-1)
    agree = (above_in_y & above_in_x).sum(-1)
    share = np.divide(agree, p, out=np.zeros(np.shape(agree)), where=p > 0)
    scored = (p > 0).sum(-1)
    out = np.full(np.shape(scored), np.nan)
    np.divide(2.0 * share.sum(-1), scored, out=out, where=scored > 0)
    return out - 1.0


def ranking_tau_ap(truth: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """tau_AP_b (Urbano & Marrero, ICTIR 2017), per row: the tie-aware form of Yilmaz, Aslam
    and Robertson's AP rank correlation, made symmetric as the mean of its two directions (each
    ranking read down the other's order), as ircor's tauAP_b and TREC AutoJudge compute it; so
    it is not Yilmaz's one-directional tau_AP, even without ties. Top-weighted: swapping the two
    best systems costs more than the two worst. NaN where either ranking ties every system."""
    x, y = np.asarray(truth, dtype=float), np.asarray(estimate, dtype=float)
    return np.asarray((_tau_ap_ties(x, y) + _tau_ap_ties(y, x)) / 2)
