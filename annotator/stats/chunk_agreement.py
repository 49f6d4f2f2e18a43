"""Chunk-level agreement between a judge and a person (human = truth, relevant = positive).

Every statistic is a :class:`Stat`: a value, or None with the reason it is undefined (one
class only, nothing decided, ...), never a silent 0 or 1. Formulas follow
docs/statistics.md and are checked against scikit-learn, statsmodels and krippendorff.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from annotator.lazy import np
from annotator.stats.ranks import binomial_two_sided_p, chi_square_1df_p
from annotator.stats.stat import Counts, Stat, ratio
from annotator.text import counted
from annotator.verdict import PAIRS, pair_index


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of (judge, human) verdict pairs; rows are the human truth."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int]]) -> Confusion:
        """Count (human, judge) pairs."""
        counts = [0] * PAIRS
        for human, judge in pairs:
            counts[pair_index(human, judge)] += 1
        tn, fp, fn, tp = counts
        return cls(tp=tp, fp=fp, fn=fn, tn=tn)

    @classmethod
    def of_arrays(cls, human: np.ndarray, judge: np.ndarray) -> Confusion:
        """Count (human, judge) pairs given as two arrays of 0 and 1."""
        tn, fp, fn, tp = np.bincount(2 * np.asarray(human, dtype=np.int64)
                                     + np.asarray(judge, dtype=np.int64), minlength=PAIRS).tolist()
        return cls(tp=tp, fp=fp, fn=fn, tn=tn)

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                         self.tn + other.tn)

    def __sub__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp - other.tp, self.fp - other.fp, self.fn - other.fn,
                         self.tn - other.tn)

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """(tp, fp, fn, tn), the argument order of the ``*_values`` formulas."""
        return self.tp, self.fp, self.fn, self.tn

    @property
    def n(self) -> int:
        """Number of chunks with both a human and a judge verdict."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def agreements(self) -> int:
        """Chunks where the judge and the person agree."""
        return self.tp + self.tn


NOTHING_DECIDED = "no chunk decided by both"


def _single_class(c: Confusion) -> str | None:
    """Why a chance-corrected coefficient is undefined here, or None when it is defined."""
    if c.n == 0:
        return NOTHING_DECIDED
    if c.tp + c.fp + c.fn == 0:
        return "single class: every chunk is noise for both"
    if c.fp + c.fn + c.tn == 0:
        return "single class: every chunk is relevant for both"
    return None

# The formulas below take counts as numbers or as numpy arrays of bootstrap replicates, so the
# point estimate and every replicate come from the same expression. Undefined gives nan; the
# Stat wrappers turn that into None with a reason.


def _one_class(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    return (tp + fp + fn == 0) | (fp + fn + tn == 0)


def _nan_where(undefined: Counts, value: Counts) -> Counts:
    """nan where ``undefined`` holds, else ``value``."""
    if isinstance(undefined, bool):
        # Plain counts (the annotation screen's agreement so far) need no numpy.
        return math.nan if undefined else value
    return np.where(undefined, np.nan, value)


def _zero_where(exact: Counts, value: Counts) -> Counts:
    """0 where ``exact`` holds, else ``value`` (plain counts need no numpy)."""
    if isinstance(exact, bool):
        return 0.0 if exact else value
    return np.where(exact, 0.0, value)


def percent_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Percent agreement from counts (nan when there are none)."""
    return ratio(tp + tn, tp + fp + fn + tn)


def kappa_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Cohen's kappa from counts (nan for a single class). Where the 2x2 table says agreement
    is exactly chance's (tp*tn == fp*fn: a judge that calls every chunk the same, say), kappa
    is exactly 0, never the 9e-17 that subtracting two rounded shares leaves."""
    n = tp + fp + fn + tn
    p_judge, p_human, observed = ratio(tp + fp, n), ratio(tp + fn, n), ratio(tp + tn, n)
    expected = p_judge * p_human + (1 - p_judge) * (1 - p_human)
    value = _zero_where(tp * tn == fp * fn, ratio(observed - expected, 1 - expected))
    return _nan_where(_one_class(tp, fp, fn, tn), value)


def ac1_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Gwet's AC1 from counts: chance agreement 2*pi*(1-pi) from the pooled prevalence."""
    n = tp + fp + fn + tn
    pooled = ratio(2 * tp + fp + fn, 2 * n)
    expected = 2 * pooled * (1 - pooled)
    # Unlike kappa, AC1 is defined for a single class: chance agreement is 0, AC1 is p_o.
    return ratio(ratio(tp + tn, n) - expected, 1 - expected)


def alpha_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Krippendorff's alpha (nominal, two raters, nothing missing) from counts."""
    n_values = 2 * (tp + fp + fn + tn)
    ones = 2 * tp + fp + fn
    value = 1 - (n_values - 1) * ratio(fp + fn, (n_values - ones) * ones)
    return _nan_where(_one_class(tp, fp, fn, tn), value)


def precision_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """The judge's precision (human = truth) from counts."""
    return ratio(tp, tp + fp)


def recall_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """The judge's recall (human = truth) from counts."""
    return ratio(tp, tp + fn)


def f1_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """The judge's F1 (human = truth) from counts."""
    return ratio(2 * tp, 2 * tp + fp + fn)


def human_prevalence_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Share of chunks the person calls useful, from counts."""
    return ratio(tp + fn, tp + fp + fn + tn)


def judge_prevalence_values(tp: Counts, fp: Counts, fn: Counts, tn: Counts) -> Counts:
    """Share of chunks the judge calls useful, from counts."""
    return ratio(tp + fp, tp + fp + fn + tn)


def _stat(value: Counts, reason: str | None) -> Stat:
    if reason is not None:
        return Stat.undefined(reason)
    number = float(value)
    return Stat.undefined("undefined for these counts") if math.isnan(number) else Stat(number)


def percent_agreement(c: Confusion) -> Stat:
    """Share of chunks on which the judge and the person agree."""
    return _stat(percent_values(*c.counts), NOTHING_DECIDED if c.n == 0 else None)


def cohen_kappa(c: Confusion) -> Stat:
    """Cohen's kappa: agreement corrected by each rater's own marginals."""
    return _stat(kappa_values(*c.counts), _single_class(c))


def gwet_ac1(c: Confusion) -> Stat:
    """Gwet's AC1: chance agreement from the pooled prevalence; stable when prevalence is skewed."""
    return _stat(ac1_values(*c.counts), NOTHING_DECIDED if c.n == 0 else None)


def krippendorff_alpha(c: Confusion) -> Stat:
    """Krippendorff's alpha (nominal) for two raters with no missing values."""
    return _stat(alpha_values(*c.counts), _single_class(c))


def precision(c: Confusion) -> Stat:
    """Share of the judge's 'useful' verdicts that the person also calls useful."""
    return _stat(precision_values(*c.counts),
                 "the judge called no chunk useful" if c.tp + c.fp == 0 else None)


def recall(c: Confusion) -> Stat:
    """Share of the person's useful chunks that the judge also calls useful."""
    return _stat(recall_values(*c.counts),
                 "the person called no chunk useful" if c.tp + c.fn == 0 else None)


def f1(c: Confusion) -> Stat:
    """Harmonic mean of the judge's precision and recall."""
    return _stat(f1_values(*c.counts),
                 "no chunk is useful for either" if 2 * c.tp + c.fp + c.fn == 0 else None)


def human_prevalence(c: Confusion) -> Stat:
    """Share of chunks the person calls useful."""
    return _stat(human_prevalence_values(*c.counts), NOTHING_DECIDED if c.n == 0 else None)


def judge_prevalence(c: Confusion) -> Stat:
    """Share of chunks the judge calls useful."""
    return _stat(judge_prevalence_values(*c.counts), NOTHING_DECIDED if c.n == 0 else None)


def prevalence(c: Confusion) -> tuple[Stat, Stat]:
    """Share of chunks called useful by the person, and by the judge."""
    return human_prevalence(c), judge_prevalence(c)


CHUNK_STATISTICS: dict[str, tuple[Callable[[Confusion], Stat], Callable[..., Counts]]] = {
    "percent": (percent_agreement, percent_values),
    "cohen_kappa": (cohen_kappa, kappa_values),
    "gwet_ac1": (gwet_ac1, ac1_values),
    "krippendorff_alpha": (krippendorff_alpha, alpha_values),
    "precision": (precision, precision_values),
    "recall": (recall, recall_values),
    "f1": (f1, f1_values),
    "prevalence_human": (human_prevalence, human_prevalence_values),
    "prevalence_judge": (judge_prevalence, judge_prevalence_values),
}
"""Each chunk-level statistic: its Stat (with the reason when undefined) and its formula on
counts (for bootstrap replicates), by the key the report and the leaderboard use."""


def direction(c: Confusion, p: float | None = None) -> str:
    """Which way the judge errs, as a sentence: stated as a finding only when ``p`` (the
    cluster-adjusted McNemar test's) is below 0.05, otherwise as a lean chance may explain."""
    if c.fp == c.fn == 0:
        return "The judge and the person agree on every chunk decided by both."
    looser = f"{counted(c.fp, 'chunk')} the judge calls useful and the person noise"
    stricter = f"{counted(c.fn, 'chunk')} the judge calls noise and the person useful"
    if c.fp == c.fn:
        lead = "The judge errs both ways equally"
    else:
        way = "looser" if c.fp > c.fn else "stricter"
        lead = (f"The judge is {way} than the person" if p is not None and p < SIGNIFICANT
                else f"The judge leans {way} than the person, no more than chance explains")
    return f"{lead}: {looser}; {stricter}."


SIGNIFICANT = 0.05
"""The level below which a test's p makes a direction a finding rather than a lean."""


def kappa_paradox_note(c: Confusion) -> str | None:
    """A sentence when kappa and AC1 tell different stories because prevalence is extreme."""
    kappa, ac1 = cohen_kappa(c), gwet_ac1(c)
    if kappa.value is None or ac1.value is None:
        return None
    human, _ = prevalence(c)
    if abs(ac1.value - kappa.value) >= 0.2 and human.value is not None and (
            human.value >= 0.8 or human.value <= 0.2):
        return (f"Kappa ({kappa.value:.2f}) and AC1 ({ac1.value:.2f}) disagree because "
                f"{human.value:.0%} of chunks are relevant: with prevalence this extreme kappa "
                "is pulled down even when agreement is high; read both.")
    return None


@dataclass(frozen=True, slots=True)
class ChunkAgreement:
    """Every chunk-level agreement statistic of one confusion table."""

    confusion: Confusion
    percent: Stat
    cohen_kappa: Stat
    gwet_ac1: Stat
    krippendorff_alpha: Stat
    precision: Stat
    recall: Stat
    f1: Stat
    human_prevalence: Stat
    judge_prevalence: Stat
    note: str | None

    @classmethod
    def of(cls, c: Confusion) -> ChunkAgreement:
        """All statistics of a confusion table."""
        human, judge = prevalence(c)
        return cls(c, percent_agreement(c), cohen_kappa(c), gwet_ac1(c), krippendorff_alpha(c),
                   precision(c), recall(c), f1(c), human, judge, kappa_paradox_note(c))


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """The Wilson score interval for a proportion (95% by default); None when n is 0."""
    if n == 0:
        return None
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return (centre - spread) / scale, (centre + spread) / scale


def rate(successes: int, n: int, undefined: str) -> Stat:
    """successes / n with its Wilson 95% interval (items as independent), or undefined with the
    reason given when n is 0."""
    if n == 0:
        return Stat.undefined(undefined)
    return Stat(successes / n).with_interval(wilson_interval(successes, n))


@dataclass(frozen=True, slots=True)
class McNemar:
    """Is the judge looser or stricter than the person beyond chance? (discordant chunks only)."""

    looser: int
    """Chunks the judge calls useful and the person noise (fp)."""
    stricter: int
    """Chunks the judge calls noise and the person useful (fn)."""
    exact_p: Stat
    """Exact McNemar p, treating chunks as independent (an iid reference only)."""
    cluster_statistic: Stat
    """Durkalski's cluster-adjusted chi-square (1 df), goldens as clusters."""
    cluster_p: Stat

    @classmethod
    def of(cls, looser: Sequence[int], stricter: Sequence[int]) -> McNemar:
        """From per-golden counts of looser (fp) and stricter (fn) chunks."""
        b, c = np.asarray(looser, dtype=float), np.asarray(stricter, dtype=float)
        total_b, total_c = int(b.sum()), int(c.sum())
        if total_b + total_c == 0:
            none = Stat.undefined("the judge and the person never disagree")
            return cls(0, 0, none, none, none)
        exact = binomial_two_sided_p(min(total_b, total_c), total_b + total_c)
        d = b - c
        spread = float((d * d).sum())
        if spread == 0:
            even = Stat.undefined("every golden has as many looser as stricter chunks")
            return cls(total_b, total_c, Stat(exact), even, even)
        statistic = float(d.sum()) ** 2 / spread
        return cls(total_b, total_c, Stat(exact), Stat(statistic),
                   Stat(chi_square_1df_p(statistic)))
