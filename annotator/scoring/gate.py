"""The qualification gate (``--gate N``): a newcomer first answers N attention-check chunks,
and their labels count toward the truth only once they are right on at least ``--checks-min``
of the check chunks they answered.

The gate is kept in the session (the settings' ``gate``), so the report, the truth and every
screen read the same rule. People who labelled before the first gate was set are exempt: it is
for newcomers. A person's labels are always kept; the gate only decides whether they count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from annotator.errors import SessionError
from annotator.store.session import Session
from annotator.text import counted

Status = Literal["exempt", "qualifying", "passed", "failed"]


@dataclass(frozen=True, slots=True)
class Standing:
    """Where one person stands at the gate."""

    status: Status
    answered: int
    """Check chunks with a truth the person answered 0 or 1."""
    right: int
    needed: int
    minimum: float

    @property
    def counts(self) -> bool:
        """Whether the person's labels count toward the truth."""
        return self.status in ("exempt", "passed")

    @property
    def sentence(self) -> str:
        """Why, in a few words (the dashboard's and the report's)."""
        if self.status == "exempt":
            return "exempt: labelled before the gate"
        if self.status == "qualifying":
            return (f"qualifying: {self.answered} of {counted(self.needed, 'check chunk')} "
                    "answered; labels not counted yet")
        share = self.right / self.answered
        if self.status == "passed":
            return f"passed: {self.right} of {self.answered} checks right ({share:.0%})"
        return (f"failed: {self.right} of {self.answered} checks right ({share:.0%}, below "
                f"{self.minimum:.0%}); labels not counted")


def keep_gate(session: Session, checks: int, minimum: float, gold_file: Path | None = None
              ) -> dict[str, Any]:
    """Keep a gate of ``checks`` check chunks passed at ``minimum`` in the session, with the
    checks to fill it (the session's gold labels, and a gold file's); SessionError when the
    checks hold fewer scored chunks than it asks for."""
    from annotator.scoring.checks import prepare

    pool = prepare(session, gold_file)
    scored = sum(truth is not None for check in pool for truth in check.truth)
    if scored < checks:
        raise SessionError(f"--gate {checks} asks each newcomer for {checks} check chunks, and "
                           f"the session's checks hold {scored}: settle more disputes "
                           "('annotator annotate SESSION --adjudicate'), add a gold file with "
                           "--checks-from, or ask for fewer.")
    return session.set_gate(checks, minimum)


def standing(session: Session, gate: dict[str, Any] | None = None
             ) -> dict[str, Standing] | None:
    """Everyone's standing at the session's gate (everyone who labelled or answered a check);
    None when the session has no gate."""
    gate = gate if gate is not None else session.gate()
    if gate is None:
        return None
    needed, minimum, exempt = int(gate["checks"]), float(gate["min"]), set(gate["exempt"])
    scores = session.check_scores()
    out = {}
    for person in sorted(set(session.annotators()) | set(scores)):
        answered, right = scores.get(person, (0, 0))
        status: Status = ("exempt" if person in exempt else
                          "qualifying" if answered < needed else
                          "passed" if right >= minimum * answered else "failed")
        out[person] = Standing(status, answered, right, needed, minimum)
    return out


def counted_people(session: Session, people: list[str]) -> list[str]:
    """Of ``people``, those whose labels count toward the truth (everyone without a gate)."""
    at_gate = standing(session)
    if at_gate is None:
        return people
    return [p for p in people if p not in at_gate or at_gate[p].counts]


def gating(session: Session, annotator: str) -> bool:
    """Whether this person has check chunks to answer before their first golden."""
    gate = session.gate()
    if gate is None or annotator in gate["exempt"]:
        return False
    answered, _ = session.check_scores().get(annotator, (0, 0))
    return bool(answered < int(gate["checks"]))
