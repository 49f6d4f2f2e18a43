"""api.chunks_frame beside pandas.read_sql: a session's chunks as a DataFrame, every judge's
verdict, reason and P(relevant) and every person's label and note in columns.

On generated sessions (10 chunks a golden, one judge, one person), each run in a process of
its own, alternately with the bare program: one read_sql of the join that gives the same
columns. Prints the CPU seconds of both, their ratio and the budget (2x), and each one's growth
exponent from the smallest size to the largest beside the bare program's (budget: within 0.1).

Run: python benchmarks/chunks_frame.py [--sizes 10000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path

from generate import generated_session
from measure import measured

BUDGET, BUDGET_EXPONENT = 2.0, 0.1
OURS = "from annotator import api; api.chunks_frame({db!r})"
BARE = """
import sqlite3, pandas
conn = sqlite3.connect({db!r})
judges = [r[0] for r in conn.execute("SELECT name FROM judges ORDER BY name")]
people = [r[0] for r in conn.execute("SELECT DISTINCT annotator FROM labels ORDER BY 1")]
select = ["g.id AS golden_id", "c.rank", "g.user_input AS question", "c.text AS chunk",
          "c.doc_id", "c.score"]
joins = []
for i, j in enumerate(judges):
    select += [f"v{{i}}.verdict AS 'verdict:{{j}}'", f"v{{i}}.reason AS 'reason:{{j}}'",
               f"v{{i}}.p_relevant AS 'p_relevant:{{j}}'"]
    joins.append(f"LEFT JOIN (SELECT chunk_id, verdict, reason, p_relevant, max(id) FROM verdicts "
                 f"WHERE judge = '{{j}}' AND error IS NULL AND repetition = 1 GROUP BY chunk_id) "
                 f"v{{i}} ON v{{i}}.chunk_id = c.id")
for i, p in enumerate(people):
    select += [f"CASE WHEN l{{i}}.unsure THEN 'unsure' WHEN l{{i}}.distractor THEN 'distractor' "
               f"ELSE l{{i}}.verdict END AS 'label:{{p}}'", f"l{{i}}.note AS 'note:{{p}}'"]
    joins.append(f"LEFT JOIN labels l{{i}} ON l{{i}}.chunk_id = c.id AND l{{i}}.annotator = '{{p}}'")
pandas.read_sql("SELECT " + ", ".join(select) + " FROM goldens g JOIN chunks c "
                "ON c.golden_id = g.id " + " ".join(joins) + " ORDER BY g.position, c.rank", conn)
"""


def main() -> None:
    """Print each size's figures beside the bare program's and the budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    grown = []
    with tempfile.TemporaryDirectory() as tmp:
        for goldens in sizes:
            folder = Path(tmp) / str(goldens)
            folder.mkdir()
            db = str(generated_session(folder, goldens, 10, annotator="bench-reviewer"))
            ours, bare = [], []
            for _ in range(args.runs):
                ours.append(measured([sys.executable, "-c", OURS.format(db=db)])[0])
                bare.append(measured([sys.executable, "-c", BARE.format(db=db)])[0])
            o, b = statistics.median(ours), statistics.median(bare)
            grown.append((goldens * 10, o, b))
            print(f"chunks_frame, {goldens * 10:,} chunks: {o:.2f} s CPU against read_sql's "
                  f"{b:.2f} s ({o / b:.2f}x; budget {BUDGET:.0f}x)")
    if len(grown) > 1:
        (n1, o1, b1), (n2, o2, b2) = grown[0], grown[-1]
        scale = math.log(n2 / n1)
        ours_k, bare_k = math.log(o2 / o1) / scale, math.log(b2 / b1) / scale
        print(f"growth exponent: {ours_k:.2f} against read_sql's {bare_k:.2f} (budget: within "
              f"{BUDGET_EXPONENT})")


if __name__ == "__main__":
    main()
