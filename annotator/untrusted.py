"""The one guarded way in for untrusted JSON and text: files, tracers' exports, a model's
replies, batch results. Whatever arrives, a reader gets a value a session can hold or an
UnsafeJson it turns into a sentence: never a RecursionError, a UnicodeEncodeError later at
the store, or Python's advice about ``sys.set_int_max_str_digits``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO, Any

from annotator.text import visible


class UnsafeJson(ValueError):
    """JSON that parses but holds what a session must not: a repeated key, NaN or Infinity, a
    number too long to read, nesting too deep, a lone surrogate."""


SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
"""A JSON escape that may be a lone surrogate: a high one not followed by a low one, or a low
one not after a high one (searched for without copying the text). A pair, as every emoji
outside the first plane is escaped, is no match: only a match costs the exact check."""

MAX_DEPTH = 64
"""How deep lists and objects may nest in a golden: deeper is no golden, and would exhaust the
stack of every later step that walks it (hashing, export, the report)."""
MAX_DEPTH_NOTE = f"nested more than {MAX_DEPTH} levels deep"


def parse_json(text: str, *, lone_surrogates: bool = False) -> Any:
    """json.loads, refusing with UnsafeJson what would break later or not round-trip: a key given
    twice in one object (the error names it), NaN and Infinity (not JSON; never exported),
    a number of thousands of digits, nesting thousands deep, and a lone surrogate (it cannot
    be stored as UTF-8) unless ``lone_surrogates`` (a reply whose text the caller makes
    ``storable``)."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise UnsafeJson(f"the JSON is {MAX_DEPTH_NOTE}.") from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:
        if isinstance(error, UnsafeJson):
            raise
        raise UnsafeJson("the JSON holds a number too long to read (over 4,300 digits); write it "
                         "as a string.") from None
    # Cheap checks first, the walk only when they say it may be needed.
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise UnsafeJson(f"the JSON is {MAX_DEPTH_NOTE}.")
    # Only an escape can make a lone surrogate: check then, not always (every surrogate's
    # escape starts \ud or \uD, found in C before the pattern is tried at every position).
    if not lone_surrogates and ("\\ud" in text or "\\uD" in text) \
            and SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise UnsafeJson("a string holds a lone surrogate escape (e.g. \\ud800), which is "
                             "not a character; fix the text that wrote it.") from None
    return value


def parse_stream(text: str) -> list[Any]:
    """JSON documents written one after another (pretty-printed, so no JSON lines: the
    OpenTelemetry SDK's ConsoleSpanExporter prints so), each read by ``parse_json``'s rules."""
    out: list[Any] = []
    at, end = 0, len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at == end:
            return out
        try:
            _, stop = _DECODER.raw_decode(text, at)
        except RecursionError:
            raise UnsafeJson(f"the JSON is {MAX_DEPTH_NOTE}.") from None
        except json.JSONDecodeError:
            raise
        except ValueError:
            raise UnsafeJson("the JSON holds a number too long to read (over 4,300 digits); "
                             "write it as a string.") from None
        out.append(parse_json(text[at:stop]))  # the guards, on this document alone
        at = stop


def _depth(value: Any) -> int:
    """How deep the lists and objects of a parsed value nest, or a depth past MAX_DEPTH as soon
    as one is found (without recursion: the value may be very deep). Only containers are
    stacked: a tracer's export of 100 MB holds millions of strings and numbers."""
    if type(value) is not dict and type(value) is not list:
        return 0
    deepest, stack = 0, [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, level = pop()
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                return deepest
        inner = level + 1
        for child in (item.values() if type(item) is dict else item):
            if type(child) is dict or type(child) is list:  # as json makes them: no subclass
                push((child, inner))
    return deepest


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # in C; a key given twice shows as a shorter dict, looked for only then
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise UnsafeJson(f"the key '{visible(key)}' is given twice in one object; "
                                 "keep one.")
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise UnsafeJson(f"{name} is not a JSON value (JavaScript's, not JSON's); use null or a "
                     "number.")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)
"""Made once: json.loads with hooks makes a decoder (and its scanner) on every call."""


SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: no character, and not storable as UTF-8."""


def storable(text: str) -> str:
    """``text`` with each lone surrogate (a model's reply may hold one) replaced by U+FFFD, so
    it can be stored and shown; every other character as it was."""
    return SURROGATE.sub("\ufffd", text) if SURROGATE.search(text) else text


def parse_nested(text: str) -> Any:
    """A JSON document found inside a string of another (a span's input or output value): the
    same rules as ``parse_json``; a string that is no JSON is returned as it is."""
    try:
        return parse_json(text)
    except json.JSONDecodeError:
        return text


MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line a text reader takes (a corpus document is far shorter); /dev/zero or a
file with no line breaks stops here instead of filling the memory."""


class LineTooLong(ValueError):
    """A line longer than MAX_LINE_BYTES."""


def bounded_lines(handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary stream, each at most MAX_LINE_BYTES (else LineTooLong)."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES:
            raise LineTooLong(f"a line is longer than {MAX_LINE_BYTES // 2**20} MB: this is "
                              "not a text file of this kind (a device, or a file with no line "
                              "breaks?).")
        yield line
