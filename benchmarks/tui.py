"""Annotation screen benchmark on a generated session of 10,000 goldens x 10 chunks.

- time to first screen: the real `annotator annotate` under a pseudo-terminal, from process
  start to the header on screen (Python start-up and imports included);
- keypress-to-on-screen over 500 decisions in that terminal (key written until the header
  shows the new count);
- keypress-to-committed over 500 decisions through Textual's Pilot (the label and its event
  committed to the session file), median and p99;
- the CPU a key costs the CLI in that terminal (benchmarks/key_clock.py runs it with clocks on
  the key handler): before the commit, the commit, the screen's update after it; and the
  process's whole CPU a key, Textual's repaint included, against a bare Textual app that commits
  one row a key and shows the same (bare/bare_key.py);
- the queue screen on every golden: time to its first rows, and until every row is loaded;
- the CLI's peak memory.
Run: python benchmarks/tui.py [--goldens N] [--decisions N]
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import re
import resource
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate import generate
from textual.widgets import DataTable

from annotator.formats import read_goldens
from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from annotator.tui.screens.queue import QueueScreen

BUDGET_FIRST_SCREEN_S = 1.5
BUDGET_MEDIAN_MS = 20.0
BUDGET_P99_MS = 50.0
BUDGET_SCREEN_WORK = 3.0
"""The key handler's CPU besides the commit, in multiples of the commit's."""
BUDGET_KEY_VS_BARE = 2.0
"""The CLI's whole CPU a key, in multiples of the bare app's (bare/bare_key.py)."""
HERE = Path(__file__).parent


class Terminal:
    """`annotator annotate` under a pseudo-terminal, its output read as a terminal would."""

    def __init__(self, db: Path, annotator: str, argv: list[str] | None = None) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 140, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color"}
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv or [sys.executable, "-m", "annotator", "annotate", str(db), "--annotator",
                     annotator],
            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = b""

    def wait_for(self, pattern: bytes, timeout: float = 60.0) -> float:
        """Read until the output matches; return when that happened (perf_counter)."""
        deadline = time.perf_counter() + timeout
        while not re.search(pattern, self.seen):
            if time.perf_counter() > deadline:
                raise SystemExit(f"the screen never showed {pattern!r}")
            ready, _, _ = select.select([self.master], [], [], 0.005)
            if ready:
                self.seen += os.read(self.master, 65536)
        return time.perf_counter()

    def quit(self) -> float:
        """Press q, drain the output until the app exits; return the child's peak MB."""
        os.write(self.master, b"q")
        while self.process.poll() is None:  # keep reading, or the app blocks on the terminal
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    os.read(self.master, 65536)
                except OSError:
                    break
        self.process.wait(timeout=30)
        os.close(self.master)
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cpu_seconds(pid: int) -> float:
    """A process's CPU seconds so far (user + system, all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class KeyCost:
    """CPU ms a key costs the CLI in a real terminal (medians over the decisions)."""

    before_commit: float
    commit: float
    after_commit: float
    process: float
    """The whole process's CPU a key (mean), Textual's repaint and terminal output included."""

    @property
    def screen_work(self) -> float:
        """The handler's work besides the commit."""
        return self.before_commit + self.after_commit


def in_a_terminal(db: Path, decisions: int) -> tuple[float, list[float], KeyCost, float]:
    """Seconds to the first screen, ms from each key to the new count on screen, what a key
    costs in CPU, peak MB."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KEY_CLOCK_OUT"] = out = str(Path(tmp) / "clocks.json")
        term = Terminal(db, "terminal", [sys.executable, str(HERE / "key_clock.py"), "annotate",
                                         str(db), "--annotator", "terminal"])
        first = term.wait_for(rb"golden 1 of") - term.started
        term.wait_for(rb"goldens complete \d+/\d+")
        to_screen, process = pressed(term, decisions)
        peak = term.quit()
        clocks = json.loads(Path(out).read_text())
    assert all(len(clocks[k]) == decisions for k in ("before_commit", "commit", "after_commit"))
    before, commit, after = (statistics.median(clocks[k]) * 1000
                             for k in ("before_commit", "commit", "after_commit"))
    cost = KeyCost(before, commit, after, process)
    return first, to_screen, cost, peak


def pressed(term: Terminal, decisions: int) -> tuple[list[float], float]:
    """Decide ``decisions`` chunks (a, a, a, f, ...) in a terminal: ms from each key to its count
    on screen, and the process's mean CPU ms a key (every thread)."""
    to_screen = []
    cpu_before = cpu_seconds(term.process.pid)
    for i in range(1, decisions + 1):
        term.seen = b""
        start = time.perf_counter()
        os.write(term.master, b"f" if i % 4 == 0 else b"a")
        to_screen.append((term.wait_for(rb"chunks %d/" % i) - start) * 1000)
    return to_screen, (cpu_seconds(term.process.pid) - cpu_before) / decisions * 1000


def bare_key_cpu(db: Path, decisions: int) -> float:
    """The bare app's (bare/bare_key.py) mean CPU ms a key over the same decisions: Textual's
    own floor for redrawing what a decision changes."""
    term = Terminal(db, "bare", [sys.executable, str(HERE / "bare" / "bare_key.py"), str(db),
                                 "bench-judge"])
    term.wait_for(rb"golden 1 of")
    _, process = pressed(term, decisions)
    term.quit()
    return process


async def to_committed(db: Path, decisions: int) -> tuple[list[float], float, float]:
    """Milliseconds from each keypress (through Pilot) to its decision committed; then the
    seconds until the queue screen shows its first rows, and until it holds every golden."""
    committed_at: list[float] = []
    with Session(db) as session:
        decide = session.decide

        def timed(*args: Any, **kwargs: Any) -> Any:
            label = decide(*args, **kwargs)  # returns once COMMIT has returned
            committed_at.append(time.perf_counter())
            return label

        session.decide = timed  # type: ignore[method-assign]
        app = AnnotatorApp(Review(session, "pilot", "bench-judge"), db.name)
        out: list[float] = []
        async with app.run_test(size=(140, 45)) as pilot:
            for i in range(decisions):
                start = time.perf_counter()
                await pilot.press("f" if i % 4 == 0 else "a")
                out.append((committed_at[-1] - start) * 1000)
            first_rows, all_rows = await queue_rows(app, every=True)
        assert len(committed_at) == decisions
    return out, first_rows, all_rows


async def queue_rows(app: AnnotatorApp, *, every: bool) -> tuple[float, float]:
    """Seconds from opening the queue screen to its first rows, and (with ``every``) to every
    golden's row (else the second figure is the first)."""
    # The action itself, not pilot.press: Pilot would wait for the whole fill.
    start = time.perf_counter()
    app.screen.run_worker(app.screen.run_action("queue"))
    while not isinstance(app.screen, QueueScreen) or not app.screen.is_mounted:
        await asyncio.sleep(0.001)
    table = app.screen.query_one(DataTable)
    while table.row_count == 0:
        await asyncio.sleep(0.001)
    first_rows = time.perf_counter() - start
    while every and table.row_count < len(app.review.golden_ids):
        await asyncio.sleep(0.005)
    return first_rows, time.perf_counter() - start if every else first_rows


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> None:
    """Build the session, measure, print the figures beside the budgets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--decisions", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "goldens.jsonl"
        generate(source, args.goldens, 10)
        db = Path(tmp) / "bench.db"
        with Session(db) as session:
            session.import_goldens(read_goldens(source), path=str(source))
        first, to_screen, key, cli_mb = in_a_terminal(db, args.decisions)
        bare_key = bare_key_cpu(db, args.decisions)
        to_commit, queue_first, queue_all = asyncio.run(to_committed(db, args.decisions))
    median, p99 = statistics.median(to_commit), percentile(to_commit, 99)

    def verdict(ok: bool) -> str:
        return "OK" if ok else "OVER"

    print(f"annotation screen benchmark: {args.goldens:,} goldens x 10 chunks, "
          f"{args.decisions} decisions")
    print(f"  first screen (CLI start to header) {first:6.2f} s   budget < "
          f"{BUDGET_FIRST_SCREEN_S} s   {verdict(first < BUDGET_FIRST_SCREEN_S)}")
    print(f"  keypress -> committed   median {median:6.1f} ms   budget < {BUDGET_MEDIAN_MS:.0f} ms  "
          f"{verdict(median < BUDGET_MEDIAN_MS)}")
    print(f"                          p99    {p99:6.1f} ms   budget < {BUDGET_P99_MS:.0f} ms  "
          f"{verdict(p99 < BUDGET_P99_MS)}")
    print(f"  keypress -> on screen   median {statistics.median(to_screen):6.1f} ms   "
          f"p99 {percentile(to_screen, 99):6.1f} ms   (real terminal, no budget)")
    print(f"  CPU a key (real terminal, median): before the commit {key.before_commit:.2f} ms, "
          f"the commit {key.commit:.2f} ms, the screen's update after it "
          f"{key.after_commit:.2f} ms")
    print(f"    the handler's work besides the commit  {key.screen_work / key.commit:5.1f}x the commit"
          f"   budget <= {BUDGET_SCREEN_WORK:.0f}x  "
          f"{verdict(key.screen_work <= BUDGET_SCREEN_WORK * key.commit)}")
    print(f"    the CLI's whole CPU a key (mean, Textual's repaint and output too) "
          f"{key.process:.2f} ms = {key.process / key.commit:.1f}x the commit")
    print(f"    against a bare Textual app showing the same after each key (bare/bare_key.py) "
          f"{bare_key:.2f} ms   ratio {key.process / bare_key:4.2f}   budget <= "
          f"{BUDGET_KEY_VS_BARE:g}  {verdict(key.process <= BUDGET_KEY_VS_BARE * bare_key)}")
    print(f"  queue screen, {args.goldens:,} goldens: first rows on screen {queue_first:.2f} s, "
          f"every row loaded {queue_all:.2f} s (it answers keys meanwhile)")
    print(f"  peak memory (the CLI)   {cli_mb:6.0f} MB")


if __name__ == "__main__":
    main()
