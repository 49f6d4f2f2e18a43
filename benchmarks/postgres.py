"""PostgreSQL benchmark: a keypress committed on PostgreSQL against the SQLite commit, and the
report and the leaderboard on a PostgreSQL session against a bare psycopg + numpy program.

A real PostgreSQL server (Debian's, started here as the tests start theirs: tests/pg_server.py,
with fsync on, as a team's server runs), reached over its Unix socket.

- keypress: on a session of --goldens x 10 chunks, one person decides every chunk of 200
  goldens (Session.decide, as the screen commits a key), on a file and on the database, plain
  and under --per-golden 2; runs alternate; medians of the per-commit wall time. Budget: the
  PostgreSQL commit within 3 times the SQLite one. Beside it, a key through the screen's own
  path (Review.accept: the commit and the screen's state moving on), on each store.
- report and leaderboard: `annotator report URL --format json` (2,000 resamples) and `annotator
  judges URL --format json` against benchmarks/bare/bare_report.py on the same URL (with its
  error slices for the report, without for the leaderboard), each a fresh process; wall time
  (the server's work is part of both), and the client's CPU beside it; medians of --runs,
  alternating. Budget: 2 times the bare program.

Run: python benchmarks/postgres.py [--goldens 10000] [--report-goldens 100000] [--runs 3]
     [--cache DIR]
(--report-goldens 100000 is the 1M-chunk session; making it and copying it into the database
take a few minutes, which --cache keeps for the next run.)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # tests.pg_server: the server the tests start

from generate import generated_session  # noqa: E402
from quota import DECIDED_GOLDENS, commits  # noqa: E402

from annotator.store.session import Session  # noqa: E402
from tests import pg_server  # noqa: E402

BUDGET_KEY = 3.0
BUDGET_REPORT = 2.0
JUDGE, ANNOTATOR = "bench-judge", "bench-reviewer"


def decided(place: str | Path, quota: bool) -> float:
    """The median commit of one person's decisions (quota.py's), then the session as it was
    (nobody's labels, claims or events), for the next run."""
    median = statistics.median(commits(place, quota))
    with Session(place) as session, session.transaction():
        for table in ("labels", "events", "claims"):
            session.conn.execute(f"DELETE FROM {table} WHERE annotator = 'alice'")
    return median


def keys(place: str | Path) -> float:
    """The median seconds a key takes through the screen's own path (Review.accept: the
    decision committed, the screen's state moved on), over 2,000 keys; then nobody's labels."""
    from annotator.people.review import Review

    out = []
    with Session(place) as session:
        review = Review(session, "bob", JUDGE)
        for _ in range(DECIDED_GOLDENS * 10):
            start = time.perf_counter()
            review.accept()
            out.append(time.perf_counter() - start)
        with session.transaction():
            for table in ("labels", "events", "claims"):
                session.conn.execute(f"DELETE FROM {table} WHERE annotator = 'bob'")
    return statistics.median(out)


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def line(what: str, ours: float, bare: float, against: str, budget: float) -> str:
    """One figure beside what it is measured against, their ratio and the budget."""
    ratio = ours / bare
    return (f"  {what:38s} {ours * 1000 if ours < 1 else ours:9.3f} "
            f"{'ms' if ours < 1 else 's '} vs {against} "
            f"{bare * 1000 if bare < 1 else bare:9.3f} {'ms' if bare < 1 else 's '}   ratio "
            f"{ratio:4.2f}   budget <= {budget:g}   {'OK' if ratio <= budget else 'OVER'}")


def keypress(server: pg_server.Server, folder: Path, goldens: int, runs: int) -> None:
    """The keypress's commit on each store, plain and under a quota."""
    db = folder / f"k{goldens}.db"
    if not db.exists():
        generated_session(folder, goldens, 10, name=f"k{goldens}")
    url = server.create_database("keypress")
    with Session(db, create=False) as session:
        session.copy_to(url)
    medians: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, place, quota in (("sqlite", db, False), ("postgresql", url, False),
                                   ("sqlite quota", db, True), ("postgresql quota", url, True)):
            medians.setdefault(name, []).append(decided(place, quota))
        for name, place in (("sqlite key", db), ("postgresql key", url)):
            medians.setdefault(name, []).append(keys(place))
    m = {name: statistics.median(values) for name, values in medians.items()}
    print(f"keypress: {goldens:,} goldens x 10 chunks, {DECIDED_GOLDENS * 10:,} commits a run, "
          f"median of {runs} runs")
    print(line("a keypress committed, PostgreSQL", m["postgresql"], m["sqlite"], "SQLite",
               BUDGET_KEY))
    print(line("under --per-golden 2, PostgreSQL", m["postgresql quota"], m["sqlite quota"],
               "SQLite", BUDGET_KEY))
    print(line("a key through the screen (accept)", m["postgresql key"], m["sqlite key"],
               "SQLite", BUDGET_KEY))


def report(server: pg_server.Server, folder: Path, goldens: int, runs: int) -> None:
    """The report and the leaderboard on a database, against the bare program on it."""
    db = folder / f"r{goldens}.db"
    if not db.exists():
        generated_session(folder, goldens, 10, name=f"r{goldens}", annotator=ANNOTATOR)
    url = server.create_database("report")
    started = time.perf_counter()
    with Session(db, create=False) as session:
        session.copy_to(url)
    print(f"report: {goldens:,} goldens x 10 chunks ({goldens * 10:,} chunks), copied into the "
          f"database in {time.perf_counter() - started:.1f} s; median of {runs} runs, "
          "alternating")
    out = folder / "out.json"
    bare = [sys.executable, str(HERE / "bare" / "bare_report.py"), url, JUDGE, ANNOTATOR, "2000"]
    paths = {
        "report --format json": ([sys.executable, "-m", "annotator", "report", url, "--format",
                                  "json", "--bootstrap", "2000", "--output", str(out)],
                                 [*bare, "--slices"]),
        "judges --format json": ([sys.executable, "-m", "annotator", "judges", url, "--format",
                                  "json", "--bootstrap", "2000", "--output", str(out)], bare)}
    for what, (ours, theirs) in paths.items():
        mine, floor = [], []
        for _ in range(runs):
            mine.append(timed(ours))
            floor.append(timed(theirs))
        wall, bare_wall = (statistics.median(w for w, _ in x) for x in (mine, floor))
        cpu, bare_cpu = (statistics.median(c for _, c in x) for x in (mine, floor))
        print(line(f"{what}, wall", wall, bare_wall, "bare", BUDGET_REPORT))
        print(line(f"{what}, client CPU", cpu, bare_cpu, "bare", BUDGET_REPORT))


def main() -> None:
    """Start a server, then measure each part."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--report-goldens", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--parts", default="keypress,report")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    os.environ.setdefault("PYTHONPATH", str(HERE.parent))
    with tempfile.TemporaryDirectory() as tmp, pg_server.running(fsync=True) as server:
        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if "keypress" in parts:
            keypress(server, folder, args.goldens, args.runs)
        if "report" in parts:
            report(server, folder, args.report_goldens, args.runs)


if __name__ == "__main__":
    main()
