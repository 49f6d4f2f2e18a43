"""The report laid out as titled paragraphs and tables (report/blocks.py): each section's blocks
in reading order, and the judge leaderboard's. The Rich table, Markdown and HTML renderers only
turn these blocks into their own markup, so all three always say the same thing in the same
order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report.blocks import Block, Grid, Paragraphs
from annotator.report.board import BOARD_SECTIONS
from annotator.report.model import Report
from annotator.report.sections import SECTIONS

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard

__all__ = ["Block", "Grid", "Paragraphs", "layout", "leaderboard_layout", "report_title"]


def layout(report: Report) -> list[Block]:
    """Every block of the report, the headline first, then each section's."""
    blocks: list[Block] = [Paragraphs("headline", "Headline", report.headline)]
    for section in SECTIONS:
        blocks.extend(section.blocks(report))
    return [_without_empty_last_column(b) for b in blocks]


def report_title(report: Report) -> str:
    """The report's title, in every format."""
    return f"Judge '{report.judge}' against human labels"


def _without_empty_last_column(block: Block) -> Block:
    """Drop an interval column with nothing in it (no bootstrap), so no empty column shows."""
    if isinstance(block, Paragraphs) or not block.rows or any(row[-1] for row in block.rows):
        return block
    return Grid(block.id, block.title, block.columns[:-1], [row[:-1] for row in block.rows],
                block.notes)


def leaderboard_layout(board: Leaderboard) -> list[Block]:
    """The judge leaderboard as blocks: the headline, then each of its sections' blocks."""
    blocks: list[Block] = [Paragraphs("headline", "Headline", board.headline)]
    for section in BOARD_SECTIONS:
        blocks.extend(section.blocks(board))
    return [_without_empty_last_column(b) for b in blocks]


