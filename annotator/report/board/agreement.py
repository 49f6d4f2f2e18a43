"""Judges against each other (no person involved): do they fail alike? A matrix of Cohen's
kappa, or past MATRIX_UP_TO judges the most and least alike pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotator.report import columns
from annotator.report.blocks import Block, Grid
from annotator.report.cells import value
from annotator.report.jsonparts import stats_dict
from annotator.report.section import BoardSection
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard


def blocks(board: Leaderboard) -> list[Block]:
    """The matrix (or the alike pairs), when there are two judges or more."""
    return [_matrix(board)] if len(board.judges) > 1 else []


def _matrix(board: Leaderboard) -> Block:
    """Each pair of judges' kappa, columns numbered as the rows; past MATRIX_UP_TO judges
    (unless --all-pairs) the most and least alike pairs only, a list that stays readable."""
    names = [row.judge for row in board.judges]
    if len(names) > columns.MATRIX_UP_TO and not board.all_pairs:
        return _alike_pairs(board)
    kappa = {(a.first, a.second): a for a in board.agreement}
    kappa.update({(a.second, a.first): a for a in board.agreement})
    # Columns by number, rows by number and name: a name is never cut to a column's width.
    return Grid(
        "judge_agreement", "Judges against each other: Cohen's kappa",
        ["judge", *map(str, range(1, len(names) + 1))],
        [[f"{i}. {a}", *("-" if a == b else value(kappa[a, b].kappa, 3, short=True)
                         for b in names)] for i, a in enumerate(names, 1)],
        ["On the chunks both judges judged, people's labels aside: two judges with a "
         "high kappa between them tend to fail on the same chunks. Columns are the judges "
         "numbered as the rows."])


def _alike_pairs(board: Leaderboard) -> Block:
    """The SHOWN_PAIRS most and least alike pairs of judges, by their kappa."""
    ranked = sorted((a for a in board.agreement if a.kappa.value is not None),
                    key=lambda a: (-(a.kappa.value or 0.0), a.first, a.second))
    n = columns.SHOWN_PAIRS
    shown = ranked if len(ranked) <= 2 * n else [*ranked[:n], *ranked[-n:]]
    undefined = len(board.agreement) - len(ranked)
    return Grid(
        "judge_agreement", f"Judges against each other: the {n} most and {n} least alike pairs",
        ["pair", "Cohen's kappa", "chunks"],
        [[f"{a.first}\nvs {a.second}", value(a.kappa, 3, short=True), f"{a.chunks:,}"]
         for a in shown],
        [f"Of {counted(len(board.agreement), 'pair')} of judges ({len(board.judges)} judges), "
         "by their kappa on the chunks both judged, people's labels aside: two judges alike "
         "tend to fail on the same chunks. --all-pairs shows the whole matrix; the HTML draws "
         "it as a heatmap."
         + (f" {counted(undefined, 'pair')} with no kappa left out." if undefined else "")])


def json(board: Leaderboard) -> dict[str, Any]:
    """Every pair of judges' kappa."""
    return {"judge_agreement": [{"first": a.first, "second": a.second, "chunks": a.chunks,
                                 **stats_dict({"cohen_kappa": a.kappa})}
                                for a in board.agreement]}


SECTION = BoardSection("agreement", blocks, json)
