"""The verdict: what a judge or a person says of one chunk, and the only place its values live.

Today a verdict is the integer 0 (noise) or 1 (useful), stored as such in SQLite and in files.
Everything that parses, checks, names, flips or indexes a verdict goes through this module.
Booleans are refused everywhere: ``True`` would be a silent 1.

What a *person* answers on a chunk is an ``Answer``, of one of the ``KINDS``: useful, noise,
unsure and distractor today. A session stores it as one checked column holding the kind's word
(``answer`` in ``labels``, ``label_conflicts`` and ``check_answers``); the ``verdict``,
``unsure`` and ``distractor`` columns beside it are generated from that word, so they can never
disagree with it. A new kind of answer
is a ``Kind`` added here plus a migration that rebuilds those tables with the new word in the
CHECK and the generated columns (m010 shows how; tests/test_migrations.py fails until the schema
and KINDS agree), a key on the annotation screen and its ``Review`` method. Python carries an
answer as one value everywhere: ``Label.answer``, one code a chunk in ``LabelColumns.answer``
(CODES), the word in an event's decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeGuard, cast

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

DISTRACTOR: Literal["distractor"] = "distractor"
"""Noise that misleads: on topic, plausible, wrong for this question (a distractor lowers an LLM
reader's answers where plain noise does not). It counts as 0 wherever a verdict counts; the
report gives its rate of its own. Files write it as the string "distractor"."""

Answer: TypeAlias = Verdict | Literal["unsure", "distractor"]
"""What a person may answer on a chunk: a verdict, UNSURE or DISTRACTOR."""



@dataclass(frozen=True)
class Kind:
    """One kind of answer a person may give on a chunk."""

    word: str
    """How the session file stores it (the ``answer`` column) and how a person reads it."""
    answer: Answer
    """How code and files pass it: the verdict, or UNSURE."""
    verdict: Verdict | None
    """What every statistic counts it as; None: no verdict (the chunk waits for adjudication)."""
    needs_note: bool = False
    """Whether a person must say why in a note."""
    asks: str = "why"
    """What the note must say, where one is needed (the note box asks it)."""


KINDS: tuple[Kind, ...] = (
    Kind("noise", NOISE, NOISE),
    Kind("useful", USEFUL, USEFUL),
    Kind(UNSURE, UNSURE, None, needs_note=True, asks="what is unclear"),
    Kind(DISTRACTOR, DISTRACTOR, NOISE),
)
"""Every kind of answer, as the schema's CHECK lists their words."""

_BY_ANSWER = {kind.answer: kind for kind in KINDS}
_BY_WORD = {kind.word: kind for kind in KINDS}


def kind_of(answer: Answer, what: str = "an answer") -> Kind:
    """The kind of an answer (ValueError naming what it was meant to be, for anything else)."""
    if not is_answer(answer):
        raise ValueError(f"{what} must be 0 or 1 (or {UNSURE!r} or {DISTRACTOR!r}), not "
                         f"{answer!r}")
    return _BY_ANSWER[answer]


def kind_named(word: str) -> Kind:
    """The kind stored as ``word`` (ValueError naming the words there are, for any other)."""
    try:
        return _BY_WORD[word]
    except KeyError:
        raise ValueError(f"there is no answer {word!r}; the answers are "
                         f"{', '.join(_BY_WORD)}") from None


def stored(answer: Answer | None) -> str | None:
    """The word the session file keeps for an answer (None: no answer yet)."""
    return None if answer is None else kind_of(answer).word


def from_stored(word: str | None) -> Answer | None:
    """The answer a stored word stands for (None: no answer yet)."""
    return None if word is None else _BY_WORD[word].answer


def stored_from(verdict: Verdict | None, unsure: object, distractor: object = False
                ) -> str | None:
    """The stored word for an answer given as a verdict and "unsure" and "distractor" flags (as
    the check answers of files give it, and events written before the word)."""
    return stored(UNSURE if unsure else DISTRACTOR if distractor else verdict)


def word_of_state(state: Mapping[str, Any]) -> str | None:
    """The stored word of a decision as an event keeps it: ``answer`` since events store the
    word; before that, a verdict with "unsure" and "distractor" flags (the one reader of both)."""
    if "answer" in state:
        return cast(str | None, state["answer"])
    return stored_from(state.get("verdict"), state.get("unsure"), state.get("distractor"))


CODES: dict[str, int] = {kind.word: code for code, kind in enumerate(KINDS)}
"""Each kind's code in a column of answers (``LabelColumns.answer``): its place in KINDS."""


def code_sql(column: str) -> str:
    """SQL reading a stored word column as its kind's code (-1 where there is no answer)."""
    whens = " ".join(f"WHEN '{word}' THEN {code}" for word, code in CODES.items())
    return f"CASE {column} {whens} ELSE -1 END"


PAIRS = len(VALUES) ** 2
"""How many (human, judge) combinations there are: the size of a confusion table."""


def is_verdict(value: object) -> TypeGuard[Verdict]:
    """True when value is a verdict (an int in VALUES, not a bool)."""
    return type(value) is int and value in VALUES


def is_answer(value: object) -> TypeGuard[Answer]:
    """True when value is something a person may answer: a verdict, or a kind's word."""
    return value in _BY_ANSWER if isinstance(value, str) else is_verdict(value)


def checked(value: object, what: str = "a verdict") -> Verdict:
    """Return value as a verdict, or raise ValueError naming what it was meant to be."""
    if not is_verdict(value):
        raise ValueError(f"{what} must be 0 or 1, not {value!r}")
    return value


def name(verdict: Answer | None) -> str:
    """The verdict's word ("useful", "noise"), "unsure", or "pending" for no answer yet."""
    return "pending" if verdict is None else kind_of(verdict).word


def flipped(verdict: Verdict) -> Verdict:
    """The other verdict: what a person means by "flip" on a binary scale."""
    return USEFUL if verdict == NOISE else NOISE


def pair_index(human: Verdict, judge: Verdict) -> int:
    """The cell of a (human, judge) pair in a flat confusion table: tn, fp, fn, tp."""
    return human * len(VALUES) + judge
