"""A goldens file opened with 'annotate FILE' after it was imported: has it changed since?

The session remembers the file's size, modification time and sha256. An unchanged size and time
cost nothing to check; otherwise the bytes are hashed, and only a different hash makes the file
be read and compared golden by golden, so a person never labels old data while the file they
edited says otherwise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.errors import AnnotatorError
from annotator.formats import read_goldens
from annotator.store.session import Session
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class SourceChanges:
    """How a goldens file differs from the session made from it."""

    added: list[str]
    """Golden ids in the file and not in the session."""
    changed: list[str]
    """Golden ids whose question, answers, chunks or metadata differ."""
    missing: list[str]
    """Golden ids in the session and not in the file (dropped from it, or imported from
    another file): said, but no reason to stop."""

    def __bool__(self) -> bool:
        """Whether the file holds goldens the session lacks or holds differently."""
        return bool(self.added or self.changed)

    def sentence(self, source: Path, db: Path) -> str:
        """What changed, and the commands that bring it in or open the session as it is."""
        parts = []
        for ids, what in ((self.added, "added"), (self.changed, "changed"),
                          (self.missing, "no longer in the file")):
            if ids:
                shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
                parts.append(f"{counted(len(ids), 'golden')} {what} ({shown})")
        bring = (f"annotator import {source} --session {db}"
                 + (" --replace" if self.changed else ""))
        return (f"{source} has changed since it was imported into {db}: {'; '.join(parts)}. "
                f"Bring the changes in with '{bring}'"
                + (" (labels on changed goldens are kept where their chunks are)"
                   if self.changed else "")
                + f", or open the session as it is with 'annotator annotate {db}'.")


def fingerprint(path: Path, *, sha256: str | None = None) -> dict[str, Any]:
    """A file's size, modification time and sha256 (given, or read now)."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "sha256": sha256 if sha256 is not None else _sha256(path)}


def remember(session: Session, path: Path) -> None:
    """Store the file as it is now, as the session's source."""
    session.set_source_fingerprint(str(path.resolve()), fingerprint(path))


def check(session: Session, path: Path, db: Path, *, delimiter: str = ",") -> list[str]:
    """Raise AnnotatorError naming what changed when the file holds goldens the session lacks
    or holds differently; else the ids of session goldens the file no longer holds."""
    key = str(path.resolve())
    stored = session.source_fingerprint(key)
    stat = path.stat()
    if stored is not None and (stored["size"], stored["mtime_ns"]) == (stat.st_size,
                                                                      stat.st_mtime_ns):
        return []
    digest = _sha256(path)
    missing: list[str] = []
    if stored is None or stored["sha256"] != digest:
        changes = compare(session, path, delimiter=delimiter)
        if changes:
            raise AnnotatorError(changes.sentence(path, db))
        missing = changes.missing
    # The same goldens (saved again, or other changes only to verdicts or labels, which the
    # session holds newer): remember the file as it is, so the next open costs nothing.
    session.set_source_fingerprint(key, fingerprint(path, sha256=digest))
    return missing


def compare(session: Session, path: Path, *, delimiter: str = ",") -> SourceChanges:
    """The goldens a file adds, changes or no longer holds, against the session."""
    stored = session.content_hashes()
    added, changed, seen = [], [], set()
    for record in read_goldens(path, delimiter=delimiter):
        seen.add(record.id)
        mine = stored.get(record.id)
        if mine is None:
            added.append(record.id)
        elif mine != record.content_sha256():
            changed.append(record.id)
    missing = [g for g in session.golden_ids() if g not in seen]
    return SourceChanges(added, changed, missing)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
