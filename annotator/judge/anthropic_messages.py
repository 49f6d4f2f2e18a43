"""The Anthropic transport: the native Messages API and Message Batches API, through the
``anthropic`` client (the ``anthropic`` extra).

What differs from OpenAI's protocol, and how each is met:
- the system text is a top-level ``system`` field, not a message;
- a JSON reply is asked for by forcing one tool whose input schema is the reply's schema
  (``tool``), else by the prompt alone (``none``); the tool's input is read as the reply;
- replies carry no logprobs: a judge on this provider has no P(relevant);
- usage counts cache reads apart from ``input_tokens``; they are added back, as OpenAI counts;
- a batch is one JSON request holding every request (no file upload), and its results are
  lines of ``{"custom_id", "result": {"type": "succeeded" | "errored" | "canceled" |
  "expired"}}``, rewritten here into the Batch API's result lines so one reader stores both;
- a batch carries no metadata: a batch whose id was lost to a kill between its creation and
  the line that stores its id cannot be found again (its chunks are asked by the next round).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from annotator.errors import AnnotatorError, install_hint
from annotator.judge.client import Completion, elapsed_ms, said, status_error
from annotator.judge.transport import BatchState, Hook, Transport, download, http_settings
from annotator.judge.types import CallResult

_encode = json.JSONEncoder(ensure_ascii=False).encode


class AnthropicMessages(Transport):
    """Messages and Message Batches through the ``anthropic`` client."""

    provider = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    url_env = "ANTHROPIC_BASE_URL"
    default_url = "https://api.anthropic.com"
    reply_name = "a message"
    formats = ("tool", "none")
    logprobs = False
    exact_tokens = False
    batch_limits = (100_000, 256)

    @classmethod
    def open(cls, base_url: str | None, api_key: str, *, concurrency: int = 8,
             rpm: float | None = None, tpm: float | None = None, period: float = 60.0,
             extra_hooks: Sequence[Hook] = ()) -> AnthropicMessages:
        """An AsyncAnthropic client whose HTTP layer enforces the rate limits."""
        try:
            import anthropic
        except ImportError:
            raise AnnotatorError("Judging through Anthropic's API needs the anthropic client: "
                                 f"{install_hint('anthropic')}.") from None
        http = anthropic.DefaultAsyncHttpxClient(**http_settings(concurrency, rpm, tpm, period,
                                                                 extra_hooks))
        return cls(anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                            http_client=http))

    @staticmethod
    def body(model: str, messages: list[dict[str, str]], temperature: float, max_tokens: int,
             schema: dict[str, Any] | None, mode: str, logprobs: bool,
             name: str = "chunk_verdict") -> dict[str, Any]:
        """A Messages request: the system text apart, the reply's schema as a forced tool's
        input (``tool``); logprobs cannot be asked for."""
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": model, "max_tokens": max_tokens, "temperature": temperature,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages
                         if m["role"] != "system"]}
        if system:
            body["system"] = system
        if schema is not None and mode == "tool":
            body["tools"] = [{"name": name, "description": "Give your answer.",
                              "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": name}
        return body

    @staticmethod
    def completion(data: Any) -> Completion | str:
        """A Message read field by field: a forced tool's input (as JSON text) or its text."""
        if not isinstance(data, dict):
            return "the server answered with JSON that is not a message"
        blocks = data.get("content")
        if data.get("type") != "message" or not isinstance(blocks, list):
            return "the server answered with JSON that is not a message (it has no content list)"
        content: str | None = None
        texts: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                content = _encode(block["input"])
                break
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        if content is None and texts:
            content = "".join(texts)
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        counts = [usage.get(k) for k in ("input_tokens", "cache_read_input_tokens",
                                         "cache_creation_input_tokens")]
        read = [c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None
                for c in counts]
        out = usage.get("output_tokens")
        stop = data.get("stop_reason")
        return Completion(
            content, "length" if stop == "max_tokens" else stop if isinstance(stop, str) else None,
            None if read[0] is None else sum(c or 0 for c in read),
            out if isinstance(out, int) and not isinstance(out, bool) and out >= 0 else None,
            [], read[1], said(data.get("model")), None)

    @staticmethod
    def batch_line(custom_id: str, body: dict[str, Any]) -> bytes:
        """One request of a Message Batch."""
        return (_encode({"custom_id": custom_id, "params": body}) + "\n").encode()

    async def send(self, body: dict[str, Any], timeout: float) -> str | CallResult:
        """POST one Messages request; its text, or why there is none."""
        import anthropic

        start = time.perf_counter()
        try:
            # The body as built, the reply as text (see OpenAIChat.send).
            text: str = await self._sdk.post("/v1/messages", body=body, cast_to=str,
                                             options={"timeout": timeout})
            return text
        except anthropic.APITimeoutError:
            return CallResult(error=f"timed out after {timeout:g} s", cause="timeout",
                              latency_ms=elapsed_ms(start))
        except anthropic.APIConnectionError as error:
            return self.connection_error(error, elapsed_ms(start))
        except anthropic.APIStatusError as error:
            return status_error(error, elapsed_ms(start), "tools" in body, False, self.key_env)

    # -- Message Batches -------------------------------------------------------------------

    @staticmethod
    def _state(batch: Any) -> BatchState:
        counts = batch.request_counts
        ran = counts.succeeded + counts.errored
        if batch.processing_status != "ended":
            state = "cancelling" if batch.processing_status == "canceling" else "in_progress"
        elif counts.canceled and not ran:
            state = "cancelled"
        elif counts.expired and not ran:
            state = "expired"
        else:
            state = "completed"
        total = counts.processing + ran + counts.canceled + counts.expired
        return BatchState(batch.id, state, total, counts.succeeded,
                          counts.errored + counts.canceled + counts.expired,
                          output_file_id=batch.results_url)

    async def batch_create(self, path: Path, metadata: dict[str, str]) -> BatchState:
        """Send every request of the file in one batch (the API takes no file upload)."""
        with path.open("rb") as handle:
            requests = [json.loads(line) for line in handle if line.strip()]
        return self._state(await self._sdk.messages.batches.create(requests=requests))

    async def batch_retrieve(self, batch_id: str) -> BatchState:
        """Where a batch stands now."""
        return self._state(await self._sdk.messages.batches.retrieve(batch_id))

    async def batch_list(self) -> AsyncIterator[BatchState]:
        """Every batch the key can see (none carries metadata to be found by)."""
        async for batch in self._sdk.messages.batches.list(limit=100):
            yield self._state(batch)

    async def batch_cancel(self, batch_id: str) -> BatchState:
        """Cancel a batch."""
        return self._state(await self._sdk.messages.batches.cancel(batch_id))

    async def batch_results(self, batch: BatchState) -> list[Path]:
        """Its results, each line rewritten as a Batch API result line."""
        async with self._sdk.messages.batches.with_streaming_response.results(
                batch.id) as response:
            return [await download(response.iter_bytes(), as_batch_result)]


def as_batch_result(line: bytes) -> bytes:
    """A Message Batches result line as the Batch API's: a succeeded message as a 200 reply,
    an errored request as an HTTP error, a cancelled or expired one as never run."""
    try:
        obj = json.loads(line)
        custom_id, result = obj["custom_id"], obj["result"]
        kind = result["type"]
    except (ValueError, KeyError, TypeError):
        return line  # stored as it is: the reader says what is wrong with it
    if kind == "succeeded":
        out: dict[str, Any] = {"status_code": 200, "body": result.get("message")}
        return _encode({"custom_id": custom_id, "response": out}).encode()
    if kind == "errored":
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) else None
        inner = inner if isinstance(inner, dict) else {}
        status = 400 if inner.get("type") == "invalid_request_error" else 500
        message = str(inner.get("message") or inner.get("type") or "the request failed")
        return _encode({"custom_id": custom_id, "response": {
            "status_code": status, "body": {"error": {"message": message}}}}).encode()
    return _encode({"custom_id": custom_id, "error": {"code": str(kind),
                                                      "message": f"the request {kind}"}}).encode()
