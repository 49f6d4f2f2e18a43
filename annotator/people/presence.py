"""One screen a name on a session: a screen holds a lock for its person's name, across every
process on this machine (``annotate`` in two terminals, a served tab beside a terminal), and
on a PostgreSQL session across every host (an advisory lock of the database).

Two screens under one name would each count the other's decisions as theirs, and an undo on
one would restore its own state over the other's decision. The lock is an ``flock`` on a file
in the system's temporary folder, keyed by the session file's identity (device and inode, so
two spellings of one path agree), never a file beside the session: the kernel releases it when
the process ends however it ends, so a killed screen never locks its person out.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from annotator.errors import AnnotatorError
from annotator.place import is_url, shown

FOLDER = "cp-annotator-screens"


class ScreenInUse(AnnotatorError):
    """A screen is already open under this name on this session."""


def in_use_sentence(name: str, where: str) -> str:
    """The sentence for a second screen under a name (``serve`` says the same)."""
    return (f"{name} already has the annotation screen open {where}. Close that one first, or "
            "use your own name: two screens under one name would each count the other's "
            "decisions as theirs.")


def _lock_path(session: Path, name: str, role: str) -> Path:
    st = session.stat()
    key = hashlib.sha256(f"{st.st_dev}:{st.st_ino}:{role}:{name}".encode()).hexdigest()[:32]
    folder = Path(tempfile.gettempdir()) / FOLDER
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):  # every user of the machine shares the folder
            folder.chmod(0o1777)
    return folder / f"{key}.lock"


@contextlib.contextmanager
def one_screen(session: Path | str, name: str, role: str = "annotate") -> Iterator[None]:
    """Hold the name's screen on ``session`` while the block runs; raise ScreenInUse if another
    process holds it (its process id is said). On a PostgreSQL session the lock is the
    database's own, so it holds across hosts."""
    if is_url(session):
        from annotator.store.postgres import held

        with held(str(session), f"screen:{role}:{name}") as holder:
            if holder is not None:
                raise ScreenInUse(in_use_sentence(
                    name, f"on {shown(session)} in another terminal or browser tab"
                    + (f" ({holder})" if holder else "")))
            yield
        return
    path = _lock_path(Path(session), name, role)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            where = (f"on {session} in another terminal or browser tab (process {holder})"
                     if holder.isdigit() else f"on {session} in another terminal or tab")
            raise ScreenInUse(in_use_sentence(name, where)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_open(session: Path | str, name: str, role: str = "annotate") -> bool:
    """Whether a screen is open under ``name`` on ``session`` in any process of this machine."""
    try:
        with one_screen(session, name, role):
            return False
    except ScreenInUse:
        return True
