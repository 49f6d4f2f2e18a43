"""A statistic with its reason and interval, and the count arithmetic every statistic shares.

Every statistic of annotator.stats is a :class:`Stat`: a value, or None with the reason it is
undefined, never a silent 0 or 1; ``Stat.format`` is the one place one is written out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from annotator.lazy import np

Style = Literal["prose", "cell"]
"""How a statistic is written: in a sentence, or in a table cell."""

Counts = Any
"""A count or a numpy array of counts (one per bootstrap replicate)."""


@dataclass(frozen=True, slots=True)
class Stat:
    """A statistic's value, or None with the reason it is undefined."""

    value: float | None
    reason: str | None = None
    interval: tuple[float, float] | None = None
    """A 95% interval, where one was computed."""

    @classmethod
    def undefined(cls, reason: str) -> Stat:
        """An undefined statistic, with why."""
        return cls(None, reason)

    def format(self, digits: int = 3, *, style: Style = "prose", interval: bool = False,
               percent: bool = False, short: bool = False) -> str:
        """The one way a statistic is written, with its interval when asked and known.

        ``style`` 'prose' reads "0.52 (95% CI 0.31 to 0.70)" or "undefined (reason)"; 'cell'
        reads "0.52 [0.31, 0.70]" or "undefined: reason" (``short``: the reason up to its
        colon). ``percent`` writes 0.52 as 52% (``digits`` then counts the percent's own
        decimals plus two).
        """
        if self.value is None:
            if style == "prose":
                return f"undefined ({self.reason})"
            reason = str(self.reason)
            return f"undefined: {reason.split(':')[0] if short else reason}"
        text = number(self.value, digits, percent=percent)
        if interval and self.interval is not None:
            low, high = (number(x, digits, percent=percent) for x in self.interval)
            text += f" (95% CI {low} to {high})" if style == "prose" else f" [{low}, {high}]"
        elif interval and self.reason:  # a value whose interval is undefined, and why
            text += f" (no interval: {self.reason})" if style == "prose" else \
                f" [undefined: {self.reason}]"
        return text

    def without_interval(self, reason: str) -> Stat:
        """The same value, its interval undefined for ``reason`` (one golden, say)."""
        return Stat(self.value, reason)

    def interval_text(self, digits: int = 4) -> str:
        """'low to high', or '' when there is no interval."""
        if self.interval is None:
            return ""
        return " to ".join(number(x, digits) for x in self.interval)

    def with_interval(self, interval: tuple[float, float] | None) -> Stat:
        """The same value with a 95% interval beside it."""
        return Stat(self.value, self.reason, interval)


def ratio(num: Counts, den: Counts) -> Counts:
    """num / den, nan where den is 0 (numbers or arrays)."""
    if isinstance(num, int | float) and isinstance(den, int | float):
        # The same IEEE division without numpy's per-call cost, which the annotation screen's
        # agreement-so-far paid several times a key.
        return math.nan if den == 0 else num / den
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(den) == 0, np.nan, np.asarray(num, dtype=float) / den)


def number(x: float, digits: int = 4, *, percent: bool = False, sign: bool = False) -> str:
    """A number as it is written everywhere: '0.8875', '52%', '+0.0125' with ``sign``; whatever
    rounds to zero is written '0.0000', never '-0.0000' (nor '+0.0000')."""
    places = max(digits - 2, 0) if percent else digits
    rounded = round(x * 100 if percent else x, places)
    if rounded == 0:
        x, sign = 0.0, False
    return f"{x:{'+' if sign else ''}.{places}{'%' if percent else 'f'}}"
