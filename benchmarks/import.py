"""Import benchmark: generated goldens x 10 chunks through `annotator import`, beside the bare
program (benchmarks/bare/bare_import.py: parse + hash + executemany into the same schema).

Runs the two alternately on the same file and prints CPU and peak memory of each, their ratio
with the budget, and the re-import (a no-op).
Run: python benchmarks/import.py [--goldens N] [--chunks K] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from generate import generate
from measure import measured

from annotator.store.session import Session

BUDGET_RATIO = 1.3
BUDGET_MB = 500.0


def main() -> None:
    """Generate, then import with the tool and with the bare program, alternately."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "goldens.jsonl"
        size = generate(source, args.goldens, args.chunks)
        with Session(root / "empty.db"):
            pass
        ours: list[tuple[float, float]] = []
        bare: list[tuple[float, float]] = []
        for run in range(args.runs):
            session = root / f"ours{run}.db"
            ours.append(measured([sys.executable, "-m", "annotator", "import", str(source),
                                  "--session", str(session)]))
            bare.append(measured([sys.executable,
                                  str(Path(__file__).parent / "bare" / "bare_import.py"),
                                  str(root / "empty.db"), str(root / f"bare{run}.db"),
                                  str(source)]))
            (root / f"bare{run}.db").unlink()
        again = measured([sys.executable, "-m", "annotator", "import", str(source), "--session",
                          str(root / "ours0.db")])
    cpu, bare_cpu = (statistics.median(c for c, _ in runs) for runs in (ours, bare))
    peak, bare_peak = (statistics.median(m for _, m in runs) for runs in (ours, bare))
    ratio = cpu / bare_cpu
    print(f"import benchmark: {args.goldens:,} goldens x {args.chunks} chunks "
          f"({size / 1e6:,.0f} MB of JSONL), median of {args.runs} runs, alternating")
    print(f"  CPU           {cpu:8.1f} s  vs bare {bare_cpu:6.1f} s   ratio {ratio:.2f}   "
          f"budget <= {BUDGET_RATIO:g}   {'OK' if ratio <= BUDGET_RATIO else 'OVER'}")
    print(f"  throughput    {args.goldens / cpu:8,.0f} goldens per CPU second")
    print(f"  peak memory   {peak:8.0f} MB vs bare {bare_peak:6.0f} MB   budget < {BUDGET_MB:.0f} MB"
          f"   {'OK' if peak < BUDGET_MB else 'OVER'}")
    print(f"  re-import     {again[0]:8.1f} s CPU (a no-op: every golden already there)")


if __name__ == "__main__":
    main()
