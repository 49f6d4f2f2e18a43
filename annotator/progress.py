"""Rich progress on standard error for anything that may take more than a second."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from annotator.text import shortened, visible

if TYPE_CHECKING:
    from rich.progress import Progress

    from annotator.judge.batch import Followed
    from annotator.judge.runner import RunStats
    from annotator.models import Price


@contextmanager
def counter(description: str, *, unit: str, total: int | None = None
            ) -> Iterator[Callable[[int], None]]:
    """Show a live count (a bar when ``total`` is known); yield a function taking the count so far.

    The display only appears on a terminal and disappears when done, so logs stay clean.
    """
    if not sys.stderr.isatty():  # nothing to draw: Rich's bars are not even loaded
        yield lambda done: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}", markup=False),  # a path may hold brackets
        BarColumn(),
        MofNCompleteColumn() if total else TextColumn("{task.completed:,} " + unit),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    with progress:
        task = progress.add_task(visible(description), total=total)
        yield lambda done: progress.update(task, completed=done)


@contextmanager
def working(description: str) -> Iterator[None]:
    """A spinner with the time taken, on a terminal, for a step with nothing to count."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False),
                  TimeElapsedColumn(), console=console, transient=True,
                  disable=not console.is_terminal) as progress:
        progress.add_task(visible(description), total=None)
        yield


def _counting_bar() -> Progress:
    """A bar of done out of total with a line of figures beside it, on stderr (off when
    stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[line]}", markup=False), TimeElapsedColumn(),
        console=console, transient=False, disable=not console.is_terminal,
    )


@contextmanager
def judging(name: str, price: Price | None) -> Iterator[Callable[[RunStats], None]]:
    """A judging progress bar: chunks done of total, rate, errors, tokens and cost."""
    progress = _counting_bar()
    with progress:
        task = progress.add_task(visible(f"Judging with {name}"), total=None, line="")
        said = 0

        def show(stats: RunStats) -> None:
            nonlocal said
            for notice in stats.notices[said:]:  # above the bar, the moment it is noticed
                progress.console.print(f"Note: {visible(notice)}", markup=False,
                                       highlight=False, soft_wrap=True)
            said = len(stats.notices)
            elapsed = max(time.monotonic() - stats.started, 1e-9)
            cost = stats.cost(price)
            latest = stats.failures.latest
            line = (f"{stats.done / elapsed:5.1f}/s  errors {stats.errors}  tokens "
                    f"{stats.tokens_in + stats.tokens_out:,}"
                    + (f"  ${cost:.4f}" if cost is not None else "")
                    + (f"  waiting {stats.waiting:.0f} s as the server asked"
                       if stats.waiting else "")
                    + (f"  last error: {visible(shortened(latest))}" if latest else ""))
            progress.update(task, total=stats.total or None, completed=stats.done, line=line)

        yield show


@contextmanager
def batches_progress() -> Iterator[Callable[[Followed], None]]:
    """A progress bar over the requests the provider finished, across the batches followed."""
    progress = _counting_bar()
    with progress:
        task = progress.add_task("Batches", total=None, line="")

        def show(followed: Followed) -> None:
            running = len(followed.running)
            progress.update(task, total=followed.total or None, completed=followed.done,
                            line=f"{running} running, {followed.stored:,} calls stored")

        yield show
