"""Opening the annotation or adjudication screen on an open session: what `annotator annotate`
and each tab of `annotator serve` do once they know who, which judge and which goldens."""

from __future__ import annotations

from collections.abc import Sequence

from annotator.models import CHECKS_MIN
from annotator.people.assignment import Quota
from annotator.people.presence import one_screen
from annotator.scoring.checks import Check
from annotator.store.session import Session
from annotator.text import counted

SCREEN_BUSY_S = 2.0
"""How long a key on a screen waits for a file another command is writing, before it says so
(and keeps the decision pending) instead of freezing the screen."""


def run_screen(session: Session, annotator: str, judge: str | None, *, pass_mark: float,
               blind_rate: float, only: Sequence[str] | None, adjudicate: bool,
               checks: Sequence[Check] = (), check_rate: float = 0.0,
               checks_min: float = CHECKS_MIN, quota: Quota | None = None) -> str:
    """Run the screen until the person quits; return the sentence saying what is stored. A
    second screen under the same name on the session is refused (ScreenInUse)."""
    with one_screen(session.place, annotator, "adjudicate" if adjudicate else "annotate"):
        return _run(session, annotator, judge, pass_mark=pass_mark, blind_rate=blind_rate,
                    only=only, adjudicate=adjudicate, checks=checks, check_rate=check_rate,
                    checks_min=checks_min, quota=quota)


def _run(session: Session, annotator: str, judge: str | None, *, pass_mark: float,
         blind_rate: float, only: Sequence[str] | None, adjudicate: bool,
         checks: Sequence[Check], check_rate: float, checks_min: float,
         quota: Quota | None) -> str:
    if adjudicate:
        from annotator.people.adjudication import Adjudication
        from annotator.tui.app import AdjudicatorApp

        adjudication = Adjudication(session, annotator)
        AdjudicatorApp(adjudication, session.name).run()
        return (f"Gold labels on {adjudication.settled:,} of "
                f"{counted(len(adjudication.disputes), 'disputed chunk')}; every one is in "
                f"{session.where}.")
    from annotator.people.review import Review
    from annotator.tui.app import AnnotatorApp

    # count=False: the screen paints the golden first and reads the totals in a worker.
    review = Review(session, annotator, judge, blind_rate=blind_rate, pass_mark=pass_mark,
                    only=only, count=False, checks=checks, check_rate=check_rate,
                    checks_min=checks_min, quota=quota)
    try:
        AnnotatorApp(review, session.name).run()
    finally:
        review.leave()  # the golden not finished goes back to the pool, however the app ended
    review.remember_position()  # the chunk under the cursor, to reopen there
    done = (f"{review.chunks_decided:,} of {counted(review.total_chunks, 'chunk')} decided "
            f"by {annotator}; every" if review.totals_known else "Every")
    return f"{done} decision is in {session.where}."
