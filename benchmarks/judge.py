"""Judge benchmark: 2,000 chunks against the test server answering in 100 ms.

At concurrency 8, 32 and 128: wall time against the ideal (chunks x latency / concurrency) and
CPU time per call; then the same chunks through RAGAS's own ContextPrecision (chunks of a
golden in sequence, as RAGAS does; goldens 32 at a time) when ragas is installed. Then the
listwise style against the pointwise builtin on the sample sessions: calls and prompt tokens
per 1,000 chunks, as the test server counts them (OpenAI's o200k_base encoding).
Budgets: within 15% of the ideal at concurrency 32; listwise at most 40% of the pointwise
prompt tokens on every sample session.
Run: python benchmarks/judge.py [--goldens 200] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from generate import generate

from annotator.formats import read_goldens
from annotator.judge.prompts import builtin, listwise
from annotator.judge.runner import RunOptions, RunStats, run_judge
from annotator.judge.transport import connect
from annotator.judge.types import JudgePrompt, JudgeSettings
from annotator.store.session import Session

ROOT = Path(__file__).resolve().parent.parent

BUDGET_OVER_IDEAL = 0.15
BUDGET_LISTWISE_TOKENS = 0.40
T = TypeVar("T")


@contextmanager
def test_server(latency: float) -> Iterator[str]:
    """tests/fake_openai.py in a process of its own (not competing for this one's GIL)."""
    server = subprocess.Popen([sys.executable, "-m", "tests.fake_openai", str(latency)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=10)


async def ours(session: Session, base_url: str, name: str, concurrency: int,
               prompt: JudgePrompt | None = None) -> RunStats:
    """Judge every chunk with the builtin prompt (or the one given)."""
    prompt = prompt or builtin()
    settings = JudgeSettings(model="bench", prompt=prompt, logprobs=True,
                             window=20 if prompt.listwise else None)
    async with connect("openai", base_url, "sk-bench", concurrency=concurrency) as client:
        return await run_judge(session, name, settings, client,
                               RunOptions(concurrency=concurrency, max_retries=0), RunStats())


async def theirs(session: Session, base_url: str, concurrency: int) -> int:
    """RAGAS's own ContextPrecision over the same goldens; returns the number of calls."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # its usage telemetry would stall here
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import ContextPrecision

    gate = asyncio.Semaphore(concurrency)
    async with AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0) as client:
        metric = ContextPrecision(llm=llm_factory("bench", provider="openai", client=client))

        async def one(question: str, reference: str, chunks: list[str]) -> None:
            async with gate:
                await metric.ascore(user_input=question, reference=reference,
                                    retrieved_contexts=chunks)

        goldens = session.goldens()
        await asyncio.gather(*(one(g.user_input, g.reference or "", [c.text for c in g.chunks])
                               for g in goldens))
        return sum(len(g.chunks) for g in goldens)


def timed(coroutine: Coroutine[Any, Any, T]) -> tuple[T, float, float]:
    """Run a coroutine; return its result, wall seconds and CPU seconds of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = asyncio.run(coroutine)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def styles(base_url: str, tmp: Path) -> None:
    """Listwise against pointwise on each sample session: calls and prompt tokens."""
    print("listwise (one call a golden, windows of 20) against the pointwise builtin:")
    for sample in sorted((ROOT / "sample_sessions").glob("*.jsonl")):
        with Session(tmp / f"{sample.stem}.db") as session:
            session.import_goldens(read_goldens(sample), path=str(sample))
            figures = {}
            for name, prompt in (("builtin", builtin()), ("listwise", listwise())):
                stats = asyncio.run(ours(session, base_url, name, 8, prompt))
                summary = session.call_summary(name)
                chunks = stats.judged
                figures[name] = (1000 * stats.requests / chunks,
                                 1000 * summary["tokens_in"] / chunks)
            ratio = figures["listwise"][1] / figures["builtin"][1]
            verdict = "OK" if ratio <= BUDGET_LISTWISE_TOKENS else "OVER"
            print(f"  {sample.stem:14s} calls per 1,000 chunks {figures['builtin'][0]:6.0f} -> "
                  f"{figures['listwise'][0]:4.0f}; prompt tokens per 1,000 chunks "
                  f"{figures['builtin'][1]:8,.0f} -> {figures['listwise'][1]:7,.0f} "
                  f"({ratio:.0%}; budget <= {BUDGET_LISTWISE_TOKENS:.0%})  {verdict}")


def main() -> None:
    """Measure and print the figures beside the budget."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    chunks = args.goldens * 10
    print(f"judge benchmark: {chunks:,} chunks, the test server answering in "
          f"{args.latency * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp, test_server(0.0) as fast:
        styles(fast, Path(tmp))
    with tempfile.TemporaryDirectory() as tmp, test_server(args.latency) as base_url:
        source = Path(tmp) / "goldens.jsonl"
        generate(source, args.goldens, 10)
        with Session(Path(tmp) / "bench.db") as session:
            session.import_goldens(read_goldens(source), path=str(source))
            at_32 = None
            for concurrency in (8, 32, 128):
                stats, wall, cpu = timed(ours(session, base_url, f"bench-{concurrency}",
                                              concurrency))
                assert stats.judged == chunks, stats
                ideal = chunks * args.latency / concurrency
                over = wall / ideal - 1
                budget = (f"budget < +{BUDGET_OVER_IDEAL:.0%}  "
                          f"{'OK' if over < BUDGET_OVER_IDEAL else 'OVER'}"
                          if concurrency == 32 else "")
                print(f"  concurrency {concurrency:3d}: {wall:6.2f} s, ideal {ideal:6.2f} s "
                      f"({over:+.1%})  CPU {cpu / chunks * 1000:.2f} ms per call  {budget}")
                if concurrency == 32:
                    at_32 = wall
            try:
                import ragas  # noqa: F401
            except ImportError:  # the telemetry switch is set in theirs(), before any use
                print("  RAGAS's ContextPrecision: ragas is not installed "
                      "(pip install -e '.[ragas]' to compare)")
                return
            calls, wall, cpu = timed(theirs(session, base_url, 32))
            assert at_32 is not None
            print(f"  RAGAS ContextPrecision, 32 goldens at a time: {wall:6.2f} s for {calls} "
                  f"calls, CPU {cpu / chunks * 1000:.2f} ms per call; "
                  f"ours at concurrency 32 takes {at_32 / wall:.2f}x RAGAS's time")


if __name__ == "__main__":
    main()
