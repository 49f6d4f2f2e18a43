"""An OpenAI-compatible chat-completions server on 127.0.0.1, scriptable per request.

The real openai client talks HTTP to it. Each chunk's replies follow ``plan[chunk]`` (a list
of behaviours consumed one per request, then "ok"): ok, 429, 503, 500, slow, malformed,
verdict2, truncated, drop, no_json_schema, no_logprobs, echo_key, flip, 401, 404 (``default``
is what a chunk without a plan gets). An ok reply's verdict is 1
when the chunk text contains "useful", else 0; flip replies with the other verdict.
"""

from __future__ import annotations

import json
import math
import random
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_batches import BatchAPI

RAGAS_CONTEXT = re.compile(r'"context": "((?:[^"\\]|\\.)*)"')


def listed_chunks(body: dict[str, Any]) -> list[tuple[int, str]] | None:
    """(rank, text) of each chunk a listwise request asks about (the builtin listwise fields,
    or a prompt file's "[rank] text" blocks), or None for a request about one chunk."""
    user = next((m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), "")
    fields, _, question = user.partition("\n\nFor each of the")
    if question:
        try:
            return [(int(c["rank"]), str(c["text"])) for c in json.loads(fields)["chunks"]]
        except (ValueError, KeyError, TypeError):
            return None
    blocks = re.findall(r"^\[(\d+)\] (.*)$", user, re.MULTILINE)
    if blocks and "verdicts" in json.dumps(body.get("response_format") or {}) + user:
        return [(int(rank), text) for rank, text in blocks]
    return None


def question_of(body: dict[str, Any]) -> str:
    """The question a builtin pointwise or listwise request asks about ('' for others)."""
    user = next((m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), "")
    try:
        return str(json.loads(user.partition("\n\n")[0])["question"])
    except (ValueError, KeyError, TypeError):
        return ""


def chunk_of(body: dict[str, Any]) -> str:
    """The chunk text a request asks about (builtin or RAGAS prompt; a listwise request: its
    first chunk's)."""
    listed = listed_chunks(body)
    if listed:
        return listed[0][1]
    user = next((m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), "")
    fields, _, question = user.partition("\n\nWas this chunk")
    if question:  # the builtin prompt: its fields as one JSON object (after the system text,
        fields = fields.rsplit("\n\n", 1)[-1]  # when --system-as-user put it first)
        try:
            return str(json.loads(fields)["chunk"])
        except (ValueError, KeyError):  # the release before, benchmarked beside this one
            return fields.rpartition("Chunk:\n")[2]
    matches = RAGAS_CONTEXT.findall(user)
    if matches:
        return str(json.loads(f'"{matches[-1]}"'))
    chunk = re.search(r"^Chunk: (.*)$", user, re.MULTILINE)  # the tests' own prompt files
    return chunk.group(1) if chunk else user


def is_optimizer(body: dict[str, Any]) -> bool:
    """Whether a request is annotator align's optimizer's: by its response format's name, or
    (in a format that names none) by the task its first message opens with."""
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    first = str((body.get("messages") or [{}])[0].get("content", ""))
    return name in ("prompt_revision", "instruction_edit") or first.startswith(
        ("You improve the prompt of an LLM judge", "You tune the prompt of an LLM judge"))


def format_mode(body: dict[str, Any]) -> str:
    """The request's response format, by client.RESPONSE_FORMATS name."""
    fmt = body.get("response_format")
    if fmt is None:
        return "none"
    return "json_object_schema" if fmt["type"] == "json_object" and "schema" in fmt else fmt["type"]


def _encoder() -> Any:
    import warnings

    with warnings.catch_warnings():  # its data loader uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # type: ignore[import-untyped]

        return bpe_openai.get_encoding("o200k_base")


ENCODING = _encoder()


def count_prompt(messages: list[dict[str, Any]]) -> int:
    """Prompt tokens as OpenAI counts a chat request (o200k_base: 3 a message, plus its role
    and content, plus 3 priming the reply)."""
    return 3 + sum(3 + len(ENCODING.encode(m["role"])) + len(ENCODING.encode(m["content"] or ""))
                   for m in messages)


BROKEN_BODIES: dict[str, tuple[bytes, str]] = {
    "text_body": (b"Sure! Here is the verdict: useful.", "text/plain"),
    "html_page": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "empty_body": (b"", "application/json"),
    "json_list": (b"[]", "application/json"),
    "json_garbage": (b'{"choices": [{"message": ', "application/json"),
}
"""200 replies whose body is not a chat completion at all, by behaviour name."""


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(reply: dict[str, Any]) -> None:
        target: Any = reply
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


BROKEN_REPLIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "null_message": _set(("choices", 0, "message"), None),
    "null_content": _set(("choices", 0, "message", "content"), None),
    "string_tokens": _set(("usage",), {"prompt_tokens": "12", "completion_tokens": "lots"}),
    "no_choices": _set(("choices",), []),
    "choices_null": _set(("choices",), None),
    "choice_not_object": _set(("choices",), ["useful"]),
}
"""200 chat completions broken in one place, by behaviour name."""


def _reply_key(body: dict[str, Any]) -> tuple[str, int]:
    """("verdict", 1), or ("grade", top grade) when the request's schema asks for a grade."""
    text = json.dumps(body.get("response_format") or {})
    found = re.search(r'"grade": \{"type": "integer", "enum": \[([\d, ]+)\]', text)
    if found:
        return "grade", max(int(g) for g in found.group(1).split(","))
    return "verdict", 1


class _QuietServer(ThreadingHTTPServer):
    """A server that says nothing when a client hangs up first (a timeout, on purpose)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as server:``; ``server.base_url`` is the /v1 URL."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.cold = 0.0
        """Extra seconds the first chat request takes: a local server loading its model, or
        filling a cache that every later request finds warm."""
        self._warm = False
        self.default = "ok"
        """The behaviour of every request beyond its chunk's plan (e.g. "404" for a wrong model)."""
        self.slow_seconds = 2.0
        self.retry_after = "0.05"
        self.confidence = 0.9
        self.plan: dict[str, list[str]] = defaultdict(list)
        self.formats: set[str] | None = None
        """The response formats it accepts (client.RESPONSE_FORMATS names); None: every one.
        Others get llama-cpp-python's HTTP 500 validation error."""
        self.logprobs_refusal: int | None = None
        """The status answering any request that asks for logprobs (llama-cpp-python: 500)."""
        self.fenced = False
        """The logprobs' tokens wrap the content in a ```json fence that the content lacks
        (llama-server strips it from the content only)."""
        self.serial = False
        """Serve one request at a time, as a small local server does."""
        self.decide: Callable[[dict[str, Any], str], int] | None = None
        """An ok reply's verdict from the request and a chunk's text (default: 1 when the
        text says "useful"), as a judge with its own failure mode would decide."""
        self.optimize: Callable[[dict[str, Any]], str] | None = None
        """The content of the reply to an optimizer's request (``annotator align``: one whose
        response format is named prompt_revision or instruction_edit); None: such a request is
        answered as a judge's."""
        self.optimizer_requests: list[dict[str, Any]] = []
        """Every optimizer request's body, in the order they came."""
        self.rewrite: Callable[[dict[str, Any], int], None] | None = None
        """Edits every 200 reply in place (given the reply and its verdict) before it is sent."""
        self.chaos: dict[str, float] | None = None
        """Behaviour -> probability, drawn for every request beyond its chunk's plan (the rest
        "ok"), from a seeded generator: a reproducible mix of faults."""
        self._chaos_rng = random.Random(0)
        self.serving: Callable[[int], tuple[str | None, str | None]] | None = None
        """What the replies say served them, given how many chat requests came so far: (the
        model, or None for the one asked for; the system_fingerprint, or None for none)."""
        self.prefix_cache = False
        """Report cached prompt tokens (usage.prompt_tokens_details) as a prefix cache would."""
        self._prefixes: set[str] = set()
        self.served: list[tuple[str, str]] = []
        """(chunk, behaviour) of every request, in the order they came."""
        self._serial_lock = threading.Lock()
        self.requests: list[tuple[float, dict[str, Any], dict[str, str]]] = []
        self.spans: list[tuple[float, float]] = []
        """(arrived, answered) of every chat request, in the order they were answered."""
        self.hits = 0
        """Every HTTP request received, on any path (chat, files, batches)."""
        self.hold_after: int | None = None
        """Chat requests beyond this many wait for ``release`` before they are answered: a test
        can stop a client in the middle of its work however slow the machine is."""
        self.release = threading.Event()
        self._lock = threading.Lock()
        ThreadingHTTPServer.request_queue_size = 1024  # many clients connect at once
        handler = self._handler()
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self.batch = BatchAPI(handler._answer)  # type: ignore[attr-defined]
        """Files and batches (tests/fake_batches.py), answered as the chat endpoint answers."""
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def let_go(self) -> None:
        """Answer the held requests and hold no more."""
        self.hold_after = None
        self.release.set()

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def next_behaviour(self, chunk: str) -> str:
        with self._lock:
            steps = self.plan.get(chunk)
            if steps:
                behaviour = steps.pop(0)
            elif self.chaos is not None:
                behaviour = self._chaos_rng.choices([*self.chaos, "ok"], weights=[
                    *self.chaos.values(), max(0.0, 1 - sum(self.chaos.values()))])[0]
            else:
                behaviour = self.default
            self.served.append((chunk, behaviour))
            return behaviour

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, each reply would stall on
            # the client's delayed ACK (~40 ms), which is no part of what we measure.
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.hits += 1
                status, payload, kind = server.batch.get(self.path)
                if isinstance(payload, bytes):
                    return self._send_raw(status, payload, kind)
                return self._send(status, payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                with server._lock:
                    server.hits += 1
                if not self.path.endswith("/chat/completions"):
                    status, payload = server.batch.post(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                    return self._send(status, payload)
                body = json.loads(raw)
                with server._lock:
                    server.requests.append((time.monotonic(), body,
                                            {k.lower(): v for k, v in self.headers.items()}))
                    held = server.hold_after is not None and len(server.requests) > server.hold_after
                if held:
                    server.release.wait()
                arrived = time.monotonic()
                try:
                    if server.serial:
                        with server._serial_lock:
                            return self._answer(body)
                    return self._answer(body)
                finally:
                    with server._lock:
                        server.spans.append((arrived, time.monotonic()))

            def _answer(self, body: dict[str, Any]) -> None:
                if server.optimize is not None and is_optimizer(body):
                    with server._lock:
                        server.optimizer_requests.append(body)
                    if server.formats is not None and format_mode(body) not in server.formats:
                        return self._refuse_format()
                    content = server.optimize(body)
                    return self._send(200, server.completion(body, content, "stop"))
                chunk = chunk_of(body)
                behaviour = server.next_behaviour(chunk)
                if server.latency:
                    time.sleep(server.latency)
                if server.cold and not server._warm:
                    server._warm = True
                    time.sleep(server.cold)
                if server.formats is not None and format_mode(body) not in server.formats:
                    return self._refuse_format()
                if server.logprobs_refusal and body.get("logprobs"):
                    return self._send(server.logprobs_refusal, {"error": {
                        "message": "logprobs is not supported for models created with "
                                   "logits_all=False", "type": "internal_server_error"}})
                if behaviour == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if behaviour in ("429", "503"):
                    return self._send(int(behaviour), {"error": {"message": "slow down"}},
                                      {"Retry-After": server.retry_after})
                if behaviour == "401":
                    return self._send(401, {"error": {"message": "Incorrect API key provided",
                                                      "code": "invalid_api_key"}})
                if behaviour == "404":
                    return self._send(404, {"error": {
                        "message": f"The model `{body['model']}` does not exist",
                        "code": "model_not_found"}})
                if behaviour == "500":
                    return self._send(500, {"error": {"message": "internal error"}})
                if behaviour == "echo_key":  # a careless server repeating the credentials
                    auth = self.headers.get("authorization", "")
                    return self._send(500, {"error": {"message": f"bad auth {auth}"}})
                if behaviour == "no_json_schema" and body.get("response_format", {}).get(
                        "type") == "json_schema":
                    return self._send(400, {"error": {"message": "response_format json_schema "
                                                                 "is not supported"}})
                if behaviour == "no_logprobs" and body.get("logprobs"):
                    return self._send(400, {"error": {"message": "logprobs are not supported "
                                                                 "for this model"}})
                if behaviour in BROKEN_BODIES:
                    data, kind = BROKEN_BODIES[behaviour]
                    return self._send_raw(200, data, kind)
                if behaviour == "slow":
                    time.sleep(server.slow_seconds)
                verdict = server.verdict_of(body, chunk) ^ (behaviour == "flip")
                key, scale = _reply_key(body)
                score = verdict * scale if key == "grade" else verdict
                content = json.dumps({"reason": f"Checked: {chunk[:30]}", key: score})
                finish = "stop"
                listed = listed_chunks(body)
                if listed is not None:
                    content = server.listwise_reply(body, listed, behaviour, key, scale)
                if behaviour == "malformed":
                    content = '{"reason": "oops", verdict: 1'
                elif behaviour == "verdict2":
                    content = json.dumps({"reason": "very useful", "verdict": 2})
                elif behaviour == "truncated":
                    content, finish = content[:12], "length"
                reply = server.completion(body, content, finish)
                if behaviour in BROKEN_REPLIES:
                    BROKEN_REPLIES[behaviour](reply)
                if server.rewrite is not None:
                    server.rewrite(reply, verdict)
                self._send(200, reply)

            def _refuse_format(self) -> None:
                """llama-cpp-python's answer to a response format it does not take."""
                return self._send(500, {"error": {
                    "message": "1 validation error: type: Input should be 'text' or "
                               "'json_object'", "type": "internal_server_error"}})

            def _send(self, status: int, payload: Any,
                      headers: dict[str, str] | None = None) -> None:
                self._send_raw(status, json.dumps(payload).encode(), "application/json",
                               headers)

            def _send_raw(self, status: int, data: bytes, kind: str,
                          headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def verdict_of(self, body: dict[str, Any], text: str) -> int:
        """The verdict a healthy reply gives a chunk (see ``decide``)."""
        return self.decide(body, text) if self.decide is not None else int("useful" in text)

    def listwise_reply(self, body: dict[str, Any], listed: list[tuple[int, str]], behaviour: str,
                       key: str,
                       scale: int) -> str:
        """One verdict per chunk ("short_list": one missing; "repeat_rank": the first rank
        twice; "flip": every verdict the other way)."""
        items = []
        for rank, text in listed:
            verdict = self.verdict_of(body, text) ^ (behaviour == "flip")
            items.append({"rank": rank, "reason": f"Checked: {text[:30]}",
                          key: verdict * scale if key == "grade" else verdict})
        if behaviour == "short_list":
            items = items[:-1]
        elif behaviour == "repeat_rank" and len(items) > 1:
            items[1]["rank"] = items[0]["rank"]
        return json.dumps({"verdicts": items})

    def completion(self, body: dict[str, Any], content: str, finish: str) -> dict[str, Any]:
        """A chat.completion object, with logprobs on the verdict token when asked."""
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish,
                                  "message": {"role": "assistant", "content": content}}
        if body.get("logprobs"):
            _, scale = _reply_key(body)
            tokens: list[dict[str, Any]] = []
            for piece in re.findall(r"\d|[^\d]+", content):
                entry: dict[str, Any] = {"token": piece, "logprob": -0.01, "bytes": None,
                                         "top_logprobs": []}
                after_key = bool(tokens) and tokens[-1]["token"].endswith(
                    ('"verdict": ', '"grade": '))
                if len(piece) == 1 and piece.isdigit() and after_key:
                    # The verdict (or grade) token: confident in what it says, the rest on the
                    # other side of the line.
                    useful = int(piece) > 0
                    p = self.confidence if useful else 1 - self.confidence
                    high = piece if useful else str(scale)
                    entry["top_logprobs"] = [
                        {"token": high, "logprob": math.log(p), "bytes": None},
                        {"token": "0", "logprob": math.log(1 - p), "bytes": None}]
                tokens.append(entry)
            if self.fenced:
                tokens = [{"token": "```json\n", "logprob": -0.01, "bytes": None,
                           "top_logprobs": []}, *tokens,
                          {"token": "\n```", "logprob": -0.01, "bytes": None, "top_logprobs": []}]
            choice["logprobs"] = {"content": tokens, "refusal": None}
        words = count_prompt(body["messages"])
        usage: dict[str, Any] = {"prompt_tokens": words,
                                 "completion_tokens": len(ENCODING.encode(content)),
                                 "total_tokens": words + len(ENCODING.encode(content))}
        if self.prefix_cache:
            # A provider's prefix cache: everything before the last message is served from
            # the cache once a request with the same prefix has been seen.
            prefix = json.dumps(body["messages"][:-1])
            with self._lock:
                seen = prefix in self._prefixes
                self._prefixes.add(prefix)
            usage["prompt_tokens_details"] = {
                "cached_tokens": count_prompt(body["messages"][:-1]) - 3 if seen else 0}
        reply: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion",
                                 "created": 0, "model": body["model"], "choices": [choice],
                                 "usage": usage}
        if self.serving is not None:
            with self._lock:
                answered = len(self.requests)
            model, fingerprint = self.serving(answered)
            reply["model"] = model or body["model"]
            if fingerprint is not None:
                reply["system_fingerprint"] = fingerprint
        return reply


if __name__ == "__main__":
    # Serve in a process of its own (for benchmarks): print the base URL, then serve until killed.
    import sys

    with FakeOpenAI(latency=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0) as served:
        print(served.base_url, flush=True)
        threading.Event().wait()
