"""Merging session files over the same goldens into one team file.

Nothing any file holds is lost and the order of the files does not matter: merging A with B
gives the same file as B with A, and merging a file in again changes nothing. Where one person
labelled a chunk differently in two files, the newest label is in force and every version is
kept and reported as a conflict; different people's labels are never a conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from annotator.errors import SessionError
from annotator.store.session import Session, new_session
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
    """Merge session files into a new one; on any error the new file is not left behind.

    The merge runs in SQLite (store/merging.py): memory stays flat however many and large
    the files are.
    """
    out = Path(output)
    if out.exists():
        raise SessionError(f"{out} already exists; merge into a new file (it may be one of "
                           "the files you merge, under a new name).")
    sources = [Path(p) for p in paths]
    for path in sources:
        with Session(path, create=False):  # each must be a session of ours, up to date
            pass
    names = [str(p) for p in paths]
    with new_session(out), Session(out) as session:
        facts = session.merge_from(sources, names)
    return MergeSummary(
        names, facts.goldens, facts.judges, facts.annotators, facts.labels,
        [LabelConflict(annotator, golden_id, rank, versions)
         for (annotator, golden_id, rank), versions in facts.conflicts.items()],
        facts.gold_conflicts)
