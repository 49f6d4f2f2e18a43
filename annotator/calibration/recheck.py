"""Re-check a judge: judge the frozen canary again as the judge is served now, compare with its
verdicts in force, keep the record, and size the canary (the statistics are stats/drift.py).

The canary is chosen once for the session and stored: by default every chunk people labelled
in the test split (every labelled chunk when the session has no split), never a chunk a judge
was shown as an example; ``--canary N`` draws whole goldens at random until N chunks. Every
re-check of every judge then asks the same chunks, so re-checks compare like with like. A
re-check's calls are stored apart from the judge's verdicts: it measures a judge, it never
changes one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from annotator.columns import MISSING
from annotator.errors import SessionError
from annotator.judge.runner import (
    Lease,
    RunOptions,
    RunStats,
    Task,
    iter_tasks,
    send_tasks,
)
from annotator.judge.types import JudgeSettings
from annotator.scoring.truth import truth as find_truth
from annotator.stats.drift import (
    ALPHA,
    RecheckFigures,
    RunningBound,
    agreement_tolerance,
    canary_size,
    recheck_figures,
    running_bounds,
)
from annotator.stats.stat import Stat
from annotator.store.session import Session, now

if TYPE_CHECKING:
    from annotator.judge.transport import Transport

TOLERANCE = 0.05
"""The kappa drop a team accepts before a re-check calls the judge worse."""


@dataclass(frozen=True, slots=True)
class Canary:
    """The frozen canary: its chunk ids in their drawn order, and how they were chosen."""

    chunk_ids: list[int]
    how: dict[str, Any]

    def sentence(self) -> str:
        """'240 chunks of 31 goldens, every labelled chunk of the test split, chosen ...'."""
        asked = self.how.get("asked")
        return (f"{len(self.chunk_ids):,} chunks of {self.how.get('goldens', '?')} goldens: "
                + (f"goldens drawn until {asked:,} chunks, seed {self.how.get('seed')}, "
                   if asked else "")
                + f"{self.how.get('from')}, chosen {str(self.how.get('chosen_at', ''))[:10]}")


def choose_canary(session: Session, size: int | None = None, seed: int = 0, *,
                  store: bool = True) -> tuple[Canary, bool]:
    """The session's canary, chosen now if it has none (True then), and stored unless
    ``store`` is False (a dry run writes nothing)."""
    ids, how = session.canary()
    if ids and how is not None:
        if size is not None and how.get("asked") != size:
            raise SessionError(
                f"The canary is frozen at {len(ids):,} chunks (chosen "
                f"{str(how.get('chosen_at', ''))[:10]}), so every re-check asks the same ones; "
                f"--canary {size} cannot change it now. Leave --canary out.")
        return Canary(ids, how), False
    frame = session.chunk_frame()
    truth = find_truth(session, None, frame)
    eligible = truth.verdict != MISSING
    splits = session.splits()
    if splits:
        test = np.asarray([splits.get(g) == "test" for g in frame.golden_ids], dtype=bool)
        if len(frame):
            eligible &= test[frame.cluster]
        source = "every labelled chunk of the test split"
    else:
        source = "every labelled chunk (the session has no split)"
    shown = {(g, r) for every in session.judge_examples().values() for g, r, _ in every}
    if shown:
        eligible &= np.asarray([(frame.golden_ids[c], int(r)) not in shown
                                for c, r in zip(frame.cluster, frame.rank, strict=True)],
                               dtype=bool)
    if not eligible.any():
        where = "in the test split " if splits else ""
        raise SessionError(f"No chunk {where}has a person's label yet, so there is no canary to "
                           f"re-check against: label some goldens first ('annotator annotate "
                           f"{session.where}').")
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(eligible)
    if size is not None:
        goldens = rng.permutation(np.unique(frame.cluster[rows]))
        counts = np.bincount(frame.cluster[rows], minlength=len(frame.golden_ids))[goldens]
        enough = int(np.searchsorted(np.cumsum(counts), size)) + 1
        kept = set(goldens[:enough].tolist())
        rows = rows[np.isin(frame.cluster[rows], list(kept))]
    order = rng.permutation(rows)
    how = {"from": source, "asked": size, "seed": seed, "chosen_at": now(),
           "goldens": len(np.unique(frame.cluster[order]))}
    chunk_ids = [int(c) for c in frame.chunk_id[order]]
    if store:
        session.set_canary(chunk_ids, how)
    return Canary(chunk_ids, how), True


def recheck_tasks(session: Session, settings: JudgeSettings, canary: Canary,
                  answered: set[int], stats: RunStats) -> list[Task]:
    """The requests that ask every canary chunk without a verdict in this re-check yet (a
    listwise judge asks the chunk's whole golden, as it was judged)."""
    frame = session.chunk_frame()
    pending = set(canary.chunk_ids) - answered
    goldens = {frame.golden_ids[c] for c, i in zip(frame.cluster, frame.chunk_id, strict=True)
               if int(i) in pending}
    options = RunOptions(goldens=frozenset(goldens))
    tasks = [t for t in iter_tasks(session, settings, options, stats)
             if any(c in pending for c in t.chunk_ids)]
    stats.total = sum(len(t.chunk_ids) for t in tasks)
    return tasks


async def run_recheck(session: Session, judge: str, settings: JudgeSettings,
                      client: Transport,
                      options: RunOptions, stats: RunStats, canary: Canary, *,
                      on_progress: Callable[[RunStats], None] | None = None,
                      secrets: tuple[str, ...] = ()) -> int:
    """Judge the canary again with the judge's stored settings (resuming its unfinished
    re-check, if any) and store each call as it ends; the re-check's id."""
    lease = Lease(session, judge)
    lease.take()
    try:
        opened = session.open_recheck(judge)
        if opened is not None:
            recheck_id = int(opened["id"])
        else:
            recheck_id = session.start_recheck(judge, session.epoch_in_use(judge))
        inside = set(canary.chunk_ids)
        work = recheck_tasks(session, settings, canary,
                             set(session.recheck_verdicts(recheck_id)), stats)

        def record(calls: list[dict[str, object]]) -> None:
            mine = [c for c in calls if c["chunk_id"] in inside]
            if mine:
                session.record_recheck_calls(recheck_id, judge, mine)

        await send_tasks(session, judge, settings, client, replace(options, repeat=1), stats,
                         on_progress, secrets, lease, work, record)
        return recheck_id
    finally:
        lease.release()


@dataclass(frozen=True, slots=True)
class Recheck:
    """A finished re-check: what it compared and what it found."""

    recheck_id: int
    judge: str
    epoch_before: str | None
    epochs_now: list[str]
    figures: RecheckFigures
    left_out: dict[str, int]
    """Canary chunks left out, by why (no label now, no verdict before, none now)."""


@dataclass(frozen=True, slots=True)
class _Paired:
    """The canary chunks that have a truth and a verdict before, in canary order."""

    chunk_ids: np.ndarray
    golden: np.ndarray
    truth: np.ndarray
    before: np.ndarray
    left_out: dict[str, int] = field(default_factory=dict)


def _paired(session: Session, judge: str, epoch: str | None, canary: Canary) -> _Paired:
    frame = session.chunk_frame()
    truth = find_truth(session, None, frame).verdict
    with session.epochs_read({judge: epoch}):  # the verdicts of the epoch re-checked against
        before = session.judge_columns(judge, frame).verdict
    at = frame.slots(np.asarray(canary.chunk_ids, dtype=np.int64))
    present = at != MISSING
    rows = at[present]
    labelled = truth[rows] != MISSING
    judged = before[rows] != MISSING
    keep = labelled & judged
    left = {"chunk gone from the session": int((~present).sum()),
            "no label now": int((~labelled).sum()),
            "no verdict before": int((labelled & ~judged).sum())}
    rows = rows[keep]
    clusters = frame.cluster[rows]
    _, golden = np.unique(clusters, return_inverse=True)
    return _Paired(frame.chunk_id[rows], golden.astype(np.int64), truth[rows].astype(np.int8),
                   before[rows].astype(np.int8), {k: v for k, v in left.items() if v})


def finish_recheck(session: Session, judge: str, recheck_id: int, canary: Canary, *,
                   tolerance: float = TOLERANCE, alpha: float = ALPHA, resamples: int = 2000,
                   seed: int = 0) -> Recheck:
    """Compare the re-check with the judge's verdicts of the epoch it was started against,
    store the figures and close it."""
    epoch_before = session.recheck_row(recheck_id)["epoch_before"]
    paired = _paired(session, judge, epoch_before, canary)
    now_verdicts = session.recheck_verdicts(recheck_id)
    after = np.asarray([now_verdicts.get(int(c), MISSING) for c in paired.chunk_ids],
                       dtype=np.int64)
    answered = after != MISSING
    left = dict(paired.left_out)
    if (~answered).any():
        left["no verdict now"] = int((~answered).sum())
    _, golden = np.unique(paired.golden[answered], return_inverse=True)
    figures = recheck_figures(golden, paired.truth[answered], paired.before[answered],
                              after[answered].astype(np.int8), tolerance=tolerance, alpha=alpha,
                              resamples=resamples, seed=seed)
    epochs_now = session.recheck_epochs(recheck_id)
    session.finish_recheck(recheck_id, figures_json(figures) | {
        "epoch_before": epoch_before, "epochs_now": epochs_now, "left_out": left,
        "canary": len(canary.chunk_ids)})
    return Recheck(recheck_id, judge, epoch_before, epochs_now, figures, left)


def stat_json(stat: Stat) -> dict[str, Any]:
    """A statistic as JSON: its value, its 95% interval (null when none) and why it is
    undefined or has no interval (null when neither)."""
    return {"value": stat.value, "ci95": list(stat.interval) if stat.interval else None,
            "why": stat.reason}


def figures_json(figures: RecheckFigures) -> dict[str, Any]:
    """A re-check's figures as plain JSON values (null with a reason where undefined)."""
    return {"chunks": figures.chunks, "goldens": figures.goldens,
            "agreement_before": stat_json(figures.agreement_before),
            "agreement_after": stat_json(figures.agreement_after),
            "kappa_before": stat_json(figures.kappa_before),
            "kappa_after": stat_json(figures.kappa_after),
            "kappa_drop": stat_json(figures.kappa_drop),
            "flips": {"useful_to_noise": figures.flips.useful_to_noise,
                      "noise_to_useful": figures.flips.noise_to_useful,
                      "right_to_wrong": figures.flips.right_to_wrong,
                      "wrong_to_right": figures.flips.wrong_to_right},
            "worse_p": stat_json(figures.worse_p), "tolerance": figures.tolerance,
            "alpha": figures.alpha, "worse": figures.worse}


@dataclass(frozen=True, slots=True)
class Look:
    """One finished re-check in the history, with the running bound after it."""

    recheck: dict[str, Any]
    bound: RunningBound | None
    """None for a re-check against another epoch than the latest one's (the bound restarts
    when the judge's verdicts in force change epoch)."""


def history(session: Session, judge: str, canary: Canary, *, tolerance: float = TOLERANCE,
            alpha: float = ALPHA) -> tuple[list[Look], float | None]:
    """Every finished re-check of a judge, oldest first, and the running bound on the drop in
    agreement after each re-check against the latest one's baseline epoch; also that tolerance
    read in agreement (None without re-checks)."""
    done = session.rechecks(judge)
    if not done:
        return [], None
    epoch = done[-1]["epoch_before"]
    paired = _paired(session, judge, epoch, canary)
    baseline = (paired.before == paired.truth).astype(float)
    streams = []
    for recheck in done:
        if recheck["epoch_before"] != epoch:
            continue
        verdicts = session.recheck_verdicts(int(recheck["id"]))
        after = np.asarray([verdicts.get(int(c), -1) for c in paired.chunk_ids])
        streams.append((after == paired.truth)[after >= 0].astype(float))
    in_agreement = agreement_tolerance(tolerance, paired.truth, paired.before)
    bounds = iter(running_bounds(baseline, streams, in_agreement, alpha))
    looks = [Look(r, next(bounds, None) if r["epoch_before"] == epoch else None) for r in done]
    return looks, in_agreement


@dataclass(frozen=True, slots=True)
class Plan:
    """How many canary chunks a re-check needs to find a given drop, and from what."""

    chunks: int | None
    drop: float
    tolerance: float
    power: float
    prevalence: float
    sensitivity: float
    specificity: float
    instability: float
    instability_from: str
    labelled: int
    per_golden: int
    """Labelled chunks a golden, on average: the canary is drawn in whole goldens."""


def plan_canary(session: Session, judge: str, *, drop: float, tolerance: float = TOLERANCE,
                alpha: float = ALPHA, power: float = 0.9) -> Plan:
    """The canary size at which one re-check finds the judge worse in ``power`` of the runs
    when its agreement with people dropped by ``drop``, from the session's own figures: the
    judge's verdicts in force against the people's labels, and how often its verdicts change
    from one run to the next (its repeated runs, else its latest re-check, else none)."""
    frame = session.chunk_frame()
    truth = find_truth(session, None, frame).verdict
    verdict = session.judge_columns(judge, frame).verdict
    both = (truth != MISSING) & (verdict != MISSING)
    if both.sum() < 10:
        raise SessionError(f"Sizing a canary needs at least 10 chunks with both a label and a "
                           f"verdict of '{judge}'; there are {int(both.sum())}. Label or judge "
                           "more first.")
    t, v = truth[both] == 1, verdict[both] == 1
    prevalence = float(t.mean())
    sensitivity = float(v[t].mean()) if t.any() else 1.0
    specificity = float((~v[~t]).mean()) if (~t).any() else 1.0
    instability, basis = _instability(session, judge)
    per_golden = max(1, round(int(both.sum()) / len(np.unique(frame.cluster[both]))))
    chunks = canary_size(prevalence=prevalence, sensitivity=sensitivity, specificity=specificity,
                         instability=instability, drop=drop, tolerance=tolerance, alpha=alpha,
                         power=power, per_golden=per_golden)
    return Plan(chunks, drop, tolerance, power, prevalence, sensitivity, specificity,
                instability, basis, int(both.sum()), per_golden)


def _instability(session: Session, judge: str) -> tuple[float, str]:
    """How often the judge's verdict changes between two runs of one request, and from what."""
    runs = session.repetitions(judge)
    pairs = [(by_run[1], other) for by_run in runs.values() if 1 in by_run
             for r, other in by_run.items() if r != 1]
    if pairs:
        changed = sum(a != b for a, b in pairs)
        return changed / len(pairs), f"its repeated runs ({len(pairs):,} pairs of verdicts)"
    # A re-check of a judge that drifted flips more than the judge's own noise: the steadiest
    # re-check is the closest reading of that noise.
    shares = [((f["flips"]["useful_to_noise"] + f["flips"]["noise_to_useful"]) / f["chunks"],
               f["chunks"]) for f in (r["figures"] for r in session.rechecks(judge))
              if f["chunks"]]
    if shares:
        share, chunks = min(shares)
        return share, f"its steadiest re-check ({chunks:,} chunks)"
    return 0.0, ("nothing: the judge was never run twice, so the plan takes it to answer alike "
                 "every time ('annotator judge --repeat 2' measures it)")
