"""Prompts made of templates: the builtin styles and every prompt file are one of these.

A template is text with named fields (``{question}``, ``{chunk}`` ...) and nothing else: no
attribute access, no format specs, so a template cannot reach into the program. A prompt is
pointwise (one request a chunk) or listwise (one request a golden, or a window of it); its
reply is a binary verdict or a graded score made binary by a threshold. Examples go in as
few-shot turns before the request (a user message and the reply it should get), so everything
shared by a golden's chunks comes first and a provider's prefix cache can serve it.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from annotator.judge.types import Against, Reading
from annotator.models import canonical_json
from annotator.untrusted import UnsafeJson, parse_json
from annotator.verdict import is_verdict

Style = Literal["pointwise", "listwise"]

POINTWISE_FIELDS = frozenset({"question", "reference", "response", "chunk", "rank", "fields"})
LISTWISE_FIELDS = frozenset({"question", "reference", "response", "chunks", "count", "fields"})
BLOCK_FIELDS = frozenset({"rank", "chunk"})
SYSTEM_FIELDS = frozenset({"question", "reference", "response"})
"""The fields each kind of template may show (the system template only what a golden's chunks
share, so a provider's prefix cache serves it); ``fields`` is the question, the answer and the
chunk (or chunks) as one JSON object, which no text inside it can break out of."""

FIELD_WORDS = {
    "question": "the golden's question", "reference": "its reference answer",
    "response": "the system's response", "chunk": "the chunk's text", "rank": "its rank",
    "chunks": "every chunk of the request, each through chunk_block", "count": "how many",
    "fields": "question, answer and chunk(s) as one JSON object",
}


class TemplateError(ValueError):
    """A template that cannot be used, with the field at fault (None: the template itself)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Template:
    """Text with named fields, parsed once: rendering is joining literal pieces and values."""

    text: str
    pieces: tuple[tuple[str, str | None], ...]

    @classmethod
    def parse(cls, text: str, allowed: frozenset[str]) -> Template:
        """A template, or TemplateError naming the first field it may not show."""
        pieces: list[tuple[str, str | None]] = []
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as error:
            raise TemplateError(f"{error} (write a literal brace as {{{{ or }}}})") from None
        for literal, name, spec, conversion in parsed:
            if name is None:
                pieces.append((literal, None))
                continue
            if name not in allowed:
                known = ", ".join("{" + f + "}" for f in sorted(allowed))
                raise TemplateError(f"unknown field {{{name}}}; this template may show {known} "
                                    "(write a literal brace as {{ or }})", name)
            if spec or conversion:
                raise TemplateError(f"field {{{name}}} takes no format or conversion", name)
            pieces.append((literal, name))
        return cls(text, tuple(pieces))

    @property
    def names(self) -> frozenset[str]:
        """The fields the template shows."""
        return frozenset(name for _, name in self.pieces if name is not None)

    def render(self, values: Mapping[str, str]) -> str:
        """The text with every field filled in (values are data: braces in them stay as is)."""
        return "".join(literal + (values[name] if name is not None else "")
                       for literal, name in self.pieces)


@dataclass(frozen=True, slots=True)
class Reply:
    """The reply a prompt asks for: a binary verdict, or a grade 0..scale made binary."""

    kind: Literal["binary", "graded"] = "binary"
    scale: int = 1
    threshold: int = 1
    """A grade at or above this is useful (1); binary replies use 1."""

    @property
    def key(self) -> str:
        """The reply's field holding the verdict or the grade."""
        return "verdict" if self.kind == "binary" else "grade"

    def item_schema(self) -> dict[str, Any]:
        """The JSON schema of one chunk's answer: a reason first, then the verdict or grade."""
        if self.kind == "binary":
            score = {"type": "integer", "enum": [0, 1],
                     "description": "1 if the chunk was useful, 0 if it is noise."}
        else:
            score = {"type": "integer", "enum": list(range(self.scale + 1)),
                     "description": f"0 (noise) to {self.scale} (essential)."}
        return {"type": "object",
                "properties": {"reason": {"type": "string",
                                          "description": "One or two sentences on why."},
                               self.key: score},
                "required": ["reason", self.key], "additionalProperties": False}

    def read_item(self, obj: Any) -> tuple[int, str | None, int | None] | str:
        """(verdict, reason, grade) from one answer object, or why it is not usable."""
        if not isinstance(obj, dict) or self.key not in obj:
            return f"the reply has no '{self.key}'"
        score = obj[self.key]
        reason = obj.get("reason")
        reason = reason if isinstance(reason, str) else None
        if self.kind == "binary":
            if not is_verdict(score):
                return f"the verdict is {json.dumps(score)}, not 0 or 1"
            return score, reason, None
        if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= self.scale:
            return f"the grade is {json.dumps(score)}, not a whole number 0 to {self.scale}"
        return int(score >= self.threshold), reason, score

    def example_score(self, verdict: int) -> int:
        """What a demonstration's reply says for a person's verdict."""
        return verdict if self.kind == "binary" else (self.scale if verdict else 0)

    def describe(self) -> str:
        """'binary', or 'graded 0-3, useful at 2 or more'."""
        return ("binary" if self.kind == "binary" else
                f"graded 0-{self.scale}, useful at {self.threshold} or more")


BINARY = Reply()


@dataclass(frozen=True, slots=True)
class Example:
    """One demonstration: a chunk, the verdict a person gave it, and why."""

    question: str
    answer: str
    chunk: str
    verdict: int
    reason: str
    golden_id: str | None = None
    """The session golden it came from (None: written into a prompt file)."""
    rank: int = 1
    """Its rank in that golden."""

    def plain(self) -> dict[str, Any]:
        """The example as hashed and stored (its text, not where it came from)."""
        return {"question": self.question, "answer": self.answer, "chunk": self.chunk,
                "verdict": self.verdict, "reason": self.reason}


def _loads(content: str | None) -> Any | str:
    """The reply's JSON value, or a sentence saying why there is none."""
    if not content:
        return "the reply is empty"
    text = content.strip()
    if text.startswith("```"):  # some models fence JSON even in JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        # The guarded reader: a reply nested thousands deep or holding a number of thousands of
        # digits is a sentence, never a RecursionError; a lone surrogate is let through (the
        # store makes it storable).
        return _Parsed(parse_json(text, lone_surrogates=True))
    except json.JSONDecodeError as error:
        return f"the reply is not valid JSON ({error.msg})"
    except UnsafeJson as error:
        return f"the reply is JSON no verdict can be read from ({str(error).rstrip('.')})"


@dataclass(frozen=True, slots=True)
class _Parsed:
    value: Any


Verdicts = list[tuple[int, str | None, int | None]]
"""One (verdict, reason, grade) per chunk of a listwise request, in rank order."""


@dataclass(frozen=True, slots=True)
class TemplatePrompt:
    """A prompt made of a system and a user template, a reply kind and examples."""

    id: str
    against: Against
    system: Template
    user: Template
    style: Style = "pointwise"
    reply: Reply = BINARY
    chunk_block: Template | None = None
    """Listwise: how each chunk shows inside {chunks}."""
    examples: tuple[Example, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    legacy_sha256: str | None = None
    """The builtin prompt's hash from before prompts were templates (kept so its judges
    resume); None: the hash of canonical_text."""
    source: str | None = None
    """The prompt file's path, for messages (None: a builtin style)."""
    aligned_on: str | None = None
    """The model ``annotator align`` tuned this prompt on (a prompt tuned for one model may not
    carry to the next); not part of the requests."""

    @classmethod
    def from_definition(cls, prompt_id: str, definition: dict[str, Any],
                        legacy_sha256: str | None = None) -> TemplatePrompt:
        """The prompt a judge was run with, from the canonical text stored with it."""
        style = definition["style"]
        reply = definition["reply"]
        sampling = definition.get("sampling") or {}
        block = definition.get("chunk_block")
        return cls(prompt_id, definition["against"],
                   Template.parse(definition["system"], SYSTEM_FIELDS),
                   Template.parse(definition["user"], fields_for(style)), style,
                   Reply(reply["kind"], reply["scale"], reply["threshold"]),
                   Template.parse(block, BLOCK_FIELDS) if block is not None else None,
                   tuple(Example(e["question"], e["answer"], e["chunk"], e["verdict"],
                                 e["reason"]) for e in definition.get("examples", [])),
                   sampling.get("temperature"), sampling.get("max_tokens"), legacy_sha256)

    # -- identity ---------------------------------------------------------------------------

    def definition(self) -> dict[str, Any]:
        """Everything that makes this prompt's requests, as plain data (its canonical form)."""
        out: dict[str, Any] = {"style": self.style, "against": self.against,
                               "system": self.system.text, "user": self.user.text,
                               "reply": {"kind": self.reply.kind, "scale": self.reply.scale,
                                         "threshold": self.reply.threshold}}
        if self.chunk_block is not None:
            out["chunk_block"] = self.chunk_block.text
        if self.examples:
            out["examples"] = [e.plain() for e in self.examples]
        if self.temperature is not None or self.max_tokens is not None:
            out["sampling"] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        return out

    @property
    def canonical_text(self) -> str:
        """The prompt's canonical text, stored with the judge."""
        return canonical_json(self.definition())

    @property
    def template_sha256(self) -> str:
        """sha256 of the canonical text (an edited file is a different judge)."""
        if self.legacy_sha256 is not None and not self.examples:
            return self.legacy_sha256
        return hashlib.sha256(self.canonical_text.encode()).hexdigest()

    @property
    def schema(self) -> dict[str, Any]:
        """The schema of a pointwise reply (a listwise one's depends on the chunks: see
        schema_for)."""
        return self.reply.item_schema()

    @property
    def sampling(self) -> tuple[float, int] | None:
        """The file's own (temperature, max_tokens), or None for the command's."""
        if self.temperature is None and self.max_tokens is None:
            return None
        return (self.temperature if self.temperature is not None else 0.0,
                self.max_tokens if self.max_tokens is not None else 512)

    @property
    def listwise(self) -> bool:
        """Whether one request judges a golden's chunks at once."""
        return self.style == "listwise"

    def with_examples(self, examples: Sequence[Example]) -> TemplatePrompt:
        """The same prompt with more demonstrations after its own."""
        return replace(self, examples=(*self.examples, *examples))

    @property
    def session_examples(self) -> tuple[tuple[str, int, int], ...]:
        """(golden id, rank, verdict) of each example drawn from the session's chunks."""
        return tuple((e.golden_id, e.rank, e.verdict) for e in self.examples
                     if e.golden_id is not None)

    # -- requests ---------------------------------------------------------------------------

    def _answer_fields(self, question: str, answer: str) -> dict[str, str]:
        return {"question": question, self.against: answer}

    def _fields_json(self, question: str, answer: str, rest: dict[str, Any]) -> str:
        key = "reference_answer" if self.against == "reference" else "response"
        fields = {"question": question, key: answer, **rest}
        if all(isinstance(v, str) for v in fields.values()):
            # json.dumps(indent=1) byte for byte, through the C string encoder: indent sends
            # json.dumps down its pure-Python path, most of a request's rendering time.
            return "{\n" + ",\n".join(f" {_string(k)}: {_string(v)}" for k, v in fields.items()) \
                + "\n}"
        return json.dumps(fields, ensure_ascii=False, indent=1)

    def _pointwise_user(self, question: str, answer: str, chunk: str, rank: int) -> str:
        values = {**self._answer_fields(question, answer), "chunk": chunk, "rank": str(rank)}
        if "fields" in self.user.names:
            values["fields"] = self._fields_json(question, answer, {"chunk": chunk})
        return self.user.render(values)

    def _listwise_user(self, question: str, answer: str, chunks: Sequence[tuple[int, str]]
                       ) -> str:
        values = {**self._answer_fields(question, answer), "count": str(len(chunks))}
        if "chunks" in self.user.names:
            block = self.chunk_block or DEFAULT_BLOCK
            values["chunks"] = "\n\n".join(block.render({"rank": str(r), "chunk": t})
                                           for r, t in chunks)
        if "fields" in self.user.names:
            values["fields"] = self._fields_json(
                question, answer, {"chunks": [{"rank": r, "text": t} for r, t in chunks]})
        return self.user.render(values)

    def _shots(self) -> list[dict[str, str]]:
        """The examples as few-shot turns: the request each would be, and its right reply."""
        out = []
        for e in self.examples:
            item = {"reason": e.reason, self.reply.key: self.reply.example_score(e.verdict)}
            if self.listwise:
                user = self._listwise_user(e.question, e.answer, [(1, e.chunk)])
                reply = json.dumps({"verdicts": [{"rank": 1, **item}]}, ensure_ascii=False)
            else:
                user = self._pointwise_user(e.question, e.answer, e.chunk, 1)
                reply = json.dumps(item, ensure_ascii=False)
            out += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        return out

    def _system(self, question: str, answer: str) -> list[dict[str, str]]:
        text = self.system.render(self._answer_fields(question, answer))
        return [{"role": "system", "content": text}] if text else []

    def messages(self, question: str, answer: str, context: str, rank: int = 1
                 ) -> list[dict[str, str]]:
        """The chat messages for one chunk (pointwise)."""
        return [*self._system(question, answer), *self._shots(),
                {"role": "user", "content": self._pointwise_user(question, answer, context, rank)}]

    def list_messages(self, question: str, answer: str, chunks: Sequence[tuple[int, str]]
                      ) -> list[dict[str, str]]:
        """The chat messages for a golden's chunks, (rank, text) in rank order (listwise)."""
        return [*self._system(question, answer), *self._shots(),
                {"role": "user", "content": self._listwise_user(question, answer, chunks)}]

    def schema_for(self, ranks: Sequence[int]) -> dict[str, Any]:
        """The listwise reply's schema: exactly one answer per chunk, each naming its rank."""
        item = self.reply.item_schema()
        item = {**item, "properties": {"rank": {"type": "integer", "enum": list(ranks)},
                                       **item["properties"]},
                "required": ["rank", *item["required"]]}
        return {"type": "object",
                "properties": {"verdicts": {"type": "array", "items": item,
                                            "minItems": len(ranks), "maxItems": len(ranks)}},
                "required": ["verdicts"], "additionalProperties": False}

    # -- replies ----------------------------------------------------------------------------

    def read(self, content: str | None) -> Reading:
        """(verdict, reason, grade) from a pointwise reply, or why it is not usable."""
        parsed = _loads(content)
        if isinstance(parsed, str):
            return parsed
        return self.reply.read_item(parsed.value)

    def read_list(self, content: str | None, ranks: Sequence[int]) -> Verdicts | str:
        """One (verdict, reason, grade) per rank, in rank order, from a listwise reply; or why
        the reply is not usable as a whole (never a partial list)."""
        parsed = _loads(content)
        if isinstance(parsed, str):
            return parsed
        value = parsed.value
        items = value.get("verdicts") if isinstance(value, dict) else None
        if not isinstance(items, list):
            return "the reply has no 'verdicts' list"
        if len(items) != len(ranks):
            return f"the reply holds {len(items)} verdicts for {len(ranks)} chunks"
        by_rank: dict[int, tuple[int, str | None, int | None]] = {}
        for item in items:
            rank = item.get("rank") if isinstance(item, dict) else None
            if isinstance(rank, bool) or not isinstance(rank, int) or rank not in ranks:
                return f"the reply names rank {json.dumps(rank)}, which is not in this request"
            if rank in by_rank:
                return f"the reply judges rank {rank} twice"
            read = self.reply.read_item(item)
            if isinstance(read, str):
                return f"rank {rank}: {read}"
            by_rank[rank] = read
        return [by_rank[r] for r in ranks]


_string = json.JSONEncoder(ensure_ascii=False).encode
"""One string as JSON, as json.dumps(ensure_ascii=False) writes it."""


DEFAULT_BLOCK = Template.parse("[{rank}] {chunk}", BLOCK_FIELDS)
"""How a chunk shows inside {chunks} when a listwise file gives no chunk_block."""


def literal(text: str) -> str:
    """Text made safe to use as a template: its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def fields_for(style: Style) -> frozenset[str]:
    """The fields a system or user template of this style may show."""
    return POINTWISE_FIELDS if style == "pointwise" else LISTWISE_FIELDS
