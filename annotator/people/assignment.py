"""Assignment: each golden of the sample goes to at most K people (``--per-golden K``).

A person claims the golden on their screen; the claim is a lease (``--lease-minutes``) that
their screen renews while it is open and lets go when it closes, and that lapses when the
screen dies, so the golden returns to the pool. A golden the person completes stays theirs for
good. Claims are counted inside the session's write (store/session.py, ``Session.claim``),
which no two writers share, so no golden is ever offered to more than K people at once, on any
number of screens and processes. Nothing about which goldens are in the sample changes: every
golden of it still gets K people, so every estimate the report makes stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.errors import SessionError

LEASE_MINUTES = 30.0
"""How long a claim lasts without its screen renewing it (--lease-minutes)."""
RENEW_EVERY_S = 60.0
"""How often an open screen renews its claim (at most a third of the lease)."""


@dataclass(frozen=True, slots=True)
class Quota:
    """Each golden to at most ``per_golden`` people, each claim a lease of ``lease_s``."""

    per_golden: int
    lease_s: float = LEASE_MINUTES * 60

    @property
    def renew_every_s(self) -> float:
        """How often a screen renews its claim: well inside the lease."""
        return min(RENEW_EVERY_S, self.lease_s / 3)


class NothingLeft(SessionError):
    """Every golden of the review is complete, held by this person, or filled by others."""


def _people(k: int) -> str:
    return "1 person" if k == 1 else f"{k} people"


def nothing_left(quota: Quota, goldens: int) -> str:
    """The sentence for a person who can take no golden now."""
    minutes = quota.lease_s / 60
    return (f"Every one of the {goldens:,} goldens is complete for you or has its "
            f"{_people(quota.per_golden)} (done, or on their screens now). A golden someone "
            f"leaves returns to the pool, at the latest {minutes:g} minutes after their screen "
            "stopped: try again later, or ask for a larger --per-golden.")


def taken(golden_id: str, quota: Quota) -> str:
    """The sentence for a person asking for a golden others fill."""
    return (f"{golden_id} already has its {_people(quota.per_golden)} (done, or on their "
            "screens now): pick another.")


def lapsed(golden_id: str, quota: Quota) -> str:
    """The sentence for a person whose claim lapsed and whose golden others took meanwhile."""
    return (f"Your claim on {golden_id} lapsed (no sign of your screen for "
            f"{quota.lease_s / 60:g} minutes) and it now has its {_people(quota.per_golden)}: "
            "press ] for the next golden you can take.")
