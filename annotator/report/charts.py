"""The report's charts, drawn with matplotlib as standalone SVG documents.

No pyplot (no global figure state, no GUI backend); text is drawn as paths, so an SVG needs
no font, and mathtext is off, so a '$' in a golden id is only a dollar sign.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from matplotlib import rc_context
from matplotlib.figure import Figure

from annotator.stats.confidence import ReliabilityBin
from annotator.stats.metrics import precision_at_k
from annotator.stats.stat import Stat
from annotator.text import shortened, visible

if TYPE_CHECKING:
    from annotator.report.inputs import GoldenRow
    from annotator.report.sections.chunks import RankRow
    from annotator.report.sections.errors import ErrorSlice
    from annotator.report.sections.reranking import RerankRow
    from annotator.report.sections.top_k import TopKRow

HUMAN = "#2f6db5"
JUDGE = "#d9822b"
RASTERIZE_ABOVE = 2000
"""Scatter plots with more points than this embed the points as an image, keeping files small."""
STYLE: Any = {"text.parse_math": False, "svg.hashsalt": "cp-annotator", "svg.fonttype": "path",
         "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    with rc_context(STYLE), warnings.catch_warnings():
        # Glyphs DejaVu Sans lacks (emoji, some scripts) are drawn as boxes, not warned about.
        warnings.simplefilter("ignore", UserWarning)
        yield Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Figure) -> str:
    """The figure as an SVG document (call inside ``_figure``, whose style it needs)."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def cp_scatter(rows: list[GoldenRow], pass_mark: float) -> str:
    """Context precision per golden, human labels (x) against judge labels (y)."""
    with _figure(5.2, 4.6) as fig:
        ax = fig.add_subplot()
        changed = [r for r in rows if r.passes_human != r.passes_judge]
        same = [r for r in rows if r.passes_human == r.passes_judge]
        raster = len(rows) > RASTERIZE_ABOVE
        ax.plot([0, 1], [0, 1], color="#999999", linewidth=1, linestyle="--", label="agreement")
        ax.axvline(pass_mark, color="#cccccc", linewidth=0.8)
        ax.axhline(pass_mark, color="#cccccc", linewidth=0.8)
        ax.scatter([r.human for r in same], [r.judge for r in same], s=18, alpha=0.6,
                   color=HUMAN, label="same pass/fail", rasterized=raster)
        ax.scatter([r.human for r in changed], [r.judge for r in changed], s=30, marker="D",
                   color="#c0392b", label="pass/fail changes", rasterized=raster)
        ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), xlabel="CP, human labels",
               ylabel="CP, judge labels", title=f"Context precision per golden (n = {len(rows)})")
        ax.legend(loc="lower right", fontsize=8, frameon=False)
        return _svg(fig)


def precision_at_k_bars(rows: list[GoldenRow], limit: int = 6) -> str:
    """Precision@k per rank under both label sets, one panel per golden (the worst first)."""
    shown = rows[:limit]
    columns = min(3, len(shown))
    lines = -(-len(shown) // columns)
    with _figure(3.2 * columns, 2.4 * lines) as fig:
        axes = fig.subplots(lines, columns, squeeze=False)
        for ax, row in zip(axes.ravel(), shown, strict=False):
            ranks = list(range(1, len(row.human_verdicts) + 1))
            width = 0.4
            ax.bar([k - width / 2 for k in ranks], precision_at_k(row.human_verdicts), width,
                   color=HUMAN, label="human")
            ax.bar([k + width / 2 for k in ranks], precision_at_k(row.judge_verdicts), width,
                   color=JUDGE, label="judge")
            ax.set(ylim=(0, 1.05), xticks=ranks, xlabel="rank", ylabel="precision@k")
            # An id is data: a control character in it would make the SVG invalid.
            title = shortened(visible(row.golden_id), 28)
            ax.set_title(f"{title}\nCP {row.human:.2f} vs {row.judge:.2f}", fontsize=8)
        for ax in axes.ravel()[len(shown):]:
            ax.set_visible(False)
        axes.ravel()[0].legend(fontsize=7, frameon=False)
        return _svg(fig)


def confusion_matrix(tp: int, fp: int, fn: int, tn: int) -> str:
    """The 2x2 table, rows human (truth), columns judge."""
    with _figure(3.6, 3.2) as fig:
        ax = fig.add_subplot()
        cells = [[tn, fp], [fn, tp]]
        ax.imshow(cells, cmap="Blues", vmin=0, vmax=max(1, tp, fp, fn, tn))
        top = max(1, tp, fp, fn, tn)
        for i, line in enumerate(cells):
            for j, count in enumerate(line):
                ax.text(j, i, str(count), ha="center", va="center", fontsize=13,
                        color="white" if count > top / 2 else "black")
        ax.set(xticks=[0, 1], yticks=[0, 1], xticklabels=["noise", "useful"],
               yticklabels=["noise", "useful"], xlabel="judge", ylabel="human (truth)",
               title="Confusion matrix")
        ax.spines[:].set_visible(False)
        return _svg(fig)


def agreement_by_rank(rows: list[RankRow]) -> str:
    """Percent agreement and Cohen's kappa at each rank."""
    with _figure(5.2, 3.0) as fig:
        ax = fig.add_subplot()
        ranks = [r.rank for r in rows]
        for key, label, color in (("percent", "percent agreement", HUMAN),
                                  ("cohen_kappa", "Cohen's kappa", JUDGE)):
            points = [(r.rank, v) for r in rows if (v := r.stats[key].value) is not None]
            ax.plot([k for k, _ in points], [v for _, v in points], marker="o", color=color,
                    label=label)
        ax.axhline(0, color="#cccccc", linewidth=0.8)
        ax.set(xticks=ranks, ylim=(-1.05, 1.05), xlabel="rank", title="Agreement by rank")
        ax.legend(fontsize=8, frameon=False, loc="lower left")
        return _svg(fig)


def reliability_diagram(bins: list[ReliabilityBin]) -> str:
    """Mean P(relevant) against the human relevant rate per bin, with chunk counts below."""
    with _figure(5.2, 4.6) as fig:
        top, bottom = fig.subplots(2, 1, height_ratios=[3, 1], sharex=True)
        filled = [b for b in bins if b.chunks and b.mean_p is not None]
        top.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1,
                 label="perfect calibration")
        top.plot([b.mean_p or 0.0 for b in filled], [b.human_rate or 0.0 for b in filled], marker="o",
                 color=JUDGE, label="judge")
        top.set(xlim=(0, 1), ylim=(-0.03, 1.03), ylabel="human relevant rate",
                title="Reliability of P(relevant)")
        top.legend(fontsize=8, frameon=False, loc="upper left")
        bottom.bar([(b.low + b.high) / 2 for b in bins], [b.chunks for b in bins],
                   width=1 / len(bins) * 0.9, color="#888888")
        bottom.set(xlabel="P(relevant)", ylabel="chunks")
        return _svg(fig)


def judges_forest(judges: list[tuple[str, Stat]], title: str) -> str:
    """Each judge's statistic with its 95% interval, one row per judge (the first at the top)."""
    shown = [(name, stat.value, stat.interval) for name, stat in judges if stat.value is not None]
    with _figure(5.2, 0.9 + 0.42 * max(1, len(shown))) as fig:
        ax = fig.add_subplot()
        for row, (_, point, interval) in enumerate(reversed(shown)):
            if interval is not None:
                ax.plot(interval, [row, row], color=HUMAN, linewidth=2.2)
            ax.plot([point], [row], marker="o", color=JUDGE)
        ax.set(yticks=range(len(shown)), yticklabels=[visible(name) for name, _, _ in reversed(shown)],
               ylim=(-0.7, len(shown) - 0.3), title=title)
        ax.axvline(0, color="#cccccc", linewidth=0.8)
        return _svg(fig)


def reranking_bars(rows: list[RerankRow]) -> str:
    """Mean CP under people's labels as retrieved, in the judge's order and in people's (the
    ceiling), for every golden and each system, with their intervals."""
    orders = (("as retrieved", "retrieved", "#999999"), ("judge's order", "judge", JUDGE),
              ("ceiling (people's order)", "ceiling", HUMAN))
    shown = [r for r in rows if r.goldens]
    with _figure(5.6, 1.3 + 0.75 * len(shown)) as fig:
        ax = fig.add_subplot()
        height = 0.8 / len(orders)
        for i, (label, field, color) in enumerate(orders):
            stats = [getattr(r, field) for r in shown]
            at = [n + (i - 1) * height for n in range(len(shown))]
            values = [s.value or 0.0 for s in stats]
            errors = [[v - (s.interval[0] if s.interval else v) for s, v in zip(stats, values,
                                                                                 strict=True)],
                      [(s.interval[1] if s.interval else v) - v for s, v in zip(stats, values,
                                                                                 strict=True)]]
            ax.barh(at, values, height=height, color=color, label=label, xerr=errors,
                    error_kw={"elinewidth": 0.8, "ecolor": "#444444"})
        ax.set_yticks(range(len(shown)),
                      [visible(shortened(r.system or "every system", 24)) for r in shown])
        ax.invert_yaxis()
        ax.set(xlim=(0, 1.05), xlabel="mean CP, people's labels",
               title="Reranking these chunks")
        fig.legend(fontsize=8, frameon=False, loc="outside lower center", ncols=len(orders))
        return _svg(fig)


def cp_at_k_curves(rows: list[TopKRow]) -> str:
    """Mean CP of the first k chunks against k, under people's labels and the judge's, over
    every golden (with intervals as bands)."""
    every = [r for r in rows if r.system is None]
    with _figure(5.2, 3.2) as fig:
        ax = fig.add_subplot()
        ks = [r.k for r in every]
        for field, label, color in (("cp_human", "human labels", HUMAN),
                                    ("cp_judge", "judge labels", JUDGE)):
            stats = [getattr(r, field) for r in every]
            ax.plot(ks, [s.value if s.value is not None else float("nan") for s in stats],
                    marker="o", color=color, label=label)
            bands = [(k, s.interval) for k, s in zip(ks, stats, strict=True) if s.interval]
            if bands:
                ax.fill_between([k for k, _ in bands], [i[0] for _, i in bands],
                                [i[1] for _, i in bands], color=color, alpha=0.15, linewidth=0)
        ax.set(xticks=ks, ylim=(-0.03, 1.03), xlabel="k (chunks kept)",
               ylabel="mean CP of the first k", title="Context precision at k")
        ax.legend(fontsize=8, frameon=False, loc="lower right")
        return _svg(fig)


def error_slices(slices: list[ErrorSlice]) -> str:
    """The judge's false-positive and false-negative rate in each slice, with intervals, beside
    its rate on the other chunks; a slice that stands out is drawn filled."""
    panels = (("false-positive rate", "fp_rate", "fp_rest", "fp_finding"),
              ("false-negative rate", "fn_rate", "fn_rest", "fn_finding"))
    with _figure(7.2, 1.1 + 0.24 * len(slices)) as fig:
        axes = fig.subplots(1, 2, sharey=True)
        names = [visible(shortened(f"{e.dimension}: {e.label}", 48)) for e in slices]
        for ax, (title, rate_field, rest_field, finding_field) in zip(axes, panels, strict=True):
            for row, e in enumerate(slices):
                rate, rest = getattr(e, rate_field), getattr(e, rest_field)
                if rate.value is None:
                    continue
                if rate.interval is not None:
                    ax.plot(rate.interval, [row, row], color=JUDGE, linewidth=1.6)
                standing = getattr(e, finding_field) is not None
                ax.plot([rate.value], [row], marker="o", color=JUDGE,
                        markerfacecolor=JUDGE if standing else "white")
                if rest.value is not None:
                    ax.plot([rest.value], [row], marker="|", color="#666666", markersize=9)
            ax.set(xlim=(-0.03, 1.03), title=title, ylim=(len(slices) - 0.5, -0.5))
        axes[0].set_yticks(range(len(slices)), names)
        fig.supxlabel("the slice (dot, 95% interval; filled: stands out) and every other "
                      "chunk (bar)", fontsize=8)
        return _svg(fig)


def judge_heatmap(names: list[str], kappa: list[list[float | None]]) -> str:
    """Every pair of judges' kappa as a heatmap: rows named, columns numbered as the rows."""
    n = len(names)
    side = max(3.0, 0.22 * n + 2.0)
    with _figure(side + 1.0, side) as fig:
        ax = fig.add_subplot()
        cells = [[float("nan") if k is None else k for k in row] for row in kappa]
        known = [k for row in kappa for k in row if k is not None] or [0.0]
        # The scale spans the pairs' kappas (the diagonal, a judge against itself, is blank).
        image = ax.imshow(cells, cmap="viridis", vmin=min(known), vmax=max(max(known),
                                                                           min(known) + 1e-9))
        ax.set(xticks=range(n), yticks=range(n), xticklabels=[str(i + 1) for i in range(n)],
               yticklabels=[f"{i + 1}. {shortened(visible(name), 40)}"
                            for i, name in enumerate(names)],
               title="Judges against each other: Cohen's kappa")
        ax.tick_params(labelsize=7 if n > 20 else 9)
        ax.spines[:].set_visible(False)
        fig.colorbar(image, ax=ax, shrink=0.6, label="kappa")
        return _svg(fig)
