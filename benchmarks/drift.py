"""Drift benchmark: the figures docs/keeping-honest.md and docs/statistics.md quote, simulated.

1. The planned canary (`recheck --plan --drop 0.05`) for a judge at 85% sensitivity and 90%
   specificity, 40% useful chunks, 4% of its verdicts unsteady between runs, goldens of 5
   chunks; then how often one re-check of that size calls a judge 5 points worse "worse".
   Budget: at least 90%.
2. An unchanged but unsteady judge (each chunk its own chance of a right verdict, drawn afresh
   each run) re-checked 50 times on a 200-chunk canary: the share of runs in which the running
   bound raises its alarm (budget: at most 5%), beside the share in which one re-check's test,
   repeated at each look, calls it worse at least once (why the bound is needed).
Run: python benchmarks/drift.py [--runs 1500] [--looks-runs 200]
"""

from __future__ import annotations

import argparse

import numpy as np

from annotator.stats.drift import (
    agreement_tolerance,
    canary_size,
    recheck_figures,
    running_bounds,
)

BUDGET_FOUND = 0.90
BUDGET_FALSE_ALARMS = 0.05
PREVALENCE, SENSITIVITY, SPECIFICITY, INSTABILITY, DROP, TOLERANCE = 0.4, 0.85, 0.9, 0.04, 0.05, 0.05


def found_share(planned: int, runs: int, rng: np.random.Generator) -> float:
    """How often one re-check of ``planned`` chunks calls a judge DROP worse "worse"."""
    accuracy = PREVALENCE * SENSITIVITY + (1 - PREVALENCE) * SPECIFICITY
    found = 0
    for _ in range(runs):
        golden = np.arange(planned) // 5
        truth = rng.random(planned) < PREVALENCE
        right = np.where(truth, rng.random(planned) < SENSITIVITY,
                         rng.random(planned) < SPECIFICITY)
        before = np.where(right, truth, ~truth)
        flip = np.where(right, rng.random(planned) < (INSTABILITY / 2 + DROP) / accuracy,
                        rng.random(planned) < INSTABILITY / 2 / (1 - accuracy))
        found += recheck_figures(golden, truth.astype(np.int8), before.astype(np.int8),
                                 (before ^ flip).astype(np.int8), tolerance=TOLERANCE,
                                 resamples=0).worse
    return found / runs


def alarm_shares(runs: int, rng: np.random.Generator, n: int = 200, looks: int = 50
                 ) -> tuple[float, float]:
    """(running bound's alarms, repeated fixed-sample test's) over ``runs`` unchanged judges."""
    bound = repeated = 0
    for _ in range(runs):
        golden = np.arange(n) // 5
        truth = (rng.random(n) < 0.4).astype(np.int8)
        chance = rng.beta(6, 1.5, n)  # each chunk's chance of a right verdict
        before, *rechecks = (np.where(rng.random(n) < chance, truth, 1 - truth).astype(np.int8)
                             for _ in range(looks + 1))
        bounds = running_bounds((before == truth).astype(float),
                                [(r == truth).astype(float) for r in rechecks],
                                agreement_tolerance(TOLERANCE, truth, before))
        bound += any(b.alarm for b in bounds)
        repeated += any(recheck_figures(golden, truth, before, r, tolerance=TOLERANCE,
                                        resamples=0).worse for r in rechecks)
    return bound / runs, repeated / runs


def main() -> None:
    """Simulate and print the figures beside their budgets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1500)
    parser.add_argument("--looks-runs", type=int, default=200)
    args = parser.parse_args()
    planned = canary_size(prevalence=PREVALENCE, sensitivity=SENSITIVITY,
                          specificity=SPECIFICITY, instability=INSTABILITY, drop=DROP,
                          tolerance=TOLERANCE, per_golden=5)
    assert planned is not None
    found = found_share(planned, args.runs, np.random.default_rng(11))
    print(f"drift benchmark: the planned canary is {planned} chunks (goldens of 5); a judge "
          f"{DROP * 100:.0f} points worse in agreement is called worse in {found:.1%} of "
          f"{args.runs:,} re-checks (budget >= {BUDGET_FOUND:.0%})  "
          f"{'OK' if found >= BUDGET_FOUND else 'UNDER'}")
    bound, repeated = alarm_shares(args.looks_runs, np.random.default_rng(5))
    print(f"  an unchanged judge re-checked 50 times, {args.looks_runs} runs: the running bound "
          f"alarms in {bound:.1%} (budget <= {BUDGET_FALSE_ALARMS:.0%})  "
          f"{'OK' if bound <= BUDGET_FALSE_ALARMS else 'OVER'}; the fixed-sample test repeated "
          f"at each look calls it worse in {repeated:.1%}")


if __name__ == "__main__":
    main()
