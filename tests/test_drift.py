"""The drift statistics (stats/drift.py) against oracles and in simulation: the confidence
sequence against its authors' code and its anytime coverage, one re-check's figures against
scikit-learn, the planned canary size reaching its power, and the running bound staying quiet on
an unchanged judge re-checked 50 times where the fixed-sample test repeated does not."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotator.stats.drift import (
    agreement_tolerance,
    canary_size,
    lower_sequence,
    recheck_figures,
    running_bounds,
    upper_sequence,
)


def confseq_lower(x: np.ndarray, alpha: float) -> np.ndarray:
    """The reference: confseq 0.0.11's predmix_empbern_lower_cs (truncation 1/2, no fixed n),
    with its lambda_predmix_eb, written out from the authors' package (Waudby-Smith & Ramdas)."""
    t = np.arange(1, len(x) + 1)
    mu_hat_t = np.minimum((0.5 + np.cumsum(x)) / (t + 1), 1)
    sigma2_t = (0.25 + np.cumsum(np.power(x - mu_hat_t, 2))) / (t + 1)
    sigma2_tminus1 = np.append(0.25, sigma2_t[0:(len(x) - 1)])
    lambdas = np.sqrt(2 * np.log(1 / alpha) / (t * np.log(1 + t) * sigma2_tminus1))
    lambdas[np.isnan(lambdas)] = 0
    lambdas = np.minimum(lambdas, 0.5)
    mu_plain = np.cumsum(x) / t
    v = np.power(x - np.append(0, mu_plain[0:(len(x) - 1)]), 2)
    psi = -np.log(1 - lambdas) - lambdas
    margin = (np.log(1 / alpha) + np.cumsum(v * psi)) / np.cumsum(lambdas)
    return np.asarray(np.maximum(np.cumsum(lambdas * x) / np.cumsum(lambdas) - margin, 0))


def test_the_sequence_is_the_authors_on_random_streams() -> None:
    rng = np.random.default_rng(7)
    for i in range(300):
        n = int(rng.integers(1, 600))
        x = rng.random(n) if i % 3 else (rng.random(n) < rng.random()).astype(float)
        alpha = float(rng.choice([0.01, 0.025, 0.05, 0.1]))
        np.testing.assert_allclose(lower_sequence(x, alpha), confseq_lower(x, alpha),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(upper_sequence(x, alpha), 1 - confseq_lower(1 - x, alpha),
                                   rtol=0, atol=1e-12)


@pytest.mark.parametrize("mean", [0.1, 0.5, 0.85])
def test_the_sequence_covers_the_mean_at_every_time_at_once(mean: float) -> None:
    """Anytime coverage: over 400 streams of 2,000 draws, the lower bound stays below the
    mean at every one of the 2,000 looks in at least 95% of the streams."""
    rng = np.random.default_rng(int(mean * 100))
    streams = rng.random((400, 2000)) < mean
    crossed = sum(bool((lower_sequence(s.astype(float), 0.05) > mean).any()) for s in streams)
    assert crossed / 400 <= 0.05
    # ...and it is not vacuous: it ends within 0.1 of the mean.
    assert all(mean - lower_sequence(s.astype(float), 0.05)[-1] < 0.1 for s in streams[:20])


def test_one_rechecks_figures_are_scikit_learns_on_random_canaries() -> None:
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(20, 300))
        golden = np.sort(rng.integers(0, max(2, n // 5), n))
        _, golden = np.unique(golden, return_inverse=True)
        truth = (rng.random(n) < 0.4).astype(np.int8)
        before = np.where(rng.random(n) < 0.85, truth, 1 - truth).astype(np.int8)
        after = np.where(rng.random(n) < 0.15, 1 - before, before).astype(np.int8)
        f = recheck_figures(golden, truth, before, after, tolerance=0.05, resamples=0)
        then, now = cohen_kappa_score(truth, before), cohen_kappa_score(truth, after)
        assert f.kappa_before.value == pytest.approx(then, abs=1e-12)
        assert f.kappa_after.value == pytest.approx(now, abs=1e-12)
        assert f.kappa_drop.value == pytest.approx(then - now, abs=1e-12)
        assert f.agreement_after.value == pytest.approx(float(np.mean(truth == after)))
        assert f.flips.useful_to_noise == int(((before == 1) & (after == 0)).sum())
        assert f.flips.right_to_wrong - f.flips.wrong_to_right == int(
            (before == truth).sum() - (after == truth).sum())
        assert f.worse == (f.worse_p.value is not None and f.worse_p.value < 0.05
                           and then - now > 0.05)


def simulated_canary(rng: np.random.Generator, n: int, *, prevalence: float, sensitivity: float,
                     specificity: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Goldens of 5 chunks, people's labels and a judge's verdicts with these figures."""
    golden = np.arange(n) // 5
    truth = rng.random(n) < prevalence
    right = np.where(truth, rng.random(n) < sensitivity, rng.random(n) < specificity)
    return golden, truth, right


def test_a_five_point_drop_is_found_within_the_planned_canary_in_nine_runs_of_ten() -> None:
    figures = {"prevalence": 0.4, "sensitivity": 0.85, "specificity": 0.9}
    instability = 0.04
    planned = canary_size(prevalence=0.4, sensitivity=0.85, specificity=0.9,
                          instability=instability, drop=0.05, tolerance=0.05, per_golden=5)
    assert planned is not None and 50 < planned < 2000
    rng = np.random.default_rng(11)
    accuracy = 0.4 * 0.85 + 0.6 * 0.9
    found = 0
    runs = 500
    for _ in range(runs):
        golden, truth, right = simulated_canary(rng, planned, **figures)
        before = np.where(right, truth, ~truth)
        # The drifted judge: its own noise (each way in balance) and 5 points more wrong.
        flip = np.where(right, rng.random(planned) < (instability / 2 + 0.05) / accuracy,
                        rng.random(planned) < instability / 2 / (1 - accuracy))
        after = before ^ flip
        found += recheck_figures(golden, truth.astype(np.int8), before.astype(np.int8),
                                 after.astype(np.int8), tolerance=0.05, resamples=0).worse
    assert found / runs >= 0.9


def test_the_running_bound_stays_quiet_on_an_unchanged_judge_where_repeated_tests_do_not() -> None:
    """An unchanged judge that is unsure of some chunks (each its own chance of being right,
    drawn afresh each run) re-checked 50 times: the running bound raises an alarm in at most
    5% of 200 runs; the fixed-sample test (one re-check's), repeated at each look, in more."""
    rng = np.random.default_rng(5)
    n, looks, runs = 200, 50, 200
    tolerance = 0.05
    sequence_alarms = repeated_alarms = 0
    for _ in range(runs):
        golden = np.arange(n) // 5
        truth = (rng.random(n) < 0.4).astype(np.int8)
        chance = rng.beta(6, 1.5, n)  # each chunk's chance of a right verdict
        before, *rechecks = (np.where(rng.random(n) < chance, truth, 1 - truth).astype(np.int8)
                             for _ in range(looks + 1))
        in_agreement = agreement_tolerance(tolerance, truth, before)
        bounds = running_bounds((before == truth).astype(float),
                                [(r == truth).astype(float) for r in rechecks], in_agreement)
        sequence_alarms += any(b.alarm for b in bounds)
        repeated_alarms += any(recheck_figures(golden, truth, before, r, tolerance=tolerance,
                                               resamples=0).worse for r in rechecks)
    assert sequence_alarms / runs <= 0.05
    assert repeated_alarms / runs > 0.05


def test_a_large_drift_raises_the_alarm_and_the_bound_grows_with_the_rechecks() -> None:
    rng = np.random.default_rng(2)
    n = 400
    truth = (rng.random(n) < 0.4).astype(np.int8)
    before = np.where(rng.random(n) < 0.9, truth, 1 - truth)
    rechecks = [np.where(rng.random(n) < 0.7, truth, 1 - truth) for _ in range(6)]
    bounds = running_bounds((before == truth).astype(float),
                            [(r == truth).astype(float) for r in rechecks], 0.025)
    assert bounds[-1].alarm and bounds[-1].drop == pytest.approx(0.2, abs=0.04)
    assert bounds[-1].lower > bounds[0].lower  # more looks, a tighter bound
    assert all(b.lower < b.drop for b in bounds)


def test_the_agreement_tolerance_is_the_kappa_tolerance_through_chance_agreement() -> None:
    truth = np.array([1, 1, 0, 0, 0, 0, 0, 0, 1, 0])
    verdicts = np.array([1, 0, 0, 0, 0, 0, 1, 0, 1, 0])
    chance = 0.3 * 0.3 + 0.7 * 0.7
    assert agreement_tolerance(0.05, truth, verdicts) == pytest.approx(0.05 * (1 - chance))
    # kappa = (a - chance) / (1 - chance): with the marginals kept, a drop in agreement is that
    # drop / (1 - chance) in kappa, as scikit-learn computes it.
    worse = verdicts.copy()
    worse[[0, 2]] = 1 - worse[[0, 2]]  # one useful -> noise, one noise -> useful: same marginals
    drop = cohen_kappa_score(truth, verdicts) - cohen_kappa_score(truth, worse)
    in_agreement = float(np.mean(verdicts == truth) - np.mean(worse == truth))
    assert drop == pytest.approx(in_agreement / (1 - chance))


def test_the_plan_says_none_when_the_drop_is_inside_the_judges_own_noise() -> None:
    assert canary_size(prevalence=0.4, sensitivity=0.85, specificity=0.9, instability=0.6,
                       drop=0.01, tolerance=0.05) is None
    small = canary_size(prevalence=0.4, sensitivity=0.85, specificity=0.9, instability=0.0,
                        drop=0.1, tolerance=0.05)
    noisy = canary_size(prevalence=0.4, sensitivity=0.85, specificity=0.9, instability=0.1,
                        drop=0.1, tolerance=0.05)
    assert small is not None and noisy is not None and small < noisy
