"""The verdict: what a judge or a person says of one chunk, and the only place its values live.

Today a verdict is the integer 0 (noise) or 1 (useful), stored as such in SQLite and in files.
Everything that parses, checks, names, flips or indexes a verdict goes through this module, so a
third value (say "unsure") is added here and the type checker and the tests lead to the rest.
Booleans are refused everywhere: ``True`` would be a silent 1.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypeGuard

Verdict: TypeAlias = int
"""A verdict value: one of VALUES."""

NOISE: Verdict = 0
USEFUL: Verdict = 1
VALUES: tuple[Verdict, ...] = (NOISE, USEFUL)

NAMES: dict[Verdict, str] = {NOISE: "noise", USEFUL: "useful"}
"""The word a person reads for each verdict."""

SPOKEN = "the number 0 (noise) or 1 (useful)"
"""How an error message says what a verdict may be."""

UNSURE: Literal["unsure"] = "unsure"
"""A person's third answer (never a judge's): they cannot tell, and say why in a note. It is not
a verdict: no statistic counts it as 0 or 1, and a golden holding one has no CP until an
adjudicator settles the chunk. Files write it as the string "unsure"."""

Answer: TypeAlias = Verdict | Literal["unsure"]
"""What a person may answer on a chunk: a verdict, or UNSURE."""

PAIRS = len(VALUES) ** 2
"""How many (human, judge) combinations there are: the size of a confusion table."""


def is_verdict(value: object) -> TypeGuard[Verdict]:
    """True when value is a verdict (an int in VALUES, not a bool)."""
    return type(value) is int and value in VALUES


def is_answer(value: object) -> TypeGuard[Answer]:
    """True when value is something a person may answer: a verdict or UNSURE."""
    return value == UNSURE if isinstance(value, str) else is_verdict(value)


def checked(value: object, what: str = "a verdict") -> Verdict:
    """Return value as a verdict, or raise ValueError naming what it was meant to be."""
    if not is_verdict(value):
        raise ValueError(f"{what} must be 0 or 1, not {value!r}")
    return value


def name(verdict: Answer | None) -> str:
    """The verdict's word ("useful", "noise"), "unsure", or "pending" for no answer yet."""
    if verdict is None:
        return "pending"
    return UNSURE if verdict == UNSURE else NAMES[verdict]


def flipped(verdict: Verdict) -> Verdict:
    """The other verdict: what a person means by "flip" on a binary scale."""
    return USEFUL if verdict == NOISE else NOISE


def pair_index(human: Verdict, judge: Verdict) -> int:
    """The cell of a (human, judge) pair in a flat confusion table: tn, fp, fn, tp."""
    return human * len(VALUES) + judge
