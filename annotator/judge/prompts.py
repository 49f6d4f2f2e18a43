"""The judge's prompts: the project's own builtin wording, and RAGAS's (loaded from ragas).

A prompt turns (question, answer, chunk) into chat messages. Its id and the sha256 of its
template are stored with the judge, so a changed prompt is a different judge.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from annotator.judge.client import CallResult, JudgeSettings

Against = Literal["reference", "response"]

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
"""The reply every prompt asks for: a reason first, then the verdict."""

BUILTIN_SYSTEM = (
    "You grade the chunks a retriever returned for a question. For one chunk at a time, decide "
    "whether it was useful in arriving at the given answer: useful (1) if it supplies "
    "information the answer states or needs, noise (0) if it does not, even when it is on the "
    "same topic. Judge only this chunk. Reply with a JSON object: "
    '{"reason": "<one or two sentences>", "verdict": <1 or 0>}.'
)

BUILTIN_USER = (
    "Question:\n{question}\n\n{answer_label}:\n{answer}\n\nChunk:\n{context}\n\n"
    "Was this chunk useful in arriving at the {answer_kind}? Reply with the JSON object only."
)


class JudgePrompt(Protocol):
    """What the runner needs of a prompt: its identity, its messages, and one call."""

    @property
    def id(self) -> str: ...

    @property
    def against(self) -> Against: ...

    @property
    def template_sha256(self) -> str: ...

    def messages(self, question: str, answer: str, context: str) -> list[dict[str, str]]: ...

    async def ask(self, client: AsyncOpenAI, settings: JudgeSettings,
                  messages: list[dict[str, str]], timeout: float) -> CallResult: ...


@dataclass(frozen=True, slots=True)
class Prompt:
    """The builtin prompt: system instructions, one user message, structured output."""

    id: str
    against: Against

    @property
    def template_sha256(self) -> str:
        """sha256 of the template text, stored with the judge."""
        return hashlib.sha256((BUILTIN_SYSTEM + "\n\n" + BUILTIN_USER).encode()).hexdigest()

    def messages(self, question: str, answer: str, context: str) -> list[dict[str, str]]:
        """The chat messages for one chunk."""
        label, kind = (("Reference answer", "reference answer") if self.against == "reference"
                       else ("Response", "response"))
        user = BUILTIN_USER.format(question=question, answer_label=label, answer=answer,
                                   context=context, answer_kind=kind)
        return [{"role": "system", "content": BUILTIN_SYSTEM}, {"role": "user", "content": user}]

    async def ask(self, client: AsyncOpenAI, settings: JudgeSettings,
                  messages: list[dict[str, str]], timeout: float) -> CallResult:
        """One call with the openai client (see client.judge_chunk)."""
        from annotator.judge.client import judge_chunk

        return await judge_chunk(client, settings, messages, timeout)


def builtin(against: Against = "reference") -> Prompt:
    """The project's own prompt."""
    return Prompt("builtin" if against == "reference" else "builtin-response", against)


def json_schema_format() -> dict[str, Any]:
    """The ``response_format`` asking for structured output with the verdict schema."""
    return {"type": "json_schema",
            "json_schema": {"name": "chunk_verdict", "strict": True, "schema": VERDICT_SCHEMA}}


def canonical(obj: Any) -> str:
    """A stable JSON text of an object, for hashing."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
