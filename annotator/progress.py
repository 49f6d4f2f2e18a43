"""Rich progress on standard error for anything that may take more than a second."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
def counter(description: str, *, unit: str, total: int | None = None
            ) -> Iterator[Callable[[int], None]]:
    """Show a live count (a bar when ``total`` is known); yield a function taking the count so far.

    The display only appears on a terminal and disappears when done, so logs stay clean.
    """
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn() if total else TextColumn("{task.completed:,} " + unit),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.update(task, completed=done)
