"""Serve benchmark: 10 browser tabs opening the annotation screen at once from `annotator serve`.

Opens the tabs together in headless chromium (Debian's), each under its own name, and prints
the time from opening the page to the screen's first frame (median and slowest), then the
memory of the server and its tab processes (resident and proportional set size, so libraries
the processes share are counted once), beside the budgets.
Run: python benchmarks/serve.py [--tabs N] [--goldens N] [--python PATH]
(--python: the interpreter that serves, e.g. a base install's, so the tabs are what a team runs;
this script itself needs Playwright, from the test extras.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from generate import generated_session
from playwright.sync_api import sync_playwright

BUDGET_FIRST_S = 5.0
BUDGET_TAB_MB = 60.0
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def tree(pid: int) -> list[int]:
    """A process and all its descendants."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        # Every thread's children: the server starts its zygote from a worker thread.
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return out


def memory_mb(pid: int, field: str) -> float:
    """One process's Rss or Pss in MB (0 once it has gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_s(pid: int) -> float:
    """CPU seconds a process has used (0 once it has gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    """Serve a generated session, open the tabs together, measure."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tabs", type=int, default=10)
    parser.add_argument("--goldens", type=int, default=1000)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = generated_session(Path(tmp), args.goldens, 10)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([args.python, "-m", "annotator", "serve", str(db), "--port",
                                   str(port)], stderr=subprocess.DEVNULL, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=1).read()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        alone = {field: sum(memory_mb(pid, field) for pid in tree(server.pid))
                 for field in ("Rss", "Pss")}
        firsts: list[float] = []
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                pages = [browser.new_context().new_page() for _ in range(args.tabs)]
                started = time.perf_counter()
                for i, page in enumerate(pages):
                    page.goto(f"{url}/?annotator=tab{i}", wait_until="commit")
                lock = threading.Lock()
                for page in pages:
                    page.wait_for_selector("body.-first-byte", timeout=120_000)
                    with lock:
                        firsts.append(time.perf_counter() - started)
                pids = tree(server.pid)
                tabs_cpu = sum(cpu_s(pid) for pid in pids[2:])
                browser_cpu = sum(cpu_s(pid) for pid in tree(os.getpid())
                                  if pid != os.getpid() and pid not in pids)
                time.sleep(2)  # every screen drawn and idle
                total = {field: sum(memory_mb(pid, field) for pid in pids)
                         for field in ("Rss", "Pss")}
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    tabs = len(pids) - 2  # the server and its zygote
    per_tab = {field: (total[field] - alone[field]) / max(1, args.tabs) for field in total}
    slowest = max(firsts)
    print(f"serve benchmark: {args.tabs} tabs opened together on {args.goldens:,} goldens x 10 "
          f"chunks ({tabs} tab processes, forked from one warm process)")
    print(f"  first frame on screen: median {statistics.median(firsts):.2f} s, slowest "
          f"{slowest:.2f} s   budget < {BUDGET_FIRST_S:g} s   "
          f"{'OK' if slowest < BUDGET_FIRST_S else 'OVER'}")
    print(f"  CPU until the last first frame: the tabs {tabs_cpu:.1f} s in all, the browser "
          f"{browser_cpu:.1f} s (the machine has {os.cpu_count()} cores)")
    print(f"  server and its warm process {alone['Rss']:.0f} MB resident; with the tabs "
          f"{total['Rss']:.0f} MB "
          f"resident, {total['Pss']:.0f} MB proportional")
    print(f"  per tab: {per_tab['Rss']:.0f} MB resident, {per_tab['Pss']:.0f} MB proportional "
          f"(shared libraries counted once)   budget < {BUDGET_TAB_MB:g} MB   "
          f"{'OK' if per_tab['Pss'] < BUDGET_TAB_MB else 'OVER'} (proportional)")


if __name__ == "__main__":
    main()
