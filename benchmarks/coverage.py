"""Coverage of the project's intervals, large: each simulation of tests/coverage_sims.py at every
size a team meets, with many runs, and the budget (93-97% at 95%; align's keep rule at most
2.5%) beside each figure. docs/statistics.md holds the latest figures.

Run: python benchmarks/coverage.py [--runs N]   (the default 2,000 takes about ten minutes)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# The repository's root is on the path first, for the simulations the suite runs small.
from tests.coverage_sims import (
    ac2_coverage,
    kappa_coverage,
    keeps_no_better,
    ppi_coverage,
)
from tests.test_designs import Simulation, population


def verdict(rate: float, low: float = 0.93, high: float = 0.97) -> str:
    """Within the budget or not."""
    return "ok" if low <= rate <= high else "OUT OF BUDGET"


def main() -> None:
    """Print every coverage beside its budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    runs = parser.parse_args().runs
    print(f"Coverage at 95%, {runs} runs each; budget 93-97%.")
    for goldens in (10, 20, 60):
        found = kappa_coverage(goldens, runs)
        print(f"  Cohen's kappa, {goldens:3d} goldens: {found}  {verdict(found.rate)}")
    for goldens in (10, 20, 60):
        found = ac2_coverage(goldens, runs)
        given = "no interval given (below 20 goldens)" if goldens < 20 else verdict(found.rate)
        print(f"  Gwet's AC2,    {goldens:3d} goldens: {found}  {given}")
    for informative in (True, False):
        sim = Simulation(population(informative))
        for goldens in (24, 40, 100):
            rate, width = sim.run("stratified", goldens, runs)
            kind = "informative" if informative else "uninformative"
            print(f"  stratified PPI++, {goldens:3d} goldens, {kind} judge: {rate:.3f} "
                  f"(half-width {width:.4f})  {verdict(rate)}")
    for labelled in (5, 10, 20, 40):
        rates = ppi_coverage(labelled, runs)
        print(f"  mean CP, {labelled:3d} of 440 labelled: "
              + ", ".join(f"{k} {v:.3f}" for k, v in rates.items())
              + ("  (PPI++ gives no interval below 20)" if labelled < 20 else ""))
    print("Align's keep rule on a candidate no better than its judge; budget at most 2.5%.")
    for goldens in (10, 15, 20, 40):
        rate = keeps_no_better(goldens, runs)
        print(f"  {goldens:3d} test goldens: kept {rate:.4f}  "
              f"{'ok' if rate <= 0.025 else 'OUT OF BUDGET'}")
    print("Its power: a candidate better by 0.1 kappa (incumbent erring 15% of chunks, the "
          "candidate 10%).")
    for goldens in (20, 50, 100):
        rate = keeps_no_better(goldens, runs // 4, better_error=0.1009)
        print(f"  {goldens:3d} test goldens: kept {rate:.3f}")


if __name__ == "__main__":
    main()
