"""Chunks whose verdict changed between a judge's repeated runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report.blocks import Block, Grid
from annotator.report.section import BoardSection

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard


def blocks(board: Leaderboard) -> list[Block]:
    """Every unstable chunk of every judge, when there is one."""
    unstable = [(row.judge, *chunk) for row in board.judges for chunk in row.calls.unstable]
    if not unstable:
        return []
    return [Grid("unstable", "Unstable chunks: the verdict changed between runs",
                 ["judge", "golden", "rank", "verdict in each run"],
                 [[judge, golden, str(rank), " ".join(map(str, said))]
                  for judge, golden, rank, said in unstable])]


def headline(board: Leaderboard) -> list[str]:
    """A sentence for each judge whose verdicts changed between runs."""
    return [f"'{row.judge}' changed its verdict between runs on {len(row.calls.unstable)} "
            f"chunks (flip rate {row.calls.figures['flip_rate'].value:.1%})."
            for row in board.judges if row.calls.unstable]


SECTION = BoardSection("unstable", blocks, headline=headline)
