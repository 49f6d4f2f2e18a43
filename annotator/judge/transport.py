"""One way out to a model: a transport sends a request and reads its reply, live or in batches.

Everything that talks to a provider goes through a Transport: the judge's calls (client.py),
its probes and re-checks, align's optimizer, and batch judging. A transport knows its
provider's wire format (the request body, the reply's shape, a batch's lines and results), the
environment variable holding its key, and what its endpoint may refuse (the response formats it
tries in turn). What it gets back is a reply's text or a CallResult saying why there is none,
with the same causes for every provider, so retries, the error ladder and what a person reads
are the same whichever model answers.

Two providers: ``openai`` (the Chat Completions and Batch APIs, and every OpenAI-compatible
server; judge/openai_chat.py) and ``anthropic`` (the native Messages and Message Batches APIs;
judge/anthropic_messages.py). A judge stores its provider with its definition; a new provider
is a module with a Transport subclass and a line in judge/providers.py.
"""

from __future__ import annotations

import functools
import importlib
import json
import tempfile
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from annotator.errors import AnnotatorError
from annotator.judge.limiter import RateLimiter
from annotator.judge.providers import PROVIDERS
from annotator.judge.types import CallResult
from annotator.redact import without_credentials

if TYPE_CHECKING:
    import httpx2

    from annotator.judge.client import Completion

Hook = Callable[["httpx2.Request"], Awaitable[None]]


class StatusError(Protocol):
    """An SDK's error for an HTTP error status (openai's and anthropic's have this shape)."""

    status_code: int
    response: httpx2.Response
    body: object
    message: str


@dataclass(slots=True)
class BatchState:
    """Where one provider batch stands, in this tool's words (the Batch API's states)."""

    id: str
    state: str
    """validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled."""
    requests: int = 0
    completed: int = 0
    failed: int = 0
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    """What the batch carries to be found again (empty where a provider keeps none)."""


class Transport(ABC):
    """A provider's client, with its rate limits, as every caller of a model uses it."""

    provider: ClassVar[str]
    """The provider's name, as a judge stores it."""
    key_env: ClassVar[str]
    """The environment variable its API key is read from."""
    url_env: ClassVar[str]
    """The environment variable its SDK reads a base URL from, when --base-url is not given."""
    default_url: ClassVar[str]
    """Its own API's address."""
    reply_name: ClassVar[str]
    """What a person calls one of its replies, in a sentence saying a body is not one."""
    formats: ClassVar[tuple[str, ...]]
    """How a reply is asked to be JSON, most structured first (a refusal moves down)."""
    logprobs: ClassVar[bool]
    """Whether its replies can carry logprobs (P(relevant))."""
    exact_tokens: ClassVar[bool]
    """Whether OpenAI's tokenizer counts its prompts (a dry run's exact count)."""
    batch_limits: ClassVar[tuple[int, int]]
    """(requests, megabytes) one batch may hold."""
    batch_endpoint: ClassVar[str] = ""
    """The path each batch request line names (the Batch API's ``url``)."""

    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk
        """The provider's own client (its retries off: the runner's are the only ones)."""
        self.base_url = str(sdk.base_url)

    @classmethod
    @abstractmethod
    def open(cls, base_url: str | None, api_key: str, *, concurrency: int, rpm: float | None,
             tpm: float | None, period: float, extra_hooks: Sequence[Hook]) -> Transport:
        """Its SDK's client at ``base_url`` (None: its own API), with limits (see connect)."""

    # -- the wire format (no client needed: batch files and dry runs use these) ------------

    @staticmethod
    @abstractmethod
    def body(model: str, messages: list[dict[str, str]], temperature: float, max_tokens: int,
             schema: dict[str, Any] | None, mode: str, logprobs: bool,
             name: str = "chunk_verdict") -> dict[str, Any]:
        """The request exactly as sent: these messages, sampling, and a reply following
        ``schema`` asked for in response format ``mode`` (one of ``formats``)."""

    @staticmethod
    @abstractmethod
    def completion(data: Any) -> Completion | str:
        """A parsed reply read field by field into a client.Completion, or a sentence saying
        why it is not a reply (nothing in it makes this raise)."""

    @staticmethod
    @abstractmethod
    def batch_line(custom_id: str, body: dict[str, Any]) -> bytes:
        """One request of a batch file."""

    # -- sending -------------------------------------------------------------------------

    @abstractmethod
    async def send(self, body: dict[str, Any], timeout: float) -> str | CallResult:
        """POST one request; the reply's text, or a failed CallResult with its cause."""

    @property
    def client(self) -> Any:
        """The provider's own SDK client (a prompt whose library sends its requests uses it)."""
        raise AnnotatorError(f"The {self.provider} transport has no client a prompt's own "
                             "library can use.")

    async def aclose(self) -> None:
        """Close its connections."""
        await self._sdk.close()

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()

    def shown_url(self) -> str:
        """Its address as a person may read it (credentials stripped)."""
        return without_credentials(self.base_url)[0] or self.base_url

    def connection_error(self, error: Exception, latency: float) -> CallResult:
        """A CallResult for a request that never got a reply: which URL, and what to check."""
        return CallResult(error=f"connection failed to {self.shown_url()} "
                                f"({error.__class__.__name__}): check that the server is running "
                                "and that --base-url is right",
                          latency_ms=latency, cause="connection")

    # -- batches -------------------------------------------------------------------------

    @abstractmethod
    async def batch_create(self, path: Path, metadata: dict[str, str]) -> BatchState:
        """Create a batch from a request file written with ``batch_line``."""

    @abstractmethod
    async def batch_retrieve(self, batch_id: str) -> BatchState:
        """Where a batch stands now."""

    @abstractmethod
    def batch_list(self) -> AsyncIterator[BatchState]:
        """Every batch the key can see, newest first."""

    @abstractmethod
    async def batch_cancel(self, batch_id: str) -> BatchState:
        """Cancel a batch."""

    @abstractmethod
    async def batch_results(self, batch: BatchState) -> list[Path]:
        """An ended batch's results, downloaded to temporary files of Batch API result lines
        (``{"custom_id", "response": {"status_code", "body"}}`` or ``{"custom_id", "error"}``),
        whatever the provider's own format; the caller deletes them."""


def http_settings(concurrency: int, rpm: float | None, tpm: float | None, period: float,
                  requests: Sequence[Hook] = (), responses: Sequence[Any] = ()) -> dict[str, Any]:
    """The keyword arguments of a provider's HTTP client: ``concurrency`` connections, and
    request hooks that hold each request until the rate limits allow it, then ``requests``'
    own; ``responses``: hooks on each reply.

    The limiters wait in a request hook, right before each request goes on the wire: a
    limiter granted earlier (before the client prepares the request) would let bursts through.
    """
    import httpx2

    hooks: list[Hook] = []
    if rpm:
        calls = RateLimiter(rpm, period)

        async def per_request(request: httpx2.Request) -> None:
            await calls.acquire()

        hooks.append(per_request)
    if tpm:
        tokens = RateLimiter(tpm, period)

        async def per_token(request: httpx2.Request) -> None:
            await tokens.acquire(estimate_tokens(request.content))

        hooks.append(per_token)
    return {"limits": httpx2.Limits(max_connections=concurrency,
                                    max_keepalive_connections=concurrency),
            "event_hooks": {"request": [*hooks, *requests], "response": [*responses]}}


def estimate_tokens(body: bytes) -> float:
    """Tokens a request may use: its text at ~4 characters a token, plus max_tokens."""
    try:
        request = json.loads(body)
    except ValueError:
        return len(body) / 4
    text = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
    text += len(str(request.get("system", "")))
    return text / 4 + int(request.get("max_tokens") or request.get("max_completion_tokens") or 0)


async def download(chunks: AsyncIterator[bytes],
                   convert: Callable[[bytes], bytes] | None = None) -> Path:
    """Stream a file's bytes to a temporary file (results may be hundreds of MB); with
    ``convert``, each line rewritten on the way."""
    fd, name = tempfile.mkstemp(prefix="cp-annotator-batch-", suffix=".jsonl")
    try:
        with open(fd, "wb") as handle:
            if convert is None:
                async for block in chunks:
                    handle.write(block)
            else:
                rest = b""
                async for block in chunks:
                    *lines, rest = (rest + block).split(b"\n")
                    for line in lines:
                        if line.strip():
                            handle.write(convert(line) + b"\n")
                if rest.strip():
                    handle.write(convert(rest) + b"\n")
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


@functools.cache
def provider_of(name: str) -> type[Transport]:
    """The transport of a provider named by a judge or by --provider."""
    if name not in PROVIDERS:
        raise AnnotatorError(f"There is no provider {name!r}; choose one of "
                             f"{', '.join(PROVIDERS)}.")
    module, _, cls = PROVIDERS[name].partition(":")
    found: type[Transport] = getattr(importlib.import_module(module), cls)
    return found


def connect(provider: str, base_url: str | None, api_key: str, *, concurrency: int = 8,
            rpm: float | None = None, tpm: float | None = None, period: float = 60.0,
            extra_hooks: Sequence[Hook] = ()) -> Transport:
    """A provider's transport at ``base_url`` (None: its own API), its HTTP layer enforcing the
    rate limits; retries are the runner's, so the SDK makes none of its own."""
    return provider_of(provider).open(base_url, api_key, concurrency=concurrency, rpm=rpm,
                                      tpm=tpm, period=period, extra_hooks=extra_hooks)


def sdk_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """(connection errors, HTTP status errors) of every provider's SDK installed here."""
    import openai

    connection: list[type[Exception]] = [openai.APIConnectionError]
    status: list[type[Exception]] = [openai.APIStatusError]
    try:
        import anthropic
    except ImportError:
        pass
    else:
        connection.append(anthropic.APIConnectionError)
        status.append(anthropic.APIStatusError)
    return tuple(connection), tuple(status)
