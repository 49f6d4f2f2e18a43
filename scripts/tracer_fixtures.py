"""Write tests/fixtures/openinference-spans.json: OTLP JSON made by the real libraries.

A RAG pipeline instrumented as OpenInference describes it (a CHAIN root span, a RETRIEVER span
with retrieval.documents.{i}.document.{id,content,score,metadata}, an LLM span), recorded with
the OpenTelemetry SDK, encoded by OpenTelemetry's own OTLP encoder and written with protobuf's
JSON mapping: the file a collector's file exporter (or Phoenix's OTLP export) writes. Three
traces: two questions, one trace whose retriever found nothing.

Run (the libraries are not the tool's dependencies):
  python -m venv /tmp/otel && /tmp/otel/bin/pip install opentelemetry-sdk \\
      opentelemetry-exporter-otlp-proto-common openinference-semantic-conventions
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

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openinference-spans.json"
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


def main() -> None:
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


if __name__ == "__main__":
    main()
