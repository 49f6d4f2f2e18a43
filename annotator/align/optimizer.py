"""The optimizer's side of `annotator align`: the request that asks a model for a revised judge
prompt, the strict schema of its reply, and the candidate prompt a reply makes.

Two ways to ask. Free: the reply is ``{"system", "user", "rationale"}``, a revised system
template and (or "" to keep it) user template. Guarded (``--instructions FILE``): the reply
only adds or removes bullets of the team's vetted list, by number (``{"add", "remove",
"rationale"}``), and the candidate's system template is the current one with those bullets
in or out, so nothing reaches the judge that the team did not write.

A reply off its schema, or a candidate that fails a prompt file's checks, is a CandidateError
with the sentence stored beside the candidate; it is never judged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from annotator.calibration.feedback import Disagreement
from annotator.errors import AnnotatorError
from annotator.judge import prompt_file
from annotator.judge.template import TemplatePrompt
from annotator.judge.transport import Transport
from annotator.untrusted import UnsafeJson, parse_json, storable

REVISION = "prompt_revision"
EDIT = "instruction_edit"
REVISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"system": {"type": "string"}, "user": {"type": "string"},
                   "rationale": {"type": "string"}},
    "required": ["system", "user", "rationale"], "additionalProperties": False}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"add": {"type": "array", "items": {"type": "integer"}},
                   "remove": {"type": "array", "items": {"type": "integer"}},
                   "rationale": {"type": "string"}},
    "required": ["add", "remove", "rationale"], "additionalProperties": False}
CHUNK_CHARS = 1200
"""How much of a chunk, a question or an answer the optimizer is shown (the start)."""

FREE_TASK = """You improve the prompt of an LLM judge. For each chunk a retriever found, the
judge decides whether the chunk was useful for arriving at the answer to a question (RAGAS
context precision): verdict 1 (useful) or 0 (noise). You are shown the judge's current system
and user templates, and chunks where its verdict differed from the team's people: "looser"
where the judge called a chunk useful and people called it noise, "stricter" where it called a
useful chunk noise, each with the judge's reason and any note people wrote. Revise the
templates so the judge decides as the people do on chunks like these. Write general rules, not
facts about these examples; keep what already works. Keep every {placeholder} the templates
use, spelled exactly so, and write a literal brace as {{ or }}. Reply with a JSON object:
"system" (the revised system template), "user" (the revised user template, or "" to keep it)
and "rationale" (why, in a few sentences)."""

GUARDED_TASK = """You tune the prompt of an LLM judge by choosing which of a team's vetted
instructions its system prompt carries. For each chunk a retriever found, the judge decides
whether the chunk was useful for arriving at the answer to a question (verdict 1) or noise (0).
You are shown the numbered instructions (which are in use now) and chunks where the judge's
verdict differed from the team's people: "looser" where it called a chunk useful and people
called it noise, "stricter" the reverse. Choose instructions to add and to remove, by number,
so the judge decides as the people do on chunks like these. Reply with a JSON object: "add"
(numbers), "remove" (numbers) and "rationale" (why)."""


class CandidateError(AnnotatorError):
    """An optimizer reply that makes no usable candidate: off its schema, or a prompt that
    fails a prompt file's checks."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A revised prompt, checked as a prompt file is, with the optimizer's reason."""

    prompt: TemplatePrompt
    text: str
    """The prompt file's text (what align writes as NAME-aligned-K.toml when it is kept)."""
    rationale: str


def read_instructions(path: str | Path) -> list[str]:
    """A team's vetted instructions: one a line ("- " or "* " bullets, or plain lines); blank
    lines and # comments are passed over."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AnnotatorError(f"Cannot read the instructions file {path} ({error}).") from None
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(re.sub(r"^[-*]\s+", "", line))
    if not out:
        raise AnnotatorError(f"{path} holds no instruction: write one a line (\"- Never call a "
                             "chunk useful for its keywords alone.\").")
    return out


def in_use(system: str, instructions: Sequence[str]) -> set[int]:
    """The numbers (from 1) of the instructions a system template carries as bullets."""
    lines = {line.strip() for line in system.splitlines()}
    return {n for n, text in enumerate(instructions, 1) if f"- {text}" in lines}


def with_instructions(system: str, instructions: Sequence[str], chosen: set[int]) -> str:
    """The system template carrying exactly the ``chosen`` instructions as bullets: those
    dropped are taken out, those added go at its end."""
    kept = [line for line in system.splitlines()
            if line.strip() not in {f"- {text}" for text in instructions}]
    body = "\n".join(kept).rstrip()
    added = [f"- {escaped(instructions[n - 1])}" for n in sorted(chosen)]
    return body + ("\n\n" + "\n".join(added) if added else "") + "\n"


def escaped(text: str) -> str:
    """Text as a template shows it literally (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _shown(text: str | None) -> str | None:
    if text is None or len(text) <= CHUNK_CHARS:
        return text
    return text[:CHUNK_CHARS] + " [...]"


def request_messages(prompt: TemplatePrompt, sample: Sequence[Disagreement],
                     counts: dict[str, int], instructions: Sequence[str] | None
                     ) -> list[dict[str, str]]:
    """The optimizer's messages: the task, then the current prompt and the disagreements as
    one JSON object (the texts are data, never instructions to it)."""
    shown = [{"direction": d.direction, "question": _shown(d.question),
              "answer": _shown(d.answer), "chunk": _shown(d.chunk),
              "judge_reason": d.judge_reason, "people_notes": d.notes} for d in sample]
    data: dict[str, Any] = {"disagreements_in_all": counts, "examples": shown}
    if instructions is None:
        data = {"system_template": prompt.system.text, "user_template": prompt.user.text, **data}
        task = FREE_TASK
    else:
        using = in_use(prompt.system.text, instructions)
        data = {"instructions": [{"number": n, "text": text, "in_use": n in using}
                                 for n, text in enumerate(instructions, 1)], **data}
        task = GUARDED_TASK
    return [{"role": "system", "content": task.replace("\n", " ")},
            {"role": "user", "content": json.dumps(data, ensure_ascii=False, indent=1)}]


def request_body(transport: type[Transport], model: str, messages: list[dict[str, str]],
                 guarded: bool, temperature: float, max_tokens: int, mode: str = "json_schema"
                 ) -> dict[str, Any]:
    """The optimizer's request in its transport's protocol, its reply held to a strict schema
    in the response format ``mode`` (one of the transport's formats: the one the endpoint
    takes)."""
    name, schema = (EDIT, EDIT_SCHEMA) if guarded else (REVISION, REVISION_SCHEMA)
    return transport.body(model, messages, temperature, max_tokens, schema, mode, False, name)


def _reply_object(content: str | None, keys: Sequence[str]) -> dict[str, Any]:
    if content is None:
        raise CandidateError("the optimizer's reply holds no text")
    text = storable(content.strip())  # a lone surrogate in a reply: shown and stored as U+FFFD
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    try:
        data = parse_json(fenced.group(1) if fenced else text)
    except UnsafeJson as error:  # nested thousands deep, a number of thousands of digits
        raise CandidateError(f"the optimizer's reply is JSON no prompt can be read from: "
                             f"{error}") from None
    except ValueError:
        raise CandidateError(f"the optimizer's reply is not JSON ({_clip(text)})") from None
    if not isinstance(data, dict):
        raise CandidateError(f"the optimizer's reply is not a JSON object ({_clip(text)})")
    missing = [k for k in keys if k not in data]
    if missing:
        raise CandidateError(f"the optimizer's reply lacks {', '.join(missing)} ({_clip(text)})")
    return data


def _clip(text: str) -> str:
    return json.dumps(text[:200] + ("..." if len(text) > 200 else ""), ensure_ascii=False)


def candidate(prompt: TemplatePrompt, content: str | None, instructions: Sequence[str] | None,
              prompt_id: str, source: str) -> Candidate:
    """The candidate an optimizer's reply makes from ``prompt``, checked as a prompt file is
    (named ``prompt_id``; ``source`` names it in sentences); CandidateError when it makes none."""
    if instructions is None:
        data = _reply_object(content, ("system", "user", "rationale"))
        system, user = data["system"], data["user"]
        if not isinstance(system, str) or not system.strip():
            raise CandidateError("the optimizer's 'system' is not a non-empty text")
        if not isinstance(user, str):
            raise CandidateError("the optimizer's 'user' is not a text")
        user = user if user.strip() else prompt.user.text
    else:
        data = _reply_object(content, ("add", "remove", "rationale"))
        chosen = in_use(prompt.system.text, instructions)
        for key in ("add", "remove"):
            numbers = data[key]
            if not isinstance(numbers, list) or not all(
                    isinstance(n, int) and not isinstance(n, bool) for n in numbers):
                raise CandidateError(f"the optimizer's '{key}' is not a list of numbers")
            wrong = [n for n in numbers if not 1 <= n <= len(instructions)]
            if wrong:
                raise CandidateError(f"the optimizer names instruction {wrong[0]}, and the list "
                                     f"has 1 to {len(instructions)}")
        chosen = (chosen | set(data["add"])) - set(data["remove"])
        system, user = with_instructions(prompt.system.text, instructions, chosen), None
    rationale = data["rationale"] if isinstance(data["rationale"], str) else ""
    draft = prompt_file.dump(prompt, system=system, user=user)
    try:
        checked = prompt_file.parse(draft, source, prompt.against)
    except prompt_file.PromptFileError as error:
        raise CandidateError(f"the revised prompt fails a prompt file's checks: {error}") from None
    if (checked.system.text, checked.user.text) == (prompt.system.text, prompt.user.text):
        raise CandidateError("the optimizer's reply changes nothing in the prompt")
    made = replace(checked, id=prompt_id, source=None, aligned_on=None)
    return Candidate(made, prompt_file.dump(made), rationale)
