"""The Batch API of the test server, as OpenAI documents it: files and batches.

``POST /v1/files`` (multipart, purpose "batch"), ``GET /v1/files/{id}`` and
``/v1/files/{id}/content``; ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches``,
``POST /v1/batches/{id}/cancel``. A batch moves one state further each time it is retrieved
(``validating``, ``in_progress``, ``finalizing``, then ``completed``, or ``failed``,
``expired``, ``cancelled`` as the test asks); each request of it is answered exactly as the
chat endpoint answers it (the same plans and faults), successes into the output file and
non-200 answers into the error file.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Capture:
    """Stands in for the HTTP handler when a batch's request is answered: keeps the reply."""

    headers: dict[str, str] = field(default_factory=dict)
    status: int = 0
    data: bytes = b""
    close_connection: bool = False

    class _Connection:
        def shutdown(self, how: int) -> None:
            pass

    connection: Any = field(default_factory=_Connection)

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, data: bytes, kind: str,
                  headers: dict[str, str] | None = None) -> None:
        self.status, self.data = status, data


@dataclass
class Batch:
    """One batch: its requests, the state it is in, and its files once it ended."""

    id: str
    input_file_id: str
    metadata: dict[str, Any]
    created_at: int
    lines: list[dict[str, Any]]
    status: str = "validating"
    polls: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    errors: Any = None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "batch", "endpoint": "/v1/chat/completions",
                "errors": self.errors, "input_file_id": self.input_file_id,
                "completion_window": "24h", "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": self.created_at, "in_progress_at": None, "expires_at": None,
                "finalizing_at": None, "completed_at": None, "failed_at": None,
                "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": len(self.lines), "completed": self.completed,
                                   "failed": self.failed},
                "metadata": self.metadata}


class BatchAPI:
    """The files and batches of one test server (see the module's docstring)."""

    def __init__(self, answer: Any) -> None:
        self._answer = answer
        """Answers one chat completion body into a Capture (the chat endpoint's own code)."""
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, Batch] = {}
        self.end = "completed"
        """How every batch ends: completed, failed, expired (half done) or cancelled."""
        self.polls_per_state = 1
        """Retrieves a batch stays in each state before the next."""
        self.max_requests: int | None = None
        """A batch with more requests than this fails validation (the provider's limit)."""
        self.answered: list[str] = []
        """custom_id of every request a batch answered, in order (a request sent twice shows)."""
        self.absent = False
        """No Files or Batch API at all, as on most local servers: every such route is a 404."""
        self._ids = itertools.count(1)
        self._lock = threading.RLock()  # a batch finishing stores its files under it

    # -- routes ---------------------------------------------------------------------------

    def post(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        """(status, JSON) for a POST under /v1 other than chat completions."""
        if self.absent:
            return 404, {"error": {"code": 404, "message": "File Not Found", "type":
                                   "not_found_error"}}
        if path == "/v1/files":
            return self._upload(headers.get("content-type", ""), raw)
        if path == "/v1/batches":
            return self._create(json.loads(raw))
        if path.startswith("/v1/batches/") and path.endswith("/cancel"):
            batch = self.batches.get(path.split("/")[3])
            if batch is None:
                return 404, {"error": {"message": "No such batch"}}
            with self._lock:
                if batch.status in ("validating", "in_progress", "finalizing"):
                    batch.status = "cancelling"
            return 200, batch.as_json()
        return 404, {"error": {"message": f"Unknown path {path}"}}

    def get(self, path: str) -> tuple[int, Any, str]:
        """(status, body, content type) for a GET under /v1."""
        parts = path.split("?")[0].strip("/").split("/")
        if parts[:2] == ["v1", "files"] and len(parts) >= 3:
            found = self.files.get(parts[2])
            if found is None:
                return 404, {"error": {"message": "No such file"}}, "application/json"
            if len(parts) == 4 and parts[3] == "content":
                return 200, found[1], "application/octet-stream"
            return 200, self._file_json(parts[2]), "application/json"
        if parts[:2] == ["v1", "batches"]:
            if len(parts) == 2:
                data = [b.as_json() for b in reversed(list(self.batches.values()))]
                return 200, {"object": "list", "data": data, "has_more": False,
                             "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None}, "application/json"
            batch = self.batches.get(parts[2])
            if batch is None:
                return 404, {"error": {"message": "No such batch"}}, "application/json"
            self._advance(batch)
            return 200, batch.as_json(), "application/json"
        return 404, {"error": {"message": f"Unknown path {path}"}}, "application/json"

    # -- files and batches ----------------------------------------------------------------

    def _file_json(self, file_id: str) -> dict[str, Any]:
        name, data = self.files[file_id]
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                "filename": name, "purpose": "batch", "status": "processed"}

    def _store(self, name: str, data: bytes) -> str:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = (name, data)
        return file_id

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            fields[str(name)] = (part.get_filename(),
                                 payload if isinstance(payload, bytes) else b"")
        if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
            return 400, {"error": {"message": "a batch file needs purpose=batch and a file"}}
        return 200, self._file_json(self._store(fields["file"][0] or "upload.jsonl",
                                                fields["file"][1]))

    def _create(self, request: dict[str, Any]) -> tuple[int, Any]:
        found = self.files.get(request.get("input_file_id", ""))
        if found is None:
            return 400, {"error": {"message": "input_file_id is not a file"}}
        if request.get("endpoint") != "/v1/chat/completions":
            return 400, {"error": {"message": "endpoint must be /v1/chat/completions"}}
        lines = [json.loads(line) for line in found[1].splitlines() if line.strip()]
        with self._lock:
            batch = Batch(f"batch_{next(self._ids)}", request["input_file_id"],
                          request.get("metadata") or {}, int(time.time()), lines)
            self.batches[batch.id] = batch
        return 200, batch.as_json()

    def _advance(self, batch: Batch) -> None:
        """One retrieve: the batch moves on once it stayed polls_per_state in its state."""
        with self._lock:
            batch.polls += 1
            if batch.polls < self.polls_per_state:
                return
            batch.polls = 0
            if batch.status == "validating":
                if self.max_requests is not None and len(batch.lines) > self.max_requests:
                    batch.status = "failed"
                    batch.errors = {"object": "list", "data": [{
                        "code": "too_many_requests", "line": None,
                        "message": f"A batch may hold {self.max_requests} requests."}]}
                elif self.end == "failed":
                    batch.status = "failed"
                    batch.errors = {"object": "list", "data": [
                        {"code": "invalid_request", "line": 1, "message": "bad line"}]}
                else:
                    batch.status = "in_progress"
            elif batch.status == "in_progress":
                batch.completed = len(batch.lines) // 2
                batch.status = "finalizing"
            elif batch.status == "finalizing":
                ending = "expired" if self.end == "expired" else (
                    "cancelled" if self.end == "cancelled" else "completed")
                self._finish(batch, len(batch.lines) // 2 if ending != "completed"
                             else len(batch.lines), ending)
            elif batch.status == "cancelling":
                self._finish(batch, len(batch.lines) // 2, "cancelled")

    def _finish(self, batch: Batch, answered: int, status: str) -> None:
        """Answer the first ``answered`` requests; the rest expire or are cancelled."""
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for n, line in enumerate(batch.lines):
            entry: dict[str, Any] = {"id": f"batch_req_{batch.id}_{n}",
                                     "custom_id": line["custom_id"], "error": None}
            if n >= answered:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append({**entry, "response": None, "error": {
                    "code": code, "message": "This request could not be executed before the "
                                             "batch ended."}})
                continue
            self.answered.append(line["custom_id"])
            capture = Capture()
            self._answer(capture, line["body"])
            body: Any = capture.data.decode() if capture.data else ""
            with contextlib.suppress(ValueError):
                body = json.loads(body)
            entry["response"] = {"status_code": capture.status or 500,
                                 "request_id": f"req_{n}", "body": body}
            (out if capture.status == 200 else errors).append(entry)
        batch.completed, batch.failed = len(out), len(errors)
        if out:
            batch.output_file_id = self._store(f"{batch.id}_output.jsonl", _lines(out))
        if errors:
            batch.error_file_id = self._store(f"{batch.id}_errors.jsonl", _lines(errors))
        batch.status = status


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)
