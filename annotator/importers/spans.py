"""What every tracer importer shares: a tracer's goldens gathered trace by trace, said and
refused the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError

Golden = dict[str, Any]


def gathered(traces: Iterable[tuple[list[Golden], int]], spans: int, name: str,
             notices: list[str], looked_for: str) -> list[Golden]:
    """Every trace's goldens (each given with how many of its retrievers found nothing, which
    are said once), or an InputError saying what was looked for among ``spans`` spans."""
    out: list[Golden] = []
    empty = 0
    for found, none in traces:
        out += found
        empty += none
    if empty:
        notices.append(f"{empty} retriever span{'s' if empty != 1 else ''} found no document; "
                       "left out (a golden needs ranked chunks).")
    if not out:
        raise InputError(name, f"no RETRIEVER span with documents among {spans} spans (looked "
                         f"for {looked_for}).")
    return out
