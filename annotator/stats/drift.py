"""Has a judge drifted? One re-check of a frozen canary against the verdicts it was measured
with, a running bound that stays valid however often one looks, and the canary size to ask for.

One re-check compares, chunk by chunk, the judge's verdicts in force (``before``) with the
verdicts it gives the same canary now (``after``), both against the people's labels:

- flips by direction (useful -> noise, noise -> useful; right -> wrong, wrong -> right);
- the drop in Cohen's kappa, before minus after, with the leaderboard's paired golden bootstrap
  (both kappas on the same resampled goldens);
- Durkalski's cluster McNemar test on right -> wrong against wrong -> right, one-sided;
- **worse** when the McNemar test says the judge got more wrong (p < alpha) *and* the kappa drop
  passes the tolerance: a real drop, and one that matters.

Re-checked again and again, that fixed-sample test raises false alarms: each look is another
chance to cross by luck. The running bound is a confidence sequence instead: with probability
1 - alpha it holds at every re-check at once, so looking after each changes nothing. It bounds
the drop in *agreement* (the share of canary chunks the judge gets right: a mean of bounded
observations, which a confidence sequence needs; kappa is not one): a lower bound on the
baseline's agreement (alpha / 2) minus an upper bound on the re-checks' agreement so far, each
a predictable plug-in empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas 2023,
"Estimating means of bounded random variables by betting", JRSS-B 86(1), Theorem 2, as the
authors' confseq package computes it). The alarm sounds when the lower bound passes the
tolerance read in agreement: a kappa tolerance times (1 - the baseline's chance agreement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from annotator.stats.bootstrap import ClusterSums, Estimates, add_confusion, confusion_formula
from annotator.stats.chunk_agreement import McNemar, kappa_values, percent_values
from annotator.stats.stat import Stat

ALPHA = 0.05
"""The error rate of the re-check's test and of the running bound."""
TRUNCATION = 0.5
"""The largest bet of the empirical-Bernstein sequence (the authors' default)."""
_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class Flips:
    """How the judge's verdicts on the canary moved, by direction."""

    useful_to_noise: int
    noise_to_useful: int
    right_to_wrong: int
    wrong_to_right: int


@dataclass(frozen=True, slots=True)
class RecheckFigures:
    """One re-check: the canary's chunks and goldens, agreement and kappa before and after, the
    kappa drop with its interval, the flips, the McNemar test and the decision."""

    chunks: int
    goldens: int
    agreement_before: Stat
    agreement_after: Stat
    kappa_before: Stat
    kappa_after: Stat
    kappa_drop: Stat
    flips: Flips
    worse_p: Stat
    """One-sided cluster McNemar p that the judge got more chunks wrong than right."""
    tolerance: float
    alpha: float
    worse: bool


def recheck_figures(golden: np.ndarray, truth: np.ndarray, before: np.ndarray,
                    after: np.ndarray, *, tolerance: float, alpha: float = ALPHA,
                    resamples: int = 2000, seed: int | None = 0) -> RecheckFigures:
    """The figures of one re-check: ``golden`` is each chunk's golden index (0..G-1), ``truth``
    the people's label, ``before`` and ``after`` the judge's verdicts (all 0/1, one per chunk)."""
    golden, truth = np.asarray(golden, dtype=np.int64), np.asarray(truth, dtype=np.int8)
    before, after = np.asarray(before, dtype=np.int8), np.asarray(after, dtype=np.int8)
    goldens = int(golden.max()) + 1 if len(golden) else 0
    sums = ClusterSums(goldens)
    add_confusion(sums, golden, truth, before, "before:")
    add_confusion(sums, golden, truth, after, "after:")
    estimates = Estimates(sums, resamples, seed, None)

    kappa_then = confusion_formula(kappa_values, "before:")
    kappa_now = confusion_formula(kappa_values, "after:")
    empty = "no canary chunk has both a verdict before and one now" if not len(golden) else None
    stats = {key: estimates.stat(key, confusion_formula(formula, prefix), empty)
             for key, formula, prefix in (
                 ("agreement_before", percent_values, "before:"),
                 ("agreement_after", percent_values, "after:"),
                 ("kappa_before", kappa_values, "before:"),
                 ("kappa_after", kappa_values, "after:"))}
    kappa_drop = estimates.stat("kappa_drop", lambda s: kappa_then(s) - kappa_now(s), empty)
    right_before, right_after = before == truth, after == truth
    flips = Flips(int(((before == 1) & (after == 0)).sum()),
                  int(((before == 0) & (after == 1)).sum()),
                  int((right_before & ~right_after).sum()),
                  int((~right_before & right_after).sum()))
    worse_p = one_sided_mcnemar(golden, right_before & ~right_after,
                                ~right_before & right_after, goldens)
    worse = (worse_p.value is not None and worse_p.value < alpha
             and kappa_drop.value is not None and kappa_drop.value > tolerance)
    return RecheckFigures(len(golden), goldens, stats["agreement_before"],
                          stats["agreement_after"], stats["kappa_before"], stats["kappa_after"],
                          kappa_drop, flips, worse_p, tolerance, alpha, worse)


def one_sided_mcnemar(golden: np.ndarray, worse: np.ndarray, better: np.ndarray,
                      goldens: int) -> Stat:
    """Durkalski's cluster McNemar test, one-sided: p that right -> wrong flips outnumber
    wrong -> right ones beyond chance (goldens as clusters)."""
    test = McNemar.of(np.bincount(golden[worse], minlength=goldens).tolist(),
                      np.bincount(golden[better], minlength=goldens).tolist())
    if test.cluster_p.value is None:
        if test.looser + test.stricter == 0:
            return Stat.undefined("no chunk changed between right and wrong")
        # Every golden as many each way: no evidence either way.
        return Stat(1.0 if test.looser <= test.stricter else 0.5)
    two_sided = test.cluster_p.value
    return Stat(two_sided / 2 if test.looser > test.stricter else 1 - two_sided / 2)


def agreement_tolerance(tolerance: float, truth: np.ndarray, verdicts: np.ndarray) -> float:
    """A kappa tolerance read in agreement: times (1 - chance agreement) of these verdicts
    against these labels (kappa = (agreement - chance) / (1 - chance))."""
    if not len(truth):
        return tolerance
    p_human, p_judge = float(np.mean(truth)), float(np.mean(verdicts))
    chance = p_human * p_judge + (1 - p_human) * (1 - p_judge)
    return tolerance * (1 - chance)


def lower_sequence(x: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """A lower confidence sequence for the running mean of observations in [0, 1]: the value at
    t holds for the mean of the first t observations' conditional means, at every t at once,
    with probability 1 - alpha (predictable plug-in empirical Bernstein, one-sided)."""
    x = np.asarray(x, dtype=float)
    if not len(x):
        return np.zeros(0)
    t = np.arange(1, len(x) + 1)
    # The bets: predictable (from observations before t), regularized toward mean 1/2 and
    # variance 1/4 by one fake observation, shrinking like 1/sqrt(t log t), at most TRUNCATION.
    regular_mean = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1)
    spread = (0.25 + np.cumsum((x - regular_mean) ** 2)) / (t + 1)
    spread_before = np.append(0.25, spread[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2 * math.log(1 / alpha) / (t * np.log1p(t) * spread_before))
    bets = np.minimum(np.nan_to_num(bets, nan=0.0), TRUNCATION)
    mean_before = np.append(0.0, (np.cumsum(x) / t)[:-1])
    penalty = (x - mean_before) ** 2 * (-np.log1p(-bets) - bets)
    weight = np.cumsum(bets)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = (np.cumsum(bets * x) - math.log(1 / alpha) - np.cumsum(penalty)) / weight
    return np.asarray(np.maximum(np.nan_to_num(low, nan=0.0, neginf=0.0), 0.0), dtype=float)


def upper_sequence(x: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """The upper confidence sequence matching ``lower_sequence`` (from 1 - x)."""
    return np.asarray(1 - lower_sequence(1 - np.asarray(x, dtype=float), alpha))


@dataclass(frozen=True, slots=True)
class RunningBound:
    """The drift bound after one re-check: the agreement drop so far and its lower bound."""

    drop: float
    """Baseline agreement minus the re-checks' agreement so far."""
    lower: float
    """Lower bound on that drop, valid at every re-check at once."""
    alarm: bool
    """The lower bound passed the tolerance (read in agreement)."""


def running_bounds(baseline: np.ndarray, rechecks: Sequence[np.ndarray], tolerance: float,
                   alpha: float = ALPHA) -> list[RunningBound]:
    """The bound after each re-check: ``baseline`` is 1 where the judge's verdict in force was
    right on a canary chunk, each of ``rechecks`` 1 where that re-check's verdict was (chunks in
    the canary's order); ``tolerance`` in agreement."""
    baseline = np.asarray(baseline, dtype=float)
    if not len(baseline) or not rechecks:
        return []
    base_low = float(lower_sequence(baseline, alpha / 2)[-1])
    stream = np.concatenate([np.asarray(r, dtype=float) for r in rechecks])
    high = upper_sequence(stream, alpha / 2)
    ends = np.cumsum([len(r) for r in rechecks]) - 1
    running = np.cumsum(stream)
    out = []
    for end in ends:
        drop = float(baseline.mean() - running[end] / (end + 1))
        lower = base_low - float(high[end])
        out.append(RunningBound(drop, lower, lower > tolerance))
    return out


def canary_size(*, prevalence: float, sensitivity: float, specificity: float,
                instability: float, drop: float, tolerance: float, alpha: float = ALPHA,
                power: float = 0.9, per_golden: int = 1, sims: int = 4000, seed: int = 0,
                largest: int = 100_000) -> int | None:
    """The fewest canary chunks with which one re-check finds a judge worse (``worse`` above)
    in ``power`` of the runs, when its agreement dropped by ``drop``: simulated from the judge's
    figures (the share of useful chunks, its sensitivity and specificity) and ``instability``
    (the share of its verdicts that change between two runs of the same request, each way in
    balance), on goldens of ``per_golden`` chunks tested as the re-check tests them (Durkalski's
    cluster McNemar). The power is read from ``sims`` simulated re-checks, at its lower 95%
    bound. None when even ``largest`` chunks fall short."""
    rng = np.random.default_rng(seed)
    accuracy = prevalence * sensitivity + (1 - prevalence) * specificity
    if drop <= 0 or drop >= accuracy:
        return None
    # An unchanged judge flips right and wrong verdicts in balance; the drift adds right -> wrong.
    right_flip = (instability / 2 + drop) / accuracy
    wrong_flip = instability / 2 / (1 - accuracy) if accuracy < 1 else 0.0
    if right_flip > 1 or wrong_flip > 1:
        return None

    def detected(n: int) -> float:
        n = -(-n // per_golden) * per_golden  # whole goldens
        truth = rng.random((sims, n)) < prevalence
        right = np.where(truth, rng.random((sims, n)) < sensitivity,
                         rng.random((sims, n)) < specificity)
        flip = np.where(right, rng.random((sims, n)) < right_flip,
                        rng.random((sims, n)) < wrong_flip)
        before = np.where(right, truth, ~truth)
        after = before ^ flip
        d = ((right & flip).astype(np.int64) - (~right & flip)).reshape(
            sims, n // per_golden, per_golden).sum(2)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = d.sum(1) / np.sqrt((d * d).sum(1))
        significant = np.nan_to_num(z, nan=0.0) > _NORMAL.inv_cdf(1 - alpha)
        kappa_drop = _kappas(truth, before) - _kappas(truth, after)
        share = float(np.mean(significant & (kappa_drop > tolerance)))
        # The simulated power's one-sided 95% lower bound: a size that only seems to reach the
        # power by the luck of the simulation is not enough.
        return share - _NORMAL.inv_cdf(0.95) * math.sqrt(share * (1 - share) / sims)

    low, high = per_golden, 16 * per_golden
    while detected(high) < power:
        low, high = high, high * 2
        if high > largest:
            return None
    while high - low > max(per_golden, low // 50):  # within 2%: the simulation is no finer
        middle = (low + high) // 2
        if detected(middle) >= power:
            high = middle
        else:
            low = middle
    return -(-high // per_golden) * per_golden


def _kappas(truth: np.ndarray, verdict: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each row (a simulated canary)."""
    n = truth.shape[1]
    tp = (truth & verdict).sum(1)
    fp = (~truth & verdict).sum(1)
    fn = (truth & ~verdict).sum(1)
    return np.asarray(kappa_values(tp, fp, fn, n - tp - fp - fn), dtype=float)
