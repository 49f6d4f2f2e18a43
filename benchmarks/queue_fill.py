"""The queue screen's fill on a session, headless through Pilot: prints the CPU seconds from
opening the screen to every golden's row in its table and the table idle (the process's CPU,
the reading thread's included). benchmarks/scale.py runs it beside bare/bare_queue.py.
Run: python benchmarks/queue_fill.py SESSION.db JUDGE ANNOTATOR
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from textual.widgets import DataTable

from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from annotator.tui.screens.queue import QueueScreen


async def main(db: Path, judge: str, annotator: str) -> float:
    """CPU seconds of the fill."""
    with Session(db, create=False) as opened:
        app = AnnotatorApp(Review(opened, annotator, judge, count=False), db.name)
        async with app.run_test(size=(140, 45)) as pilot:
            start = time.process_time()
            await app.screen.run_action("queue")
            while not isinstance(app.screen, QueueScreen) or not app.screen.is_mounted:
                await pilot.pause()
            screen = app.screen
            table = screen.query_one(DataTable)
            while not screen.ready or table.row_count < len(app.review.golden_ids):
                await pilot.pause()
            await pilot.pause()
            return time.process_time() - start


if __name__ == "__main__":
    print(f"{asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])):.3f}")
