"""Judges ranked on the same human labels, with paired intervals and pairwise tests.

Every judge is scored on the same chunks (labelled by the person and judged by every judge)
and the same goldens, and every interval comes from one shared set of resampled goldens, so
differences between judges are paired. A pairwise cluster-adjusted McNemar test on which
judge is right, Holm-corrected over all pairs, says which gaps are real; a judge is named best
only when it beats every other one significantly.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from annotator.columns import MISSING, ChunkFrame, JudgeColumns
from annotator.errors import SessionError
from annotator.memory import give_back
from annotator.models import Judge, Price, Scale
from annotator.report.board import HEADLINE_ORDER, ordered
from annotator.report.columns import CALL_SORTS, COLUMNS, SORT_KEYS
from annotator.report.epochs import Epochs, epoch_line, epochs_of, span_sentence
from annotator.report.inputs import chunk_stat
from annotator.report.sections.reasons import ReasonCheck
from annotator.report.sections.systems import add_columns as system_columns
from annotator.report.sections.systems import means as system_means
from annotator.resolve import judges_named
from annotator.scoring.grouping import system_values
from annotator.scoring.probes import ProbeRate, probe_rates
from annotator.scoring.truth import Truth
from annotator.scoring.truth import truth as find_truth
from annotator.scoring.unseen import Unseen, unseen
from annotator.stats import cp_agreement
from annotator.stats.alt_test import ALPHA as ALT_ALPHA
from annotator.stats.alt_test import (
    EPSILON,
    MIN_PEOPLE,
    AltTest,
    alt_test,
)
from annotator.stats.bootstrap import (
    COUNTS,
    ClusterSums,
    Estimates,
    Sums,
    add_confusion,
    column,
    confusion_formula,
    in_scope,
    percentile_interval,
    scope,
)
from annotator.stats.chunk_agreement import (
    CHUNK_STATISTICS,
    SIGNIFICANT,
    Confusion,
    McNemar,
    kappa_values,
)
from annotator.stats.graded import GRADED_INTERVAL_FROM, GRADED_STATISTICS, binary_kappa
from annotator.stats.metrics import context_precision_by_golden
from annotator.stats.multiple import holm
from annotator.stats.stat import Stat
from annotator.stats.systems import ranking_agreement
from annotator.store.session import Session
from annotator.text import counted

CALL_FIGURES = ("parse_failure_rate", "flip_rate", "tokens_per_1000_chunks",
                "cached_share", "cost_per_1000_chunks", "kappa_per_dollar", "median_latency_ms")


MAJORITY_AFTER = 3
"""Runs of a judge from which its majority verdict gets a row of its own."""


@dataclass(frozen=True, slots=True)
class CallSummary:
    """What running the judge cost, how often it failed, and how stable its verdicts are.

    ``figures`` holds, by CALL_FIGURES key: the share of replies that were not a verdict (bad
    JSON, a verdict of 2, cut off); the share of chunks judged more than once whose verdict
    changed between runs; tokens and USD per 1,000 chunks; the median latency of a call.
    """

    calls: int
    failed: int
    figures: dict[str, Stat]
    unstable: list[tuple[str, int, list[int]]]
    """(golden id, rank, verdict of each run) of every chunk whose verdict flipped."""
    style: str = ""
    """The prompt: its style, how it replies, how a golden is sent."""
    examples: int = 0
    """Demonstrations in its prompt (from the session and from its prompt file)."""


@dataclass(frozen=True, slots=True)
class JudgeRow:
    """One judge's scores on the shared chunks and goldens."""

    judge: str
    stats: dict[str, Stat]
    calls: CallSummary
    chunks: int
    """Chunks it is scored on (the shared ones, or its own when no chunk is shared by all)."""
    goldens: int
    """Goldens complete under its labels and the truth, among those chunks."""
    best_system: tuple[str, str] | None = None
    """(the system people's labels rank first, the one this judge's verdicts rank first), on
    its goldens; None without systems to rank."""
    probes: dict[str, ProbeRate] = field(default_factory=dict)
    """Kind -> its false-positive rate on the gullibility probes it was tested with."""
    alt_test: AltTest | None = None
    """The alternative annotator test on chunk verdicts: may it replace a person?"""
    alt_test_cp: AltTest | None = None
    """The same on each golden's CP (None on an unranked pool)."""
    epochs: Epochs | None = None
    """The epoch its verdicts are read from, the others it has, its last re-check."""


@dataclass(frozen=True, slots=True)
class JudgePair:
    """Two judges on the same chunks: who is right where the other is wrong."""

    first: str
    second: str
    first_only_right: int
    second_only_right: int
    kappa_difference: Stat
    """Cohen's kappa of first minus second, with a paired bootstrap interval."""
    p: Stat
    """Cluster-adjusted McNemar p on correctness."""
    p_holm: Stat
    chunks: int
    """The chunks the two are compared on."""

    @property
    def better(self) -> str | None:
        """The judge that is significantly more often right, after Holm's correction."""
        if self.p_holm.value is None or self.p_holm.value >= SIGNIFICANT:
            return None
        return self.first if self.first_only_right > self.second_only_right else self.second


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """Every judge of a session scored against the same truth."""

    session: str
    truth: Truth
    split: str
    """'test', 'dev', or 'all' goldens."""
    chunks: int
    goldens: int
    resamples: int
    seed: int | None
    sort: str
    judges: list[JudgeRow]
    pairs: list[JudgePair]
    best: str | None
    headline: list[str]
    pairwise: bool = False
    """No chunk carries every judge's verdict: each row is on its own chunks, each pair on the
    chunks the two share."""
    left_out: list[str] = field(default_factory=list)
    """Judges left out by default because they hold no verdict."""
    excluded: int = 0
    """Goldens of the split left out because a judge saw them as examples."""
    agreement: list[JudgeAgreement] = field(default_factory=list)
    """Cohen's kappa between each pair of judges on the chunks both judged."""
    group_by: str = "retriever"
    """The metadata key naming each golden's system."""
    scale: Scale | None = None
    """A graded session's scale: the grade columns are shown."""
    unranked: bool = False
    """The chunks are a pool: no CP columns."""
    all_pairs: bool = False
    """Show every pair in the text formats (the whole matrix, every pair tested)."""
    people: list[str] = field(default_factory=list)
    """The people whose labels the alternative annotator test holds each judge against."""


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    """Two judges against each other (no person involved): do they fail alike?"""

    first: str
    second: str
    kappa: Stat
    chunks: int


def build_leaderboard(session: Session, *, annotator: str | None = None,
                      judges: Sequence[str] | None = None, split: str | None = None,
                      prices: dict[str, Price] | None = None,
                      resamples: int = 2000, seed: int | None = 0, sort: str = "cohen_kappa",
                      group_by: str | None = None, epsilon: float = EPSILON,
                      alt_alpha: float = ALT_ALPHA,
                      progress: Callable[[int], None] | None = None) -> Leaderboard:
    """Score every judge (or the given ones) against one person's labels or the team's gold.

    ``split`` picks the goldens: 'test', 'dev' or 'all'; by default the test split when the
    session has splits, else all. ``prices`` (USD per million tokens in, out) override the
    prices remembered from 'annotator judge'. ``group_by``: the metadata key naming each
    golden's system, for the columns on ranking the systems (default: retriever, when the
    goldens carry it). ``epsilon`` and ``alt_alpha``: the alternative annotator test's
    cost-benefit margin and false discovery rate.
    """
    judged = session.judges_judged(candidates=bool(judges))  # align names its candidate
    names = judges_named(judged, judges or [])
    left_out = [] if judges else [name for name, n in judged.items() if not n]
    split, seen, frame = _scored_goldens(session, names, split)
    truth = find_truth(session, annotator, frame)
    labels = truth.verdict
    read = {name: session.judge_columns(name, frame) for name in names}
    said = {name: columns.verdict for name, columns in read.items()}
    scale, unranked = session.scale(), session.unranked()
    graded = _Graded.of(session, frame, truth, read, scale) if scale is not None else None
    del read
    defined = {judge.name: judge for judge in session.judges()}
    majority = _majorities(session, frame, said, names)
    reasons = session.reason_marks([annotator] if annotator else None)
    said.update({m.name: m.verdict for m in majority.values()})
    names = [*names, *majority]
    people = session.annotators()
    agreement = _judge_agreement(said, names)
    labelled = labels != MISSING
    shared = _scored_on(labelled, said, names)
    # With no chunk judged by every judge, each judge is scored on its own chunks and each pair
    # on the chunks both judged: rows are then not on the same chunks, and the headline says so.
    pairwise = not shared.any() and len(names) > 1
    sums = ClusterSums(len(frame.golden_ids))
    rows_on: dict[str, tuple[int, int]] = {}
    cp_of: dict[str, np.ndarray] = {}  # each judge's CP on every golden (none on a pool)
    cp_rows: dict[str, tuple[list[float], list[float]]] = {}
    cp_truth = context_precision_by_golden(labels, frame.sizes)
    group_by, system_of = system_values(session, group_by)
    system = np.asarray([system_of.get(g, "(none)") for g in frame.golden_ids])
    systems = sorted(set(system.tolist())) if len(set(system_of.values())) > 1 else []
    for i, name in enumerate(names):
        on = _scored_on(labelled, said, [name]) if pairwise else shared
        add_confusion(sums, frame.cluster[on], labels[on], said[name][on], prefix=scope(i))
        complete = _complete(on, frame)
        at = np.flatnonzero(complete)
        cp_human = cp_truth[complete]
        # An unranked pool has no CP: none is computed (a fifth of a graded board's time).
        if not unranked:
            cp_of[name] = context_precision_by_golden(said[name], frame.sizes)
        cp_judge = cp_human if unranked else cp_of[name][complete]
        if not unranked:
            _add_cp_columns(sums, i, at, cp_human, cp_judge, system[at], systems)
        if graded is not None:
            graded.add_columns(sums, i, name, on, frame.cluster)
        cp_rows[name] = (cp_human.tolist(), cp_judge.tolist())
        rows_on[name] = (int(on.sum()), len(at))
    pair_data = _pair_sums(sums, frame, names, labelled, labels, said, shared, pairwise)
    alt_tests = _alt_tests(session, frame, people, said, cp_of, names, unranked, epsilon,
                           alt_alpha)
    del said, labels, labelled, cp_of
    give_back()  # the session's columns are done with (see annotator.memory)
    est = Estimates(sums, resamples, seed, progress)

    probed = probe_rates(session)
    rows = []
    for i, name in enumerate(names):
        vote = majority.get(name)
        judge = vote.judge if vote is not None else name
        stats, picks = _judge_stats(est, i, name, rows_on[name][1], cp_rows[name], systems,
                                    ReasonCheck(*reasons.get(judge, (0, 0))), unranked)
        if graded is not None:
            stats.update(graded.stats(est, i, name))
        calls = _calls(session, judge, (prices or {}).get(judge), frame, defined.get(judge),
                       vote.runs if vote is not None else 1)
        _add_kappa_per_dollar(calls, stats["cohen_kappa"])
        rows.append(JudgeRow(name, stats, calls, *rows_on[name], best_system=picks,
                             probes=probed.get(name, {}), alt_test=alt_tests[name][0],
                             alt_test_cp=alt_tests[name][1], epochs=epochs_of(session, judge)))

    pairs = _pairs(pair_data, est, len(frame.golden_ids))
    rows.sort(key=_sort_key(sort, set(rows[0].stats) if rows else None))
    best = _best(names, pairs)
    board = Leaderboard(session.where, truth, split, int(shared.sum()),
                        int(_complete(shared, frame).sum()), resamples, seed, sort,
                        rows, pairs, best, [], pairwise, left_out,
                        excluded=seen.excluded if seen.note is not None else 0,
                        agreement=agreement, group_by=group_by, scale=scale,
                        unranked=unranked, people=people)
    board.headline.extend(_headline(board))  # the headline reads the board it heads
    board.headline.extend(_lineage(session, board))
    board.headline.extend(_epoch_lines(board))
    if seen.note is not None:
        board.headline.insert(1, seen.note)
    return board


def _alt_tests(session: Session, frame: ChunkFrame, people: list[str],
               said: dict[str, np.ndarray], cp_of: dict[str, np.ndarray], names: list[str],
               unranked: bool, epsilon: float, alpha: float
               ) -> dict[str, tuple[AltTest, AltTest | None]]:
    """Each judge's alternative annotator test against every person's own labels (not the
    truth: the test holds each person out in turn), on its chunk verdicts and on each golden's
    CP (``cp_of``: each judge's, as the board computed it)."""
    if len(people) < MIN_PEOPLE:  # nothing to read: the test says what it is missing
        alone = {p: np.zeros(0) for p in people}
        missing = (alt_test(np.zeros(0), alone, epsilon=epsilon, alpha=alpha),
                   None if unranked else alt_test(np.zeros(0), alone, scoring="neg_rmse",
                                                  epsilon=epsilon, alpha=alpha))
        return dict.fromkeys(names, missing)
    labels = {p: session.label_columns(p, frame).verdict for p in people}
    cp = {} if unranked else {p: context_precision_by_golden(v, frame.sizes)
                              for p, v in labels.items()}
    out = {}
    for name in names:
        on_chunks = alt_test(said[name], labels, epsilon=epsilon, alpha=alpha, missing=MISSING)
        on_goldens = None if unranked else alt_test(
            cp_of[name], cp, scoring="neg_rmse", epsilon=epsilon, alpha=alpha)
        out[name] = (on_chunks, on_goldens)
    return out


def _scored_goldens(session: Session, names: list[str], split: str | None
                    ) -> tuple[str, Unseen, ChunkFrame]:
    """The split scored ('test' by default when the session has splits, else 'all'), what the
    judges' examples leave out, and the frame of the goldens scored."""
    splits = session.splits()
    split = split or ("test" if splits else "all")
    if split != "all" and not splits:
        raise SessionError("The session has no dev/test split yet: make one with "
                           "'annotator split SESSION --dev 0.5 --seed 1', or use --split all.")
    seen = unseen(session, names, split)  # never a judge on goldens it saw as examples
    frame = session.chunk_frame()
    if split != "all" or seen.golden_ids is not None:
        keep = (set(seen.golden_ids) if seen.golden_ids is not None else
                {g for g, s in splits.items() if s == split})
        frame, _ = frame.only(np.asarray([g in keep for g in frame.golden_ids], dtype=bool))
    return split, seen, frame


def _add_cp_columns(sums: ClusterSums, i: int, at: np.ndarray, cp_human: np.ndarray,
                    cp_judge: np.ndarray, system: np.ndarray, systems: list[str]) -> None:
    """Judge ``i``'s CP columns on its complete goldens ``at``: what MAE and bias read, and each
    system's mean CP under both label sets, as the report's systems section has it."""
    d = cp_judge - cp_human
    for col, values in (("n", np.ones_like(d)), ("h", cp_human), ("j", cp_judge),
                        ("ad", np.abs(d))):
        sums.add(column(col, i), at, values)
    system_columns(sums, at, cp_human, cp_judge, system, systems, i)


def _judge_stats(est: Estimates, i: int, name: str, goldens: int,
                 cp_rows: tuple[list[float], list[float]], systems: list[str],
                 reasons: ReasonCheck, unranked: bool
                 ) -> tuple[dict[str, Stat], tuple[str, str] | None]:
    """Judge ``i``'s statistics (the chunk and CP columns of COLUMNS; no CP ones on an unranked
    pool), and the system each label set ranks first (with two systems or more)."""
    prefix = scope(i)
    c = Confusion(*(int(est.totals[f"{prefix}{k}"]) for k in COUNTS))

    def golden(formula: Callable[[Sums], Any]) -> Callable[[Sums], Any]:
        return lambda s: formula(in_scope(s, prefix))

    per_chunk = {entry.key: chunk_stat(est, c, entry.key, prefix, name) for entry in COLUMNS
                 if entry.table == "chunks" and entry.key != "reason_wrong"}
    per_chunk["reason_wrong"] = reasons.rate
    if unranked:  # a pool: no CP, so no CP column was summed
        return {entry.key: per_chunk[entry.key] for entry in COLUMNS
                if entry.table == "chunks"}, None
    none = None if goldens else "no golden is complete under every label set"
    _, kendall = cp_agreement.rank_correlations(*cp_rows)
    by_people, by_judge = system_means(systems, "h", i), system_means(systems, "j", i)
    tau_b, tau_ap = ranking_agreement(est, name, by_people, by_judge, len(systems))
    picks = None
    if systems:
        means_h, means_j = by_people(est.totals), by_judge(est.totals)
        if not (np.isnan(means_h).all() or np.isnan(means_j).all()):
            # The system each label set ranks first (the first by name on a tie).
            picks = (systems[int(np.nanargmax(means_h))], systems[int(np.nanargmax(means_j))])
    per_golden = {
        "mae": est.stat(column("mae", name), golden(cp_agreement.mae), none),
        "bias": est.stat(column("bias", name), golden(cp_agreement.bias), none),
        "kendall": kendall,
        "systems_tau_b": tau_b,
        "systems_tau_ap": tau_ap,
    }
    return {entry.key: (per_chunk | per_golden)[entry.key] for entry in COLUMNS
            if entry.table in ("chunks", "cp")}, picks


class _Graded:
    """The truth's grades and each judge's, on a graded session: each judge's grade table per
    golden goes into the sums, and GRADED_STATISTICS come out of them."""

    def __init__(self, q: int, truth: np.ndarray, judges: dict[str, np.ndarray]) -> None:
        self.q = q
        self.truth = truth
        self.judges = judges

    @classmethod
    def of(cls, session: Session, frame: ChunkFrame, truth: Truth,
           read: dict[str, JudgeColumns], scale: Scale) -> _Graded:
        """The grades of the truth's person (the team's: where every person who graded a
        chunk gave it the same grade) and of each judge, on ``scale``."""
        everyone = session.annotators()
        people = [truth.source] if truth.source in everyone else everyone
        grades = [session.label_columns(p, frame).grade for p in people]
        agreed = grades[0].copy() if grades else np.full(len(frame), MISSING, dtype=np.int8)
        for other in grades[1:]:
            clash = (agreed != MISSING) & (other != MISSING) & (agreed != other)
            agreed = np.where(agreed == MISSING, other, agreed)
            agreed[clash] = MISSING
        return cls(scale.top + 1, agreed, {n: c.grade for n, c in read.items()})

    def add_columns(self, sums: ClusterSums, i: int, name: str, on: np.ndarray,
                    cluster: np.ndarray) -> None:
        """Judge ``i``'s grade table per golden, on the chunks it is scored on."""
        given = self.judges.get(name)
        if given is None:  # a majority of runs: no grades of its own
            return
        both = on & (self.truth != MISSING) & (given != MISSING)
        code = self.truth[both].astype(np.int64) * self.q + given[both]
        for cell in range(self.q * self.q):
            sums.add(column(f"grade_{cell // self.q}_{cell % self.q}", i),
                     cluster[both][code == cell])

    def stats(self, est: Estimates, i: int, name: str) -> dict[str, Stat]:
        """GRADED_STATISTICS of judge ``i``, with their intervals."""
        q = self.q
        if name not in self.judges:
            return {key: Stat.undefined("a majority of runs has no grades")
                    for key in GRADED_STATISTICS}
        names = [column(f"grade_{h}_{j}", i) for h in range(q) for j in range(q)]

        def table(s: Sums) -> np.ndarray:
            cells = np.stack([np.asarray(s[n]) for n in names], -1)
            return cells.reshape(*cells.shape[:-1], q, q)

        none = None if sum(float(est.totals[n]) for n in names) else \
            "no chunk is graded by both"
        def formula(statistic: Callable[[np.ndarray], np.ndarray]) -> Callable[[Sums], Any]:
            return lambda s: statistic(table(s))

        def at(a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
            return lambda c: binary_kappa(c, a, b)

        stats = {key: est.stat(column(key, name), formula(statistic), none,
                               GRADED_INTERVAL_FROM)
                 for key, statistic in GRADED_STATISTICS.items()}
        # Kappa with people relevant from a and the judge from b, every pair (JSON and CSV).
        stats.update({threshold_key(a, b): est.stat(column(threshold_key(a, b), name),
                                                     formula(at(a, b)), none,
                                                     GRADED_INTERVAL_FROM)
                      for a in range(1, q) for b in range(1, q)})
        return stats


def threshold_key(people: int, judge: int) -> str:
    """A judge's statistic: Cohen's kappa with people relevant from ``people`` and the judge
    from ``judge``."""
    return f"kappa_from_{people}_{judge}"


def _scored_on(labelled: np.ndarray, said: dict[str, np.ndarray], judges: Sequence[str]
               ) -> np.ndarray:
    """The chunks (a mask on the frame) labelled and judged by every one of ``judges``."""
    on = labelled.copy()
    for name in judges:
        on &= said[name] != MISSING
    return on


def _complete(on: np.ndarray, frame: ChunkFrame) -> np.ndarray:
    """The goldens (a mask) every chunk of which is among ``on``."""
    return np.asarray(frame.per_golden(on.astype(float)) == frame.sizes)


@dataclass(frozen=True, slots=True)
class _Majority:
    """The majority verdict of a judge's runs, scored as a judge of its own."""

    name: str
    judge: str
    runs: int
    verdict: np.ndarray


def _majorities(session: Session, frame: ChunkFrame, said: dict[str, np.ndarray],
                names: list[str]) -> dict[str, _Majority]:
    """A majority row for each judge run at least MAJORITY_AFTER times on every chunk it judged
    (ties of an even count keep the first run's verdict)."""
    out = {}
    for name in names:
        runs = session.repetitions(name)
        if not runs:
            continue
        k = min(len(by_run) for by_run in runs.values())
        judged = int((said[name] != MISSING).sum())
        if k < MAJORITY_AFTER or len(runs) < judged:
            continue
        chunk_ids = np.asarray(list(runs), dtype=np.int64)
        ones = np.asarray([sum(by_run[r] for r in range(1, k + 1)) for by_run in runs.values()])
        first = np.asarray([by_run[1] for by_run in runs.values()])
        vote = np.where(2 * ones > k, 1, np.where(2 * ones < k, 0, first)).astype(np.int8)
        column = frame.aligned(frame.slots(chunk_ids), vote, MISSING, np.int8)
        label = f"{name} majority of {k}"
        out[label] = _Majority(label, name, k, column)
    return out


def _judge_agreement(said: dict[str, np.ndarray], names: list[str]) -> list[JudgeAgreement]:
    """Cohen's kappa of every pair of judges on the chunks both judged."""
    out = []
    for a, b in combinations(names, 2):
        both = (said[a] != MISSING) & (said[b] != MISSING)
        c = Confusion.of_arrays(said[a][both], said[b][both])
        out.append(JudgeAgreement(a, b, CHUNK_STATISTICS["cohen_kappa"][0](c), int(both.sum())))
    return out


def describe_prompt(judge: Judge | None) -> tuple[str, int]:
    """(the judge's prompt in a few words, how many examples it shows: from its prompt file
    and from the session)."""
    if judge is None or judge.prompt_id == "imported":
        return "imported", 0
    definition = json.loads(judge.prompt_text) if judge.prompt_text else {}
    style = definition.get("style", "pointwise")
    from_file = judge.prompt_id.startswith("file:")
    name = judge.prompt_id.removeprefix("file:") + (".toml" if from_file else "")
    details = []
    if from_file or style == "listwise":
        window = judge.parameters.get("window") if style == "listwise" else None
        details.append(style + (f", windows of {window}" if window else ""))
    reply = definition.get("reply", {})
    if reply.get("kind") == "graded":
        details.append(f"graded 0-{reply['scale']}, useful at {reply['threshold']}+")
    described = f"{name} ({'; '.join(details)})" if details else name
    return described, len(definition.get("examples", []))


def _calls(session: Session, judge: str, price: Price | None, frame: ChunkFrame,
           defined: Judge | None = None, voters: int = 1) -> CallSummary:
    """What a judge's calls cost, per chunk judged once; a majority of ``voters`` runs costs that
    many times as much."""
    summary = session.call_summary(judge)
    chunks = (summary["calls"] - summary["failed"]) / voters
    replies = summary["replies"] or 0
    latencies = summary["latencies_ms"]
    tokens = summary["tokens_in"] + summary["tokens_out"]
    no_tokens = "imported: no tokens were recorded for these verdicts"
    cost = _cost(judge, price or session.price(judge), summary, chunks, tokens, no_tokens)
    repeated, unstable = _repeated(session, judge, frame)
    figures = {
        "parse_failure_rate": Stat((summary["bad_replies"] or 0) / replies) if replies else
        Stat.undefined("imported: no reply was recorded for these verdicts"),
        "flip_rate": Stat(len(unstable) / len(repeated)) if repeated else Stat.undefined(
            _judged_once(session, judge, defined)),
        "tokens_per_1000_chunks": Stat(1000 * tokens / chunks) if chunks and tokens else
        Stat.undefined(no_tokens),
        "cached_share": Stat(summary["tokens_cached"] / summary["tokens_in"])
        if summary["tokens_in"] else Stat.undefined(no_tokens),
        "cost_per_1000_chunks": cost,
        "median_latency_ms": Stat(statistics.median(latencies)) if latencies else
        Stat.undefined("imported: no latency was recorded for these verdicts"),
    }
    style, examples = describe_prompt(defined)
    if voters > 1:
        style = f"majority of {voters} runs of {judge}"
    return CallSummary(summary["calls"], summary["failed"], figures, unstable, style, examples)


def _judged_once(session: Session, judge: str, defined: Judge | None) -> str:
    """Why a judge has no flip rate, and the command that measures one, as it can be pasted."""
    if defined is None or defined.model is None:
        return ("judged once: its verdicts were imported, so no run of it can be repeated here; "
                "a judge run here with --repeat 3 has one")
    url = f" --base-url {defined.base_url}" if defined.base_url else ""
    return (f"judged once: run 'annotator judge {session.where} --model {defined.model}{url} "
            f"--name {judge} --repeat 3' to measure")


def judge_cost(session: Session, judge: str, price: Price | None = None) -> Stat:
    """USD per 1,000 chunks a judge's calls cost at ``price`` (default: its remembered
    price), or why none."""
    summary = session.call_summary(judge)
    tokens = summary["tokens_in"] + summary["tokens_out"]
    return _cost(judge, price or session.price(judge), summary, summary["calls"] - summary["failed"],
                 tokens, "imported: no tokens were recorded for these verdicts")


def _cost(judge: str, price: Price | None, summary: dict[str, Any], chunks: float, tokens: int,
          no_tokens: str) -> Stat:
    """USD per 1,000 chunks judged, or why there is no figure."""
    if price is None:
        return Stat.undefined(f"no price given: pass --price '{judge}=IN,OUT[,CACHED]' (USD per "
                              "million tokens) or give --price-in and --price-out to 'annotator "
                              "judge'")
    if not chunks or not tokens:
        return Stat.undefined(no_tokens)
    return Stat(price.cost(summary["tokens_in"], summary["tokens_out"],
                           summary["tokens_cached"]) * 1000 / chunks)


def _repeated(session: Session, judge: str, frame: ChunkFrame
              ) -> tuple[dict[int, list[int]], list[tuple[str, int, list[int]]]]:
    """The chunks judged more than once (chunk -> verdict of each run), and those whose verdict
    changed between runs as (golden, rank, verdicts)."""
    runs = session.repetitions(judge)
    slots = frame.slots(np.asarray(list(runs), dtype=np.int64)).tolist()
    place = {c: (frame.golden_ids[frame.cluster[at]], int(frame.rank[at]))
             for c, at in zip(runs, slots, strict=True) if at != MISSING}
    repeated = {c: [by_run[r] for r in sorted(by_run)] for c, by_run in runs.items()
                if len(by_run) > 1 and c in place}
    unstable = sorted((*place[c], said) for c, said in repeated.items() if len(set(said)) > 1)
    return repeated, unstable


@dataclass(frozen=True, slots=True)
class _PairData:
    """Two judges on the chunks they are compared on, with their confusions' scopes."""

    first: str
    second: str
    cluster: np.ndarray
    right_first: np.ndarray
    right_second: np.ndarray
    prefixes: tuple[str, str]


def _pair_sums(sums: ClusterSums, frame: ChunkFrame, names: list[str], labelled: np.ndarray,
               labels: np.ndarray, said: dict[str, np.ndarray], shared: np.ndarray,
               pairwise: bool) -> list[_PairData]:
    """Each pair's chunks (shared by all judges, or by the two), counted into the sums so the
    kappa difference is bootstrapped with everything else."""
    out = []
    cluster, human = frame.cluster[shared], labels[shared]
    for (a_i, a), (b_i, b) in combinations(enumerate(names), 2):
        if not pairwise:
            # Every judge on the same chunks: a pair's confusions are the judges' own columns,
            # already in the sums (copying them for each of 861 pairs of 42 judges cost a
            # seventh of a graded board's time and most of its memory).
            out.append(_PairData(a, b, cluster, said[a][shared] == human,
                                 said[b][shared] == human, (scope(a_i), scope(b_i))))
            continue
        on = _scored_on(labelled, said, [a, b])
        cluster_ab, human_ab, said_a, said_b = frame.cluster[on], labels[on], said[a][on], \
            said[b][on]
        prefixes = (scope("pair", a_i, b_i, "a"), scope("pair", a_i, b_i, "b"))
        add_confusion(sums, cluster_ab, human_ab, said_a, prefix=prefixes[0])
        add_confusion(sums, cluster_ab, human_ab, said_b, prefix=prefixes[1])
        out.append(_PairData(a, b, cluster_ab, said_a == human_ab, said_b == human_ab,
                             prefixes))
    return out


def _pairs(data: list[_PairData], est: Estimates, goldens: int) -> list[JudgePair]:
    raw = []
    for pair in data:
        right_a, right_b = pair.right_first, pair.right_second
        only_a = np.bincount(pair.cluster[right_a & ~right_b], minlength=goldens)
        only_b = np.bincount(pair.cluster[~right_a & right_b], minlength=goldens)
        test = McNemar.of(only_a.tolist(), only_b.tolist())
        kappa_a = confusion_formula(kappa_values, pair.prefixes[0])
        kappa_b = confusion_formula(kappa_values, pair.prefixes[1])

        def diff(s: Sums, kappa_a: Callable[[Sums], Any] = kappa_a,
                 kappa_b: Callable[[Sums], Any] = kappa_b) -> Any:
            return kappa_a(s) - kappa_b(s)

        ka = float(diff(est.totals))
        point = Stat.undefined("kappa is undefined for one of them") if np.isnan(ka) else Stat(ka)
        interval = (percentile_interval(diff(est.replicates), ka, est.clusters)
                    if est.replicates is not None else None)
        if interval is not None and point.value is not None:
            point = point.with_interval((interval.low, interval.high))
        raw.append((pair.first, pair.second, int(only_a.sum()), int(only_b.sum()), point,
                    test.cluster_p, len(pair.cluster)))
    adjusted = holm([p.value for *_, p, _ in raw])
    return [JudgePair(a, b, na, nb, dk, p,
                      Stat(q) if q is not None else Stat.undefined(str(p.reason)), n)
            for (a, b, na, nb, dk, p, n), q in zip(raw, adjusted, strict=True)]


def _best(names: list[str], pairs: list[JudgePair]) -> str | None:
    """The judge that significantly beats every other judge, if there is one."""
    if len(names) == 1:
        return None
    for name in names:
        mine = [p for p in pairs if name in (p.first, p.second)]
        if all(p.better == name for p in mine):
            return name
    return None


def _add_kappa_per_dollar(calls: CallSummary, kappa: Stat) -> None:
    """Cohen's kappa over USD per 1,000 chunks, among a judge's call figures."""
    cost = calls.figures["cost_per_1000_chunks"].value
    calls.figures["kappa_per_dollar"] = (
        Stat(kappa.value / cost) if cost and kappa.value is not None
        else Stat.undefined("needs a cost and a kappa"))


def _sort_key(sort: str, shown: set[str] | None = None) -> Callable[[JudgeRow], Any]:
    """How rows sort by ``sort``; ``shown``: the statistics the rows have (a graded or
    unranked board's differ), to refuse a column the board has not."""
    if sort == "judge":
        return lambda row: row.judge
    if sort not in SORT_KEYS:
        raise SessionError(f"Cannot sort by '{sort}'; choose one of {', '.join(SORT_KEYS)}.")
    if shown is not None and sort not in shown and sort not in CALL_SORTS:
        why = "the session holds no grades" if sort in GRADED_STATISTICS else \
            "an unranked pool has no CP"
        raise SessionError(f"Cannot sort by '{sort}' here: {why}. Sort by cohen_kappa, or "
                           "another column the table shows.")
    better = CALL_SORTS.get(sort) or next(c for c in COLUMNS if c.key == sort).better
    sign = 1.0 if better == "lower" else -1.0

    def key(row: JudgeRow) -> tuple[bool, float, str]:
        value = (row.calls.figures if sort in CALL_SORTS else row.stats)[sort].value
        return value is None, sign * (value or 0.0), row.judge

    return key


def _headline(board: Leaderboard) -> list[str]:
    truth = board.truth
    goldens = {"all": "", "test": " of the test split", "dev": " of the dev split"}[board.split]
    judges = counted(len(board.judges), "judge")
    if board.pairwise:
        lines = [f"{judges} scored against {truth.label}, but no chunk{goldens} carries a verdict "
                 "from every judge: each judge is scored on the chunks it judged (so the rows "
                 "are not on the same chunks) and each pair on the chunks both judged."]
    else:
        lines = [f"{judges} scored against {truth.label} on the same "
                 f"{counted(board.chunks, 'chunk')} ({counted(board.goldens, 'complete golden')}"
                 f"{goldens})."]
    if board.left_out:
        lines.append("Left out, with no verdict yet: " + ", ".join(f"'{n}'" for n in board.left_out)
                     + " (name a judge with --judge to score it anyway, or remove it with "
                     "'annotator remove-judge').")
    if board.split == "dev":
        lines.append("These are the dev goldens: a prompt tuned on them looks better here than "
                     "it is; choose on --split test.")
    if truth.adjudicated or truth.pending:
        lines.append(f"{truth.adjudicated} chunks carry an adjudicated gold label; "
                     f"{truth.pending} where people disagree await adjudication and are left out "
                     f"('annotator annotate {board.session} --adjudicate').")
    if not any(row.chunks for row in board.judges):
        lines.append("No chunk is labelled by the truth and judged yet.")
        return lines
    for section in ordered(HEADLINE_ORDER):
        lines.extend(section.headline(board))
    return lines


def _epoch_lines(board: Leaderboard) -> list[str]:
    """Each judge's epoch read and last re-check, and what a judge spanning epochs leaves out."""
    every = [row.epochs for row in board.judges if row.epochs is not None]
    spans = [line for e in every if (line := span_sentence(e)) is not None]
    named = epoch_line(every)
    return spans + ([named] if named else [])


def _lineage(session: Session, board: Leaderboard) -> list[str]:
    """Where each aligned judge on the board came from, and which of its scores are honest."""
    shown = {row.judge for row in board.judges}
    lines = []
    for run in session.align_runs():
        name = run["registered_as"]
        if name not in shown:
            continue
        lines.append(
            f"'{name}' was aligned from '{run['judge']}' on {run['model']} by align run "
            f"{run['id']} (optimizer {run['optimizer_model']}): chosen on the dev split, it beat "
            f"'{run['judge']}' on the test split by {run['test_difference']:+.3f} kappa (95% CI "
            f"{run['test_low']:+.3f} to {run['test_high']:+.3f}); "
            + ("its scores here are on the test split only, which it never saw."
               if board.split == "test" else
               "read its scores on --split test: these goldens include those it was tuned on."))
    return lines


