"""The one rule that keeps a judge's scores honest: it is never scored on a golden it saw.

A judge whose prompt showed chunks of the session as examples learned from those goldens; the
report and the leaderboard score it only on goldens it never saw. Examples come from the dev
split, so scoring on the test split is enough, as long as no example golden has since moved to
test (a split drawn again): that is refused loudly, never scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotator.errors import SessionError
from annotator.store.session import Session
from annotator.text import counted


@dataclass(frozen=True, slots=True)
class Unseen:
    """The goldens judges may be scored on, and what was left out."""

    golden_ids: list[str] | None
    """The goldens to score on; None: every golden in scope (no judge saw any)."""
    excluded: int = 0
    """Goldens in scope left out because a judge was shown them as examples."""
    note: str | None = None
    """The sentence saying so, for a headline."""


def unseen(session: Session, judges: Sequence[str], split: str) -> Unseen:
    """What ``judges`` may be scored on among the goldens of ``split`` ('test', 'dev', 'all').

    Raises SessionError when a judge saw a golden of the test split, or when judges with
    examples are to be scored on a session with no split.
    """
    examples = session.judge_examples()
    seen: dict[str, set[str]] = {name: {g for g, _, _ in examples[name]}
                                 for name in judges if examples.get(name)}
    if not seen:
        return Unseen(None)
    splits = session.splits()
    who = ", ".join(f"'{name}'" for name in seen)
    if not splits:
        raise SessionError(
            f"Judge {who} was shown chunks of this session as examples, so it may be scored "
            "only on goldens it never saw, and this session has no dev/test split saying which "
            "those are. Run 'annotator split SESSION --dev 0.3 --seed 1' (examples come from "
            "dev), or leave the judge out with --judge.")
    for name, goldens in seen.items():
        leaked = sorted(g for g in goldens if splits.get(g) == "test")
        if leaked:
            raise SessionError(
                f"Judge '{name}' learned from {counted(len(leaked), 'golden')} now in the test "
                f"split ({', '.join(leaked[:3])}{' ...' if len(leaked) > 3 else ''}): the split "
                "was drawn again after the judge ran, and its test scores would not be honest. "
                "Judge again under a new --name (its examples then come from the new dev "
                "split), or remove it with 'annotator remove-judge'.")
    every = set().union(*seen.values())
    scope = [g for g in session.golden_ids() if split == "all" or splits.get(g) == split]
    kept = [g for g in scope if g not in every]
    excluded = len(scope) - len(kept)
    note = None
    if excluded:
        note = (f"{counted(excluded, 'golden')} left out: {who} saw chunks of them as examples, "
                "and a judge is never scored on what it learned from.")
    return Unseen(kept, excluded, note)
