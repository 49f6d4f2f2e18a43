"""Whole-session data as numpy columns: every chunk in golden order, and each judge's verdicts
and each person's labels aligned to it.

The report, the leaderboard, the queue and the truth read a session as columns: one query each,
no object per row. A column is aligned to a ``ChunkFrame`` (row i is the frame's chunk i), with
``MISSING`` (-1) where a chunk has no verdict or label. The per-golden paths (the annotation
screen, adjudication) keep their dataclasses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotator.lazy import np
from annotator.verdict import CODES

MISSING = -1
"""A verdict column's value where the chunk has no verdict (or no label)."""

ACTION_CODES = ("accept", "flip", "set", "import")
"""A label's action, as its index here in ``LabelColumns.action`` (MISSING: no decision)."""


@dataclass(frozen=True, eq=False)
class ChunkFrame:
    """Every chunk of the session (or of some goldens) in golden order, then rank order."""

    golden_ids: list[str]
    """The goldens in import order; a chunk's ``cluster`` indexes this list."""
    chunk_id: np.ndarray
    cluster: np.ndarray
    rank: np.ndarray
    sizes: np.ndarray
    """Chunks per golden."""

    @classmethod
    def of(cls, golden_ids: list[str], rows: np.ndarray) -> ChunkFrame:
        """From the goldens in order and (golden index, chunk id, rank) rows in that order."""
        cluster = rows[:, 0] if len(rows) else np.zeros(0, dtype=np.int64)
        return cls(golden_ids, rows[:, 1] if len(rows) else cluster.copy(), cluster,
                   rows[:, 2] if len(rows) else cluster.copy(),
                   np.bincount(cluster, minlength=len(golden_ids)))

    def __len__(self) -> int:
        return len(self.chunk_id)

    @property
    def starts(self) -> np.ndarray:
        """Each golden's first row."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def slots(self, chunk_ids: np.ndarray) -> np.ndarray:
        """The row of each chunk id (MISSING for a chunk outside the frame)."""
        if not len(self.chunk_id):
            return np.full(len(chunk_ids), MISSING, dtype=np.int64)
        top = int(max(self.chunk_id.max(), chunk_ids.max() if len(chunk_ids) else 0))
        where = np.full(top + 1, MISSING, dtype=np.int64)
        where[self.chunk_id] = np.arange(len(self.chunk_id))
        return where[chunk_ids] if len(chunk_ids) else np.zeros(0, dtype=np.int64)

    def aligned(self, at: np.ndarray, values: np.ndarray, fill: float,
                dtype: type | np.dtype) -> np.ndarray:
        """``values`` placed on the frame's rows ``at`` (from ``slots``; one lookup serves every
        column of a read), ``fill`` elsewhere."""
        out = np.full(len(self.chunk_id), fill, dtype=dtype)
        inside = at != MISSING
        out[at[inside]] = values[inside]
        return out

    def per_golden(self, values: np.ndarray) -> np.ndarray:
        """The sum of a per-chunk column over each golden."""
        return np.bincount(self.cluster, weights=values, minlength=len(self.golden_ids))

    def complete(self, verdict: np.ndarray) -> np.ndarray:
        """Per golden, whether every one of its chunks has a verdict in this column."""
        missing = np.bincount(self.cluster[verdict == MISSING], minlength=len(self.golden_ids))
        return np.asarray(missing == 0)

    def only(self, keep: np.ndarray) -> tuple[ChunkFrame, np.ndarray]:
        """The frame of the goldens where ``keep`` (one bool per golden) holds, and the rows of
        the old frame it keeps (to cut aligned columns with)."""
        rows = keep[self.cluster]
        renumber = np.cumsum(keep) - 1
        ids = [g for g, k in zip(self.golden_ids, keep.tolist(), strict=True) if k]
        return ChunkFrame(ids, self.chunk_id[rows], renumber[self.cluster[rows]],
                          self.rank[rows], self.sizes[keep]), rows


@dataclass(frozen=True, eq=False)
class JudgeColumns:
    """One judge's verdicts in force, aligned to a frame: verdict (MISSING where none) and
    P(relevant) (NaN where none)."""

    verdict: np.ndarray
    p_relevant: np.ndarray
    grade: np.ndarray
    """The grade a graded judge gave (MISSING where none)."""


@dataclass(frozen=True, eq=False)
class LabelColumns:
    """One person's labels aligned to a frame. ``verdict`` is MISSING where the person has not
    decided or is unsure; ``order`` lists the rows of their labels by (last change, chunk id)."""

    verdict: np.ndarray
    blind: np.ndarray
    shown: np.ndarray
    action: np.ndarray
    """Index into ACTION_CODES, or MISSING."""
    decision_ms: np.ndarray
    note: np.ndarray
    """Whether the label carries a note."""
    answer: np.ndarray
    """The kind of the person's answer, by its code (verdict.CODES), MISSING where none."""
    reason_wrong: np.ndarray
    """Whether the person accepted the judge's verdict and marked its reason wrong."""
    order: np.ndarray
    grade: np.ndarray
    """The person's grade on a graded session's scale (MISSING where none)."""
    guideline: np.ndarray
    """The version of the guidelines each answer was made under (MISSING where none)."""

    @property
    def decided(self) -> np.ndarray:
        """Whether the person gave each chunk a verdict."""
        return np.asarray(self.verdict != MISSING)

    @property
    def answered(self) -> np.ndarray:
        """Whether the person answered each chunk, whatever the kind (their progress)."""
        return np.asarray(self.answer != MISSING)

    @property
    def unsettled(self) -> np.ndarray:
        """Whether the person's answer on each chunk is of a kind that is no verdict (unsure):
        the chunk waits for an adjudicator."""
        return np.asarray(self.answered & ~self.decided)

    def of_kind(self, word: str) -> np.ndarray:
        """Whether the person's answer on each chunk is of the kind named ``word``."""
        return np.asarray(self.answer == CODES[word])


def action_code(action: str) -> int:
    """An action's code in ``LabelColumns.action``."""
    return ACTION_CODES.index(action)


def verdict_column(values: Sequence[int | None]) -> np.ndarray:
    """A verdict column from Python values (None as MISSING)."""
    return np.asarray([MISSING if v is None else v for v in values], dtype=np.int8)
