"""RAGAS 0.4's own ContextPrecision judge, loaded from the installed ragas package (never copied).

Each chunk is judged exactly as ``ragas.metrics.collections.ContextPrecision`` judges it: the
same prompt (``ContextPrecisionPrompt``), the same LLM wrapper (``llm_factory``, instructor in
JSON mode, RAGAS's default sampling), so the request is byte for byte the one RAGAS sends.
Unlike RAGAS, the per-chunk verdict and reason are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from typing import TYPE_CHECKING, Any

from annotator.errors import AnnotatorError, install_hint
from annotator.judge.prompts import parse_reply
from annotator.judge.template import BINARY
from annotator.judge.types import Against, Reading, UnreadableReplies

if TYPE_CHECKING:
    from openai import AsyncOpenAI

RAGAS_TEMPERATURE = 0.01
RAGAS_MAX_TOKENS = 1024
"""RAGAS's own defaults (InstructorModelArgs), used so the requests match RAGAS's."""


def _ragas() -> Any:
    """The ragas modules we use, or an error saying how to install them."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry calls from a test or CI
    # instructor logs each spent retry as an error; with no handler, Python would print it on
    # the person's terminal. The failure reaches the run's summary as a sentence instead.
    instructor_log = logging.getLogger("instructor")
    if not instructor_log.handlers:
        instructor_log.addHandler(logging.NullHandler())
    try:
        import ragas
        from ragas.llms import llm_factory
        from ragas.metrics.collections.context_precision import util
    except ImportError as error:
        raise AnnotatorError(
            f"The ragas prompt needs RAGAS itself, loaded at run time: {install_hint('ragas')} "
            f"({error}). Until then, use --prompt builtin.") from None
    return ragas, llm_factory, util


class RagasPrompt:
    """RAGAS's ContextPrecision prompt, against the reference (or the response)."""

    def __init__(self, against: Against = "reference") -> None:
        ragas, _, util = _ragas()
        self.against: Against = against
        self.version: str = ragas.__version__
        self._util = util
        self._prompt = util.ContextPrecisionPrompt()
        self._llms: dict[int, Any] = {}  # one RAGAS LLM wrapper per client

    @property
    def id(self) -> str:
        """ragas (or ragas-response)."""
        return "ragas" if self.against == "reference" else "ragas-response"

    @property
    def template_sha256(self) -> str:
        """sha256 of RAGAS's rendered prompt with empty fields, and the ragas version."""
        empty = self._prompt.to_string(self._util.ContextPrecisionInput(
            question="", context="", answer=""))
        return hashlib.sha256(f"ragas {self.version}\n{empty}".encode()).hexdigest()

    listwise = False
    reply = BINARY

    def messages(self, question: str, answer: str, context: str, rank: int = 1
                 ) -> list[dict[str, str]]:
        """RAGAS's prompt for one chunk (instructor adds its own system message when sending)."""
        text = self._prompt.to_string(self._util.ContextPrecisionInput(
            question=question, context=context, answer=answer))
        return [{"role": "user", "content": text}]

    @property
    def sampling(self) -> tuple[float, int]:
        """RAGAS's own defaults, so the requests match RAGAS's."""
        return RAGAS_TEMPERATURE, RAGAS_MAX_TOKENS

    @property
    def schema(self) -> None:
        """None: instructor chooses RAGAS's own response format."""
        return None

    def read(self, content: str | None) -> Reading:
        """RAGAS's reply is the same JSON object as the builtin one (reason, verdict)."""
        return parse_reply(content)

    async def generate(self, client: AsyncOpenAI, model: str,
                       messages: list[dict[str, str]]) -> tuple[object, str | None, str]:
        """One chunk through RAGAS's own LLM wrapper (the client times, meters and checks it)."""
        llm = self._llms.get(id(client))
        if llm is None:
            _, llm_factory, _ = _ragas()
            llm = self._llms[id(client)] = llm_factory(model, provider="openai", client=client)
        try:
            reply = await llm.agenerate(messages[0]["content"], self._util.ContextPrecisionOutput)
        except Exception as error:
            if (given_up := _retries_spent(error)) is not None:
                raise given_up from None
            raise
        return reply.verdict, reply.reason, reply.model_dump_json()


def _retries_spent(error: BaseException) -> UnreadableReplies | None:
    """instructor's "max retries exceeded" (RAGAS's wrapper), as our own error, with the last
    reply's text and why it did not parse; None for any other error."""
    attempts = getattr(error, "n_attempts", None)
    if not isinstance(attempts, int):
        return None
    last = getattr(error, "last_completion", None)
    try:
        content = last.choices[0].message.content  # type: ignore[union-attr]
    except (AttributeError, IndexError, TypeError):
        content = None
    why = "the reply is not the JSON object RAGAS asks for (reason, verdict)"
    failed = getattr(error, "failed_attempts", None) or []
    problem = getattr(failed[-1], "exception", None) if failed else None
    details = getattr(problem, "errors", None)
    if callable(details):
        with contextlib.suppress(Exception):  # a pydantic ValidationError's first problem
            first = details()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            why += f" ({where + ': ' if where else ''}{first['msg']})"
    return UnreadableReplies(attempts, why, content if isinstance(content, str) else None)
