"""Scale benchmark: the project's paths against the simplest programs doing the same work.

On generated sessions of 10,000 and 100,000 goldens x 10 chunks (100K and 1M chunks), each
path is run alternately with its bare program (benchmarks/bare/), and both figures are printed
with their ratio and the budget beside it:

- first screen: `annotator annotate` under a pseudo-terminal, process start to the first golden
  on screen, against a minimal Textual app showing the same header and golden (wall seconds);
- the queue screen: from pressing g to its first rows (through Textual's Pilot), against that
  first screen;
- q pressed at that first paint, to the process's end, against the bare app's (wall seconds);
- the queue screen's whole fill, every golden's row in its table (benchmarks/queue_fill.py),
  against every row put in a plain DataTable at once (bare/bare_queue.py), CPU seconds;
- `annotator report --format json` and `annotator judges --format json`, 2,000 resamples,
  against one SQL read + numpy per-golden sums + the same 2,000 resamples (CPU seconds, and
  peak memory of the process); the report's bare program also does the work of its error
  slices (each compared chunk's length and overlap with its question, sliced and summed), which
  the leaderboard does not make.

Last, each path's growth exponent from the smallest size to the largest (time ~ size^k),
beside its bare program's: within 0.1 of it, or the path grows faster than its work.

Run: python benchmarks/scale.py [--sizes 10000,100000] [--runs 3] [--cache DIR]
     [--paths screen,queue,report,judges]
(--cache keeps the generated sessions between runs; they take a minute or two to make.)
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generated_session
from measure import measured
from tui import Terminal, queue_rows

HERE = Path(__file__).parent
BUDGET_SCREEN = 2.0
BUDGET_CPU = 2.0
BUDGET_MEMORY = 1.5
BUDGET_EXPONENT = 0.1
JUDGE, ANNOTATOR = "bench-judge", "bench-reviewer"


def first_screen(argv: list[str] | None, db: Path) -> tuple[float, float]:
    """Seconds from process start to the first golden's header on screen, and from q pressed
    right then to the process's end (what a person who opened the wrong file waits)."""
    term = Terminal(db, "bench-screen", argv)
    seconds = term.wait_for(rb"golden 1 of", timeout=300) - term.started
    pressed = time.perf_counter()
    term.quit()
    return seconds, time.perf_counter() - pressed


def queue_first_rows(db: Path) -> float:
    """Seconds from opening the queue screen to its first rows, through Textual's Pilot."""
    import asyncio

    from annotator.people.review import Review
    from annotator.store.session import Session
    from annotator.tui.app import AnnotatorApp

    async def run() -> float:
        with Session(db, create=False) as opened:
            app = AnnotatorApp(Review(opened, "bench-queue", JUDGE, count=False), db.name)
            async with app.run_test(size=(140, 45)):
                return (await queue_rows(app, every=False))[0]

    return asyncio.run(run())


def fill_cpu(script: Path, db: Path) -> float:
    """The CPU seconds a queue fill program prints (ours or the bare one), on a fresh process."""
    done = subprocess.run([sys.executable, str(script), str(db), JUDGE, "bench-queue"],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def session(folder: Path, goldens: int) -> Path:
    """The generated session of this size (made once per cache folder)."""
    db = folder / f"s{goldens}.db"
    if not db.exists():
        generated_session(folder, goldens, 10, name=f"s{goldens}", annotator=ANNOTATOR)
    return db


def line(what: str, ours: float, bare: float, unit: str, budget: float,
         against: str = "bare") -> str:
    """One figure, what it is measured against, their ratio and the budget."""
    ratio = ours / bare
    verdict = "OK" if ratio <= budget else "OVER"
    return (f"  {what:34s} {ours:8.2f} {unit} vs {against} {bare:8.2f} {unit}   ratio "
            f"{ratio:4.2f}   budget <= {budget:g}   {verdict}")


def main() -> None:
    """Measure every size, alternating each path with its bare program."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--paths", default="screen,queue,report,judges",
                        help="Which paths to measure (screen: the first screen, q after it and "
                        "the queue's first rows; queue: the queue screen's whole fill).")
    args = parser.parse_args()
    paths = set(args.paths.split(","))
    grown: dict[str, list[tuple[int, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for goldens in (int(n) for n in args.sizes.split(",")):
            db = session(folder, goldens)
            out = Path(tmp) / "out.json"
            bare_judges = [sys.executable, str(HERE / "bare" / "bare_report.py"), str(db), JUDGE,
                           ANNOTATOR, "2000"]
            bare = {"report": [*bare_judges, "--slices"], "judges": bare_judges}
            bare_screen = [sys.executable, str(HERE / "bare" / "bare_first_screen.py"), str(db), JUDGE]
            ours = {"report": [sys.executable, "-m", "annotator", "report", str(db), "--format",
                               "json", "--bootstrap", "2000", "--output", str(out)],
                    "judges": [sys.executable, "-m", "annotator", "judges", str(db),
                               "--format", "json", "--bootstrap", "2000", "--output", str(out)]}
            ours = {k: v for k, v in ours.items() if k in paths}
            fills: dict[str, list[float]] = {"ours": [], "bare": []}
            figures: dict[str, list[tuple[float, float]]] = {
                k: [] for k in (*ours, *(f"bare {name}" for name in bare))}
            screens: dict[str, list[float]] = {k: [] for k in ("ours", "bare", "queue",
                                                               "quit", "bare quit")}
            for _ in range(args.runs):
                if "screen" in paths:
                    for key, argv in (("ours", None), ("bare", bare_screen)):
                        shown, quit_after = first_screen(argv, db)
                        screens[key].append(shown)
                        screens["quit" if key == "ours" else "bare quit"].append(quit_after)
                for name, argv in ours.items():
                    figures[name].append(measured(argv))
                    figures[f"bare {name}"].append(measured(bare[name]))
                if "screen" in paths:
                    screens["queue"].append(queue_first_rows(db))
                if "queue" in paths:
                    for key, script in (("ours", HERE / "queue_fill.py"),
                                        ("bare", HERE / "bare" / "bare_queue.py")):
                        fills[key].append(fill_cpu(script, db))
            print(f"{goldens:,} goldens x 10 chunks ({goldens * 10:,} chunks), "
                  f"median of {args.runs} runs each, alternating")
            if "screen" in paths:
                print(line("first screen (wall)", statistics.median(screens["ours"]),
                           statistics.median(screens["bare"]), "s ", BUDGET_SCREEN))
                print(line("q at first paint, to exit (wall)", statistics.median(screens["quit"]),
                           statistics.median(screens["bare quit"]), "s ", BUDGET_SCREEN))
                print(line("queue's first rows", statistics.median(screens["queue"]),
                           statistics.median(screens["ours"]), "s ", BUDGET_SCREEN,
                           against="first screen"))
            if "queue" in paths:
                fill, bare_fill = statistics.median(fills["ours"]), statistics.median(fills["bare"])
                print(line("the queue's whole fill, CPU", fill, bare_fill, "s ", BUDGET_CPU))
                grown.setdefault("the queue's whole fill, CPU", []).append(
                    (goldens, fill, bare_fill))
            for name in ours:
                bare_cpu = statistics.median(cpu for cpu, _ in figures[f"bare {name}"])
                bare_mb = statistics.median(mb for _, mb in figures[f"bare {name}"])
                cpu = statistics.median(c for c, _ in figures[name])
                mb = statistics.median(m for _, m in figures[name])
                print(line(f"{name} --format json, CPU", cpu, bare_cpu, "s ", BUDGET_CPU))
                print(line(f"{name} --format json, peak memory", mb, bare_mb, "MB", BUDGET_MEMORY))
                grown.setdefault(f"{name} --format json, CPU", []).append((goldens, cpu, bare_cpu))
            if "screen" in paths:
                for what, key, bare_key in (("first screen (wall)", "ours", "bare"),
                                            ("q at first paint, to exit (wall)", "quit",
                                             "bare quit")):
                    grown.setdefault(what, []).append((goldens, statistics.median(screens[key]),
                                                       statistics.median(screens[bare_key])))
        _growth(grown)


def _growth(grown: dict[str, list[tuple[int, float, float]]]) -> None:
    """Each path's growth exponent between the smallest and largest size (time ~ size^k),
    beside its bare program's: a path may not grow faster than its work."""
    pairs = {what: (rows[0], rows[-1]) for what, rows in grown.items() if len(rows) > 1}
    if not pairs:
        return
    print("growth exponents, smallest to largest size (ours vs bare; budget: within "
          f"{BUDGET_EXPONENT:g} of bare)")
    for what, ((n1, ours1, bare1), (n2, ours2, bare2)) in pairs.items():
        scale = math.log(n2 / n1)
        ours, bare = math.log(ours2 / ours1) / scale, math.log(bare2 / bare1) / scale
        verdict = "OK" if ours - bare <= BUDGET_EXPONENT else "OVER"
        print(f"  {what:34s} {ours:5.2f} vs bare {bare:5.2f}   budget <= bare + "
              f"{BUDGET_EXPONENT:g}   {verdict}")


if __name__ == "__main__":
    main()
