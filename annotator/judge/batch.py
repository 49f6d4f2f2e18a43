"""Batch judging: the live run's requests as Batch API files, and their results stored as calls.

A round renders every request the live run would send (the same bodies, so the same request
hashes and resume rules), streams them to JSONL files split at the provider's limits, and stores
each request (its custom_id, the chunks it is for) before anything is uploaded. The provider's
batches (or an offline engine's results file) are then read back line by line: each result is
stored exactly once, in the same transaction that marks its request stored, so a process killed
at any point and run again loses nothing and stores nothing twice. Requests that failed or
expired are judged again by the next round.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from annotator.errors import InputError, SessionError, install_hint
from annotator.files import folder_made_whole, made_whole
from annotator.judge.client import read_result, request_body
from annotator.judge.runner import (
    Lease,
    RunOptions,
    RunStats,
    Task,
    call_row,
    define,
    iter_tasks,
    merged_calls,
    split_call,
    stored_settings,
    task_messages,
    task_sha256,
    windows,
)
from annotator.judge.template import TemplatePrompt
from annotator.judge.transport import BatchState, Transport, provider_of
from annotator.judge.types import CallResult, JudgeSettings
from annotator.models import Price
from annotator.store.session import Session
from annotator.text import counted
from annotator.untrusted import UnsafeJson, parse_json

_encode = json.JSONEncoder(ensure_ascii=False).encode
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
"""The states after which a batch changes no more."""
MAX_REQUESTS, MAX_MB = provider_of("openai").batch_limits
"""OpenAI's limits on one batch: requests, and megabytes of its input file."""
STORE_EVERY = 2_000
"""Results stored a transaction at a time (a kill loses at most the one in flight)."""


@dataclass(slots=True)
class Limits:
    """Where a round's requests are split into files."""

    max_requests: int = MAX_REQUESTS
    max_bytes: int = MAX_MB * 1_000_000

    @classmethod
    def of(cls, provider: str) -> Limits:
        """A provider's own limits on one batch."""
        requests, megabytes = provider_of(provider).batch_limits
        return cls(requests, megabytes * 1_000_000)

    def full(self, requests: int, size: int, line: int) -> bool:
        """Whether a request line of ``line`` bytes must start a new file after one holding
        ``requests`` requests in ``size`` bytes."""
        return requests >= self.max_requests or (requests > 0 and size + line > self.max_bytes)


@dataclass(slots=True)
class Part:
    """One request file of a round."""

    number: int
    path: Path
    requests: int = 0
    bytes: int = 0


@dataclass(slots=True)
class Round:
    """What writing a round's requests made."""

    number: int
    parts: list[Part] = field(default_factory=list)
    chunks: int = 0
    busy: int = 0
    """Chunks left alone because a batch still holds their requests."""

    @property
    def requests(self) -> int:
        """Requests in all its files."""
        return sum(part.requests for part in self.parts)


def write_round(session: Session, name: str, settings: JudgeSettings, options: RunOptions,
                stats: RunStats, directory: Path, limits: Limits,
                single: Path | None = None,
                on_progress: Callable[[int], None] | None = None) -> Round:
    """Write every request not yet judged (nor out in a batch) as Batch API JSONL, streamed,
    and store each request; ``single``: one file at that path (an export), else files in
    ``directory`` split at ``limits``."""
    if not isinstance(settings.prompt, TemplatePrompt):
        raise SessionError(f"The {settings.prompt.id} prompt is sent by its own library, call "
                           "by call; batch judging needs a template prompt (builtin, listwise "
                           "or a prompt file).")
    number = session.next_batch_round()
    current = Round(number)
    lines = RequestLines(settings, number)
    busy = session.batch_busy(name)
    rows: list[dict[str, Any]] = []
    handle: IO[bytes] | None = None
    part: Part | None = None

    def rotate() -> None:
        nonlocal handle, part
        if handle is not None:
            handle.close()
        # A judge's name may hold a slash (a model id such as org/model): one file name.
        stem = quote(name, safe="-_.+@")
        path = single or directory / f"{stem}-round{number}-part{len(current.parts) + 1}.jsonl"
        part = Part(len(current.parts) + 1, path)
        current.parts.append(part)
        handle = path.open("wb")

    try:
        for task in iter_tasks(session, settings, options, stats,
                               session.judged_requests(name)):
            if (task.chunk_ids[0], task.repetition) in busy:
                current.busy += len(task.chunk_ids)
                continue
            for line, row in lines.of(task):
                if part is None or (single is None and limits.full(part.requests, part.bytes, len(line))):
                    rotate()
                assert handle is not None and part is not None
                handle.write(line)
                part.requests += 1
                part.bytes += len(line)
                row["part"] = part.number
                rows.append(row)
            current.chunks += len(task.chunk_ids)
            if len(rows) >= STORE_EVERY:
                session.add_batch_requests(name, rows)
                rows = []
                if on_progress is not None:
                    on_progress(current.chunks)
        session.add_batch_requests(name, rows)
    finally:
        if handle is not None:
            handle.close()
    stats.total = current.chunks
    return current


@dataclass(slots=True)
class Started:
    """What starting a round made: its request files, and the batches created from them (none
    for an export, or when nothing was left to ask)."""

    round: Round
    batch_ids: list[str]


async def start_round(session: Session, name: str, settings: JudgeSettings,
                      options: RunOptions, stats: RunStats, limits: Limits, *,
                      price: Price | None = None, client: Transport | None = None,
                      export: Path | None = None, shards: bool = False,
                      shard_format: str = "jsonl",
                      on_progress: Callable[[int], None] | None = None) -> Started:
    """Define the judge, write a round of its requests, then create their batches through
    ``client``, or (``export``) leave them in that one file for an engine run elsewhere, or with
    ``shards`` in files of that new folder, split at ``limits`` (a distributed engine's shards;
    ``shard_format`` 'parquet' writes each as parquet, for engines that read tables).

    On any failure, a file that never became a batch is forgotten, so its chunks are asked
    by the next round (one that did, its id lost to a kill, is found again by ``recover``),
    and a judge this call defined that holds nothing is removed again.
    """
    lease = Lease(session, name)
    lease.take()  # as a live run: two creators of one judge would write the same requests
    try:
        # Requests stored for a file that never became a batch or an export: a run killed
        # while writing (SIGKILL skips every clean-up). The lease is ours, so no live run is
        # writing them: an export forgets them, so their chunks go in this round; a provider's
        # batch whose id was lost is first looked for (recover) before being forgotten.
        if client is not None:
            await recover(client, session)
        else:
            for _, round_, number in session.unsubmitted_parts(name):
                session.forget_batch_part(name, round_, number)
        new_judge = define(session, name, settings)
        if price is not None:
            session.set_price(name, price)

        def progress(chunks: int) -> None:
            lease.renew()  # writing a million requests outlasts a lease
            if on_progress is not None:
                on_progress(chunks)

        with tempfile.TemporaryDirectory(prefix="cp-annotator-batch-") as tmp:
            try:
                # An export is made whole beside its target (a file of a million requests is
                # never copied, and a failed export leaves no file); with nothing to ask, none.
                # Shards are files of one folder, made whole the same way.
                if export is not None and shards:
                    with folder_made_whole(export) as folder:
                        current = write_round(session, name, settings, options, stats, folder,
                                              limits, on_progress=progress)
                        if shard_format == "parquet":
                            as_parquet(current.parts)
                else:
                    with (made_whole(export) if export is not None
                          else nullcontext(None)) as target:
                        current = write_round(session, name, settings, options, stats,
                                              Path(tmp), limits, single=target,
                                              on_progress=progress)
                        if target is not None and not current.requests:
                            target.unlink()
                if not current.requests:
                    if new_judge:
                        session.forget_unused_judge(name)
                    return Started(current, [])
                if export is not None:
                    with session.transaction():  # every file of the export recorded, or none
                        for part in current.parts:
                            session.record_batch({
                                "id": f"export:{name}:{current.number}" + (
                                    f":{part.number}" if shards else ""),
                                "judge": name, "round": current.number, "part": part.number,
                                "input_file_id": None, "output_file_id": None,
                                "error_file_id": None, "state": "exported",
                                "requests": part.requests, "completed": 0, "failed": 0})
                    return Started(current, [])
                if client is None:
                    raise ValueError("start_round needs a client or an export path")
                return Started(current, await submit(client, session, name, current))
            except BaseException:
                for _, round_, number in session.unsubmitted_parts(name):
                    session.forget_batch_part(name, round_, number)
                if new_judge and not session.batches(name):
                    session.forget_unused_judge(name)
                raise
    finally:
        lease.release()


def as_parquet(parts: list[Part]) -> None:
    """Rewrite each request file as parquet (custom_id, method, url, and body as JSON text, so
    bodies of any shape share one schema), in place of its JSONL."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SessionError(f"Parquet shards need pyarrow: {install_hint('parquet')}, "
                           "or leave out --shard-format parquet.") from None
    for part in parts:
        rows = [json.loads(line) for line in part.path.read_bytes().splitlines() if line]
        table = pa.table({"custom_id": [r["custom_id"] for r in rows],
                          "method": [r["method"] for r in rows], "url": [r["url"] for r in rows],
                          "body": [json.dumps(r["body"], ensure_ascii=False) for r in rows]})
        target = part.path.with_suffix(".parquet")
        pq.write_table(table, target)
        part.path.unlink()
        part.path = target


def result_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """A results file's lines as (number, JSON bytes): JSON lines, or a parquet table's rows
    (a JSON-text ``body`` or ``response`` cell read back as JSON)."""
    if path.suffix.lower() != ".parquet":
        with path.open("rb") as handle:
            yield from ((n, line) for n, line in enumerate(handle, 1) if line.strip())
        return
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SessionError(f"{path} is parquet, which needs pyarrow: "
                           f"{install_hint('parquet')}.") from None
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as error:  # pyarrow's own kinds, for a damaged or foreign file
        raise InputError(str(path), f"is not a parquet file pyarrow can read ({error}).") from None
    for n, row in enumerate(rows, 1):
        response = row.get("response")
        if isinstance(response, dict) and isinstance(response.get("body"), str):
            # Left as it is when it is no JSON: storing it says what is wrong, by row.
            with suppress(ValueError):
                response["body"] = json.loads(response["body"])
        yield n, json.dumps(row, ensure_ascii=False).encode()


class RequestLines:
    """The Batch API lines of one judge's requests in one round.

    All of a line but its custom_id and messages is the same for every request (or every
    window of the same ranks), so that part is encoded once per writer: at a million requests,
    encoding is most of the time.
    """

    def __init__(self, settings: JudgeSettings, number: int) -> None:
        self.settings = settings
        self.number = number
        self._tails: dict[tuple[int, ...] | None, str] = {}

    def of(self, task: Task, every: list[list[dict[str, str]]] | None = None
           ) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """Each request line of a task (one, or one per listwise window), with its stored row
        (``every``: the task's messages, when already rendered)."""
        settings = self.settings
        listwise = settings.prompt.listwise
        spans = windows(len(task.parts), settings.window) if listwise else [range(1)]
        # Rendered once: for the hash and for the lines.
        every = every if every is not None else task_messages(settings, task)
        sha = task.sha or task_sha256(settings, task, every)
        key = f"r{self.number}-{task.chunk_ids[0]}-{task.repetition}"
        for piece, (span, messages) in enumerate(zip(spans, every, strict=True)):
            ranks = [task.parts[i][0] for i in span] if listwise else None
            custom_id = f"{key}-{piece}"
            yield self._line(custom_id, messages, ranks), {
                "custom_id": custom_id, "round": self.number, "task": key, "piece": piece,
                "pieces": len(spans), "chunk_ids": _ints(task.chunk_ids[i] for i in span),
                "ranks": _ints(ranks) if ranks is not None else None,
                "repetition": task.repetition, "request_sha256": sha,
                "logprobs": int(settings.logprobs)}

    def _line(self, custom_id: str, messages: list[dict[str, str]], ranks: list[int] | None
              ) -> bytes:
        """One request line: the live request's body (request_body) with its custom_id."""
        if self.settings.provider != "openai":
            return provider_of(self.settings.provider).batch_line(
                custom_id, request_body(self.settings, messages, ranks))
        key = tuple(ranks) if ranks is not None else None
        tail = self._tails.get(key)
        if tail is None:
            body = request_body(self.settings, [], ranks)
            del body["messages"]
            tail = self._tails[key] = _encode(body)[1:] + "}\n"
        return ('{"custom_id": ' + _encode(custom_id) + ', "method": "POST", "url": "'
                + provider_of("openai").batch_endpoint + '", "body": {"messages": '
                + _encode(messages) + ", " + tail).encode()


def _ints(values: Iterable[int]) -> str:
    """A JSON list of whole numbers (json.dumps costs more, a million times over)."""
    return "[" + ",".join(map(str, values)) + "]"


def metadata(session: Session, name: str, round_: int, part: int) -> dict[str, str]:
    """What a batch carries to be found again if the process dies before storing its id."""
    return {"cp_annotator_session": session.session_id, "cp_annotator_judge": name[:500],
            "cp_annotator_round": str(round_), "cp_annotator_part": str(part)}


async def submit(client: Transport, session: Session, name: str, current: Round) -> list[str]:
    """Create a batch of each file of a round; store each as it is created."""
    ids = []
    for part in current.parts:
        batch = await client.batch_create(part.path, metadata(session, name, current.number,
                                                              part.number))
        session.record_batch(_row(batch, name, current.number, part.number, part.requests))
        ids.append(batch.id)
    return ids


def _row(batch: BatchState, judge: str, round_: int, part: int, requests: int
         ) -> dict[str, Any]:
    return {"id": batch.id, "judge": judge, "round": round_, "part": part,
            "input_file_id": batch.input_file_id, "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id, "state": batch.state,
            "requests": batch.requests or requests, "completed": batch.completed,
            "failed": batch.failed}


async def recover(client: Transport, session: Session) -> int:
    """Find the batch of every request file stored but never recorded as one (the process died
    between creating it and storing its id); a file that never became a batch is forgotten, so
    its chunks are judged by the next round. Returns how many batches were found."""
    missing = session.unsubmitted_parts()
    if not missing:
        return 0
    wanted = {(judge, r, p) for judge, r, p in missing}
    found = 0
    async for batch in client.batch_list():
        meta = batch.metadata
        if meta.get("cp_annotator_session") != session.session_id:
            continue
        key = (meta.get("cp_annotator_judge"), int(meta.get("cp_annotator_round", 0)),
               int(meta.get("cp_annotator_part", 0)))
        if key in wanted:
            judge, r, p = key
            assert judge is not None
            session.record_batch(_row(batch, judge, r, p, 0))
            wanted.discard(key)
            found += 1
    for judge, r, p in wanted:
        session.forget_batch_part(judge, r, p)
    return found


@dataclass(slots=True)
class Followed:
    """Where the batches stand after a pass."""

    batches: list[dict[str, Any]]
    stored: int = 0
    """Calls stored in this pass."""
    repeated: int = 0
    """Results skipped in this pass: stored before (a pass stopped before it marked its batch
    collected), or repeated in one file."""

    @property
    def total(self) -> int:
        """Requests in the batches followed."""
        return sum(b["requests"] for b in self.batches)

    @property
    def done(self) -> int:
        """Requests the provider finished (either way)."""
        return sum(b["completed"] + b["failed"] if b["state"] not in ENDED else b["requests"]
                   for b in self.batches)

    @property
    def running(self) -> list[dict[str, Any]]:
        """Batches not yet ended and collected."""
        return [b for b in self.batches if not b["collected"]]


async def follow(client: Transport, session: Session, judge: str | None = None, *,
                 wait: bool = False, poll: float = 10.0, poll_cap: float = 60.0,
                 on_progress: Callable[[Followed], None] | None = None) -> Followed:
    """Check every batch not yet collected; collect (store the results of) each that ended.
    With ``wait``, poll until all are collected, the interval growing to ``poll_cap``."""
    await recover(client, session)
    stored = repeated = 0
    interval = poll
    while True:
        for row in session.batches(judge):
            if row["collected"] or row["id"].startswith("export:"):
                continue
            batch = await client.batch_retrieve(row["id"])
            session.record_batch(_row(batch, row["judge"], row["round"], row["part"],
                                      row["requests"]))
            if batch.state in ENDED:
                paths = await client.batch_results(batch)
                try:
                    for path in paths:
                        with _downloaded(path) as lines:
                            done = store_results(session, lines)
                        stored += done.calls
                        repeated += done.repeated
                finally:
                    for path in paths:
                        path.unlink(missing_ok=True)
                session.set_batch_collected(row["id"])
        followed = Followed([b for b in session.batches(judge)
                             if not b["id"].startswith("export:")], stored, repeated)
        if on_progress is not None:
            on_progress(followed)
        if not wait or not followed.running:
            return followed
        await asyncio.sleep(interval)
        interval = min(poll_cap, interval * 1.5)


@contextmanager
def _downloaded(path: Path) -> Iterator[Iterator[tuple[int, bytes]]]:
    try:
        with path.open("rb") as handle:
            yield ((n, line) for n, line in enumerate(handle, 1) if line.strip())
    finally:
        path.unlink(missing_ok=True)


async def cancel(client: Transport, session: Session, judge: str | None = None) -> list[str]:
    """Cancel every batch still running; the ids cancelled."""
    out = []
    for row in session.batches(judge):
        if row["state"] not in ENDED and not row["id"].startswith("export:"):
            batch = await client.batch_cancel(row["id"])
            session.record_batch(_row(batch, row["judge"], row["round"], row["part"],
                                      row["requests"]))
            out.append(row["id"])
    return out


# -- results ---------------------------------------------------------------------------------


def _checked(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One result line, or InputError naming the line and what is wrong with it (not UTF-8,
    not JSON, nested too deep, a lone surrogate: formats.parse_json's rules)."""
    try:
        obj = parse_json(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(str(path), f"the line is not UTF-8 text (byte 0x{raw[error.start]:02x} "
                         f"at column {error.start + 1})", line=number) from None
    except UnsafeJson as error:
        raise InputError(str(path), str(error), line=number) from None
    except ValueError as error:
        raise InputError(str(path), f"not a JSON object ({error})", line=number) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
        raise InputError(str(path), "a result line needs a custom_id", line=number,
                         field="custom_id")
    response = obj.get("response")
    if not isinstance(response, dict) and not isinstance(obj.get("error"), dict):
        raise InputError(str(path), "a result needs a 'response' object or an 'error'",
                         line=number, field="response")
    if isinstance(response, dict) and not isinstance(response.get("status_code"), int):
        raise InputError(str(path), "the response needs a status_code", line=number,
                         field="response.status_code")
    return obj


@dataclass(slots=True)
class Stored:
    """What storing a results file did."""

    results: int = 0
    calls: int = 0
    repeated: int = 0
    """Result lines skipped as repeats: stored before, or given twice in the file."""


def store_results(session: Session, lines: Iterable[tuple[int, bytes]],
                  path: Path | None = None) -> Stored:
    """Store each result line (the Batch API's output or error format) as calls, a few
    thousand a transaction; results already stored are skipped.

    With ``path`` (a file someone made), every line is checked as it is read: one that is not
    JSON or names no request of this session raises InputError naming it; run inside
    ``session.transaction()`` so that nothing of the file is stored then.
    """
    judges = {j.name: j for j in session.judges()}
    settings: dict[str, JudgeSettings] = {}
    done = Stored()
    group: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()  # a file may repeat a result (two engine runs concatenated)

    def flush() -> int:
        requests = session.batch_requests_of([obj["custom_id"] for _, obj in group])
        by_judge: dict[str, list[tuple[str, str | None, list[dict[str, Any]] | None]]] = {}
        count = 0
        for number, obj in group:
            request = requests.get(obj["custom_id"])
            if request is None and path is not None:
                raise InputError(str(path), f"custom_id {obj['custom_id']!r} is no request this "
                                 "session made (was the file written by 'annotator judge "
                                 "--export-requests' for this session?)", line=number,
                                 field="custom_id")
            if request is None:
                continue
            if request["state"] in ("stored", "failed"):  # its result is in already
                done.repeated += 1
                continue
            judge = request["judge"]
            if judge not in settings:
                settings[judge] = stored_settings(judges[judge])
            entry = _calls(session, settings[judge], request, obj)
            for call in entry[2] or ():
                call["batch_id"] = request["batch_id"]  # the batch (or exported file) it came in
            if request["pieces"] > 1:  # its golden's other windows must be on disk first
                count += session.store_batch_results(judge, by_judge.pop(judge, []))
                count += session.store_batch_results(judge, [entry])
                continue
            by_judge.setdefault(judge, []).append(entry)
        for judge, results in by_judge.items():
            count += session.store_batch_results(judge, results)
        group.clear()
        return count

    for number, raw in lines:
        obj = _checked(path, number, raw) if path is not None else json.loads(raw)
        done.results += 1
        if obj["custom_id"] in seen:
            done.repeated += 1
            continue
        seen.add(obj["custom_id"])
        group.append((number, obj))
        if len(group) >= STORE_EVERY:
            done.calls += flush()
    done.calls += flush()
    return done


def _result(settings: JudgeSettings, request: dict[str, Any], obj: dict[str, Any]
            ) -> CallResult | None:
    """A result line as a call; None for a request the batch never ran (expired, cancelled)."""
    response = obj.get("response")
    ranks = json.loads(request["ranks"]) if request["ranks"] else None
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        if status == 200:
            return read_result(settings, body, ranks, bool(request["logprobs"]))
        message = (body.get("error", {}).get("message") if isinstance(body, dict)
                   and isinstance(body.get("error"), dict) else str(body)[:300])
        return CallResult(error=f"HTTP {status}: {message}", cause="http",
                          status=status if isinstance(status, int) else None)
    return None


def _calls(session: Session, settings: JudgeSettings, request: dict[str, Any],
           obj: dict[str, Any]) -> tuple[str, str | None, list[dict[str, Any]] | None]:
    """(custom_id, the raw line to keep, the calls to store) for one result line: no calls
    (an empty list) while other windows of its golden are out, None for a request that never
    ran."""
    custom_id, sha, repetition = obj["custom_id"], request["request_sha256"], request["repetition"]
    ids = json.loads(request["chunk_ids"])
    result = _result(settings, request, obj)
    if result is None:  # never ran (expired, cancelled): no call; the next round asks again
        return custom_id, None, None
    if result.verdict is None:
        return custom_id, None, split_call(ids, sha, repetition, result)
    if not settings.prompt.listwise:
        return custom_id, None, [call_row(ids[0], sha, repetition, result)]
    raw = json.dumps(obj)
    pieces = session.task_requests(request["task"])
    if request["pieces"] > 1 and any(p["state"] != "answered" for p in pieces
                                     if p["custom_id"] != custom_id):
        return custom_id, raw, []  # kept until every window of the golden is in
    order: list[int] = []
    spans: list[tuple[range, CallResult]] = []
    for piece in pieces:
        line = obj if piece["custom_id"] == custom_id else json.loads(piece["result"])
        piece_ids = json.loads(piece["chunk_ids"])
        read = result if piece["custom_id"] == custom_id else _result(settings, piece, line)
        assert read is not None
        if read.verdict is None:
            return custom_id, None, split_call(ids, sha, repetition, read)
        start = order.index(piece_ids[0]) if piece_ids[0] in order else len(order)
        order.extend(i for i in piece_ids if i not in order)
        spans.append((range(start, start + len(piece_ids)), read))
    task = Task(order, "", "", [(0, "")] * len(order), repetition, sha)
    return custom_id, None, merged_calls(task, sha, spans)


def describe(rows: list[dict[str, Any]]) -> list[str]:
    """One line per batch for 'annotator batches'."""
    out = []
    for row in rows:
        where = "" if row["collected"] else ("; results not yet stored" if row["state"] in ENDED
                                             else "")
        out.append(f"{row['id']}  {row['judge']}  {row['state']}  "
                   f"{row['completed']:,} done, {row['failed']:,} failed of "
                   f"{counted(row['requests'], 'request')}{where}")
    return out
