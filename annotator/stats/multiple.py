"""Holm's correction for many tests at once: the one home of it (error slices, judge pairs)."""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.05
"""The family-wise error rate every corrected family in the report is held to."""


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (None stays None and does not count as a test)."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def holm_rejects(p_values: Sequence[float | None], alpha: float = ALPHA) -> list[bool]:
    """Which tests reject at family-wise level ``alpha`` (Holm's step-down: an adjusted p-value
    at most ``alpha``); a test without a p-value rejects nothing and counts for nothing."""
    return [p is not None and p <= alpha for p in holm(p_values)]
