"""The report as Rich tables (for a terminal or a text file) and as Markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from annotator.report.layout import Block, Grid, Paragraphs, layout, report_title
from annotator.report.model import Report
from annotator.text import counted, visible

NAME_WIDTH = 40
"""The longest first-column name kept whole on one line; a longer one folds."""


UNDEFINED = "undefined"


def _undefined_reason(cell: str) -> str | None:
    """Why a cell is undefined ('undefined: reason'), or None for a cell with a value."""
    if not cell.startswith(UNDEFINED):
        return None
    return cell[len(UNDEFINED):].lstrip(": ").strip() or "undefined"


def fold_undefined(grid: Grid) -> Grid:
    """The grid's rows that have a value, and one note on the rest: how many, and why.

    A narrow screen cannot afford a wrapped "undefined: reason" in every cell: a row with no
    value at all goes, a partly defined row keeps its values (its undefined cells read
    "undefined"), and the reasons are said once, most frequent first.
    """
    reasons: Counter[str] = Counter()
    rows: list[list[str]] = []
    dropped = 0
    for row in grid.rows:
        why = [_undefined_reason(cell) for cell in row[1:]]
        reasons.update(r for r in why if r is not None)
        if row[1:] and all(r is not None for r in why):
            dropped += 1
            continue
        rows.append([row[0], *(UNDEFINED if r is not None else cell
                                for cell, r in zip(row[1:], why, strict=True))])
    if not reasons:
        return grid
    said = "; ".join(f"{reason} ({n})" if n > 1 else reason
                     for reason, n in reasons.most_common())
    line = (f"{counted(dropped, 'row')} with no value left out. " if dropped else "") + \
        f"Undefined: {said}."
    return replace(grid, rows=rows, notes=[line, *grid.notes])


def rich_blocks(blocks: list[Block], *, narrow: bool = False) -> RenderableType:
    """Blocks as Rich renderables; text from the session is never read as markup.

    ``narrow`` (a screen below 100 columns) folds each table's undefined cells into one line.
    """
    parts: list[RenderableType] = []
    for block in blocks:
        if isinstance(block, Paragraphs):
            style = "bold" if block.id == "headline" else ""
            body = Text("\n").join(Text(visible(line), style=style) for line in block.lines)
            parts.append(Padding(Group(Text(visible(block.title), style="bold underline"), body),
                                 (0, 0, 1, 0)))
        else:
            parts.append(_rich_grid(fold_undefined(block) if narrow else block))
    return Group(*parts)


def _rich_grid(block: Grid) -> RenderableType:
    """One table with its notes below it."""
    # Titles and headers may hold names (a judge, a person): Text, never markup.
    table = Table(title=Text(visible(block.title), style="bold underline"),
                  title_justify="left",
                  show_header=any(block.columns), header_style="bold", box=None,
                  padding=(0, 2, 0, 0), show_edge=False)
    # The first column names the row (a judge, a person, a pair on two lines): a name is never
    # split (up to NAME_WIDTH); the other columns wrap around it.
    longest = max((len(line) for row in block.rows if row
                   for line in visible(row[0]).split("\n")), default=0)
    for i, column in enumerate(block.columns):
        names = i == 0
        table.add_column(Text(visible(column)), style="bold" if names and block.id != "worst"
                         else None, overflow="fold",
                         min_width=min(longest, NAME_WIDTH) if names else None,
                         no_wrap=names and longest <= NAME_WIDTH)
    for row in block.rows:
        table.add_row(*(Text(visible(cell), style="dim" if cell.startswith("undefined")
                             else "") for cell in row))
    notes = [Text(visible(note), style="yellow" if block.id == "people" else "italic")
             for note in block.notes]
    return Padding(Group(table, *notes), (0, 0, 1, 0))


def rich_report(report: Report, *, narrow: bool = False) -> RenderableType:
    """The whole report for a terminal, the headline first (see rich_blocks for ``narrow``)."""
    return rich_blocks(layout(report), narrow=narrow)


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
