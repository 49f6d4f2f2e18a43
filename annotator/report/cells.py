"""How the report writes a statistic, a list of them and a few shared rows: the cells every
section's tables are made of (report/sections) and the leaderboard's too."""

from __future__ import annotations

from annotator.report.blocks import Grid
from annotator.report.model import LABELS, Report
from annotator.scoring.probes import KIND_WORDS, KINDS, ProbeRate
from annotator.stats.designs import more_needed
from annotator.stats.stat import Stat
from annotator.text import counted


def value(stat: Stat, digits: int = 4, *, short: bool = False) -> str:
    """A statistic's value in a cell, or 'undefined: reason' (see Stat.format)."""
    return stat.format(digits, style="cell", short=short)


def with_interval(stat: Stat, digits: int = 4) -> str:
    """'value [low, high]' in one cell (see Stat.format)."""
    return stat.format(digits, style="cell", interval=True)


def interval_text(stat: Stat, digits: int = 2, percent: bool = False) -> str:
    """'0.52 (95% CI 0.31 to 0.70)', or 'undefined (reason)' (see Stat.format)."""
    return stat.format(digits, interval=True, percent=percent)


def stat_rows(stats: dict[str, Stat], keys: list[str] | None = None) -> list[list[str]]:
    """One row a statistic: its name, its value, its interval."""
    return [[LABELS.get(k, k), value(stats[k]), stats[k].interval_text()] for k in keys or list(stats)]


def system_rows(systems: dict[str, Stat]) -> list[list[str]]:
    """One row per system's corrected mean CP."""
    return [[f"mean CP, {name}", value(stat), stat.interval_text()]
            for name, stat in systems.items()]


def verdict_string(verdicts: tuple[int, ...]) -> str:
    """'1 0 1 1 0'."""
    return " ".join(str(v) for v in verdicts)


def stopping(best: Stat, labelled: int, target: float) -> list[str]:
    """How far the sample is from its target half-width, in one sentence (none without an
    interval)."""
    if best.interval is None:
        return []
    half = (best.interval[1] - best.interval[0]) / 2
    if half <= target:
        return [f"Target reached: the interval is +-{half:.3f}, within +-{target:g} "
                "(--target-width)."]
    more = more_needed(labelled, half, target)
    return [f"The interval is +-{half:.3f} on {counted(labelled, 'labelled golden')}: about "
            f"{more:,} more for +-{target:g} (--target-width), from the spread seen so far."]


def probe_grid(block_id: str, judges: list[tuple[str, dict[str, ProbeRate]]]) -> Grid:
    """Each judge's false-positive rate on each kind of probe run (a column per kind)."""
    kinds = [k for k in KINDS if any(k in rates for _, rates in judges)]
    return Grid(
        block_id, "Gullibility probes: the share of probes judged useful (every probe is noise)",
        ["judge", *kinds],
        [[name, *(f"{with_interval(rates[k].rate, 3)} of {rates[k].probes}" if k in rates
                  else "-" for k in kinds)] for name, rates in judges],
        [f"{kind}: {KIND_WORDS[kind]}." for kind in kinds]
        + ["Made with 'annotator probe'; kept apart from the chunks, so no other figure "
           "includes a probe. 95% Wilson intervals."])


def who(report: Report) -> str:
    """'alice', 'alice and bob', or 'nobody yet'."""
    if not report.annotators:
        return "nobody yet"
    if len(report.annotators) == 1:
        return report.annotators[0]
    return ", ".join(report.annotators[:-1]) + " and " + report.annotators[-1]


def k_text(k: int | None) -> str:
    """A k, or '-' for none."""
    return "-" if k is None else str(k)


def yes(flag: bool | None) -> str:
    """'yes', 'no', or '-' for not known."""
    return "-" if flag is None else ("yes" if flag else "no")


def board_cell(stat: Stat, digits: int = 3) -> str:
    """A leaderboard cell: the value with its interval, or why it is undefined."""
    return with_interval(stat, digits) if stat.value is not None else value(stat, short=True)
