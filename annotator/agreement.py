"""Chunk-level agreement between a judge and a person (human = truth, relevant = positive).

Every statistic is a :class:`Stat`: a value, or None with the reason it is undefined (one
class only, nothing decided, ...), never a silent 0 or 1. Formulas follow
``reference/statistics.md`` and are checked against scikit-learn, statsmodels and krippendorff.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stat:
    """A statistic's value, or None with the reason it is undefined."""

    value: float | None
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str) -> Stat:
        """An undefined statistic, with why."""
        return cls(None, reason)

    def format(self, digits: int = 3) -> str:
        """The value with ``digits`` decimals, or 'undefined (reason)'."""
        if self.value is None:
            return f"undefined ({self.reason})"
        return f"{self.value:.{digits}f}"


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
        counts = [0, 0, 0, 0]  # indexed by 2*human + judge: tn, fp, fn, tp
        for human, judge in pairs:
            counts[2 * human + judge] += 1
        tn, fp, fn, tp = counts
        return cls(tp=tp, fp=fp, fn=fn, tn=tn)

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                         self.tn + other.tn)

    def __sub__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp - other.tp, self.fp - other.fp, self.fn - other.fn,
                         self.tn - other.tn)

    @property
    def n(self) -> int:
        """Number of chunks with both a human and a judge verdict."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def agreements(self) -> int:
        """Chunks where the judge and the person agree."""
        return self.tp + self.tn


def _single_class(c: Confusion) -> str | None:
    """Why a chance-corrected coefficient is undefined here, or None when it is defined."""
    if c.n == 0:
        return "no chunk decided by both"
    if c.tp + c.fp + c.fn == 0:
        return "single class: every chunk is noise for both"
    if c.fp + c.fn + c.tn == 0:
        return "single class: every chunk is relevant for both"
    return None


def percent_agreement(c: Confusion) -> Stat:
    """Share of chunks on which the judge and the person agree."""
    if c.n == 0:
        return Stat.undefined("no chunk decided by both")
    return Stat(c.agreements / c.n)


def _chance_corrected(c: Confusion, expected: float) -> Stat:
    if (reason := _single_class(c)) is not None:
        return Stat.undefined(reason)
    observed = c.agreements / c.n
    if math.isclose(expected, 1.0):
        return Stat.undefined("chance agreement is 1")
    return Stat((observed - expected) / (1 - expected))


def cohen_kappa(c: Confusion) -> Stat:
    """Cohen's kappa: agreement corrected by each rater's own marginals."""
    if c.n == 0:
        return Stat.undefined("no chunk decided by both")
    p_judge = (c.tp + c.fp) / c.n
    p_human = (c.tp + c.fn) / c.n
    return _chance_corrected(c, p_judge * p_human + (1 - p_judge) * (1 - p_human))


def gwet_ac1(c: Confusion) -> Stat:
    """Gwet's AC1: chance agreement 2*pi*(1-pi) from the pooled prevalence; stable when skewed."""
    if c.n == 0:
        return Stat.undefined("no chunk decided by both")
    pooled = ((c.tp + c.fp) + (c.tp + c.fn)) / (2 * c.n)
    expected = 2 * pooled * (1 - pooled)
    observed = c.agreements / c.n
    # Unlike kappa, AC1 is defined for a single class: chance agreement is 0, AC1 is p_o.
    return Stat((observed - expected) / (1 - expected))


def krippendorff_alpha(c: Confusion) -> Stat:
    """Krippendorff's alpha (nominal) for two raters with no missing values."""
    if (reason := _single_class(c)) is not None:
        return Stat.undefined(reason)
    n_values = 2 * c.n
    ones = 2 * c.tp + c.fp + c.fn
    zeros = n_values - ones
    return Stat(1 - (n_values - 1) * (c.fp + c.fn) / (zeros * ones))


def precision(c: Confusion) -> Stat:
    """Share of the judge's 'useful' verdicts that the person also calls useful."""
    if c.tp + c.fp == 0:
        return Stat.undefined("the judge called no chunk useful")
    return Stat(c.tp / (c.tp + c.fp))


def recall(c: Confusion) -> Stat:
    """Share of the person's useful chunks that the judge also calls useful."""
    if c.tp + c.fn == 0:
        return Stat.undefined("the person called no chunk useful")
    return Stat(c.tp / (c.tp + c.fn))


def f1(c: Confusion) -> Stat:
    """Harmonic mean of the judge's precision and recall."""
    if 2 * c.tp + c.fp + c.fn == 0:
        return Stat.undefined("no chunk is useful for either")
    return Stat(2 * c.tp / (2 * c.tp + c.fp + c.fn))


def prevalence(c: Confusion) -> tuple[Stat, Stat]:
    """Share of chunks called useful by the person, and by the judge."""
    if c.n == 0:
        undefined = Stat.undefined("no chunk decided by both")
        return undefined, undefined
    return Stat((c.tp + c.fn) / c.n), Stat((c.tp + c.fp) / c.n)


def direction(c: Confusion) -> str:
    """Which way the judge errs, as a sentence."""
    if c.fp == c.fn == 0:
        return "The judge and the person agree on every chunk decided by both."
    looser = f"{c.fp} chunk{'s' if c.fp != 1 else ''} the judge calls useful and the person noise"
    stricter = (f"{c.fn} chunk{'s' if c.fn != 1 else ''} the judge calls noise and the person "
                "useful")
    if c.fp > c.fn:
        lead = "The judge is looser than the person"
    elif c.fn > c.fp:
        lead = "The judge is stricter than the person"
    else:
        lead = "The judge errs both ways equally"
    return f"{lead}: {looser}; {stricter}."


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
    direction: str
    note: str | None

    @classmethod
    def of(cls, c: Confusion) -> ChunkAgreement:
        """All statistics of a confusion table."""
        human, judge = prevalence(c)
        return cls(c, percent_agreement(c), cohen_kappa(c), gwet_ac1(c), krippendorff_alpha(c),
                   precision(c), recall(c), f1(c), human, judge, direction(c),
                   kappa_paradox_note(c))
