"""The decision's paths at a collection's size: 33 judges and 3 people on 2,000 goldens x 10
chunks (660,000 verdicts), each judge with P(relevant).

Times, CPU and peak memory, each in a process of its own, median of the runs:
- `annotator judges --format json`: the leaderboard against the team's truth, with the alternative
  annotator test for every judge (each judge against leaving one person out, three people);
- `annotator trust --judge judge-00`: trust or escalate (a confidence threshold fitted on the
  dev half and tested on the other, after `split --dev 0.5`), with `--then judge-01` as the
  stronger judge;
budgets beside them.
Run: python benchmarks/decision.py [--goldens N] [--judges N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

from measure import measured

from annotator.formats import read_goldens
from annotator.store.session import Session

BUDGETS_S = {"judges": 10.0, "trust": 5.0}
PEOPLE = ("ana", "ben", "cy")


def write(path: Path, goldens: int, chunks: int, judges: int, seed: int = 3) -> None:
    """Goldens with a truth, three people (each right 85-90%) and the judges (each right
    60-90%, P(relevant) sharper where it is right)."""
    rng = random.Random(seed)
    skill = {f"judge-{j:02d}": 0.6 + 0.3 * j / max(judges - 1, 1) for j in range(judges)}
    with path.open("w", encoding="utf-8") as out:
        for i in range(goldens):
            truth = [int(rng.random() < 0.4) for _ in range(chunks)]
            said = {}
            for name, right in skill.items():
                verdicts = []
                for t in truth:
                    v = t if rng.random() < right else 1 - t
                    p = min(1.0, max(0.0, rng.gauss(0.75 if v == t else 0.6, 0.15)))
                    verdicts.append({"verdict": v, "p_relevant": round(p if v else 1 - p, 3)})
                said[name] = verdicts
            obj = {"id": f"g{i:05d}", "user_input": f"question {i}", "reference": "answer",
                   "retrieved_contexts": [f"chunk {i}-{k}" for k in range(chunks)],
                   "judges": said,
                   "human_labels": {p: [t if rng.random() < 0.88 else 1 - t for t in truth]
                                    for p in PEOPLE}}
            out.write(json.dumps(obj) + "\n")


def main() -> None:
    """Build the session, then time each path."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--judges", type=int, default=33)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    annotator = [sys.executable, "-m", "annotator"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source, db = root / "goldens.jsonl", root / "decision.db"
        write(source, args.goldens, args.chunks, args.judges)
        with Session(db) as session:
            session.import_goldens(read_goldens(source), path=str(source))
        measured([*annotator, "split", str(db), "--dev", "0.5", "--seed", "1"])
        paths = {
            "judges": [*annotator, "judges", str(db), "--format", "json",
                       "--output", str(root / "board.json")],
            "trust": [*annotator, "trust", str(db), "--judge", "judge-00", "--then",
                      "judge-01", "--format", "json"],
        }
        figures = {name: [measured(argv) for _ in range(args.runs)]
                   for name, argv in paths.items()}
    print(f"{args.goldens:,} goldens x {args.chunks} chunks, {args.judges} judges, "
          f"{len(PEOPLE)} people; median of {args.runs} runs")
    for name, runs in figures.items():
        cpu = statistics.median(c for c, _ in runs)
        mb = max(m for _, m in runs)
        budget = BUDGETS_S[name]
        print(f"{name:7s} {cpu:6.2f} s CPU  {mb:5.0f} MB peak   budget < {budget:g} s   "
              f"{'ok' if cpu < budget else 'OVER'}")


if __name__ == "__main__":
    main()
