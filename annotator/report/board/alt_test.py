"""Can a judge replace a person? The alternative annotator test, as a table and sentences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report.blocks import Block, Grid
from annotator.report.section import BoardSection
from annotator.stats.alt_test import RECOMMENDED_PEOPLE
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard
    from annotator.stats.alt_test import AltTest

MAX_NAMED = 5
"""The headline says this many judges' tests; the table has them all."""


def blocks(board: Leaderboard) -> list[Block]:
    """The table, when the test ran for some judge."""
    if not any(row.alt_test is not None and row.alt_test.why is None for row in board.judges):
        return []
    return [_table(board)]


def _table(board: Leaderboard) -> Block:
    """Each judge's alternative annotator test, on chunk verdicts and on each golden's CP."""
    def cells(test: AltTest | None, agreement: bool) -> list[str]:
        if test is None or test.why is not None:
            why = "unranked pool" if test is None else test.why
            return [f"undefined: {str(why).split(':')[0]}", "", "", *([""] if agreement else [])]
        out = ["yes" if test.passed else "no",
               f"{test.winning_rate:.2f} ({sum(p.rejected for p in test.people)} of "
               f"{len(test.people)})", f"{test.advantage_probability:.2f}"]
        if agreement:
            out.append(f"{test.judge_score:.0%} / {test.ceiling:.0%}")
        return out

    first = next(row.alt_test for row in board.judges
                 if row.alt_test is not None and row.alt_test.why is None)
    on_cp = [row.alt_test_cp for row in board.judges]
    ran_on_cp = any(test is not None and test.why is None for test in on_cp)
    cp = ["replaces (CP)", "winning rate (CP)", "advantage (CP)"] if ran_on_cp else []
    why_not_cp = next((test.why for test in on_cp if test is not None), None)
    return Grid(
        "alt_test", "Can the judge replace a person? (alternative annotator test)",
        ["judge", "replaces (chunks)", "winning rate", "advantage", "agrees: judge / person",
         *cp],
        [[row.judge, *cells(row.alt_test, True),
          *(cells(row.alt_test_cp, False) if ran_on_cp else [])]
         for row in board.judges],
        [*([] if ran_on_cp or why_not_cp is None else
           [f"On each golden's CP the test cannot run: {why_not_cp}."]),
         f"Each person held out in turn ({', '.join(board.people)}): the judge wins against "
         "that person when a one-sided t-test rejects that the person matches the remaining "
         f"people better by epsilon {first.epsilon:g} or more (Benjamini-Yekutieli, FDR "
         f"{first.alpha:g}); it replaces a person when it wins against half of them or more "
         "(Calderon, Reichart & Dror, ACL 2025). Advantage: the share of items where the judge "
         "matches the others at least as well as the held-out person, averaged over people; "
         "use it to compare judges.",
         "Agrees: how often the judge, and a held-out person, agree with the remaining "
         "people (the person's figure is the human-human ceiling). Chunks of one golden are "
         "not independent; the CP columns test each golden's CP (minus the RMSE against the "
         "others), where goldens are."])


def headline(board: Leaderboard) -> list[str]:
    """Whether each judge can replace a person (the first MAX_NAMED rows), or what the
    alternative annotator test is missing."""
    tests = [(row.judge, row.alt_test) for row in board.judges if row.alt_test is not None]
    if not tests:
        return []
    ran = [(judge, test) for judge, test in tests if test.why is None]
    if not ran:
        return [f"Can a judge replace a person? The alternative annotator test cannot say: "
                f"{tests[0][1].why}. Have two people or more label the same goldens "
                "('annotator annotate --annotator NAME', 'annotator merge', or 'annotator serve')."]
    lines = []
    for judge, test in ran[:MAX_NAMED]:
        people = len(test.people)
        lines.append(
            f"'{judge}' can replace a person at epsilon {test.epsilon:g}: "
            f"{'yes' if test.passed else 'no'}, winning rate {test.winning_rate:.2f} (it beats "
            f"{sum(p.rejected for p in test.people)} of {counted(people, 'person', 'people')}), "
            f"advantage probability {test.advantage_probability:.2f}; it agrees with the other "
            f"people on {test.judge_score:.0%} of chunks, a person on {test.ceiling:.0%} "
            "(the human-human ceiling).")
    if len(ran) > MAX_NAMED:
        lines.append(f"... and {counted(len(ran) - MAX_NAMED, 'more judge')}: the alternative "
                     "annotator test table has them all.")
    fewest = min(len(test.people) for _, test in ran)
    if fewest < RECOMMENDED_PEOPLE:
        lines.append(f"With {counted(fewest, 'person', 'people')} tested, the alternative "
                     "annotator test only asks which person a judge sides with; the paper "
                     f"recommends {RECOMMENDED_PEOPLE} or more.")
    return lines


SECTION = BoardSection("alt_test", blocks, headline=headline)
