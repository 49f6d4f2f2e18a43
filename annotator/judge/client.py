"""One judge call: build the request, send it with the openai client, parse and check the reply.

A reply that is not JSON, lacks a 0/1 verdict, or was cut off at the token limit is an error
on that chunk (with the raw reply kept), never a verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from annotator.judge.limiter import RateLimiter
from annotator.judge.prompts import JudgePrompt, canonical, json_schema_format

LOCAL_KEY = "not-needed"
"""The key sent to an endpoint that needs none (a local server); never stored anywhere."""


Hook = Callable[[httpx2.Request], Awaitable[None]]


def make_client(base_url: str | None, api_key: str, *, concurrency: int = 8,
                rpm: float | None = None, tpm: float | None = None, period: float = 60.0,
                extra_hooks: Sequence[Hook] = ()) -> AsyncOpenAI:
    """An AsyncOpenAI client whose HTTP layer enforces the rate limits.

    The limiters wait in a request hook, right before each request goes on the wire: a
    limiter granted earlier (before the client prepares the request) would let bursts through.
    Retries are ours (the runner's), so the client makes none of its own.
    """
    hooks: list[Hook] = []
    if rpm:
        requests = RateLimiter(rpm, period)

        async def per_request(request: httpx2.Request) -> None:
            await requests.acquire()

        hooks.append(per_request)
    if tpm:
        tokens = RateLimiter(tpm, period)

        async def per_token(request: httpx2.Request) -> None:
            await tokens.acquire(estimate_tokens(request.content))

        hooks.append(per_token)
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    http = openai.DefaultAsyncHttpx2Client(limits=limits,
                                           event_hooks={"request": [*hooks, *extra_hooks]})
    return AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, http_client=http)


def estimate_tokens(body: bytes) -> float:
    """Tokens a request may use: its text at ~4 characters a token, plus max_tokens."""
    try:
        request = json.loads(body)
    except ValueError:
        return len(body) / 4
    text = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
    return text / 4 + int(request.get("max_tokens") or request.get("max_completion_tokens") or 0)


@dataclass(slots=True)
class JudgeSettings:
    """What defines a judge's requests (everything but the API key)."""

    model: str
    prompt: JudgePrompt
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    logprobs: bool = True
    structured: bool = True
    """Ask for json_schema structured output; falls back to JSON mode where refused."""

    def parameters(self) -> dict[str, Any]:
        """The sampling parameters stored with the judge."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(slots=True)
class CallResult:
    """The outcome of one call: a verdict, or an error saying what went wrong."""

    verdict: int | None = None
    reason: str | None = None
    p_relevant: float | None = None
    error: str | None = None
    raw_reply: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    retry_after: float | None = None
    """Seconds the server asked us to wait (Retry-After), if it did."""
    retryable: bool = True
    unsupported: set[str] = field(default_factory=set)
    """Request features the endpoint refused ("json_schema", "logprobs"); drop them and retry."""


def request_sha256(settings: JudgeSettings, messages: list[dict[str, str]]) -> str:
    """Identity of a request: model, messages and sampling parameters (not transport details)."""
    return hashlib.sha256(canonical({
        "model": settings.model, "messages": messages, **settings.parameters(),
    }).encode()).hexdigest()


async def judge_chunk(client: AsyncOpenAI, settings: JudgeSettings,
                      messages: list[dict[str, str]], timeout: float) -> CallResult:
    """Ask the judge about one chunk; never raises for what the endpoint or model does."""
    body: dict[str, Any] = {
        "model": settings.model, "messages": messages, **settings.parameters(),
        "response_format": (json_schema_format() if settings.structured
                            else {"type": "json_object"}),
    }
    if settings.logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = 5
    start = time.perf_counter()
    try:
        # The client's own POST with the body as built: chat.completions.create would walk
        # the messages and the schema through its TypedDict transforms on every call, which
        # was most of the client's CPU per call (benchmarks/judge.py).
        completion = await client.post("/chat/completions", body=body, cast_to=ChatCompletion,
                                       options={"timeout": timeout})
    except openai.APITimeoutError:
        return CallResult(error=f"timed out after {timeout:g} s", latency_ms=elapsed_ms(start))
    except openai.APIConnectionError as error:
        return CallResult(error=f"connection failed: {error.__class__.__name__}",
                          latency_ms=elapsed_ms(start))
    except openai.APIStatusError as error:
        return status_error(error, settings, elapsed_ms(start))
    latency = elapsed_ms(start)
    usage = completion.usage
    result = CallResult(latency_ms=latency,
                        tokens_in=usage.prompt_tokens if usage else None,
                        tokens_out=usage.completion_tokens if usage else None)
    if not completion.choices:
        result.error = "the reply has no choices"
        return result
    choice = completion.choices[0]
    content = choice.message.content
    result.raw_reply = content
    if choice.finish_reason == "length":
        result.error = "the reply was cut off at the token limit (raise max_tokens)"
        return result
    parsed = parse_reply(content)
    if isinstance(parsed, str):
        result.error = parsed
        return result
    result.verdict, result.reason = parsed
    if choice.logprobs is not None and choice.logprobs.content:
        result.p_relevant = p_relevant(content or "", choice.logprobs.content)
    return result


def parse_reply(content: str | None) -> tuple[int, str | None] | str:
    """(verdict, reason) from a reply, or a sentence saying why it is not usable."""
    if not content:
        return "the reply is empty"
    text = content.strip()
    if text.startswith("```"):  # some models fence JSON even in JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as error:
        return f"the reply is not valid JSON ({error.msg})"
    if not isinstance(obj, dict) or "verdict" not in obj:
        return "the reply has no 'verdict'"
    verdict = obj["verdict"]
    if type(verdict) is not int or verdict not in (0, 1):
        return f"the verdict is {json.dumps(verdict)}, not 0 or 1"
    reason = obj.get("reason")
    return verdict, reason if isinstance(reason, str) else None


def p_relevant(content: str, tokens: list[Any]) -> float | None:
    """P(verdict = 1) from the verdict token's top logprobs, renormalised over '0' and '1'."""
    key = content.find('"verdict"')
    if key < 0:
        return None
    digit = next((i for i in range(key + 9, len(content)) if content[i] in "01"), -1)
    if digit < 0:
        return None
    offset = 0
    for token in tokens:
        end = offset + len(token.token)
        if offset <= digit < end:
            mass = {"0": 0.0, "1": 0.0}
            for alternative in token.top_logprobs or [token]:
                label = alternative.token.strip().strip('"')
                if label in mass:
                    mass[label] += math.exp(alternative.logprob)
            total = mass["0"] + mass["1"]
            return None if total == 0 else mass["1"] / total
        offset = end
    return None


def status_error(error: openai.APIStatusError, settings: JudgeSettings,
                 latency: float) -> CallResult:
    """A CallResult for an HTTP error status: retryable or not, Retry-After, refused features."""
    status = error.status_code
    message = _short(error)
    result = CallResult(error=f"HTTP {status}: {message}", latency_ms=latency)
    retry_after = error.response.headers.get("retry-after")
    if retry_after is not None:
        try:
            result.retry_after = max(0.0, float(retry_after))
        except ValueError:
            result.retry_after = None
    lowered = message.lower()
    if status == 400 and settings.structured and ("response_format" in lowered
                                                  or "json_schema" in lowered):
        result.unsupported.add("json_schema")
    elif status in (400, 403) and settings.logprobs and "logprobs" in lowered:
        result.unsupported.add("logprobs")
    elif status in (400, 401, 403, 404, 422):
        result.retryable = False  # retrying the same request cannot help
    return result


def _short(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
    return str(error.message)[:300]


def elapsed_ms(start: float) -> float:
    """Milliseconds since a perf_counter reading, to 0.1 ms."""
    return round((time.perf_counter() - start) * 1000, 1)
