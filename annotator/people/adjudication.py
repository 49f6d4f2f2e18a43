"""Settling disagreements: one adjudicator walks the chunks people labelled differently.

The adjudicator sees each person's label and note (and the judges' verdicts) and gives the
gold label, stored with who decided it; the leaderboard scores judges against gold labels.
No UI here: the TUI's adjudication screen calls these methods.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.errors import SessionError
from annotator.models import Chunk, Golden, GoldLabel, StoredVerdict
from annotator.scoring.truth import disagreements
from annotator.store.session import Session
from annotator.verdict import Answer


@dataclass(frozen=True, slots=True)
class Opinion:
    """One person's answer (a verdict or unsure) and note on a disputed chunk."""

    annotator: str
    verdict: Answer
    note: str | None


@dataclass(frozen=True, slots=True)
class Dispute:
    """A chunk people labelled differently, with everything the adjudicator needs."""

    golden: Golden
    chunk: Chunk
    opinions: list[Opinion]
    verdicts: list[StoredVerdict]
    """Every judge's verdict in force on the chunk (with its reason)."""


class Adjudication:
    """One adjudicator settling every dispute of a session, in golden and rank order."""

    def __init__(self, session: Session, adjudicator: str) -> None:
        self.session = session
        self.adjudicator = adjudicator
        labels = {p: session.labels(p) for p in session.annotators()}
        disputed = disagreements(labels)
        if not disputed:
            raise SessionError(
                "Nobody disagrees in this session: adjudication needs chunks that two people "
                "labelled differently (merge several people's files with 'annotator merge').")
        judges = [j.name for j in session.judges()]
        verdicts = {j: session.verdicts(j) for j in judges}
        disputed_goldens = [g for g, ids in session.chunk_ids().items()
                            if any(c in disputed for c in ids)]
        goldens = {g.id: g for g in session.goldens(disputed_goldens)}
        self.disputes: list[Dispute] = []
        for golden in sorted(goldens.values(), key=lambda g: g.position):
            for chunk in golden.chunks:
                if chunk.id not in disputed:
                    continue
                opinions = [Opinion(p, v, labels[p][chunk.id].note)
                            for p, v in disputed[chunk.id].items()]
                said = [verdicts[j][chunk.id] for j in judges if chunk.id in verdicts[j]]
                self.disputes.append(Dispute(golden, chunk, opinions, said))
        self.gold: dict[int, GoldLabel] = {
            c: g for c, g in session.gold_labels().items() if c in disputed}
        self._history: list[tuple[int, GoldLabel | None]] = []
        self._pending_notes: dict[int, str | None] = {}
        """Notes written before the gold label they belong to (saved with it)."""
        self.index = self._next_unsettled(-1) if self.settled < len(self.disputes) else 0

    @property
    def current(self) -> Dispute:
        """The dispute on screen."""
        return self.disputes[self.index]

    @property
    def settled(self) -> int:
        """How many disputes carry a gold label."""
        return len(self.gold)

    def move(self, delta: int) -> None:
        """Go to the next (or previous) dispute, staying inside the list."""
        self.index = max(0, min(len(self.disputes) - 1, self.index + delta))

    def decide(self, verdict: int, note: str | None = None) -> bool:
        """Give the current chunk its gold label (on disk before this returns), then go to the
        next unsettled dispute; False when none is left."""
        chunk_id = self.current.chunk.id
        before = self.gold.get(chunk_id)
        if note is None:
            # A note written before deciding, or the one already kept with the gold label.
            note = self._pending_notes.pop(chunk_id, before.note if before else None)
        self.gold[chunk_id] = self.session.set_gold(chunk_id, verdict, self.adjudicator, note)
        self._history.append((chunk_id, before))
        if self.settled == len(self.disputes):
            return False
        self.index = self._next_unsettled(self.index)
        return True

    def note(self, note: str | None) -> bool:
        """Write the adjudicator's note on the current chunk: saved at once on its gold label,
        or kept to be saved with the gold label still to come (then False)."""
        chunk_id = self.current.chunk.id
        gold = self.gold.get(chunk_id)
        if gold is None:
            self._pending_notes[chunk_id] = note
            return False
        self.gold[chunk_id] = self.session.set_gold(chunk_id, gold.verdict, self.adjudicator, note)
        return True

    def note_of(self, chunk_id: int) -> str | None:
        """The adjudicator's note on a chunk, saved or still to be saved."""
        gold = self.gold.get(chunk_id)
        return self._pending_notes.get(chunk_id, gold.note if gold else None)

    def undo(self) -> bool:
        """Take back this sitting's latest gold label (restoring any earlier one); False if none."""
        if not self._history:
            return False
        chunk_id, before = self._history.pop()
        if before is None:
            self.session.clear_gold(chunk_id, self.adjudicator)
            undone = self.gold.pop(chunk_id)
            if undone.note:  # the reasoning stays for the label given next
                self._pending_notes[chunk_id] = undone.note
        else:
            self.gold[chunk_id] = self.session.set_gold(chunk_id, before.verdict,
                                                        before.decided_by, before.note)
        self.index = next(i for i, d in enumerate(self.disputes) if d.chunk.id == chunk_id)
        return True

    def _next_unsettled(self, after: int) -> int:
        n = len(self.disputes)
        for step in range(1, n + 1):
            i = (after + step) % n
            if self.disputes[i].chunk.id not in self.gold:
                return i
        return after
