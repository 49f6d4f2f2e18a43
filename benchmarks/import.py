"""Import benchmark: 100,000 generated goldens x 10 chunks through `annotator import`.

Prints wall time, goldens per second and the importer's peak memory beside the budget.
Run: python benchmarks/import.py [--goldens N] [--chunks K]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generate

BUDGET_SECONDS = 60.0
BUDGET_MB = 500.0


def main() -> None:
    """Generate, import in a child process, and print the figures beside the budget."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "goldens.jsonl"
        size = generate(source, args.goldens, args.chunks)
        session = Path(tmp) / "bench.db"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "annotator", "import", str(source), "--session",
                        str(session)], check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        # ru_maxrss of the finished child, in KiB on Linux.
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "annotator", "import", str(source), "--session",
                        str(session)], check=True, stdout=subprocess.DEVNULL)
        again = time.perf_counter() - start
    rate = args.goldens / seconds
    print(f"import benchmark: {args.goldens:,} goldens x {args.chunks} chunks "
          f"({size / 1e6:,.0f} MB of JSONL)")
    print(f"  wall time     {seconds:8.1f} s     budget < {BUDGET_SECONDS:.0f} s   "
          f"{'OK' if seconds < BUDGET_SECONDS else 'OVER'}")
    print(f"  throughput    {rate:8,.0f} goldens/s")
    print(f"  peak memory   {peak_mb:8.0f} MB    budget < {BUDGET_MB:.0f} MB  "
          f"{'OK' if peak_mb < BUDGET_MB else 'OVER'}")
    print(f"  re-import     {again:8.1f} s     (no-op: every golden already there)")


if __name__ == "__main__":
    main()
