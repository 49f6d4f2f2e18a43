"""Prompt files: a team's own judge prompt in TOML, read and checked before any call is made.

TOML because a prompt is mostly long text: its multi-line strings hold a prompt as written,
with no escaping of quotes or newlines, where JSON would need every newline escaped and YAML
would make indentation part of the prompt. Every mistake is a PromptFileError naming the file,
the line and the key; ``dump`` writes any template prompt (the builtin ones too) as a file to
start from, which loads back to the same requests.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from annotator.errors import AnnotatorError
from annotator.judge.template import (
    BLOCK_FIELDS,
    SYSTEM_FIELDS,
    Example,
    Reply,
    Template,
    TemplateError,
    TemplatePrompt,
    fields_for,
)
from annotator.judge.types import Against

KEYS = {"style", "against", "system", "user", "chunk_block", "reply", "examples", "sampling",
        "aligned_on"}
REPLY_KEYS = {"kind", "scale", "threshold"}
SAMPLING_KEYS = {"temperature", "max_tokens"}
EXAMPLE_KEYS = {"question", "answer", "chunk", "verdict", "reason"}


class PromptFileError(AnnotatorError):
    """A prompt file that cannot be used: where, and what to change."""


def load(path: str | Path, against: Against | None = None) -> TemplatePrompt:
    """The prompt a file describes, checked whole; PromptFileError at the first mistake.

    ``against`` is the command's --against when given: a file showing the other answer is
    refused rather than judged against an answer it never shows.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptFileError(f"There is no prompt file at {path}; 'annotator prompts show "
                              f"builtin > {path.name}' writes one to start from.") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PromptFileError(f"Cannot read the prompt file {path} ({error}).") from None
    return parse(text, str(path), against)


def parse(text: str, source: str, against: Against | None = None) -> TemplatePrompt:
    """The prompt a prompt file's text describes (see load)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        opened = _unclosed(text) if "end of document" in message else None
        if opened is not None:
            message = message.replace("at end of document", f"opened at line {opened}")
        raise PromptFileError(f"{source}: not valid TOML: {message}. Fix it there (multi-line "
                              "text goes between triple quotes).") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise PromptFileError(f"{source}: its arrays or tables nest thousands of levels deep, "
                              "which no prompt file does; a prompt file holds a few tables of "
                              "text (see 'annotator prompts show builtin').") from None
    return _Reader(text, source).prompt(data, against)


def _unclosed(text: str) -> int | None:
    """The line of a multi-line string that is never closed (TOML says only "end of document")."""
    opened: int | None = None
    quote: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        for found in re.finditer(r'"""|\'\'\'', line):
            if quote is None:
                quote, opened = found.group(), number
            elif found.group() == quote:
                quote, opened = None, None
    return opened


_SCALE_RANGE = re.compile(r"\b0\s*(?:-|–|to|\.\.)\s*([2-9])\b")
"""A scale a template asks for: "0 to 3", "0-3", "0–3"."""
_BINARY_WORDS = re.compile(r"\b(?:0\s*or\s*1|1\s*or\s*0|0/1|1/0)\b")
"""A template asking for a binary verdict."""


class _Reader:
    """Reads one parsed file, naming the line of each key it refuses."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source

    def line_of(self, key: str, table: str | None = None) -> int | None:
        """The line a key is set on (within [table] when given), or None."""
        inside = table is None
        pattern = re.compile(rf'^\s*["\']?{re.escape(key)}["\']?\s*=')
        for number, line in enumerate(self.lines, 1):
            header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?", line)
            if header:
                inside = table is not None and header.group(1) == table
                if header.group(1) == key and table is None:
                    return number
                continue
            if inside and pattern.match(line):
                return number
        return None

    def fail(self, key: str, message: str, table: str | None = None) -> PromptFileError:
        line = self.line_of(key, table)
        where = f"{self.source}, line {line}" if line else self.source
        name = f"{table}.{key}" if table else key
        return PromptFileError(f"{where}, '{name}': {message}.")

    def text(self, data: dict[str, Any], key: str, *, required: bool,
             table: str | None = None) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing; every prompt file needs a system and a user "
                                "template", table)
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be text, not {type(value).__name__}", table)
        return value

    def template(self, key: str, text: str, allowed: frozenset[str]) -> Template:
        try:
            return Template.parse(text, allowed)
        except TemplateError as error:
            raise self.fail(key, str(error)) from None

    def prompt(self, data: dict[str, Any], against: Against | None) -> TemplatePrompt:
        for key in data:
            if key not in KEYS:
                raise self.fail(key, f"unknown key; a prompt file has {', '.join(sorted(KEYS))}")
        style = data.get("style", "pointwise")
        if style not in ("pointwise", "listwise"):
            raise self.fail("style", f"is {style!r}; choose 'pointwise' (one request a chunk) "
                            "or 'listwise' (one request a golden)")
        system_text = self.text(data, "system", required=True)
        user_text = self.text(data, "user", required=True)
        assert system_text is not None and user_text is not None
        system = self.template("system", system_text, SYSTEM_FIELDS)
        user = self.template("user", user_text, fields_for(style))
        block_text = self.text(data, "chunk_block", required=False)
        block = None
        if block_text is not None:
            if style != "listwise":
                raise self.fail("chunk_block", "only a listwise prompt shows chunks in blocks")
            block = self.template("chunk_block", block_text, BLOCK_FIELDS)
            if "chunk" not in block.names:
                raise self.fail("chunk_block", "never shows {chunk}: the judge would not see "
                                "the chunks")
        shows = system.names | user.names
        needed = "chunk" if style == "pointwise" else "chunks"
        if needed not in shows and "fields" not in shows:
            raise self.fail("user", f"never shows {{{needed}}} (or {{fields}}): the judge would "
                            "not see what it judges")
        written = data.get("against")
        if written is not None and written not in ("reference", "response"):
            raise self.fail("against", f"is {written!r}; choose 'reference' or 'response'")
        side = self.side(shows, written, against)
        reply = self.reply(data.get("reply"))
        self.scale_agrees(system_text + "\n" + user_text, reply)
        temperature, max_tokens = self.sampling(data.get("sampling"))
        examples = self.examples(data.get("examples"), reply)
        aligned_on = self.text(data, "aligned_on", required=False)
        name = Path(self.source).stem
        return TemplatePrompt(f"file:{name}", side, system, user, style, reply, block,
                              examples, temperature, max_tokens, source=self.source,
                              aligned_on=aligned_on)

    def scale_agrees(self, text: str, reply: Reply) -> None:
        """Refuse a prompt whose words ask for another scale than its reply is read on: a text
        asking for 0 or 1 read as a grade 0-3 useful from 2 makes every verdict noise."""
        ranges = {int(m.group(1)) for m in _SCALE_RANGE.finditer(text)}
        binary = bool(_BINARY_WORDS.search(text))
        if reply.kind == "graded":
            if binary and reply.scale not in ranges and not re.search(
                    rf"\b{reply.scale}\b", text):
                raise self.fail("reply", f"reads a grade from 0 to {reply.scale}, but the "
                                "templates ask for 0 or 1: every answer would be read as a low "
                                f"grade. Ask for a grade from 0 to {reply.scale} (and name the "
                                "field 'grade'), or make the reply kind = \"binary\"")
        elif ranges:
            raise self.fail("reply", f"is binary (0 or 1), but the templates ask for a scale "
                            f"from 0 to {max(ranges)}: make the reply kind = \"graded\" with "
                            f"scale = {max(ranges)}, or ask for 0 or 1")

    def side(self, shows: frozenset[str], written: Against | None, against: Against | None
             ) -> Against:
        """What the prompt judges against: the answer its templates show, else the file's
        ``against``, else --against, else the reference."""
        if {"reference", "response"} <= shows:
            raise self.fail("user", "shows both {reference} and {response}; a judge judges "
                            "against one of them")
        shown: Against | None = ("response" if "response" in shows else "reference"
                                 if "reference" in shows else None)
        if shown is not None and written is not None and shown != written:
            raise self.fail("against", f"says {written}, but the templates show the {shown}")
        side: Against = shown or written or against or "reference"
        if against is not None and against != side:
            raise self.fail("user", f"shows the {side}, but --against {against} was given; "
                            "drop --against (the file decides) or change the template")
        return side

    def reply(self, value: Any) -> Reply:
        if value is None:
            raise self.fail("reply", "missing; say what the reply holds: [reply] kind = "
                            "\"binary\" (a 0/1 verdict with a reason), or kind = \"graded\" with "
                            "scale = 3 and threshold = 2")
        if not isinstance(value, dict):
            raise self.fail("reply", "must be a table ([reply])")
        for key in value:
            if key not in REPLY_KEYS:
                raise self.fail(key, f"unknown key; [reply] has {', '.join(sorted(REPLY_KEYS))}",
                                "reply")
        kind = value.get("kind")
        if kind == "binary":
            if set(value) - {"kind"}:
                raise self.fail("kind", "a binary reply takes no scale or threshold", "reply")
            return Reply()
        if kind != "graded":
            raise self.fail("kind", f"is {kind!r}; choose 'binary' or 'graded'", "reply")
        scale, threshold = value.get("scale"), value.get("threshold")
        for key, number in (("scale", scale), ("threshold", threshold)):
            if isinstance(number, bool) or not isinstance(number, int):
                raise self.fail(key, "a graded reply needs a whole number here (e.g. scale = 3, "
                                "threshold = 2)", "reply")
        assert isinstance(scale, int) and isinstance(threshold, int)
        if not 1 <= scale <= 9:
            raise self.fail("scale", f"is {scale}; grades run 0 to scale, 1 to 9", "reply")
        if not 1 <= threshold <= scale:
            raise self.fail("threshold", f"is {threshold}; it must be 1 to {scale} (a grade at "
                            "or above it is useful)", "reply")
        return Reply("graded", scale, threshold)

    def sampling(self, value: Any) -> tuple[float | None, int | None]:
        if value is None:
            return None, None
        if not isinstance(value, dict):
            raise self.fail("sampling", "must be a table ([sampling])")
        for key in value:
            if key not in SAMPLING_KEYS:
                raise self.fail(key, "unknown key; [sampling] has temperature and max_tokens",
                                "sampling")
        temperature, max_tokens = value.get("temperature"), value.get("max_tokens")
        if temperature is not None and (isinstance(temperature, bool) or not isinstance(
                temperature, int | float) or not 0 <= temperature <= 2):
            raise self.fail("temperature", "must be a number from 0 to 2", "sampling")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(
                max_tokens, int) or max_tokens < 1):
            raise self.fail("max_tokens", "must be a whole number of at least 1", "sampling")
        return (None if temperature is None else float(temperature)), max_tokens

    def examples(self, value: Any, reply: Reply) -> tuple[Example, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail("examples", "must be [[examples]] tables")
        out = []
        for number, item in enumerate(value, 1):
            for key in item:
                if key not in EXAMPLE_KEYS:
                    raise self.fail(key, f"unknown key in example {number}; an example has "
                                    f"{', '.join(sorted(EXAMPLE_KEYS))}", "examples")
            for key in ("question", "answer", "chunk", "reason"):
                if not isinstance(item.get(key), str):
                    raise self.fail(key if key in item else "examples",
                                    f"example {number} needs '{key}' as text", "examples"
                                    if key in item else None)
            verdict = item.get("verdict")
            if verdict not in (0, 1) or isinstance(verdict, bool):
                raise self.fail("verdict" if "verdict" in item else "examples",
                                f"example {number} needs verdict = 0 or 1",
                                "examples" if "verdict" in item else None)
            out.append(Example(item["question"], item["answer"], item["chunk"], int(verdict),
                               item["reason"]))
        del reply  # a graded prompt shows a person's 0/1 as the scale's ends (Reply.example_score)
        return tuple(out)


def dump(prompt: TemplatePrompt, *, system: str | None = None, user: str | None = None) -> str:
    """A prompt as a prompt file (loads back to the same requests); with ``system`` or
    ``user``, that template's text in its place, unchecked (``parse`` checks the file)."""
    lines = ["# A cp-annotator prompt file: annotator judge S.db --model M --prompt-file THIS",
             "# Templates show {question}, {reference} or {response}, and {chunk} and {rank}",
             "# (pointwise) or {chunks} and {count} (listwise); {fields} is the question, the",
             "# answer and the chunk(s) as one JSON object. Write a literal brace as {{ or }}.",
             f'style = "{prompt.style}"', f'against = "{prompt.against}"',
             *([f"aligned_on = {_text(prompt.aligned_on)}"] if prompt.aligned_on else []), "",
             f"system = {_text(prompt.system.text if system is None else system)}", "",
             f"user = {_text(prompt.user.text if user is None else user)}"]
    if prompt.chunk_block is not None:
        lines += ["", f"chunk_block = {_text(prompt.chunk_block.text)}"]
    reply = prompt.reply
    lines += ["", "[reply]", f'kind = "{reply.kind}"']
    if reply.kind == "graded":
        lines += [f"scale = {reply.scale}", f"threshold = {reply.threshold}"]
    if prompt.temperature is not None or prompt.max_tokens is not None:
        lines += ["", "[sampling]"]
        if prompt.temperature is not None:
            lines.append(f"temperature = {prompt.temperature}")
        if prompt.max_tokens is not None:
            lines.append(f"max_tokens = {prompt.max_tokens}")
    for example in prompt.examples:
        lines += ["", "[[examples]]", *(f"{key} = {_text(getattr(example, key))}"
                                         for key in ("question", "answer", "chunk")),
                  f"verdict = {example.verdict}", f"reason = {_text(example.reason)}"]
    return "\n".join(lines) + "\n"


def _text(value: str) -> str:
    """A TOML string holding exactly ``value``: a literal multi-line one where it can be."""
    controls = any((ord(c) < 32 and c not in "\n\t") or ord(c) == 127 for c in value)
    if any(c in value for c in '\n"\\') and "'''" not in value and not controls:
        # ''' strings keep every character as written; TOML drops a newline right after the
        # opening quotes, so one is added there.
        return "'''\n" + value + "'''"
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
