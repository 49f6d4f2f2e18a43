"""Labelling designs: coverage and width by simulation, the estimators against ppi-python and
by hand, and the plan against the simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ppi_py import ppi_mean_pointestimate

from annotator.models import DESIGNS
from annotator.stats import designs as d

N, CHUNKS, SAMPLE, RUNS, TARGET = 2000, 5, 200, 1000, 0.03


def population(informative: bool, seed: int = 1) -> dict[str, np.ndarray]:
    """Goldens where one in ten is hard (its chunks' chance of being useful to people between
    0.3 and 0.7) and the rest near certain; the judge says useful above 0.5. Informative: its
    P(relevant) is that chance; not: a coin near 0.5 for every chunk, its verdicts as random."""
    rng = np.random.default_rng(seed)
    hard = rng.random(N) < 0.1
    truth = np.where(hard[:, None], rng.uniform(0.3, 0.7, (N, CHUNKS)),
                     rng.choice([0.01, 0.99], (N, CHUNKS)))
    said = truth if informative else rng.uniform(0.35, 0.65, (N, CHUNKS))
    judge = (said > 0.5).astype(float)
    human = (rng.random((N, CHUNKS)) < truth).astype(float)
    f = d.cp_matrix(judge)
    bias, error = d.expected_errors(list(said), f, rng)
    return {"y": d.cp_matrix(human), "f": f, "bias": bias, "error": error}


def strata_of(names: list[str], f: np.ndarray) -> d.Strata:
    keys = np.asarray(names)
    return {h: (int((keys == h).sum()), float(f[keys == h].mean())) for h in set(names)}


def by_stratum(names: list[str], y: np.ndarray, f: np.ndarray, chosen: list[int]
               ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out: dict[str, tuple[list[float], list[float]]] = {}
    for i in chosen:
        ys, fs = out.setdefault(names[i], ([], []))
        ys.append(float(y[i]))
        fs.append(float(f[i]))
    return {h: (np.asarray(ys), np.asarray(fs)) for h, (ys, fs) in out.items()}


class Simulation:
    """Samples of each design from one population, with the pieces every draw needs."""

    def __init__(self, pop: dict[str, np.ndarray]) -> None:
        self.y, self.f = pop["y"], pop["f"]
        self.theta = float(self.y.mean())
        self.names = d.strata(self.f, ["one system"] * N)
        keys = np.asarray(self.names)
        self.sizes = {h: int((keys == h).sum()) for h in set(self.names)}
        self.spreads = {h: float(np.sqrt(max(pop["error"][keys == h].mean()
                                             - pop["bias"][keys == h].mean() ** 2, 0.0)))
                        for h in self.sizes}
        self.q = d.active_probabilities(np.sqrt(pop["error"]))
        self.rng = np.random.default_rng(5)

    def estimate(self, design: str, n: int) -> d.Estimate:
        """One sample of n goldens by the design, and its estimate of the mean."""
        y, f, rng = self.y, self.f, self.rng
        if design == "uniform":
            one = ["all"] * N
            est = d.stratified_estimate(strata_of(one, f), by_stratum(
                one, y, f, rng.choice(N, n, replace=False).tolist()))
        elif design == "stratified":
            alloc = d.neyman(self.sizes, self.spreads, n)
            est = d.stratified_estimate(strata_of(self.names, f), by_stratum(
                self.names, y, f, d.stratified_order(self.names, alloc, rng)))
        else:
            drawn = np.asarray(d.active_order(self.q, n, rng))
            est = d.active_estimate(y[drawn], f[drawn], self.q[drawn], f,
                                    pi=d.inclusion(self.q[drawn], n))
        assert isinstance(est, d.Estimate)
        return est

    def run(self, design: str, n: int, runs: int) -> tuple[float, float]:
        """(coverage, mean half-width) over ``runs`` samples of n."""
        estimates = [self.estimate(design, n) for _ in range(runs)]
        return (float(np.mean([e.low <= self.theta <= e.high for e in estimates])),
                float(np.mean([e.half_width for e in estimates])))

    def needed(self, design: str, width: float) -> int:
        """The goldens for a mean half-width of TARGET: from n goldens giving ``width``,
        n (width / TARGET)^2, then once more from a run at that size (the finite-population
        correction, and active's own, depend on n)."""
        n = round(SAMPLE * (width / TARGET) ** 2)
        _, at_n = self.run(design, n, RUNS // 4)
        return round(n * (at_n / TARGET) ** 2)


def simulate(pop: dict[str, np.ndarray]) -> dict[str, tuple[float, float, int]]:
    """Per design: (coverage, mean half-width) over RUNS samples of SAMPLE, and the goldens
    needed for +-TARGET."""
    sim = Simulation(pop)
    out = {}
    for design in DESIGNS:
        coverage, width = sim.run(design, SAMPLE, RUNS)
        out[design] = (coverage, width, sim.needed(design, width))
    return out


@pytest.mark.parametrize("informative", [True, False])
def test_each_design_covers_and_active_needs_fewer_labels_when_the_judge_knows(
        informative: bool) -> None:
    pop = population(informative)
    found = simulate(pop)
    names = d.strata(pop["f"], ["one system"] * N)
    plan = d.planned_sizes(pop["f"], pop["bias"], pop["error"], names, TARGET)
    print(f"\n{'informative' if informative else 'uninformative'} judge confidence, {RUNS} runs "
          f"of {SAMPLE} goldens from {N}:")
    for design, (coverage, width, needed) in found.items():
        print(f"  {design:10s} coverage {coverage:.3f}  half-width {width:.4f}  goldens for "
              f"+-{TARGET}: {needed} (plan: {plan[design]})")
    for coverage, _, _ in found.values():
        assert 0.93 <= coverage <= 0.97
    uniform, stratified, active = (found[k][2] for k in DESIGNS)
    for design, (_, _, needed) in found.items():  # the plan, from the judge alone
        assert abs(plan[design] - needed) <= 0.3 * needed
    if informative:
        assert active <= uniform / 2 and stratified <= uniform
    else:
        # The judge's confidence says nothing: neither design is worse than uniform by more
        # than noise (active still pays a little for its uneven weights).
        assert stratified <= uniform * 1.1 and active <= uniform * 1.1


@pytest.mark.parametrize("informative", [True, False])
def test_a_plan_rescaled_on_the_first_labelled_goldens_stays_near_the_simulation(
        informative: bool) -> None:
    pop = population(informative)
    names = d.strata(pop["f"], ["one system"] * N)
    found = simulate(pop)
    rng = np.random.default_rng(11)
    plans = []
    for _ in range(200):  # the first CALIBRATE_FROM goldens of a random sample, labelled
        seen = rng.choice(N, d.CALIBRATE_FROM, replace=False)
        error = d.rescaled(pop["error"], pop["f"], seen, pop["y"][seen])
        plans.append(d.planned_sizes(pop["f"], pop["bias"], error, names, TARGET))
    sim = Simulation(pop)
    for design in DESIGNS:
        median = float(np.median([p[design] for p in plans]))
        assert abs(median - found[design][2]) <= 0.3 * found[design][2], design
        # Rescaled, the plan is right even for the judge whose confidence says nothing (from
        # its confidence alone that plan was ~10% short: `plan` says to re-plan at 20 labels).
        reached = [sim.estimate(design, p[design]).half_width <= TARGET for p in plans]
        assert np.mean(reached) >= 0.5, design


def test_the_active_estimate_is_ppi_pythons_weighted_estimate_and_a_hand_computed_mean(
        ) -> None:
    rng = np.random.default_rng(3)
    f_all = rng.random(50)
    q = d.active_probabilities(rng.random(50))
    drawn = np.asarray(d.active_order(q, 20, rng))
    assert len(set(drawn.tolist())) == 20
    y = np.clip(f_all[drawn] + rng.normal(0, 0.1, 20), 0, 1)
    pi = d.inclusion(q[drawn], 20)
    for lam in (0.0, 0.4, 1.0):
        ours = d.active_estimate(y, f_all[drawn], q[drawn], f_all, lam=lam, pi=pi)
        theirs = ppi_mean_pointestimate(y, f_all[drawn], f_all, lam=lam, w=1 / (50 * pi))
        assert ours.point == pytest.approx(float(np.asarray(theirs).ravel()[0]), abs=1e-12)
    # Samples stored before, drawn with replacement, keep their estimator: weights 1 / q.
    draws = rng.choice(50, size=20, replace=True, p=q)
    old = d.active_estimate(y, f_all[draws], q[draws], f_all, lam=0.4)
    theirs = ppi_mean_pointestimate(y, f_all[draws], f_all, lam=0.4, w=1 / (50 * q[draws]))
    assert old.point == pytest.approx(float(np.asarray(theirs).ravel()[0]), abs=1e-12)
    # Without replacement, the finite-population correction narrows the interval: with every
    # pi_i = m / N it is the simple random sample's (1 - m / N) s^2 / m, by hand.
    even = np.full(20, 20 / 50)
    srs = d.active_estimate(y, f_all[:20], np.full(20, 1 / 50), f_all, lam=0.0, pi=even)
    se = float(np.sqrt((1 - 20 / 50) * np.var(y, ddof=1) / 20))
    assert srs.half_width == pytest.approx(d.Z * se, rel=1e-12)
    # lambda 0: the weighted (Hajek) mean of y with weights 1 / q, by hand.
    small = d.active_estimate(np.asarray([0.5, 1.0]), np.asarray([0.2, 0.9]),
                              np.asarray([0.25, 0.5]), np.asarray([0.2, 0.9, 0.4, 0.1]), lam=0)
    assert small.point == pytest.approx((0.5 / 0.25 + 1.0 / 0.5) / (1 / 0.25 + 1 / 0.5))


def test_the_stratified_estimate_by_hand() -> None:
    strata = {"a": (4, 0.5), "b": (6, 0.2)}
    labelled = {"a": (np.asarray([0.6, 0.8]), np.asarray([0.5, 0.5])),
                "b": (np.asarray([0.1, 0.3, 0.2]), np.asarray([0.0, 0.4, 0.2]))}
    est = d.stratified_estimate(strata, labelled)
    assert isinstance(est, d.Estimate)
    # Strata of 2 and 3 labelled goldens share one lambda, pooled: only b's judge varies, and
    # there y = 0.1 + 0.5 f exactly, so lambda 0.5. a: the judge is constant, so lambda cancels:
    # people's mean 0.7. b: 0.5 x 0.2 + mean(y - 0.5 f) = 0.1 + 0.1.
    assert est.lam == pytest.approx(0.5)
    assert est.point == pytest.approx(0.4 * 0.7 + 0.6 * 0.2)
    # Variance: a's (1 - 2/4) x var(0.6, 0.8) / 2 with b's residuals all 0.1 (no spread); all
    # of it from a's two goldens, so Student's t with 1 degree of freedom, not Z.
    se = np.sqrt(0.4 ** 2 * 0.5 * np.var([0.6, 0.8], ddof=1) / 2)
    assert est.half_width == pytest.approx(12.706204736 * se)
    short = {"a": labelled["a"], "b": (np.asarray([0.1]), np.asarray([0.0]))}
    assert d.stratified_estimate(strata, short) == (
        "needs 2 labelled goldens in every stratum; b has 1")


def test_each_stratum_has_its_own_lambda_once_every_one_holds_enough_labels() -> None:
    from annotator.stats.ppi import regression_lambda

    rng = np.random.default_rng(4)
    strata = {"a": (400, 0.5), "b": (600, 0.4)}

    def labelled(m: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        fa, fb = rng.random(m), rng.random(m)
        return {"a": (0.9 * fa + 0.05 * rng.random(m), fa),  # a tracks the judge closely
                "b": (rng.random(m), fb)}  # b not at all

    few, many = labelled(d.OWN_LAMBDA_FROM - 1), labelled(d.OWN_LAMBDA_FROM)
    pooled = d.stratified_estimate(strata, few)
    own = d.stratified_estimate(strata, many)
    assert isinstance(pooled, d.Estimate) and isinstance(own, d.Estimate)
    # Below the count, one lambda pooled over both strata, weighted by each one's variance.
    weights = [0.4 ** 2 * (1 - len(few["a"][0]) / 400), 0.6 ** 2 * (1 - len(few["b"][0]) / 600)]
    expected = (sum(w * np.cov(y, f, ddof=1)[0, 1] for w, (y, f) in zip(weights, few.values(),
                                                                        strict=True))
                / sum(w * np.var(f, ddof=1) for w, (_, f) in zip(weights, few.values(),
                                                                strict=True)))
    assert pooled.lam == pytest.approx(float(np.clip(expected, 0, 1)))
    # From it, each stratum's own (a near 0.9, b near 0): an estimate reports their mean.
    assert own.lam == pytest.approx(np.mean([regression_lambda(y, f) for y, f in many.values()]))
    # Many labelled goldens: Student's t is Z.
    assert d.small_sample_quantile([(1.0, 10**6)]) == pytest.approx(d.Z, abs=1e-5)


def test_neyman_allocation_gives_every_stratum_two_and_the_rest_by_size_times_spread() -> None:
    alloc = d.neyman({"a": 100, "b": 100, "c": 3, "d": 1}, {"a": 0.3, "b": 0.1, "c": 0.0,
                                                         "d": 0.5}, 40)
    assert sum(alloc.values()) == 40 and alloc["c"] == 2 and alloc["d"] == 1
    # After the minimum of two, a and b share the rest 3 : 1 (c holds 1 spare, spread 0).
    assert abs((alloc["a"] - 2) - 3 * (alloc["b"] - 2)) <= 2
    order = d.stratified_order(["a"] * 5 + ["b"] * 5, {"a": 2, "b": 2}, np.random.default_rng(0))
    assert sorted(i < 5 for i in order) == [False, False, True, True]
    assert len({i < 5 for i in order[:2]}) == 2  # any prefix holds both strata


def test_more_needed_follows_one_over_the_root_of_the_sample() -> None:
    assert d.more_needed(100, 0.06, 0.03) == 300
    assert d.more_needed(100, 0.02, 0.03) == 0


def test_a_plans_size_reaches_the_target_width_in_at_least_half_the_runs() -> None:
    """Sampling as many goldens as `annotator plan` says gives a half-width within the target
    in at least half the runs, for every design, when the judge's confidence is calibrated
    (the plan reads people's CP through it until CALIBRATE_FROM goldens are labelled)."""
    pop = population(informative=True)
    sim = Simulation(pop)
    plan = d.planned_sizes(pop["f"], pop["bias"], pop["error"], d.strata(pop["f"], ["one"] * N),
                           TARGET)
    for design in DESIGNS:
        reached = [sim.estimate(design, plan[design]).half_width <= TARGET for _ in range(400)]
        print(f"\n{design}: plan {plan[design]}, target reached in {np.mean(reached):.2f}")
        assert np.mean(reached) >= 0.5, design


def test_the_plans_stratified_size_is_one_sample_draws(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli
    from tests.conftest import SAMPLES

    db = str(tmp_path / "three.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["import", *map(str, SAMPLES), "--session", db]).exit_code == 0
    planned = runner.invoke(cli, ["plan", db, "--target-width", "0.3"])
    assert planned.exit_code == 0, planned.output
    size = int(next(line.split()[1] for line in planned.output.splitlines()
                    if line.strip().startswith("stratified")))
    drawn = runner.invoke(cli, ["sample", db, "--size", str(size), "--design", "stratified"])
    assert drawn.exit_code == 0, drawn.output  # a wide target: the strata's minimum decides
    fewer = runner.invoke(cli, ["sample", db, "--size", str(size - 1), "--design", "stratified"])
    assert fewer.exit_code == 2 and f"needs --size {size} or more" in fewer.output
