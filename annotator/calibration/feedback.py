"""Where a judge and the team's truth part, direction-aware: what `annotator align` shows its
optimizer and `annotator export --format feedback` writes for other optimizers (DSPy/GEPA,
MLflow's MemAlign, Autotune-style tools).

A disagreement is "looser" where the judge called a chunk useful and people called it noise
(a false positive: the judge lets noise through), "stricter" where the judge called useful
chunk noise. Each carries what an optimizer needs to learn from it: the question, the answer
the judge judges against, the chunk, the judge's reason and the people's notes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import IO, Any, Literal

import numpy as np

from annotator.columns import MISSING
from annotator.scoring.truth import truth
from annotator.stats.chunk_agreement import Confusion
from annotator.store.session import Session

Direction = Literal["looser", "stricter"]
PAGE = 500


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One chunk where a judge's verdict is not the team's truth."""

    golden_id: str
    rank: int
    chunk_id: int
    doc_id: str | None
    question: str
    answer: str | None
    """The reference or the response: the answer the judge judges against."""
    chunk: str
    judge: str
    judge_verdict: int
    judge_reason: str | None
    truth: int
    notes: dict[str, str]
    """Each person's note on the chunk."""

    @property
    def direction(self) -> Direction:
        """looser: the judge said useful where people said noise; stricter: the reverse."""
        return "looser" if self.judge_verdict == 1 else "stricter"

    def plain(self) -> dict[str, Any]:
        """The disagreement as one JSON object (a line of the feedback export)."""
        return {**asdict(self), "direction": self.direction}


def confusion(session: Session, judge: str, golden_ids: Sequence[str],
              annotator: str | None = None) -> Confusion:
    """The judge's verdicts against the truth on these goldens' chunks (where both exist)."""
    frame = session.chunk_frame(golden_ids)
    said = session.judge_columns(judge, frame, whole=False).verdict
    human = truth(session, annotator, frame).verdict
    both = (said != MISSING) & (human != MISSING)
    return Confusion.of_arrays(human[both], said[both])


def unjudged(session: Session, judge: str, golden_ids: Sequence[str],
             annotator: str | None = None) -> int:
    """Chunks of these goldens with a truth but no verdict of the judge."""
    frame = session.chunk_frame(golden_ids)
    said = session.judge_columns(judge, frame, whole=False).verdict
    human = truth(session, annotator, frame).verdict
    return int(np.count_nonzero((said == MISSING) & (human != MISSING)))


def with_truth(session: Session, golden_ids: Sequence[str], annotator: str | None = None
               ) -> list[str]:
    """The goldens (of those given, in their order) with a truth on at least one chunk."""
    frame = session.chunk_frame(golden_ids)
    human = truth(session, annotator, frame).verdict
    kept = set(np.asarray(frame.golden_ids)[np.unique(frame.cluster[human != MISSING])].tolist())
    return [g for g in golden_ids if g in kept]


def disagreements(session: Session, judge: str, golden_ids: Sequence[str],
                  against: str, annotator: str | None = None) -> Iterator[Disagreement]:
    """Every chunk of these goldens where the judge's verdict is not the truth, in golden
    order then rank; ``against``: 'reference' or 'response', the answer the judge saw."""
    people = [annotator] if annotator else session.annotators()
    for start in range(0, len(golden_ids), PAGE):
        page = list(golden_ids[start:start + PAGE])
        frame = session.chunk_frame(page)
        human = truth(session, annotator, frame).verdict.tolist()
        truth_of = {c: h for c, h in zip(frame.chunk_id.tolist(), human, strict=True)
                    if h != MISSING}
        said = session.verdicts(judge, page)
        notes = {p: session.labels(p, page) for p in people}
        for golden in session.goldens(page):
            answer = golden.reference if against == "reference" else golden.response
            for chunk in golden.chunks:
                verdict, right = said.get(chunk.id), truth_of.get(chunk.id)
                if verdict is None or right is None or verdict.verdict == right:
                    continue
                noted = {p: label.note for p, labels in notes.items()
                         if (label := labels.get(chunk.id)) is not None and label.note}
                yield Disagreement(golden.id, chunk.rank, chunk.id, chunk.doc_id,
                                   golden.user_input, answer, chunk.text, judge, verdict.verdict,
                                   verdict.reason, right, noted)


def write(items: Iterator[Disagreement], out: IO[str]) -> int:
    """Write disagreements as JSON lines; how many were written."""
    count = 0
    for item in items:
        out.write(json.dumps(item.plain(), ensure_ascii=False) + "\n")
        count += 1
    return count
