"""Trust or escalate on a session: fit a judge's confidence threshold on the dev split, evaluate
it once on the test split, store it, and say which chunks it sends to a stronger judge or a
person (the statistics are stats/trust.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.columns import MISSING, ChunkFrame
from annotator.errors import SessionError
from annotator.models import Price
from annotator.report.leaderboard import judge_cost
from annotator.resolve import judges_named
from annotator.scoring.truth import truth as find_truth
from annotator.scoring.unseen import unseen
from annotator.stats.stat import Stat
from annotator.stats.trust import (
    ThresholdFit,
    clopper_pearson,
    fit_threshold,
    kept_at,
    runs_confidence,
    verdict_confidence,
)
from annotator.store.session import Session


@dataclass(frozen=True, slots=True)
class Kept:
    """What a threshold keeps on the test split, judged once."""

    chunks: int
    kept: int
    agreeing: int

    @property
    def coverage(self) -> float | None:
        """The share of chunks whose verdict the judge keeps."""
        return self.kept / self.chunks if self.chunks else None

    @property
    def agreement(self) -> Stat:
        """Agreement with people on the kept chunks, with its exact 95% interval."""
        if not self.kept:
            return Stat.undefined("the threshold keeps no test chunk")
        return Stat(self.agreeing / self.kept,
                    interval=clopper_pearson(self.agreeing, self.kept))


@dataclass(frozen=True, slots=True)
class Cascade:
    """The judge, then a stronger judge on what it escalates, then people."""

    then: str
    fit: ThresholdFit
    """The stronger judge's threshold, fitted on the dev chunks the first one escalates."""
    confidence: str
    automated: Kept
    """Test chunks either judge keeps, and agreement with people on them."""
    to_people: int
    cost_per_1000: Stat
    """USD per 1,000 chunks: the first judge on all, the second on what the first escalates,
    and people's price per chunk (when given) on the rest."""


@dataclass(frozen=True, slots=True)
class Trust:
    """A judge's fitted threshold and what the test split says of it."""

    judge: str
    truth: str
    confidence: str
    """'logprobs' (P(relevant)) or 'runs' (agreement of repeated runs)."""
    fit: ThresholdFit
    test: Kept
    cost_per_1000: Stat
    cascade: Cascade | None = None
    stored: int | None = None

    @property
    def target(self) -> float:
        """The agreement the kept chunks are to reach: 1 - alpha."""
        return 1 - self.fit.alpha


@dataclass(frozen=True, slots=True)
class _Columns:
    verdict: np.ndarray
    confidence: np.ndarray
    kind: str


def fit_trust(session: Session, judge: str, *, annotator: str | None = None,
              alpha: float = 0.1, delta: float = 0.1, then: str | None = None,
              person_cost: float | None = None, prices: dict[str, Price] | None = None,
              store: bool = True) -> Trust:
    """Fit ``judge``'s threshold on the dev split, evaluate it once on the test split (and a
    cascade through ``then``), and store it (``store``). ``prices`` (USD per million tokens)
    override the judges' remembered prices for the cost per 1,000 chunks."""
    prices = prices or {}
    names = judges_named(session.judges_judged(), [judge, *([then] if then else [])])
    if then is not None and names[0] == names[1]:
        raise SessionError(f"--then names '{names[0]}' itself: a cascade escalates to another, "
                           "stronger judge.")
    splits = session.splits()
    if not splits:
        raise SessionError("Trust or escalate fits its threshold on the dev split and checks "
                           "it on the test split: make them first with 'annotator split "
                           f"{session.where} --dev 0.5 --seed 1'.")
    frame = session.chunk_frame()
    truth = find_truth(session, annotator, frame)
    split = _split_of(session, frame, names, splits)
    labelled = truth.verdict != MISSING
    first = _columns(session, frame, names[0])
    usable = labelled & (first.verdict != MISSING) & ~np.isnan(first.confidence)
    dev, test = usable & (split == "dev"), usable & (split == "test")
    if not dev.any():
        raise SessionError(f"No dev chunk carries both a label and a confident verdict of "
                           f"'{judge}': label some dev goldens first, or judge them.")
    right = first.verdict == truth.verdict
    fit = fit_threshold(first.confidence[dev], right[dev], alpha, delta)
    kept = kept_at(first.confidence, fit.threshold)
    result = Kept(int(test.sum()), int((kept & test).sum()), int((kept & test & right).sum()))
    own_cost = judge_cost(session, names[0], prices.get(names[0]))
    cascade = None
    if then is not None:
        cascade = _cascade(session, frame, names[1], truth.verdict, labelled, split, first,
                           kept, right, alpha, delta, own_cost,
                           judge_cost(session, names[1], prices.get(names[1])), person_cost)
    stored = None
    if store:
        stored = session.record_trust(
            names[0], truth=truth.source, confidence=first.kind, alpha=alpha, delta=delta,
            threshold=fit.threshold, dev_chunks=fit.chunks, dev_kept=fit.kept,
            test_chunks=result.chunks, test_kept=result.kept,
            test_agreement=result.agreement.value,
            test_low=(result.agreement.interval or (None, None))[0],
            test_high=(result.agreement.interval or (None, None))[1])
    return Trust(names[0], truth.label, first.kind, fit, result, own_cost, cascade, stored)


def _split_of(session: Session, frame: ChunkFrame, names: list[str],
              splits: dict[str, str]) -> np.ndarray:
    """Each chunk's split ('dev', 'test', or '' for a golden a judge saw as an example)."""
    seen: set[str] = set()
    for s in ("dev", "test"):
        kept = unseen(session, names, s).golden_ids
        seen.update(kept if kept is not None else
                    (g for g, where in splits.items() if where == s))
    per_golden = np.asarray([splits.get(g, "") if g in seen else "" for g in frame.golden_ids],
                            dtype=object)
    return np.asarray(per_golden[frame.cluster]) if len(frame) else np.zeros(0, dtype=object)


def _columns(session: Session, frame: ChunkFrame, judge: str) -> _Columns:
    """The judge's verdicts and its confidence in each: P(relevant) where its endpoint gave
    logprobs, else the agreement of its repeated runs; NaN where it has neither."""
    read = session.judge_columns(judge, frame)
    verdict = read.verdict
    if (~np.isnan(read.p_relevant) & (verdict != MISSING)).any():
        return _Columns(verdict, verdict_confidence(verdict, read.p_relevant), "logprobs")
    runs = session.repetitions(judge)
    if not runs:
        raise SessionError(
            f"'{judge}' gives no confidence to threshold: its verdicts carry no P(relevant) and "
            "it was run once. Run it with logprobs on an endpoint that returns them "
            f"('annotator judge {session.where} --model M --name {judge}'), or repeat it "
            f"('--repeat 5'): the agreement of its runs is then its confidence.")
    k = min(len(by_run) for by_run in runs.values())
    chunk_ids = np.asarray(list(runs), dtype=np.int64)
    votes = np.asarray([[by_run[r] for r in sorted(by_run)[:k]] for by_run in runs.values()])
    at = frame.slots(chunk_ids)
    inside = at != MISSING
    confidence = np.full(len(frame), np.nan)
    confidence[at[inside]] = runs_confidence(verdict[at[inside]], votes[inside])
    return _Columns(verdict, confidence, "runs")


def _cascade(session: Session, frame: ChunkFrame, then: str, truth: np.ndarray,
             labelled: np.ndarray, split: np.ndarray, first: _Columns, kept: np.ndarray,
             right: np.ndarray, alpha: float, delta: float, first_cost: Stat,
             second_cost: Stat, person_cost: float | None) -> Cascade:
    """The stronger judge fitted on the dev chunks the first escalates, and the cascade on
    the test split."""
    second = _columns(session, frame, then)
    usable = labelled & (first.verdict != MISSING) & ~np.isnan(first.confidence)
    has = (second.verdict != MISSING) & ~np.isnan(second.confidence)
    right_2 = second.verdict == truth
    escalated_dev = usable & (split == "dev") & ~kept & has
    fit = fit_threshold(second.confidence[escalated_dev], right_2[escalated_dev], alpha, delta)
    kept_2 = kept_at(second.confidence, fit.threshold) & has & ~kept
    test = usable & (split == "test")
    automated = (kept | kept_2) & test
    agreeing = (kept & test & right) | (kept_2 & test & right_2)
    n = int(test.sum())
    escalated = int((test & ~kept).sum())
    to_people = int((test & ~kept & ~kept_2).sum())
    if first_cost.value is None or second_cost.value is None:
        cost = Stat.undefined(str(first_cost.reason or second_cost.reason))
    elif not n:
        cost = Stat.undefined("no test chunk")
    else:
        total = first_cost.value + second_cost.value * escalated / n
        if person_cost is not None:
            total += person_cost * 1000 * to_people / n
        cost = Stat(total)
    return Cascade(then, fit, second.kind, Kept(n, int(automated.sum()), int(agreeing.sum())),
                   to_people, cost)


def escalated(session: Session, judge: str) -> list[tuple[str, int]]:
    """The chunks (golden, rank) whose verdict from ``judge`` falls below its stored
    threshold, or has no confidence: those a stronger judge or a person should see."""
    stored = session.trust_threshold(judge)
    if stored is None:
        raise SessionError(f"'{judge}' has no trust threshold yet: fit one with 'annotator "
                           f"trust {session.where} --judge {judge}'.")
    frame = session.chunk_frame()
    columns = _columns(session, frame, judge)
    judged = columns.verdict != MISSING
    keep = kept_at(np.nan_to_num(columns.confidence, nan=-1.0), stored["threshold"])
    rows = np.flatnonzero(judged & ~keep)
    return [(frame.golden_ids[int(frame.cluster[i])], int(frame.rank[i])) for i in rows]
