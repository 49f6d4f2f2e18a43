"""Giving freed memory back to the system before a large allocation.

glibc raises its mmap threshold as large blocks are freed, so after a session's columns are
read and dropped, the next arrays come from the heap and the freed pages stay with the process.
A report on a million chunks then peaks with 100 MB it no longer uses beside the bootstrap's
weights. ``give_back`` asks glibc to return free heap pages (a no-op elsewhere).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc
        return None
    return trim


def give_back() -> None:
    """Return the heap's free pages to the system, where the C library can."""
    trim = _trim()
    if trim is not None:
        trim(0)
