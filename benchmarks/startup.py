"""Start-up benchmark: the CPU a command costs on a small session, imports included.

On the banking sample labelled by one person (16 goldens, 80 chunks), the median over runs of
the CPU time (user + system, from the kernel's accounting of the child) of:

- `annotator report --format table` (2,000 bootstrap resamples, the default);
- `annotator info`;
- `annotator import` of the same goldens file into a new session file;
- `annotator annotate` under a pseudo-terminal, from process start until its header is on
  screen (the process is then stopped; its CPU until then is what is counted).

Run: python benchmarks/startup.py [--runs N]. Measure a base install (pip install -e .):
with the test extras, pandas is present and sqlite-utils imports it (about 0.4 s more) where a
command migrates a file. The project is compiled to bytecode first (benchmarks/measure.py).
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import measure  # noqa: F401  (compiles the project to bytecode first, as a wheel install does)

from annotator.formats import read_goldens
from annotator.store.session import Session

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_sessions" / "team" / "banking.jsonl"
BUDGETS_S = {"report --format table": 1.0, "info": 0.5, "annotate, to its first screen": 1.0,
             "import into a new session": 0.5}


def cpu_of(args: Sequence[str]) -> float:
    """CPU seconds of one `python -m annotator ARGS` run to its end, output discarded."""
    process = subprocess.Popen([sys.executable, "-m", "annotator", *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"annotator {' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime


def cpu_to_first_screen(db: Path) -> float:
    """CPU seconds of `annotator annotate` until its header shows, in a 120x40 terminal."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "annotator", "annotate", str(db), "--annotator", "bench"],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
        env={**os.environ, "TERM": "xterm-256color"})
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 60
    while not re.search(rb"goldens complete \d+/\d+", seen):
        if time.monotonic() > deadline:
            raise SystemExit("the annotation screen never showed its header")
        ready, _, _ = select.select([master], [], [], 0.01)
        if ready:
            seen += os.read(master, 65536)
    process.send_signal(19)  # SIGSTOP: count the CPU up to the first screen, nothing after
    process.kill()
    _, _, usage = os.wait4(process.pid, 0)
    os.close(master)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Build the session, run each command --runs times, print medians beside budgets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "banking.db"
        records = list(read_goldens(SAMPLE))
        for record in records:  # one person's labels, so the report needs no --annotator
            record.human_labels = {"sample-reviewer": record.human_labels["sample-reviewer"]}
        with Session(db) as session:
            session.import_goldens(records, path=str(SAMPLE))
        runs: dict[str, list[float]] = {name: [] for name in BUDGETS_S}
        for run in range(args.runs):
            runs["report --format table"].append(cpu_of(["report", str(db), "--format",
                                                         "table"]))
            runs["import into a new session"].append(cpu_of(
                ["import", str(SAMPLE), "--session", str(Path(tmp) / f"new{run}.db")]))
            runs["info"].append(cpu_of(["info", str(db)]))
            runs["annotate, to its first screen"].append(cpu_to_first_screen(db))
    print(f"CPU seconds on the banking sample (16 goldens, 80 chunks), median of {args.runs} "
          f"runs, Python {sys.version.split()[0]}:")
    for name, seconds in runs.items():
        median = statistics.median(seconds)
        verdict = "within" if median <= BUDGETS_S[name] else "OVER"
        print(f"  {name:32} {median:6.2f} s   budget {BUDGETS_S[name]:.1f} s   {verdict}")


if __name__ == "__main__":
    main()
