"""A rate limiter for requests (and tokens) per period: paced, and capped in every window."""

from __future__ import annotations

import asyncio
import time
from collections import deque

BURST_SHARE = 1 / 60
"""The burst allowed beyond the steady pace, as a share of the period: one second's worth of a
per-minute limit (and always at least one grant)."""


WINDOW_MARGIN = 0.05
"""How much longer than its period the sliding window is kept (scheduling slack)."""


class RateLimiter:
    """At most ``limit`` units in any window of ``period`` seconds (a sliding log), handed out
    at an even pace: a window of any length holds its share of the limit plus a burst of
    ``BURST_SHARE`` of it, so a run (or a rerun) never opens with the whole period's worth."""

    def __init__(self, limit: float, period: float = 60.0) -> None:
        if limit <= 0:
            raise ValueError("a rate limit must be positive")
        self.limit = limit
        self.period = period
        self._log: deque[tuple[float, float]] = deque()
        self._used = 0.0
        self._due: float | None = None
        """When the pace would next grant, were nothing owed (the theoretical arrival time)."""
        self._lock = asyncio.Lock()

    async def acquire(self, units: float = 1.0) -> None:
        """Wait until ``units`` fit the pace and the window, then take them."""
        units = min(units, self.limit)  # a single request larger than the limit still goes
        async with self._lock:
            await self._pace(units)
            await self._window(units)

    async def _pace(self, units: float) -> None:
        # GCRA: each grant moves the due time on by its share of the period; a grant waits
        # while the due time runs more than the burst ahead of now.
        now = time.monotonic()
        cost = units * self.period / self.limit
        due = max(self._due if self._due is not None else now, now)
        allowance = max(BURST_SHARE * self.period, cost)
        wait = due + cost - allowance - now
        if wait > 0:
            await asyncio.sleep(wait)
        self._due = due + cost

    async def _window(self, units: float) -> None:
        # The window is kept a little longer than the period: a caller may resume a moment
        # after its grant, and the server counts when requests arrive, not when granted.
        span = self.period * (1 + WINDOW_MARGIN)
        while True:
            now = time.monotonic()
            while self._log and self._log[0][0] <= now - span:
                self._used -= self._log.popleft()[1]
            if self._used + units <= self.limit:
                self._log.append((now, units))
                self._used += units
                return
            # Sleep until enough of the oldest entries leave the window.
            needed, freed, wake = self._used + units - self.limit, 0.0, now
            for stamp, amount in self._log:
                freed += amount
                wake = stamp + span
                if freed >= needed:
                    break
            await asyncio.sleep(max(0.0, wake - now) + 1e-3)
