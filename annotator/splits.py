"""Dev/test splits of goldens, drawn reproducibly from a seed.

A prompt tuned while looking at the dev goldens is judged on the test goldens, which it never
saw, so the leaderboard's numbers are honest.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def assign_splits(golden_ids: Sequence[str], dev: float, seed: int) -> dict[str, str]:
    """Golden id -> 'dev' or 'test': round(dev x n) goldens are dev, chosen by the seed alone.

    The draw depends on the set of ids, not their order, so the same goldens and seed give
    the same split in any session file.
    """
    if not 0 <= dev <= 1:
        raise ValueError(f"the dev share must be between 0 and 1, not {dev}")
    ordered = sorted(golden_ids)
    chosen = set(random.Random(seed).sample(ordered, round(dev * len(ordered))))
    return {golden_id: "dev" if golden_id in chosen else "test" for golden_id in ordered}
