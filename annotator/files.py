"""Files a command makes: made whole or not at all (the one home of leftover-file cleanup)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from annotator.errors import AnnotatorError


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
def made_whole(target: str | Path, *, overwrite: bool = True) -> Iterator[Path]:
    """A path beside ``target`` for the block to fill, moved onto ``target`` in one step once
    the block ends well: a stopped or failed block leaves no partial file, and the target as it
    was. A block that removes the file makes none. A target that is no regular file (a device,
    a named pipe) is given to the block itself, to write in place. ``overwrite=False`` never replaces a file
    (one that appears meanwhile included): the move fails with FileExistsError."""
    target = Path(target)
    if overwrite and _not_regular(target):
        # A device, a named pipe or a socket (--output /dev/null, a pipe a reader waits on) is
        # written in place: a rename would replace the device itself with a regular file.
        yield target
        return
    # A new file of our own (O_EXCL, a random name in the same folder): a file or a symlink
    # planted at a predictable name is never followed, and the final move stays on one disk.
    import tempfile  # only where a file is written: start-up skips it

    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                    suffix=".partial")
    except OSError as error:
        raise _cannot_write(target, error) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if not tmp.exists():
            return
        tmp.chmod(0o666 & ~_umask())  # mkstemp makes it private; give it a new file's mode
        if overwrite:
            tmp.replace(target)
        else:
            os.link(tmp, target)  # fails if the target exists: never overwritten
    except FileExistsError:
        raise
    except OSError as error:
        raise _cannot_write(target, error) from None
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def folder_made_whole(target: str | Path) -> Iterator[Path]:
    """A new folder beside ``target`` for the block to fill, renamed to ``target`` once the
    block ends well: a stopped or failed block leaves no folder. A block that leaves it empty
    makes none. A ``target`` that exists is refused before anything is written."""
    target = Path(target)
    if target.exists():
        raise AnnotatorError(f"{target} already exists; give a new folder, or remove it first.")
    import shutil  # only where a folder is written: start-up skips them
    import tempfile

    try:
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.",
                                    suffix=".partial"))
    except OSError as error:
        raise _cannot_write(target, error) from None
    try:
        yield tmp
        if any(tmp.iterdir()):
            tmp.chmod(0o777 & ~_umask())  # mkdtemp makes it private; give it a new folder's mode
            tmp.rename(target)  # fails if the target appeared meanwhile: never overwritten
    except OSError as error:
        raise _cannot_write(target, error) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def replaced_whole(output: str | Path) -> Iterator[IO[str]]:
    """A text file made whole or not at all (made_whole), open for writing."""
    with made_whole(output) as path, open(path, "w", encoding="utf-8", newline="") as out:
        # newline="" keeps the bytes the same on every platform.
        yield out


def _cannot_write(target: Path, error: OSError) -> AnnotatorError:
    """A sentence for a file that could not be written: which, why, what to check."""
    why = error.strerror or str(error)
    hint = ("its folder does not exist" if isinstance(error, FileNotFoundError) else
            "the disk is full" if error.errno == errno.ENOSPC else
            "it is not writable here" if isinstance(error, PermissionError) else why)
    return AnnotatorError(f"Cannot write {target}: {hint} ({why}); nothing was written. Choose "
                          "another --output, or fix that and run the command again.")


def _not_regular(path: Path) -> bool:
    """Whether ``path`` names something other than a regular file (following a symlink)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
