"""Files a command makes: made whole or not at all (the one home of leftover-file cleanup)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def session_files(path: str | Path) -> tuple[Path, ...]:
    """A SQLite file and the sidecars SQLite may leave beside it."""
    return tuple(Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm", "-journal"))


@contextmanager
def new_session_file(path: str | Path, keep: Callable[[], bool] = lambda: False
                     ) -> Iterator[Path]:
    """Around making a session file: if the block fails, a file it made is removed with its
    sidecars, unless ``keep()`` says it already holds work (one that existed before is never
    touched)."""
    existed = Path(path).exists()
    try:
        yield Path(path)
    except BaseException:
        if not existed and not keep():
            for leftover in session_files(path):
                leftover.unlink(missing_ok=True)
        raise


@contextmanager
def replaced_whole(output: str | Path) -> Iterator[IO[str]]:
    """A text file written beside its target and moved over it in one step: a stopped or
    failed write leaves the old file as it was and no partial file behind."""
    tmp = Path(f"{output}.partial")
    try:
        # newline="" keeps the bytes the same on every platform.
        with tmp.open("w", encoding="utf-8", newline="") as out:
            yield out
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)
