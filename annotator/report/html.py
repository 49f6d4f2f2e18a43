"""The report as one self-contained HTML file: tables plus charts, no script, no network.

Charts are matplotlib SVG documents embedded as data: URIs in <img> tags, so each chart is
isolated (no clashing ids) and the page works offline; a Content-Security-Policy forbids the
page from loading anything else.
"""

from __future__ import annotations

import base64
from html import escape
from typing import TYPE_CHECKING

from annotator.report import charts
from annotator.report.layout import Block, Grid, Paragraphs, layout, report_title
from annotator.report.model import Report
from annotator.text import visible

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard

def _h(text: str) -> str:
    """Text for the page: HTML-escaped, control characters shown (they are not valid HTML)."""
    return escape(visible(text))


CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.headline { background: #f4f6fa; border-left: 4px solid #2f6db5; padding: .6rem 1rem; }
.headline li { margin: .3rem 0; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { text-align: left; padding: .2rem .8rem .2rem 0; vertical-align: top;
         border-bottom: 1px solid #eee; overflow-wrap: anywhere; }
th { border-bottom: 2px solid #ccc; overflow-wrap: normal; hyphens: none; }
td.undefined { color: #888; }
p.note { color: #555; font-style: italic; margin: .3rem 0; }
figure { margin: 1rem 0; } figcaption { color: #555; font-size: .9rem; }
img.chart { max-width: 100%; height: auto; }
"""


def _chart(chart_id: str, svg: str, caption: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<figure id="chart-{chart_id}" class="chart"><img class="chart" alt="{_h(caption)}"'
            f' src="data:image/svg+xml;base64,{data}"><figcaption>{_h(caption)}</figcaption>'
            "</figure>")


def _block(block: Block) -> str:
    title = f"<h2>{_h(block.title)}</h2>"
    if isinstance(block, Paragraphs):
        css = ' class="headline"' if block.id == "headline" else ""
        items = "".join(f"<li>{_h(line)}</li>" for line in block.lines)
        return f'<section id="{block.id}">{title}<ul{css}>{items}</ul></section>'
    assert isinstance(block, Grid)
    head = ""
    if any(block.columns):
        head = "<thead><tr>" + "".join(f"<th>{_h(c)}</th>" for c in block.columns) + "</tr></thead>"
    body = "".join(
        "<tr>" + "".join(
            f'<td class="undefined">{_h(cell)}</td>' if cell.startswith("undefined")
            else f"<td>{_h(cell)}</td>" for cell in row) + "</tr>"
        for row in block.rows)
    notes = "".join(f'<p class="note">{_h(note)}</p>' for note in block.notes)
    return f'<section id="{block.id}">{title}<table>{head}<tbody>{body}</tbody></table>{notes}</section>'


def report_charts(report: Report) -> dict[str, str]:
    """Block id -> the chart(s) shown after that block."""
    c, g = report.chunks, report.goldens
    out: dict[str, str] = {}
    cf = c.confusion
    if cf.n:
        out["chunks"] = _chart("confusion", charts.confusion_matrix(cf.tp, cf.fp, cf.fn, cf.tn),
                               "Confusion matrix: rows are human labels (the truth), columns "
                               "the judge's verdicts.")
    if c.by_rank:
        out["by_rank"] = _chart("by-rank", charts.agreement_by_rank(c.by_rank),
                                "Percent agreement and Cohen's kappa at each rank.")
    if g is not None and g.per_golden:
        out["goldens"] = _chart("cp-scatter", charts.cp_scatter(g.per_golden, report.pass_mark),
                                "Context precision per golden under human labels (x) and judge "
                                "labels (y); the dashed line is perfect agreement.")
    if g is not None and g.worst:
        out["worst"] = _chart("precision-at-k",
                              charts.precision_at_k_bars([w.row for w in g.worst]),
                              "Precision@k at each rank under human and judge labels, for the "
                              "goldens with the largest difference.")
    if report.top_k is not None and report.top_k.rows:
        out["top_k"] = _chart("cp-at-k", charts.cp_at_k_curves(report.top_k.rows),
                              "Mean CP of each golden's first k chunks under human and judge "
                              "labels, over every golden, with 95% intervals.")
    if report.reranking and report.reranking[0].goldens:
        out["reranking"] = _chart("reranking", charts.reranking_bars(report.reranking),
                                  "Mean CP under people's labels as retrieved, in the judge's "
                                  "order and in people's own (the ceiling of any reranker), with "
                                  "95% intervals.")
    if report.errors is not None and report.errors.slices:
        out["errors"] = _chart("error-slices", charts.error_slices(report.errors.slices),
                               "The judge's error rates in each slice of the compared chunks, "
                               "with 95% intervals, beside the same rate on every other chunk.")
    if report.confidence is not None:
        out["reliability"] = _chart("reliability",
                                    charts.reliability_diagram(report.confidence.bins),
                                    "Reliability diagram: mean P(relevant) against the share of "
                                    "chunks people call relevant, per bin.")
    return out


def leaderboard_charts(board: Leaderboard) -> dict[str, str]:
    """Block id -> the chart shown after it: every judge's kappa with its paired interval."""
    if not board.judges:
        return {}
    kappas = [(row.judge, row.stats["cohen_kappa"]) for row in board.judges]
    out = {}
    if any(stat.value is not None for _, stat in kappas):
        out["judges"] = _chart("judges-kappa", charts.judges_forest(
            kappas, "Cohen's kappa against the truth, 95% interval"),
            "Each judge's Cohen's kappa (dot) with its 95% bootstrap interval (line), in the "
            "leaderboard's order.")
    if len(board.judges) > 1:
        names = [row.judge for row in board.judges]
        pairs = {(a.first, a.second): a.kappa.value for a in board.agreement}
        pairs.update({(a.second, a.first): a.kappa.value for a in board.agreement})
        matrix = [[None if a == b else pairs.get((a, b)) for b in names] for a in names]
        out["judge_agreement"] = _chart(
            "judge-heatmap", charts.judge_heatmap(names, matrix),
            "Every pair of judges' Cohen's kappa on the chunks both judged, people's labels "
            "aside; columns are the judges numbered as the rows.")
    return out


def html_report(report: Report) -> str:
    """The whole report as one HTML page."""
    return html_page(report_title(report), layout(report), report_charts(report))


def html_page(title: str, blocks: list[Block], figures: dict[str, str]) -> str:
    """Blocks as one self-contained page, each figure after the block with its id."""
    sections = []
    for block in blocks:
        sections.append(_block(block))
        if block.id in figures:
            sections.append(figures[block.id])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_h(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_h(title)}</h1>" + "".join(sections) + "</body></html>\n"
    )
