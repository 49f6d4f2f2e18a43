"""Agreement among several people, and of the judge with each of them.

Every coefficient is a formula of per-golden sums (see bootstrap.py), so the goldens can be
resampled for its interval like every other statistic in the report:

- Krippendorff's alpha (nominal) with missing data, from the coincidence matrix over chunks
  with at least two labels; over the people, and over the people plus the judge;
- Fleiss' kappa over the chunks every person labelled;
- Cohen's kappa for every pair of people, and Light's kappa (their mean);
- Cohen's kappa of the judge against each person.

Human-human agreement is the ceiling a judge can be held to: no judge can be shown to agree
with people better than people agree with each other.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from annotator.stats.bootstrap import (
    ClusterSums,
    Estimates,
    Sums,
    add_confusion,
    columns_formula,
    confusion_formula,
    scope,
)
from annotator.stats.chunk_agreement import kappa_values
from annotator.stats.stat import Stat, ratio

Ratings = np.ndarray
"""Raters x chunks, 0.0 / 1.0, NaN where a rater gave no label."""
COINCIDENCES = ("o00", "o01", "o11")
"""The coincidence counts of two categories (o10 = o01) that add_alpha sums per golden."""


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Cohen's kappa of two raters on the chunks both labelled."""

    first: str
    second: str
    chunks: int
    kappa: Stat


@dataclass(frozen=True, slots=True)
class RaterAgreement:
    """How far people agree with each other, and the judge with each of them."""

    people: list[str]
    judge: str | None
    shared_chunks: int
    """Chunks labelled by at least two people (what alpha among people is computed on)."""
    complete_chunks: int
    """Chunks labelled by every person (what Fleiss' kappa is computed on)."""
    stats: dict[str, Stat]
    """alpha_people, alpha_with_judge, fleiss_kappa, light_kappa, judge_mean_kappa."""
    pairs: list[PairAgreement]
    judge_vs: list[PairAgreement]
    """The judge (first) against each person (second)."""

    @property
    def ceiling(self) -> str:
        """A sentence comparing the judge with the human-human ceiling."""
        light, judge = self.stats["light_kappa"], self.stats["judge_mean_kappa"]
        if light.value is None or judge.value is None:
            return ("The human-human ceiling needs two people labelling the same chunks, and the "
                    "judge on them.")
        gap = judge.value - light.value
        if abs(gap) < 0.05:
            how = "about as well as people agree with each other"
        elif gap < 0:
            how = f"{-gap:.2f} below the ceiling of people agreeing with each other"
        else:
            how = f"{gap:.2f} above people's agreement with each other"
        return (f"The judge agrees with people (mean kappa {judge.value:.3f}) {how} (Light's "
                f"kappa {light.value:.3f}, on {self.shared_chunks} chunks labelled by two or "
                "more people).")


def alpha_values(o00: Any, o01: Any, o11: Any) -> Any:
    """Nominal alpha for two categories from the coincidence counts (o01 = o10)."""
    n0, n1 = o00 + o01, o11 + o01
    n = n0 + n1
    return 1 - ratio((n - 1) * o01, n0 * n1)


def fleiss_values(agree: Any, items: Any, ones: Any, raters: int) -> Any:
    """Fleiss' kappa from the sum of per-chunk agreement P_i, the chunk count and the 1s given."""
    p_bar = ratio(agree, items)
    p1 = ratio(ones, items * raters)
    chance = p1**2 + (1 - p1) ** 2
    return ratio(p_bar - chance, 1 - chance)


def add_alpha(sums: ClusterSums, prefix: str, ratings: Ratings, cluster: np.ndarray) -> None:
    """Add each chunk's coincidence counts (chunks with at least two labels) to its golden."""
    given = ~np.isnan(ratings)
    m = given.sum(axis=0)
    ones = np.nansum(ratings, axis=0)
    zeros = m - ones
    pairable = m >= 2
    scale = np.where(pairable, 1 / np.maximum(m - 1, 1), 0.0)
    for name, pairs in zip(COINCIDENCES, (zeros * (zeros - 1), zeros * ones, ones * (ones - 1)),
                           strict=True):
        sums.add(f"{prefix}{name}", cluster, pairs * scale)


def add_fleiss(sums: ClusterSums, prefix: str, ratings: Ratings, cluster: np.ndarray) -> int:
    """Add the per-chunk Fleiss terms of the chunks every rater labelled; return their count."""
    r = ratings.shape[0]
    complete = ~np.isnan(ratings).any(axis=0)
    ones = ratings[:, complete].sum(axis=0)
    zeros = r - ones
    agree = (ones * (ones - 1) + zeros * (zeros - 1)) / (r * (r - 1))
    at = cluster[complete]
    sums.add(f"{prefix}agree", at, agree)
    sums.add(f"{prefix}items", at)
    sums.add(f"{prefix}ones", at, ones)
    return int(complete.sum())


@dataclass(frozen=True, slots=True)
class RaterColumns:
    """Where add_rater_columns put each coefficient's sums."""

    people: list[str]
    judge: str | None
    prefix: str
    shared: int
    complete: int
    pairs: list[tuple[str, str, str, int]]
    """(first, second, column prefix, chunks both labelled) of every pair of people."""
    judge_pairs: list[tuple[str, str, str, int]]


def add_rater_columns(sums: ClusterSums, people: Sequence[str], ratings: Ratings,
                      cluster: np.ndarray, judge: str | None = None,
                      judge_ratings: np.ndarray | None = None,
                      prefix: str = scope("raters")) -> RaterColumns:
    """Add the sums of every coefficient among ``people`` (rows of ``ratings``, one column per
    chunk, ``cluster`` its golden) and of the judge with each, to be estimated together."""
    add_alpha(sums, prefix + scope("p"), ratings, cluster)
    if judge_ratings is not None:
        add_alpha(sums, prefix + scope("pj"), np.vstack([ratings, judge_ratings]), cluster)
    complete = add_fleiss(sums, prefix + scope("f"), ratings, cluster) if len(people) > 1 else 0
    pairs = []
    for (i, a), (j, b) in combinations(enumerate(people), 2):
        both = ~np.isnan(ratings[i]) & ~np.isnan(ratings[j])
        add_confusion(sums, cluster[both], ratings[i, both].astype(int),
                      ratings[j, both].astype(int), prefix=prefix + scope(f"{i}-{j}"))
        pairs.append((a, b, prefix + scope(f"{i}-{j}"), int(both.sum())))
    judge_pairs = []
    if judge_ratings is not None:
        for i, person in enumerate(people):
            both = ~np.isnan(ratings[i]) & ~np.isnan(judge_ratings)
            add_confusion(sums, cluster[both], ratings[i, both].astype(int),
                          judge_ratings[both].astype(int), prefix=prefix + scope(f"j-{i}"))
            judge_pairs.append((str(judge), person, prefix + scope(f"j-{i}"), int(both.sum())))
    shared = int(((~np.isnan(ratings)).sum(axis=0) >= 2).sum())
    return RaterColumns(list(people), judge if judge_ratings is not None else None, prefix,
                        shared, complete, pairs, judge_pairs)


def _kappa(key: str) -> Callable[[Sums], Any]:
    return confusion_formula(kappa_values, key)


def _mean_kappa(keys: list[tuple[str, str, str, int]]) -> Callable[[Sums], Any]:
    """The mean of the defined pairwise kappas (Light's kappa over these pairs)."""
    def formula(s: Sums) -> Any:
        values = np.array([_kappa(key)(s) for _a, _b, key, _n in keys], dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no pair defined: NaN, as meant
            return np.nanmean(values, axis=0)
    return formula


def rater_agreement(est: Estimates, columns: RaterColumns) -> RaterAgreement:
    """Every coefficient of ``columns``, with its bootstrap interval."""
    prefix = columns.prefix

    def pairs(keys: list[tuple[str, str, str, int]]) -> list[PairAgreement]:
        return [PairAgreement(a, b, n, est.stat(f"kappa of {a} with {b}", _kappa(key),
                                                None if n else "no chunk labelled by both"))
                for a, b, key, n in keys]

    few = None if columns.shared else "no chunk is labelled by two people"
    no_judge = None if columns.judge is not None else "no judge verdicts"
    stats = {
        "alpha_people": est.stat("alpha_people", columns_formula(
            alpha_values, prefix + scope("p"), COINCIDENCES), few),
        "alpha_with_judge": est.stat("alpha_with_judge", columns_formula(
            alpha_values, prefix + scope("pj"), COINCIDENCES), no_judge),
        "fleiss_kappa": est.stat("fleiss_kappa", columns_formula(
            fleiss_values, prefix + scope("f"), ("agree", "items", "ones"),
            raters=len(columns.people)),
            None if columns.complete else "no chunk is labelled by every person"),
        "light_kappa": est.stat("light_kappa", _mean_kappa(columns.pairs), few),
        "judge_mean_kappa": est.stat("judge_mean_kappa", _mean_kappa(columns.judge_pairs),
                                     no_judge),
    }
    return RaterAgreement(columns.people, columns.judge, columns.shared, columns.complete, stats,
                          pairs(columns.pairs), pairs(columns.judge_pairs))
