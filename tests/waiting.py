"""Waiting for a state another thread or process reaches: a row on disk, a request seen, a line
shown. A test waits for the state itself, however long a busy machine takes, and fails only
after PATIENCE; no test waits for a fixed time."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

PATIENCE = 180.0
"""Seconds a test waits for a state before it fails: generous, so that a machine at load 18
only makes a test slower, never wrong; a healthy run reaches the state in well under one."""


def wait_until(reached: Callable[[], T], what: str, timeout: float = PATIENCE) -> T:
    """Poll ``reached`` until it gives something true, and return that; fail the test naming
    ``what`` if it never does."""
    deadline = time.monotonic() + timeout
    while not (value := reached()):
        assert time.monotonic() < deadline, f"waited {timeout:.0f} s for {what}, in vain"
        time.sleep(0.02)  # the poll interval: the wait ends on the state, never on time
    return value


def rows(db: Path, sql: str) -> int:
    """A count read from a session file another process is writing (0 before its tables are)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0
