"""Every judge call: build the request, send it through the judge's transport, read and check
the reply.

The prompt (judge/types.py) says what to send and how to read the reply; this module sends it,
times it, counts its tokens and turns every failure into a CallResult with its cause. A reply
that is not JSON, lacks a 0/1 verdict, or was cut off at the token limit is an error on that
chunk (with the raw reply kept), never a verdict.
"""

from __future__ import annotations

import asyncio
import bisect
import datetime
import functools
import hashlib
import itertools
import json
import math
import re
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, cast

import httpx2
import openai

from annotator.judge.template import BINARY, Reply, TemplatePrompt
from annotator.judge.transport import StatusError, Transport, provider_of
from annotator.judge.types import CallResult, JudgeSettings, LibraryPrompt, UnreadableReplies
from annotator.models import canonical_json
from annotator.text import counted
from annotator.verdict import is_verdict

LOCAL_KEY = "not-needed"
"""The key sent to an endpoint that needs none (a local server); never stored anywhere."""


@dataclass(slots=True)
class Meter:
    """What one judge call cost on the wire: HTTP requests sent and the tokens their replies
    reported. For a prompt whose library hides both (RAGAS through instructor, which may send
    several requests for one verdict); the builtin call reads usage from its own reply."""

    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


METER: ContextVar[Meter | None] = ContextVar("cp_annotator_meter", default=None)
"""The meter of the call running in this task, if it wants one (see Meter)."""


async def meter_request(request: httpx2.Request) -> None:
    """Count a request on the meter of the call sending it."""
    if (meter := METER.get()) is not None:
        meter.requests += 1


async def meter_response(response: httpx2.Response) -> None:
    """Count a reply's tokens on the meter of the call that asked for it."""
    if (meter := METER.get()) is None:
        return
    await response.aread()  # the client reads it next anyway: aread caches the body
    try:
        usage = json.loads(response.content).get("usage") or {}
        meter.tokens_in += int(usage.get("prompt_tokens") or 0)
        meter.tokens_out += int(usage.get("completion_tokens") or 0)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return  # no usage in this reply (or a body too deep to read): nothing to count


RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
"""How a judge asks for JSON, most structured first. A server that refuses one gets the next:
OpenAI, vLLM and llama-server take ``json_schema``; llama-cpp-python takes only ``json_object``
with a ``schema`` beside it (its own dialect); some take plain ``json_object``; a few take none."""

FORMAT_WORDS = {
    "json_schema": "structured output (json_schema)",
    "json_object_schema": "JSON mode with a schema (json_object + schema)",
    "json_object": "plain JSON mode (json_object)",
    "none": "no response format (the prompt alone asks for JSON)",
    "tool": "a forced tool whose input is the reply (Anthropic's tool_choice)",
}


def response_format(mode: str, schema: dict[str, Any] | None,
                    name: str = "chunk_verdict") -> dict[str, Any] | None:
    """The ``response_format`` of a request in one of the RESPONSE_FORMATS for a reply
    following ``schema`` (None: send none); ``name`` names the schema where the format does."""
    if schema is None or mode == "none":
        return None
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": name, "strict": True, "schema": schema}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def next_format(mode: str, formats: Sequence[str] = RESPONSE_FORMATS) -> str | None:
    """The response format to try once a server refused ``mode`` (None: nothing left), in a
    provider's ``formats``."""
    index = formats.index(mode)
    return formats[index + 1] if index + 1 < len(formats) else None


def request_sha256(settings: JudgeSettings, messages: list[dict[str, str]]) -> str:
    """Identity of a request: model, messages and sampling parameters (not transport details)."""
    return hashlib.sha256(canonical_json({
        "model": settings.model, "messages": messages, **settings.parameters(),
    }).encode()).hexdigest()


async def ask(transport: Transport, settings: JudgeSettings, messages: list[dict[str, str]],
              timeout: float, ranks: Sequence[int] | None = None) -> CallResult:
    """Ask the judge about one chunk (or, listwise, the chunks at ``ranks``), whatever the
    prompt; never raises for what the endpoint or the model does."""
    if _sends_itself(type(settings.prompt)):
        prompt = cast(LibraryPrompt, settings.prompt)
        return await _library_call(transport, settings, prompt, messages, timeout)
    return await judge_chunk(transport, settings, messages, timeout, ranks)


@functools.cache
def _sends_itself(prompt_type: type) -> bool:
    """Whether a prompt's own library sends its requests (a Protocol check costs ~17 µs: once
    per prompt class, not per call)."""
    return issubclass(prompt_type, LibraryPrompt)


def request_body(settings: JudgeSettings, messages: list[dict[str, str]],
                 ranks: Sequence[int] | None = None) -> dict[str, Any]:
    """The request exactly as sent to the judge's provider (and as a batch or a dry run writes
    it)."""
    schema = (settings.prompt.schema if ranks is None
              else cast(TemplatePrompt, settings.prompt).schema_for(ranks))
    return provider_of(settings.provider).body(
        settings.model, messages, settings.temperature, settings.max_tokens, schema,
        settings.response_format, settings.logprobs)


async def judge_chunk(transport: Transport, settings: JudgeSettings,
                      messages: list[dict[str, str]], timeout: float,
                      ranks: Sequence[int] | None = None) -> CallResult:
    """One request with the prompt's messages and response format, its reply read."""
    mode, logprobs = settings.response_format, settings.logprobs
    body = request_body(settings, messages, ranks)
    start = time.perf_counter()
    reply = await transport.send(body, timeout)
    result = (reply if isinstance(reply, CallResult)
              else read_result(settings, reply, ranks, logprobs, elapsed_ms(start)))
    result.sent_format, result.sent_logprobs = mode, logprobs
    return result


async def _library_call(transport: Transport, settings: JudgeSettings, prompt: LibraryPrompt,
                        messages: list[dict[str, str]], timeout: float) -> CallResult:
    """One chunk sent by the prompt's own library through our client: its verdict checked, its
    reason kept, its HTTP requests and tokens counted on the wire (the library reports neither)."""
    meter = Meter()
    token = METER.set(meter)
    start = time.perf_counter()
    try:
        verdict, reason, raw = await asyncio.wait_for(
            prompt.generate(transport.client, settings.model, messages), timeout)
    except TimeoutError:
        result = CallResult(error=f"timed out after {timeout:g} s", cause="timeout")
    except openai.APIStatusError as error:
        # The library chooses its own format: no refusal of one is ours to step down from.
        result = status_error(error, elapsed_ms(start), False, settings.logprobs,
                              transport.key_env)
    except openai.APIConnectionError as error:
        result = transport.connection_error(error, elapsed_ms(start))
    except UnreadableReplies as error:
        # The library has retried already: asking again repeats its attempts to no end.
        result = CallResult(error=f"{error.why}, in {counted(error.attempts, 'attempt')}",
                            raw_reply=error.last_reply, cause="reply", retryable=False)
    except Exception as error:  # the library's other errors
        result = CallResult(error=f"{error.__class__.__name__}: {str(error)[:300]}",
                            cause="library")
    else:
        if is_verdict(verdict):
            result = CallResult(verdict=verdict, reason=reason, raw_reply=raw)
        else:
            result = CallResult(error=f"the verdict is {verdict}, not 0 or 1", raw_reply=raw,
                                cause="reply")
    finally:
        METER.reset(token)
    result.latency_ms = elapsed_ms(start)
    result.tokens_in, result.tokens_out = meter.tokens_in, meter.tokens_out
    result.requests = meter.requests
    return result


def read_result(settings: JudgeSettings, text: str | Any, ranks: Sequence[int] | None,
                logprobs: bool, latency: float | None = None) -> CallResult:
    """A chat completion body (a live reply's text, or a line of a batch's output already
    parsed) read into a CallResult; nothing in it makes this raise."""
    transport = provider_of(settings.provider)
    parsed = _parsed_or_why(text) if isinstance(text, str) else text
    completion = (f"{parsed}, not {transport.reply_name}" if isinstance(parsed, NotJson)
                  else transport.completion(parsed))
    if isinstance(completion, str):
        raw = text if isinstance(text, str) else json.dumps(text)
        return CallResult(error=completion, raw_reply=raw[:RAW_REPLY_CHARS], latency_ms=latency,
                          cause="body")
    result = CallResult(latency_ms=latency, tokens_in=completion.tokens_in,
                        tokens_out=completion.tokens_out, tokens_cached=completion.tokens_cached,
                        served_model=completion.model, fingerprint=completion.fingerprint)
    content = completion.content
    result.raw_reply = content
    if completion.finish_reason == "length":
        result.error = "the reply was cut off at the token limit"
        result.cause = "cut_off"
        return result
    reply = settings.prompt.reply
    if ranks is not None:
        return _read_list(result, cast(TemplatePrompt, settings.prompt), content, ranks,
                          completion, logprobs)
    parsed = settings.prompt.read(content)
    if isinstance(parsed, str):
        result.error, result.cause = parsed, "reply"
        return result
    result.verdict, result.reason, result.grade = parsed
    if logprobs:
        if not completion.logprobs:
            result.confidence_note = "the reply carried no logprobs"
        else:
            found = p_relevant(completion.logprobs, result.verdict, reply)
            if isinstance(found, str):
                result.confidence_note = found
            else:
                result.p_relevant = found
    return result


def _read_list(result: CallResult, prompt: TemplatePrompt, content: str | None,
               ranks: Sequence[int], completion: Completion, logprobs: bool) -> CallResult:
    """A listwise reply read whole: one verdict per rank with its P(relevant), or an error."""
    listed = prompt.read_list(content, ranks)
    if isinstance(listed, str):
        result.error, result.cause = listed, "reply"
        return result
    found: list[float | str] = (
        p_relevant_each(completion.logprobs, [v for v, *_ in listed], prompt.reply)
        if logprobs and completion.logprobs else [])
    if logprobs:
        notes = [p for p in found if isinstance(p, str)]
        result.confidence_note = ("the reply carried no logprobs" if not completion.logprobs
                                  else notes[0] if notes else None
                                  if len(found) == len(listed)
                                  else "the verdict's token was not found in the logprobs")
    chances = [p if isinstance(p, float) else None for p in found]
    chances += [None] * (len(listed) - len(chances))
    result.listed = [(v, reason, grade, p)
                     for (v, reason, grade), p in zip(listed, chances, strict=True)]
    result.verdict = listed[0][0]  # a listwise call succeeded: its verdicts are in listed
    return result


RAW_REPLY_CHARS = 2000
"""How much of a body that is not a chat completion is kept with its error."""


@dataclass(frozen=True, slots=True)
class Token:
    """One logprobs token: its text, its logprob and its alternatives (Tokens too)."""

    token: str
    logprob: float
    top_logprobs: list[Token]


@dataclass(frozen=True, slots=True)
class Completion:
    """What a judge needs from a chat completion, read from its body without trusting it."""

    content: str | None
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    logprobs: list[Token]
    tokens_cached: int | None = None
    model: str | None = None
    """The model the provider says served the reply (its ``model``)."""
    fingerprint: str | None = None
    """The provider's ``system_fingerprint``: its serving configuration, where it says one."""


class NotJson(str):
    """What a reply's body is, when it is no JSON at all ("an HTML page")."""


def _parsed_or_why(text: str) -> Any:
    """A reply's body parsed, or a NotJson sentence saying what the server answered instead."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        if not text.strip():
            return NotJson("the server answered with an empty body")
        kind = "an HTML page" if text.lstrip()[:1] == "<" else "text that is not JSON"
        return NotJson(f"the server answered with {kind}")


def completion_of(data: Any) -> Completion | str:
    """A parsed chat completion read field by field, or a sentence saying why it is not one:
    nothing a server sends with a 200 makes this raise."""
    if not isinstance(data, dict):
        return f"the server answered with JSON that is not a chat completion ({_json_kind(data)})"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return "the reply has no choices"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return "the reply's first choice holds no message"
    content = message.get("content")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    logprobs = choice.get("logprobs")
    finish = choice.get("finish_reason")
    details = usage.get("prompt_tokens_details")
    return Completion(content if isinstance(content, str) else None,
                      finish if isinstance(finish, str) else None,
                      _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")),
                      _tokens(logprobs.get("content") if isinstance(logprobs, dict) else None),
                      _count(details.get("cached_tokens")) if isinstance(details, dict) else None,
                      said(data.get("model")), said(data.get("system_fingerprint")))


def said(value: Any) -> str | None:
    """A short string a server says about itself, or None (an empty or odd value, or a
    long one cut: it is an identity, not a message)."""
    return value[:200] if isinstance(value, str) and value.strip() else None


def _json_kind(value: Any) -> str:
    return ("a list" if isinstance(value, list) else "null" if value is None
            else type(value).__name__)


def _count(value: Any) -> int | None:
    """A token count, or None when the server sent something else ('12' is read as 12)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _tokens(raw: Any) -> list[Token]:
    """Logprobs tokens; anything malformed in them is left out rather than trusted."""
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            return []  # a gap would shift every offset after it: no logprobs at all
        tops = item.get("top_logprobs")
        out.append(Token(item["token"], _logprob(item.get("logprob")),
                         [Token(t["token"], _logprob(t.get("logprob")), [])
                          for t in (tops if isinstance(tops, list) else [])
                          if isinstance(t, dict) and isinstance(t.get("token"), str)]))
    return out


def _logprob(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else -math.inf


KEYS = {key: re.compile(rf'(?<!\\)"{key}"\s*:\s*') for key in ("verdict", "grade")}
"""The reply's verdict (or grade) key up to its value (an escaped quote inside a reason is not
it)."""


def p_relevant(tokens: list[Any], verdict: int, reply: Reply = BINARY) -> float | str:
    """P(verdict = 1) from the verdict digit's own token, renormalised over the reply's digits
    (0 and 1, or the grades); or a sentence saying why there is none.

    The digit is found in the token stream itself (the tokens' text rebuilt), never by an
    offset into the reply's content: a server that strips a ```json fence from the content
    keeps it in the tokens, and an offset would land on another token.
    """
    found = p_relevant_each(tokens, [verdict], reply)
    return found[0] if found else "the verdict's token was not found in the logprobs"


def p_relevant_each(tokens: list[Any], verdicts: Sequence[int], reply: Reply = BINARY
                    ) -> list[float | str]:
    """P(relevant) (or why none) for each verdict key of the reply in order, as p_relevant."""
    text = "".join(token.token for token in tokens)
    ends = list(itertools.accumulate(len(token.token) for token in tokens))
    digits = [str(d) for d in range(reply.scale + 1)]
    out: list[float | str] = []
    for match, verdict in zip(KEYS[reply.key].finditer(text), verdicts, strict=False):
        digit = match.end()
        if digit >= len(text) or text[digit] not in digits:
            out.append("the verdict's token was not found in the logprobs")
            continue
        said = int(text[digit])
        if int(said >= reply.threshold) != verdict:
            out.append("the logprobs' verdict token disagrees with the reply's verdict")
            continue
        token = tokens[bisect.bisect_right(ends, digit)]  # the token whose text holds the digit
        mass = dict.fromkeys(digits, 0.0)
        for alternative in token.top_logprobs or [token]:
            label = alternative.token.strip().strip('"').rstrip(",}").strip()
            if label in mass:
                mass[label] += math.exp(alternative.logprob)
        total = sum(mass.values())
        if total == 0:
            out.append("the verdict token's alternatives hold neither 0 nor 1")
            continue
        out.append(sum(m for d, m in mass.items() if int(d) >= reply.threshold) / total)
    return out


def status_error(error: StatusError, latency: float, formatted: bool, logprobs: bool,
                 key_env: str = "OPENAI_API_KEY") -> CallResult:
    """A CallResult for an HTTP error status: retryable or not, Retry-After, refused features
    (``formatted``, ``logprobs``: whether the request asked for a response format, logprobs).

    A refusal of the response format or of logprobs is read from the whole error body at any
    status: llama-cpp-python answers an unknown response format with HTTP 500 and refuses
    logprobs with 500 too; others use 400 or 422.
    """
    status = error.status_code
    message = _short(error)
    result = CallResult(error=f"HTTP {status}: {message}", latency_ms=latency, cause="http",
                        status=status, key_env=key_env)
    retry_after = error.response.headers.get("retry-after")
    if retry_after is not None:
        result.retry_after = retry_after_seconds(retry_after)
    said = (message + " " + _body_text(error)).lower()
    if (status in (400, 422, 500) and formatted
            and any(word in said for word in REFUSAL_WORDS)):
        result.unsupported.add("response_format")
    elif logprobs and "logprob" in said:
        result.unsupported.add("logprobs")
    elif status in (400, 401, 403, 404, 422):
        result.retryable = False  # retrying the same request cannot help
    return result


REFUSAL_WORDS = ("response_format", "json_schema", "json_object", "tool_choice")
"""Words an error names a refused response format by (OpenAI's, and a tool choice's)."""


def retry_after_seconds(value: str) -> float:
    """A Retry-After header in seconds: a number of seconds or an HTTP date; anything else
    (malformed, negative zero aside) is infinite, so the runner's cap applies."""
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return math.inf
        if when.tzinfo is None:
            return math.inf
        seconds = (when - datetime.datetime.now(datetime.UTC)).total_seconds()
    return max(0.0, seconds) if not math.isnan(seconds) else math.inf


def _body_text(error: StatusError) -> str:
    """The error's body as text (a validation error names the refused field only there)."""
    try:
        return json.dumps(error.body) if error.body is not None else ""
    except (TypeError, ValueError):
        return str(error.body)


def _short(error: StatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
    return str(error.message)[:300]


def elapsed_ms(start: float) -> float:
    """Milliseconds since a perf_counter reading, to 0.1 ms."""
    return round((time.perf_counter() - start) * 1000, 1)
