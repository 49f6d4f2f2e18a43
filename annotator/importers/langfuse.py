"""Langfuse traces as goldens: observations as the public API's ``GET /api/public/v2/
observations`` returns them (``{"data": [...], "meta": ...}``), a JSON list of them or JSON
lines (a blob-storage export), or a trace downloaded whole (``{"id", "input", "output",
"observations": [...]}``); dataset items, in the same file or in a file of their own given
beside it (GET /api/public/dataset-items), give the reference answers.

Each trace's retrieval observation is one golden: the observation named ``--retriever NAME``,
else those of type RETRIEVER, else the only SPAN whose output is a list of documents. Its
output's documents (LangChain's ``page_content``, LlamaIndex's nodes, ``content`` / ``text``
objects, or plain strings; in a list, or under ``documents`` / ``nodes`` / ``contexts``) are
the ranked chunks, with their ids and scores; its input (else the trace's) the question; the
trace's output (else its last GENERATION's) the response; the ``expectedOutput`` of the
dataset item whose ``sourceTraceId`` is the trace (or that a dataset run item links to it)
the reference. The trace and observation ids go in the golden's metadata (``span_id`` holds
the observation's), the trace id is its id (``TRACE:OBSERVATION`` when it holds several).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from annotator.errors import InputError
from annotator.importers.spans import Retrieval, gathered, instant, looked_for, retrievers, trace_goldens
from annotator.untrusted import parse_json

NAME = "langfuse"
KIND_OF_FILE = ("a Langfuse export (observations with 'traceId' and 'type', or a trace with "
                "'observations')")
QUESTION_KEYS = ("question", "query", "input", "user_input")
ANSWER_KEYS = ("output", "answer", "response", "content", "text", "expected_output",
               "reference")
LIST_KEYS = ("documents", "nodes", "contexts", "chunks", "results", "source_nodes")
CONTENT_KEYS = ("page_content", "pageContent", "content", "text")
ID_KEYS = ("chunk_id", "id", "id_", "doc_id", "document_id", "node_id")


def _get(item: dict[str, Any], camel: str, snake: str) -> Any:
    """A field the API spells in camelCase and an export may spell in snake_case."""
    return item.get(camel, item.get(snake))


def _is_observation(item: Any) -> bool:
    return (isinstance(item, dict) and _get(item, "traceId", "trace_id") is not None
            and isinstance(item.get("type"), str) and "id" in item)


def _is_trace(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("observations"), list)


def _is_dataset_item(item: Any) -> bool:
    return isinstance(item, dict) and ("expectedOutput" in item or "expected_output" in item
                                       or "datasetItemId" in item or "datasetId" in item)


def dataset_items_only(document: Any) -> bool:
    """Whether a document holds dataset items and nothing else: a download of GET
    /api/public/dataset-items, whose expected outputs are the references of the traces the
    items name (given beside the observations, it is read with them)."""
    items = _items(document)
    return bool(items) and all(_is_dataset_item(i) for i in items)


def _items(document: Any) -> list[Any]:
    """A document's items: an API page's data, a list, or the one object."""
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        return list(document["data"])
    return list(document) if isinstance(document, list) else [document]


def detect(document: Any) -> bool:
    """Whether a parsed document is a Langfuse export holding observations."""
    items = _items(document)
    return (bool(items) and any(_is_observation(i) or _is_trace(i) for i in items)
            and all(_is_observation(i) or _is_trace(i) or _is_dataset_item(i) for i in items))


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return parse_json(value)  # deep, huge or broken JSON: kept as text
        except ValueError:
            return value
    return value


def _text(value: Any, keys: tuple[str, ...]) -> str | None:
    """The text a field holds: a string, or the string under one of ``keys`` (else its only
    string)."""
    value = _decoded(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key])
        texts = [v for v in value.values() if isinstance(v, str)]
        if len(texts) == 1:
            return texts[0]
    return None


def _document(item: Any) -> tuple[str, Any, Any] | None:
    """One retrieved document as (content, id, score), or None when it is none."""
    if isinstance(item, str):
        return item, None, None
    if not isinstance(item, dict):
        return None
    inner = item.get("node")
    node: dict[str, Any] = inner if isinstance(inner, dict) else item  # NodeWithScore
    content = next((node[k] for k in CONTENT_KEYS if isinstance(node.get(k), str)), None)
    if content is None:
        return None
    given = node.get("metadata")
    meta: dict[str, Any] = given if isinstance(given, dict) else {}
    ident = next((v for k in ID_KEYS for v in (meta.get(k), node.get(k)) if v is not None), None)
    score = item.get("score", node.get("score", meta.get("score")))
    return content, ident, score if isinstance(score, int | float) else None


def documents(output: Any) -> list[tuple[str, Any, Any]] | None:
    """An observation's output as ranked documents, or None when it holds none."""
    output = _decoded(output)
    if isinstance(output, dict):
        output = next((output[k] for k in LIST_KEYS if isinstance(output.get(k), list)), None)
    if not isinstance(output, list) or not output:
        return None
    found = [_document(item) for item in output]
    return None if any(d is None for d in found) else [d for d in found if d is not None]


def rows(documents_given: Iterable[tuple[int | None, Any]], name: str, notices: list[str], *,
         retriever: str | None = None) -> list[dict[str, Any]]:
    """The goldens (as RAGAS-shaped objects) of a Langfuse export given as (line, document)."""
    observations: list[dict[str, Any]] = []
    traces: dict[str, dict[str, Any]] = {}
    items: list[dict[str, Any]] = []
    for line, document in documents_given:
        for item in _items(document):
            if _is_trace(item):
                traces[str(item.get("id"))] = item
                observations += [o for o in item["observations"] if _is_observation(o)]
            elif _is_observation(item):
                observations.append(item)
            elif _is_dataset_item(item):
                items.append(item)
            else:
                raise InputError(name, "this is not a Langfuse observation (with 'traceId', "
                                 "'type' and 'id'), trace (with 'observations') or dataset item.",
                                 line=line)
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for observation in observations:
        by_trace.setdefault(str(_get(observation, "traceId", "trace_id")), []).append(observation)
    references = _references(items)
    ambiguous: list[list[str]] = []
    found = gathered(
        (_trace_goldens(trace, sorted(members, key=lambda o: instant(
            _get(o, "startTime", "start_time"))), traces.get(trace), references.get(trace),
            retriever, ambiguous) for trace, members in by_trace.items()),
        len(observations), name, notices,
        looked_for("an observation of type RETRIEVER, or the only SPAN whose output is a list "
                   "of documents", retriever))
    if ambiguous:
        names = sorted({n for names in ambiguous for n in names})
        notices.append(f"{len(ambiguous)} trace{' holds' if len(ambiguous) == 1 else 's hold'} "
                       f"several spans with documents ({', '.join(names[:3])}); left out: name "
                       "the retrieval with --retriever NAME.")
    return found


def _references(items: list[dict[str, Any]]) -> dict[str, str]:
    """Each trace's reference answer, from the dataset items that name it."""
    by_item = {str(i.get("id")): i for i in items if "datasetItemId" not in i}
    out: dict[str, str] = {}
    for item in items:
        if "datasetItemId" in item:  # a dataset run item: links an item to the trace it ran
            source, trace = by_item.get(str(item["datasetItemId"])), _get(item, "traceId",
                                                                          "trace_id")
        else:
            source, trace = item, _get(item, "sourceTraceId", "source_trace_id")
        if source is not None and trace is not None:
            reference = _text(_get(source, "expectedOutput", "expected_output"), ANSWER_KEYS)
            if reference is not None:
                out[str(trace)] = reference
    return out


def _trace_goldens(trace: str, members: list[dict[str, Any]], whole: dict[str, Any] | None,
                   reference: str | None, retriever: str | None, ambiguous: list[list[str]]
                   ) -> tuple[list[dict[str, Any]], int]:
    """One trace's goldens (its observations in start order), and how many of its
    retrievals found no document."""
    chosen = retrievers(members, retriever, lambda o: o.get("type") == "RETRIEVER",
                        lambda o: o.get("name"))
    if not chosen and retriever is None:
        spans = [o for o in members if o.get("type") == "SPAN" and documents(o.get("output"))]
        if len(spans) > 1:
            ambiguous.append([str(o.get("name")) for o in spans])
        chosen = spans if len(spans) == 1 else []
    root = next((o for o in members if not _get(o, "parentObservationId",
                                                "parent_observation_id")), None)
    top = whole if whole is not None else root or {}
    generations = [o for o in members if o.get("type") == "GENERATION"]
    response = _text(top.get("output"), ANSWER_KEYS) or (
        _text(generations[-1].get("output"), ANSWER_KEYS) if generations else None)
    retrievals = []
    for observation in chosen:
        found = documents(observation.get("output")) or []
        retrievals.append(Retrieval(
            str(observation["id"]), _text(observation.get("input"), QUESTION_KEYS)
            or _text(top.get("input"), QUESTION_KEYS), [content for content, _, _ in found],
            [ident for _, ident, _ in found],
            [float(score) for _, _, score in found]
            if all(score is not None for _, _, score in found) else None))
    return trace_goldens(NAME, trace, retrievals, response=response, reference=reference)
