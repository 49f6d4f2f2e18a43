"""Write the tracer fixtures of tests/fixtures/, made by the tracers' own libraries.

openinference-spans.json: OTLP JSON made by the real libraries.

A RAG pipeline instrumented as OpenInference describes it (a CHAIN root span, a RETRIEVER span
with retrieval.documents.{i}.document.{id,content,score,metadata}, an LLM span), recorded with
the OpenTelemetry SDK, encoded by OpenTelemetry's own OTLP encoder and written with protobuf's
JSON mapping: the file a collector's file exporter (or Phoenix's OTLP export) writes. Three
traces: two questions, one trace whose retriever found nothing.

mlflow-traces.json: MLflow 3 traces as ``Trace.to_json()`` writes them (a JSON list of them),
recorded with ``@mlflow.trace`` (a CHAIN calling a RETRIEVER that returns ``Document``s with
``doc_uri`` and ``chunk_id``), one with an ``expected_response`` expectation logged on it.

Run (the libraries are not the tool's dependencies):
  python -m venv /tmp/otel && /tmp/otel/bin/pip install opentelemetry-sdk \\
      opentelemetry-exporter-otlp-proto-common openinference-semantic-conventions mlflow-skinny
  /tmp/otel/bin/python scripts/tracer_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
OUT = FIXTURES / "openinference-spans.json"
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
DOCS = SpanAttributes.RETRIEVAL_DOCUMENTS

PIPELINE = [
    ("What is the minimum balance for a savings account?",
     "₹10,000 in urban branches.",
     [("kb-101", "Minimum balance is ₹10,000 for urban branches.", 0.91),
      ("kb-007", "KYC must be renewed every 8 years. [b]not markup[/b]", 0.42),
      ("kb-102", "Rural branches need ₹2,500 🏦.", 0.77)]),
    ("When does NEFT run?", "Round the clock, every day.",
     [("kb-300", "NEFT runs 24x7, including holidays.", 0.88),
      ("kb-301", "עברית: RTL text about RTGS.", 0.12)]),
    ("Who signs a joint account form?", "Every holder.", []),
]


def openinference() -> None:
    """Record the traces and write the OTLP JSON."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-demo"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-demo")
    for question, answer, found in PIPELINE:
        with tracer.start_as_current_span("query") as root:
            root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, question)
            with tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
                retriever.set_attribute(SpanAttributes.INPUT_VALUE, question)
                for i, (doc_id, content, score) in enumerate(found):
                    prefix = f"{DOCS}.{i}."
                    retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, doc_id)
                    retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_CONTENT, content)
                    retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, score)
                    retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_METADATA,
                                            json.dumps({"source": "kb.md"}))
            with tracer.start_as_current_span("generate") as llm:
                llm.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
                llm.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
    request = encode_spans(exporter.get_finished_spans())
    OUT.write_text(json.dumps(MessageToDict(request), indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT}")


def mlflow_traces() -> None:
    """Record the pipeline with MLflow's tracing and write each trace's to_json(), as a list."""
    import os
    import tempfile

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # no server, no database: a scratch store
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow
    from mlflow.entities import Document, SpanType

    mlflow.set_tracking_uri(Path(tempfile.mkdtemp()).as_uri())
    mlflow.set_experiment("rag")

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def retrieve(question: str) -> list[Document]:
        found = next(docs for q, _, docs in PIPELINE if q == question)
        return [Document(page_content=content, metadata={"doc_uri": "kb.md", "chunk_id": doc})
                for doc, content, _ in found]

    @mlflow.trace(span_type=SpanType.CHAIN)
    def answer(question: str) -> str:
        retrieve(question)
        return next(a for q, a, _ in PIPELINE if q == question)

    traces = []
    for n, (question, _, _) in enumerate(PIPELINE):
        answer(question)
        trace_id = mlflow.get_last_active_trace_id()
        assert trace_id is not None
        if n == 0:
            mlflow.log_expectation(trace_id=trace_id, name="expected_response",
                                   value="₹10,000 in urban branches; ₹2,500 in rural ones.")
        traces.append(json.loads(mlflow.get_trace(trace_id).to_json()))
    out = FIXTURES / "mlflow-traces.json"
    out.write_text(json.dumps(traces, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def main() -> None:
    """Write every fixture."""
    openinference()
    mlflow_traces()


if __name__ == "__main__":
    main()
