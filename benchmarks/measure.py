"""Measuring a command the way every benchmark here does: its CPU seconds and peak memory.

The project's modules are compiled to bytecode first, as installing a wheel does: an editable
install on a machine with PYTHONDONTWRITEBYTECODE set (this one) would otherwise compile every
module from source on every run, a cost no installed copy pays and no bare program has.
"""

from __future__ import annotations

import compileall
import os
import subprocess
from pathlib import Path

import annotator

compileall.compile_dir(Path(annotator.__file__).parent, quiet=1)


def measured(argv: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and peak resident MB of one run of a command."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {error}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
