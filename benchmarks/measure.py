"""Measuring a command the way every benchmark here does: its CPU seconds and peak memory."""

from __future__ import annotations

import os
import subprocess


def measured(argv: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and peak resident MB of one run of a command."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {error}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
