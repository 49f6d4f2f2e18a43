"""Which judge, which annotator: the one place a name given on the command line is resolved.

Every command that takes --judge or --annotator comes here, so each case has one sentence,
with what to do next, whichever command the person ran.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence

from annotator.errors import SessionError

NO_JUDGE = ("The session has no judge verdicts yet: run 'annotator judge' or import goldens with "
            "judge_verdicts first.")
NOBODY = "Nobody has labelled a chunk yet: annotate some goldens first ('annotator annotate SESSION')."


def _listed(names: Iterable[str]) -> str:
    return ", ".join(names) or "none yet"


def _nearest(name: str, names: Iterable[str]) -> str:
    """" Did you mean 'x'?" for a name close to one given, else nothing."""
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def judges_named(known: Mapping[str, int], wanted: Sequence[str]) -> list[str]:
    """The judges asked for, each of which must exist; none asked for means every judge that
    has a verdict (``known`` maps each judge to whether, or on how many chunks, it judged)."""
    if not known:
        raise SessionError(NO_JUDGE)
    if unknown := [name for name in wanted if name not in known]:
        which = ", ".join(f"'{name}'" for name in unknown)
        raise SessionError(f"The session has no judge named {which} (judges: {_listed(known)})."
                           + _nearest(unknown[0], known))
    if wanted:
        return list(wanted)
    if working := [name for name, judged in known.items() if judged]:
        return working
    raise SessionError(_none_judged(known))


def _none_judged(known: Mapping[str, int]) -> str:
    return (f"No judge of this session has a verdict yet (judges: {_listed(known)}): run "
            "'annotator judge' again, or remove one with 'annotator remove-judge SESSION NAME'.")


def judge_named(known: Mapping[str, int], judge: str) -> str:
    """The judge asked for, which must exist."""
    return judges_named(known, [judge])[0]


def one_judge(known: Mapping[str, int], judge: str | None, *, required: bool = True,
              ask: Callable[[Sequence[str]], str] | None = None) -> str | None:
    """The judge asked for, else the only one with verdicts, else the one ``ask`` picks.

    Judges without a verdict are never a default. With ``required=False`` a session without a
    judge that has verdicts gives None (a person may label blind).
    """
    if judge is not None:
        return judge_named(known, judge)
    working = [name for name, judged in known.items() if judged]
    if not working:
        if required:
            raise SessionError(_none_judged(known) if known else NO_JUDGE)
        return None
    if len(working) == 1:
        return working[0]
    if ask is not None:
        return ask(working)
    raise SessionError(f"The session has several judges ({', '.join(working)}); choose one with "
                       "--judge NAME.")


def alike(names: Iterable[str]) -> list[list[str]]:
    """Groups of names that differ only by case or spacing ('Alice', 'alice', 'ali ce'): most
    often one person written two ways, whose labels would count as two people's."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault("".join(name.casefold().split()), []).append(name)
    return [sorted(group) for group in groups.values() if len(group) > 1]


def annotator_named(people: Sequence[str], annotator: str) -> str:
    """The annotator asked for, who must have labelled something (a reader asked for a typo)."""
    if not annotator.strip():
        raise SessionError("The annotator's name is empty; pass --annotator NAME.")
    if annotator not in people:
        raise SessionError(f"Nobody called '{annotator}' has labelled this session"
                           + (f" (annotators: {', '.join(people)})." if people else
                              ": nobody has labelled it yet. Label some goldens first with "
                              f"'annotator annotate SESSION --annotator {annotator}'.")
                           + _nearest(annotator, people))
    return annotator


def epochs_named(known: Sequence[Mapping[str, object]], wanted: Sequence[str]) -> dict[str, str]:
    """Judge -> epoch for each --epoch given: EPOCH, or JUDGE=EPOCH where two judges share it;
    an epoch may be shortened to its first 4 or more characters while it stays unique.
    ``known``: every judge's epochs (Session.judge_epochs)."""
    chosen: dict[str, str] = {}
    for value in wanted:
        judge, _, prefix = value.rpartition("=")
        prefix = prefix.strip().lower()
        matches = [(str(e["judge"]), str(e["epoch"])) for e in known
                   if str(e["epoch"]).startswith(prefix) and judge in ("", e["judge"])]
        if len(prefix) < 4 or not matches:
            shown = "; ".join(f"'{e['judge']}': {e['epoch']}" for e in known) or "none yet"
            raise SessionError(
                f"No judge{f' named {judge!r}' if judge else ''} has an epoch starting "
                f"'{prefix}' (give 4 characters or more). Epochs: {shown}.")
        if len({j for j, _ in matches}) > 1:
            which = ", ".join(f"'{j}'" for j, _ in matches)
            raise SessionError(f"Epoch '{prefix}' is one of {which}: give it as JUDGE=EPOCH.")
        if len(matches) > 1:
            raise SessionError(f"'{prefix}' starts more than one epoch of '{matches[0][0]}': "
                               "give more of it.")
        chosen[matches[0][0]] = matches[0][1]
    return chosen
