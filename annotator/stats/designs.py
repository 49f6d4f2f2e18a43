"""Labelling designs: which goldens people label, with what probabilities, and the estimates
of mean CP under human labels that stay valid under each (annotator.scoring.sampling draws and stores).

- ``uniform``: a simple random sample in random order (stats/ppi.py: PPI++).
- ``stratified``: strata by the judge's CP (quartiles, ties kept together) crossed with the
  system, Neyman-allocated from the judge's expected error in each stratum, at least two a
  stratum; estimated by stratified PPI++ (Fisch et al. 2024): PPI++ within each stratum,
  combined with the strata's shares of the goldens.
- ``active``: goldens drawn without replacement, golden i with a size q_i proportional to the
  square root of its expected squared error (mixed with uniform, so no q_i is 0: Zrnic &
  Candes 2024's active inference), in the order of sequential Poisson sampling (Ohlsson 1998:
  u_i / q_i ascending), so any prefix of m goldens is itself such a sample, with inclusion
  probabilities min(1, m q_i), and people may stop at any golden; estimated by
  inverse-probability-weighted PPI++ (ppi-python's weighted estimator with weights 1 / pi_i)
  with the finite-population correction a sample without replacement earns. Samples stored
  before (drawn with replacement, each draw golden i with probability q_i) keep their own
  estimator.

Every interval is normal at 95% (ddof 0), as in ppi-python.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from annotator.models import DESIGNS
from annotator.stats.distributions import student_t_quantile
from annotator.stats.ppi import LEVEL, fpc_variance, regression_lambda
from annotator.stats.stat import Stat

JUDGE_BINS = 4
"""Strata of the judge's CP per system: its quartiles."""
MIN_PER_STRATUM = 2
MIX = 0.2
"""The share of uniform in the active design's probabilities: no golden is impossible."""
DRAWS = 256
"""Simulated human label sets per golden for its expected squared error."""
BLOCK = 512
"""Goldens simulated at once (memory: DRAWS x BLOCK x chunks)."""
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)


# -- the judge's expected error ---------------------------------------------------------------

def cp_matrix(verdicts: np.ndarray) -> np.ndarray:
    """CP of each row of a 0/1 matrix (one golden's verdicts per row), as RAGAS computes it."""
    if verdicts.shape[1] == 0:
        return np.zeros(verdicts.shape[0])
    ranks = np.arange(1, verdicts.shape[1] + 1)
    precision = np.cumsum(verdicts, axis=1) / ranks
    return np.asarray((precision * verdicts).sum(axis=1) / (verdicts.sum(axis=1) + 1e-10))


def expected_errors(chances: Sequence[np.ndarray], judge_cp: np.ndarray,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per golden, E[human CP - judge CP] and E[(human CP - judge CP)^2] when each chunk is
    useful to people with the judge's P(relevant) (``chances``: one array per golden), from
    ``DRAWS`` simulated label sets; goldens of one length are simulated together."""
    bias, squared = np.zeros(len(chances)), np.zeros(len(chances))
    sizes = np.asarray([len(c) for c in chances])
    for size in np.unique(sizes).tolist():
        rows = np.flatnonzero(sizes == size)
        for block in range(0, len(rows), BLOCK):
            at = rows[block:block + BLOCK]
            p = np.stack([chances[i] for i in at.tolist()])  # goldens x chunks
            labels = (rng.random((DRAWS, *p.shape)) < p).astype(float)
            cp = cp_matrix(labels.reshape(-1, size)).reshape(DRAWS, len(at))
            difference = cp - judge_cp[at]
            bias[at] = difference.mean(axis=0)
            squared[at] = np.mean(difference ** 2, axis=0)
    return bias, squared


# -- drawing ----------------------------------------------------------------------------------

def strata(judge_cp: np.ndarray, systems: Sequence[str]) -> list[str]:
    """Each golden's stratum: its system (when there are several) and its judge-CP quartile."""
    names = np.asarray(systems)
    out = [""] * len(judge_cp)
    for system in sorted(set(systems)):
        mine = np.flatnonzero(names == system)
        edges = np.unique(np.quantile(judge_cp[mine], np.linspace(0, 1, JUDGE_BINS + 1)[1:-1]))
        bins = np.searchsorted(edges, judge_cp[mine], side="right")
        for i, b in zip(mine.tolist(), bins.tolist(), strict=True):
            low, high = (float(x) for x in _bounds(edges, b))
            span = f"judge CP {low:.2f}-{high:.2f}"
            out[i] = f"{system} {span}" if len(set(systems)) > 1 else span
    return out


def _bounds(edges: np.ndarray, b: int) -> tuple[float, float]:
    """The judge-CP range of quartile bin ``b``."""
    low = 0.0 if b == 0 else edges[b - 1]
    high = 1.0 if b == len(edges) else edges[b]
    return low, high


def neyman(sizes: dict[str, int], spreads: dict[str, float], n: int) -> dict[str, int]:
    """Goldens to label per stratum: proportional to size x spread (Neyman allocation), at
    least MIN_PER_STRATUM (or the whole stratum), never more than a stratum holds; the
    remainders go to the largest fractions."""
    n = min(n, sum(sizes.values()))
    alloc = {h: min(MIN_PER_STRATUM, size) for h, size in sizes.items()}
    left = n - sum(alloc.values())
    while left > 0:
        room = {h: sizes[h] - alloc[h] for h in sizes if sizes[h] > alloc[h]}
        weight = {h: sizes[h] * max(spreads[h], 1e-6) for h in room}
        total = sum(weight.values())
        shares = {h: left * w / total for h, w in weight.items()}
        given = 0
        for h, share in shares.items():
            take = min(room[h], int(share))
            alloc[h] += take
            given += take
        if given == 0:  # every share below one: the largest fractions first
            for h in sorted(shares, key=lambda h: (-shares[h], h))[:left]:
                alloc[h] += 1
                given += 1
        left -= given
    return alloc


def stratified_order(stratum_of: Sequence[str], alloc: dict[str, int],
                     rng: np.random.Generator) -> list[int]:
    """The goldens drawn (indexes), n_h at random from each stratum, interleaved so that any
    prefix holds the strata in about their allocated shares."""
    names = np.asarray(stratum_of)
    keyed: list[tuple[float, int]] = []
    for h, count in sorted(alloc.items()):
        chosen = rng.permutation(np.flatnonzero(names == h))[:count]
        offsets = rng.random()
        keyed.extend(((j + offsets) / count, int(i)) for j, i in enumerate(chosen.tolist()))
    return [i for _, i in sorted(keyed)]


def active_probabilities(score: np.ndarray) -> np.ndarray:
    """Each golden's probability per draw: its score (the root of its expected squared error)
    over the total, mixed with uniform at MIX; uniform where no golden has a score."""
    n = len(score)
    total = float(np.nansum(score))
    if not n:
        return np.zeros(0)
    if total <= 0 or math.isnan(total):
        return np.full(n, 1 / n)
    return np.asarray((1 - MIX) * np.nan_to_num(score) / total + MIX / n)


def active_order(q: np.ndarray, n: int, rng: np.random.Generator) -> list[int]:
    """``n`` distinct goldens by sequential Poisson sampling with sizes q: u_i / q_i ascending,
    so the first m of them are a sample of m with inclusion probabilities ``inclusion(q, m)``."""
    keys = rng.random(len(q)) / (q / q.sum())
    return [int(i) for i in np.argsort(keys, kind="stable")[:n]]


def inclusion(q: np.ndarray, m: int) -> np.ndarray:
    """The chance of goldens with sizes q (as ``active_probabilities`` gives them, summing to 1
    over every golden) of being among the first m of ``active_order``: m q_i, at most 1."""
    return np.asarray(np.minimum(1.0, m * q))


# -- estimating -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Estimate:
    """Mean CP under human labels from a design: the estimate, its 95% interval, lambda."""

    point: float
    low: float
    high: float
    lam: float

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2


def active_estimate(y_draws: np.ndarray, f_draws: np.ndarray, q_draws: np.ndarray,
                    f_all: np.ndarray, lam: float | None = None,
                    pi: np.ndarray | None = None) -> Estimate:
    """Inverse-probability-weighted PPI++: lam * mean(f_all) plus the weighted mean of
    y - lam f, weights 1 / pi normalised to mean 1 (ppi-python's weighted point estimate), with
    its linearised variance (the judge's CP is known on every golden, so its mean has none).
    ``pi``: the goldens' inclusion probabilities in a sample without replacement, each term of
    the variance taken down by 1 - pi_i; None: draws with replacement, golden i drawn with
    probability ``q_draws`` each time. Lambda, when not given, minimises the variance (as
    with replacement), clipped to [0, 1]."""
    w = 1.0 / (q_draws if pi is None else pi)
    w = w / w.mean()
    y_bar, f_bar = float(np.mean(w * y_draws)), float(np.mean(w * f_draws))
    if lam is None:
        dy, df = w * (y_draws - y_bar), w * (f_draws - f_bar)
        spread = float(np.sum(df * df))
        lam = 0.0 if spread == 0 else float(np.clip(np.sum(dy * df) / spread, 0.0, 1.0))
    point = lam * float(f_all.mean()) + y_bar - lam * f_bar
    centred = w * ((y_draws - lam * f_draws) - (y_bar - lam * f_bar))
    n = len(w)
    if n < 2:
        se = math.inf
    elif pi is None:
        se = float(centred.std(ddof=1)) / math.sqrt(n)
    else:
        se = math.sqrt(float(np.sum((1 - pi) * centred ** 2)) / (n * (n - 1)))
    return Estimate(point, point - Z * se, point + Z * se, lam)


Strata = dict[str, tuple[int, float]]
"""Stratum -> (its goldens, the judge's mean CP over them)."""


def stratified_estimate(strata: Strata, labelled: dict[str, tuple[np.ndarray, np.ndarray]],
                        lam: float | None = None) -> Estimate | str:
    """Stratified PPI++: in each stratum the judge's mean corrected by its labelled goldens'
    mean difference (people's CP y against the judge's f), combined with the strata's shares;
    the variance of a sample drawn without replacement from each stratum. One stratum is the
    uniform design. Or why there is no estimate yet. ``lam`` fixes lambda (0: people's labels
    alone); by default each stratum's own once every stratum has OWN_LAMBDA_FROM labelled
    goldens, else one lambda pooled over the strata (``pooled_lambda``). Which one depends on
    the counts alone, never on the labels."""
    big_n = sum(size for size, _ in strata.values())
    parts = []
    for h, (size, judge_mean) in sorted(strata.items()):
        y, f = labelled.get(h, (np.zeros(0), np.zeros(0)))
        if len(y) < min(MIN_PER_STRATUM, size):
            return f"needs {MIN_PER_STRATUM} labelled goldens in every stratum; {h} has {len(y)}"
        parts.append((size / big_n, size, judge_mean, y, f))
    # Degrees of freedom a tuned lambda spends: one in each stratum tuned on its own, one in
    # all for a pooled one.
    own = spent = 0
    if lam is not None:
        lams = [lam] * len(parts)
    elif min(len(y) for *_, y, _ in parts) >= OWN_LAMBDA_FROM:
        lams = [regression_lambda(y, f) for *_, y, f in parts]
        own = 1
    else:
        lams = [pooled_lambda([(share, size, y, f) for share, size, _, y, f in parts])] * len(parts)
        spent = 1
    point, variance, pieces = 0.0, 0.0, []
    for (share, size, judge_mean, y, f), lam in zip(parts, lams, strict=True):
        residual = y - lam * f
        point += share * (lam * judge_mean + float(residual.mean()))
        if len(y) > 1:
            piece = share ** 2 * fpc_variance(residual, size)
            variance += piece
            pieces.append((piece, len(y) - 1 - own))
    se = math.sqrt(variance)
    quantile = small_sample_quantile(pieces, spent)
    return Estimate(point, point - quantile * se, point + quantile * se, float(np.mean(lams)))


def small_sample_quantile(pieces: list[tuple[float, int]], spent: int = 0) -> float:
    """The interval's quantile for a variance summed from ``pieces`` (variance, degrees of
    freedom) each: Student's t at the Welch-Satterthwaite degrees of freedom, less ``spent``
    (a lambda tuned on all of them), so a few labelled goldens per stratum widen the interval
    as they should (the normal Z covered 91-93% with strata of 5-12 labelled goldens;
    tests/test_coverage.py); Z once they are many."""
    total = sum(v for v, _ in pieces)
    spread = sum(v * v / df for v, df in pieces if df > 0)
    if total <= 0 or spread <= 0:
        return Z
    return student_t_quantile(0.5 + LEVEL / 2, max(1.0, min(total * total / spread, 1e6) - spent))


OWN_LAMBDA_FROM = 8
"""Labelled goldens every stratum needs before each is given its own lambda: tuned within
strata of 4-20, lambda overfits and the interval covered 91-93% at 95%; pooled it holds, and
from 30 a stratum's own lambda narrows the interval without that cost (tests/test_designs.py)."""


def pooled_lambda(strata: list[tuple[float, int, np.ndarray, np.ndarray]]) -> float:
    """One PPI++ lambda for every stratum, (share, size, y, f) each: the one minimising the
    stratified estimate's variance, sum c_h cov_h(y, f) / sum c_h var_h(f) with c_h the
    stratum's weight in that variance, clipped to [0, 1]. A lambda tuned within each stratum
    overfits strata of a few labelled goldens, and its intervals covered 91-93% at 95%; the
    pooled one holds (tests/test_designs.py)."""
    covariance = variance = 0.0
    for share, size, y, f in strata:
        m = len(y)
        if m < 2:
            continue
        weight = share ** 2 * max(0.0, 1 - m / size) / m
        covariance += weight * float(np.cov(y, f, ddof=1)[0, 1])
        variance += weight * float(np.var(f, ddof=1))
    if variance <= 0:
        return 0.0
    return float(np.clip(covariance / variance, 0.0, 1.0))


def more_needed(labelled: int, half_width: float, target: float) -> int:
    """About how many more goldens (or draws) bring the half-width to ``target``: widths
    shrink as one over the root of the sample."""
    if half_width <= target or labelled == 0:
        return 0
    return max(0, math.ceil(labelled * (half_width / target) ** 2) - labelled)


# -- planning ---------------------------------------------------------------------------------

CALIBRATE_FROM = 20
"""Labelled goldens from which a plan trusts people's labels over the judge's confidence: with
10, where one golden in ten is hard, the rescaled plan's median was half the goldens needed
(few samples hold a hard golden); with 20 it is within a fifth (tests/test_designs.py)."""


def rescaled(error: np.ndarray, judge_cp: np.ndarray, seen: np.ndarray,
             people_cp: np.ndarray) -> np.ndarray:
    """The judge's expected squared errors scaled to what people found on the goldens at
    ``seen`` (their CP ``people_cp``): by the ratio of the squared differences found to those
    expected there (unchanged where none was expected)."""
    expected = float(error[seen].mean())
    if expected <= 0:
        return error
    found = float(np.mean((people_cp - judge_cp[seen]) ** 2))
    return np.asarray(error * (found / expected))


def residuals(judge_cp: np.ndarray, bias: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Each golden's expected squared residual y - lambda f - c under PPI++: people's CP y has
    mean f + bias and variance error - bias^2 (the judge's CP f is known), lambda is the
    population's regression of y on f clipped to [0, 1] (as PPI++ tunes it: near 0 for a judge
    whose CP says little of people's, near 1 for one that tracks them) and c centres it."""
    expected = judge_cp + bias
    spread = np.maximum(error - bias ** 2, 0.0)
    variance_f = float(judge_cp.var())
    covariance = float(np.mean((expected - expected.mean()) * (judge_cp - judge_cp.mean())))
    lam = 0.0 if variance_f == 0 else float(np.clip(covariance / variance_f, 0.0, 1.0))
    centred = expected - lam * judge_cp
    return np.asarray(spread + (centred - centred.mean()) ** 2)


def stratified_minimum(stratum_of: Sequence[str]) -> int:
    """The smallest stratified sample: MIN_PER_STRATUM goldens of each stratum (all of a
    smaller one)."""
    counts: dict[str, int] = {}
    for name in stratum_of:
        counts[name] = counts.get(name, 0) + 1
    return sum(min(MIN_PER_STRATUM, n) for n in counts.values())


def planned_sizes(judge_cp: np.ndarray, bias: np.ndarray, error: np.ndarray,
                  stratum_of: Sequence[str], target: float) -> dict[str, int]:
    """Goldens each design needs for a 95% half-width of ``target``, from each golden's
    expected difference (people's CP minus the judge's) and expected squared difference: the
    variance PPI++ is left with after leaning on the judge (``residuals``; within each stratum
    for ``stratified``). Every design draws without replacement, so its variance with n goldens
    is (1 - n/N) V / n, the estimates' own rule (ppi.fpc_variance): n = V / (w^2 + V/N), w the
    target over z;
    for ``active`` each golden has its own correction, 1 - pi_i, and n is found by bisection."""
    big_n = len(error)
    if not big_n:
        return dict.fromkeys(DESIGNS, 0)
    w2 = (target / Z) ** 2
    own = residuals(judge_cp, bias, error)
    spread = float(own.mean())
    names = np.asarray(stratum_of)
    sd, within = 0.0, 0.0
    shares: list[tuple[float, float]] = []  # (the stratum's share, its residual variance)
    for h in set(stratum_of):
        mine = names == h
        variance = float(residuals(judge_cp[mine], bias[mine], error[mine]).mean())
        sd += mine.sum() / big_n * math.sqrt(variance)
        within += mine.sum() / big_n * variance
        shares.append((float(mine.sum() / big_n), variance))

    def stratified_df(n: int) -> float:
        # The estimate's Welch-Satterthwaite degrees of freedom come from the strata's sample
        # variances, which a few hard goldens make uneven: in the simulations they were about
        # half the strata's own, sum(m_h - 2) (26 of 50 at 58 goldens in 4 strata).
        return max(1.0, (n - 2 * len(shares)) / 2)

    # Never fewer than the draw itself keeps (MIN_PER_STRATUM in each stratum): a plan smaller
    # than that would be refused by 'sample'.
    planned = {
        "uniform": _with_t(lambda w2: spread / (w2 + spread / big_n), target,
                           lambda n: n - 2.0),
        "stratified": max(_with_t(lambda w2: sd ** 2 / (w2 + within / big_n), target,
                                  stratified_df), stratified_minimum(stratum_of)),
    }
    q = active_probabilities(np.sqrt(error))

    def active_variance(n: int) -> float:
        pi = inclusion(q, n)
        return float(np.sum((1 - pi) * own / pi)) / big_n ** 2

    low, high = 1, big_n
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if active_variance(middle) <= w2 else (middle + 1, high)
    planned["active"] = low
    return {d: min(big_n, max(MIN_PER_STRATUM, n)) for d, n in planned.items()}


def _with_t(size: Callable[[float], float], target: float,
            df: Callable[[int], float]) -> int:
    """The goldens ``size`` gives for a squared half-width over the quantile, with the quantile
    the estimate will use: Student's t at the degrees of freedom ``df`` of n goldens (a few
    rounds from the normal one; t shrinks as n grows, so the rounds settle at once)."""
    n = math.ceil(size((target / Z) ** 2))
    for _ in range(3):
        quantile = student_t_quantile(0.5 + LEVEL / 2, max(df(n), 1.0))
        n = math.ceil(size((target / quantile) ** 2))
    return n


DEFAULT_TARGET = 0.03
"""The 95% half-width on mean CP a sample aims for unless told (--target-width)."""


@dataclass(frozen=True, slots=True)
class DesignSection:
    """Mean CP under human labels, estimated as the sample's design allows, and how far the
    sample is from its target width."""

    design: str
    sampled: int
    labelled: int
    """Sampled goldens complete under people's labels (active: draws so covered)."""
    stats: dict[str, Stat]
    """ppi_plus_plus, human_only, judge_only; pass_rate_ppi; fp_rate, fn_rate."""
    systems: dict[str, Stat] = field(default_factory=dict)
    """Per system: mean CP under human labels (PPI++ under the design)."""
    target: float = DEFAULT_TARGET
    half_width: float | None = None
    more: int | None = None
    """About how many more goldens reach the target (0: reached; None: no estimate yet)."""
