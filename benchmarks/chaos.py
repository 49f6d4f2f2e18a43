"""Chaos run: the judge against a server that fails in every way at once, run until done.

2,000 chunks; each request is, at random (seeded): 20% a 429 with Retry-After, 5% a 500, 5% a
200 whose body is not a chat completion (an HTML page or broken JSON), 5% a reply whose verdict
is 2, 2% a hang past the timeout, 2% a dropped connection; the rest answer. The judge runs (in
one process, a run at a time) until every chunk has its verdict. Printed beside the budgets:
crashes, runs needed, chunks left, good replies asked again, calls stored per chunk.
Run: python benchmarks/chaos.py [--goldens 200] [--chunks 10]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from generate import generated_session

from annotator.judge.prompts import builtin
from annotator.judge.runner import RunOptions, RunStats, run_judge
from annotator.judge.transport import connect
from annotator.judge.types import JudgeSettings
from annotator.store.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fake_openai import FakeOpenAI  # the test server, in this process

MIX = {"429": 0.20, "500": 0.05, "html_page": 0.03, "json_garbage": 0.02, "verdict2": 0.05,
       "slow": 0.02, "drop": 0.02}
BUDGET_RUNS = 3


def run_until_done(db: Path, server: FakeOpenAI, limit_runs: int = 10) -> tuple[int, int, int]:
    """Runs needed, crashes, chunks still without a verdict."""
    crashes = 0
    settings = JudgeSettings(model="chaos", prompt=builtin(), logprobs=False)
    left = -1
    for run in range(1, limit_runs + 1):
        async def go() -> None:
            async with connect("openai", server.base_url, "sk-chaos", concurrency=32) as client:
                with Session(db) as session:
                    await run_judge(session, "chaos", settings, client,
                                    RunOptions(concurrency=32, timeout=0.5, max_retries=4,
                                               backoff_base=0.02, max_wait=0.2), RunStats())

        try:
            asyncio.run(go())
        except Exception as error:  # a crash is what this run counts
            crashes += 1
            print(f"  run {run} crashed: {error.__class__.__name__}: {error}")
        with Session(db) as session:
            left = session.count_chunks() - len(session.verdicts("chaos"))
        if left == 0:
            return run, crashes, 0
    return limit_runs, crashes, left


def main() -> None:
    """Generate, judge under chaos, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = generated_session(Path(tmp), args.goldens, args.chunks)
        with FakeOpenAI() as server:
            server.chaos = MIX
            server.slow_seconds = 1.0  # past the 0.5 s timeout
            server.retry_after = "0.05"
            started = time.perf_counter()
            runs, crashes, left = run_until_done(db, server)
            seconds = time.perf_counter() - started
            good = Counter(chunk for chunk, behaviour in server.served if behaviour == "ok")
        with Session(db) as session:
            stored = Counter(c["chunk_id"] for c in session.calls("chaos") if c["verdict"] is not None)
            total = session.count_chunks()
        faults = Counter(b for _, b in server.served if b != "ok")
    print(f"Chaos run: {total:,} chunks, {len(server.served):,} requests in {seconds:.1f} s; "
          f"faults served: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    print(f"  crashes                         {crashes}   budget 0")
    print(f"  runs until every chunk judged   {runs}   budget {BUDGET_RUNS}")
    print(f"  chunks left without a verdict   {left}   budget 0")
    asked_again = sum(n - 1 for n in good.values() if n > 1)
    print(f"  good replies asked again        {asked_again}   budget 0 (a good reply is never "
          "thrown away)")
    print(f"  verdicts stored per chunk       max {max(stored.values()) if stored else 0}   "
          "budget 1 (no duplicates)")


if __name__ == "__main__":
    main()
