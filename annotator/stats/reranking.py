"""What reranking could buy: each golden's chunks reordered, then scored under people's labels.

- as retrieved: context precision in the retriever's order;
- the ceiling: reordered by people's own labels (every useful chunk first), the most any
  reranker can reach on these chunks (1, less RAGAS's 1e-10, for a golden with a useful chunk;
  0 for one without);
- the judge as a reranker: reordered by the judge's verdict, then its P(relevant) where it has
  one, then the retriever's order, and scored under people's labels;
- the share of the ceiling's gain the judge captures: (judge - as retrieved) / (ceiling - as
  retrieved), over the means.
"""

from __future__ import annotations

import numpy as np

from annotator.stats.metrics import context_precision_by_golden


def reordered_cp(truth: np.ndarray, cluster: np.ndarray, rank: np.ndarray, sizes: np.ndarray,
                 by: np.ndarray, then: np.ndarray | None = None) -> np.ndarray:
    """CP of each golden under ``truth`` (a verdict column in golden order) with its chunks
    reordered by ``by``, highest first, then by ``then`` (highest first; NaN last), then by
    rank; NaN where the golden is incomplete under ``truth``."""
    keys = [rank] if then is None else [rank, np.nan_to_num(-then, nan=np.inf)]
    order = np.lexsort((*keys, -by.astype(float), cluster))
    return context_precision_by_golden(truth[order], sizes)


def captured(retrieved: np.ndarray, ceiling: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """The share of the ceiling's gain over the retrieved order that the judge's order gains
    (nan where the retrieved order is already at the ceiling)."""
    gain = np.asarray(ceiling - retrieved, dtype=float)
    out = np.full(np.shape(gain), np.nan)
    np.divide(judge - retrieved, gain, out=out, where=gain > 1e-12)
    return out
