"""Judge every chunk of a session: many calls at once, retried, each stored.

Rate limits live in the client's HTTP layer (client.make_client).

Every call is stored the moment it ends (verdict or error). A chunk already judged by the
same request (model, messages, sampling parameters) is skipped, so an interrupted run
resumes where it stopped and a finished one makes no calls at all.

With ``repeat`` K > 1 every chunk is judged K times (repetitions 1..K, the same request each
time): repetition 1 is the verdict in force, and the others measure how often it flips.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from openai import AsyncOpenAI

from annotator.errors import AnnotatorError, NotSaved, SessionError
from annotator.judge.client import RESPONSE_FORMATS, ask, next_format, request_sha256
from annotator.judge.failures import Failures, Group
from annotator.judge.types import CallResult, JudgeSettings
from annotator.models import Judge
from annotator.store.session import Session
from annotator.text import shortened


@dataclass(slots=True)
class RunOptions:
    """How hard to push the endpoint."""

    concurrency: int = 8
    timeout: float = 60.0
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
    requests: int = 0
    """HTTP requests sent (more than calls where a library retries inside one call)."""
    started: float = field(default_factory=time.monotonic)
    response_format: str = "json_schema"
    """The response format the run ended with (see client.RESPONSE_FORMATS)."""
    logprobs: bool = True
    """Whether the run ended still asking for logprobs."""
    refused: list[str] = field(default_factory=list)
    """What the endpoint refused this run, in order, as sentences for the summary."""
    warnings: list[str] = field(default_factory=list)
    """What the run noticed about the endpoint, as sentences for the summary."""
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

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """USD spent, from prices per million tokens; None without prices."""
        if price_in is None or price_out is None:
            return None
        return (self.tokens_in * price_in + self.tokens_out * price_out) / 1e6


def judge_definition(name: str, settings: JudgeSettings) -> Judge:
    """The judge as stored in the session: everything that defines its requests."""
    return Judge(name, settings.model, settings.base_url, settings.prompt.id,
                 settings.prompt.template_sha256, settings.parameters())


async def run_judge(
    session: Session,
    name: str,
    settings: JudgeSettings,
    client: AsyncOpenAI,
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
        new_judge = name not in {j.name for j in session.judges()}
        session.define_judge(judge_definition(name, settings))
        try:
            return await _judge_all(session, name, settings, client, options, stats,
                                    on_progress, secrets, lease)
        finally:
            # Whatever ended the run (done, stopped, Ctrl-C, every call failed), a judge it
            # defined that holds no verdict is not left behind for defaults to trip on.
            if new_judge and stats.judged == 0:
                stats.kept = not session.forget_unused_judge(name)
    finally:
        lease.release()


async def _judge_all(session: Session, name: str, settings: JudgeSettings, client: AsyncOpenAI,
                     options: RunOptions, stats: RunStats,
                     on_progress: Callable[[RunStats], None] | None,
                     secrets: tuple[str, ...], lease: Lease) -> RunStats:
    _resume_transport(session, name, settings)
    stats.response_format, stats.logprobs = settings.response_format, settings.logprobs
    done = session.judged_requests(name)
    # The work holds references to the texts, not rendered prompts: those are rebuilt when a
    # chunk's turn comes, so a large session costs no second copy of every chunk in memory.
    # Every verdict in force (repetition 1) comes before any repetition; with --limit the
    # goldens are read a page at a time only until the limit is met.
    first: list[tuple[int, str, str, str, str | None, int]] = []
    later: list[tuple[int, str, str, str, str | None, int]] = []
    golden_ids = session.golden_ids()
    for start in range(0, len(golden_ids), GOLDENS_PER_PAGE):
        if options.limit is not None and len(first) >= options.limit:
            break
        for golden in session.goldens(golden_ids[start:start + GOLDENS_PER_PAGE]):
            answer = (golden.reference if settings.prompt.against == "reference"
                      else golden.response)
            if answer is None:
                stats.no_answer += len(golden.chunks)
                continue
            for chunk in golden.chunks:
                sha: str | None = None  # a chunk never called needs no hash to be pending
                for repetition in range(1, options.repeat + 1):
                    asked = done.get((chunk.id, repetition))
                    if asked and sha is None:
                        sha = request_sha256(settings, settings.prompt.messages(
                            golden.user_input, answer, chunk.text))
                    if asked and sha in asked:
                        stats.skipped += 1
                    else:
                        (first if repetition == 1 else later).append(
                            (chunk.id, golden.user_input, answer, chunk.text, sha, repetition))
    work = first + sorted(later, key=lambda item: item[5])
    if options.limit is not None:
        work = work[: options.limit]
    stats.total = len(work)
    if stats.no_answer and not work and not stats.skipped:
        raise SessionError(f"No golden has a {settings.prompt.against} to judge chunks against; "
                           "use --against " + ("response" if settings.prompt.against ==
                                               "reference" else "reference") + ".")
    queue: asyncio.Queue[tuple[int, str, str, str, str | None, int]] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    del work, first, later

    async def judge_one(chunk_id: int, question: str, answer: str, text: str, sha: str | None,
                        repetition: int) -> None:
        messages = settings.prompt.messages(question, answer, text)
        sha = sha or request_sha256(settings, messages)
        attempt = 0
        while True:
            result = await ask(client, settings, messages, options.timeout)
            _redact(result, secrets)  # before anything stores, counts or prints the reply
            while True:  # the reply is kept while another command holds the file
                try:
                    _store(session, name, chunk_id, sha, repetition, result)
                    lease.renew()
                    break
                except NotSaved as refused:
                    if not refused.busy:
                        raise  # a full disk or a read-only file: waiting will not help
                    await asyncio.sleep(1.0)
            stats.tokens_in += result.tokens_in or 0
            stats.tokens_out += result.tokens_out or 0
            stats.requests += result.requests
            if result.verdict is not None:
                stats.judged += 1
                stats.failures.succeeded()
                return
            stats.errors += 1
            stats.failures.add(result)
            if on_progress is not None:
                on_progress(stats)
            if _drop_refused(session, name, settings, result, stats):
                continue  # a refused feature is dropped for good: retrying now costs no attempt
            if (hopeless := stats.failures.hopeless(stats.judged)) is not None:
                stopped.append(hopeless)
            if stopped or not result.retryable or attempt == options.max_retries:
                break
            if result.retry_after is not None:
                wait = min(result.retry_after, options.max_wait)
                stats.waiting = wait
                if on_progress is not None:
                    on_progress(stats)
            else:
                wait = _backoff(attempt, options)
            await asyncio.sleep(wait)
            stats.waiting = None
            attempt += 1
        stats.gave_up += 1

    stopped: list[Group] = []  # a hopeless failure: no worker takes more work
    workers = max(1, min(options.concurrency, stats.total))
    probe = _ConcurrencyProbe(workers)

    async def worker(first: bool) -> None:
        if not first:
            await probe.opened.wait()
        while not queue.empty() and not stopped:
            started = time.monotonic()
            await judge_one(*queue.get_nowait())
            probe.finished(time.monotonic() - started, stats)
            if on_progress is not None:
                on_progress(stats)
        probe.opened.set()  # the queue ran dry before the probe finished

    await asyncio.gather(*(worker(index == 0) for index in range(workers)))
    if stopped:
        raise JudgeStopped(stopped[0], stats)
    stats.warnings.extend(degenerate(session, name))
    return stats


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
        out.append(f"judge '{name}' called all {total} chunks it judged {word}: a judge that "
                   "never varies is usually reading the prompt wrong; look at its reasons "
                   "('annotator annotate' shows them) before trusting it.")
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
                f"{group.error}" + (f"; {group.advice}" if group.advice else "") + ". Nothing "
                "was " + ("judged in this run." if self.stats.kept
                          else "stored (the judge is not kept)."))


SLOW_ENOUGH_TO_MEASURE_S = 0.05
"""Below this first-call latency, queueing noise on this machine swamps the measurement."""


class _ConcurrencyProbe:
    """The first call goes alone and times the endpoint; the next full round of calls, sent
    ``workers`` at a time, shows whether concurrency buys throughput. A server that serves one
    request at a time answers each of them about ``workers`` times slower, and queued requests
    then run into the timeout for nothing."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.opened = asyncio.Event()
        self.alone: float | None = None
        self.together: list[float] = []

    def finished(self, seconds: float, stats: RunStats) -> None:
        """Note one finished chunk's time; open the gate after the first; judge after a round."""
        if self.alone is None:
            self.alone = seconds
            self.opened.set()
            return
        if self.workers < 2 or len(self.together) >= 2 * self.workers:
            return
        self.together.append(seconds)
        if len(self.together) == 2 * self.workers and self.alone >= SLOW_ENOUGH_TO_MEASURE_S:
            typical = sorted(self.together)[len(self.together) // 2]
            speedup = self.workers * self.alone / typical
            if speedup < 1.5:
                stats.warnings.append(
                    f"This endpoint seems to serve one request at a time: a call took "
                    f"{self.alone:.2f} s alone and {typical:.2f} s with {self.workers} at once, "
                    f"so --concurrency {self.workers} is no faster than --concurrency 1 and "
                    "makes queued calls time out; use --concurrency 1 for this server.")


def _resume_transport(session: Session, name: str, settings: JudgeSettings) -> None:
    """Start from what this judge's endpoint accepted last time: a refused response format or
    logprobs is not asked again on every run (never more than the options allow)."""
    stored = session.judge_transport(name)
    if stored is None:
        return
    mode = stored.get("response_format")
    if mode in RESPONSE_FORMATS and (RESPONSE_FORMATS.index(mode)
                                     > RESPONSE_FORMATS.index(settings.response_format)):
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
        following = next_format(settings.response_format)
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


def _backoff(attempt: int, options: RunOptions) -> float:
    """Exponential backoff with full jitter."""
    return random.uniform(0, min(options.backoff_cap, options.backoff_base * 2**attempt))


def _redact(result: CallResult, secrets: tuple[str, ...]) -> None:
    """Replace a key or password a server echoed back in its error, reply or reason."""
    for secret in secrets:
        if len(secret) < 4:  # too short to find without hiding ordinary text
            continue
        for name in ("error", "raw_reply", "reason"):
            text = getattr(result, name)
            if text and secret in text:
                setattr(result, name, text.replace(secret, "***"))


def _store(session: Session, name: str, chunk_id: int, sha: str, repetition: int,
           result: CallResult) -> None:
    error, raw = result.error, result.raw_reply
    session.record_call(
        name, chunk_id, verdict=result.verdict, reason=result.reason,
        p_relevant=result.p_relevant, error=None if result.verdict is not None else error or
        "no verdict", raw_reply=raw, confidence_note=result.confidence_note,
        tokens_in=result.tokens_in, tokens_out=result.tokens_out, latency_ms=result.latency_ms,
        request_sha256=sha, repetition=repetition, requests=result.requests)
