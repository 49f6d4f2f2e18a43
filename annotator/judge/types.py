"""The judge's data types: what a prompt is, what defines a judge's requests, what a call returns.

A prompt is data: its messages, the schema its reply follows and how to read the reply. The
client (client.py) makes every call, whatever the prompt; a prompt whose own library must send
the request (RAGAS through instructor) says so by being a LibraryPrompt, and the client still
times, meters and classifies that call. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from annotator.judge.template import Reply

Against = Literal["reference", "response"]
"""What a chunk is judged against: the golden's reference answer or the system's response."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "One or two sentences on why."},
        "verdict": {"type": "integer", "enum": [0, 1],
                    "description": "1 if the chunk was useful, 0 if it is noise."},
    },
    "required": ["reason", "verdict"],
    "additionalProperties": False,
}
"""The reply the builtin prompt asks for: a reason first, then the verdict."""

Cause = Literal["http", "connection", "timeout", "cut_off", "body", "reply", "library", "other"]
"""Where a call failed: an HTTP error status, no connection, no reply in time, a reply cut off
at the token limit, a 200 whose body is no chat completion, a reply that holds no usable
verdict, the prompt's own library."""

Reading = tuple[int, str | None, int | None] | str
"""A reply read by a prompt: (verdict, reason, grade), or a sentence saying why it is not usable
(grade: the graded score a threshold made into the verdict; None for a binary reply)."""


class JudgePrompt(Protocol):
    """A prompt as data: its identity, its messages, its reply's schema, how to read the reply."""

    @property
    def id(self) -> str: ...

    @property
    def against(self) -> Against: ...

    @property
    def template_sha256(self) -> str: ...

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON schema the reply follows, sent as the response format (None: send none)."""
        ...

    @property
    def sampling(self) -> tuple[float, int] | None:
        """(temperature, max_tokens) the style must be run with, or None for the command's."""
        ...

    @property
    def listwise(self) -> bool:
        """Whether one request judges many chunks (then it is a TemplatePrompt)."""
        ...

    @property
    def reply(self) -> Reply:
        """The reply it asks for: which key holds the verdict, and its grades."""
        ...

    def messages(self, question: str, answer: str, context: str, rank: int = 1
                 ) -> list[dict[str, str]]: ...

    def read(self, content: str | None) -> Reading:
        """(verdict, reason) from the reply's text, or why it is not usable."""
        ...


class UnreadableReplies(Exception):
    """A prompt's own library gave up: none of its attempts' replies parsed (the last kept)."""

    def __init__(self, attempts: int, why: str, last_reply: str | None) -> None:
        super().__init__(f"{attempts} attempts: {why}")
        self.attempts = attempts
        self.why = why
        self.last_reply = last_reply


@runtime_checkable
class LibraryPrompt(Protocol):
    """A prompt whose own library sends the request (through our client, so it is metered)."""

    async def generate(self, client: AsyncOpenAI, model: str,
                       messages: list[dict[str, str]]) -> tuple[object, str | None, str]:
        """(verdict as the library parsed it, reason, raw reply) for one chunk; raises
        UnreadableReplies when the library's own retries end without a reply it could read."""
        ...


@dataclass(slots=True)
class JudgeSettings:
    """What defines a judge's requests (everything but the API key)."""

    model: str
    prompt: JudgePrompt
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    window: int | None = None
    """Listwise: the most chunks one request judges (longer goldens go in overlapping windows)."""
    logprobs: bool = True
    response_format: str = "json_schema"
    """One of its provider's formats: where a server refuses it, the run moves down the list. A
    transport detail, like logprobs: not part of the request's identity (request_sha256)."""
    system_as_user: bool = False
    """Send the system text at the head of the first user message (chat templates that drop
    system messages): it changes what the model reads, so it is part of the judge."""
    provider: str = "openai"
    """Whose API the requests are written for (judge/transport.py): it changes what is sent,
    so it is part of the judge."""

    def __post_init__(self) -> None:
        from annotator.judge.transport import provider_of

        transport = provider_of(self.provider)  # an unknown provider is an error here
        if self.response_format not in transport.formats:  # OpenAI's default, on another
            self.response_format = transport.formats[0]
        self.logprobs = self.logprobs and transport.logprobs

    @property
    def formats(self) -> tuple[str, ...]:
        """The response formats its provider tries, most structured first."""
        from annotator.judge.transport import provider_of

        return provider_of(self.provider).formats

    def parameters(self) -> dict[str, Any]:
        """The sampling parameters stored with the judge (and its provider, when not OpenAI's:
        judges defined before keep their parameters, and their requests' identity)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.prompt.listwise:
            out["window"] = self.window
        if self.system_as_user:
            out["system_as_user"] = True
        if self.provider != "openai":
            out["provider"] = self.provider
        return out


@dataclass(slots=True)
class CallResult:
    """The outcome of one call: a verdict, or an error saying what went wrong."""

    verdict: int | None = None
    reason: str | None = None
    p_relevant: float | None = None
    error: str | None = None
    raw_reply: str | None = None
    grade: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cached: int | None = None
    """Prompt tokens the provider served from its prefix cache (usage.prompt_tokens_details)."""
    listed: list[tuple[int, str | None, int | None, float | None]] | None = None
    """Listwise: (verdict, reason, grade, P(relevant)) per chunk of the request, in rank order."""
    latency_ms: float | None = None
    requests: int = 1
    """HTTP requests this call sent (RAGAS's instructor may retry inside one call)."""
    retry_after: float | None = None
    """Seconds the server asked us to wait (Retry-After), if it did."""
    retryable: bool = True
    unsupported: set[str] = field(default_factory=set)
    """Request features the endpoint refused ("response_format", "logprobs"); drop them, retry."""
    sent_format: str = "json_schema"
    sent_logprobs: bool = True
    """What this request asked for, so a refusal changes the settings only once."""
    confidence_note: str | None = None
    """Why a verdict carries no P(relevant) although logprobs were asked for."""
    cause: Cause = "other"
    """What kind of failure an error is (judge/failures.py groups and explains them)."""
    status: int | None = None
    """The HTTP status of an error reply."""
    served_model: str | None = None
    fingerprint: str | None = None
    """The model and ``system_fingerprint`` the reply says served it (None: not said): with
    the judge's definition, its epoch (store/epochs.py)."""
    key_env: str | None = None
    """The environment variable of the key an HTTP error may be about (its provider's)."""


REPLY_TOKENS = 512
"""A pointwise reply's token limit unless --max-tokens says otherwise."""
LISTWISE_TOKENS_PER_CHUNK = 128
"""A listwise reply's limit grows with its window: a verdict and a reason for every chunk
(512 for a window of 20 cut 10 of 80 chunks off, at 4-6 a window)."""


def default_max_tokens(listwise: bool, window: int | None) -> int:
    """The reply's token limit when none is given: fitted to what one reply must hold."""
    if listwise and window:
        return max(REPLY_TOKENS, LISTWISE_TOKENS_PER_CHUNK * window + 64)
    return REPLY_TOKENS
