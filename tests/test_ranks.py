"""annotator.stats.ranks against scipy.stats, on random data with ties and at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from annotator.stats import ranks

values = st.lists(st.integers(0, 6).map(float) | st.floats(0, 1, allow_nan=False), min_size=2,
                  max_size=80)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_rank_correlations_equal_scipy_with_ties(data: st.DataObject) -> None:
    x = data.draw(values)
    y = data.draw(st.lists(st.integers(0, 6).map(float), min_size=len(x), max_size=len(x)))
    assert ranks.average_ranks(x) == pytest.approx(stats.rankdata(x))
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert math.isnan(ranks.kendall_tau_b(x, y)) and math.isnan(ranks.spearman_rho(x, y))
        return
    assert ranks.kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic,
                                                      abs=1e-12)
    assert ranks.spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_kendall_on_a_hundred_thousand_goldens_equals_scipy() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 50, 100_000) / 49  # CP-like values, heavily tied
    y = np.clip(x + rng.normal(0, 0.2, len(x)), 0, 1).round(2)
    assert ranks.kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 1001, 100_000])
def test_the_exact_binomial_p_equals_scipy(n: int) -> None:
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ours = ranks.binomial_two_sided_p(k, n)
        theirs = min(1.0, 2 * float(stats.binom.cdf(min(k, n - k), n, 0.5)))
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-300)
    assert ranks.binomial_two_sided_p(0, 0) == 1.0


def test_the_chi_square_p_equals_scipy() -> None:
    for statistic in (0.0, 1e-6, 0.5, 3.841458820694124, 10.0, 80.0):
        assert ranks.chi_square_1df_p(statistic) == pytest.approx(
            float(stats.chi2.sf(statistic, 1)), rel=1e-12, abs=1e-300)
    assert ranks.chi_square_1df_p(3.841458820694124) == pytest.approx(0.05)
