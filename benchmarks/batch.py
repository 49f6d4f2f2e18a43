"""Batch benchmark: 1,000,000 chunks (100,000 goldens x 10) written as Batch API request files,
and a results file for all of them stored, each in a process of its own.

Prints the wall time and peak memory of each beside the budget: under 120 s and under 500 MB
each. The results file is made here (every request answered with a verdict and a reason, as a
provider's output file holds them); making it is not measured.
Run: python benchmarks/batch.py [--goldens 100000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generated_session

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 120.0
BUDGET_MB = 500.0


def write(db: Path, folder: Path) -> None:
    """One round of requests for a new judge, split at OpenAI's limits (the measured part)."""
    from annotator.judge.batch import Limits, write_round
    from annotator.judge.prompts import builtin
    from annotator.judge.runner import RunOptions, RunStats, judge_definition
    from annotator.judge.types import JudgeSettings
    from annotator.store.session import Session

    settings = JudgeSettings(model="bench", prompt=builtin())
    with Session(db) as session:
        session.define_judge(judge_definition("bench-batch", settings))
        current = write_round(session, "bench-batch", settings, RunOptions(), RunStats(),
                              folder, Limits())
    print(json.dumps({"requests": current.requests, "files": len(current.parts),
                      "bytes": sum(p.bytes for p in current.parts)}))


def store(db: Path, results: Path) -> None:
    """import-results on the whole file: checked line by line, stored whole (the measured
    part)."""
    from annotator.judge.batch import store_results
    from annotator.store.session import Session

    with Session(db) as session, session.transaction(), results.open("rb") as handle:
        done = store_results(session, ((n, line) for n, line in enumerate(handle, 1)
                                       if line.strip()), results)
    print(json.dumps({"results": done.results, "stored": done.calls}))


def answer_all(folder: Path, results: Path) -> int:
    """A results file answering every request of the round (as a provider's output is)."""
    count = 0
    with results.open("w") as out:
        for path in sorted(folder.glob("*-round*-part*.jsonl")):
            with path.open() as source:
                for line in source:
                    custom_id = json.loads(line)["custom_id"]
                    verdict = count % 2
                    content = json.dumps({"reason": "It states the figure asked for."
                                          if verdict else "Another topic.", "verdict": verdict})
                    body = {"id": f"chatcmpl-{count}", "object": "chat.completion", "created": 0,
                            "model": "bench", "choices": [{
                                "index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content}}],
                            "usage": {"prompt_tokens": 240, "completion_tokens": 18,
                                      "total_tokens": 258,
                                      "prompt_tokens_details": {"cached_tokens": 128}}}
                    out.write(json.dumps({"id": f"batch_req_{count}", "custom_id": custom_id,
                                          "response": {"status_code": 200,
                                                       "request_id": f"r{count}", "body": body},
                                          "error": None}) + "\n")
                    count += 1
    return count


def timed(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident MB and the output of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    out = process.stdout.read().decode() if process.stdout else ""
    if status:
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {error}")
    return wall, usage.ru_maxrss / 1024, out.strip()


def verdict(seconds: float, mb: float) -> str:
    ok = seconds < BUDGET_SECONDS and mb < BUDGET_MB
    return (f"budget < {BUDGET_SECONDS:.0f} s and < {BUDGET_MB:.0f} MB  "
            f"{'OK' if ok else 'OVER'}")


def main() -> None:
    """Measure and print the figures beside the budget."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, help="Keep the generated session here.")
    parser.add_argument("--phase", choices=["write", "store"], help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "write":
        return write(*args.paths)
    if args.phase == "store":
        return store(*args.paths)
    chunks = args.goldens * 10
    print(f"batch benchmark: {chunks:,} chunks ({args.goldens:,} goldens x 10)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        source = folder / f"batch{args.goldens}.db"
        if not source.exists():
            generated_session(folder, args.goldens, 10, name=f"batch{args.goldens}")
        db = Path(tmp) / "bench.db"
        subprocess.run([sys.executable, "-m", "annotator", "copy", str(source), str(db)],
                       cwd=ROOT, check=True, capture_output=True)
        files = Path(tmp) / "requests"
        files.mkdir()
        script = str(Path(__file__).resolve())
        wall, mb, out = timed([sys.executable, script, "--phase", "write", str(db), str(files)])
        written = json.loads(out)
        print(f"  write the requests: {wall:6.1f} s, peak {mb:4.0f} MB; "
              f"{written['requests']:,} requests in {written['files']} files "
              f"({written['bytes'] / 1e6:,.0f} MB)  {verdict(wall, mb)}")
        results = Path(tmp) / "results.jsonl"
        answer_all(files, results)
        for path in files.glob("*.jsonl"):
            path.unlink()  # room on the disk for the results
        wall, mb, out = timed([sys.executable, script, "--phase", "store", str(db), str(results)])
        stored = json.loads(out)
        print(f"  store the results:  {wall:6.1f} s, peak {mb:4.0f} MB; "
              f"{stored['stored']:,} calls from {stored['results']:,} results  "
              f"{verdict(wall, mb)}")


if __name__ == "__main__":
    main()
