"""Graded leaderboard benchmark: `annotator judges` on a TREC-DL-sized pool graded 0-3.

The shape of the TREC DL 2023 LLM-judge collection: 82 queries, 4,423 query-passage pairs,
the assessors' grades and 42 judges' grades, imported with `import-trec`; then the leaderboard
with 2,000 resamples in every format a person reads. Prints the CPU seconds of each command
(process start to output written) and the budget beside the leaderboard's.
Run: python benchmarks/graded.py [--judges N] [--resamples N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from measure import measured

BUDGET_CPU_S = 10.0
QUERIES, PAIRS = 82, 4423


def write_collection(tmp: Path, judges: int, seed: int = 0, scale: int = 1) -> list[str]:
    """Topics, the assessors' qrels (also the pool) and each judge's, ``scale`` times the
    collection's queries and pairs; the import's arguments."""
    rng = np.random.default_rng(seed)
    queries, count = QUERIES * scale, PAIRS * scale
    sizes = rng.multinomial(count - queries, np.full(queries, 1 / queries)) + 1
    (tmp / "queries.tsv").write_text("".join(f"{2023000 + q}\tquery {q}\n"
                                             for q in range(queries)))
    pairs = [(2023000 + q, f"msmarco_passage_{q:02d}_{k}") for q in range(queries)
             for k in range(int(sizes[q]))]
    truth = rng.choice(4, size=len(pairs), p=[0.45, 0.25, 0.2, 0.1])
    (tmp / "nist.qrels").write_text("".join(f"{q} 0 {d} {g}\n"
                                            for (q, d), g in zip(pairs, truth, strict=True)))
    args = ["--pool", str(tmp / "nist.qrels"), "--labels", f"nist={tmp / 'nist.qrels'}"]
    for j in range(judges):
        agree = rng.random(len(pairs)) < rng.uniform(0.3, 0.8)
        said = np.where(agree, truth, rng.choice(4, size=len(pairs)))
        path = tmp / f"judge{j:02d}.qrels"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in zip(pairs, said, strict=True)))
        args += ["--judge", f"judge-{j:02d}={path}"]
    return args


def main() -> None:
    """Write the collection, import it, time the leaderboard."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--judges", type=int, default=42)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1,
                        help="Times the collection's queries and pairs (100: 442,300 pairs).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        files = write_collection(tmp, args.judges, scale=args.scale)
        db = str(tmp / "dl.db")
        annotator = [sys.executable, "-m", "annotator"]
        cpu, mb = measured([*annotator, "import-trec", db, "--queries",
                            str(tmp / "queries.tsv"), *files])
        print(f"{QUERIES * args.scale:,} queries, {PAIRS * args.scale:,} pairs, "
              f"{args.judges} judges graded 0-3, "
              f"{args.resamples:,} resamples")
        print(f"import-trec                : {cpu:6.2f} s CPU, {mb:4.0f} MB (no budget)")
        for fmt in ("table", "json", "html"):
            cpu, mb = measured([*annotator, "judges", db, "--format", fmt, "--bootstrap",
                                str(args.resamples), "--output", str(tmp / f"board.{fmt}")])
            # The budget is the collection's own size's; larger scales are for growth.
            budget = (f"(budget {BUDGET_CPU_S:.0f} s)" if fmt == "table" and args.scale == 1
                      else "(no budget)")
            print(f"judges --format {fmt:5s}      : {cpu:6.2f} s CPU, {mb:4.0f} MB {budget}")


if __name__ == "__main__":
    main()
