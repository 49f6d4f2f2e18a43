"""What the judges are scored against: one person's labels, or the team's gold.

With several annotators (or any adjudicated chunk), the truth on a chunk is its gold label
where an adjudicator decided one, else the label everyone who labelled it agrees on. Chunks
where people disagree and nobody has adjudicated are left out, and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from annotator.errors import SessionError
from annotator.models import GoldLabel, Label
from annotator.resolve import NOBODY, annotator_named
from annotator.store.session import Session

TEAM = "team"
"""The source of the team truth: gold where adjudicated, else the label everyone agrees on."""


@dataclass(frozen=True, slots=True)
class Truth:
    """Chunk id -> the verdict a judge should have given, and where it came from."""

    labels: dict[int, int]
    source: str
    """Whose labels these are: a person's name, or TEAM."""
    adjudicated: int = 0
    pending: int = 0
    """Chunks where people disagree and nobody has adjudicated yet (left out)."""

    @property
    def label(self) -> str:
        """Whose labels, for a sentence: "alice's labels" or "the team's gold labels"."""
        return "the team's gold labels" if self.source == TEAM else f"{self.source}'s labels"


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


def team_truth(labels: Mapping[str, Mapping[int, Label]], gold: Mapping[int, GoldLabel]
               ) -> Truth:
    """The team's truth from everyone's labels and the gold labels: gold where adjudicated,
    else what everyone agrees on; with one person and no gold, simply their labels."""
    if len(labels) == 1 and not gold:
        [(person, theirs)] = labels.items()
        return Truth({c: label.verdict for c, label in theirs.items()
                      if label.verdict is not None}, person)
    agreed, disputed = {}, set()
    for chunk_id, given in by_chunk(labels).items():
        verdicts = set(given.values())
        if len(verdicts) == 1:
            agreed[chunk_id] = verdicts.pop()
        else:
            disputed.add(chunk_id)
    agreed.update({c: g.verdict for c, g in gold.items()})
    return Truth(agreed, TEAM, adjudicated=len(gold), pending=len(disputed - gold.keys()))


def truth(session: Session, annotator: str | None = None) -> Truth:
    """One person's labels when named; else the team's truth (see team_truth)."""
    people = session.annotators()
    if annotator is not None:
        annotator_named(people, annotator)
        return team_truth({annotator: session.labels(annotator)}, {})
    gold = session.gold_labels()
    if not people and not gold:
        raise SessionError(NOBODY)
    return team_truth({p: session.labels(p) for p in people}, gold)
