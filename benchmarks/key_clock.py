"""`annotator annotate` with CPU clocks on each key: run in place of the CLI by benchmarks/tui.py.

For every key the app handles, the main thread's CPU is split three ways: from the key event
reaching the app to Session.decide (dispatch, binding, the review's bookkeeping), the commit
itself (Session.decide, through COMMIT), and from the commit to the handler's return (the
screen's update: texts built, cards and classes set). Textual's repaint after the handler
(layout, rendering the changed widgets, writing the terminal) is not inside the handler; the
benchmark reads it from the process's whole CPU. Written as JSON to $KEY_CLOCK_OUT at exit.

Run: python benchmarks/key_clock.py annotate SESSION --annotator NAME
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from textual.app import App
from textual.events import Key

from annotator.cli import main
from annotator.store.session import Session

clocks: dict[str, list[float]] = {"before_commit": [], "commit": [], "after_commit": []}
key_at: list[float | None] = [None]
committed_at: list[float | None] = [None]

handle_key = App._on_key
decide = Session.decide


async def timed_key(self: App[Any], event: Key) -> None:
    """The app's key handler, clocked."""
    key_at[0], committed_at[0] = time.thread_time(), None
    await handle_key(self, event)
    if committed_at[0] is not None:  # a key that decided something
        clocks["after_commit"].append(time.thread_time() - committed_at[0])
    key_at[0] = None


def timed_decide(self: Session, *args: Any, **kwargs: Any) -> Any:
    """Session.decide, clocked; the time since the key, if a key is being handled."""
    start = time.thread_time()
    if key_at[0] is not None:
        clocks["before_commit"].append(start - key_at[0])
    try:
        return decide(self, *args, **kwargs)
    finally:
        end = committed_at[0] = time.thread_time()
        clocks["commit"].append(end - start)


App._on_key = timed_key  # type: ignore[method-assign]
Session.decide = timed_decide  # type: ignore[method-assign]
atexit.register(lambda: Path(os.environ["KEY_CLOCK_OUT"]).write_text(json.dumps(clocks)))

if __name__ == "__main__":
    sys.argv[0] = "annotator"
    main()
