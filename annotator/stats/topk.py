"""How many chunks to keep: each golden cut to its first k chunks, for k = 1 .. K.

Per golden and k, under one label set: context precision of the first k chunks (RAGAS's, on
the shorter list), how many of its relevant chunks the first k hold (precision@k is that over
k, as trec_eval's P@k: a golden shorter than k counts its missing ranks as not relevant), and
how many it holds in all; the share of
relevant chunks a cut loses is then a ratio of sums over goldens.
"""

from __future__ import annotations

import numpy as np

from annotator.stats.metrics import context_precision_by_golden


def first_k(verdict: np.ndarray, cluster: np.ndarray, rank: np.ndarray, sizes: np.ndarray,
            k: int) -> tuple[np.ndarray, np.ndarray]:
    """(CP of each golden's first k chunks, relevant chunks among them), from a verdict column
    in golden then rank order (ranks 1..n); CP is NaN where those chunks are incomplete."""
    within = rank <= k
    cp = context_precision_by_golden(verdict[within], np.minimum(sizes, k))
    kept = np.bincount(cluster[within], weights=(verdict[within] == 1).astype(float),
                       minlength=len(sizes))
    return cp, kept


def smallest_k(kept: np.ndarray, relevant: float, keep: float) -> int | None:
    """The smallest k (1-based, ``kept[k - 1]`` relevant chunks kept in all) keeping at least
    ``keep`` of the ``relevant`` chunks; None when there is no relevant chunk."""
    if relevant <= 0:
        return None
    enough = np.flatnonzero(kept >= keep * relevant - 1e-9)
    return int(enough[0]) + 1 if len(enough) else len(kept)
