"""Agreement on grades against its oracles: scikit-learn (kappa, weighted kappa), krippendorff
(alpha), Gwet's published AC1/AC2 on his 3x3 abstractors table, and Gwet's raw-ratings
formulas written out here, on random data with grades some rater never gives."""

from __future__ import annotations

from typing import Literal

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotator.stats import graded


def table_of(human: np.ndarray, judge: np.ndarray, q: int) -> np.ndarray:
    """The q x q grade table of two raters' grades."""
    c = np.zeros((q, q))
    np.add.at(c, (human, judge), 1)
    return c


def random_pairs(seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Two raters' grades on 5-400 chunks over a 2-6 grade scale, some grades unused, the
    judge agreeing now and then."""
    rng = np.random.default_rng(seed)
    q = int(rng.integers(2, 7))
    n = int(rng.integers(5, 400))
    used = rng.choice(q, size=max(2, int(rng.integers(1, q + 1))), replace=False)
    human = rng.choice(used, size=n)
    agree = rng.random(n) < rng.random()
    judge = np.where(agree, human, rng.integers(0, q, size=n))
    return human, judge, q


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@pytest.mark.parametrize("seed", range(60))
def test_kappas_match_scikit_learn(seed: int) -> None:
    human, judge, q = random_pairs(seed)
    c = table_of(human, judge, q)
    labels = list(range(q))
    for weights, ours in ((None, graded.cohen_kappa(c)),
                          ("linear", graded.weighted_kappa(c, "linear")),
                          ("quadratic", graded.weighted_kappa(c, "quadratic"))):
        with np.errstate(divide="ignore", invalid="ignore"):
            theirs = cohen_kappa_score(human, judge, labels=labels, weights=weights)
        if np.isnan(theirs):
            assert np.isnan(ours)
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
def test_alpha_matches_krippendorff(seed: int, level: Literal["ordinal", "interval", "nominal"]
                                    ) -> None:
    human, judge, q = random_pairs(seed)
    if len(set(human) | set(judge)) < 2:
        return  # krippendorff refuses data with one value; ours is NaN then (below)
    theirs = krippendorff.alpha(reliability_data=np.vstack([human, judge]).astype(float),
                                level_of_measurement=level, value_domain=list(range(q)))
    assert graded.krippendorff_alpha(table_of(human, judge, q), level) == pytest.approx(
        theirs, abs=1e-10)


def test_alpha_with_one_grade_given_is_undefined() -> None:
    c = np.zeros((4, 4))
    c[2, 2] = 10
    assert np.isnan(graded.krippendorff_alpha(c, "ordinal"))
    assert np.isnan(graded.cohen_kappa(c))


ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
"""Gwet's (2014) 100 pregnant women by pregnancy type, as two abstractors classified them."""


def test_gwet_on_his_published_example() -> None:
    assert graded.gwet_ac2(ABSTRACTORS, "identity") == pytest.approx(0.84933, abs=5e-6)
    assert graded.gwet_ac2(ABSTRACTORS, "quadratic") == pytest.approx(0.94024, abs=5e-6)


def gwet_from_raw(human: np.ndarray, judge: np.ndarray, q: int, weights: str) -> float:
    """AC2 from the ratings subject by subject, as Gwet's raw-ratings formulas give it (each
    subject's weighted agreement among its r = 2 ratings; pi_k from each subject's shares)."""
    w = graded.agreement_weights(q, weights)
    n = len(human)
    counts = np.zeros((n, q))
    counts[np.arange(n), human] += 1
    counts[np.arange(n), judge] += 1
    weighted = counts @ w.T
    pa = float(np.mean((counts * (weighted - 1)).sum(axis=1) / 2))
    pi = (counts / 2).mean(axis=0)
    pe = w.sum() * float((pi * (1 - pi)).sum()) / (q * (q - 1))
    return float((pa - pe) / (1 - pe))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("weights", graded.WEIGHTINGS)
def test_ac2_matches_the_raw_ratings_formulas(seed: int, weights: str) -> None:
    human, judge, q = random_pairs(seed)
    assert graded.gwet_ac2(table_of(human, judge, q), weights) == pytest.approx(
        gwet_from_raw(human, judge, q, weights), abs=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@pytest.mark.parametrize("seed", range(20))
def test_threshold_kappas_are_binary_kappas_at_each_pair_of_thresholds(seed: int) -> None:
    human, judge, q = random_pairs(seed)
    grid = graded.threshold_kappas(table_of(human, judge, q))
    assert grid.shape == (q - 1, q - 1)
    for a in range(1, q):
        for b in range(1, q):
            with np.errstate(divide="ignore", invalid="ignore"):
                theirs = cohen_kappa_score(human >= a, judge >= b, labels=[False, True])
            if np.isnan(theirs):
                assert np.isnan(grid[a - 1, b - 1])
            else:
                assert grid[a - 1, b - 1] == pytest.approx(theirs, abs=1e-12)


def test_every_statistic_runs_over_bootstrap_replicates_at_once() -> None:
    tables = np.stack([table_of(*random_pairs(seed)[:2], 7) for seed in range(3)
                       if random_pairs(seed)[2] <= 7] + [np.zeros((7, 7))])
    for name, statistic in graded.GRADED_STATISTICS.items():
        together = statistic(tables)
        alone = np.asarray([statistic(t) for t in tables])
        assert together.shape == (len(tables),), name
        np.testing.assert_allclose(together, alone, equal_nan=True, err_msg=name)
        assert np.isnan(together[-1]), name  # no chunk: undefined, never an error
