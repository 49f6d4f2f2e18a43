"""Report benchmark: `annotator report` on 10,000 goldens x 10 chunks, 2,000 bootstrap resamples.

Prints the end-to-end time of the real command (process start to JSON written, Python start-up
and imports included), the in-process time of building the report, and each budget beside it.
Run: python benchmarks/report.py [--goldens N] [--resamples N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generated_session

from annotator.report.build import build_report
from annotator.store.session import Session

BUDGET_S = 5.0


def main() -> None:
    """Generate, import, then time the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = generated_session(Path(tmp), args.goldens, args.chunks, annotator="bench-reviewer")
        print(f"{args.goldens:,} goldens x {args.chunks} chunks, {args.resamples:,} resamples")
        for fmt in ("json", "table", "html"):
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "annotator", "report", str(db), "--format",
                                fmt, "--bootstrap", str(args.resamples), "--output",
                                str(Path(tmp) / f"report.{fmt}")], check=True,
                               capture_output=True)
                times.append(time.perf_counter() - started)
            budget = f"(budget {BUDGET_S:.0f} s)" if fmt == "json" else "(no budget)"
            print(f"annotator report --format {fmt:5s}: median {statistics.median(times):.2f} s "
                  f"of {args.runs} runs {budget}")
        with Session(db) as session:
            def median_build(resamples: int) -> float:
                times = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    build_report(session, resamples=resamples)
                    times.append(time.perf_counter() - started)
                return statistics.median(times)

            plain, full = median_build(0), median_build(args.resamples)
        print(f"build_report in-process, median of {args.runs}: {plain:.2f} s without the bootstrap, "
              f"{full:.2f} s with it (the bootstrap adds {full - plain:+.2f} s)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory (this process): {peak:.0f} MB")


if __name__ == "__main__":
    main()
