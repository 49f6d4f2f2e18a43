"""Quota benchmark: what `--per-golden K` adds to a keypress, and what claiming a golden costs.

On a session of 10,000 goldens x 10 chunks, one person decides every chunk of 200 goldens
twice over (a fresh session each time): once as a plain `annotate` commits a keypress
(Session.decide), once under a quota of 2 per golden (Session.decide holding the person's claim,
renewing its lease and marking the golden done with its last chunk, in the same write), each
golden claimed first as the screen claims it. The runs alternate; medians of the per-commit
wall time are printed beside the budget: a keypress under a quota within 2x a plain one.
Then the read a screen makes before walking to the next golden (the goldens others fill) with
2,000 goldens filled by 50 people.
Run: python benchmarks/quota.py [--goldens N] [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from generate import generated_session

from annotator.store.session import Session

BUDGET_RATIO = 2.0
"""A keypress under a quota against a plain keypress."""
BUDGET_FULL_MS = 50.0
"""The read of the goldens others fill, with 2,000 goldens filled."""
DECIDED_GOLDENS = 200


def commits(path: str | Path, quota: bool) -> list[float]:
    """Seconds per committed decision over DECIDED_GOLDENS goldens (a file, or a PostgreSQL
    URL: benchmarks/postgres.py)."""
    out = []
    with Session(path) as session:
        chunk_ids = session.chunk_ids()
        for golden_id in session.golden_ids()[:DECIDED_GOLDENS]:
            if quota:
                session.claim(golden_id, "alice", 2, 1800)
            for chunk_id in chunk_ids[golden_id]:
                start = time.perf_counter()
                if quota:
                    session.decide("alice", chunk_id, 1, "set", per_golden=2, lease_s=1800)
                else:
                    session.decide("alice", chunk_id, 1, "set")
                out.append(time.perf_counter() - start)
    return out


def main() -> None:
    """Build the session once, then alternate plain and quota runs on fresh copies."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = generated_session(root, args.goldens, args.chunks, name="base")
        plain: list[float] = []
        quota: list[float] = []
        for run in range(args.runs):
            for name, into in (("plain", plain), ("quota", quota)):
                copy = root / f"{name}{run}.db"
                shutil.copy(base, copy)
                into.append(statistics.median(commits(copy, name == "quota")))
        held = root / "held.db"
        shutil.copy(base, held)
        with Session(held) as session:
            # 50 people's done claims on 2,000 goldens, 2 each, as a team leaves them.
            ids = session.golden_ids()[:2000]
            with session.transaction():
                session.conn.executemany(
                    "INSERT INTO claims(golden_id, annotator, claimed_at, done_at) "
                    "VALUES (?, ?, '2026-01-01', '2026-01-01')",
                    [(g, f"p{(2 * i + k) % 50}") for i, g in enumerate(ids) for k in (0, 1)])
            assert len(session.full_goldens("newcomer", 2)) == len(ids)
            reads = []
            for _ in range(20):
                start = time.perf_counter()
                session.full_goldens("newcomer", 2)
                reads.append(time.perf_counter() - start)
    p, q = statistics.median(plain), statistics.median(quota)
    full_ms = statistics.median(reads) * 1000
    print(f"session: {args.goldens:,} goldens x {args.chunks} chunks; "
          f"{DECIDED_GOLDENS * args.chunks:,} decisions a run, median of {args.runs} runs")
    print(f"plain keypress commit   {p * 1000:7.3f} ms")
    print(f"quota keypress commit   {q * 1000:7.3f} ms   ratio {q / p:.2f}   "
          f"budget <= {BUDGET_RATIO:g}   {'ok' if q / p <= BUDGET_RATIO else 'OVER'}")
    print(f"goldens others fill     {full_ms:7.3f} ms at 2,000 filled   budget <= "
          f"{BUDGET_FULL_MS:g} ms   {'ok' if full_ms <= BUDGET_FULL_MS else 'OVER'}")


if __name__ == "__main__":
    main()
