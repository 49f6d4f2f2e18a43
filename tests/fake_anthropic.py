"""A server speaking Anthropic's Messages API and Message Batches API on 127.0.0.1.

The real ``anthropic`` client talks HTTP to it. ``POST /v1/messages`` answers as the API does:
a Message whose content is one ``tool_use`` block when the request forces a tool (the reply's
input), else one text block; errors in Anthropic's shape (``{"type": "error", "error": {"type",
"message"}}``) with its statuses (401, 404, 429 with retry-after, 500, 529 overloaded). Each
chunk's replies follow ``plan[chunk]`` as tests/fake_openai.py's do: ok, 429, 529, 500, 401,
404, slow, malformed, truncated, drop, html_page, flip, no_tools (a 400 refusing tool_choice).

Message Batches: ``POST /v1/messages/batches`` takes every request in its body; a batch is
``in_progress`` for ``polls_to_end`` retrievals, then ``ended``; its results (``GET
results_url``) answer each request exactly as ``/v1/messages`` would, a non-200 as an
``errored`` result; custom ids in ``expire`` come back ``expired``; a cancelled batch's
unanswered requests come back ``canceled``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_openai import ENCODING, _QuietServer, _reply_key, chunk_of, listed_chunks

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               404: "not_found_error", 429: "rate_limit_error", 500: "api_error",
               529: "overloaded_error"}


def _shim(body: dict[str, Any]) -> dict[str, Any]:
    """The request as tests/fake_openai.py's readers take it: its system text as a message
    before the others, and its forced tool's schema where they look for a response format."""
    system = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    return {"model": body.get("model"), "messages": [*system, *body.get("messages", [])],
            "response_format": body.get("tools")}


class FakeAnthropic:
    """Start with ``with FakeAnthropic() as server:``; ``server.base_url`` has no /v1 (the
    anthropic client adds it)."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.plan: dict[str, list[str]] = defaultdict(list)
        self.default = "ok"
        self.retry_after = "0.05"
        self.slow_seconds = 2.0
        self.decide: Any = None
        """An ok reply's verdict from the request (as tests/fake_openai.py's readers take it)
        and a chunk's text (default: 1 when the text says "useful")."""
        self.key: str | None = None
        """The only API key accepted (None: any)."""
        self.optimize: Any = None
        """The reply text to align's optimizer's requests (see tests/fake_openai.py)."""
        self.optimizer_requests: list[dict[str, Any]] = []
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        """Every /v1/messages body with its headers, in the order they came."""
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_requests: dict[str, list[dict[str, Any]]] = {}
        self.polls_to_end = 1
        self.expire: set[str] = set()
        self.hits: list[str] = []
        """Method and path of every HTTP request."""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def behaviour(self, chunk: str) -> str:
        with self._lock:
            steps = self.plan.get(chunk)
            return steps.pop(0) if steps else self.default

    # -- one Messages request ------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON payload or raw bytes, headers) of one Messages request."""
        system = str(body.get("system", ""))
        if self.optimize is not None and system.startswith(
                ("You improve the prompt of an LLM judge", "You tune the prompt of an LLM judge")):
            with self._lock:
                self.optimizer_requests.append(body)
            return 200, self.message(body, self.optimize(body), "end_turn"), {}
        shim = _shim(body)
        chunk = chunk_of(shim)
        behaviour = self.behaviour(chunk)
        if self.latency:
            time.sleep(self.latency)
        if behaviour in ("429", "529", "500", "401", "404"):
            status = int(behaviour)
            message = {401: "invalid x-api-key", 404: f"model: {body.get('model')}",
                       429: "Number of request tokens has exceeded your rate limit",
                       500: "Internal server error", 529: "Overloaded"}[status]
            headers = {"retry-after": self.retry_after} if status == 429 else {}
            return status, _error(status, message), headers
        if behaviour == "no_tools" and "tools" in body:
            return 400, _error(400, "tool_choice: forcing a tool is not supported"), {}
        if behaviour == "html_page":
            return 200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", {}
        if behaviour == "slow":
            time.sleep(self.slow_seconds)
        key, scale = _reply_key(shim)
        listed = listed_chunks(shim)
        flip = behaviour == "flip"
        if listed is not None:
            reply: dict[str, Any] = {"verdicts": [
                {"rank": rank, "reason": f"Checked: {text[:30]}",
                 key: (self.verdict_of(shim, text) ^ flip) * (scale if key == "grade" else 1)}
                for rank, text in listed]}
        else:
            verdict = self.verdict_of(shim, chunk) ^ flip
            reply = {"reason": f"Checked: {chunk[:30]}",
                     key: verdict * scale if key == "grade" else verdict}
        stop = "tool_use" if "tools" in body else "end_turn"
        if behaviour == "malformed":
            reply = {"reason": "oops"}
        if behaviour == "truncated":
            return 200, self.message(body, '{"reason": "Chec', "max_tokens"), {}
        if "tools" in body and behaviour != "malformed_text":
            return 200, self.message(body, None, stop, reply), {}
        return 200, self.message(body, json.dumps(reply), stop), {}

    def verdict_of(self, shim: dict[str, Any], text: str) -> int:
        """The verdict a healthy reply gives a chunk (see ``decide``)."""
        return self.decide(shim, text) if self.decide is not None else int("useful" in text)

    def message(self, body: dict[str, Any], text: str | None, stop: str,
                tool_input: dict[str, Any] | None = None) -> dict[str, Any]:
        """A Message: a tool_use block holding ``tool_input``, or a text block."""
        if tool_input is not None:
            name = body["tools"][0]["name"]
            content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_test",
                                              "name": name, "input": tool_input}]
            out = json.dumps(tool_input)
        else:
            content = [{"type": "text", "text": text or ""}]
            out = text or ""
        prompt = str(body.get("system", "")) + "".join(
            str(m.get("content", "")) for m in body.get("messages", []))
        return {"id": "msg_test", "type": "message", "role": "assistant",
                "model": body.get("model"), "content": content, "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": len(ENCODING.encode(prompt)),
                          "output_tokens": len(ENCODING.encode(out)),
                          "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}

    # -- Message Batches -----------------------------------------------------------------

    def _batch(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        requests = self.batch_requests[batch_id]
        ended = batch["processing_status"] == "ended"
        counts = {"processing": 0 if ended else len(requests), "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}
        if ended:
            for result in batch["results"]:
                counts[result["result"]["type"]] += 1
        return {**{k: v for k, v in batch.items() if k != "results"},
                "request_counts": counts,
                "results_url": f"{self.base_url}/v1/messages/batches/{batch_id}/results"
                if ended else None}

    def _end(self, batch_id: str, cancelled: bool = False) -> None:
        batch = self.batches[batch_id]
        results = []
        for request in self.batch_requests[batch_id]:
            custom_id = request["custom_id"]
            if cancelled:
                results.append({"custom_id": custom_id, "result": {"type": "canceled"}})
                continue
            if custom_id in self.expire:
                results.append({"custom_id": custom_id, "result": {"type": "expired"}})
                continue
            status, payload, _ = self.answer(request["params"])
            if status == 200 and isinstance(payload, dict):
                results.append({"custom_id": custom_id,
                                "result": {"type": "succeeded", "message": payload}})
            else:
                error = payload if isinstance(payload, dict) else _error(500, "bad reply")
                results.append({"custom_id": custom_id,
                                "result": {"type": "errored", "error": error}})
        batch["results"] = results
        batch["processing_status"] = "ended"
        batch["ended_at"] = "2026-12-07T00:00:00Z"

    def route(self, method: str, path: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        """Answer one batches request."""
        parts = path.split("?")[0].rstrip("/").split("/")[3:]  # after /v1/messages
        if method == "POST" and parts == ["batches"]:
            requests = json.loads(raw)["requests"]
            batch_id = f"msgbatch_{next(self._ids):04d}"
            with self._lock:
                self.batches[batch_id] = {
                    "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                    "created_at": "2026-12-07T00:00:00Z", "expires_at": "2026-12-08T00:00:00Z",
                    "ended_at": None, "archived_at": None, "cancel_initiated_at": None,
                    "polls": 0, "results": []}
                self.batch_requests[batch_id] = requests
            return 200, self._batch(batch_id), {}
        if method == "GET" and parts == ["batches"]:
            data = [self._batch(b) for b in reversed(self.batches)]
            return 200, {"data": data, "has_more": False,
                         "first_id": data[0]["id"] if data else None,
                         "last_id": data[-1]["id"] if data else None}, {}
        if len(parts) >= 2 and parts[0] == "batches" and parts[1] in self.batches:
            batch_id = parts[1]
            batch = self.batches[batch_id]
            if method == "GET" and len(parts) == 2:
                if batch["processing_status"] == "in_progress":
                    batch["polls"] += 1
                    if batch["polls"] >= self.polls_to_end:
                        self._end(batch_id)
                return 200, self._batch(batch_id), {}
            if method == "POST" and parts[2:] == ["cancel"]:
                if batch["processing_status"] == "in_progress":
                    self._end(batch_id, cancelled=True)
                return 200, self._batch(batch_id), {}
            if method == "GET" and parts[2:] == ["results"]:
                lines = "".join(json.dumps(r) + "\n" for r in batch["results"])
                return 200, lines.encode(), {"content-type": "application/binary"}
        return 404, _error(404, f"no route {method} {path}"), {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._serve("GET", b"")

            def do_POST(self) -> None:
                self._serve("POST", self.rfile.read(int(self.headers.get("content-length", 0))))

            def _serve(self, method: str, raw: bytes) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.hits.append(f"{method} {self.path}")
                # The key as x-api-key, or (as the anthropic client sends it since 2.x) a bearer.
                sent = headers.get("x-api-key") or headers.get("authorization", "").removeprefix(
                    "Bearer ")
                if server.key is not None and sent != server.key:
                    return self._send(401, _error(401, "invalid x-api-key"), {})
                if self.path.startswith("/v1/messages/batches"):
                    return self._send(*server.route(method, self.path, raw))
                if method != "POST" or self.path.split("?")[0] != "/v1/messages":
                    return self._send(404, _error(404, f"no route {method} {self.path}"), {})
                body = json.loads(raw)
                with server._lock:
                    server.requests.append((body, headers))
                chunk = chunk_of(_shim(body))
                if server.plan.get(chunk) and server.plan[chunk][0] == "drop":
                    server.behaviour(chunk)
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                return self._send(*server.answer(body))

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                kind = headers.pop("content-type", "text/html" if isinstance(payload, bytes)
                                   else "application/json")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _error(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                       "message": message}}
