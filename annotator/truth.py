"""What the judges are scored against: one person's labels, or the team's gold.

With several annotators (or any adjudicated chunk), the truth on a chunk is its gold label
where an adjudicator decided one, else the label everyone who labelled it agrees on. Chunks
where people disagree and nobody has adjudicated are left out, and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from annotator.columns import MISSING, ChunkFrame
from annotator.errors import SessionError
from annotator.models import Label
from annotator.resolve import NOBODY, annotator_named
from annotator.store.session import Session

TEAM = "team"
"""The source of the team truth: gold where adjudicated, else the label everyone agrees on."""


@dataclass(frozen=True, eq=False)
class Truth:
    """The verdict a judge should have given on each chunk of a frame (MISSING where there is
    none), and where it came from."""

    frame: ChunkFrame
    verdict: np.ndarray
    source: str
    """Whose labels these are: a person's name, or TEAM."""
    adjudicated: int = 0
    pending: int = 0
    """Chunks where people disagree and nobody has adjudicated yet (left out)."""

    @property
    def label(self) -> str:
        """Whose labels, for a sentence: "alice's labels" or "the team's gold labels"."""
        return "the team's gold labels" if self.source == TEAM else f"{self.source}'s labels"

    def at(self, chunk_ids: Sequence[int]) -> list[int | None]:
        """The truth on each of these chunks (None where there is none)."""
        slots = self.frame.slots(np.asarray(chunk_ids, dtype=np.int64))
        said = np.where(slots == MISSING, MISSING, self.verdict[np.maximum(slots, 0)]
                        if len(self.verdict) else MISSING)
        return [None if v == MISSING else v for v in said.tolist()]


def by_chunk(labels: Mapping[str, Mapping[int, Label]]) -> dict[int, dict[str, int]]:
    """Chunk id -> each person's label on it, from person -> chunk id -> label."""
    out: dict[int, dict[str, int]] = {}
    for person, theirs in labels.items():
        for chunk_id, label in theirs.items():
            if label.verdict is not None:
                out.setdefault(chunk_id, {})[person] = label.verdict
    return out


def disagreements(labels: Mapping[str, Mapping[int, Label]]) -> dict[int, dict[str, int]]:
    """Chunk id -> each person's label, on the chunks where people gave different labels."""
    return {c: given for c, given in by_chunk(labels).items() if len(set(given.values())) > 1}


def team_truth(frame: ChunkFrame, people: Mapping[str, np.ndarray], gold: np.ndarray) -> Truth:
    """The team's truth from everyone's verdict columns and the gold column: gold where
    adjudicated, else what everyone who labelled a chunk agrees on; with one person and no
    gold, simply their labels."""
    if len(people) == 1 and not (gold != MISSING).any():
        [(person, theirs)] = people.items()
        return Truth(frame, theirs, person)
    agreed = np.full(len(frame), MISSING, dtype=np.int8)
    disputed = np.zeros(len(frame), dtype=bool)
    if people:
        stacked = np.vstack(list(people.values()))
        labelled = stacked != MISSING
        ones = (labelled & (stacked == 1)).any(axis=0)
        zeros = (labelled & (stacked == 0)).any(axis=0)
        agreed[ones & ~zeros] = 1
        agreed[zeros & ~ones] = 0
        disputed = ones & zeros
    adjudicated = gold != MISSING
    agreed[adjudicated] = gold[adjudicated]
    return Truth(frame, agreed, TEAM, adjudicated=int(adjudicated.sum()),
                 pending=int((disputed & ~adjudicated).sum()))


def truth(session: Session, annotator: str | None = None,
          frame: ChunkFrame | None = None) -> Truth:
    """One person's labels when named; else the team's truth (see team_truth)."""
    people = session.annotators()
    frame = frame or session.chunk_frame()
    if annotator is not None:
        annotator_named(people, annotator)
        return Truth(frame, session.label_columns(annotator, frame).verdict, annotator)
    gold = session.gold_column(frame)
    if not people and not (gold != MISSING).any():
        raise SessionError(NOBODY)
    return team_truth(frame, {p: session.label_columns(p, frame).verdict for p in people}, gold)
