"""Tracer imports beside their bare programs, at two sizes: `annotator import --from phoenix`
of Phoenix's spans dataframe as JSON lines (a row a span: a CHAIN root, a RETRIEVER with 10
documents, an LLM span, per trace), `--from langfuse` of Langfuse's observations as the API
lists them (one document: a CHAIN, a RETRIEVER whose output is 10 LangChain documents, a
GENERATION, per trace), and `--from mlflow` of MLflow 3 traces as a list (a CHAIN and a
RETRIEVER of 10 documents per trace, attributes JSON-encoded as MLflow stores them).

Each bare program does the same work with nothing else: the file parsed, the spans gathered by
trace, each retriever's question (its input, else the root's), documents (content, id, score)
and response (the root's output), a content hash per golden, and the goldens and chunks written
to SQLite with executemany in one transaction. Each runs in a process of its own, alternately;
prints CPU medians, their ratio and the budget (2x), peak memory, and the growth exponent of
each from the smaller size to the larger (budget: within 0.1 of the bare program's).
Run: python benchmarks/tracer_import.py [--tracer phoenix|langfuse|mlflow] [--traces 3000,30000]
[--runs 3]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import measured

BUDGET, BUDGET_EXPONENT = 2.0, 0.1
DOCUMENTS = 10

STORE = r"""
conn = sqlite3.connect(target)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("CREATE TABLE goldens (id TEXT PRIMARY KEY, position INTEGER, user_input TEXT, "
             "response TEXT, metadata TEXT, content_sha256 TEXT)")
conn.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, golden_id TEXT, rank INTEGER, "
             "text TEXT, doc_id TEXT, score REAL, UNIQUE (golden_id, rank))")
with conn:
    conn.executemany("INSERT INTO goldens VALUES (?, ?, ?, ?, ?, ?)", goldens)
    conn.executemany("INSERT INTO chunks(golden_id, rank, text, doc_id, score) "
                     "VALUES (?, ?, ?, ?, ?)", chunks)
print(len(goldens))
"""
"""Every bare program's end: the goldens and chunks it built, stored in one transaction."""

BARE = r"""
import hashlib, json, sqlite3, sys
source, target = sys.argv[1], sys.argv[2]
traces = {}
with open(source, encoding="utf-8") as lines:
    for line in lines:
        span = json.loads(line)
        traces.setdefault(span["context.trace_id"], []).append(span)
goldens, chunks = [], []
for trace_id, spans in traces.items():
    root = next(s for s in spans if s["parent_id"] is None)
    for span in spans:
        if span["attributes.openinference.span.kind"] != "RETRIEVER":
            continue
        documents = span["attributes.retrieval.documents"] or []
        question = span["attributes.input.value"] or root["attributes.input.value"]
        response = root["attributes.output.value"]
        texts = [d["document.content"] for d in documents]
        metadata = json.dumps({"trace_id": trace_id, "span_id": span["context.span_id"],
                               "retriever": span["name"]})
        digest = hashlib.sha256(json.dumps([question, response, texts, metadata]).encode())
        goldens.append((trace_id, len(goldens) + 1, question, response, metadata,
                        digest.hexdigest()))
        chunks += [(trace_id, rank, d["document.content"], d.get("document.id"),
                    d.get("document.score")) for rank, d in enumerate(documents, 1)]
""" + STORE


BARE_LANGFUSE = r"""
import hashlib, json, sqlite3, sys
source, target = sys.argv[1], sys.argv[2]
traces = {}
for item in json.load(open(source, encoding="utf-8"))["data"]:
    traces.setdefault(item["traceId"], []).append(item)
goldens, chunks = [], []
for trace_id, items in traces.items():
    root = next(o for o in items if not o.get("parentObservationId"))
    for item in items:
        if item["type"] != "RETRIEVER":
            continue
        documents = item["output"] or []
        question = item["input"] or root["input"]["question"]
        response = root["output"]
        texts = [d["page_content"] for d in documents]
        metadata = json.dumps({"trace_id": trace_id, "observation_id": item["id"],
                               "retriever": item["name"]})
        digest = hashlib.sha256(json.dumps([question, response, texts, metadata]).encode())
        goldens.append((trace_id, len(goldens) + 1, question, response, metadata,
                        digest.hexdigest()))
        chunks += [(trace_id, rank, d["page_content"], d["metadata"].get("id"), None)
                   for rank, d in enumerate(documents, 1)]
""" + STORE


BARE_MLFLOW = r"""
import hashlib, json, sqlite3, sys
source, target = sys.argv[1], sys.argv[2]
goldens, chunks = [], []
for trace in json.load(open(source, encoding="utf-8")):
    trace_id = trace["info"]["trace_id"]
    spans = trace["data"]["spans"]
    root = next(s for s in spans if not s["parent_span_id"])
    for span in spans:
        attributes = span["attributes"]
        if json.loads(attributes["mlflow.spanType"]) != "RETRIEVER":
            continue
        documents = json.loads(attributes["mlflow.spanOutputs"]) or []
        question = json.loads(attributes["mlflow.spanInputs"])["question"]
        response = json.loads(root["attributes"]["mlflow.spanOutputs"])
        texts = [d["page_content"] for d in documents]
        metadata = json.dumps({"trace_id": trace_id, "span_id": span["span_id"],
                               "retriever": span["name"]})
        digest = hashlib.sha256(json.dumps([question, response, texts, metadata]).encode())
        goldens.append((trace_id, len(goldens) + 1, question, response, metadata,
                        digest.hexdigest()))
        chunks += [(trace_id, rank, d["page_content"], d["metadata"].get("chunk_id"), None)
                   for rank, d in enumerate(documents, 1)]
""" + STORE


def _mlflow_span(trace: str, t: int, span_id: str, parent: str | None, name: str, kind: str,
                 inputs: Any, outputs: Any) -> dict[str, Any]:
    """One span of an MLflow 3 trace, its attributes JSON-encoded as MLflow stores them."""
    at = 1796563067945563656 + t * 1000 + (parent is not None)
    return {"trace_id": trace, "span_id": span_id, "parent_span_id": parent, "name": name,
            "kind": "SPAN_KIND_INTERNAL", "start_time_unix_nano": at,
            "end_time_unix_nano": at + 40_000_000, "events": [],
            "status": {"code": "STATUS_CODE_OK", "message": ""},
            "attributes": {"mlflow.traceRequestId": json.dumps(trace),
                           "mlflow.spanType": json.dumps(kind),
                           "mlflow.spanInputs": json.dumps(inputs),
                           "mlflow.spanOutputs": json.dumps(outputs)}, "links": []}


def mlflow_traces(path: Path, traces: int) -> None:
    """Write MLflow 3 traces as `mlflow.search_traces(return_type="list")` gives them: a CHAIN
    root and a RETRIEVER of 10 documents a trace."""
    out = []
    for t in range(traces):
        question = f"What does clause {t} of the account terms say about fees?"
        answer = f"Clause {t} sets the fee at {t % 97} rupees a quarter."
        trace, root = f"tr-{t:032x}", f"{t:012x}0001"
        documents = [{"page_content": text, "metadata": {"doc_uri": "kb.md",
                                                         "chunk_id": f"kb-{t}-{k}"}, "id": None}
                     for k, text in enumerate(_passages(t))]
        asked = {"question": question}
        out.append({"info": {"trace_id": trace, "request_time": "2026-12-06T13:17:47.945Z",
                             "state": "OK", "trace_metadata": {
                                 "mlflow.trace_schema.version": "3",
                                 "mlflow.traceInputs": json.dumps(asked),
                                 "mlflow.traceOutputs": json.dumps(answer)},
                             "assessments": []},
                    "data": {"spans": [
                        _mlflow_span(trace, t, root, None, "answer", "CHAIN", asked, answer),
                        _mlflow_span(trace, t, f"{t:012x}0002", root, "retrieve", "RETRIEVER",
                                     asked, documents)]}})
    path.write_text(json.dumps(out), encoding="utf-8")


def _passages(t: int) -> list[str]:
    return [f"Passage {k} on clause {t}: the fee is {(t + k) % 97} rupees a quarter, charged on "
            "the account's average balance; see the schedule of charges for the rest."
            for k in range(DOCUMENTS)]


def observations(path: Path, traces: int) -> None:
    """Write Langfuse's observations as its API lists them: three a trace, in one document."""
    data: list[dict[str, Any]] = []
    for t in range(traces):
        trace, when = f"trace-{t}", f"2026-11-30T09:{t // 60 % 60:02d}:{t % 60:02d}"
        question = f"What does clause {t} of the account terms say about fees?"
        answer = f"Clause {t} sets the fee at {t % 97} rupees a quarter."
        data += [
            {"id": f"root-{t}", "traceId": trace, "startTime": f"{when}.000Z", "type": "CHAIN",
             "name": "rag", "input": {"question": question}, "output": answer},
            {"id": f"ret-{t}", "traceId": trace, "startTime": f"{when}.005Z",
             "parentObservationId": f"root-{t}", "type": "RETRIEVER", "name": "retriever",
             "input": question,
             "output": [{"page_content": text, "metadata": {"id": f"kb-{t}-{k}",
                                                            "source": "kb.md"},
                         "type": "Document"} for k, text in enumerate(_passages(t))]},
            {"id": f"gen-{t}", "traceId": trace, "startTime": f"{when}.009Z",
             "parentObservationId": f"root-{t}", "type": "GENERATION", "name": "llm",
             "output": {"role": "assistant", "content": answer}},
        ]
    path.write_text(json.dumps({"data": data}), encoding="utf-8")


def spans(path: Path, traces: int) -> None:
    """Write Phoenix's spans dataframe as JSON lines: three spans a trace."""
    with path.open("w", encoding="utf-8") as out:
        for t in range(traces):
            trace, root = f"{t:032x}", f"{t:08x}00000001"
            base = {"start_time": 1796563045438 + t, "end_time": 1796563045440 + t,
                    "status_code": "UNSET", "status_message": "", "events": [],
                    "context.trace_id": trace}
            question = f"What does clause {t} of the account terms say about fees?"
            answer = f"Clause {t} sets the fee at {t % 97} rupees a quarter."
            documents = [{"document.id": f"kb-{t}-{k}", "document.score": round(1 - k / 20, 3),
                          "document.content": text, "document.metadata": {"source": "kb.md"}}
                         for k, text in enumerate(_passages(t))]
            rows: list[dict[str, Any]] = [
                {"name": "query", "span_kind": "CHAIN", "parent_id": None,
                 "context.span_id": root, "attributes.openinference.span.kind": "CHAIN",
                 "attributes.input.value": question, "attributes.output.value": answer,
                 "attributes.retrieval.documents": None},
                {"name": "retrieve", "span_kind": "RETRIEVER", "parent_id": root,
                 "context.span_id": f"{t:08x}00000002",
                 "attributes.openinference.span.kind": "RETRIEVER",
                 "attributes.input.value": question, "attributes.output.value": None,
                 "attributes.retrieval.documents": documents},
                {"name": "generate", "span_kind": "LLM", "parent_id": root,
                 "context.span_id": f"{t:08x}00000003",
                 "attributes.openinference.span.kind": "LLM",
                 "attributes.input.value": None, "attributes.output.value": answer,
                 "attributes.retrieval.documents": None},
            ]
            for row in rows:
                out.write(json.dumps({**row, **base}) + "\n")


def main() -> None:
    """Print each size's figures beside the bare program's and the budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracer", choices=("phoenix", "langfuse", "mlflow"), default="phoenix")
    parser.add_argument("--traces", default="3000,30000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.traces.split(",")]
    grown = []
    with tempfile.TemporaryDirectory() as tmp:
        for traces in sizes:
            folder = Path(tmp) / str(traces)
            folder.mkdir()
            write, bare_program, file_name, per_trace = {
                "phoenix": (spans, BARE, "spans.jsonl", 3),
                "langfuse": (observations, BARE_LANGFUSE, "obs.json", 3),
                "mlflow": (mlflow_traces, BARE_MLFLOW, "traces.json", 2)}[args.tracer]
            source = folder / file_name
            write(source, traces)
            ours, bare = [], []
            for run in range(args.runs):
                ours.append(measured([sys.executable, "-m", "annotator", "import", str(source),
                                      "--from", args.tracer, "--session",
                                      str(folder / f"ours{run}.db")]))
                bare.append(measured([sys.executable, "-c", bare_program, str(source),
                                      str(folder / f"bare{run}.db")]))
            o, b = (statistics.median(cpu for cpu, _ in ours),
                    statistics.median(cpu for cpu, _ in bare))
            o_mb, b_mb = max(mb for _, mb in ours), max(mb for _, mb in bare)
            grown.append((traces * per_trace, o, b))
            print(f"import --from {args.tracer}, {traces * per_trace:,} spans ({traces:,} goldens x "
                  f"{DOCUMENTS}): {o:.2f} s CPU against the bare program's {b:.2f} s "
                  f"({o / b:.2f}x; budget {BUDGET:.0f}x); peak {o_mb:.0f} MB against "
                  f"{b_mb:.0f} MB")
    if len(grown) > 1:
        (n1, o1, b1), (n2, o2, b2) = grown[0], grown[-1]
        scale = math.log(n2 / n1)
        print(f"growth exponent: {math.log(o2 / o1) / scale:.2f} against the bare program's "
              f"{math.log(b2 / b1) / scale:.2f} (budget: within {BUDGET_EXPONENT})")


if __name__ == "__main__":
    main()
