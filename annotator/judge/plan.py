"""What a judge run would send, worked out without sending anything (--dry-run).

The requests are rendered exactly as the run would render them (the same tasks, the same
skipping of what is already judged), their prompt tokens counted (judge/tokens.py), and the cost
and the time worked out from the prices and the rate limits given.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from annotator.judge import tokens
from annotator.judge.batch import Limits, RequestLines
from annotator.judge.runner import RunOptions, RunStats, Task, collect_tasks, task_messages
from annotator.judge.transport import provider_of
from annotator.judge.types import JudgeSettings
from annotator.models import Price
from annotator.store.session import Session

REPLY_TOKENS_PER_CHUNK = 50
"""Completion tokens a verdict with a one-sentence reason takes, where the judge has no calls
of its own in the session to learn from."""


@dataclass(frozen=True, slots=True)
class DryRun:
    """The calls a run would make and what they would cost."""

    calls: int
    chunks: int
    skipped: int
    no_answer: int
    prompt_tokens: int
    completion_tokens: int
    """Expected: from the judge's own earlier calls, else REPLY_TOKENS_PER_CHUNK a chunk."""
    completion_basis: str
    max_completion_tokens: int
    """The most the replies may hold (max_tokens every call)."""
    counted_by: str
    request_bytes: int
    """The bytes of the Batch API files holding these requests (batch runs only)."""
    files: int
    """How many files (so batches) they are split into (batch runs only)."""
    cost: float | None
    seconds: float | None
    time_basis: str


def dry_run(session: Session, name: str, settings: JudgeSettings, options: RunOptions,
            price: Price | None, rpm: float | None, tpm: float | None,
            batch: Limits | None = None, tasks: list[Task] | None = None) -> DryRun:
    """The run ``annotator judge`` would make with these settings, sending nothing; with
    ``batch``, the request files a batch round would write (their exact lines, split where
    those limits split them), leaving out what is still out in a batch; with ``tasks``, the
    run that sends those (a re-check's)."""
    stats = RunStats()
    if tasks is None:
        tasks = collect_tasks(session, settings, options, stats, session.judged_requests(name))
    else:
        stats.total = sum(len(task.chunk_ids) for task in tasks)
    busy = session.batch_busy(name) if batch is not None else set()
    # Another provider's tokenizer is not OpenAI's: its count is the rule of thumb, said so.
    approximate = not provider_of(settings.provider).exact_tokens
    lines = RequestLines(settings, session.next_batch_round())
    calls = prompt = size = files = in_file = file_size = 0
    for task in tasks:
        if (task.chunk_ids[0], task.repetition) in busy:
            stats.total -= len(task.chunk_ids)
            continue
        every = task_messages(settings, task)
        for messages in every:
            calls += 1
            prompt += tokens.prompt_tokens(messages, approximate=approximate)
        if batch is None:
            continue
        for line, _ in lines.of(task, every):
            if not files or batch.full(in_file, file_size, len(line)):
                files, in_file, file_size = files + 1, 0, 0
            in_file += 1
            file_size += len(line)
            size += len(line)
    summary = session.call_summary(name) if name in {j.name for j in session.judges()} else None
    verdicts = (summary["calls"] - summary["failed"]) if summary else 0
    if summary and verdicts and summary["tokens_out"]:
        per_chunk = summary["tokens_out"] / verdicts
        basis = f"{per_chunk:.0f} a chunk, as this judge's earlier calls"
    else:
        per_chunk = REPLY_TOKENS_PER_CHUNK
        basis = f"about {per_chunk} a chunk (a verdict and a sentence)"
    completion = round(per_chunk * stats.total)
    cost = price.cost(prompt, completion) if price is not None else None
    limits: list[tuple[float, str]] = []
    if rpm:
        limits.append((60 * calls / rpm, f"{rpm:g} requests a minute"))
    if tpm:
        limits.append((60 * (prompt + completion) / tpm, f"{tpm:g} tokens a minute"))
    latencies = summary["latencies_ms"] if summary else []
    if latencies:
        seconds = statistics.median(latencies) / 1000 * calls / options.concurrency
        limits.append((seconds, f"this judge's median call, {options.concurrency} at a time"))
    slowest = max(limits, default=None)
    return DryRun(calls, stats.total, stats.skipped, stats.no_answer, prompt, completion, basis,
                  calls * settings.max_tokens, tokens.method(approximate=approximate), size, files, cost,
                  slowest[0] if slowest else None,
                  slowest[1] if slowest else "no --rpm, --tpm or earlier calls to go by")
