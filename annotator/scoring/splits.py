"""Dev/test splits of goldens, drawn reproducibly from a seed.

A prompt tuned while looking at the dev goldens is judged on the test goldens, which it never
saw, so the leaderboard's numbers are honest.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any


def assign_splits(golden_ids: Sequence[str], dev: float, seed: int,
                  strata: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Golden id -> 'dev' or 'test': round(dev x n) goldens are dev, chosen by the seed alone.

    The draw depends on the set of ids, not their order, so the same goldens and seed give
    the same split in any session file. With ``strata`` (golden id -> a group, such as its
    retriever), each group is split in the same proportion, so both splits hold every system.
    """
    if not 0 <= dev <= 1:
        raise ValueError(f"the dev share must be between 0 and 1, not {dev}")
    rng = random.Random(seed)
    groups: dict[str, list[str]] = {}
    for golden_id in sorted(golden_ids):
        key = "" if strata is None else repr(strata.get(golden_id))
        groups.setdefault(key, []).append(golden_id)
    chosen: set[str] = set()
    for key in sorted(groups):
        members = groups[key]
        chosen.update(rng.sample(members, round(dev * len(members))))
    return {golden_id: "dev" if golden_id in chosen else "test" for golden_id in sorted(golden_ids)}
