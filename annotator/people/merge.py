"""Merging session files over the same goldens into one team file.

Nothing any file holds is lost and the order of the files does not matter: merging A with B
gives the same file as B with A, and merging a file in again changes nothing. Where one person
labelled a chunk differently in two files, the newest label is in force and every version is
kept and reported as a conflict; different people's labels are never a conflict.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from annotator.errors import SessionError
from annotator.place import is_url, place_of, shown
from annotator.store.session import Session, exists, new_session
from annotator.verdict import Answer


@dataclass(frozen=True, slots=True)
class LabelConflict:
    """One person's different labels on one chunk, in the files merged."""

    annotator: str
    golden_id: str
    rank: int
    versions: list[tuple[Answer | None, str | None, str]]
    """(answer, note, when) of every version, oldest first; the last is in force."""


@dataclass(slots=True)
class MergeSummary:
    """What a merge put together."""

    sources: list[str]
    goldens: int = 0
    judges: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    labels: int = 0
    conflicts: list[LabelConflict] = field(default_factory=list)
    gold_conflicts: int = 0


def merge_sessions(paths: Sequence[str | Path], output: str | Path) -> MergeSummary:
    """Merge sessions into a new one; on any error the new one is not left behind.

    The merge runs in SQLite (store/merging.py): memory stays flat however many and large
    the files are. A PostgreSQL session merged is first copied into a file of its own, and a
    merge into a database is made in a file, then copied in whole (annotator copy's way).
    """
    if exists(output):
        raise SessionError(f"{shown(output)} already exists; merge into a new "
                           f"{'database' if is_url(output) else 'file'} (it may be one of "
                           "the sessions you merge, under a new name).")
    for path in paths:
        with Session(place_of(path), create=False):  # each must be a session of ours, up to date
            pass
    names = [shown(p) for p in paths]
    with tempfile.TemporaryDirectory(prefix="cp-annotator-merge-") as folder:
        sources = []
        for n, path in enumerate(paths):
            if is_url(path):
                with Session(str(path), create=False) as session:
                    session.copy_to(Path(folder) / f"source-{n}.db")
                sources.append(Path(folder) / f"source-{n}.db")
            else:
                sources.append(Path(path))
        out = Path(folder) / "merged.db" if is_url(output) else Path(output)
        with new_session(out), Session(out) as session:
            facts = session.merge_from(sources, names)
            if is_url(output):
                session.copy_to(str(output))
    return MergeSummary(
        names, facts.goldens, facts.judges, facts.annotators, facts.labels,
        [LabelConflict(annotator, golden_id, rank, versions)
         for (annotator, golden_id, rank), versions in facts.conflicts.items()],
        facts.gold_conflicts)
