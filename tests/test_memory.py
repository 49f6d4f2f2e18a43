"""Freed memory given back before the bootstrap: the mechanism is live on this machine."""

from __future__ import annotations

import platform

import numpy as np

from annotator import memory


def _resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def test_give_back_returns_the_heap_pages_a_read_leaves_behind() -> None:
    assert platform.libc_ver()[0] == "glibc" and memory._trim() is not None
    # A large block freed raises glibc's mmap threshold, so the next arrays (as a session's
    # columns) come from the heap; freed, their pages stay with the process until trimmed.
    big = np.ones(2_000_000)  # 16 MB: under the 32 MB the threshold may rise to
    del big
    arrays = [np.ones(500_000) for _ in range(100)]  # 100 x 4 MB on the heap
    keep = arrays[-1]
    del arrays
    before = _resident_mb()
    memory.give_back()
    assert before - _resident_mb() > 200
    assert keep.sum() == 500_000
