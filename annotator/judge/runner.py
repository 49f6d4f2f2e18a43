"""Judge every chunk of a session: many calls at once, retried, each stored.

Rate limits live in the transport's HTTP layer (transport.connect).

Every call is stored the moment it ends (verdict or error). A chunk already judged by the
same request (model, messages, sampling parameters) is skipped, so an interrupted run
resumes where it stopped and a finished one makes no calls at all.

With ``repeat`` K > 1 every chunk is judged K times (repetitions 1..K, the same request each
time): repetition 1 is the verdict in force, and the others measure how often it flips.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from annotator.errors import AnnotatorError, NotSaved, SessionError
from annotator.judge.client import ask, next_format, request_sha256
from annotator.judge.failures import Failures, Group
from annotator.judge.template import TemplatePrompt
from annotator.judge.transport import Transport
from annotator.judge.types import CallResult, JudgePrompt, JudgeSettings
from annotator.models import Judge, Price
from annotator.redact import remember, scrub
from annotator.store.session import Session
from annotator.text import shortened


@dataclass(slots=True)
class RunOptions:
    """How hard to push the endpoint."""

    concurrency: int = 8
    timeout: float | None = None
    """Seconds a call may take; None: fitted to the endpoint (_Pace.timeout)."""
    max_retries: int = 4
    limit: int | None = None
    """Judge at most this many chunks in this run."""
    repeat: int = 1
    """Judge every chunk this many times (repetitions 1..repeat)."""
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    max_wait: float = 60.0
    """The longest wait a server's Retry-After may ask for (longer, infinite or malformed ones
    wait this long)."""
    goldens: frozenset[str] | None = None
    """Judge only the chunks of these goldens (None: every golden)."""


@dataclass(slots=True)
class RunStats:
    """Counts of a run, updated as it goes (readable after Ctrl-C)."""

    total: int = 0
    """Chunks this run set out to judge."""
    skipped: int = 0
    """Chunks already judged by the same request."""
    no_answer: int = 0
    """Chunks of goldens without the reference (or response) the prompt needs."""
    judged: int = 0
    gave_up: int = 0
    """Chunks still without a verdict after every retry (left for the next run)."""
    errors: int = 0
    """Failed calls, retried or not."""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    """Prompt tokens the provider's cache served (part of tokens_in)."""
    requests: int = 0
    """HTTP requests sent (more than calls where a library retries inside one call)."""
    started: float = field(default_factory=time.monotonic)
    response_format: str = "json_schema"
    """The response format the run ended with (one of its transport's formats)."""
    logprobs: bool = True
    """Whether the run ended still asking for logprobs."""
    refused: list[str] = field(default_factory=list)
    """What the endpoint refused this run, in order, as sentences for the summary."""
    warnings: list[str] = field(default_factory=list)
    """What the run noticed about the endpoint, as sentences for the summary."""
    notices: list[str] = field(default_factory=list)
    """What must be said at once, while the run goes on (a judge served as another epoch)."""
    failures: Failures = field(default_factory=Failures)
    """Failed calls grouped by what went wrong, for the summary and the progress line."""
    waiting: float | None = None
    """Seconds a call is waiting before its retry, when the server asked for the wait."""
    kept: bool = True
    """Whether the judge is in the session after the run: a judge the run defined is removed
    again when it ended without a single verdict."""

    @property
    def done(self) -> int:
        """Chunks finished either way."""
        return self.judged + self.gave_up

    def cost(self, price: Price | None) -> float | None:
        """USD spent at these prices; None without prices."""
        return None if price is None else price.cost(self.tokens_in, self.tokens_out,
                                                     self.tokens_cached)


def judge_definition(name: str, settings: JudgeSettings) -> Judge:
    """The judge as stored in the session: everything that defines its requests."""
    prompt = settings.prompt
    text = prompt.canonical_text if isinstance(prompt, TemplatePrompt) else None
    return Judge(name, settings.model, settings.base_url, prompt.id, prompt.template_sha256,
                 settings.parameters(), text)


async def run_judge(
    session: Session,
    name: str,
    settings: JudgeSettings,
    client: Transport,
    options: RunOptions,
    stats: RunStats,
    *,
    on_progress: Callable[[RunStats], None] | None = None,
    secrets: tuple[str, ...] = (),
) -> RunStats:
    """Judge every chunk not yet judged by this request; store each call as it ends.

    Raises JudgeStopped when the first calls all fail the same hopeless way (a refused key, an
    unknown model or path, no server): a judge this run defined is then removed again.
    """
    lease = Lease(session, name)
    lease.take()  # before anything is written: a refused run changes nothing
    try:
        new_judge = define(session, name, settings)
        try:
            resume_transport(session, name, settings)
            work = collect_tasks(session, settings, options, stats, session.judged_requests(name))
            if stats.no_answer and not work and not stats.skipped:
                raise SessionError(
                    f"No golden has a {settings.prompt.against} to judge chunks against; use "
                    "--against " + ("response" if settings.prompt.against == "reference"
                                    else "reference") + ".")
            await send_tasks(session, name, settings, client, options, stats, on_progress,
                             secrets, lease, work, lambda calls: session.record_calls(name, calls))
            stats.warnings.extend(degenerate(session, name))
            return stats
        finally:
            # Whatever ended the run (done, stopped, Ctrl-C, every call failed), a judge it
            # defined that holds no verdict is not left behind for defaults to trip on.
            if new_judge and stats.judged == 0:
                stats.kept = not session.forget_unused_judge(name)
    finally:
        lease.release()


def define(session: Session, name: str, settings: JudgeSettings) -> bool:
    """Define the judge a run stores its calls under (or check it is the same request), with
    its few-shot examples; True when this run made it."""
    new_judge = name not in {j.name for j in session.judges()}
    prompt = settings.prompt
    session.define_judge(judge_definition(name, settings), prompt.session_examples
                         if isinstance(prompt, TemplatePrompt) else ())
    return new_judge


@dataclass(slots=True)
class Task:
    """One unit of work: a chunk (pointwise), or a golden's chunks (listwise), in one repetition."""

    chunk_ids: list[int]
    question: str
    answer: str
    parts: list[tuple[int, str]]
    """(rank, text) of each chunk, in rank order."""
    repetition: int
    sha: str | None = None
    """The request's identity, once computed (a chunk never called needs none to be pending)."""


def windows(count: int, size: int | None) -> list[range]:
    """The overlapping windows (positions into a golden's chunks) a listwise judge asks about:
    one window when the golden fits, else windows of ``size`` overlapping by a quarter of it
    (at least one chunk), the last one ending at the last chunk."""
    if size is None or count <= size:
        return [range(count)]
    step = max(1, size - max(1, size // 4))
    starts = [*list(range(0, count - size, step)), count - size]
    return [range(start, start + size) for start in starts]


def task_messages(settings: JudgeSettings, task: Task) -> list[list[dict[str, str]]]:
    """The messages of each request a task makes (one, or one per listwise window); with
    ``system_as_user``, the system text opens the first user message instead."""
    prompt = settings.prompt
    if not prompt.listwise:
        rank, text = task.parts[0]
        every = [prompt.messages(task.question, task.answer, text, rank)]
    else:
        listing = cast(TemplatePrompt, prompt)
        every = [listing.list_messages(task.question, task.answer,
                                       [task.parts[i] for i in window])
                 for window in windows(len(task.parts), settings.window)]
    return [system_as_user(m) for m in every] if settings.system_as_user else every


def system_as_user(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages with every system message moved to the head of the first user message
    (for chat templates that drop system messages)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    first = next((m for m in rest if m["role"] == "user"), None)
    if system and first is not None:
        first["content"] = f"{system}\n\n{first['content']}"
    return rest if first is not None else messages


def task_sha256(settings: JudgeSettings, task: Task,
                messages: list[list[dict[str, str]]] | None = None) -> str:
    """A task's identity: its request's hash, or (listwise) the hash of its windows' hashes
    (``messages``: the task's, when already rendered)."""
    shas = [request_sha256(settings, m) for m in messages or task_messages(settings, task)]
    if len(shas) == 1:
        return shas[0]
    return hashlib.sha256(" ".join(shas).encode()).hexdigest()


def iter_tasks(session: Session, settings: JudgeSettings, options: RunOptions, stats: RunStats,
               done: dict[tuple[int, int], set[str]] | None = None,
               enough: Callable[[], bool] = lambda: False) -> Iterator[Task]:
    """Every task not yet done by this exact request, the goldens read a page at a time (so a
    million chunks never sit in memory at once), until ``enough`` says stop."""
    done = done if done is not None else {}
    listwise = settings.prompt.listwise
    golden_ids = session.golden_ids()
    if options.goldens is not None:
        golden_ids = [g for g in golden_ids if g in options.goldens]
    for start in range(0, len(golden_ids), GOLDENS_PER_PAGE):
        if enough():
            return
        for golden in session.goldens(golden_ids[start:start + GOLDENS_PER_PAGE]):
            answer = (golden.reference if settings.prompt.against == "reference"
                      else golden.response)
            if answer is None:
                stats.no_answer += len(golden.chunks)
                continue
            groups = ([list(golden.chunks)] if listwise and golden.chunks
                      else [[chunk] for chunk in golden.chunks])
            for group in groups:
                ids = [chunk.id for chunk in group]
                parts = [(chunk.rank, chunk.text) for chunk in group]
                sha: str | None = None
                for repetition in range(1, options.repeat + 1):
                    task = Task(ids, golden.user_input, answer, parts, repetition, sha)
                    asked = [done.get((i, repetition)) for i in ids]
                    if all(asked):
                        task.sha = sha = sha or task_sha256(settings, task)
                        if all(sha in a for a in asked if a is not None):
                            stats.skipped += len(ids)
                            continue
                    yield task


def collect_tasks(session: Session, settings: JudgeSettings, options: RunOptions,
                  stats: RunStats, done: dict[tuple[int, int], set[str]] | None = None
                  ) -> list[Task]:
    """Every task not yet done by this exact request, verdicts in force (repetition 1) before
    any repetition; with --limit the goldens are read a page at a time only until it is met.

    The tasks hold references to the texts, not rendered prompts: those are rebuilt when a
    task's turn comes, so a large session costs no second copy of every chunk in memory.
    """
    first: list[Task] = []
    later: list[Task] = []
    for task in iter_tasks(session, settings, options, stats, done,
                           lambda: options.limit is not None and _chunks(first) >= options.limit):
        (first if task.repetition == 1 else later).append(task)
    work = first + sorted(later, key=lambda task: task.repetition)
    if options.limit is not None:
        kept, count = [], 0
        for task in work:
            if count >= options.limit:
                break
            kept.append(task)
            count += len(task.chunk_ids)
        work = kept
    stats.total = _chunks(work)
    return work


def _chunks(tasks: list[Task]) -> int:
    return sum(len(task.chunk_ids) for task in tasks)


async def send_tasks(session: Session, name: str, settings: JudgeSettings, client: Transport,
                     options: RunOptions, stats: RunStats,
                     on_progress: Callable[[RunStats], None] | None,
                     secrets: tuple[str, ...], lease: Lease, work: list[Task],
                     record: Callable[[list[dict[str, object]]], None]) -> None:
    """Send every task of ``work`` (retried, concurrently, stopped when hopeless), each call
    handed to ``record`` the moment it ends."""
    stats.response_format, stats.logprobs = settings.response_format, settings.logprobs
    queue: asyncio.Queue[Task] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    del work
    endpoint = client.shown_url()  # never a password on disk
    served = ServedAs(session, name, stats)

    async def store(calls: list[dict[str, object]]) -> None:
        for one in calls:
            one["endpoint"] = endpoint
        while True:  # the reply is kept while another command holds the file
            try:
                record(calls)
                lease.renew()
                return
            except NotSaved as refused:
                if not refused.busy:
                    raise  # a full disk or a read-only file: waiting will not help
                await asyncio.sleep(1.0)

    async def call(messages: list[dict[str, str]], ranks: list[int] | None,
                   failed: Callable[[CallResult], list[dict[str, object]]]) -> CallResult:
        """Ask until a verdict, a hopeless failure or the last retry; every failure stored."""
        attempt = 0
        while True:
            result = await ask(client, settings, messages, pace.timeout(options.timeout),
                               ranks)
            _redact(result, secrets)  # before anything stores, counts or prints the reply
            if result.cause == "timeout":
                pace.timed_out()
            stats.tokens_in += result.tokens_in or 0
            stats.tokens_out += result.tokens_out or 0
            stats.tokens_cached += result.tokens_cached or 0
            stats.requests += result.requests
            if result.verdict is not None:
                stats.failures.succeeded()
                served.check(result)
                return result
            if result.unsupported and _drop_refused(session, name, settings, result, stats):
                # A refused response format or logprobs is a step down the formats, said in the
                # summary, not a failed call: nothing is stored or counted, and no attempt spent.
                continue
            if result.cause == "cut_off" and not settings.temperature:
                # At temperature 0 the same request gets the same reply, cut off at the same
                # token: asking it again identically only spends the time again.
                result.error = (f"{result.error}; at temperature 0 the reply repeats itself, "
                                "so it is not asked again identically")
                result.retryable = False
            await store(failed(result))
            stats.errors += 1
            stats.failures.add(result)
            if on_progress is not None:
                on_progress(stats)
            if (hopeless := stats.failures.hopeless(stats.judged)) is not None:
                stopped.append(hopeless)
            if stopped or not result.retryable or attempt == options.max_retries:
                return result
            wait = retry_wait(result, attempt, options)
            if result.retry_after is not None:
                stats.waiting = wait
                if on_progress is not None:
                    on_progress(stats)
            await asyncio.sleep(wait)
            stats.waiting = None
            attempt += 1

    async def judge_one(task: Task) -> None:
        rendered = task_messages(settings, task)
        sha = task.sha or task_sha256(settings, task, rendered)
        if not settings.prompt.listwise:
            chunk_id = task.chunk_ids[0]

            def failed(result: CallResult) -> list[dict[str, object]]:
                return [call_row(chunk_id, sha, task.repetition, result)]

            result = await call(rendered[0], None, failed)
            if result.verdict is None:
                stats.gave_up += 1
                return
            await store([call_row(chunk_id, sha, task.repetition, result)])
            stats.judged += 1
            return
        results: list[tuple[range, CallResult]] = []
        spans = windows(len(task.parts), settings.window)
        for span, messages in zip(spans, rendered, strict=True):
            ids = [task.chunk_ids[i] for i in span]

            def failed_window(result: CallResult, ids: list[int] = ids
                              ) -> list[dict[str, object]]:
                return split_call(ids, sha, task.repetition, result)

            result = await call(messages, [task.parts[i][0] for i in span], failed_window)
            if result.verdict is None:
                # Never a partial golden: the windows that did answer are kept as failed calls
                # (their tokens were spent) and the whole golden is asked again next run.
                for done_span, done in results:
                    done.verdict, done.error = None, ("another window of this golden failed; "
                                                      "the golden is judged again next run")
                    await store(split_call([task.chunk_ids[i] for i in done_span], sha,
                                       task.repetition, done))
                stats.gave_up += len(task.chunk_ids)
                return
            results.append((span, result))
        await store(merged_calls(task, sha, results))
        stats.judged += len(task.chunk_ids)

    stopped: list[Group] = []  # a hopeless failure: no worker takes more work
    workers = max(1, min(options.concurrency, queue.qsize()))
    pace = _Pace(workers, stats)

    async def worker() -> None:
        while not stopped:
            await pace.enter()
            if queue.empty() or stopped:
                await pace.leave(None)
                return
            started = time.monotonic()
            await judge_one(queue.get_nowait())
            await pace.leave(time.monotonic() - started)
            if on_progress is not None:
                on_progress(stats)

    await asyncio.gather(*(worker() for _ in range(workers)))
    if stopped:
        raise JudgeStopped(stopped[0], stats)



async def run_probes(session: Session, name: str, settings: JudgeSettings, client: Transport,
                     options: RunOptions, stats: RunStats, *,
                     on_progress: Callable[[RunStats], None] | None = None,
                     secrets: tuple[str, ...] = ()) -> RunStats:
    """Judge every probe (annotator.scoring.probes) this judge has no verdict on from this exact
    request, as it judges chunks: the same settings, retries and stops; each call stored on its
    probe, never on a chunk."""
    lease = Lease(session, name)
    lease.take()
    try:
        resume_transport(session, name, settings)
        work = probe_tasks(session, settings, stats, session.probes_answered(name))
        stats.total = _chunks(work)  # listwise: the context chunks are sent too

        def record(calls: list[dict[str, object]]) -> None:
            mine = [c for c in calls if int(c["chunk_id"]) > 0]  # type: ignore[call-overload]
            if mine:
                session.record_probe_calls(name, mine)

        await send_tasks(session, name, settings, client, options, stats, on_progress, secrets,
                         lease, work, record)
        return stats
    finally:
        lease.release()


def probe_tasks(session: Session, settings: JudgeSettings, stats: RunStats,
                done: dict[int, set[str]]) -> list[Task]:
    """A task for every probe not yet answered by this exact request: the probe as its
    golden's last chunk (alone, or listwise after the golden's own chunks, which are sent for
    context under negative ids and whose verdicts are not kept)."""
    probes = session.probes()
    goldens = {g.id: g for start in range(0, len(probes), GOLDENS_PER_PAGE)
               for g in session.goldens(sorted({p.golden_id
                                               for p in probes[start:start + GOLDENS_PER_PAGE]}))}
    work = []
    for probe in probes:
        golden = goldens[probe.golden_id]
        answer = golden.reference if settings.prompt.against == "reference" else golden.response
        if answer is None:
            stats.no_answer += 1
            continue
        rank = len(golden.chunks) + 1
        if settings.prompt.listwise:
            ids = [-chunk.rank for chunk in golden.chunks] + [probe.id]
            parts = [(chunk.rank, chunk.text) for chunk in golden.chunks] + [(rank, probe.text)]
        else:
            ids, parts = [probe.id], [(rank, probe.text)]
        task = Task(ids, golden.user_input, answer, parts, 1)
        if probe.id in done:
            task.sha = task_sha256(settings, task)
            if task.sha in done[probe.id]:
                stats.skipped += 1
                continue
        work.append(task)
    return work


def stored_settings(judge: Judge) -> JudgeSettings:
    """A judge's requests rebuilt from its stored definition: its prompt (with the examples it
    was shown), model, endpoint and sampling; a prompt sent by its own library (RAGAS) is
    made again by its style."""
    if judge.prompt_text:
        prompt: JudgePrompt = TemplatePrompt.from_definition(judge.prompt_id,
                                                             json.loads(judge.prompt_text))
    elif judge.prompt_id in ("ragas", "ragas-response"):
        from annotator.judge.styles import make_prompt

        prompt = make_prompt("ragas", "response" if judge.prompt_id.endswith("response")
                             else "reference")
    else:
        raise SessionError(f"Judge '{judge.name}' has no stored prompt to rebuild its "
                           "requests from (its verdicts were imported, not asked for by this "
                           "tool); judge with this tool first, 'annotator judge SESSION --model "
                           "MODEL --name NAME', and give that judge's name.")
    params = judge.parameters
    return JudgeSettings(model=judge.model or "", prompt=prompt, base_url=judge.base_url,
                         temperature=params.get("temperature", 0.0),
                         max_tokens=params.get("max_tokens", 512), window=params.get("window"),
                         system_as_user=bool(params.get("system_as_user", False)),
                         provider=judge.provider)


def call_row(chunk_id: int, sha: str, repetition: int, result: CallResult) -> dict[str, object]:
    """One chunk's call as stored (see Session.record_calls)."""
    return {
        "chunk_id": chunk_id, "verdict": result.verdict, "reason": result.reason,
        "p_relevant": result.p_relevant, "grade": result.grade,
        "error": None if result.verdict is not None else result.error or "no verdict",
        "raw_reply": result.raw_reply, "confidence_note": result.confidence_note,
        "tokens_in": result.tokens_in, "tokens_out": result.tokens_out,
        "tokens_cached": result.tokens_cached, "latency_ms": result.latency_ms,
        "request_sha256": sha, "repetition": repetition, "requests": result.requests,
        "served_model": result.served_model, "fingerprint": result.fingerprint}


class ServedAs:
    """Follows the epoch a run's replies say served them, and says at once when it changes
    (the run goes on: each verdict is stored under its own epoch, kept apart)."""

    def __init__(self, session: Session, judge: str, stats: RunStats) -> None:
        self.session, self.judge, self.stats = session, judge, stats
        self.epoch = session.epoch_in_use(judge)
        known = ({e["epoch"]: e for e in session.judge_epochs(judge, counted=False)}
                 if self.epoch else {})
        now = known.get(self.epoch or "")
        self.said = (now["model"], now["fingerprint"]) if now else None
        self.configured = next((j.model for j in session.judges() if j.name == judge), None)

    def check(self, result: CallResult) -> None:
        """Note a reply's epoch; a new one (after the first of a judge) is said at once."""
        epoch = self.session.epoch_for(self.judge, result.served_model, result.fingerprint)
        if epoch == self.epoch:
            return
        model = result.served_model or self.configured
        if self.epoch is not None and self.said is not None:
            self.stats.notices.append(
                f"The provider now serves judge '{self.judge}' as "
                f"{served_words(model, result.fingerprint)} (until now "
                f"{served_words(*self.said)}): its verdicts from here on are epoch "
                f"{epoch}, kept apart from epoch {self.epoch}.")
        self.epoch, self.said = epoch, (model, result.fingerprint)


def served_words(model: str | None, fingerprint: str | None) -> str:
    """'model M, fingerprint F' as a reply said it ('no fingerprint' where it said none)."""
    return (f"model {model or 'not named'}, "
            + (f"fingerprint {fingerprint}" if fingerprint else "no fingerprint"))


def _shares(total: int | None, count: int) -> list[int | None]:
    """A call's token count split evenly over its chunks (the remainder to the first ones), so
    the chunks' counts add up to the call's."""
    if total is None:
        return [None] * count
    each, extra = divmod(total, count)
    return [each + (i < extra) for i in range(count)]


def split_call(ids: list[int], sha: str, repetition: int, result: CallResult
           ) -> list[dict[str, object]]:
    """A failed listwise call stored against each of its chunks, its cost split among them."""
    rows = []
    for i, (tin, tout, tcached) in enumerate(zip(
            _shares(result.tokens_in, len(ids)), _shares(result.tokens_out, len(ids)),
            _shares(result.tokens_cached, len(ids)), strict=True)):
        row = call_row(ids[i], sha, repetition, result)
        row.update(tokens_in=tin, tokens_out=tout, tokens_cached=tcached,
                   requests=result.requests if i == 0 else 0,
                   latency_ms=None if result.latency_ms is None
                   else round(result.latency_ms / len(ids), 1))
        rows.append(row)
    return rows


def merged_calls(task: Task, sha: str, results: list[tuple[range, CallResult]]
            ) -> list[dict[str, object]]:
    """Each chunk's verdict from the first window that held it, marked unstable where a later
    window said otherwise; each window's tokens split over its chunks."""
    rows: dict[int, dict[str, object]] = {}
    for span, result in results:
        listed = result.listed or []
        costs = split_call([task.chunk_ids[i] for i in span], sha, task.repetition, result)
        for position, (verdict, reason, grade, chance), cost in zip(span, listed, costs,
                                                                    strict=True):
            chunk_id = task.chunk_ids[position]
            row = rows.get(chunk_id)
            if row is None:
                rows[chunk_id] = {**cost, "verdict": verdict, "reason": reason, "grade": grade,
                                  "p_relevant": chance, "error": None, "unstable": 0,
                                  "confidence_note": None if chance is not None
                                  else result.confidence_note}
                continue
            for key in ("tokens_in", "tokens_out", "tokens_cached", "requests"):
                if cost[key] is not None:
                    row[key] = int(row[key] or 0) + int(cost[key])  # type: ignore[call-overload]
            if verdict != row["verdict"]:
                row["unstable"] = 1
    return [rows[chunk_id] for chunk_id in task.chunk_ids]


GOLDENS_PER_PAGE = 500
"""Goldens read at a time while collecting the work (a page, not the whole session)."""

DEGENERATE_AFTER = 10
"""Fewer verdicts than this say too little to call a judge degenerate."""


def degenerate(session: Session, name: str) -> list[str]:
    """Warnings for a judge that gave every chunk the same verdict, or most the same reason."""
    total, useful, reason, same = session.verdict_profile(name)
    if total < DEGENERATE_AFTER:
        return []
    out = []
    if useful in (0, total):
        word = "useful" if useful else "noise"
        moved = any(j.name == name and j.parameters.get("system_as_user")
                    for j in session.judges())
        out.append(f"judge '{name}' called all {total} chunks it judged {word}: a judge that "
                   "never varies is usually reading the prompt wrong; look at its reasons "
                   "('annotator annotate' shows them) before trusting it." + ("" if moved else
                   " Some chat templates (llama-cpp-python's 'gemma' among them) drop the "
                   "system message, so the model never sees its instructions: try "
                   "--system-as-user, which puts them at the head of the first user message."))
    if reason is not None and same > total / 2:
        out.append(f"judge '{name}' gave the same reason to {same} of its {total} verdicts "
                   f"({shortened(reason, 80)!r}): it may not be reading the chunks.")
    return out


LEASE_SECONDS = 60.0
"""How long a run's claim on a judge lasts without renewal (a killed run's claim lapses)."""


class Lease:
    """This run's claim on a judge in the session: a second run of the same judge on the same
    file is refused while the first runs, so no chunk is asked twice (it would be, by both)."""

    def __init__(self, session: Session, judge: str) -> None:
        self.session = session
        self.judge = judge
        self.id = uuid.uuid4().hex
        self.holder = {"id": self.id, "pid": os.getpid(), "host": socket.gethostname(),
                       "since": datetime.now(UTC).isoformat(timespec="seconds")}
        self._renewed = 0.0
        self._held = False

    def take(self) -> None:
        """Claim the judge, or raise SessionError naming the run that holds it."""
        other = self.session.take_lease(self.judge, self.holder, LEASE_SECONDS, _still_running)
        if other is not None:
            raise SessionError(
                f"Judge '{self.judge}' is already being run on this session by process "
                f"{other.get('pid')} on {other.get('host')} (since {other.get('since')}). Wait "
                "for it to finish, or stop it; a run stopped without finishing gives the judge "
                f"up within {LEASE_SECONDS:.0f} s. To judge alongside it, use another --name.")
        self._held, self._renewed = True, time.monotonic()

    def renew(self) -> None:
        """Keep the claim alive (a write at most every few seconds)."""
        if self._held and time.monotonic() - self._renewed > LEASE_SECONDS / 6:
            self.session.take_lease(self.judge, self.holder, LEASE_SECONDS, _still_running)
            self._renewed = time.monotonic()

    def release(self) -> None:
        """Give the judge up."""
        if self._held:
            self.session.release_lease(self.judge, self.id)
            self._held = False


def _still_running(holder: dict[str, object]) -> bool:
    """Whether a lease's holder still runs: a process on this machine that has gone is not."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return True  # another machine: trust its expiry time
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JudgeStopped(AnnotatorError):
    """The run stopped at once: its first calls all failed the same hopeless way."""

    def __init__(self, group: Group, stats: RunStats) -> None:
        self.group = group
        self.stats = stats
        super().__init__(group.error)

    def __str__(self) -> str:
        group = self.group
        # Read when shown: the judge is removed after this was raised, on the way out of the run.
        return (f"Stopped after {group.count} calls failed the same way, before any verdict: "
                f"{group.error}{group.example()}" + (f"; {group.advice}" if group.advice else "")
                + ". Nothing "
                "was " + ("judged in this run." if self.stats.kept
                          else "stored (the judge is not kept)."))


SLOW_ENOUGH_TO_MEASURE_S = 0.05
"""Below this first-call latency, queueing noise on this machine swamps the measurement."""


class _Pace:
    """How many calls are out at once, and how long one may take. The first calls go alone and
    time the endpoint (the fastest of WARM: the very first may load the model or fill a cache);
    the next few go two at a time: a server that serves one request at a time answers each of
    them about twice as slowly, or not within the timeout, and is then sent one at a time for
    the rest of the run (more would only queue and time out), with a sentence saying so; any
    other gets all ``workers``."""

    WARM = 2
    """Calls timed alone before pairing: the fastest of them is the endpoint's warm latency."""
    PAIRED = 3
    """Calls timed two at a time before deciding (their median: the first may run alone)."""
    COLD_TIMEOUT_S = 600.0
    """A call's timeout before any has been timed (a local server's first call may load the
    model: seen here, 56 s for a 0.5B model on a busy 2-core machine)."""
    MIN_TIMEOUT_S = 60.0
    TIMEOUT_FACTOR = 5.0
    """A fitted timeout is this many times the slowest warm call measured (at least
    MIN_TIMEOUT_S): room for a long chunk and a busy moment, not for a dead server."""

    def __init__(self, workers: int, stats: RunStats) -> None:
        self.workers, self.stats = workers, stats
        self.limit, self.busy = 1, 0
        self.solo: list[float] = []
        self.paired: list[float] = []
        self.changed = asyncio.Condition()

    @property
    def alone(self) -> float | None:
        """The endpoint's warm latency, once WARM calls were timed alone."""
        return min(self.solo) if len(self.solo) >= self.WARM else None

    def timeout(self, given: float | None) -> float:
        """``given`` (--timeout), else one fitted to the calls timed so far."""
        if given is not None:
            return given
        measured = [*self.solo[1:], *self.paired]  # warm calls only
        if not measured:
            return self.COLD_TIMEOUT_S
        return max(self.MIN_TIMEOUT_S, self.TIMEOUT_FACTOR * max(measured))

    async def enter(self) -> None:
        """Wait for a place among the calls allowed out now."""
        async with self.changed:
            await self.changed.wait_for(lambda: self.busy < self.limit)
            self.busy += 1

    async def leave(self, seconds: float | None) -> None:
        """Give the place back, learning from the call's time (None: no call was made)."""
        async with self.changed:
            self.busy -= 1
            if seconds is not None:
                self._learn(seconds)
            self.changed.notify_all()

    def timed_out(self) -> None:
        """A call ran out of time while calls were paired: the server queues them (a client
        timeout is queueing too), so the rest of the run goes one call at a time."""
        if self.limit == 2 and self.workers > 1:
            self._one_at_a_time("a call two at once ran past its timeout")

    def _learn(self, seconds: float) -> None:
        if self.workers < 2 or (self.limit == self.workers and self.alone is not None):
            return
        if self.alone is None:
            self.solo.append(seconds)
            if len(self.solo) >= self.WARM:
                self.limit = 2
            return
        self.paired.append(seconds)
        if len(self.paired) < self.PAIRED:
            return
        typical = sorted(self.paired)[len(self.paired) // 2]
        alone = self.alone
        if alone >= SLOW_ENOUGH_TO_MEASURE_S and 2 * alone / typical < 1.5:
            self._one_at_a_time(f"a warm call took {alone:.2f} s alone and {typical:.2f} s two "
                                "at once")
        else:
            self.limit = self.workers

    def _one_at_a_time(self, why: str) -> None:
        if self.workers == 1:
            return
        self.limit = self.workers = 1
        self.stats.warnings.append(
            f"This endpoint serves one request at a time: {why}, so this run went on one call "
            "at a time (more would only queue and time out); --concurrency 1 skips the check.")


def resume_transport(session: Session, name: str, settings: JudgeSettings) -> None:
    """Start from what this judge's endpoint accepted last time: a refused response format or
    logprobs is not asked again on every run (never more than the options allow)."""
    stored = session.judge_transport(name)
    if stored is None:
        return
    mode = stored.get("response_format")
    formats = settings.formats
    if mode in formats and formats.index(mode) > formats.index(settings.response_format):
        settings.response_format = mode
    settings.logprobs = settings.logprobs and bool(stored.get("logprobs", True))


def _drop_refused(session: Session, name: str, settings: JudgeSettings, result: CallResult,
                  stats: RunStats) -> bool:
    """Drop what the endpoint refused in this reply; True when the request should be sent again
    at once (something was dropped, now or by a call that ran beside this one)."""
    changed = False
    if "response_format" in result.unsupported:
        if settings.response_format != result.sent_format:
            return True  # another call already moved on; resend with what it settled on
        following = next_format(settings.response_format, settings.formats)
        if following is not None:
            stats.refused.append(f"the server refused {settings.response_format}; now asking "
                                 f"with {following}")
            settings.response_format = following
            changed = True
    if "logprobs" in result.unsupported:
        if not settings.logprobs or not result.sent_logprobs:
            return True
        stats.refused.append("the server refused logprobs; asking without them (no P(relevant))")
        settings.logprobs = False
        changed = True
    if changed:
        stats.response_format, stats.logprobs = settings.response_format, settings.logprobs
        session.set_judge_transport(name, {"response_format": settings.response_format,
                                           "logprobs": settings.logprobs})
    return changed


def retry_wait(result: CallResult, attempt: int, options: RunOptions) -> float:
    """Seconds to wait before asking again after a failed call, for every request this tool
    sends (a judge's, a probe's, align's optimizer's): the server's Retry-After, at most
    ``max_wait``; else exponential backoff with full jitter."""
    if result.retry_after is not None:
        return min(result.retry_after, options.max_wait)
    return random.uniform(0, min(options.backoff_cap, options.backoff_base * 2**attempt))


def _redact(result: CallResult, secrets: tuple[str, ...]) -> None:
    """Hide a key or password a server echoed back in its error, reply or reason, in any of the
    forms annotator.redact knows (the key itself, URL-quoted, base64 in a Basic header)."""
    remember(*secrets)
    for name in ("error", "raw_reply", "reason"):
        text = getattr(result, name)
        if text:
            setattr(result, name, scrub(text))
    if result.listed:
        result.listed = [(v, scrub(reason) if reason else reason, grade, p)
                         for v, reason, grade, p in result.listed]
