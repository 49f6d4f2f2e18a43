"""A warm process that forks one annotation screen per browser tab, for `annotator serve`.

Starting Python and importing Textual, numpy and the session layer takes about half a second
of CPU; ten people opening the link together would wait for ten of those on a small machine.
This process does it once, then for each tab receives the tab's pipes (as file descriptors over
a Unix socket) and forks: the child has everything imported, opens the session itself (no
SQLite connection crosses a fork) and runs the screen on those pipes, as textual-serve expects.
Children share the parent's memory until they write to it.

Run by the server: python -m annotator.tui.zygote SOCKET LIFELINE_FD, with the settings as JSON
in the environment (SETTINGS_VARIABLE).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

MESSAGE_BYTES = 4096
WARM = ("annotator.store.session", "annotator.people.review", "annotator.tui.app",
        "annotator.tui.launch", "annotator.tui.screens.queue", "annotator.tui.screens.comment")
"""Imported once, before any fork: what every tab needs (and the screens opened first)."""
SETTINGS_VARIABLE = "CP_ANNOTATOR_SERVE_SETTINGS"
"""The zygote's settings, as JSON: in its environment, which only its user can read."""
READY = "ready"
"""The line the zygote prints once it listens."""


def _die_with_server(lifeline: int) -> None:
    """Exit once the server is gone, however it ended (SIGKILL included): it holds the only
    write end of ``lifeline``, so a read here ends only then. Called again in each forked tab
    (threads do not survive a fork); a tab's decisions are committed as they are made, so
    nothing is lost by ending it there."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(lifeline, 1):
                pass
        os._exit(0)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def run_tab(settings: dict[str, Any], request: dict[str, Any]) -> None:
    """In the forked child: the screen for one person, on the pipes now at fds 0, 1 and 2."""
    from annotator.models import CHECKS_MIN
    from annotator.people.assignment import LEASE_MINUTES, Quota
    from annotator.scoring.checks import load
    from annotator.store.session import Session
    from annotator.tui.launch import SCREEN_BUSY_S, run_screen

    os.environ["COLUMNS"], os.environ["ROWS"] = str(request["width"]), str(request["height"])
    with Session(settings["session"], create=False, busy_timeout=SCREEN_BUSY_S) as session:
        sample = session.random_sample() if settings["sample"] else None
        check_rate = settings.get("check_rate", 0.0)
        sys.stderr.write(run_screen(
            session, request["annotator"], settings["judge"], pass_mark=settings["pass_mark"],
            blind_rate=settings["blind_rate"], only=sample["golden_ids"] if sample else None,
            adjudicate=settings["adjudicate"], checks=load(session) if check_rate else [],
            check_rate=check_rate, checks_min=settings.get("checks_min", CHECKS_MIN),
            quota=None if settings.get("per_golden") is None else Quota(
                settings["per_golden"], settings.get("lease_minutes", LEASE_MINUTES) * 60))
            + "\n")


def _rehearse() -> None:
    """Draw the screen once, headless, on a one-golden session of its own, before any fork:
    Textual's and Rich's lazy imports and caches are then filled once for every tab."""
    import asyncio
    import tempfile

    from annotator.models import GoldenRecord, JudgeVerdict
    from annotator.people.review import Review
    from annotator.store.session import Session
    from annotator.tui.app import AnnotatorApp

    async def draw(app: AnnotatorApp) -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()

    with tempfile.TemporaryDirectory() as folder, Session(Path(folder) / "warm.db") as session:
        session.import_goldens([GoldenRecord(
            "warm-up", "Which fee applies?", ["A fee of 1%.", "Opening hours."], "1%",
            judge_verdicts={"warm": [JudgeVerdict(1, "states the fee"), JudgeVerdict(0)]})],
            path="warm-up")
        asyncio.run(draw(AnnotatorApp(Review(session, "warm", "warm"), "warm.db")))


def main(path: str, settings: dict[str, Any], lifeline: int) -> None:
    """Import everything, listen, fork a screen per request."""
    _die_with_server(lifeline)
    for module in WARM:
        importlib.import_module(module)
    _rehearse()

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print(READY, flush=True)
    while True:
        connection, _ = listener.accept()
        with connection:
            message, fds, _, _ = socket.recv_fds(connection, MESSAGE_BYTES, 3)
            pid = os.fork()
            if pid == 0:
                listener.close()
                connection.close()
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                    os.close(fd)
                _die_with_server(lifeline)
                code = 0
                try:
                    run_tab(settings, json.loads(message))
                except BaseException as error:  # the tab's own failure, told on its stderr
                    sys.stderr.write(f"The screen stopped: {error}\n")
                    code = 1
                finally:
                    sys.stdout.flush()
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            connection.sendall(str(pid).encode())


def spawn(path: Path, fds: list[int], request: dict[str, Any]) -> int:
    """Ask the zygote at ``path`` for a screen on these three fds (its stdin, stdout, stderr);
    return the child's pid."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(path))
        socket.send_fds(client, [json.dumps(request).encode()], fds)
        return int(client.recv(64).decode())


if __name__ == "__main__":
    main(sys.argv[1], json.loads(os.environ.pop(SETTINGS_VARIABLE)), int(sys.argv[2]))
