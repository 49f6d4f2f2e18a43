"""The tail probabilities the decision statistics need, without scipy at run time.

Student's t (the alternative annotator test's one-sided t-test, the bootstrap's small-sample
expansion) and the binomial (trust or escalate's exact bound) both reduce to the regularized
incomplete beta function, evaluated here by its continued fraction (modified Lentz);
tests/test_decision.py checks them against scipy on random arguments to 1e-12.
"""

from __future__ import annotations

import math
from functools import lru_cache

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 10_000


def incomplete_beta(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1
    (``y``: 1 - x, where the caller knows it more exactly than 1.0 - x gives it)."""
    if not (a > 0 and b > 0):
        raise ValueError(f"incomplete_beta needs a, b > 0, got a={a}, b={b}")
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log(y))
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _fraction(b, a, y) / b


def _fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified Lentz)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                          -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete_beta({a}, {b}, {x}) did not converge")


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))
    return tail if t < 0 else 1.0 - tail


@lru_cache(maxsize=256)
def student_t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p for Student's t with ``df`` degrees of freedom (bisection to
    1e-12; the bootstrap asks for a few, cached)."""
    if not 0 < p < 1:
        raise ValueError(f"student_t_quantile needs 0 < p < 1, got {p}")
    low, high = -1.0, 1.0
    while student_t_cdf(low, df) > p:
        low *= 2
    while student_t_cdf(high, df) < p:
        high *= 2
    while high - low > 1e-12 * max(1.0, abs(low)):
        mid = (low + high) / 2
        if student_t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return incomplete_beta(n - k, k + 1, 1.0 - p)
