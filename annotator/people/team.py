"""A team's picture of one session: each person's progress and the agreement between people.

What `annotator serve --dashboard` shows, read from the session as columns (one query per
person), so it stays quick while people label.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from annotator.columns import MISSING
from annotator.stats.chunk_agreement import Confusion, cohen_kappa, percent_agreement
from annotator.store.session import Session


@dataclass(frozen=True, slots=True)
class TeamProgress:
    """Per person: chunks decided and goldens complete; per pair: agreement on shared chunks."""

    goldens: int
    chunks: int
    people: list[dict[str, str]]
    pairs: list[dict[str, str]]


def team_progress(session: Session) -> TeamProgress:
    """Everyone's progress and pairwise agreement, as text ready to show."""
    frame = session.chunk_frame()
    labels = {name: session.label_columns(name, frame).verdict for name in session.annotators()}
    people = [{"name": name, "decided": f"{int((v != MISSING).sum()):,}",
               "complete": f"{int(frame.complete(v).sum()):,}"} for name, v in labels.items()]
    pairs = []
    for (a, va), (b, vb) in combinations(labels.items(), 2):
        both = (va != MISSING) & (vb != MISSING)
        if not both.any():
            continue
        c = Confusion.of_arrays(va[both], vb[both])
        pairs.append({"pair": f"{a} / {b}", "shared": f"{c.n:,}",
                      "percent": percent_agreement(c).format(3),
                      "kappa": cohen_kappa(c).format(3)})
    return TeamProgress(len(frame.golden_ids), len(frame), people, pairs)
