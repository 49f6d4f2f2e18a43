"""How often each judge was fooled by each kind of gullibility probe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.report.blocks import Block
from annotator.report.cells import probe_grid
from annotator.report.section import BoardSection
from annotator.scoring.probes import KIND_WORDS, KINDS

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard


def blocks(board: Leaderboard) -> list[Block]:
    """Each judge's rate per kind, when some judge was probed."""
    if not any(row.probes for row in board.judges):
        return []
    return [probe_grid("judges_probes", [(row.judge, row.probes) for row in board.judges])]


def headline(board: Leaderboard) -> list[str]:
    """Per kind of probe run, how often the judges probed were fooled, most fooled first."""
    lines = []
    for kind in KINDS:
        fooled = sorted(((row.probes[kind].rate.value or 0.0, row.judge) for row in board.judges
                         if kind in row.probes), key=lambda t: (-t[0], t[1]))
        if fooled:
            lines.append(f"On {kind} probes ({KIND_WORDS[kind]}), the share judged useful: "
                         + ", ".join(f"'{judge}' {rate:.0%}" for rate, judge in fooled) + ".")
    return lines


SECTION = BoardSection("probes", blocks, headline=headline)
