"""Re-check benchmark: a 10,000-chunk canary re-judged against the test server.

A re-check sends the same requests a judge run sends, then compares, stores its figures and the
running bound. Measured beside judging the same chunks afresh (the same requests through the
same runner): CPU seconds of this process per 1,000 chunks for each, and the re-check's own
figures (canary, comparison, bootstrap) apart. Budget: the re-check within 1.25x the judge
run's CPU on the same chunks, its figures within 2 s.
Run: python benchmarks/recheck.py [--goldens 1000] [--chunks 10] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from generate import generated_session
from judge import test_server

from annotator.calibration.recheck import choose_canary, finish_recheck, history, run_recheck
from annotator.judge.prompts import builtin
from annotator.judge.runner import RunOptions, RunStats, run_judge
from annotator.judge.transport import connect
from annotator.judge.types import JudgeSettings
from annotator.store.session import Session

BUDGET_OVER_JUDGE = 1.25
BUDGET_FIGURES_S = 2.0


def main() -> None:
    """Measure and print the figures beside the budgets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    total = args.goldens * args.chunks
    print(f"recheck benchmark: a canary of {total:,} chunks, the test server in its own "
          f"process answering at once, {args.concurrency} calls at a time")
    settings = JudgeSettings(model="bench", prompt=builtin(), logprobs=True)
    options = RunOptions(concurrency=args.concurrency, max_retries=0)
    with tempfile.TemporaryDirectory() as tmp, test_server(0.0) as base_url:
        db = generated_session(Path(tmp), args.goldens, args.chunks, annotator="alice")
        with Session(db) as session:
            async def judge() -> RunStats:
                async with connect("openai", base_url, "sk-bench",
                                       concurrency=args.concurrency) as client:
                    return await run_judge(session, "live", settings, client, options,
                                           RunStats())

            cpu = time.process_time()
            judged = asyncio.run(judge())
            judge_cpu = time.process_time() - cpu
            assert judged.judged == total, judged
            canary, _ = choose_canary(session)
            assert len(canary.chunk_ids) == total

            async def recheck() -> int:
                async with connect("openai", base_url, "sk-bench",
                                       concurrency=args.concurrency) as client:
                    return await run_recheck(session, "live", settings, client, options,
                                             RunStats(), canary)

            cpu = time.process_time()
            recheck_id = asyncio.run(recheck())
            calls_cpu = time.process_time() - cpu
            cpu = time.process_time()
            done = finish_recheck(session, "live", recheck_id, canary)
            history(session, "live", canary)
            figures_cpu = time.process_time() - cpu
            assert done.figures.chunks == total, done
    ratio = (calls_cpu + figures_cpu) / judge_cpu
    per = 1000 / total
    print(f"  judge run      {judge_cpu * per:6.3f} s CPU per 1,000 chunks")
    print(f"  re-check       {(calls_cpu + figures_cpu) * per:6.3f} s CPU per 1,000 chunks "
          f"({ratio:.2f}x the judge run; budget <= {BUDGET_OVER_JUDGE}x)  "
          f"{'OK' if ratio <= BUDGET_OVER_JUDGE else 'OVER'}")
    print(f"  its figures    {figures_cpu:6.3f} s CPU (canary comparison, 2,000 bootstrap "
          f"replicates, history; budget <= {BUDGET_FIGURES_S} s)  "
          f"{'OK' if figures_cpu <= BUDGET_FIGURES_S else 'OVER'}")


if __name__ == "__main__":
    main()
