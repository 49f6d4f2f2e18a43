"""Which goldens people label: a design's sample drawn from the session, stored once, and the
estimates that stay valid under it (the arithmetic is annotator.stats.designs).

The stored sample (``Session.random_sample``) holds everything its estimates need, whatever
the judge says later: the goldens in the order people label them, each one's inclusion
probability, and for ``stratified`` every golden's stratum, for ``active`` every draw and each
drawn golden's probability per draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotator.errors import SessionError
from annotator.models import DESIGNS
from annotator.scoring.grouping import system_values
from annotator.stats import designs
from annotator.stats.designs import DEFAULT_TARGET, DesignSection, Estimate
from annotator.stats.metrics import context_precision_by_golden
from annotator.stats.ppi import draw_sample
from annotator.stats.stat import Stat
from annotator.store.session import Session

"""The half-width on mean CP a sample aims at (--target-width)."""


@dataclass(frozen=True, slots=True)
class JudgeView:
    """Every golden the judge judged whole: its CP, and what people's CP is expected to be
    against it (from P(relevant), else from other judges, else nothing known)."""

    golden_ids: list[str]
    judge_cp: np.ndarray
    bias: np.ndarray
    """E[people's CP - the judge's]."""
    error: np.ndarray
    """E[(people's CP - the judge's)^2]."""
    systems: list[str]
    """Each golden's system, '' when the goldens do not span two."""
    source: str
    """Where the expected error comes from, in words."""


def judge_view(session: Session, judge: str, group_by: str | None = None, seed: int = 0
               ) -> JudgeView:
    """The judge's CP on every golden it judged whole, with its expected error there."""
    frame = session.chunk_frame()
    said = session.judge_columns(judge, frame)
    cp = context_precision_by_golden(said.verdict, frame.sizes)
    whole = ~np.isnan(cp)
    if not whole.any():
        raise SessionError(f"Judge '{judge}' has judged no golden whole yet: a design needs its "
                           "verdicts ('annotator judge').")
    index = np.flatnonzero(whole)
    starts, sizes = frame.starts, frame.sizes
    p = said.p_relevant
    chances = [p[starts[g]:starts[g] + sizes[g]] for g in index.tolist()]
    known = np.asarray([len(c) > 0 and not np.isnan(c).any() for c in chances])
    bias, error = np.full(len(index), np.nan), np.full(len(index), np.nan)
    rng = np.random.default_rng(seed)
    source = []
    if known.any():
        b, e = designs.expected_errors([c for c, k in zip(chances, known.tolist(), strict=True)
                                        if k], cp[index[known]], rng)
        bias[known], error[known] = b, e
        source.append(f"the judge's P(relevant) on {int(known.sum()):,} goldens")
    others = [j for j, judged in session.judges_judged().items() if judged and j != judge]
    if others and not known.all():
        cps = np.stack([context_precision_by_golden(
            session.judge_columns(j, frame).verdict, frame.sizes)[index] for j in others])
        difference = cps - cp[index]
        seen = ~np.isnan(difference).all(axis=0) & ~known
        if seen.any():
            with np.errstate(invalid="ignore"):
                bias[seen] = np.nanmean(difference[:, seen], axis=0)
                error[seen] = np.nanmean(difference[:, seen] ** 2, axis=0)
            source.append(f"disagreement with {len(others)} other judge(s) on "
                          f"{int(seen.sum()):,} goldens")
    missing = np.isnan(error)
    if missing.all():
        bias[:], error[:] = 0.0, 1.0  # nothing known: every golden alike (uniform)
        source = ["nothing (no P(relevant), no other judge): every golden alike"]
    elif missing.any():
        bias[missing], error[missing] = np.nanmean(bias), np.nanmean(error)
        source.append(f"the mean of those on the other {int(missing.sum()):,}")

    ids = [frame.golden_ids[g] for g in index.tolist()]
    _, system_of = system_values(session, group_by)
    systems = [system_of.get(g, "(none)") for g in ids]
    if len(set(systems)) < 2:
        systems = [""] * len(ids)
    return JudgeView(ids, cp[index], bias, error, systems, "; ".join(source))


def draw(session: Session, size: int, design: str, seed: int, judge: str | None,
         group_by: str | None = None) -> dict[str, Any]:
    """Draw a sample of ``size`` goldens by ``design`` and store it (a different draw is
    refused); return the sample in force."""
    if design not in DESIGNS:
        raise SessionError(f"No design '{design}'; choose from {', '.join(DESIGNS)}.")
    if (stored := session.stored_draw(size, seed, design)) is not None:
        return stored  # drawn before from the verdicts of the time: it stands
    if design == "uniform":
        return session.set_random_sample(size, seed, draw_sample(session.golden_ids(), size,
                                                                 seed))
    if judge is None:
        raise SessionError(f"The {design} design draws from a judge's verdicts; name one with "
                           "--judge.")
    view = judge_view(session, judge, group_by, seed)
    rng = np.random.default_rng(seed)
    extra: dict[str, Any]
    if design == "stratified":
        names = designs.strata(view.judge_cp, view.systems)
        keys = np.asarray(names)
        sizes = {h: int((keys == h).sum()) for h in set(names)}
        needed = designs.stratified_minimum(names)
        if size < needed:  # nothing stored: a larger draw than asked is no answer
            systems = len(set(view.systems))
            raise SessionError(
                f"The stratified design keeps at least {designs.MIN_PER_STRATUM} goldens in "
                f"each of its {len(sizes)} strata (the judge's CP quartiles"
                + (f" within each of {systems} systems" if systems > 1 else "") + "), so it "
                f"needs --size {needed} or more, not {size}. Ask for {needed}, or draw "
                f"{size} with --design uniform.")
        spreads = {h: math.sqrt(max(float(view.error[keys == h].mean())
                                    - float(view.bias[keys == h].mean()) ** 2, 0.0))
                   for h in sizes}
        alloc = designs.neyman(sizes, spreads, size)
        order = [view.golden_ids[i] for i in designs.stratified_order(names, alloc, rng)]
        members: dict[str, list[str]] = {}
        for golden_id, h in zip(view.golden_ids, names, strict=True):
            members.setdefault(h, []).append(golden_id)
        stratum_of = dict(zip(view.golden_ids, names, strict=True))
        extra = {"design": "stratified", "judge": judge, "strata": members,
                 "stratum_systems": dict(zip(names, view.systems, strict=True)),
                 "allocation": alloc,
                 "probabilities": {g: alloc[stratum_of[g]] / sizes[stratum_of[g]]
                                   for g in order}}
    elif design == "active":
        q = designs.active_probabilities(np.sqrt(view.error))
        order = [view.golden_ids[i] for i in designs.active_order(q, size, rng)]
        per_golden = dict(zip(view.golden_ids, q.tolist(), strict=True))
        chosen = np.asarray([per_golden[g] for g in order])
        extra = {"design": "active", "judge": judge, "population": view.golden_ids,
                 "draws": order, "q": {g: per_golden[g] for g in order}, "replacement": False,
                 "golden_systems": dict(zip(view.golden_ids, view.systems, strict=True)),
                 "probabilities": dict(zip(order, designs.inclusion(chosen, size).tolist(),
                                           strict=True))}
    else:  # DESIGNS names a design this function does not draw: never a silent other one
        raise SessionError(f"The {design} design has no draw here yet; choose from "
                           "uniform, stratified and active.")
    extra["error_source"] = view.source
    return session.set_random_sample(size, seed, order, extra)


# -- estimates under the design ---------------------------------------------------------------

def _stat(estimate: Estimate | str) -> Stat:
    if isinstance(estimate, str):
        return Stat.undefined(estimate)
    return Stat(estimate.point, interval=(estimate.low, estimate.high))


Value = Callable[[float], float]
"""What is estimated of a golden's CP: the CP itself, or whether it passes the mark."""


class _Stratified:
    """A stratified sample's estimates: stratified PPI++ over its strata."""

    def __init__(self, sample: dict[str, Any], human: dict[str, float],
                 judge: dict[str, float], system_of: dict[str, str]) -> None:
        self.members: dict[str, list[str]] = sample["strata"]
        self.human, self.judge, self.system_of = human, judge, system_of
        # A golden people labelled outside the sample was not drawn: it is no stratum's draw.
        self.drawn = {g for g in sample["golden_ids"] if g in human and g in judge}
        self.labelled = self.steps = len(self.drawn)
        stratum_of = {g: h for h, ids in self.members.items() for g in ids}
        per_stratum = {h: sum(1 for g in ids if g in self.drawn)
                       for h, ids in self.members.items()}
        self.weights = {g: len(self.members[stratum_of[g]]) / per_stratum[stratum_of[g]]
                        for g in self.drawn}

    def estimate(self, value: Value, only: Sequence[str] | None,
                 lam: float | None) -> Estimate | str:
        """The estimate of ``value``'s mean over the strata of ``only``'s systems (None: all)."""
        strata: designs.Strata = {}
        labelled: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for h, ids in self.members.items():
            if only is not None and self.system_of.get(h) not in only:
                continue
            known = [g for g in ids if g in self.judge]
            strata[h] = (len(ids), float(np.mean([value(self.judge[g]) for g in known]))
                         if known else 0.0)
            mine = [g for g in ids if g in self.drawn]
            labelled[h] = (np.asarray([value(self.human[g]) for g in mine]),
                           np.asarray([value(self.judge[g]) for g in mine]))
        return designs.stratified_estimate(strata, labelled, lam)


class _Active:
    """An active sample's estimates: inverse-probability-weighted PPI++ over the draws labelled
    so far (without replacement; with replacement for samples stored before)."""

    def __init__(self, sample: dict[str, Any], human: dict[str, float],
                 judge: dict[str, float], system_of: dict[str, str]) -> None:
        self.human, self.judge, self.system_of = human, judge, system_of
        self.population = [g for g in sample["population"] if g in judge]
        self.draws: list[str] = []
        for g in sample["draws"]:  # the draws up to the first golden not yet labelled
            if g not in human or g not in judge:
                break
            self.draws.append(g)
        self.q: dict[str, float] = sample["q"]
        self.with_replacement = sample.get("replacement", True)  # as drawn before
        self.labelled, self.steps = len(set(self.draws)), len(self.draws)
        self.weights: dict[str, float] = {}
        for g in self.draws:  # a golden drawn twice (with replacement) counts twice
            self.weights[g] = self.weights.get(g, 0.0) + 1 / (
                self.q[g] if self.with_replacement else min(1.0, len(self.draws) * self.q[g]))

    def estimate(self, value: Value, only: Sequence[str] | None,
                 lam: float | None) -> Estimate | str:
        """The estimate of ``value``'s mean over ``only``'s systems' goldens (None: all)."""
        mine = [g for g in self.draws if only is None or self.system_of.get(g) in only]
        pool = [g for g in self.population if only is None or self.system_of.get(g) in only]
        if len(mine) < designs.MIN_PER_STRATUM:
            return (f"needs {designs.MIN_PER_STRATUM} labelled draws" + (
                " of this system" if only else "") + f"; {len(mine)} so far")
        sizes = np.asarray([self.q[g] for g in mine])
        return designs.active_estimate(
            np.asarray([value(self.human[g]) for g in mine]),
            np.asarray([value(self.judge[g]) for g in mine]), sizes,
            np.asarray([value(self.judge[g]) for g in pool]), lam,
            # The labelled prefix of a sample without replacement is one of its size.
            None if self.with_replacement else designs.inclusion(sizes, len(self.draws)))


_ESTIMATORS: dict[str, type[_Stratified] | type[_Active]] = {
    "stratified": _Stratified, "active": _Active}
"""The estimator of each design that draws from the judge (uniform's is PPI++ over all)."""


def design_section(sample: dict[str, Any], human: dict[str, float], judge: dict[str, float],
                   counts: dict[str, tuple[int, int, int, int]], pass_mark: float,
                   target: float = DEFAULT_TARGET) -> DesignSection:
    """The design's estimates from people's CP and the judge's per golden (``human``: sampled
    goldens complete under people's labels; ``judge``: every golden it judged whole) and per
    labelled golden its (false positives, people's noise chunks, false negatives, people's
    useful chunks)."""
    design = sample["design"]
    # Stratum -> system (stratified) or golden -> system (active); samples stored before this
    # release kept either under "systems".
    system_of: dict[str, str] = sample.get(
        "stratum_systems" if design == "stratified" else "golden_systems",
        sample.get("systems", {}))
    by = _ESTIMATORS[design](sample, human, judge, system_of)

    def mean(x: float) -> float:
        return x

    def passes(x: float) -> float:
        return float(x >= pass_mark - 1e-9)

    best = by.estimate(mean, None, None)
    stats = {"ppi_plus_plus": _stat(best), "human_only": _stat(by.estimate(mean, None, 0.0)),
             "judge_only": Stat(float(np.mean(list(judge.values())))) if judge else
             Stat.undefined("no golden is judged whole"),
             "pass_rate_ppi": _stat(by.estimate(passes, None, None)),
             "fp_rate": _ratio(by.weights, counts, 0, 1),
             "fn_rate": _ratio(by.weights, counts, 2, 3)}
    systems = sorted({s for s in system_of.values() if s})
    half = None if isinstance(best, str) else best.half_width
    return DesignSection(design, len(sample["golden_ids"]), by.labelled, stats,
                         {s: _stat(by.estimate(mean, [s], None)) for s in systems}, target,
                         half, None if half is None else designs.more_needed(
                             by.steps, half, target))


def _ratio(weights: dict[str, float], counts: dict[str, tuple[int, int, int, int]], top: int,
           bottom: int) -> Stat:
    """A chunk rate over every golden from the labelled ones, each weighted by one over its
    chance of being labelled, with its linearised 95% interval (goldens as weighted draws)."""
    ids = [g for g in weights if g in counts]
    a = np.asarray([counts[g][top] for g in ids], dtype=float)
    b = np.asarray([counts[g][bottom] for g in ids], dtype=float)
    w = np.asarray([weights[g] for g in ids])
    if len(ids) < 2 or float((w * b).sum()) == 0:
        return Stat.undefined("too few labelled chunks of this class")
    rate = float((w * a).sum() / (w * b).sum())
    z = w * (a - rate * b)
    se = math.sqrt(len(z) / (len(z) - 1) * float((z ** 2).sum())) / float((w * b).sum())
    return Stat(rate, interval=(max(0.0, rate - designs.Z * se), min(1.0, rate + designs.Z * se)))


CALIBRATE_FROM = designs.CALIBRATE_FROM


@dataclass(frozen=True, slots=True)
class Plan:
    """How many goldens each design needs for a target half-width on mean CP."""

    sizes: dict[str, int]
    target: float
    goldens: int
    source: str
    calibrated_on: int
    """Labelled goldens the judge's expected error was rescaled on (0: not rescaled)."""


def plan(session: Session, judge: str, target: float = DEFAULT_TARGET,
         group_by: str | None = None) -> Plan:
    """Each design's sample size for ``target``, from the judge's expected error; where people
    have labelled CALIBRATE_FROM goldens or more, that error is rescaled to what they found."""
    view = judge_view(session, judge, group_by)
    error = view.error
    frame = session.chunk_frame()
    cp: dict[str, list[float]] = {}
    for person in session.annotators():
        human = context_precision_by_golden(session.label_columns(person, frame).verdict,
                                            frame.sizes)
        for g, value in zip(frame.golden_ids, human.tolist(), strict=True):
            if not math.isnan(value):
                cp.setdefault(g, []).append(value)
    at = {g: i for i, g in enumerate(view.golden_ids)}
    seen = [g for g in cp if g in at]
    calibrated = 0
    if len(seen) >= CALIBRATE_FROM:
        index = np.asarray([at[g] for g in seen])
        people = np.asarray([float(np.mean(cp[g])) for g in seen])
        error, calibrated = designs.rescaled(error, view.judge_cp, index, people), len(seen)
    names = designs.strata(view.judge_cp, view.systems)
    return Plan(designs.planned_sizes(view.judge_cp, view.bias, error, names, target), target,
                len(view.golden_ids), view.source, calibrated)


def stopping_text(session: Session, sample: dict[str, Any], judge: str, annotator: str,
                  cache: dict[str, float], target: float = DEFAULT_TARGET) -> str:
    """The stopping rule for one person's labels so far, in a few words: the interval's
    half-width on mean CP and about how many more goldens reach ``target`` ('' until there is
    an interval). ``cache`` keeps the judge's CP per golden between calls."""
    if not cache:
        frame = session.chunk_frame()
        cp = context_precision_by_golden(session.judge_columns(judge, frame).verdict,
                                         frame.sizes)
        cache.update({g: v for g, v in zip(frame.golden_ids, cp.tolist(), strict=True)
                      if not math.isnan(v)})
    ids = [g for g in sample["golden_ids"] if g in cache]
    if not ids:
        return ""
    frame = session.chunk_frame(ids)
    labels = session.label_columns(annotator, frame, whole=False).verdict
    human = {g: v for g, v in zip(frame.golden_ids, context_precision_by_golden(
        labels, frame.sizes).tolist(), strict=True) if not math.isnan(v)}
    if sample.get("design", "uniform") == "uniform":
        values = list(cache.values())
        found = designs.stratified_estimate(
            {"all": (len(values), float(np.mean(values)))},
            {"all": (np.asarray([human[g] for g in human]),
                     np.asarray([cache[g] for g in human]))})
        if isinstance(found, str) or len(human) < designs.MIN_PER_STRATUM:
            return ""
        half, more = found.half_width, designs.more_needed(len(human), found.half_width, target)
    else:
        section = design_section(sample, human, cache, {}, 0.7, target)
        if section.half_width is None or section.more is None:
            return ""
        half, more = section.half_width, section.more
    return (f"mean CP +-{half:.3f}: target +-{target:g} reached" if more == 0 else
            f"mean CP +-{half:.3f}: about {more:,} more for +-{target:g}")
