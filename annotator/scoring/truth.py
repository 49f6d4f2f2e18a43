"""What the judges are scored against: one person's labels, or the team's gold.

With several annotators (or any adjudicated chunk), the truth on a chunk is its gold label
where an adjudicator decided one, else the label everyone who labelled it agrees on. Chunks
where people disagree, or someone is unsure, and nobody has adjudicated are left out, and
counted. An unsure answer is never a 0 or a 1: until adjudicated its chunk has no truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from annotator.columns import MISSING, ChunkFrame, LabelColumns
from annotator.errors import SessionError
from annotator.lazy import np
from annotator.models import Label
from annotator.resolve import NOBODY, annotator_named
from annotator.scoring.gate import counted_people
from annotator.store.session import Session
from annotator.verdict import Answer, kind_of

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
    unsure: np.ndarray
    """The chunks left without a truth because someone is unsure of them (not adjudicated)."""
    adjudicated: int = 0
    pending: int = 0
    """Chunks where people disagree, or someone is unsure, and nobody has adjudicated yet
    (left out)."""


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


def by_chunk(labels: Mapping[str, Mapping[int, Label]]) -> dict[int, dict[str, Answer]]:
    """Chunk id -> each person's answer on it (a verdict or unsure), from person -> chunk id ->
    label."""
    out: dict[int, dict[str, Answer]] = {}
    for person, theirs in labels.items():
        for chunk_id, label in theirs.items():
            if (answer := label.answer) is not None:
                out.setdefault(chunk_id, {})[person] = answer
    return out


def disagreements(labels: Mapping[str, Mapping[int, Label]]) -> dict[int, dict[str, Answer]]:
    """Chunk id -> each person's answer, on the chunks an adjudicator must settle: where people
    gave different labels, or someone answered unsure."""
    return {c: given for c, given in by_chunk(labels).items()
            if len({kind_of(answer).verdict for answer in given.values()}) > 1
            or any(kind_of(answer).verdict is None for answer in given.values())}


Answers: TypeAlias = "tuple[np.ndarray, np.ndarray]"
"""One person's verdict column (MISSING where none) and unsure column, aligned to a frame."""


def answers(columns: LabelColumns) -> Answers:
    """The two columns of a person's labels the truth reads (the rest may be let go)."""
    return columns.verdict, columns.unsettled


def team_truth(frame: ChunkFrame, people: Mapping[str, Answers], gold: np.ndarray) -> Truth:
    """The team's truth from everyone's answers and the gold column: gold where adjudicated,
    else what everyone who labelled a chunk agrees on (nobody unsure); with one person and no
    gold, simply their labels."""
    adjudicated = gold != MISSING
    if len(people) == 1 and not adjudicated.any():
        [(person, (verdict, unsure))] = people.items()
        return Truth(frame, verdict, person, unsure)
    agreed = np.full(len(frame), MISSING, dtype=np.int8)
    disputed = unsure = np.zeros(len(frame), dtype=bool)
    if people:
        stacked = np.vstack([verdict for verdict, _ in people.values()])
        labelled = stacked != MISSING
        ones = (labelled & (stacked == 1)).any(axis=0)
        zeros = (labelled & (stacked == 0)).any(axis=0)
        unsure = np.asarray(np.vstack([marks for _, marks in people.values()]).any(axis=0))
        agreed[ones & ~zeros & ~unsure] = 1
        agreed[zeros & ~ones & ~unsure] = 0
        disputed = (ones & zeros) | unsure
    agreed[adjudicated] = gold[adjudicated]
    return Truth(frame, agreed, TEAM, unsure & ~adjudicated, adjudicated=int(adjudicated.sum()),
                 pending=int((disputed & ~adjudicated).sum()))


def truth(session: Session, annotator: str | None = None,
          frame: ChunkFrame | None = None) -> Truth:
    """One person's labels when named (an unsure chunk takes its gold label once adjudicated);
    else the team's truth (see team_truth)."""
    people = session.annotators()
    frame = frame or session.chunk_frame()
    if annotator is not None:
        annotator_named(people, annotator)
        theirs = session.label_columns(annotator, frame)
        verdict, unsure = theirs.verdict, theirs.unsettled
        if unsure.any():
            gold = session.gold_column(frame)
            settled = unsure & (gold != MISSING)
            verdict = np.where(settled, gold, verdict).astype(np.int8)
            unsure = unsure & ~settled
        return Truth(frame, verdict, annotator, unsure)
    gold = session.gold_column(frame)
    people = counted_people(session, people)  # a gate leaves out who has not passed it
    if not people and not (gold != MISSING).any():
        raise SessionError(NOBODY)
    return team_truth(frame, {p: answers(session.label_columns(p, frame)) for p in people}, gold)
