"""The leaderboard's columns: the one list the table, Markdown, HTML, CSV, JSON and --sort read.

Adding a statistic to the leaderboard is one line here (its formula lives in annotator.stats
and its display name in report.model.LABELS); a column the leaderboard cannot compute is a
KeyError when it is built, never a silently missing column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Column:
    """One statistic of a judge's row, the table it shows in, and which way is better."""

    key: str
    """The statistic's key: in CHUNK_STATISTICS for chunk columns, else the leaderboard's own."""
    table: Literal["chunks", "cp", "grades"]
    """'chunks': chunk-by-chunk agreement; 'cp': context precision per golden (none on an
    unranked pool); 'grades': agreement on grades (graded sessions only)."""
    better: Literal["higher", "lower"] | None = "higher"
    """The direction that ranks a judge first under --sort; None: not a sort key."""


COLUMNS: tuple[Column, ...] = (
    Column("cohen_kappa", "chunks"),
    Column("gwet_ac1", "chunks"),
    Column("percent", "chunks"),
    Column("precision", "chunks"),
    Column("recall", "chunks"),
    Column("mae", "cp", "lower"),  # a smaller mean |CP difference| is better
    Column("bias", "cp", None),
    Column("kendall", "cp", None),
    Column("systems_tau_b", "cp"),  # would the judge rank the retrievers as people do?
    Column("systems_tau_ap", "cp"),
    Column("reason_wrong", "chunks", "lower"),  # people marked its reason wrong on a right verdict
    Column("grade_kappa", "grades"),
    Column("kappa_linear", "grades"),
    Column("kappa_quadratic", "grades"),
    Column("alpha_ordinal", "grades"),
    Column("alpha_interval", "grades"),
    Column("alpha_nominal", "grades"),
    Column("gwet_ac2", "grades"),
)

MATRIX_UP_TO = 8
"""Judges up to which the text formats show the whole judge-against-judge matrix; past it, the
most and least alike pairs (the HTML draws the whole matrix as a heatmap either way)."""
SHOWN_PAIRS = 10
"""How many of the most (and of the least) alike pairs the text formats list past
MATRIX_UP_TO judges."""

CALL_SORTS: dict[str, Literal["higher", "lower"]] = {
    "cost_per_1000_chunks": "lower", "kappa_per_dollar": "higher"}
"""The figures of a judge's calls --sort accepts, and which way is better."""

SORT_KEYS: tuple[str, ...] = (*(c.key for c in COLUMNS if c.better is not None), *CALL_SORTS,
                              "judge")
"""What --sort accepts: every sortable column or cost figure, or the judge's name."""


def keys(table: str) -> list[str]:
    """The column keys shown in one table, in order."""
    return [c.key for c in COLUMNS if c.table == table]
