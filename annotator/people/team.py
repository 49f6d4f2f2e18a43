"""A team's picture of one session: each person's progress and the agreement between people.

What `annotator serve --dashboard` shows, read from the session as columns (one query per
person), so it stays quick while people label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from annotator.columns import MISSING
from annotator.scoring.gate import standing
from annotator.stats.chunk_agreement import Confusion, cohen_kappa, percent_agreement
from annotator.store.session import Session


@dataclass(frozen=True, slots=True)
class TeamProgress:
    """Per person: chunks decided and goldens complete; per pair: agreement on shared chunks;
    under a quota of people per golden (--per-golden), each person's and each golden's claims."""

    goldens: int
    chunks: int
    people: list[dict[str, str]]
    pairs: list[dict[str, str]]
    claims: list[dict[str, str]] = field(default_factory=list)
    """Each claimed golden: its completed claims and the ones open on a screen now."""


def team_progress(session: Session) -> TeamProgress:
    """Everyone's progress and pairwise agreement, as text ready to show."""
    frame = session.chunk_frame()
    labels = {name: session.label_columns(name, frame).verdict for name in session.annotators()}
    by_golden, by_person = session.claim_counts()
    people = [{"name": name, "decided": f"{int((v != MISSING).sum()):,}",
               "complete": f"{int(frame.complete(v).sum()):,}"} for name, v in labels.items()]
    at_gate = standing(session)
    if at_gate is not None:
        for row in people:
            row["gate"] = at_gate[row["name"]].sentence if row["name"] in at_gate else ""
    if by_golden:
        for row in people:
            done, held = by_person.get(row["name"], (0, 0))
            row["claims"] = f"{done:,} done, {held:,} open"
    claims = [{"golden": golden_id, "done": str(done), "open": str(held)}
              for golden_id in frame.golden_ids if golden_id in by_golden
              for done, held in [by_golden[golden_id]]]
    pairs = []
    for (a, va), (b, vb) in combinations(labels.items(), 2):
        both = (va != MISSING) & (vb != MISSING)
        if not both.any():
            continue
        c = Confusion.of_arrays(va[both], vb[both])
        pairs.append({"pair": f"{a} / {b}", "shared": f"{c.n:,}",
                      "percent": percent_agreement(c).format(3),
                      "kappa": cohen_kappa(c).format(3)})
    return TeamProgress(len(frame.golden_ids), len(frame), people, pairs, claims)
