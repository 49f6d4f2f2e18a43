"""Every format a report or a leaderboard is written in, from one Document.

The table (Rich), Markdown and HTML render the laid-out blocks (layout.py); JSON writes the
plain data (serialize.py); CSV writes the document's own rows where it has them. A new format
is one branch of ``write`` and one name in FORMATS.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotator.report.layout import Block
    from annotator.report.leaderboard import Leaderboard
    from annotator.report.model import Report

WIDE = 120
"""The width of a table written to a file or a pipe without $COLUMNS."""

FORMATS = ("table", "json", "markdown", "html", "csv")
"""What --format accepts for 'annotator report' and 'annotator judges'."""


@dataclass(frozen=True)
class Document:
    """What every format of one output is made from (the JSON data and charts made lazily)."""

    what: str
    """'report' or 'leaderboard', for messages."""
    title: str
    blocks: list[Block]
    data: Callable[[], dict[str, Any]]
    figures: Callable[[], dict[str, str]] = field(default=dict)
    csv: Callable[[IO[str]], object] | None = None


def write(document: Document, fmt: str, out: IO[str]) -> None:
    """Write the document in one of FORMATS to an open text stream."""
    if fmt == "table":
        from rich.console import Console

        from annotator.report.render import rich_blocks

        if out is sys.stdout and out.isatty():
            Console().print(rich_blocks(document.blocks))
        else:
            # Rich pads every line to the width with spaces; a file or a pipe gets each line as
            # long as its text.
            buffer = io.StringIO()
            Console(file=buffer, width=_width(), no_color=True, force_terminal=False).print(
                rich_blocks(document.blocks))
            out.writelines(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
    elif fmt == "json":
        from annotator.jsonout import write_json

        write_json(document.data(), out)
    elif fmt == "markdown":
        from annotator.report.render import markdown_blocks

        out.write(markdown_blocks(document.blocks, document.title) + "\n")
    elif fmt == "html":
        from annotator.report.html import html_page

        out.write(html_page(document.title, document.blocks, document.figures()))
    elif fmt == "csv" and document.csv is not None:
        document.csv(out)
    else:
        raise ValueError(f"no {fmt} form of the {document.what}")


def _width() -> int:
    """A file or a pipe gets $COLUMNS, else a wide layout: never the 80 columns Rich assumes
    when there is no terminal, which would cut tables mid-word."""
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return WIDE


def report_document(report: Report) -> Document:
    """The agreement report as a Document."""
    from annotator.report.layout import layout, report_title
    from annotator.report.serialize import report_dict

    def charts() -> dict[str, str]:
        from annotator.report.html import report_charts  # matplotlib: only for the HTML

        return report_charts(report)

    return Document("report", report_title(report), layout(report), lambda: report_dict(report),
                    charts)


def leaderboard_document(board: Leaderboard) -> Document:
    """The judge leaderboard as a Document."""
    from annotator.report.layout import leaderboard_layout
    from annotator.report.serialize import leaderboard_dict, write_leaderboard_csv

    def charts() -> dict[str, str]:
        from annotator.report.html import leaderboard_charts  # matplotlib: only for the HTML

        return leaderboard_charts(board)

    return Document("leaderboard", f"Judges against {board.truth.label}",
                    leaderboard_layout(board), lambda: leaderboard_dict(board), charts,
                    lambda out: write_leaderboard_csv(board, out))
