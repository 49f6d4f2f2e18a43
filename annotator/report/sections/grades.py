"""Agreement on grades, on a graded session: the grade table, kappa, weighted kappa, alpha and
AC2 on the grades, kappa at every pair of thresholds, and how CP and kappa move with the
threshold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING
from annotator.report.blocks import Block, Grid
from annotator.report.cells import stat_rows, value
from annotator.report.inputs import Columns, Inputs
from annotator.report.jsonparts import stats_dict
from annotator.report.model import Report
from annotator.report.section import Section
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column
from annotator.stats.graded import GRADED_INTERVAL_FROM, GRADED_STATISTICS, binary_kappa
from annotator.stats.metrics import context_precision_by_golden
from annotator.stats.stat import Stat


@dataclass(frozen=True, slots=True)
class GradeSection:
    """Agreement on grades, on a graded session: the chunks both graded, by both."""

    top: int
    """Grades run 0 to top."""
    relevant_from: int
    """The lowest grade read as relevant (for CP and every binary statistic)."""
    names: list[str]
    """Each grade's name (TREC's words on a 0-3 scale)."""
    table: list[list[int]]
    """table[h][j]: chunks people graded h and the judge graded j."""
    stats: dict[str, Stat]
    """GRADED_STATISTICS, each with its golden-bootstrap interval."""
    thresholds: list[list[Stat]]
    """thresholds[a][b]: Cohen's kappa with people relevant from a + 1, the judge from b + 1."""
    best_judge_threshold: int | None
    """The judge's threshold agreeing best with people's at ``relevant_from`` (None: no kappa)."""
    sensitivity: list[tuple[int, Stat, float | None, float | None]]
    """Per threshold t (both sides): kappa, and mean CP under people's and the judge's grades
    (None where undefined, or on an unranked session)."""


Made = tuple[int, list[list[int]], list[tuple[int, float | None, float | None]]]
"""What prepare keeps: the number of grades, the grade table, and per threshold mean CP under
people's grades and the judge's."""


def _cell(h: int, j: int) -> str:
    return column(f"grade_{h}_{j}")


def prepare(inputs: Inputs, columns: Columns, sums: ClusterSums) -> Made | None:
    """Each golden's grade table (every person compared, against the judge), and mean CP at
    every threshold (ranked sessions)."""
    scale = inputs.scale
    if scale is None:
        return None
    q = scale.top + 1
    frame, said = columns.frame, columns.said
    table = np.zeros(q * q, dtype=np.int64)
    for labels in columns.people.values():
        both = (labels.grade != MISSING) & (said.grade != MISSING)
        code = labels.grade[both].astype(np.int64) * q + said.grade[both]
        cluster = frame.cluster[both]
        for cell in range(q * q):
            sums.add(_cell(cell // q, cell % q), cluster[code == cell])
        table += np.bincount(code, minlength=q * q)
    sensitivity = []
    for t in range(1, q):
        means: list[float | None] = [None, None]
        if not inputs.unranked:
            cps = []
            judge = np.where(said.grade == MISSING, MISSING, said.grade >= t)
            cp_j = context_precision_by_golden(judge.astype(np.int8), frame.sizes)
            for labels in columns.people.values():
                human = np.where(labels.grade == MISSING, MISSING, labels.grade >= t)
                cp_h = context_precision_by_golden(human.astype(np.int8), frame.sizes)
                complete = ~np.isnan(cp_h) & ~np.isnan(cp_j)
                cps.append((cp_h[complete], cp_j[complete]))
            h = np.concatenate([c[0] for c in cps]) if cps else np.zeros(0)
            j = np.concatenate([c[1] for c in cps]) if cps else np.zeros(0)
            if len(h):
                means = [float(h.mean()), float(j.mean())]
        sensitivity.append((t, means[0], means[1]))
    return q, table.reshape(q, q).tolist(), sensitivity


def _table(q: int) -> Callable[[Sums], np.ndarray]:
    """The grade table of the sums, with the replicates' axis first where there is one."""
    def of(s: Sums) -> np.ndarray:
        cells = np.stack([np.asarray(s[_cell(h, j)]) for h in range(q) for j in range(q)], -1)
        return cells.reshape(*cells.shape[:-1], q, q)
    return of


def data(inputs: Inputs, est: Estimates, made: Made | None) -> dict[str, Any]:
    """The grade section, each statistic with its golden-bootstrap interval."""
    scale = inputs.scale
    if made is None or scale is None:
        return {"grades": None}
    q, table, sensitivity = made
    of = _table(q)
    none = None if sum(map(sum, table)) else "no chunk is graded by both a person and the judge"

    def formula(statistic: Callable[[np.ndarray], np.ndarray]) -> Callable[[Sums], np.ndarray]:
        return lambda s: statistic(of(s))

    stats = {key: est.stat(key, formula(statistic), none, GRADED_INTERVAL_FROM)
             for key, statistic in GRADED_STATISTICS.items()}

    def at(a: int, b: int) -> Stat:
        return est.stat(f"kappa at thresholds {a}/{b}",
                        formula(lambda c: binary_kappa(c, a, b)), none, GRADED_INTERVAL_FROM)

    thresholds = [[at(a, b) for b in range(1, q)] for a in range(1, q)]
    mine = thresholds[scale.relevant_from - 1]
    defined = [(s.value, b) for b, s in enumerate(mine, 1) if s.value is not None]
    best = max(defined)[1] if defined else None
    return {"grades": GradeSection(
        scale.top, scale.relevant_from, [scale.name(g) for g in range(q)], table, stats,
        thresholds, best, [(t, thresholds[t - 1][t - 1], h, j) for t, h, j in sensitivity])}


def blocks(report: Report) -> list[Block]:
    """The statistics on grades, the grade table, kappa at each pair of thresholds, and the
    threshold sensitivity."""
    g = report.grades
    if g is None:
        return []
    grades = range(g.top + 1)
    scale = f"grades 0-{g.top}, relevant from {g.relevant_from}"
    out: list[Block] = [
        Grid("grades", f"Agreement on grades ({scale})", ["statistic", "value", "95% CI"],
             stat_rows(g.stats),
             ["Every chunk both a person and the judge graded; the golden bootstrap gives each "
              "interval. AC2 uses Gwet's quadratic weights."]),
        Grid("grade_table", "Grades: people (rows) against the judge (columns)",
             ["person \\ judge", *(f"{k} {g.names[k]}" if g.names[k] != str(k) else str(k)
                                   for k in grades)],
             [[f"{h} {g.names[h]}" if g.names[h] != str(h) else str(h),
               *(f"{n:,}" for n in g.table[h])] for h in grades]),
        Grid("thresholds", "Cohen's kappa at each pair of thresholds (relevant from)",
             ["people \\ judge", *(f"judge >= {b}" for b in range(1, g.top + 1))],
             [[f"people >= {a}", *(value(s) for s in row)]
              for a, row in enumerate(g.thresholds, 1)],
             [_best(g)] if g.best_judge_threshold is not None else []),
        Grid("sensitivity", "The threshold both sides read, and what it does",
             ["relevant from", "kappa", "mean CP, people", "mean CP, judge"],
             [[str(t), value(k), _cp(h), _cp(j)] for t, k, h, j in g.sensitivity],
             [] if report.goldens is not None else ["No CP on an unranked pool."]),
    ]
    return out


def _cp(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.4f}"


def _best(g: Any) -> str:
    """Which judge threshold agrees best with people's."""
    return (f"With people relevant from {g.relevant_from}, the judge agrees best read relevant "
            f"from {g.best_judge_threshold}.")


def json(report: Report) -> dict[str, Any]:
    """The grades object (absent on a binary session)."""
    g = report.grades
    if g is None:
        return {}
    return {"grades": {
        "scale": [0, g.top], "relevant_from": g.relevant_from, "names": g.names,
        "table": g.table, **stats_dict(g.stats),
        "kappa_by_thresholds": [[s.value for s in row] for row in g.thresholds],
        "best_judge_threshold": g.best_judge_threshold,
        "sensitivity": [{"relevant_from": t, "kappa": k.value, "mean_cp_human": h,
                         "mean_cp_judge": j} for t, k, h, j in g.sensitivity],
    }}


def headline(report: Report) -> list[str]:
    """Agreement on grades in one sentence."""
    g = report.grades
    if g is None or g.stats["kappa_quadratic"].value is None:
        return []
    line = (f"On grades 0-{g.top}: weighted kappa (quadratic) "
            f"{g.stats['kappa_quadratic'].format(4)}, Krippendorff's alpha (ordinal) "
            f"{g.stats['alpha_ordinal'].format(4)}; relevance starts at {g.relevant_from}.")
    if g.best_judge_threshold is not None and g.best_judge_threshold != g.relevant_from:
        line += " " + _best(g)
    return [line]


SECTION = Section("grades", blocks, json, headline, prepare, data)
