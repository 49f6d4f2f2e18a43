"""OpenInference traces (Arize Phoenix and every OpenInference instrumentor) as goldens.

Reads OTLP JSON: one ``ExportTraceServiceRequest`` document (``{"resourceSpans": [...]}``), or
JSON lines of them, as an OpenTelemetry collector's file exporter writes them; trace and span
ids in hex (the OTLP JSON rule) or base64 (protobuf's JSON mapping). Every RETRIEVER span
(``openinference.span.kind``) is one golden:

- its ``input.value`` the question (else its trace's root span's);
- ``retrieval.documents.{i}.document.content`` the ranked chunks, with ``.id`` and ``.score``
  kept as RAGAS's ``retrieved_context_ids`` and ``retrieved_context_scores``;
- the root span's ``output.value`` (else the trace's last LLM span's) the response;
- the trace and span ids in the golden's metadata, the trace id its id (``TRACE:SPAN`` when a
  trace holds several retrievers).

Nothing here validates a golden: the rows go through ``formats.validate_golden`` as any file's.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError
from annotator.importers.spans import gathered

NAME = "openinference"
KIND = "openinference.span.kind"
DOCUMENT = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(content|id|score)$")


def is_otlp(document: Any) -> bool:
    """Whether a parsed JSON document is an OTLP trace export."""
    return isinstance(document, dict) and isinstance(document.get("resourceSpans"), list)


detect = is_otlp
KIND_OF_FILE = "an OpenInference (OTLP JSON) trace export ('resourceSpans')"


def _hex(given: Any) -> str:
    """A trace or span id as hex, however the file wrote it."""
    text = str(given or "")
    if re.fullmatch(r"[0-9a-fA-F]+", text) and len(text) in (16, 32):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _value(value: Any) -> Any:
    """An OTLP AnyValue as Python (an int64 is a string in JSON)."""
    if not isinstance(value, dict):
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    return None


def _spans(documents: Iterable[tuple[int | None, Any]], name: str) -> list[dict[str, Any]]:
    """Every span of every request, its attributes as a dict, ids in hex."""
    out = []
    for line, document in documents:
        if not is_otlp(document):
            raise InputError(name, "this line is not an OTLP trace export (no 'resourceSpans' "
                             "list) in a file of them.", line=line)
        for resource in document["resourceSpans"]:
            for scope in (resource or {}).get("scopeSpans") or []:
                for span in (scope or {}).get("spans") or []:
                    attributes = {a.get("key"): _value(a.get("value"))
                                  for a in span.get("attributes") or [] if isinstance(a, dict)}
                    out.append({"trace": _hex(span.get("traceId")),
                                "span": _hex(span.get("spanId")),
                                "parent": _hex(span.get("parentSpanId")),
                                "start": int(span.get("startTimeUnixNano") or 0),
                                "name": span.get("name"), "attributes": attributes,
                                "line": line})
    return out


def rows(documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str]
         ) -> list[dict[str, Any]]:
    """The goldens (as RAGAS-shaped objects) of OTLP requests given as (line, document)."""
    spans = _spans(documents, name)
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(span["trace"], []).append(span)
    return gathered((_trace_goldens(trace, sorted(members, key=lambda s: s["start"]))
                     for trace, members in by_trace.items()), len(spans), name, notices,
                    f"'{KIND}' = RETRIEVER and 'retrieval.documents.N.document.content'")


def _documents(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """A retriever span's documents, in rank order."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if (match := DOCUMENT.match(str(key))) is not None:
            found.setdefault(int(match[1]), {})[match[2]] = value
    return [found[i] for i in sorted(found)]


def _trace_goldens(trace: str, members: list[dict[str, Any]]
                   ) -> tuple[list[dict[str, Any]], int]:
    """One trace's goldens (its spans in start order), and how many of its retrievers found
    no document."""
    retrievers = [s for s in members if s["attributes"].get(KIND) == "RETRIEVER"]
    root = next((s for s in members if not s["parent"]), None)
    root_attributes = root["attributes"] if root is not None else {}
    llm = [s for s in members if s["attributes"].get(KIND) == "LLM"]
    response = root_attributes.get("output.value") or (
        llm[-1]["attributes"].get("output.value") if llm else None)
    out, empty = [], 0
    for span in retrievers:
        ranked = _documents(span["attributes"])
        if not ranked:
            empty += 1
            continue
        golden: dict[str, Any] = {
            "id": trace if len(retrievers) == 1 else f"{trace}:{span['span']}",
            "user_input": span["attributes"].get("input.value")
            or root_attributes.get("input.value"),
            "retrieved_contexts": [d.get("content") for d in ranked],
            "metadata": {"source": NAME, "trace_id": trace, "span_id": span["span"]},
        }
        if all(d.get("id") is not None for d in ranked):
            golden["retrieved_context_ids"] = [str(d["id"]) for d in ranked]
        if all(isinstance(d.get("score"), (int, float)) for d in ranked):
            golden["retrieved_context_scores"] = [float(d["score"]) for d in ranked]
        if response is not None:
            golden["response"] = response
        out.append(golden)
    return out, empty
