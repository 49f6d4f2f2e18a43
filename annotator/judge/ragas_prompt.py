"""RAGAS 0.4's own ContextPrecision judge, loaded from the installed ragas package (never copied).

Each chunk is judged exactly as ``ragas.metrics.collections.ContextPrecision`` judges it: the
same prompt (``ContextPrecisionPrompt``), the same LLM wrapper (``llm_factory``, instructor in
JSON mode, RAGAS's default sampling), so the request is byte for byte the one RAGAS sends.
Unlike RAGAS, the per-chunk verdict and reason are kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from typing import TYPE_CHECKING, Any

import openai

from annotator.errors import AnnotatorError
from annotator.judge.prompts import Against
from annotator.verdict import is_verdict

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from annotator.judge.client import CallResult, JudgeSettings

RAGAS_TEMPERATURE = 0.01
RAGAS_MAX_TOKENS = 1024
"""RAGAS's own defaults (InstructorModelArgs), used so the requests match RAGAS's."""


def _ragas() -> Any:
    """The ragas modules we use, or an error saying how to install them."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry calls from a test or CI
    try:
        import ragas
        from ragas.llms import llm_factory
        from ragas.metrics.collections.context_precision import util
    except ImportError as error:
        raise AnnotatorError(
            "The ragas prompt needs RAGAS itself, loaded at run time: pip install "
            f"'cp-annotator[ragas]' ({error}). Until then, use --prompt builtin.") from None
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

    def messages(self, question: str, answer: str, context: str) -> list[dict[str, str]]:
        """RAGAS's prompt for one chunk (instructor adds its own system message when sending)."""
        text = self._prompt.to_string(self._util.ContextPrecisionInput(
            question=question, context=context, answer=answer))
        return [{"role": "user", "content": text}]

    async def ask(self, client: AsyncOpenAI, settings: JudgeSettings,
                  messages: list[dict[str, str]], timeout: float) -> CallResult:
        """One chunk through RAGAS's own LLM wrapper; the verdict checked, the reason kept, and
        the tokens and requests counted on the wire (instructor reports neither)."""
        from annotator.judge.client import METER, Meter

        meter = Meter()
        token = METER.set(meter)
        try:
            result = await self._ask(client, settings, messages, timeout)
        finally:
            METER.reset(token)
        result.tokens_in, result.tokens_out = meter.tokens_in, meter.tokens_out
        result.requests = meter.requests
        return result

    async def _ask(self, client: AsyncOpenAI, settings: JudgeSettings,
                   messages: list[dict[str, str]], timeout: float) -> CallResult:
        from annotator.judge.client import CallResult, connection_error, elapsed_ms, status_error

        llm = self._llms.get(id(client))
        if llm is None:
            _, llm_factory, _ = _ragas()
            llm = self._llms[id(client)] = llm_factory(settings.model, provider="openai",
                                                       client=client)
        start = time.perf_counter()
        try:
            reply = await asyncio.wait_for(
                llm.agenerate(messages[0]["content"], self._util.ContextPrecisionOutput), timeout)
        except TimeoutError:
            return CallResult(error=f"timed out after {timeout:g} s", latency_ms=elapsed_ms(start))
        except openai.APIStatusError as error:
            result = status_error(error, settings, elapsed_ms(start))
            result.unsupported.discard("response_format")  # instructor chooses RAGAS's format
            return result
        except openai.APIConnectionError as error:
            return connection_error(client, error, elapsed_ms(start))
        except Exception as error:  # instructor's retry/validation errors, among others
            return CallResult(error=f"{error.__class__.__name__}: {str(error)[:300]}",
                              latency_ms=elapsed_ms(start))
        raw = reply.model_dump_json()
        if not is_verdict(reply.verdict):
            return CallResult(error=f"the verdict is {reply.verdict}, not 0 or 1", raw_reply=raw,
                              latency_ms=elapsed_ms(start))
        return CallResult(verdict=reply.verdict, reason=reply.reason, raw_reply=raw,
                          latency_ms=elapsed_ms(start))

