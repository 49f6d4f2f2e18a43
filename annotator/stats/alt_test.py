"""The alternative annotator test: may the judge replace a person?

Calderon, Reichart & Dror (ACL 2025). Each person in turn is held out; on every item the held-out
person and the remaining people share, the judge and the held-out person are each scored by how
well they match the remaining people (the share that agree for a verdict, minus the RMSE for a
number such as a golden's CP). The judge "wins" against that person when a one-sided t-test
rejects, at the Benjamini-Yekutieli level ``alpha`` over all people, that the person is ahead by
``epsilon`` or more (epsilon: the cost-benefit margin a judge is granted for being cheap and
fast). The judge can replace a person when it wins against at least half of them; the average
advantage probability (the share of items where the judge matches the others at least as well
as the held-out person does, averaged over people) compares judges.

The procedure and its defaults are the reference code's (github.com/nitaytech/alttest), and
tests/test_decision.py holds it as the oracle. One case differs on purpose: where every item's
difference is the same (no variance, so no t statistic), the reference gives no p-value and the
judge never wins; here the p-value is 0 when that difference is below epsilon and 1 otherwise,
so a judge that matches the others perfectly is not failed for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from annotator.lazy import np
from annotator.stats.distributions import student_t_cdf

EPSILON = 0.2
"""The reference code's default margin (the paper's advice: 0.2 for expert annotators, 0.15 for
skilled ones, 0.1 for crowd workers)."""

ALPHA = 0.05
"""The false discovery rate the Benjamini-Yekutieli procedure holds the people's tests to."""

MIN_PEOPLE = 2
"""People an item needs to count: the held-out one and at least one other."""

MIN_ITEMS = 30
"""Items a person needs to be tested (the paper's minimum, for the t-test's normality)."""

RECOMMENDED_PEOPLE = 3
"""With two people the test only asks which of the two the judge sides with (the paper)."""

Scoring = Literal["accuracy", "neg_rmse"]


@dataclass(frozen=True, slots=True)
class PersonTest:
    """The judge against one held-out person."""

    annotator: str
    items: int
    p_value: float
    rejected: bool
    """The judge wins against this person (BY-corrected)."""
    rho_judge: float
    """Share of items where the judge matches the others at least as well as this person."""
    rho_person: float
    """Share of items where this person matches the others at least as well as the judge."""
    judge_score: float
    """The judge's mean score against the remaining people (agreement, or minus the RMSE)."""
    person_score: float
    """This person's mean score against the remaining people: the human-human ceiling."""


@dataclass(frozen=True, slots=True)
class AltTest:
    """The alternative annotator test of one judge, or why it could not be run."""

    epsilon: float
    alpha: float
    scoring: Scoring
    items: int = 0
    """Items judged and held by at least MIN_PEOPLE people."""
    people: list[PersonTest] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)
    """(person, their items) of the people with fewer than MIN_ITEMS items, left out."""
    why: str | None = None

    @property
    def winning_rate(self) -> float | None:
        """The share of tested people the judge wins against."""
        if not self.people:
            return None
        return sum(p.rejected for p in self.people) / len(self.people)

    @property
    def advantage_probability(self) -> float | None:
        """The judge's advantage probability, averaged over the tested people."""
        if not self.people:
            return None
        return float(np.mean([p.rho_judge for p in self.people]))

    @property
    def passed(self) -> bool | None:
        """The judge can replace a person: it wins against at least half of them."""
        rate = self.winning_rate
        return None if rate is None else rate >= 0.5

    @property
    def judge_score(self) -> float | None:
        """The judge's mean score against the others, over the tested people."""
        return float(np.mean([p.judge_score for p in self.people])) if self.people else None

    @property
    def ceiling(self) -> float | None:
        """A person's mean score against the others: how well people match each other."""
        return float(np.mean([p.person_score for p in self.people])) if self.people else None


def alt_test(judge: np.ndarray, people: Mapping[str, np.ndarray], *,
             scoring: Scoring = "accuracy", epsilon: float = EPSILON, alpha: float = ALPHA,
             min_items: int = MIN_ITEMS, missing: float | None = None) -> AltTest:
    """The alternative annotator test of ``judge`` (one value per item) against ``people``
    (name -> one value per item, aligned to the judge's). An item's value is absent where it
    equals ``missing``, or is NaN when ``missing`` is None."""
    def present(values: np.ndarray) -> np.ndarray:
        values = np.asarray(values)
        return np.asarray(~np.isnan(values) if missing is None else values != missing)

    if len(people) < MIN_PEOPLE:
        return AltTest(epsilon, alpha, scoring, why=f"it needs at least {MIN_PEOPLE} people on "
                       f"the same items; {_people(list(people))}")
    names = list(people)
    values = np.stack([np.asarray(people[p], dtype=np.float64) for p in names])
    has = np.stack([present(people[p]) for p in names])
    kept = present(judge) & (has.sum(axis=0) >= MIN_PEOPLE)
    items = int(kept.sum())
    if not items:
        return AltTest(epsilon, alpha, scoring, why="no item is judged and held by two people "
                       "or more")
    f = np.asarray(judge, dtype=np.float64)[kept]
    values, has = values[:, kept], has[:, kept]
    tested: list[tuple[str, int, float, float, float, float, float]] = []
    skipped = []
    for j, name in enumerate(names):
        mine = has[j]
        n = int(mine.sum())
        if n < min_items:
            skipped.append((name, n))
            continue
        others = np.delete(np.arange(len(names)), j)
        rest, rest_has = values[others][:, mine], has[others][:, mine]
        person_score = _score(values[j, mine], rest, rest_has, scoring)
        judge_score = _score(f[mine], rest, rest_has, scoring)
        judge_wins = (judge_score >= person_score).astype(np.float64)
        person_wins = (person_score >= judge_score).astype(np.float64)
        p = _one_sided_p(person_wins - judge_wins, epsilon)
        tested.append((name, n, p, float(judge_wins.mean()), float(person_wins.mean()),
                       float(judge_score.mean()), float(person_score.mean())))
    if not tested:
        return AltTest(epsilon, alpha, scoring, items, why=f"no person has the {min_items} items "
                       "the t-test needs: " + ", ".join(f"'{name}' {n}" for name, n in skipped))
    rejected = by_rejects([t[2] for t in tested], alpha)
    return AltTest(epsilon, alpha, scoring, items,
                   [PersonTest(name, n, p, r, rho_j, rho_p, s_j, s_p)
                    for (name, n, p, rho_j, rho_p, s_j, s_p), r in zip(tested, rejected,
                                                                       strict=True)],
                   skipped)


def _people(names: list[str]) -> str:
    if not names:
        return "the session has no person's labels here"
    return f"only '{names[0]}' labelled these items"


def _score(pred: np.ndarray, rest: np.ndarray, rest_has: np.ndarray,
           scoring: Scoring) -> np.ndarray:
    """Per item, how well ``pred`` matches the remaining people who hold the item."""
    k = rest_has.sum(axis=0)
    if scoring == "accuracy":
        return np.asarray(((rest == pred) & rest_has).sum(axis=0) / k)
    squared = np.where(rest_has, (rest - pred) ** 2, 0.0).sum(axis=0) / k
    return np.asarray(-np.sqrt(squared))


def _one_sided_p(d: np.ndarray, epsilon: float) -> float:
    """p of the one-sample t-test of H0: mean(d) >= epsilon against mean(d) < epsilon."""
    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0 or not math.isfinite(sd):
        return 0.0 if mean < epsilon else 1.0
    return student_t_cdf((mean - epsilon) / (sd / math.sqrt(n)), n - 1)


def by_rejects(p_values: list[float], alpha: float = ALPHA) -> list[bool]:
    """Which of the tests the Benjamini-Yekutieli step-up procedure rejects at FDR ``alpha``
    (valid under any dependence between the tests)."""
    m = len(p_values)
    if not m:
        return []
    harmonic = sum(1.0 / i for i in range(1, m + 1))
    ordered = sorted(p_values)
    cutoff = None
    for i, p in enumerate(ordered, start=1):
        if p <= i / m * alpha / harmonic:
            cutoff = p
    return [cutoff is not None and p <= cutoff for p in p_values]
