"""`annotator judge --limit 2000` on a 100K-chunk and a 1M-chunk session: the same work.

Both sessions are generated (goldens x 10 chunks) and imported first; then the real command
runs against the test server (in a process of its own, answering at once), and the CPU time
of the command (user + system) is printed for each size, with their ratio beside the budget:
a run that judges 2,000 chunks should cost about the same whatever the session's size.
Run: python benchmarks/judge_limit.py [--small 10000] [--large 100000] [--limit 2000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from generate import generated_session

ROOT = Path(__file__).resolve().parent.parent
BUDGET_RATIO = 1.3


def cpu_of_judge(db: Path, base_url: str, limit: int) -> float:
    """CPU seconds of one `annotator judge --limit` run to its end."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": base_url}
    process = subprocess.Popen([sys.executable, "-m", "annotator", "judge", str(db), "--model",
                                "bench", "--limit", str(limit), "--no-logprobs"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("annotator judge failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Build both sessions, judge each with the same limit, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=10_000, help="goldens of the small one")
    parser.add_argument("--large", type=int, default=100_000, help="goldens of the large one")
    parser.add_argument("--limit", type=int, default=2000)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "tests.fake_openai", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        figures = {}
        with tempfile.TemporaryDirectory() as tmp:
            for goldens in (args.small, args.large):
                db = generated_session(Path(tmp), goldens, 10, name=str(goldens))
                figures[goldens] = cpu_of_judge(db, base_url, args.limit)
    finally:
        server.terminate()
        server.wait(timeout=10)
    small, large = figures[args.small], figures[args.large]
    print(f"annotator judge --limit {args.limit:,}, CPU seconds:")
    print(f"  on {args.small * 10:,} chunks   {small:6.2f} s")
    print(f"  on {args.large * 10:,} chunks   {large:6.2f} s")
    print(f"  ratio                 {large / small:6.2f}   budget {BUDGET_RATIO}")


if __name__ == "__main__":
    main()
