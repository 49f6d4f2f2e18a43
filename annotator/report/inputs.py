"""What every section's build reads: the session's columns for one judge and the label sets it
is compared with, read once by ``gather``.

Two parts, by how long they live. ``Columns`` holds the session's columns over every chunk (the
frame, the judge's verdicts, each person's labels): sections read them before the bootstrap and
``build_report`` lets them go before the bootstrap's weights arrive, so a section keeps nothing
of them. ``Inputs`` holds what lasts through the bootstrap: the compared pairs, the per-golden
rows, the systems, the options a person asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.columns import MISSING, ChunkFrame, JudgeColumns, LabelColumns
from annotator.errors import SessionError
from annotator.models import CHECKS_MIN, Scale
from annotator.scoring.gate import counted_people
from annotator.scoring.grouping import DEFAULT_GROUP_BY, system_values
from annotator.scoring.truth import answers, team_truth
from annotator.stats.bootstrap import ClusterSums, Estimates, Sums, column, confusion_formula
from annotator.stats.chunk_agreement import CHUNK_STATISTICS, Confusion
from annotator.stats.designs import DEFAULT_TARGET
from annotator.stats.metrics import context_precision_by_golden, passes
from annotator.stats.stat import Stat, ratio
from annotator.store.session import Session

NO_COMPLETE_GOLDEN = "no golden is complete under both label sets"


@dataclass(frozen=True, slots=True)
class GoldenRow:
    """One golden (for one annotator) complete under both label sets."""

    golden_id: str
    annotator: str
    human: float
    judge: float
    human_verdicts: tuple[int, ...]
    judge_verdicts: tuple[int, ...]
    passes_human: bool
    passes_judge: bool

    @property
    def difference(self) -> float:
        """CP(judge) - CP(human)."""
        return self.judge - self.human


@dataclass(frozen=True)
class Options:
    """What a person asked of the report, besides the judge."""

    pass_mark: float = 0.7
    worst: int = 10
    gold: bool = False
    annotators: tuple[str, ...] = ()
    """The people compared (empty: everyone)."""
    top_k: bool = False
    keep_share: float = 0.95
    target_width: float = DEFAULT_TARGET
    checks_min: float = CHECKS_MIN
    group_by: str | None = None
    relevant_from: int | None = None
    """On a graded session, the lowest relevant grade (None: the session's own)."""


@dataclass(frozen=True, eq=False)
class Compared:
    """One label set (a person's, or the team's) against the judge, as columns on the frame."""

    name: str
    human: np.ndarray
    blind: np.ndarray
    cp: np.ndarray
    """CP per golden under these labels (NaN while incomplete)."""
    unsure: np.ndarray
    """Chunks left without a label because someone answered unsure (not adjudicated)."""


@dataclass(frozen=True, eq=False)
class Columns:
    """The session's columns over every compared chunk: read before the bootstrap only."""

    frame: ChunkFrame
    said: JudgeColumns
    people: dict[str, LabelColumns]
    """The people compared (with ``gold``: everyone, whose labels make the team's truth)."""
    mine: list[Compared]
    """Each of those people against the judge."""
    sides: list[Compared]
    """The label sets the report compares: ``mine``, or with ``gold`` the team's truth alone."""


class ChunkPairs:
    """Every chunk decided by both, as parallel arrays (label set after label set)."""

    def __init__(self, row: np.ndarray, cluster: np.ndarray, rank: np.ndarray,
                 human: np.ndarray, judge: np.ndarray, p: np.ndarray) -> None:
        self.row = row.astype(np.int64)
        """The pair's chunk, as its row of the frame."""
        self.cluster = cluster.astype(np.int64)
        self.rank = rank.astype(np.int64)
        self.human = human.astype(np.int64)
        self.judge = judge.astype(np.int64)
        self.p = p.astype(float)

    @classmethod
    def of(cls, frame: ChunkFrame, said: JudgeColumns, sides: list[Compared]) -> ChunkPairs:
        """Collect the (human, judge) pairs of every label set."""
        both = [(side.human != MISSING) & (said.verdict != MISSING) for side in sides]

        def joined(per_side: Callable[[Compared], np.ndarray]) -> np.ndarray:
            parts = [per_side(side)[mask] for side, mask in zip(sides, both, strict=True)]
            return np.concatenate(parts) if parts else np.zeros(0)

        return cls(joined(lambda _: np.arange(len(frame))), joined(lambda _: frame.cluster),
                   joined(lambda _: frame.rank),
                   joined(lambda side: side.human), joined(lambda _: said.verdict),
                   joined(lambda _: said.p_relevant))


@dataclass(frozen=True, eq=False)
class Inputs:
    """What the sections read before and after the bootstrap."""

    session: Session
    judge: str
    options: Options
    names: list[str]
    """The compared label sets' names."""
    everyone: list[str]
    """Everyone who labelled the session and whose labels count (a gate leaves some out)."""
    golden_ids: list[str]
    cp_judge: np.ndarray
    """CP per golden under the judge's verdicts (NaN while incomplete)."""
    pairs: ChunkPairs
    rows: list[GoldenRow]
    system_of: dict[str, str]
    """Golden id -> system, when the compared goldens span two systems or more (else empty)."""
    systems_key: str
    scopes: list[tuple[str, np.ndarray]]
    """('' for every golden, then each system's name) with its goldens, as a mask."""
    sample: dict[str, Any] | None
    """The session's random sample, when one was drawn."""
    scale: Scale | None = None
    """A graded session's scale, at the threshold this report reads (None: binary)."""
    unranked: bool = False
    """The chunks are a pool with no order: no CP and nothing that needs an order."""

    @property
    def designed(self) -> bool:
        """Whether the sample was drawn by a stratified or active design (not uniform)."""
        return self.sample is not None and self.sample.get("design", "uniform") != "uniform"

    @property
    def scope_names(self) -> list[str]:
        """'' for every golden, then each system's name."""
        return [name for name, _ in self.scopes]


def gather(session: Session, judge: str, only: Sequence[str] | None, options: Options
           ) -> tuple[Inputs, Columns]:
    """Read the session's columns for ``judge`` (on the goldens ``only``, or all) and what the
    sections share of them."""
    frame = session.chunk_frame()
    if only is not None:
        keep = set(only)
        frame, _ = frame.only(np.asarray([g in keep for g in frame.golden_ids], dtype=bool))
    scale = session.scale()
    if scale is not None and options.relevant_from is not None:
        if not 1 <= options.relevant_from <= scale.top:
            raise SessionError(f"{session.where} grades 0 to {scale.top}: --relevant-from must "
                               f"be 1 to {scale.top}, not {options.relevant_from}.")
        scale = Scale(scale.top, options.relevant_from)
    elif scale is None and options.relevant_from is not None:
        raise SessionError(f"{session.where} holds no grades, so there is no threshold to move: "
                           "leave out --relevant-from.")
    threshold = None if scale is None else scale.relevant_from
    said = session.judge_columns(judge, frame, relevant_from=threshold)
    cp_judge = context_precision_by_golden(said.verdict, frame.sizes)
    # Everyone whose labels count: a qualification gate leaves out who has not passed it
    # (report/sections/gate.py says who and why); a person named is compared all the same.
    everyone = counted_people(session, session.annotators())
    chosen = everyone if options.gold or not options.annotators else list(options.annotators)
    people = {name: session.label_columns(name, frame, relevant_from=threshold)
              for name in chosen}
    mine, sides = _sides(session, frame, people, options.gold)
    rows = _golden_rows(frame, said, cp_judge, sides, options.pass_mark)
    system_of = _systems(session, options.group_by, rows)
    inputs = Inputs(session, judge, options, [side.name for side in sides], everyone,
                    frame.golden_ids, cp_judge, ChunkPairs.of(frame, said, sides), rows,
                    system_of, options.group_by or DEFAULT_GROUP_BY, _scopes(frame, system_of),
                    session.random_sample(), scale, session.unranked())
    return inputs, Columns(frame, said, people, mine, sides)


def _sides(session: Session, frame: ChunkFrame, people: dict[str, LabelColumns], gold: bool
           ) -> tuple[list[Compared], list[Compared]]:
    """Each person's labels against the judge, and the label sets the report compares: the
    same, or with ``gold`` the team's truth alone."""
    def compared(name: str, human: np.ndarray, blind: np.ndarray, unsure: np.ndarray
                 ) -> Compared:
        return Compared(name, human, blind, context_precision_by_golden(human, frame.sizes),
                        unsure)

    mine = [compared(name, c.verdict, c.blind, c.unsettled) for name, c in people.items()]
    if not gold:
        return mine, mine
    team = team_truth(frame, {p: answers(c) for p, c in people.items()},
                      session.gold_column(frame))
    return mine, [compared(team.label, team.verdict,
                           np.full(len(frame), MISSING, dtype=np.int8), team.unsure)]


def _golden_rows(frame: ChunkFrame, said: JudgeColumns, cp_judge: np.ndarray,
                 sides: list[Compared], pass_mark: float) -> list[GoldenRow]:
    """A row for each golden (per label set) complete under both label sets."""
    rows = []
    starts = frame.starts.tolist()
    sizes = frame.sizes.tolist()
    judged, judge_cp = said.verdict.tolist(), cp_judge.tolist()
    for side in sides:
        human, human_cp = side.human.tolist(), side.cp.tolist()
        for g in np.flatnonzero(~np.isnan(side.cp) & ~np.isnan(cp_judge)).tolist():
            cp_h, cp_j = human_cp[g], judge_cp[g]
            at = slice(starts[g], starts[g] + sizes[g])
            rows.append(GoldenRow(frame.golden_ids[g], side.name, cp_h, cp_j, tuple(human[at]),
                                  tuple(judged[at]), passes(cp_h, pass_mark),
                                  passes(cp_j, pass_mark)))
    return rows


def _systems(session: Session, group_by: str | None, rows: list[GoldenRow]) -> dict[str, str]:
    """Golden id -> system name, when the compared goldens span at least two systems."""
    _, system_of = system_values(session, group_by)
    if len({system_of[r.golden_id] for r in rows if r.golden_id in system_of}) < 2:
        return {}
    return {r.golden_id: system_of.get(r.golden_id, "(none)") for r in rows}


def _scopes(frame: ChunkFrame, system_of: dict[str, str]) -> list[tuple[str, np.ndarray]]:
    """('' for every golden, then each system's name) with its goldens, as a mask."""
    systems = np.asarray([system_of.get(g, "") for g in frame.golden_ids])
    return [("", np.ones(len(frame.golden_ids), dtype=bool)),
            *((name, systems == name) for name in sorted(set(system_of.values())))]


def add_per_golden(sums: ClusterSums, name: str, mine: np.ndarray,
                   values: np.ndarray | float = 1.0) -> None:
    """Add the per-golden values of the goldens in ``mine`` (a mask) to a column."""
    sums.add(name, np.flatnonzero(mine),
             values[mine] if isinstance(values, np.ndarray) else values)


def zero_columns(sums: ClusterSums, names: list[str]) -> None:
    """Make these columns, all zero: a report with nobody's labels yet still reads them."""
    for name in names:
        sums.add(name, np.zeros(0, dtype=np.int64))


def chunk_stat(est: Estimates, c: Confusion, key: str, prefix: str = "", *scopes: object
               ) -> Stat:
    """One statistic of CHUNK_STATISTICS on the confusion counts ``c``, with its interval from
    the confusion columns under ``prefix``, keyed in ``scopes`` (the leaderboard's: a judge;
    the guidelines section's: a version)."""
    statistic, formula = CHUNK_STATISTICS[key]
    return est.attach(column(key, *scopes), statistic(c), confusion_formula(formula, prefix))


def ratio_of(num: Callable[[Sums], np.ndarray], den: Callable[[Sums], np.ndarray]
             ) -> Callable[[Sums], np.ndarray]:
    """num / den as a statistic of the sums (NaN where den is 0)."""
    return lambda s: ratio(num(s), den(s))


def cp_columns(inputs: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each golden row's golden (as its index), CP under people's labels and under the judge's."""
    index = {g: i for i, g in enumerate(inputs.golden_ids)}
    rows = inputs.rows
    return (np.asarray([index[r.golden_id] for r in rows], dtype=np.int64),
            np.asarray([r.human for r in rows], dtype=float),
            np.asarray([r.judge for r in rows], dtype=float))
