"""OpenInference traces (Arize Phoenix and every OpenInference instrumentor) as goldens.

Reads two shapes of the same spans:

- OTLP JSON: one ``ExportTraceServiceRequest`` document (``{"resourceSpans": [...]}``), or
  JSON lines of them, as an OpenTelemetry collector's file exporter writes them; trace and span
  ids in hex (the OTLP JSON rule) or base64 (protobuf's JSON mapping);
- spans as the OpenTelemetry SDK writes them (``ReadableSpan.to_json()``, what its
  ConsoleSpanExporter prints: one a line, or pretty-printed one after another);
- Phoenix's spans dataframe (``get_spans_dataframe()``, or a saved ``TraceDataset``) as
  parquet, a JSON list of records or JSON lines: a row a span, with ``context.trace_id``,
  ``context.span_id``, ``parent_id``, ``span_kind`` and its attributes as ``attributes.*``
  columns, flat (``attributes.retrieval.documents``) or nested (``attributes.retrieval``).

Every RETRIEVER span (``openinference.span.kind``; or every span named ``--retriever NAME``)
is one golden:

- its ``input.value`` the question (else its trace's root span's);
- ``retrieval.documents.{i}.document.content`` the ranked chunks, with ``.id`` and ``.score``
  kept as RAGAS's ``retrieved_context_ids`` and ``retrieved_context_scores``;
- the root span's ``output.value`` (else the trace's last LLM span's) the response;
- the trace and span ids in the golden's metadata, the trace id its id (``TRACE:SPAN`` when a
  trace holds several retrievers).

Nothing here validates a golden: the rows go through ``formats.validate_golden`` as any file's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError
from annotator.importers.spans import (
    Retrieval,
    gathered,
    hex_id,
    instant,
    looked_for,
    retrievers,
    trace_goldens,
)

NAME = "openinference"
KIND = "openinference.span.kind"
DOCUMENT = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(content|id|score)$")
DATAFRAME_KEYS = {"context.trace_id", "span_kind"}
"""The columns every Phoenix spans dataframe holds."""
ATTRIBUTES = "attributes."


def is_otlp(document: Any) -> bool:
    """Whether a parsed JSON document is an OTLP trace export."""
    return isinstance(document, dict) and isinstance(document.get("resourceSpans"), list)


def is_span_row(document: Any) -> bool:
    """Whether a parsed value is a row of Phoenix's spans dataframe."""
    return isinstance(document, dict) and set(document) >= DATAFRAME_KEYS


def is_sdk_span(document: Any) -> bool:
    """Whether a parsed value is one span as the OpenTelemetry SDK writes it
    (``ReadableSpan.to_json()``, what its ConsoleSpanExporter prints): ``context`` holding
    ``trace_id`` and ``span_id``, and ``attributes`` as one flat object."""
    if not isinstance(document, dict):
        return False
    context = document.get("context")
    return (isinstance(context, dict) and "trace_id" in context and "span_id" in context
            and isinstance(document.get("attributes"), dict))


def _is_row(document: Any) -> bool:
    return is_span_row(document) or is_sdk_span(document)


def detect(document: Any) -> bool:
    """Whether a parsed document (or a file's rows) is OpenInference spans, in any shape."""
    if isinstance(document, list):
        return bool(document) and all(map(_is_row, document))
    return is_otlp(document) or _is_row(document)


KIND_OF_FILE = ("an OpenInference trace export (OTLP JSON's 'resourceSpans', the OpenTelemetry "
                "SDK's spans with 'context' and 'attributes', or Phoenix's spans dataframe with "
                "'context.trace_id' and 'span_kind')")


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


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """A dataframe's attribute value as the flat keys OTLP gives (``retrieval.documents.0.
    document.content``), however deep pandas left it nested."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}.{key}" if prefix else str(key), inner, out)
    elif _is_records(value):
        for i, inner in enumerate(value):
            _flat(f"{prefix}.{i}", inner, out)
    elif value is not None:
        out[prefix] = value


def _sdk_span(span: dict[str, Any], line: int | None) -> dict[str, Any]:
    """A span as the OpenTelemetry SDK writes it (ids as 0x-prefixed hex)."""
    context = span["context"]
    attributes: dict[str, Any] = {}
    _flat("", span["attributes"], attributes)
    return {"trace": hex_id(context.get("trace_id")), "span": hex_id(context.get("span_id")),
            "parent": hex_id(span.get("parent_id")), "start": instant(span.get("start_time")),
            "name": span.get("name"), "attributes": attributes, "line": line}


def _is_records(value: Any) -> bool:
    """Whether a value is a non-empty list of objects (flattened by index, as OTLP lists)."""
    return isinstance(value, list | tuple) and bool(value) and all(
        isinstance(v, dict) for v in value)


def _row_documents(value: Any) -> list[dict[str, Any]] | None:
    """A dataframe row's ``retrieval.documents`` column read at once, as ``_documents`` reads
    the flat keys (``document.content`` in each object, or ``document`` holding ``content``):
    each document's content, id and score where given, a document giving none left out; None
    when the column is no list of objects (then it is flattened as any attribute)."""
    if not _is_records(value):
        return None
    out = []
    for item in value:
        inner = item.get("document")
        nested = isinstance(inner, dict)
        found = {}
        for name in ("content", "id", "score"):
            given = inner.get(name) if nested else item.get(f"document.{name}")
            if given is not None and not (isinstance(given, dict | list | tuple) and (
                    isinstance(given, dict) or _is_records(given))):
                found[name] = given
        if found:
            out.append(found)
    return out


def _row_span(row: dict[str, Any], line: int | None, index: int) -> dict[str, Any]:
    """A spans dataframe's row as a span (its documents read at once, not flattened)."""
    attributes: dict[str, Any] = {}
    documents = None
    for column, value in row.items():
        if str(column).startswith(ATTRIBUTES):
            key = str(column)[len(ATTRIBUTES):]
            if key == "retrieval.documents" and (read := _row_documents(value)) is not None:
                documents = read
                continue
            _flat(key, value, attributes)
    attributes.setdefault(KIND, row.get("span_kind"))
    return {"trace": hex_id(row.get("context.trace_id")),
            "span": hex_id(row.get("context.span_id")) or f"row{index}",
            "parent": hex_id(row.get("parent_id")), "start": instant(row.get("start_time")),
            "name": row.get("name"), "attributes": attributes, "line": line,
            "documents": documents}


def _spans(documents: Iterable[tuple[int | None, Any]], name: str) -> list[dict[str, Any]]:
    """Every span of every request or dataframe row, its attributes as a flat dict, ids in
    hex."""
    out: list[dict[str, Any]] = []
    for line, document in documents:
        if isinstance(document, list) or _is_row(document):
            for row in document if isinstance(document, list) else [document]:
                if is_sdk_span(row):
                    out.append(_sdk_span(row, line))
                    continue
                if not is_span_row(row):
                    raise InputError(name, "this row is not a span of Phoenix's spans dataframe "
                                     "(no 'context.trace_id' and 'span_kind').", line=line)
                out.append(_row_span(row, line, len(out)))
            continue
        if not is_otlp(document):
            raise InputError(name, "this line is not an OTLP trace export (no 'resourceSpans' "
                             "list) in a file of them.", line=line)
        for resource in document["resourceSpans"]:
            for scope in (resource or {}).get("scopeSpans") or []:
                for span in (scope or {}).get("spans") or []:
                    attributes = {a.get("key"): _value(a.get("value"))
                                  for a in span.get("attributes") or [] if isinstance(a, dict)}
                    out.append({"trace": hex_id(span.get("traceId")),
                                "span": hex_id(span.get("spanId")),
                                "parent": hex_id(span.get("parentSpanId")),
                                "start": instant(span.get("startTimeUnixNano")),
                                "name": span.get("name"), "attributes": attributes,
                                "line": line})
    return out


def rows(documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str], *,
         retriever: str | None = None) -> list[dict[str, Any]]:
    """The goldens (as RAGAS-shaped objects) of OTLP requests or dataframe rows given as
    (line, document); ``retriever`` names the spans to read when they are not RETRIEVERs."""
    spans = _spans(documents, name)
    by_trace: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    repeated = 0
    for span in spans:
        key = (span["trace"], span["span"])
        if key in seen:  # an exporter that wrote a span twice (a retried batch): one golden
            repeated += 1
            continue
        seen.add(key)
        by_trace.setdefault(span["trace"], []).append(span)
    if repeated:
        notices.append(f"{repeated:,} span{' is' if repeated == 1 else 's are'} written twice "
                       "(the same trace and span id); each is read once.")
    ordered = sorted((sorted(members, key=lambda s: s["start"]) for members in
                      by_trace.values()), key=lambda members: members[0]["start"])
    # Traces in the order they ran, whatever order the export lists its spans in.
    return gathered((_trace_goldens(members[0]["trace"], members, retriever)
                     for members in ordered), len(spans), name, notices,
                    looked_for(f"'{KIND}' = RETRIEVER and "
                               "'retrieval.documents.N.document.content'", retriever))


def _documents(span: dict[str, Any]) -> list[dict[str, Any]]:
    """A retriever span's documents, in rank order."""
    if span.get("documents") is not None:  # read at once from a dataframe's row
        return list(span["documents"])
    found: dict[int, dict[str, Any]] = {}
    for key, value in span["attributes"].items():
        if (match := DOCUMENT.match(str(key))) is not None:
            found.setdefault(int(match[1]), {})[match[2]] = value
    return [found[i] for i in sorted(found)]


def _trace_goldens(trace: str, members: list[dict[str, Any]], retriever: str | None
                   ) -> tuple[list[dict[str, Any]], int]:
    """One trace's goldens (its spans in start order), and how many of its retrievers found
    no document."""
    chosen = retrievers(members, retriever, lambda s: s["attributes"].get(KIND) == "RETRIEVER",
                        lambda s: s["name"])
    root = next((s for s in members if not s["parent"]), None)
    root_attributes = root["attributes"] if root is not None else {}
    llm = [s for s in members if s["attributes"].get(KIND) == "LLM"]
    response = root_attributes.get("output.value") or (
        llm[-1]["attributes"].get("output.value") if llm else None)
    found = []
    for span in chosen:
        ranked = _documents(span)
        found.append(Retrieval(
            span["span"], span["attributes"].get("input.value")
            or root_attributes.get("input.value"), [d.get("content") for d in ranked],
            [d.get("id") for d in ranked],
            [float(d["score"]) for d in ranked]
            if all(isinstance(d.get("score"), int | float) for d in ranked) else None))
    return trace_goldens(NAME, trace, found, response=response)
