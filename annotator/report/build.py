"""Build the agreement report from a session file: one judge against one or more annotators.

Everything is computed from the session in a few queries, then as per-golden sums, so the
cluster bootstrap (goldens resampled, never chunks) costs a few matrix products.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np

from annotator import checks
from annotator.checks import CheckScore
from annotator.columns import MISSING, ChunkFrame, JudgeColumns, LabelColumns, action_code
from annotator.grouping import DEFAULT_GROUP_BY, system_values
from annotator.lexical import content_words, overlap
from annotator.memory import give_back
from annotator.models import CHECKS_MIN
from annotator.probes import probe_rates
from annotator.report.headline import headline
from annotator.report.model import (
    AnnotatorCoverage,
    AnnotatorRow,
    BlindRow,
    ChunkSection,
    ConfidenceSection,
    Coverage,
    ErrorSection,
    ErrorSlice,
    GoldenRow,
    GoldenSection,
    PeopleSection,
    RankRow,
    ReasonCheck,
    Report,
    RerankRow,
    SystemPair,
    SystemRow,
    SystemSection,
    TopKRow,
    TopKSection,
    WorstGolden,
)
from annotator.resolve import one_judge
from annotator.sampling import design_section
from annotator.stats import confidence, cp_agreement
from annotator.stats.bootstrap import (
    COUNTS,
    ClusterSums,
    Estimates,
    Sums,
    add_confusion,
    column,
    confusion_formula,
)
from annotator.stats.chunk_agreement import (
    CHUNK_STATISTICS,
    ChunkAgreement,
    Confusion,
    McNemar,
    cohen_kappa,
    direction,
    gwet_ac1,
    kappa_paradox_note,
    percent_agreement,
    wilson_interval,
)
from annotator.stats.comparison import BlindSummary
from annotator.stats.designs import DEFAULT_TARGET, DesignSection
from annotator.stats.metrics import CONVENTION_RAGAS, context_precision_by_golden, passes
from annotator.stats.multiple import holm_rejects
from annotator.stats.ppi import PpiEstimate, ppi_estimate
from annotator.stats.raters import RaterColumns, add_rater_columns, rater_agreement
from annotator.stats.reranking import captured, reordered_cp
from annotator.stats.slices import Bins, quartile_bins, rank_bins, testable, wald_p
from annotator.stats.stat import Stat, ratio
from annotator.stats.systems import ranking_agreement
from annotator.stats.topk import first_k, smallest_k
from annotator.store.session import Session
from annotator.text import counted
from annotator.truth import answers, team_truth
from annotator.unseen import unseen

FAST_ACCEPT_MS = 1500.0
"""An accept faster than this is too quick to have read the chunk."""
RUBBER_STAMP_RUN = 20
"""This many fast accepts in a row earns a rubber-stamping warning."""
NO_COMPLETE_GOLDEN = "no golden is complete under both label sets"
SHOWN_ACTIONS = ("accept", "flip", "set")
"""Decisions made with the judge's verdict on screen (an import shows nothing)."""


def choose_judge(session: Session, judge: str | None) -> str:
    """The judge asked for (which must exist), or the only one (see annotator.resolve)."""
    chosen = one_judge(session.judges_judged(), judge)
    assert chosen is not None  # required: no judge raises
    return chosen


@dataclass(frozen=True, eq=False)
class _Compared:
    """One label set (a person's, or the team's) against the judge, as columns on the frame."""

    name: str
    human: np.ndarray
    blind: np.ndarray
    cp: np.ndarray
    """CP per golden under these labels (NaN while incomplete)."""
    unsure: np.ndarray
    """Chunks left without a label because someone answered unsure (not adjudicated)."""


def build_report(
    session: Session,
    *,
    judge: str | None = None,
    annotators: Sequence[str] | None = None,
    pass_mark: float = 0.7,
    resamples: int = 2000,
    seed: int | None = 0,
    group_by: str | None = None,
    worst: int = 10,
    gold: bool = False,
    top_k: bool = False,
    keep_share: float = 0.95,
    target_width: float = DEFAULT_TARGET,
    checks_min: float = CHECKS_MIN,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """The agreement report for one judge against the given annotators (default: everyone), or
    with ``gold`` against the team's gold labels (adjudicated, else what everyone agrees on);
    ``top_k`` adds the cut to the first k chunks, for every k, and the smallest k keeping
    ``keep_share`` of the relevant chunks; a person below ``checks_min`` on attention checks
    is warned of."""
    judge = choose_judge(session, judge)
    scope = unseen(session, [judge], "test")  # a judge shown examples: the test split only
    frame = session.chunk_frame()
    if scope.golden_ids is not None:
        keep = set(scope.golden_ids)
        frame, _ = frame.only(np.asarray([g in keep for g in frame.golden_ids], dtype=bool))
    said = session.judge_columns(judge, frame)
    cp_judge = context_precision_by_golden(said.verdict, frame.sizes)
    golden_ids = frame.golden_ids

    everyone = session.annotators()
    people = {name: session.label_columns(name, frame)
              for name in (everyone if gold or not annotators else annotators)}

    mine, sides = _sides(session, frame, people, gold)
    names = [side.name for side in sides]

    sums = ClusterSums(len(golden_ids))
    pairs = _ChunkPairs.of(frame, said, sides)
    add_confusion(sums, pairs.cluster, pairs.human, pairs.judge)
    rows = _golden_rows(frame, said, cp_judge, sides, pass_mark)
    systems_key = group_by or DEFAULT_GROUP_BY
    system_of = _systems(session, group_by, rows)
    _add_golden_columns(sums, rows, {g: i for i, g in enumerate(golden_ids)}, system_of)
    scopes = _scopes(frame, system_of)
    _add_rerank_columns(sums, frame, said, cp_judge, sides, scopes)
    longest = _add_top_k_columns(sums, frame, said, cp_judge, sides, scopes) if top_k else 0
    slicing = _slicing(session, frame, pairs, systems_key, system_of)
    _add_error_columns(sums, pairs, slicing)
    has_p = ~np.isnan(pairs.p)
    if has_p.any():
        confidence.add_columns(sums, pairs.cluster[has_p], pairs.p[has_p],
                                pairs.human[has_p].astype(float))
    rater_columns = None
    if len(everyone) > 1:
        every_label = {p: (people[p] if p in people else session.label_columns(p, frame)).verdict
                       for p in everyone}
        rater_columns = _add_rater_columns(sums, everyone, every_label, said, frame, judge)
        del every_label

    coverage = _coverage(frame, said, sides, pairs, rows)
    people_section = _people(frame, said, people, mine, checks.scores(session), checks_min)
    sample = session.random_sample()
    designed = (sample is not None and sample.get("design", "uniform") != "uniform")
    ppi = None if designed else _ppi(session, rows, golden_ids, cp_judge, pass_mark, group_by)
    design = (_design(sample, rows, golden_ids, cp_judge, pass_mark, target_width)
              if designed and sample is not None else None)
    # The session's columns are done with: let them go before the bootstrap's weights arrive.
    del frame, said, people, mine, sides
    give_back()
    estimates = Estimates(sums, resamples, seed, progress)
    chunks = _chunk_section(estimates, pairs, sums)
    goldens = _golden_section(session, estimates, rows, worst)
    systems = _system_section(estimates, systems_key, rows, system_of) if system_of else None
    scope_names = [name for name, _ in scopes]
    reranking = _reranking(estimates, scope_names)
    cut = _top_k(estimates, scope_names, longest, keep_share) if top_k else None
    report = Report(
        session=str(session.path),
        judge=judge,
        annotators=names,
        pass_mark=pass_mark,
        resamples=resamples,
        seed=seed,
        convention=CONVENTION_RAGAS,
        coverage=coverage,
        chunks=chunks,
        goldens=goldens,
        systems=systems,
        reranking=reranking,
        people=people_section,
        confidence=_confidence(estimates, pairs) if has_p.any() else None,
        headline=[],
        dropped_replicates=estimates.dropped,
        raters=rater_agreement(estimates, rater_columns) if rater_columns else None,
        ppi=ppi,
        design=design,
        target_width=target_width,
        confidence_gaps=session.confidence_gaps(judge),
        top_k=cut,
        errors=_errors(estimates, slicing) if len(pairs.cluster) else None,
        probes=list(probe_rates(session, judge).get(judge, {}).values()),
        reasons=ReasonCheck(*session.reason_marks(
            None if gold or not annotators else annotators).get(judge, (0, 0))),
    )
    report.headline.extend(headline(report))
    if scope.golden_ids is not None:
        left = session.count_goldens() - len(scope.golden_ids)
        report.headline.insert(min(1, len(report.headline)), (
            f"Scored on the test split only: {counted(left, 'golden')} left out, since judge "
            f"'{judge}' was shown chunks of dev goldens as examples and a judge is never scored "
            "on what it learned from."))
    return report


def _sides(session: Session, frame: ChunkFrame, people: dict[str, LabelColumns], gold: bool
           ) -> tuple[list[_Compared], list[_Compared]]:
    """Each person's labels against the judge, and the label sets the report compares: the
    same, or with ``gold`` the team's truth alone."""
    def compared(name: str, human: np.ndarray, blind: np.ndarray, unsure: np.ndarray
                 ) -> _Compared:
        return _Compared(name, human, blind, context_precision_by_golden(human, frame.sizes),
                         unsure)

    mine = [compared(name, c.verdict, c.blind, c.unsure) for name, c in people.items()]
    if not gold:
        return mine, mine
    team = team_truth(frame, {p: answers(c) for p, c in people.items()},
                      session.gold_column(frame))
    return mine, [compared(team.label, team.verdict,
                           np.full(len(frame), MISSING, dtype=np.int8), team.unsure)]


def _ppi(session: Session, rows: list[GoldenRow], golden_ids: list[str], cp_judge: np.ndarray,
         pass_mark: float, group_by: str | None) -> PpiEstimate | None:
    """PPI++ from the session's random sample: human CP on its labelled goldens, judge CP on
    every fully judged golden; the same for the pass rate, and per system (each system's
    goldens of a random sample are a random sample of that system's)."""
    sample = session.random_sample()
    if sample is None:
        return None
    in_sample = set(sample["golden_ids"])
    human: dict[str, list[float]] = {}
    for row in rows:
        if row.golden_id in in_sample:
            human.setdefault(row.golden_id, []).append(row.human)
    judge = {g: cp for g, cp in zip(golden_ids, cp_judge.tolist(), strict=True)
             if not math.isnan(cp)}
    labelled = [g for g in sample["golden_ids"] if g in human and g in judge]
    people = {g: statistics.fmean(human[g]) for g in labelled}

    def estimate(value: Callable[[float], float], keep: Callable[[str], bool]) -> PpiEstimate:
        return ppi_estimate(sum(1 for g in in_sample if keep(g)),
                            [value(people[g]) for g in labelled if keep(g)],
                            [value(judge[g]) for g in labelled if keep(g)],
                            [value(cp) for g, cp in judge.items() if g not in human and keep(g)])

    def passes(x: float) -> float:
        return float(x >= pass_mark - 1e-9)

    def every(_: str) -> bool:
        return True

    def within(name: str) -> Callable[[str], bool]:
        return lambda g: system_of.get(g, "(none)") == name

    overall = estimate(float, every)
    _, system_of = system_values(session, group_by)
    names = sorted({system_of.get(g, "(none)") for g in judge})
    systems = ({name: estimate(float, within(name)).stats["ppi_plus_plus"] for name in names}
               if len(names) > 1 else {})
    return dataclasses.replace(
        overall, stats={**overall.stats,
                        "pass_rate_ppi": estimate(passes, every).stats["ppi_plus_plus"]},
        systems=systems)


def _design(sample: dict[str, Any], rows: list[GoldenRow], golden_ids: list[str],
            cp_judge: np.ndarray, pass_mark: float, target: float) -> DesignSection:
    """The estimates a stratified or active sample allows (annotator.sampling): people's CP
    per labelled golden (the mean over label sets), the judge's on every golden it judged."""
    human: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for row in rows:
        human.setdefault(row.golden_id, []).append(row.human)
        tally = counts.setdefault(row.golden_id, [0, 0, 0, 0])
        for h, j in zip(row.human_verdicts, row.judge_verdicts, strict=True):
            tally[0] += int(h == 0 and j == 1)
            tally[1] += int(h == 0)
            tally[2] += int(h == 1 and j == 0)
            tally[3] += int(h == 1)
    judge = {g: cp for g, cp in zip(golden_ids, cp_judge.tolist(), strict=True)
             if not math.isnan(cp)}
    return design_section(sample, {g: statistics.fmean(v) for g, v in human.items()}, judge,
                          {g: (a, b, c, d) for g, (a, b, c, d) in counts.items()}, pass_mark,
                          target)


def _add_rater_columns(sums: ClusterSums, people: list[str], labels: dict[str, np.ndarray],
                       said: JudgeColumns, frame: ChunkFrame, judge: str) -> RaterColumns:
    """Everyone's labels and the judge's verdicts as rows over every chunk, NaN where missing."""
    def row(verdict: np.ndarray) -> np.ndarray:
        return np.where(verdict == MISSING, np.nan, verdict.astype(float))

    ratings = np.vstack([row(labels[p]) for p in people]) if people else np.zeros((0, len(frame)))
    return add_rater_columns(sums, people, ratings, frame.cluster.astype(np.int64), judge,
                             row(said.verdict))


class _ChunkPairs:
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
    def of(cls, frame: ChunkFrame, said: JudgeColumns, sides: list[_Compared]) -> _ChunkPairs:
        """Collect the (human, judge) pairs of every label set."""
        both = [(side.human != MISSING) & (said.verdict != MISSING) for side in sides]

        def joined(per_side: Callable[[_Compared], np.ndarray]) -> np.ndarray:
            parts = [per_side(side)[mask] for side, mask in zip(sides, both, strict=True)]
            return np.concatenate(parts) if parts else np.zeros(0)

        return cls(joined(lambda _: np.arange(len(frame))), joined(lambda _: frame.cluster),
                   joined(lambda _: frame.rank),
                   joined(lambda side: side.human), joined(lambda _: said.verdict),
                   joined(lambda _: said.p_relevant))


def _golden_rows(frame: ChunkFrame, said: JudgeColumns, cp_judge: np.ndarray,
                 sides: list[_Compared], pass_mark: float) -> list[GoldenRow]:
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


def _add_golden_columns(sums: ClusterSums, rows: list[GoldenRow], index: dict[str, int],
                        system_of: dict[str, str]) -> None:
    """The cp_agreement columns, and per system its goldens' count and CP sums."""
    cluster = np.asarray([index[r.golden_id] for r in rows], dtype=np.int64)
    h = np.asarray([r.human for r in rows], dtype=float)
    j = np.asarray([r.judge for r in rows], dtype=float)
    d = j - h
    for name, values in (("n", 1.0), ("h", h), ("j", j), ("hh", h * h), ("jj", j * j),
                         ("hj", h * j), ("ad", np.abs(d)), ("dd", d * d),
                         ("big", cp_agreement.big_differences(d)),
                         ("pass_h", np.asarray([r.passes_human for r in rows], dtype=float)),
                         ("pass_j", np.asarray([r.passes_judge for r in rows], dtype=float))):
        sums.add(name, cluster, values)
    if system_of:
        system = np.asarray([system_of[r.golden_id] for r in rows])
        for name in sorted(set(system_of.values())):
            mine = system == name
            sums.add(column(name, "sys_n"), cluster[mine])
            sums.add(column(name, "sys_h"), cluster[mine], h[mine])
            sums.add(column(name, "sys_j"), cluster[mine], j[mine])


RERANK_ORDERS = ("ret", "ceil", "judge")
"""The orders a golden's chunks are scored in: as retrieved, people's, the judge's."""


def _scopes(frame: ChunkFrame, system_of: dict[str, str]) -> list[tuple[str, np.ndarray]]:
    """('' for every golden, then each system's name) with its goldens, as a mask."""
    systems = np.asarray([system_of.get(g, "") for g in frame.golden_ids])
    return [("", np.ones(len(frame.golden_ids), dtype=bool)),
            *((name, systems == name) for name in sorted(set(system_of.values())))]


def _add_per_golden(sums: ClusterSums, name: str, mine: np.ndarray,
                    values: np.ndarray | float = 1.0) -> None:
    """Add the per-golden values of the goldens in ``mine`` (a mask) to a column."""
    sums.add(name, np.flatnonzero(mine),
             values[mine] if isinstance(values, np.ndarray) else values)


def _zero_columns(sums: ClusterSums, names: list[str]) -> None:
    """Make these columns, all zero: a report with nobody's labels yet still reads them."""
    for name in names:
        sums.add(name, np.zeros(0, dtype=np.int64))


def _add_rerank_columns(sums: ClusterSums, frame: ChunkFrame, said: JudgeColumns,
                        cp_judge: np.ndarray, sides: list[_Compared],
                        scopes: list[tuple[str, np.ndarray]]) -> None:
    """Per golden complete under both label sets (per label set compared): CP under people's
    labels as retrieved, in people's order and in the judge's (annotator.stats.reranking)."""
    _zero_columns(sums, [column(name, scope_name) for scope_name, _ in scopes
                         for name in ("rr_n", *(f"rr_{order}" for order in RERANK_ORDERS))])
    for side in sides:
        complete = ~np.isnan(side.cp) & ~np.isnan(cp_judge)
        scored = {
            "ret": side.cp,
            "ceil": reordered_cp(side.human, frame.cluster, frame.rank, frame.sizes, side.human),
            "judge": reordered_cp(side.human, frame.cluster, frame.rank, frame.sizes,
                                  said.verdict, said.p_relevant),
        }
        for scope_name, scope in scopes:
            mine = complete & scope
            _add_per_golden(sums, column("rr_n", scope_name), mine)
            for order in RERANK_ORDERS:
                _add_per_golden(sums, column(f"rr_{order}", scope_name), mine, scored[order])


def _reranking(est: Estimates, scopes: list[str]) -> list[RerankRow]:
    """Every golden's reranking figures, then each system's (``scopes``: '' then systems)."""
    out = []
    for name in scopes:
        goldens = int(est.totals[column("rr_n", name)])
        none = None if goldens else NO_COMPLETE_GOLDEN

        def mean(order: str, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: ratio(s[column(f"rr_{order}", name)], s[column("rr_n", name)])

        retrieved, ceiling, judge = orders = [mean(order) for order in RERANK_ORDERS]

        def share(s: Sums, orders: list[Callable[[Sums], np.ndarray]] = orders) -> np.ndarray:
            return captured(*(order(s) for order in orders))

        def key(stat: str, name: str = name) -> str:  # every golden's, or a system's
            return column(stat, name) if name else stat

        gained = est.stat(key("rerank_captured"), share, none)
        if none is None and gained.value is None:
            gained = Stat.undefined("the chunks are already in people's order: nothing to gain")
        out.append(RerankRow(name or None, goldens,
                             est.stat(key("rerank_retrieved"), retrieved, none),
                             est.stat(key("rerank_ceiling"), ceiling, none),
                             est.stat(key("rerank_judge"), judge, none), gained))
    return out


def _slicing(session: Session, frame: ChunkFrame, pairs: _ChunkPairs, systems_key: str,
             system_of: dict[str, str]) -> list[tuple[str, Bins]]:
    """Each compared chunk's slice by rank, length, overlap with its question and (with two
    systems or more) system, as (dimension, bins over the pairs)."""
    if not len(pairs.row):
        return []
    rows = np.unique(pairs.row)
    chars = np.full(len(frame), np.nan)
    shares = np.full(len(frame), np.nan)
    words: dict[str, frozenset[str]] = {}
    questions = session.questions()

    def measured(chunk_id: int, golden_id: str, text: str) -> tuple[int, int, float]:
        if (mine := words.get(golden_id)) is None:
            mine = words[golden_id] = content_words(questions[golden_id])
        return chunk_id, len(text), overlap(mine, text)

    # Straight into arrays: at a million chunks, lists of Python numbers cost 100 MB.
    found = np.fromiter((measured(*row) for row in session.chunk_texts(
        frame.chunk_id[rows].tolist())), dtype=[("id", np.int64), ("chars", float),
                                                 ("share", float)], count=len(rows))
    at = frame.slots(found["id"])
    chars[at] = found["chars"]
    shares[at] = found["share"]
    slicing = [("rank", rank_bins(pairs.rank)),
               ("length", quartile_bins(chars[pairs.row], lambda x: f"{x:,.0f}", "chars")),
               ("overlap", quartile_bins(shares[pairs.row], lambda x: f"{x:.0%}",
                                         "of the question's words"))]
    if system_of:
        names = sorted(set(system_of.values()))
        of_golden = np.asarray([names.index(system_of[g]) if g in system_of else -1
                                for g in frame.golden_ids], dtype=np.int64)
        slicing.append((systems_key, Bins(of_golden[pairs.cluster], names)))
    return slicing


ERROR_COUNTS = {"fp": (0, 1), "neg": (0, None), "fn": (1, 0), "pos": (1, None)}
"""An error column's (human label, judge verdict) pairs: false positives among people's noise
(neg), false negatives among people's useful chunks (pos); None: any verdict."""


def _add_error_columns(sums: ClusterSums, pairs: _ChunkPairs, slicing: list[tuple[str, Bins]]
                       ) -> None:
    """Per slice, its golden's false positives, noise chunks, false negatives, useful chunks."""
    counted_as = {name: (pairs.human == h) & (True if j is None else pairs.judge == j)
                  for name, (h, j) in ERROR_COUNTS.items()}
    for dimension, bins in slicing:
        for code in range(len(bins.labels)):
            mine = bins.code == code
            for name, mask in counted_as.items():
                sums.add(column(f"err_{name}", dimension, code), pairs.cluster[mine & mask])


_EVERY = {"fp": lambda s: s["fp"], "neg": lambda s: s["fp"] + s["tn"],
          "fn": lambda s: s["fn"], "pos": lambda s: s["fn"] + s["tp"]}
"""The error columns' totals over every compared chunk, from the confusion counts."""


def _rates(est: Estimates, dimension: str, code: int, error: str, tested: bool
           ) -> tuple[Stat, Stat, float | None]:
    """One slice's false-positive ('fp') or false-negative ('fn') rate, the same rate on every
    other chunk, and the p-value of their difference (None when not ``tested``)."""
    among, whose = ("neg", "noise") if error == "fp" else ("pos", "useful")

    def inside(name: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: s[column(f"err_{name}", dimension, code)]

    def outside(name: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: _EVERY[name](s) - inside(name)(s)

    rate_in, rate_out = ratio_of(inside(error), inside(among)), ratio_of(outside(error),
                                                                          outside(among))
    none = (None if est.totals[column(f"err_{among}", dimension, code)] else
            f"no chunk here is {whose} to people")
    rate = est.stat(column(f"{error}_rate", dimension, code), rate_in, none)
    rest = est.stat(column(f"{error}_rest", dimension, code), rate_out)
    if (not tested or est.replicates is None or rate.value is None or rest.value is None
            or not testable(float(inside(among)(est.totals)), float(outside(among)(est.totals)))):
        return rate, rest, None
    return rate, rest, wald_p(rate.value - rest.value,
                              rate_in(est.replicates) - rate_out(est.replicates))


def _errors(est: Estimates, slicing: list[tuple[str, Bins]]) -> ErrorSection:
    """The judge's error rates per slice, against the rest, with Holm's correction over every
    comparison made."""
    found = []
    for dimension, bins in slicing:
        tested = len(bins.labels) > 1  # one slice has no rest to differ from
        for code, label in enumerate(bins.labels):
            fp, fp_rest, fp_p = _rates(est, dimension, code, "fp", tested)
            fn, fn_rest, fn_p = _rates(est, dimension, code, "fn", tested)
            chunks = sum(int(est.totals[column(f"err_{n}", dimension, code)])
                         for n in ("neg", "pos"))
            found.append(ErrorSlice(dimension, label, code == 0, code == len(bins.labels) - 1,
                                    chunks, fp, fn, fp_rest, fn_rest, fp_p, fn_p, None, None))
    pvalues = [p for row in found for p in (row.fp_p, row.fn_p)]
    significant = iter(holm_rejects(pvalues))

    def finding(rate: Stat, rest: Stat) -> str | None:
        if not next(significant):
            return None
        return "higher" if (rate.value or 0.0) > (rest.value or 0.0) else "lower"

    slices = [replace(row, fp_finding=finding(row.fp_rate, row.fp_rest),
                      fn_finding=finding(row.fn_rate, row.fn_rest)) for row in found]
    return ErrorSection(slices, sum(p is not None for p in pvalues))


def ratio_of(num: Callable[[Sums], np.ndarray], den: Callable[[Sums], np.ndarray]
             ) -> Callable[[Sums], np.ndarray]:
    """num / den as a statistic of the sums (NaN where den is 0)."""
    return lambda s: ratio(num(s), den(s))


TOP_K_FIGURES = ("cp_h", "cp_j", "kept_h", "kept_j", "prec_h", "prec_j")


def _add_top_k_columns(sums: ClusterSums, frame: ChunkFrame, said: JudgeColumns,
                       cp_judge: np.ndarray, sides: list[_Compared],
                       scopes: list[tuple[str, np.ndarray]]) -> int:
    """Per golden complete under both label sets and per k: the first k chunks' CP, relevant
    chunks and precision under both; returns the longest golden's length (the last k)."""
    longest = int(frame.sizes.max(initial=0))
    for scope_name, _ in scopes:
        _zero_columns(sums, [column(name, scope_name)
                             for name in ("topk_n", "topk_rel_h", "topk_rel_j")])
        _zero_columns(sums, [column(f"topk_{figure}", scope_name, k)
                             for figure in TOP_K_FIGURES for k in range(1, longest + 1)])
    for side in sides:
        complete = ~np.isnan(side.cp) & ~np.isnan(cp_judge)
        relevant = {label: frame.per_golden((verdict == 1).astype(float))
                    for label, verdict in (("h", side.human), ("j", said.verdict))}
        for scope_name, scope in scopes:
            mine = complete & scope
            _add_per_golden(sums, column("topk_n", scope_name), mine)
            for label in ("h", "j"):
                _add_per_golden(sums, column(f"topk_rel_{label}", scope_name), mine,
                                relevant[label])
        for k in range(1, longest + 1):
            figures: dict[str, np.ndarray] = {}
            for label, verdict in (("h", side.human), ("j", said.verdict)):
                cp, kept = first_k(verdict, frame.cluster, frame.rank, frame.sizes, k)
                figures[f"cp_{label}"], figures[f"kept_{label}"] = cp, kept
                figures[f"prec_{label}"] = kept / k  # trec_eval's P@k: a short list's missing
                # ranks count as not relevant
            for scope_name, scope in scopes:
                for figure in TOP_K_FIGURES:
                    _add_per_golden(sums, column(f"topk_{figure}", scope_name, k),
                                    complete & scope, figures[figure])
    return longest


def _top_k(est: Estimates, scopes: list[str], longest: int, keep: float) -> TopKSection:
    """The cut to the first k chunks, every golden first, then each system's."""
    rows: list[TopKRow] = []
    smallest: dict[str | None, tuple[int | None, int | None]] = {}
    for name in scopes:
        none = None if est.totals[column("topk_n", name)] else NO_COMPLETE_GOLDEN

        def mean(figure: str, k: int, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: ratio(s[column(f"topk_{figure}", name, k)],
                                   s[column("topk_n", name)])

        def lost(label: str, k: int, name: str = name) -> Callable[[Sums], np.ndarray]:
            return lambda s: 1.0 - ratio(s[column(f"topk_kept_{label}", name, k)],
                                         s[column(f"topk_rel_{label}", name)])

        def stat(key: str, formula: Callable[[Sums], np.ndarray], k: int, name: str = name,
                 none: str | None = none) -> Stat:
            return est.stat(column(f"topk_{key}", name, k), formula, none)

        for k in range(1, longest + 1):
            rows.append(TopKRow(name or None, k, stat("cp_human", mean("cp_h", k), k),
                                stat("cp_judge", mean("cp_j", k), k),
                                stat("precision_human", mean("prec_h", k), k),
                                stat("precision_judge", mean("prec_j", k), k),
                                stat("lost_human", lost("h", k), k),
                                stat("lost_judge", lost("j", k), k)))

        def least(label: str, name: str = name) -> int | None:
            kept = np.asarray([est.totals[column(f"topk_kept_{label}", name, k)]
                               for k in range(1, longest + 1)], dtype=float)
            return smallest_k(kept, float(est.totals[column(f"topk_rel_{label}", name)]), keep)

        smallest[name or None] = (least("h"), least("j"))
    return TopKSection(keep, rows, smallest)


def _chunk_section(est: Estimates, pairs: _ChunkPairs, sums: ClusterSums) -> ChunkSection:
    c = Confusion(*(int(est.totals[k]) for k in COUNTS))
    stats = {key: est.attach(key, statistic(c), confusion_formula(formula))
             for key, (statistic, formula) in CHUNK_STATISTICS.items()}
    by_rank = []
    for k in range(1, int(pairs.rank.max()) + 1 if len(pairs.rank) else 1):
        at = pairs.rank == k
        rc = Confusion.of_arrays(pairs.human[at], pairs.judge[at])
        if rc.n:
            by_rank.append(RankRow(k, rc, {"percent": percent_agreement(rc),
                                           "cohen_kappa": cohen_kappa(rc),
                                           "gwet_ac1": gwet_ac1(rc)}))
    looser = sums.columns.get("fp", np.zeros(0))
    stricter = sums.columns.get("fn", np.zeros(0))
    test = McNemar.of(looser.astype(int).tolist(), stricter.astype(int).tolist())
    return ChunkSection(c, stats, wilson_interval(c.agreements, c.n),
                        direction(c, test.cluster_p.value), test, kappa_paradox_note(c), by_rank)


def _golden_section(session: Session, est: Estimates, rows: list[GoldenRow], worst: int
                    ) -> GoldenSection:
    none = NO_COMPLETE_GOLDEN if not rows else None
    human = [r.human for r in rows]
    judge = [r.judge for r in rows]
    constant = cp_agreement.constant_reason(human, judge)
    low, high = cp_agreement.bland_altman([r.difference for r in rows])
    spearman, kendall = cp_agreement.rank_correlations(human, judge)
    stats = {
        "mean_human": est.stat("mean_human", cp_agreement.mean_human, none),
        "mean_judge": est.stat("mean_judge", cp_agreement.mean_judge, none),
        "bias": est.stat("bias", cp_agreement.bias, none),
        "mae": est.stat("mae", cp_agreement.mae, none),
        "rmse": est.stat("rmse", cp_agreement.rmse, none),
        "limits_low": low,
        "limits_high": high,
        "pearson": est.stat("pearson", cp_agreement.pearson, constant),
        "spearman": spearman,
        "kendall": kendall,
        "ccc": est.stat("ccc", cp_agreement.ccc, none or cp_agreement.ccc_reason(human, judge)),
        "share_big_difference": est.stat("share_big_difference", cp_agreement.share_big, none),
        "pass_rate_human": est.stat("pass_rate_human", cp_agreement.pass_rate_human, none),
        "pass_rate_judge": est.stat("pass_rate_judge", cp_agreement.pass_rate_judge, none),
    }
    return GoldenSection(len(rows), stats, rows,
                         [r for r in rows if r.passes_human != r.passes_judge],
                         _worst(session, rows, worst), _no_relevant(rows))


def _worst(session: Session, rows: list[GoldenRow], worst: int) -> list[WorstGolden]:
    """The ``worst`` goldens by |difference| (ties by id), with their questions."""
    ranked = sorted((r for r in rows if abs(r.difference) > 1e-9),
                    key=lambda r: (-abs(r.difference), r.golden_id, r.annotator))[:worst]
    questions = {g.id: g.user_input for g in session.goldens(sorted({r.golden_id for r in ranked}))}
    return [WorstGolden(r, questions[r.golden_id]) for r in ranked]


def _no_relevant(rows: list[GoldenRow]) -> dict[str, int]:
    """How many complete goldens have no relevant chunk under both label sets, or one only."""
    return {
        "both": sum(1 for r in rows if not any(r.human_verdicts) and not any(r.judge_verdicts)),
        "human_only": sum(1 for r in rows if not any(r.human_verdicts) and any(r.judge_verdicts)),
        "judge_only": sum(1 for r in rows if any(r.human_verdicts) and not any(r.judge_verdicts)),
    }


def _systems(session: Session, group_by: str | None, rows: list[GoldenRow]) -> dict[str, str]:
    """Golden id -> system name, when the compared goldens span at least two systems."""
    _, system_of = system_values(session, group_by)
    if len({system_of[r.golden_id] for r in rows if r.golden_id in system_of}) < 2:
        return {}
    return {r.golden_id: system_of.get(r.golden_id, "(none)") for r in rows}


ONE_GOLDEN = "one golden"
"""Why a system's mean CP has no interval when it holds a single golden."""


def _system_section(est: Estimates, key: str, rows: list[GoldenRow], system_of: dict[str, str]
                    ) -> SystemSection:
    names = sorted({system_of[r.golden_id] for r in rows})

    def mean(name: str, side: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: ratio(s[column(name, f"sys_{side}")], s[column(name, "sys_n")])

    means = {name: (est.stat(column(name, "mean_human"), mean(name, "h")),
                    est.stat(column(name, "mean_judge"), mean(name, "j"))) for name in names}
    for name in names:  # one golden: resampling it says nothing of the system's spread
        if est.totals[column(name, "sys_n")] == 1:
            human, judge = means[name]
            means[name] = (human.without_interval(ONE_GOLDEN), judge.without_interval(ONE_GOLDEN))
    order_h = sorted(names, key=lambda n: -(means[n][0].value or 0.0))
    order_j = sorted(names, key=lambda n: -(means[n][1].value or 0.0))
    systems = [SystemRow(name, int(est.totals[column(name, "sys_n")]), means[name][0], means[name][1],
                         order_h.index(name) + 1, order_j.index(name) + 1) for name in order_h]
    pairs = []
    for a, b in combinations(order_h, 2):
        def diff(side: str, a: str = a, b: str = b) -> Callable[[Sums], np.ndarray]:
            return lambda s: mean(a, side)(s) - mean(b, side)(s)

        pairs.append(SystemPair(a, b, est.stat(column(f"{a}-{b}", "difference_human"), diff("h")),
                                est.stat(column(f"{a}-{b}", "difference_judge"), diff("j"))))
    def scores(side: str) -> Callable[[Sums], np.ndarray]:
        return lambda s: np.stack([mean(name, side)(s) for name in names], axis=-1)

    kendall, tau_ap = ranking_agreement(est, "", scores("h"), scores("j"), len(names))
    return SystemSection(key, systems, kendall, pairs, tau_ap)


def _coverage(frame: ChunkFrame, said: JudgeColumns, sides: list[_Compared], pairs: _ChunkPairs,
              rows: list[GoldenRow]) -> Coverage:
    return Coverage(
        goldens=len(frame.golden_ids),
        chunks=len(frame),
        chunks_judged=int((said.verdict != MISSING).sum()),
        goldens_judged=int(frame.complete(said.verdict).sum()),
        annotators=[AnnotatorCoverage(side.name, int((side.human != MISSING).sum()),
                                      int(frame.complete(side.human).sum()),
                                      int(side.unsure.sum()),
                                      int((frame.per_golden(side.unsure) > 0).sum()))
                    for side in sides],
        compared_chunks=len(pairs.cluster),
        compared_goldens=len(rows),
        distinct_chunks=len(np.unique(np.stack([pairs.cluster, pairs.rank]), axis=1).T),
        from_goldens=len(np.unique(pairs.cluster)),
        distinct_complete=len({row.golden_id for row in rows}),
    )


def _people(frame: ChunkFrame, said: JudgeColumns, people: dict[str, LabelColumns],
            mine: list[_Compared], scores: dict[str, CheckScore], checks_min: float
            ) -> PeopleSection:
    rows = []
    accepted_code, shown_codes = action_code("accept"), [action_code(a) for a in SHOWN_ACTIONS]
    for name, labels in people.items():
        decided = labels.decided
        shown = (decided & (labels.shown != MISSING) & (labels.blind == MISSING)
                 & np.isin(labels.action, shown_codes))
        accepted = int((shown & (labels.verdict == labels.shown)).sum())
        times = labels.decision_ms[decided & ~np.isnan(labels.decision_ms)]
        # Fast accepts in a row, in the order the person made their decisions.
        ordered = labels.order[decided[labels.order]]
        fast = ((labels.action[ordered] == accepted_code)
                & (labels.decision_ms[ordered] < FAST_ACCEPT_MS))
        longest = _longest_run(fast)
        both = decided & (said.verdict != MISSING)
        agreement = Confusion.of_arrays(labels.verdict[both], said.verdict[both])
        score = scores.get(name, CheckScore(0, 0))
        warnings = [f"{longest} accepts in a row, each under {FAST_ACCEPT_MS / 1000:g} s: "
                    "check these were read, not rubber-stamped."
                    if longest >= RUBBER_STAMP_RUN else None, score.warning(checks_min)]
        n_shown = int(shown.sum())
        rows.append(AnnotatorRow(
            name, int(decided.sum()), n_shown,
            {"acceptance_rate": Stat(accepted / n_shown) if n_shown else Stat.undefined(
                "judge never shown: no decision was made with its verdict on screen"),
             "median_decision_ms": Stat(float(np.median(times))) if len(times) else
             Stat.undefined("not timed: no decision was made on the annotation screen"),
             "percent": percent_agreement(agreement),
             "cohen_kappa": cohen_kappa(agreement),
             "check_accuracy": score.accuracy},
            longest, " ".join(w for w in warnings if w) or None, score.answered))
    blind = BlindSummary.of_columns(
        *(np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8) for parts in (
            [side.human for side in mine], [said.verdict for _ in mine],
            [side.blind for side in mine])))
    blind_row = None
    if blind.blind_chunks:
        def pick(a: ChunkAgreement) -> dict[str, Stat]:
            return {"percent": a.percent, "cohen_kappa": a.cohen_kappa}

        blind_row = BlindRow(blind.blind_chunks, blind.prefilled_chunks, pick(blind.blind_agreement),
                             pick(blind.prefilled_agreement), blind.disagreed_blind,
                             blind.switched_to_judge, blind.switch_rate)
    return PeopleSection(rows, blind_row)


def _longest_run(flags: np.ndarray) -> int:
    """The length of the longest run of True."""
    if not flags.any():
        return 0
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def _confidence(est: Estimates, pairs: _ChunkPairs) -> ConfidenceSection:
    has_p = ~np.isnan(pairs.p)
    p, y = pairs.p[has_p], pairs.human[has_p]
    auroc = confidence.auroc(p, y)
    stats = {
        "brier": est.stat("brier", confidence.brier),
        "log_loss": est.stat("log_loss", confidence.log_loss),
        "ece_class1": est.stat("ece_class1", confidence.ece_class1),
        "ece_top_label": est.stat("ece_top_label", confidence.ece_top_label),
        "auroc": Stat(auroc) if auroc is not None else Stat.undefined(
            "the human labels on these chunks are all one class"),
    }
    return ConfidenceSection(int(has_p.sum()), stats, dict(confidence.ECE_CONVENTIONS),
                             confidence.reliability(est.totals))


__all__ = ["build_report", "choose_judge"]
