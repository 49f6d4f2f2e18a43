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

The first trace also carries per-document feedback on its retriever span, as MLflow's
RetrievalRelevance scorer logs it (span_id, metadata.chunk_index): a person's (HUMAN, alice)
and a judge's (LLM_JUDGE, named retrieval_relevance), and one span-level feedback with no
chunk_index, which is not a chunk's.

mlflow-search-traces.parquet and .jsonl: mlflow.search_traces() over the same traces, the
dataframe written with to_parquet() (its 'trace' column JSON text; the assessments column,
whose values mix types, left out as pyarrow requires) and, without the 'trace' column, with
to_json(orient="records", lines=True) (so the spans and assessments columns are read).

phoenix-spans.parquet and .jsonl: the OpenInference spans sent to a Phoenix server started here
(127.0.0.1, a scratch working dir) over OTLP/HTTP and read back with the Phoenix client's
get_spans_dataframe(), written with to_parquet() and to_json(orient="records", lines=True);
phoenix-trace-dataset.parquet: the same spans as Phoenix's TraceDataset.save() writes them.

langfuse-observations.json: Langfuse's GET /api/public/v2/observations reply (an
ObservationsV2Response of ObservationV2, the SDK's own models) for two RAG traces, one whose
retrieval is a RETRIEVER observation of LangChain Documents, one a SPAN named 'vector-search'
of LlamaIndex-style nodes with scores, beside the dataset items (DatasetItem) whose
sourceTraceId names them; langfuse-trace.json: the second trace downloaded whole (trace fields
and its observations).

otel-console-spans.json and .jsonl: the same pipeline's spans as the OpenTelemetry SDK's
ConsoleSpanExporter prints them: with its default formatter (pretty-printed JSON, one span
after another) and with one a line (``formatter=lambda s: s.to_json(indent=None) + "\n"``).

Run (the libraries are not the tool's dependencies; Phoenix's TraceDataset needs pandas 2):
  python -m venv /tmp/otel && /tmp/otel/bin/pip install opentelemetry-sdk \\
      opentelemetry-exporter-otlp-proto-common openinference-semantic-conventions mlflow-skinny \\
      arize-phoenix langfuse 'pandas<3' pyarrow
  /tmp/otel/bin/python scripts/tracer_fixtures.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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
    phoenix(request)


def otel_console() -> None:
    """Print the pipeline's spans through the SDK's ConsoleSpanExporter, in both formats."""
    import io

    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    for suffix, formatter in ((".json", None), (".jsonl", lambda s: s.to_json(indent=None) + "\n")):
        out = io.StringIO()
        exporter = (ConsoleSpanExporter(out=out) if formatter is None
                    else ConsoleSpanExporter(out=out, formatter=formatter))
        provider = TracerProvider(resource=Resource.create({"service.name": "rag-demo"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("rag-demo")
        for question, answer, found in PIPELINE[:2]:
            with tracer.start_as_current_span("query") as root:
                root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
                root.set_attribute(SpanAttributes.INPUT_VALUE, question)
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
                with tracer.start_as_current_span("retrieve") as retriever:
                    retriever.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
                    retriever.set_attribute(SpanAttributes.INPUT_VALUE, question)
                    for i, (doc_id, content, score) in enumerate(found):
                        prefix = f"{DOCS}.{i}."
                        retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, doc_id)
                        retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_CONTENT,
                                                content)
                        retriever.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, score)
        provider.shutdown()
        target = FIXTURES / f"otel-console-spans{suffix}"
        target.write_text(out.getvalue(), encoding="utf-8")
        print(f"wrote {target}")


def phoenix(request: Any) -> None:
    """Send the spans to a Phoenix server started here and write its spans dataframe, and the
    same spans as Phoenix's TraceDataset."""
    import shutil
    import subprocess
    import sys
    import tempfile
    import time
    import urllib.request

    from phoenix.client import Client
    from phoenix.trace.otel import decode_otlp_span
    from phoenix.trace.trace_dataset import TraceDataset

    work = tempfile.mkdtemp()
    env = {**os.environ, "PHOENIX_WORKING_DIR": work, "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": "6016", "PHOENIX_GRPC_PORT": "4327"}
    server = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = "http://127.0.0.1:6016"
        for _ in range(600):  # the server is up when its health check answers
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        urllib.request.urlopen(urllib.request.Request(
            f"{base}/v1/traces", data=request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf"}))
        spans = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
        client = Client(base_url=base)
        frame = client.spans.get_spans_dataframe(project_identifier="default")
        while len(frame) < spans:  # spans are stored a moment after the reply
            time.sleep(0.1)
            frame = client.spans.get_spans_dataframe(project_identifier="default")
    finally:
        server.terminate()
        server.wait()
    frame.to_parquet(FIXTURES / "phoenix-spans.parquet")
    frame.to_json(FIXTURES / "phoenix-spans.jsonl", orient="records", lines=True,
                  force_ascii=False)
    decoded = [decode_otlp_span(s) for r in request.resource_spans for scope in r.scope_spans
               for s in scope.spans]
    saved = TraceDataset.from_spans(decoded).save(work)
    shutil.copy(Path(work) / f"trace_dataset-{saved}.parquet",
                FIXTURES / "phoenix-trace-dataset.parquet")
    print("wrote phoenix-spans.parquet, phoenix-spans.jsonl, phoenix-trace-dataset.parquet")


def mlflow_traces() -> None:
    """Record the pipeline with MLflow's tracing and write each trace's to_json(), as a list."""
    import tempfile

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # no server, no database: a scratch store
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow
    from mlflow.entities import AssessmentSource, Document, SpanType

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
            span = next(s for s in mlflow.get_trace(trace_id).data.spans
                        if s.span_type == SpanType.RETRIEVER)
            person = AssessmentSource(source_type="HUMAN", source_id="alice")
            judge = AssessmentSource(source_type="LLM_JUDGE", source_id="openai:/gpt-4o-mini")
            for index, (mine, theirs) in enumerate([("yes", "yes"), ("no", "yes"),
                                                    ("yes", "no")]):
                mlflow.log_feedback(trace_id=trace_id, span_id=span.span_id,
                                    name="retrieval_relevance", value=mine, source=person,
                                    rationale=f"alice on chunk {index + 1}",
                                    metadata={"chunk_index": index})
                mlflow.log_feedback(trace_id=trace_id, span_id=span.span_id,
                                    name="retrieval_relevance", value=theirs, source=judge,
                                    rationale=f"the judge on chunk {index + 1}",
                                    metadata={"chunk_index": index})
            mlflow.log_feedback(trace_id=trace_id, span_id=span.span_id,  # the span's average
                                name="retrieval_relevance/precision", value=0.67, source=judge)
        traces.append(json.loads(mlflow.get_trace(trace_id).to_json()))
    out = FIXTURES / "mlflow-traces.json"
    out.write_text(json.dumps(traces, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    frame = mlflow.search_traces(return_type="pandas").sort_values("request_time")
    # pyarrow wants one type a column, and feedback values mix "yes" with the span's 0.67: the
    # parquet leaves the assessments column out (the 'trace' column's JSON holds them).
    frame.drop(columns=["assessments"]).to_parquet(FIXTURES / "mlflow-search-traces.parquet")
    frame.drop(columns=["trace"]).to_json(FIXTURES / "mlflow-search-traces.jsonl",
                                          orient="records", lines=True, force_ascii=False)
    print(f"wrote {out}, mlflow-search-traces.parquet, mlflow-search-traces.jsonl")


def langfuse() -> None:
    """Write Langfuse's observations reply and a trace downloaded whole, with the SDK's models."""
    from datetime import UTC, datetime, timedelta

    from langfuse.api import DatasetItem, ObservationsV2Response, ObservationV2

    start = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    observations, items = [], []
    # One trace as LangChain's callback records it: a RETRIEVER of Documents.
    question, answer, found = PIPELINE[0]
    observations += [
        ObservationV2(id="obs-root-1", trace_id="trace-1", type="CHAIN", name="rag",
                      start_time=start, input={"question": question}, output=answer,
                      project_id="demo"),
        ObservationV2(id="obs-ret-1", trace_id="trace-1", type="RETRIEVER", name="retriever",
                      start_time=start + timedelta(milliseconds=5), parent_observation_id="obs-root-1",
                      input=question, project_id="demo",
                      output=[{"page_content": content, "metadata": {"id": doc, "source": "kb.md"},
                               "type": "Document"} for doc, content, _ in found]),
        ObservationV2(id="obs-gen-1", trace_id="trace-1", type="GENERATION", name="llm",
                      start_time=start + timedelta(milliseconds=9), parent_observation_id="obs-root-1",
                      output={"role": "assistant", "content": answer}, project_id="demo")]
    # One as a hand-instrumented app records it: a SPAN named vector-search of nodes.
    question, answer, found = PIPELINE[1]
    observations += [
        ObservationV2(id="obs-root-2", trace_id="trace-2", type="SPAN", name="rag",
                      start_time=start + timedelta(seconds=1), input=question, project_id="demo"),
        ObservationV2(id="obs-vec-2", trace_id="trace-2", type="SPAN", name="vector-search",
                      start_time=start + timedelta(seconds=1, milliseconds=3),
                      parent_observation_id="obs-root-2", input={"query": question},
                      project_id="demo",
                      output={"nodes": [{"node": {"id_": doc, "text": content}, "score": score}
                                        for doc, content, score in found]}),
        ObservationV2(id="obs-gen-2", trace_id="trace-2", type="GENERATION", name="llm",
                      start_time=start + timedelta(seconds=1, milliseconds=8),
                      parent_observation_id="obs-root-2", output=answer, project_id="demo")]
    for n, reference in ((1, "₹10,000 in urban branches."), (2, {"answer": "24x7."})):
        items.append(DatasetItem(id=f"item-{n}", status="ACTIVE", dataset_id="ds-1",
                                 dataset_name="rag-goldens", input={"question": PIPELINE[n - 1][0]},
                                 expected_output=reference, metadata=None,
                                 source_trace_id=f"trace-{n}", created_at=start, updated_at=start,
                                 media_references=[]))
    reply = ObservationsV2Response(data=observations, meta={"cursor": None})
    page = json.loads(reply.json(by_alias=True, exclude_none=True))
    page["data"] += [json.loads(item.json(by_alias=True, exclude_none=True)) for item in items]
    out = FIXTURES / "langfuse-observations.json"
    out.write_text(json.dumps(page, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    trace = {"id": "trace-2", "name": "rag", "timestamp": page["data"][3]["startTime"],
             "input": PIPELINE[1][0], "output": PIPELINE[1][1],
             "observations": [o for o in page["data"] if o.get("traceId") == "trace-2"]}
    whole = FIXTURES / "langfuse-trace.json"
    whole.write_text(json.dumps(trace, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}, {whole}")


def main() -> None:
    """Write every fixture."""
    openinference()
    otel_console()
    mlflow_traces()
    langfuse()


if __name__ == "__main__":
    main()
