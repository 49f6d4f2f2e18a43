"""Judge versus person, golden by golden: verdict pairs, CP under both label sets, summaries.

The annotation screen and the report read the same numbers from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotator.columns import MISSING, verdict_column
from annotator.lazy import np
from annotator.models import Golden, Label, StoredVerdict
from annotator.stats.chunk_agreement import ChunkAgreement, Confusion
from annotator.stats.metrics import context_precision_when_complete
from annotator.stats.stat import Stat


@dataclass(frozen=True, slots=True)
class GoldenComparison:
    """One golden's verdicts, rank by rank, under the judge and under one person."""

    golden_id: str
    judge: tuple[int | None, ...]
    human: tuple[int | None, ...]
    blind: tuple[int | None, ...]
    """The person's blind answers (None where the chunk was not labelled blind)."""
    has_note: bool = False

    @classmethod
    def of(cls, golden: Golden, verdicts: dict[int, StoredVerdict],
           labels: dict[int, Label]) -> GoldenComparison:
        """Build from a golden and the judge's verdicts and person's labels on its chunks."""
        return cls.of_chunks(golden.id, [c.id for c in golden.chunks], verdicts, labels)

    @classmethod
    def of_chunks(cls, golden_id: str, chunk_ids: Sequence[int],
                  verdicts: dict[int, StoredVerdict], labels: dict[int, Label]
                  ) -> GoldenComparison:
        """Build from a golden's chunk ids (in rank order), verdicts and labels."""
        judge = tuple(v.verdict if (v := verdicts.get(c)) else None for c in chunk_ids)
        found = [labels.get(c) for c in chunk_ids]
        return cls(
            golden_id, judge,
            tuple(label.verdict if label else None for label in found),
            tuple(label.blind_verdict if label else None for label in found),
            any(label is not None and label.note for label in found),
        )

    @property
    def human_complete(self) -> bool:
        """Every chunk has the person's verdict."""
        return None not in self.human

    @property
    def judge_complete(self) -> bool:
        """Every chunk has the judge's verdict."""
        return None not in self.judge

    @property
    def decided(self) -> int:
        """How many chunks the person has decided."""
        return sum(v is not None for v in self.human)

    def cp_human(self) -> float | None:
        """Context precision under the person's labels, once every chunk is decided."""
        return context_precision_when_complete(self.human)

    def cp_judge(self) -> float | None:
        """Context precision under the judge's labels, once every chunk is judged."""
        return context_precision_when_complete(self.judge)

    def pairs(self) -> list[tuple[int, int]]:
        """(human, judge) for every chunk both have a verdict on."""
        return [(h, j) for h, j in zip(self.human, self.judge, strict=True)
                if h is not None and j is not None]

    def confusion(self) -> Confusion:
        """Confusion of this golden's chunks decided by both."""
        return Confusion.of(self.pairs())

    @property
    def disagreements(self) -> int:
        """Chunks where the person's verdict differs from the judge's."""
        return sum(h != j for h, j in self.pairs())


@dataclass(frozen=True, slots=True)
class BlindSummary:
    """Anchoring: agreement with the judge on blind versus pre-filled chunks, and reveal switches."""

    blind_chunks: int
    prefilled_chunks: int
    blind_agreement: ChunkAgreement
    """The person's blind answers against the judge."""
    prefilled_agreement: ChunkAgreement
    """Final labels against the judge on chunks whose verdict was shown first."""
    disagreed_blind: int
    """Blind answers that differed from the judge's verdict."""
    switched_to_judge: int
    """Of those, how many the person changed to the judge's verdict after the reveal."""

    @property
    def switch_rate(self) -> Stat:
        """Share of blind disagreements the person switched toward the judge after the reveal."""
        if self.disagreed_blind == 0:
            return Stat.undefined("no blind answer disagreed with the judge")
        return Stat(self.switched_to_judge / self.disagreed_blind)

    @classmethod
    def of(cls, comparisons: Sequence[GoldenComparison]) -> BlindSummary:
        """Split every decided chunk into blind and pre-filled."""
        rows = [(h, j, b) for c in comparisons
                for h, j, b in zip(c.human, c.judge, c.blind, strict=True)]
        human, judge, blind = (verdict_column([r[i] for r in rows]) for i in range(3))
        return cls.of_columns(human, judge, blind)

    @classmethod
    def of_columns(cls, human: np.ndarray, judge: np.ndarray, blind: np.ndarray) -> BlindSummary:
        """The same from verdict columns (MISSING where none): final label, judge, blind answer."""
        both = (human != MISSING) & (judge != MISSING)
        is_blind = both & (blind != MISSING)
        prefilled = both & ~is_blind
        disagreed = is_blind & (blind != judge)
        return cls(int(is_blind.sum()), int(prefilled.sum()),
                   ChunkAgreement.of(Confusion.of_arrays(blind[is_blind], judge[is_blind])),
                   ChunkAgreement.of(Confusion.of_arrays(human[prefilled], judge[prefilled])),
                   int(disagreed.sum()), int((disagreed & (human == judge)).sum()))
