"""A sliding-window rate limiter for requests (and tokens) per period."""

from __future__ import annotations

import asyncio
import time
from collections import deque


class RateLimiter:
    """At most ``limit`` units in any window of ``period`` seconds (a sliding log, no bursts)."""

    def __init__(self, limit: float, period: float = 60.0) -> None:
        if limit <= 0:
            raise ValueError("a rate limit must be positive")
        self.limit = limit
        self.period = period
        self._log: deque[tuple[float, float]] = deque()
        self._used = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self, units: float = 1.0) -> None:
        """Wait until ``units`` fit in the window, then take them."""
        units = min(units, self.limit)  # a single request larger than the limit still goes
        async with self._lock:
            while True:
                now = time.monotonic()
                while self._log and self._log[0][0] <= now - self.period:
                    self._used -= self._log.popleft()[1]
                if self._used + units <= self.limit:
                    self._log.append((now, units))
                    self._used += units
                    return
                # Sleep until enough of the oldest entries leave the window.
                needed, freed, wake = self._used + units - self.limit, 0.0, now
                for stamp, amount in self._log:
                    freed += amount
                    wake = stamp + self.period
                    if freed >= needed:
                        break
                await asyncio.sleep(max(0.0, wake - now) + 1e-3)
