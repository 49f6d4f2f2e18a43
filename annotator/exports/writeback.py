"""People's labels written back in the shape each tracer takes them, as files (no network).

Only goldens that came from a tracer carry what a tracer needs to find a chunk again: the
trace and span ids an importer kept in their metadata, and the document's own id. Each label
of a person on such a golden's chunk becomes:

- ``mlflow-feedback`` (JSONL): the keyword arguments of ``mlflow.log_feedback`` (trace_id,
  span_id, name, value, source, rationale, metadata with the chunk_index MLflow's own
  per-chunk scorer gives), one line a label; named like the judge, so MLflow's
  ``judge.align()`` pairs people's feedback with the judge's own assessments, and an import of
  the traces brings the labels back;
- ``phoenix-annotations`` (JSON): the body Phoenix's ``POST /v1/document_annotations`` takes,
  one document annotation a label (span id, document position, result label/score/explanation);
- ``langfuse-scores`` (CSV): one score a label by trace and observation id, as Langfuse's
  ``create_score`` takes it, with the document's id and rank beside it.

An unsure answer is no verdict and is left out; a distractor is written as noise with its kind.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from annotator.errors import SessionError
from annotator.formats import csv_cell
from annotator.store.session import Session
from annotator.verdict import kind_of

FORMATS = ("mlflow-feedback", "phoenix-annotations", "langfuse-scores")
DEFAULT_NAME = "chunk_relevance"
"""The feedback's name when no judge names it."""
PAGE = 500


@dataclass(frozen=True, slots=True)
class Feedback:
    """One person's label on one chunk of a traced golden."""

    trace_id: str
    span_id: str | None
    annotator: str
    rank: int
    document_id: str | None
    verdict: int
    word: str
    note: str | None


def feedback(session: Session, annotator: str | None) -> Iterator[Feedback]:
    """Every label (of ``annotator``, or of everyone) on a chunk of a golden with a trace id."""
    people = [annotator] if annotator else session.annotators()
    ids = session.golden_ids()
    found = False
    for start in range(0, len(ids), PAGE):
        page = ids[start:start + PAGE]
        labels = {person: session.labels(person, page) for person in people}
        for golden in session.goldens(page):
            trace = golden.metadata.get("trace_id")
            if not isinstance(trace, str) or not trace:
                continue
            found = True
            span = golden.metadata.get("span_id")
            for person in people:
                for chunk in golden.chunks:
                    label = labels[person].get(chunk.id)
                    answer = None if label is None else label.answer
                    if answer is None or (verdict := kind_of(answer).verdict) is None:
                        continue  # pending or unsure: nothing to say yet
                    assert label is not None
                    yield Feedback(trace, span if isinstance(span, str) else None, person,
                                   chunk.rank, chunk.doc_id, verdict, kind_of(answer).word,
                                   label.note)
    if not found:
        raise SessionError(f"No golden of {session.where} came from a tracer (none holds a "
                           "trace_id in its metadata): import the traces with 'annotator "
                           "import FILE --from openinference|mlflow|langfuse' to write labels "
                           "back.")


def write(fmt: str, session: Session, out: IO[str], annotator: str | None, name: str) -> int:
    """Write the labels in ``fmt`` (one of FORMATS); return how many were written."""
    items = feedback(session, annotator)
    if fmt == "mlflow-feedback":
        count = 0
        for f in items:
            out.write(json.dumps({
                "trace_id": f.trace_id, "span_id": f.span_id, "name": name,
                "value": bool(f.verdict),
                "source": {"source_type": "HUMAN", "source_id": f.annotator},
                "rationale": f.note,
                # chunk_index, as MLflow's RetrievalRelevance scorer names a span's chunk
                "metadata": {"chunk_index": f.rank - 1, "document_id": f.document_id,
                             "rank": f.rank, "answer": f.word}},
                ensure_ascii=False) + "\n")
            count += 1
        return count
    if fmt == "phoenix-annotations":
        data: list[dict[str, Any]] = [{
            "span_id": f.span_id, "document_position": f.rank - 1, "name": name,
            "annotator_kind": "HUMAN",
            "result": {"label": f.word, "score": f.verdict, "explanation": f.note},
            "metadata": {"annotator": f.annotator, "document_id": f.document_id}}
            for f in items]
        out.write(json.dumps({"data": data}, ensure_ascii=False, indent=1) + "\n")
        return len(data)
    writer = csv.writer(out)
    writer.writerow(["traceId", "observationId", "name", "value", "dataType", "comment",
                     "annotator", "documentId", "rank", "answer"])
    count = 0
    for f in items:
        writer.writerow([csv_cell(v) for v in (
            f.trace_id, f.span_id or "", name, f.verdict, "BOOLEAN", f.note or "", f.annotator,
            f.document_id or "", f.rank, f.word)])
        count += 1
    return count
