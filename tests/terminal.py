"""A command running under a pseudo-terminal, read as a person reads it."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

from tests.conftest import ROOT


class Terminal:
    """``python -m annotator ARGS`` with a terminal of ``size`` (columns, lines) on every stream."""

    def __init__(self, args: Sequence[str], size: tuple[int, int] = (140, 45),
                 env: dict[str, str] | None = None, cwd: Path = ROOT) -> None:
        self.master, slave = pty.openpty()
        columns, lines = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns),
               "LINES": str(lines), **(env or {})}
        self.process = subprocess.Popen([sys.executable, "-m", "annotator", *args],
                                        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                        close_fds=True)
        os.close(slave)
        self.seen = b""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *_: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        os.close(self.master)

    def read(self, seconds: float) -> None:
        """Collect what the program writes for up to ``seconds`` (less once it has exited)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the program exited and closed its end
                    return
                if not data:
                    return
                self.seen += data

    def wait_for(self, pattern: bytes, timeout: float = 30.0) -> None:
        """Read until ``pattern`` has been shown; fail the test if it never is."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.seen):
            assert time.monotonic() < deadline, f"the screen never showed {pattern!r}"
            self.read(0.05)

    def finish(self, timeout: float = 60.0) -> int:
        """Read everything until the program exits; its exit status."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            assert time.monotonic() < deadline, "the program never exited"
            self.read(0.05)
        self.read(0.2)
        return self.process.returncode

    def press(self, key: str) -> None:
        """Type ``key`` as a person would."""
        os.write(self.master, key.encode())


def in_terminal(*args: str) -> tuple[int, str]:
    """Run a command that should end on its own in a terminal: its exit status and its text."""
    with Terminal(args) as term:
        code = term.finish()
        return code, term.seen.decode("utf-8", "replace")
