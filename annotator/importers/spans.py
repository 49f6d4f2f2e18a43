"""What every tracer importer shares: ids in one spelling, the retriever spans chosen one way,
one golden built from each retrieval the same way, a tracer's goldens gathered trace by trace,
said and refused the same way."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from annotator.errors import InputError

Golden = dict[str, Any]
Span = TypeVar("Span")


HEX = re.compile(r"[0-9a-fA-F]+")


def hex_id(given: Any) -> str:
    """A trace or span id as hex, however the file wrote it (OTLP JSON's hex, protobuf's and
    MLflow 3's base64, MLflow 2's 0x hex); any other id as it is."""
    text = str(given or "").removeprefix("0x")  # MLflow 2 wrote ids as 0x-prefixed hex
    if len(text) in (16, 32) and HEX.fullmatch(text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) in (8, 16) else text


def instant(given: Any) -> float:
    """A start time as seconds, however the file wrote it (nanoseconds, milliseconds, a
    datetime or ISO text), so a trace's spans sort in the order they ran; 0 when unknown."""
    if isinstance(given, datetime):
        return given.timestamp()
    if isinstance(given, int | float) and not isinstance(given, bool):
        number = float(given)
        return number / 1e9 if number > 1e14 else number / 1e3 if number > 1e11 else number
    if isinstance(given, str):
        if given.isdigit():
            return instant(int(given))
        try:
            return datetime.fromisoformat(given.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def retrievers(spans: Sequence[Span], retriever: str | None, is_retriever: Callable[[Span], bool],
               name_of: Callable[[Span], Any]) -> list[Span]:
    """The spans that are goldens: those named ``retriever`` (``--retriever NAME``) when it is
    given, else those the tracer marks as retrievers."""
    if retriever is not None:
        return [s for s in spans if name_of(s) == retriever]
    return [s for s in spans if is_retriever(s)]


@dataclass(slots=True)
class Retrieval:
    """One retriever span of a trace as an importer read it: its documents, in rank order."""

    span_id: str
    question: Any
    """The question it was asked (the span's input, else its trace's)."""
    contents: list[Any]
    """Its documents' texts (none: the retriever found nothing)."""
    ids: list[Any] | None = None
    """Each document's own id (kept only when every document has one)."""
    scores: list[float] | None = None
    """Each document's retrieval score, where every document has one."""
    more: dict[str, Any] = field(default_factory=dict)
    """More fields of its golden (people's labels, judges' verdicts the tracer kept)."""


def trace_goldens(source: str, trace: str, retrievals: Sequence[Retrieval], *,
                  response: Any = None, reference: Any = None) -> tuple[list[Golden], int]:
    """One trace's goldens, as RAGAS-shaped rows: one a retrieval that found documents, named
    by the trace alone when it made one retrieval (else trace:span); and how many found none."""
    out: list[Golden] = []
    empty = 0
    for retrieval in retrievals:
        if not retrieval.contents:
            empty += 1
            continue
        span = retrieval.span_id
        golden: Golden = {
            "id": trace if len(retrievals) == 1 else f"{trace}:{span}",
            "user_input": retrieval.question, "retrieved_contexts": retrieval.contents,
            "metadata": {"source": source, "trace_id": trace, "span_id": span}}
        if retrieval.ids is not None and all(i is not None for i in retrieval.ids):
            golden["retrieved_context_ids"] = [str(i) for i in retrieval.ids]
        if retrieval.scores is not None:
            golden["retrieved_context_scores"] = retrieval.scores
        if response is not None:
            golden["response"] = response
        if reference is not None:
            golden["reference"] = reference
        golden.update(retrieval.more)
        out.append(golden)
    return out, empty


def looked_for(default: str, retriever: str | None) -> str:
    """What a file with no golden was searched for, in a sentence's words."""
    return default if retriever is None else f"a span named '{retriever}' with documents"


def gathered(traces: Iterable[tuple[list[Golden], int]], spans: int, name: str,
             notices: list[str], looked: str) -> list[Golden]:
    """Every trace's goldens (each given with how many of its retrievers found nothing, which
    are said once), or an InputError saying what was looked for among ``spans`` spans."""
    out: list[Golden] = []
    empty = 0
    for found, none in traces:
        out += found
        empty += none
    if empty:
        notices.append(f"{empty} retriever span{'s' if empty != 1 else ''} found no document; "
                       "left out (a golden needs ranked chunks).")
    if not out:
        raise InputError(name, f"no retriever span with documents among {spans} spans (looked "
                         f"for {looked}).")
    return out
