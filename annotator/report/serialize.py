"""The report as JSON-ready data, with stable keys (bumped with SCHEMA_VERSION when they change).

A statistic is a number or null; beside each group of statistics, ``ci95`` holds the bootstrap
intervals and ``why_undefined`` the reason for every null.
"""

from __future__ import annotations

import csv
from typing import IO, TYPE_CHECKING, Any

from annotator.formats import csv_cell
from annotator.report.board import JSON_ORDER as BOARD_JSON_ORDER
from annotator.report.board import ordered as board_ordered
from annotator.report.model import Report
from annotator.report.sections import ordered
from annotator.scoring.probes import KINDS
from annotator.stats.stat import Stat

if TYPE_CHECKING:
    from annotator.report.leaderboard import Leaderboard
    from annotator.stats.alt_test import AltTest

SCHEMA_VERSION = 1


JSON_ORDER = ("coverage", "chunks", "goldens", "systems", "top_k", "reranking", "errors",
              "probes", "reasons", "people", "confidence", "raters", "ppi", "design")
"""The sections' keys in the order the JSON document has always had them (a section not named
here comes after, in reading order)."""


def report_dict(report: Report) -> dict[str, Any]:
    """Every number of the report as plain JSON-ready data: the report's own keys, then each
    section's."""
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session": report.session,
        "judge": report.judge,
        "annotators": report.annotators,
        "pass_mark": report.pass_mark,
        "convention": report.convention,
        "bootstrap": {"resamples": report.resamples, "seed": report.seed, "level": 0.95,
                      "unit": "golden", "dropped_replicates": report.dropped_replicates},
        "headline": report.headline,
    }
    for section in ordered(JSON_ORDER):
        out.update(section.json(report))
    return out


def leaderboard_dict(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as plain JSON-ready data: what it was scored on, then each section's
    keys."""
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session": board.session,
        "truth": {"source": board.truth.source, "adjudicated": board.truth.adjudicated,
                  "pending_adjudication": board.truth.pending},
        "split": board.split,
        "chunks": board.chunks,
        "goldens": board.goldens,
        "bootstrap": {"resamples": board.resamples, "seed": board.seed, "level": 0.95,
                      "unit": "golden", "paired": True},
        "sort": board.sort,
        "best": board.best,
        "headline": board.headline,
        "pairwise": board.pairwise,
        "left_out": board.left_out,
        "excluded_goldens": board.excluded,
        "group_by": board.group_by,
        **({"grades": {"scale": [0, board.scale.top],
                       "relevant_from": board.scale.relevant_from}} if board.scale else {}),
        **({"unranked": True} if board.unranked else {}),
    }
    for section in board_ordered(BOARD_JSON_ORDER):
        out.update(section.json(board))
    return out


def write_leaderboard_csv(board: Leaderboard, out: IO[str]) -> None:
    """One row per judge: every statistic with its interval, and the cost of its calls."""
    from annotator.report.leaderboard import CALL_FIGURES

    keys = list(board.judges[0].stats) if board.judges else []
    names = [row.judge for row in board.judges]
    kappa = {(a.first, a.second): a.kappa.value for a in board.agreement}
    kappa.update({(a.second, a.first): a.kappa.value for a in board.agreement})
    writer = csv.writer(out, lineterminator="\n")
    kinds = [k for k in KINDS if any(k in row.probes for row in board.judges)]
    writer.writerow(["judge", "prompt", "examples",
                     *(f"{k}{part}" for k in keys for part in ("", "_low", "_high")),
                     *(f"probe_{k}{part}" for k in kinds for part in ("", "_low", "_high")),
                     *ALT_TEST_COLUMNS, "calls", "failed_calls", *CALL_FIGURES,
                     *(csv_cell(f"kappa_with_{name}") for name in names)])
    for row in board.judges:
        probed = [row.probes[k].rate if k in row.probes else Stat.undefined("not probed")
                  for k in kinds]
        calls = row.calls
        writer.writerow([
            csv_cell(row.judge), csv_cell(calls.style), calls.examples,
            *_value_low_high([*(row.stats[k] for k in keys), *probed]),
            *_alt_test_cells(row.alt_test), *_alt_test_cells(row.alt_test_cp),
            calls.calls, calls.failed, *(_blank(calls.figures[k].value) for k in CALL_FIGURES),
            *("" if other == row.judge else _blank(kappa.get((row.judge, other)))
              for other in names)])


ALT_TEST_COLUMNS = tuple(f"alt_test{on}_{k}" for on in ("", "_cp")
                         for k in ("passed", "winning_rate", "advantage_probability"))


def _alt_test_cells(test: AltTest | None) -> list[object]:
    """The alternative annotator test's decision and figures ('' where it could not run)."""
    if test is None or test.why is not None:
        return ["", "", ""]
    return [test.passed, test.winning_rate, test.advantage_probability]


def _value_low_high(stats: list[Stat]) -> list[object]:
    """Each statistic as three cells: its value and its interval ('' where there is none)."""
    cells: list[object] = []
    for stat in stats:
        low, high = stat.interval or ("", "")
        cells += [_blank(stat.value), low, high]
    return cells


def _blank(value: float | None) -> object:
    """A number, or an empty cell for none."""
    return "" if value is None else value
