"""The OpenAI transport: Chat Completions and the Batch API, for OpenAI and every server that
speaks its protocol (vLLM, llama.cpp, Ollama, LiteLLM, ...).

The reply's reading and the request's response formats are client.py's (this protocol is the
one the rest of the tool was written against); here is what needs the SDK.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, cast

import openai
from openai import AsyncOpenAI

from annotator.judge.client import (
    RESPONSE_FORMATS,
    completion_of,
    elapsed_ms,
    meter_request,
    meter_response,
    response_format,
    status_error,
)
from annotator.judge.transport import BatchState, Hook, Transport, download, http_settings
from annotator.judge.types import CallResult

_encode = json.JSONEncoder(ensure_ascii=False).encode


class OpenAIChat(Transport):
    """Chat Completions through the ``openai`` client."""

    provider = "openai"
    key_env = "OPENAI_API_KEY"
    url_env = "OPENAI_BASE_URL"
    default_url = "https://api.openai.com/v1"
    reply_name = "a chat completion"
    formats = RESPONSE_FORMATS
    logprobs = True
    exact_tokens = True
    batch_limits = (50_000, 200)
    batch_endpoint = "/v1/chat/completions"

    @classmethod
    def open(cls, base_url: str | None, api_key: str, *, concurrency: int = 8,
             rpm: float | None = None, tpm: float | None = None, period: float = 60.0,
             extra_hooks: Sequence[Hook] = ()) -> OpenAIChat:
        """An AsyncOpenAI client whose HTTP layer enforces the rate limits and meters calls."""
        http = openai.DefaultAsyncHttpx2Client(**http_settings(
            concurrency, rpm, tpm, period, [*extra_hooks, meter_request], [meter_response]))
        return cls(AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0,
                               http_client=http))

    @property
    def client(self) -> AsyncOpenAI:
        """The AsyncOpenAI client (RAGAS's own LLM wrapper sends through it)."""
        return cast(AsyncOpenAI, self._sdk)  # the SDK client open() made

    @staticmethod
    def body(model: str, messages: list[dict[str, str]], temperature: float, max_tokens: int,
             schema: dict[str, Any] | None, mode: str, logprobs: bool,
             name: str = "chunk_verdict") -> dict[str, Any]:
        """A chat completion request, its response format and logprobs as asked."""
        body: dict[str, Any] = {"model": model, "messages": messages,
                                "temperature": temperature, "max_tokens": max_tokens}
        if (fmt := response_format(mode, schema, name)) is not None:
            body["response_format"] = fmt
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 5
        return body

    completion = staticmethod(completion_of)

    @staticmethod
    def batch_line(custom_id: str, body: dict[str, Any]) -> bytes:
        """A Batch API input line."""
        return (_encode({"custom_id": custom_id, "method": "POST",
                         "url": OpenAIChat.batch_endpoint, "body": body}) + "\n").encode()

    async def send(self, body: dict[str, Any], timeout: float) -> str | CallResult:
        """POST one chat completion; its text, or why there is none."""
        start = time.perf_counter()
        try:
            # The client's own POST with the body as built: chat.completions.create would walk
            # the messages and the schema through its TypedDict transforms on every call, which
            # was most of the client's CPU per call (benchmarks/judge.py). The body as text,
            # read by the caller: a server may answer 200 with anything (an HTML page, an empty
            # body, JSON of another shape).
            return await self.client.post("/chat/completions", body=body, cast_to=str,
                                        options={"timeout": timeout})
        except openai.APITimeoutError:
            return CallResult(error=f"timed out after {timeout:g} s", cause="timeout",
                              latency_ms=elapsed_ms(start))
        except openai.APIConnectionError as error:
            return self.connection_error(error, elapsed_ms(start))
        except openai.APIStatusError as error:
            return status_error(error, elapsed_ms(start), "response_format" in body,
                                bool(body.get("logprobs")), self.key_env)

    # -- the Batch API ---------------------------------------------------------------------

    @staticmethod
    def _state(batch: Any) -> BatchState:
        counts = batch.request_counts
        return BatchState(batch.id, batch.status, counts.total if counts else 0,
                          counts.completed if counts else 0, counts.failed if counts else 0,
                          batch.input_file_id, batch.output_file_id, batch.error_file_id,
                          dict(batch.metadata or {}))

    async def batch_create(self, path: Path, metadata: dict[str, str]) -> BatchState:
        """Upload the file, then create its batch."""
        with path.open("rb") as handle:
            uploaded = await self.client.files.create(file=(path.name, handle), purpose="batch")
        return self._state(await self.client.batches.create(
            input_file_id=uploaded.id, endpoint=self.batch_endpoint,  # type: ignore[arg-type]
            completion_window="24h", metadata=metadata))

    async def batch_retrieve(self, batch_id: str) -> BatchState:
        """Where a batch stands now."""
        return self._state(await self.client.batches.retrieve(batch_id))

    async def batch_list(self) -> AsyncIterator[BatchState]:
        """Every batch the key can see."""
        async for batch in self.client.batches.list(limit=100):
            yield self._state(batch)

    async def batch_cancel(self, batch_id: str) -> BatchState:
        """Cancel a batch."""
        return self._state(await self.client.batches.cancel(batch_id))

    async def batch_results(self, batch: BatchState) -> list[Path]:
        """Its output file and its error file (already in the Batch API's result lines)."""
        paths: list[Path] = []
        try:
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    async with self.client.files.with_streaming_response.content(
                            file_id) as response:
                        paths.append(await download(response.iter_bytes()))
        except BaseException:
            for path in paths:
                path.unlink(missing_ok=True)
            raise
        return paths
