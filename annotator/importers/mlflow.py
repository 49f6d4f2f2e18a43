"""MLflow 3 traces as goldens: ``Trace.to_json()`` documents, a JSON list of them, or JSON lines.

A trace is ``{"info": {...}, "data": {"spans": [...]}}``; a span's attributes hold JSON text
(``mlflow.spanType``, ``mlflow.spanInputs``, ``mlflow.spanOutputs``). Every RETRIEVER span is
one golden:

- its inputs the question (a string, or the one string among its arguments: ``question``,
  ``query``, ``input`` or ``user_input`` first); else the trace's inputs;
- its outputs, a list of ``Document`` (``page_content``, ``metadata.doc_uri``,
  ``metadata.chunk_id``, ``id``), the ranked chunks, each named by its ``chunk_id`` (else its
  ``id``) as ``retrieved_context_ids``;
- the trace's outputs (``mlflow.traceOutputs``, else its root span's) the response;
- an expectation named ``expected_response`` (or ``expected_answer``, ``reference``,
  ``ground_truth``) among the trace's assessments the reference answer;
- the trace and span ids in the golden's metadata, the trace id its id (``TRACE:SPAN`` when a
  trace holds several retrievers).

Nothing here validates a golden: the rows go through ``formats.validate_golden``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError
from annotator.importers.spans import gathered

NAME = "mlflow"
QUESTION_KEYS = ("question", "query", "input", "user_input")
REFERENCE_NAMES = ("expected_response", "expected_answer", "reference", "ground_truth")


def is_trace(document: Any) -> bool:
    """Whether a parsed JSON value is an MLflow trace (or a non-empty list of them)."""
    if isinstance(document, list):
        return bool(document) and all(is_trace(item) for item in document)
    return (isinstance(document, dict) and isinstance(document.get("info"), dict)
            and isinstance((document.get("data") or {}).get("spans"), list))


detect = is_trace
KIND_OF_FILE = "an MLflow trace export (Trace.to_json(): 'info' and 'data.spans')"


def _decoded(text: Any) -> Any:
    """An attribute's JSON text as a value (a value already decoded stays as it is)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _question(given: Any) -> str | None:
    """The question among a span's inputs."""
    if isinstance(given, str):
        return given
    if isinstance(given, dict):
        for key in QUESTION_KEYS:
            if isinstance(given.get(key), str):
                return str(given[key])
        texts = [v for v in given.values() if isinstance(v, str)]
        if len(texts) == 1:
            return texts[0]
    return None


def _reference(info: dict[str, Any]) -> str | None:
    for assessment in info.get("assessments") or []:
        if (isinstance(assessment, dict) and assessment.get("assessment_name") in REFERENCE_NAMES
                and isinstance(value := (assessment.get("expectation") or {}).get("value"), str)):
            return value
    return None


def rows(documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str]
         ) -> list[dict[str, Any]]:
    """The goldens (as RAGAS-shaped objects) of MLflow traces given as (line, document)."""
    traces = []
    for line, document in documents:
        if not is_trace(document):
            raise InputError(name, "this is not an MLflow trace (an object with 'info' and "
                             "'data.spans', as Trace.to_json() writes it).", line=line)
        traces += document if isinstance(document, list) else [document]
    return gathered(map(_trace_goldens, traces),
                    sum(len(trace["data"]["spans"]) for trace in traces), name, notices,
                    "'mlflow.spanType' = RETRIEVER with a list of documents in "
                    "'mlflow.spanOutputs'")


def _trace_goldens(trace: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """One trace's goldens, and how many of its retrievers returned no document."""
    info = trace["info"]
    trace_id = str(info.get("trace_id") or info.get("request_id") or "")
    meta = info.get("trace_metadata") or {}
    spans = trace["data"]["spans"]
    root = next((s for s in spans if not s.get("parent_span_id")), None)
    retrievers = [(s, s.get("attributes") or {}) for s in spans
                  if _decoded((s.get("attributes") or {}).get("mlflow.spanType")) == "RETRIEVER"]
    response = _decoded(meta.get("mlflow.traceOutputs"))
    if response is None and root is not None:
        response = _decoded((root.get("attributes") or {}).get("mlflow.spanOutputs"))
    reference = _reference(info)
    out, empty = [], 0
    for span, attributes in retrievers:
        found = _decoded(attributes.get("mlflow.spanOutputs"))
        docs = [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []
        if not docs:
            empty += 1
            continue
        span_id = str(span.get("span_id") or "")
        golden: dict[str, Any] = {
            "id": trace_id if len(retrievers) == 1 else f"{trace_id}:{span_id}",
            "user_input": _question(_decoded(attributes.get("mlflow.spanInputs")))
            or _question(_decoded(meta.get("mlflow.traceInputs"))),
            "retrieved_contexts": [d.get("page_content") for d in docs],
            "metadata": {"source": NAME, "trace_id": trace_id, "span_id": span_id},
        }
        ids = [(d.get("metadata") or {}).get("chunk_id") or d.get("id") for d in docs]
        if all(i is not None for i in ids):
            golden["retrieved_context_ids"] = [str(i) for i in ids]
        if isinstance(response, str):
            golden["response"] = response
        if reference is not None:
            golden["reference"] = reference
        out.append(golden)
    return out, empty
