"""The report as Rich tables (for a terminal or a text file) and as Markdown."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from annotator.report.layout import Block, Grid, Paragraphs, layout, report_title
from annotator.report.model import Report
from annotator.text import visible

NAME_WIDTH = 40
"""The longest first-column name kept whole on one line; a longer one folds."""


def rich_blocks(blocks: list[Block]) -> RenderableType:
    """Blocks as Rich renderables; text from the session is never read as markup."""
    parts: list[RenderableType] = []
    for block in blocks:
        if isinstance(block, Paragraphs):
            style = "bold" if block.id == "headline" else ""
            body = Text("\n").join(Text(visible(line), style=style) for line in block.lines)
            parts.append(Padding(Group(Text(visible(block.title), style="bold underline"), body),
                                 (0, 0, 1, 0)))
            continue
        # Titles and headers may hold names (a judge, a person): Text, never markup.
        table = Table(title=Text(visible(block.title), style="bold underline"),
                      title_justify="left",
                      show_header=any(block.columns), header_style="bold", box=None,
                      padding=(0, 2, 0, 0), show_edge=False)
        for i, column in enumerate(block.columns):
            # The first column names the row (a judge, a person, a pair on two lines): a name
            # is never split (up to NAME_WIDTH); the other columns wrap around it.
            names = i == 0
            longest = max((len(line) for row in block.rows if row
                           for line in visible(row[0]).split("\n")), default=0) if names else 0
            table.add_column(Text(visible(column)), style="bold" if i == 0 and block.id != "worst"
                             else None, overflow="fold",
                             min_width=min(longest, NAME_WIDTH) if names else None,
                             no_wrap=names and longest <= NAME_WIDTH)
        for row in block.rows:
            table.add_row(*(Text(visible(cell), style="dim" if cell.startswith("undefined")
                                 else "") for cell in row))
        notes = [Text(visible(note), style="yellow" if block.id == "people" else "italic")
                 for note in block.notes]
        parts.append(Padding(Group(table, *notes), (0, 0, 1, 0)))
    return Group(*parts)


def rich_report(report: Report) -> RenderableType:
    """The whole report for a terminal, the headline first."""
    return rich_blocks(layout(report))


def _md_text(text: str) -> str:
    """Escape what Markdown would otherwise read as markup in running text (and show control
    characters, which a terminal printing the Markdown would obey)."""
    out = visible(text).replace("\\", "\\\\")
    for char in "`*_[]<>#|":
        out = out.replace(char, "\\" + char)
    return out


def markdown_blocks(blocks: list[Block], title: str) -> str:
    """Blocks as Markdown (GitHub flavour), for a pull request or a wiki page."""
    out = [f"# {_md_text(title)}", ""]
    for block in blocks:
        out += [f"## {block.title}", ""]
        if isinstance(block, Paragraphs):
            out += [f"- {_md_text(line)}" for line in block.lines] + [""]
            continue
        assert isinstance(block, Grid)
        header = [c or " " for c in block.columns]
        out.append("| " + " | ".join(_md_text(c) for c in header) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        out += ["| " + " | ".join(_md_text(cell.replace("\n", " ")) for cell in row) + " |"
                for row in block.rows]
        out.append("")
        out += [f"_{_md_text(note)}_" for note in block.notes]
        if block.notes:
            out.append("")
    return "\n".join(out)


def markdown_report(report: Report) -> str:
    """The whole report as Markdown."""
    return markdown_blocks(layout(report), report_title(report))
