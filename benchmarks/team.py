"""Team benchmark: three people's files of 10,000 goldens x 10 chunks, merged and reported.

Prints the CPU and peak memory of `annotator merge` on the three files beside the bare SQL
merge (benchmarks/bare/bare_merge.py: ATTACH + INSERT ... SELECT), run alternately, with their
ratio; then the end-to-end time of `annotator report` (with inter-annotator agreement) and
`annotator judges` on the team file, each with 2,000 bootstrap resamples; budgets beside them.
Run: python benchmarks/team.py [--goldens N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generate
from measure import measured

from annotator.formats import read_goldens
from annotator.store.session import Session

BUDGETS_S = {"merge": 60.0, "report": 8.0, "judges": 8.0}
BUDGET_MERGE_RATIO = 2.0
BUDGET_MERGE_MB = 200.0
PEOPLE = ("alice", "bob", "carol")


def person_file(base: Path, out: Path, name: str, flip: float, seed: int) -> None:
    """The base goldens with this person's labels: the base labels, a share of them flipped."""
    rng = random.Random(seed)
    with base.open(encoding="utf-8") as source, out.open("w", encoding="utf-8") as sink:
        for line in source:
            obj = json.loads(line)
            labels = obj["human_labels"].pop("base")
            obj["human_labels"][name] = [1 - v if rng.random() < flip else v for v in labels]
            sink.write(json.dumps(obj) + "\n")


def timed(command: list[str]) -> tuple[float, int]:
    """Wall time and the child's peak RSS (KB) of a command, run through /usr/bin/time."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], check=True,
                          capture_output=True, text=True)
    return time.perf_counter() - start, int(done.stderr.strip().splitlines()[-1])


def main() -> None:
    """Generate three people's files, import each, merge them, then report on the team file."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    annotator = [sys.executable, "-m", "annotator"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root / "base.jsonl", args.goldens, args.chunks, annotator="base")
        files = []
        for i, name in enumerate(PEOPLE):
            source = root / f"{name}.jsonl"
            person_file(root / "base.jsonl", source, name, 0.05 + 0.05 * i, seed=i)
            with Session(root / f"{name}.db") as session:
                session.import_goldens(read_goldens(source), path=str(source))
            files.append(str(root / f"{name}.db"))
        ours, bare = [], []
        for run in range(args.runs):
            out = root / f"ours{run}.db"
            ours.append(measured([*annotator, "merge", *files, "--output", str(out)]))
            out.unlink()
            bare.append(measured([sys.executable, str(Path(__file__).parent / "bare" / "bare_merge.py"),
                             str(root / f"bare{run}.db"), *files]))
            (root / f"bare{run}.db").unlink()
        team = str(root / "team.db")
        figures = {
            "merge": timed([*annotator, "merge", *files, "--output", team]),
            "report": timed([*annotator, "report", team, "--annotator", "alice", "--format",
                             "json", "--output", str(root / "r.json")]),
            "judges": timed([*annotator, "judges", team, "--format", "json", "--output",
                             str(root / "j.json")]),
        }
        report = json.loads((root / "r.json").read_text())["inter_annotator"]
    print(f"{len(PEOPLE)} files of {args.goldens:,} goldens x {args.chunks} chunks; "
          f"alpha among people {report['alpha_people']:.3f}")
    ours_cpu = statistics.median(c for c, _ in ours)
    bare_cpu = statistics.median(c for c, _ in bare)
    ours_mb = statistics.median(m for _, m in ours)
    ratio = ours_cpu / bare_cpu
    within = "OK" if ratio <= BUDGET_MERGE_RATIO else "OVER"
    print(f"  merge CPU {ours_cpu:6.2f} s vs the bare SQL merge {bare_cpu:6.2f} s: ratio "
          f"{ratio:.2f} (budget <= {BUDGET_MERGE_RATIO:g}: {within}), median of {args.runs}, "
          "alternating")
    print(f"  merge peak memory {ours_mb:6.0f} MB vs bare "
          f"{statistics.median(m for _, m in bare):6.0f} MB (budget < {BUDGET_MERGE_MB:.0f} MB: "
          f"{'OK' if ours_mb < BUDGET_MERGE_MB else 'OVER'})")
    for what, (seconds, peak_kb) in figures.items():
        print(f"{what:>7}: {seconds:6.2f} s, peak {peak_kb / 1024:6.0f} MB "
              f"(budget {BUDGETS_S[what]:.0f} s)")


if __name__ == "__main__":
    main()
