"""MLflow 3 traces as goldens: ``Trace.to_json()`` documents (one, a JSON list of them, or JSON
lines), or ``mlflow.search_traces()``'s dataframe saved as parquet, JSON records or JSON lines.

A trace is ``{"info": {...}, "data": {"spans": [...]}}``; a span's attributes hold JSON text
(``mlflow.spanType``, ``mlflow.spanInputs``, ``mlflow.spanOutputs``). A ``search_traces()`` row
holds the same trace as JSON text in its ``trace`` column, or its parts in ``spans``,
``assessments`` and ``trace_metadata``. Every RETRIEVER span (or every span named
``--retriever NAME``) is one golden:

- its inputs the question (a string, or the one string among its arguments: ``question``,
  ``query``, ``input`` or ``user_input`` first); else the trace's inputs;
- its outputs, a list of ``Document`` (``page_content``, ``metadata.doc_uri``,
  ``metadata.chunk_id``, ``id``), the ranked chunks, each named by its ``chunk_id`` (else its
  ``id``) as ``retrieved_context_ids``;
- the trace's outputs (``mlflow.traceOutputs``, else its root span's) the response;
- an expectation named ``expected_response`` (or ``expected_answer``, ``reference``,
  ``ground_truth``) among the trace's assessments the reference answer;
- per-document feedback on the span (``span_id`` and ``metadata.chunk_index``, as MLflow's
  ``RetrievalRelevance`` scorer logs it and ``export --format mlflow-feedback`` writes it): a
  person's (source HUMAN) a label of theirs, with the rationale as its note; any other
  source's a verdict of the judge named like the feedback;
- the trace and span ids (hex, as MLflow's API takes them) in the golden's metadata, the trace
  id its id (``TRACE:SPAN`` when a trace holds several retrievers).

Nothing here validates a golden: the rows go through ``formats.validate_golden``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError
from annotator.importers.spans import (
    Retrieval,
    gathered,
    hex_id,
    looked_for,
    retrievers,
    trace_goldens,
)
from annotator.untrusted import parse_json

NAME = "mlflow"
QUESTION_KEYS = ("question", "query", "input", "user_input")
REFERENCE_NAMES = ("expected_response", "expected_answer", "reference", "ground_truth")
YES = {"yes", "true", "relevant", "1", "pass"}
NO = {"no", "false", "irrelevant", "not_relevant", "0", "fail"}


def is_trace(document: Any) -> bool:
    """Whether a parsed JSON value is an MLflow trace, a search_traces() row, or a non-empty
    list of them."""
    if isinstance(document, list):
        return bool(document) and all(is_trace(item) for item in document)
    return (isinstance(document, dict) and isinstance(document.get("info"), dict)
            and isinstance((document.get("data") or {}).get("spans"), list)) or _is_row(document)


def _is_row(document: Any) -> bool:
    return (isinstance(document, dict) and "trace_id" in document
            and (isinstance(document.get("spans"), list) or isinstance(document.get("trace"), str)))


detect = is_trace
KIND_OF_FILE = ("an MLflow trace export (Trace.to_json()'s 'info' and 'data.spans', or "
                "search_traces()'s 'trace_id' and 'spans')")


def _decoded(text: Any) -> Any:
    """An attribute's JSON text as a value (a value already decoded stays as it is)."""
    if not isinstance(text, str):
        return text
    try:
        return parse_json(text)  # deep, huge or broken JSON: kept as text
    except ValueError:
        return text


def _as_trace(row: dict[str, Any]) -> dict[str, Any]:
    """A search_traces() row as the trace to_json() writes."""
    if not _is_row(row):
        return row
    whole = _decoded(row.get("trace"))
    if isinstance(whole, dict) and isinstance(whole.get("info"), dict):
        return whole
    return {"info": {"trace_id": row["trace_id"], "assessments": row.get("assessments") or [],
                     "trace_metadata": row.get("trace_metadata") or {}},
            "data": {"spans": row["spans"]}}


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


def _valid(assessments: Any) -> list[dict[str, Any]]:
    """A trace's assessments that stand (not overridden by a later one)."""
    return [a for a in assessments or [] if isinstance(a, dict) and a.get("valid") is not False]


def _reference(info: dict[str, Any]) -> str | None:
    for assessment in _valid(info.get("assessments")):
        if (assessment.get("assessment_name") in REFERENCE_NAMES
                and isinstance(value := (assessment.get("expectation") or {}).get("value"), str)):
            return value
    return None


def _verdict(value: Any) -> int | None:
    """A feedback's value as a verdict; None when it is no yes or no."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return 1 if word in YES else 0 if word in NO else None
    return None


def rows(documents: Iterable[tuple[int | None, Any]], name: str, notices: list[str], *,
         retriever: str | None = None) -> list[dict[str, Any]]:
    """The goldens (as RAGAS-shaped objects) of MLflow traces given as (line, document);
    ``retriever`` names the spans to read when they are not RETRIEVERs."""
    traces = []
    for line, document in documents:
        if not is_trace(document):
            raise InputError(name, "this is not an MLflow trace (an object with 'info' and "
                             "'data.spans', as Trace.to_json() writes it, or a search_traces() "
                             "row with 'trace_id' and 'spans').", line=line)
        traces += [_as_trace(t) for t in (document if isinstance(document, list) else [document])]
    odd: list[Any] = []
    found = gathered((_trace_goldens(t, retriever, odd) for t in traces),
                     sum(len(trace["data"]["spans"]) for trace in traces), name, notices,
                     looked_for("'mlflow.spanType' = RETRIEVER with a list of documents in "
                                "'mlflow.spanOutputs'", retriever))
    if odd:
        shown = ", ".join(sorted({json.dumps(v, ensure_ascii=False)[:20] for v in odd})[:3])
        notices.append(f"{len(odd)} per-document feedback value{'s' if len(odd) != 1 else ''} "
                       f"not yes or no ({shown}); left out.")
    return found


def _per_document(info: dict[str, Any], span_id: str, k: int, odd: list[Any]
                  ) -> tuple[dict[str, list[Any]], dict[str, list[Any]], dict[str, list[Any]]]:
    """The span's per-document feedback: people's labels and notes, and judges' verdicts, each
    a list with one entry a chunk (None where nothing was said)."""
    labels: dict[str, list[Any]] = {}
    notes: dict[str, list[Any]] = {}
    judges: dict[str, list[Any]] = {}
    ordered = sorted(_valid(info.get("assessments")),
                     key=lambda a: str(a.get("last_update_time") or a.get("create_time") or ""))
    for assessment in ordered:  # the latest word on a chunk wins
        index = (assessment.get("metadata") or {}).get("chunk_index")
        feedback = assessment.get("feedback")
        if (hex_id(assessment.get("span_id")) != span_id or not isinstance(feedback, dict)
                or not str(index).isdigit() or int(str(index)) >= k):
            continue
        rank = int(str(index))
        verdict = _verdict(feedback.get("value"))
        if verdict is None:
            odd.append(feedback.get("value"))
            continue
        source = assessment.get("source") or {}
        rationale = assessment.get("rationale")
        if source.get("source_type") == "HUMAN":
            person = str(source.get("source_id") or "mlflow-user")
            labels.setdefault(person, [None] * k)[rank] = verdict
            notes.setdefault(person, [None] * k)[rank] = rationale if isinstance(
                rationale, str) else None
        else:
            judges.setdefault(str(assessment.get("assessment_name") or "mlflow-judge"),
                              [None] * k)[rank] = {
                "verdict": verdict, "reason": rationale if isinstance(rationale, str) else None}
    return labels, notes, judges


def _trace_goldens(trace: dict[str, Any], retriever: str | None, odd: list[Any]
                   ) -> tuple[list[dict[str, Any]], int]:
    """One trace's goldens, and how many of its retrievers returned no document."""
    info = trace["info"]
    trace_id = str(info.get("trace_id") or info.get("request_id") or "")
    meta = info.get("trace_metadata") or {}
    spans = trace["data"]["spans"]
    root = next((s for s in spans if not (s.get("parent_span_id") or s.get("parent_id"))), None)
    chosen = retrievers(
        spans, retriever,
        lambda s: _decoded((s.get("attributes") or {}).get("mlflow.spanType")) == "RETRIEVER",
        lambda s: s.get("name"))
    response = _decoded(meta.get("mlflow.traceOutputs"))
    if response is None and root is not None:
        response = _decoded((root.get("attributes") or {}).get("mlflow.spanOutputs"))
    found: list[Retrieval] = []
    for span in chosen:
        attributes = span.get("attributes") or {}
        outputs = _decoded(attributes.get("mlflow.spanOutputs"))
        docs = [d for d in outputs if isinstance(d, dict)] if isinstance(outputs, list) else []
        span_id = hex_id(span.get("span_id") or (span.get("context") or {}).get("span_id"))
        retrieval = Retrieval(
            span_id, _question(_decoded(attributes.get("mlflow.spanInputs")))
            or _question(_decoded(meta.get("mlflow.traceInputs"))),
            [d.get("page_content") for d in docs],
            [(d.get("metadata") or {}).get("chunk_id") or d.get("id") for d in docs])
        if docs:  # the feedback of a retrieval that found nothing is no golden's
            labels, notes, judges = _per_document(info, span_id, len(docs), odd)
            if labels:
                retrieval.more["human_labels"] = labels
                if said := {p: n for p, n in notes.items() if any(n)}:
                    retrieval.more["human_notes"] = said
            if judges:
                retrieval.more["judges"] = judges
        found.append(retrieval)
    return trace_goldens(NAME, trace_id, found,
                         response=response if isinstance(response, str) else None,
                         reference=_reference(info))
