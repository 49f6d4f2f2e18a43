"""Pairs of judges: who is right where the other is wrong (cluster-adjusted McNemar,
Holm-corrected), and the best judge, if one beats every other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotator.report import columns
from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.cells import value, with_interval
from annotator.report.jsonparts import stats_dict
from annotator.report.section import BoardSection
from annotator.text import counted

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard

MAX_BEATS = 5
"""The headline names this many pairs a test separates; the table has them all."""


def blocks(board: Leaderboard) -> list[Block]:
    """The pairs a test separates (every pair with --all-pairs), when there are pairs."""
    return [_table(board)] if board.pairs else []


def _table(board: Leaderboard) -> Block:
    """Who is right where the other is wrong, Holm-corrected: the pairs a test separates
    (every pair with --all-pairs)."""
    own = ["chunks"] if board.pairwise else []
    shown = board.pairs if board.all_pairs else [p for p in board.pairs if p.better]
    left = len(board.pairs) - len(shown)
    note = ([f"{counted(left, 'pair')} no test separates {'is' if left == 1 else 'are'} left "
             "out; --all-pairs lists every pair (JSON and CSV hold them all)."] if left else [])
    # Many pairs: one line each (a pair's two names still never break: see render).
    joint = " vs " if len(shown) > columns.SHOWN_PAIRS else "\nvs "
    if not shown:
        return Paragraphs("pairs", "Pairs: who is right where the other is wrong", [
            f"No test separates any of the {counted(len(board.pairs), 'pair')} of judges "
            "(cluster-adjusted McNemar, Holm-corrected): --all-pairs lists them."])
    return Grid(
        "pairs", "Pairs: who is right where the other is wrong",
        ["pair", *own, "first only right", "second only right", "kappa difference",
         "McNemar p (cluster)", "Holm p", "verdict"],
        [[f"{p.first}{joint}{p.second}", *([f"{p.chunks:,}"] if own else []),
          str(p.first_only_right), str(p.second_only_right),
          with_interval(p.kappa_difference, 3), value(p.p, 4, short=True),
          value(p.p_holm, 4, short=True),
          f"{p.better} is better" if p.better else "no significant difference"]
         for p in shown], note)


def json(board: Leaderboard) -> dict[str, Any]:
    """Every pair, tested."""
    return {"pairs": [{"first": p.first, "second": p.second, "chunks": p.chunks,
                       "first_only_right": p.first_only_right,
                       "second_only_right": p.second_only_right, "better": p.better,
                       **stats_dict({"kappa_difference": p.kappa_difference, "mcnemar_p": p.p,
                                     "holm_p": p.p_holm})} for p in board.pairs]}


def headline(board: Leaderboard) -> list[str]:
    """The best judge, or that none is; then the pairs a test separates."""
    lines = []
    if board.best is not None:
        lines.append(f"Best: '{board.best}', right significantly more often than every other "
                     "judge (cluster-adjusted McNemar, Holm-corrected, p < 0.05).")
    elif len(board.judges) > 1:
        lines.append("No judge is right significantly more often than every other one: the "
                     "gaps below may be noise; label more goldens to tell them apart.")
    separated = [pair for pair in board.pairs if pair.better is not None]
    for pair in separated[:MAX_BEATS]:
        worse = pair.second if pair.better == pair.first else pair.first
        lines.append(f"'{pair.better}' beats '{worse}' (Holm p = {pair.p_holm.value:.3g}).")
    if len(separated) > MAX_BEATS:
        lines.append(f"... and {counted(len(separated) - MAX_BEATS, 'more pair')} a test "
                     "separates: the pairs table lists them.")
    return lines


SECTION = BoardSection("pairs", blocks, json, headline)
