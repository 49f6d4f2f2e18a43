"""Context precision, RAGAS-compatible, and precision@k.

CP = sum over ranks k holding a relevant chunk of precision@k, divided by the number of
relevant chunks. RAGAS 0.4 adds 1e-10 to that denominator, so a perfect ranking scores
0.9999999999; ``ragas_compatible=False`` gives the exact value instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from annotator.lazy import np
from annotator.verdict import is_verdict

RAGAS_EPSILON = 1e-10
"""What RAGAS 0.4 adds to the number of relevant chunks before dividing."""

CONVENTION_RAGAS = "ragas-0.4 (denominator + 1e-10; no relevant chunk gives 0.0)"
CONVENTION_EXACT = "exact (no relevant chunk gives 0.0)"


def _checked(verdicts: Sequence[int]) -> list[int]:
    """Return the verdicts as a list, or raise ValueError saying what is wrong with them."""
    if len(verdicts) == 0:
        raise ValueError("context precision needs at least one ranked chunk; the list is empty")
    out = list(verdicts)
    for rank, verdict in enumerate(out, 1):
        if not is_verdict(verdict):
            raise ValueError(
                f"the verdict at rank {rank} is {verdict!r}; every verdict must be the integer 0 or 1"
            )
    return out


def precision_at_k(verdicts: Sequence[int]) -> list[float]:
    """Precision@k for every rank k: the share of relevant chunks among the first k."""
    hits = 0
    out = []
    for k, verdict in enumerate(_checked(verdicts), 1):
        hits += verdict
        out.append(hits / k)
    return out


def precision_at_k_so_far(verdicts: Sequence[int | None]) -> list[float | None]:
    """Precision@k for each rank while a golden is being labelled: None from the first
    undecided rank on (the ranks before it are final, whatever comes after)."""
    decided = [v for v in itertools.takewhile(lambda v: v is not None, verdicts) if v is not None]
    known: list[float | None] = list(precision_at_k(decided)) if decided else []
    return known + [None] * (len(verdicts) - len(decided))


def context_precision(verdicts: Sequence[int], *, ragas_compatible: bool = True) -> float:
    """Mean of precision@k over the ranks holding a relevant chunk; 0.0 when none is relevant.

    With ``ragas_compatible`` (the default) the value equals RAGAS 0.4's to the last bit on the
    same interpreter: the same expression, the same summation order, the same epsilon.
    """
    v = _checked(verdicts)
    if ragas_compatible:
        # The exact expression of ragas' _calculate_average_precision, so the floats agree.
        numerator = sum([(sum(v[: i + 1]) / (i + 1)) * v[i] for i in range(len(v))])
        return numerator / (sum(v) + RAGAS_EPSILON)
    relevant = sum(v)
    if relevant == 0:
        return 0.0
    return sum(p for p, verdict in zip(precision_at_k(v), v, strict=True) if verdict) / relevant


def context_precision_when_complete(verdicts: Sequence[int | None]) -> float | None:
    """Context precision once every chunk has a verdict; None while any is missing (a golden
    counts in CP statistics only when complete under that label set)."""
    if any(v is None for v in verdicts):
        return None
    return context_precision([v for v in verdicts if v is not None])


def passes(score: float, pass_mark: float) -> bool:
    """Whether a context-precision score reaches the pass mark (RAGAS's epsilon forgiven)."""
    return score >= pass_mark - 1e-9


_KEYED = 56
"""Goldens up to this many chunks are scored by key (the verdicts as bits, and the length)."""


def context_precision_by_golden(verdict: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """CP of each golden from a verdict column in golden order (``sizes`` chunks each, -1 where
    a chunk has none); NaN where a golden is incomplete.

    Each distinct verdict list is scored once by ``context_precision`` itself, so every value
    is bit for bit what it returns: a session of 10-chunk goldens has at most 1,024 lists.
    """
    out = np.full(len(sizes), np.nan)
    if not len(verdict):
        return out
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    missing = np.bincount(cluster[verdict < 0], minlength=len(sizes))
    scored = (missing == 0) & (sizes > 0)
    keyed = scored & (sizes <= _KEYED)
    place = np.arange(len(verdict)) - starts[cluster]
    bits = np.where(verdict == 1, np.left_shift(1, np.minimum(place, _KEYED)), 0).astype(np.int64)
    filled = sizes > 0
    key = np.zeros(len(sizes), dtype=np.int64)
    key[filled] = np.add.reduceat(bits, starts[filled])
    key = key * (_KEYED + 1) + sizes
    distinct, inverse = np.unique(key[keyed], return_inverse=True)
    values = np.array([context_precision([(int(k) // (_KEYED + 1)) >> i & 1
                                          for i in range(int(k) % (_KEYED + 1))])
                       for k in distinct.tolist()], dtype=float)
    out[keyed] = values[inverse.ravel()] if len(values) else values
    for g in np.flatnonzero(scored & ~keyed).tolist():
        out[g] = context_precision(verdict[starts[g]:starts[g] + sizes[g]].tolist())
    return out
