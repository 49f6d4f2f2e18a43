"""Which judge, which annotator: the one place a name given on the command line is resolved.

Every command that takes --judge or --annotator comes here, so each case has one sentence,
with what to do next, whichever command the person ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from annotator.errors import SessionError

NO_JUDGE = ("The session has no judge verdicts yet: run 'annotator judge' or import goldens with "
            "judge_verdicts first.")
NOBODY = "Nobody has labelled a chunk yet: annotate some goldens first ('annotator annotate SESSION')."


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none yet"


def judges_named(known: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The judges asked for, each of which must exist; none asked for means every judge."""
    if not known:
        raise SessionError(NO_JUDGE)
    if unknown := [name for name in wanted if name not in known]:
        which = ", ".join(f"'{name}'" for name in unknown)
        raise SessionError(f"The session has no judge named {which} (judges: {_listed(known)}).")
    return list(wanted) if wanted else list(known)


def judge_named(known: Sequence[str], judge: str) -> str:
    """The judge asked for, which must exist."""
    return judges_named(known, [judge])[0]


def one_judge(known: Sequence[str], judge: str | None, *, required: bool = True,
              ask: Callable[[Sequence[str]], str] | None = None) -> str | None:
    """The judge asked for, else the only one, else the one ``ask`` picks (if given).

    With ``required=False`` a session without judges gives None (a person may label blind).
    """
    if judge is not None:
        return judge_named(known, judge)
    if not known:
        if required:
            raise SessionError(NO_JUDGE)
        return None
    if len(known) == 1:
        return known[0]
    if ask is not None:
        return ask(known)
    raise SessionError(f"The session has several judges ({', '.join(known)}); choose one with "
                       "--judge NAME.")


def annotator_named(people: Sequence[str], annotator: str) -> str:
    """The annotator asked for, who must have labelled something (a reader asked for a typo)."""
    if not annotator.strip():
        raise SessionError("The annotator's name is empty; pass --annotator NAME.")
    if annotator not in people:
        raise SessionError(f"Nobody called '{annotator}' has labelled this session"
                           + (f" (annotators: {', '.join(people)})." if people else "."))
    return annotator
