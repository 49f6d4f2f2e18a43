"""Import benchmark: generated goldens x 10 chunks through `annotator import`, beside the bare
program (benchmarks/bare/bare_import.py: parse + hash + executemany into the same schema).

Runs the two alternately on the same file and prints CPU and peak memory of each, their ratio
with the budget, and the re-import (a no-op).

CPU seconds on a shared machine vary by a fifth from run to run; ``--instructions`` counts
instructions instead (valgrind's callgrind, about 50 times slower, so on 2,000 and 6,000
goldens), which do not vary, and prints each program's instructions per golden (the slope
between the two sizes) and at start-up (the rest), and the ratio at --goldens implied by them.
Run: python benchmarks/import.py [--goldens N] [--chunks K] [--runs N] [--instructions]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from generate import generate
from measure import measured

from annotator.store.session import Session

BUDGET_RATIO = 1.3
BUDGET_MB = 500.0


def instructions(argv: list[str]) -> int:
    """Instructions one run of a command executes, counted by valgrind's callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *argv], capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind printed no count: {done.stderr[-500:]}")
    return int(found.group(1))


def count_instructions(goldens: int, chunks: int) -> None:
    """Instructions per golden and at start-up, ours and bare, from two small files."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind).")
    sizes = (2_000, 6_000)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Session(root / "empty.db"):
            pass
        counts: dict[str, list[int]] = {"ours": [], "bare": []}
        for size in sizes:
            source = root / f"goldens{size}.jsonl"
            generate(source, size, chunks)
            counts["ours"].append(instructions([sys.executable, "-m", "annotator", "import",
                                                str(source), "--session",
                                                str(root / f"ours{size}.db")]))
            counts["bare"].append(instructions([sys.executable, str(Path(__file__).parent / "bare"
                                                                    / "bare_import.py"),
                                                str(root / "empty.db"),
                                                str(root / f"bare{size}.db"), str(source)]))
    per, fixed = {}, {}
    for who, (small, large) in counts.items():
        per[who] = (large - small) / (sizes[1] - sizes[0])
        fixed[who] = small - per[who] * sizes[0]
        print(f"  {who:4}  {per[who] / 1e3:8,.0f} K instructions a golden, "
              f"{fixed[who] / 1e6:6,.0f} M at start-up")
    for at in (goldens // 10, goldens):
        ratio = (fixed["ours"] + per["ours"] * at) / (fixed["bare"] + per["bare"] * at)
        print(f"  ratio at {at:,} goldens: {ratio:.2f}   budget <= {BUDGET_RATIO:g}   "
              f"{'OK' if ratio <= BUDGET_RATIO else 'OVER'}")


def main() -> None:
    """Generate, then import with the tool and with the bare program, alternately."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--instructions", action="store_true",
                        help="Count instructions with valgrind instead of timing CPU.")
    args = parser.parse_args()
    if args.instructions:
        print(f"import benchmark, instructions: {args.chunks} chunks a golden, from files of "
              "2,000 and 6,000 goldens")
        count_instructions(args.goldens, args.chunks)
        return
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
