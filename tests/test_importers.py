"""Importers: OpenInference traces as OTLP JSON, made by the OpenTelemetry SDK and OpenInference's
conventions (scripts/tracer_fixtures.py), into goldens with their document ids and scores."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.errors import InputError
from annotator.store.session import Session
from tests.conftest import ROOT

SPANS = ROOT / "tests" / "fixtures" / "openinference-spans.json"


def imported(path: Path, db: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["import", str(path), "--session", str(db), *extra])


def hexed(document: dict[str, Any]) -> dict[str, Any]:
    """The same request with ids in hex, as the OTLP JSON rule writes them."""
    out: dict[str, Any] = json.loads(json.dumps(document))
    for resource in out["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return out


def goldens(db: Path) -> list[tuple[str, str, str | None, list[str], list[str | None],
                                    list[float | None], dict[str, Any]]]:
    with Session(db) as session:
        return [(g.id, g.user_input, g.response, [c.text for c in g.chunks],
                 [c.doc_id for c in g.chunks], [c.score for c in g.chunks], g.metadata)
                for g in session.goldens()]


def test_openinference_spans_become_goldens_with_their_documents(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    result = imported(SPANS, db)
    assert result.exit_code == 0, result.output
    assert "2 goldens added" in result.output
    assert "1 retriever span found no document; left out" in result.output
    found = goldens(db)
    first = found[0]
    assert first[1:4] == ("What is the minimum balance for a savings account?",
                          "₹10,000 in urban branches.",
                          ["Minimum balance is ₹10,000 for urban branches.",
                           "KYC must be renewed every 8 years. [b]not markup[/b]",
                           "Rural branches need ₹2,500 🏦."])
    assert first[4] == ["kb-101", "kb-007", "kb-102"] and first[5] == [0.91, 0.42, 0.77]
    assert first[6]["source"] == "openinference" and first[0] == first[6]["trace_id"]
    assert len(first[0]) == 32 and len(first[6]["span_id"]) == 16  # ids in hex
    assert found[1][3] == ["NEFT runs 24x7, including holidays.", "עברית: RTL text about RTGS."]
    # Exports name the team's documents, not g17#3.
    qrels = CliRunner().invoke(cli, ["export", str(db), "-f", "run"])
    assert "kb-101" in qrels.output and "#" not in qrels.output


def test_a_collectors_json_lines_with_hex_ids_read_the_same(tmp_path: Path) -> None:
    document = hexed(json.loads(SPANS.read_text()))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    # A collector writes a request per batch: the spans of one trace may sit on two lines.
    halves = [spans[: len(spans) // 2], spans[len(spans) // 2:]]
    lines = []
    for half in halves:
        copy = json.loads(json.dumps(document))
        copy["resourceSpans"][0]["scopeSpans"][0]["spans"] = half
        lines.append(json.dumps(copy, ensure_ascii=False))
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = imported(path, tmp_path / "lines.db", "--from", "openinference")
    assert result.exit_code == 0, result.output
    assert imported(SPANS, tmp_path / "whole.db").exit_code == 0
    assert goldens(tmp_path / "lines.db") == goldens(tmp_path / "whole.db")


def test_a_file_that_is_not_the_source_asked_for_is_a_sentence_and_leaves_nothing(
        tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ragas = ROOT / "sample_sessions" / "banking.jsonl"
    result = imported(ragas, db, "--from", "phoenix")
    assert result.exit_code != 0
    assert "not an OpenInference trace export" in result.output
    assert "Traceback" not in result.output and not db.exists()
    document = json.loads(SPANS.read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [a for a in span["attributes"]
                                      if a["key"] != "openinference.span.kind"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(document))
    result = imported(bare, db)
    assert result.exit_code != 0
    assert "no retriever span with documents among 9 spans" in result.output
    assert not db.exists()


TRACES = ROOT / "tests" / "fixtures" / "mlflow-traces.json"


def test_mlflow_traces_become_goldens_with_their_documents_and_expectations(
        tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    result = imported(TRACES, db)
    assert result.exit_code == 0, result.output
    assert "2 goldens added" in result.output and "1 retriever span found no document" in (
        result.output)
    found = goldens(db)
    first = found[0]
    assert first[1] == "What is the minimum balance for a savings account?"
    assert first[2] == "₹10,000 in urban branches."
    assert first[4] == ["kb-101", "kb-007", "kb-102"]
    assert first[6]["source"] == "mlflow" and first[0].startswith("tr-")
    with Session(db) as session:
        golden = session.golden(first[0])
        assert golden.reference == "₹10,000 in urban branches; ₹2,500 in rural ones."
        assert session.golden(found[1][0]).reference is None  # no expectation logged
    # JSON lines of to_json() documents, one trace a line, read the same; --from says so.
    lines = tmp_path / "traces.jsonl"
    lines.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n"
                             for t in json.loads(TRACES.read_text())), encoding="utf-8")
    assert imported(lines, tmp_path / "l.db", "--from", "mlflow").exit_code == 0
    assert goldens(tmp_path / "l.db") == found
    wrong = imported(SPANS, tmp_path / "w.db", "--from", "mlflow")
    assert wrong.exit_code != 0 and "not an MLflow trace export" in wrong.output


@pytest.mark.parametrize("fmt", ["mlflow-feedback", "phoenix-annotations", "langfuse-scores"])
def test_peoples_labels_go_back_to_the_tracer_by_trace_span_and_document(
        tmp_path: Path, fmt: str) -> None:
    db = tmp_path / "t.db"
    assert imported(SPANS, db).exit_code == 0
    with Session(db) as session:
        first = session.goldens()[0]
        session.decide("alice", first.chunks[0].id, 1, "set", note="=HYPERLINK(\"x\") states it")
        session.decide("alice", first.chunks[1].id, "distractor", "set")
        session.decide("alice", first.chunks[2].id, "unsure", None, note="rural only?")
    out = tmp_path / f"back.{fmt}"
    result = CliRunner().invoke(cli, ["export", str(db), "-f", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote 2 labels" in result.output  # the unsure one has no verdict to give back
    text = out.read_text(encoding="utf-8")
    trace, span = first.metadata["trace_id"], first.metadata["span_id"]
    if fmt == "mlflow-feedback":
        lines = [json.loads(line) for line in text.splitlines()]
        assert [(x["trace_id"], x["span_id"], x["name"], x["value"], x["metadata"]["document_id"],
                 x["metadata"]["answer"]) for x in lines] == [
            (trace, span, "chunk_relevance", True, "kb-101", "useful"),
            (trace, span, "chunk_relevance", False, "kb-007", "distractor")]
        assert lines[0]["source"] == {"source_type": "HUMAN", "source_id": "alice"}
    elif fmt == "phoenix-annotations":
        data = json.loads(text)["data"]
        assert [(d["span_id"], d["document_position"], d["result"]["score"],
                 d["annotator_kind"]) for d in data] == [(span, 0, 1, "HUMAN"), (span, 1, 0, "HUMAN")]
    else:
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [(r["traceId"], r["observationId"], r["value"], r["documentId"]) for r in rows] == [
            (trace, span, "1", "kb-101"), (trace, span, "0", "kb-007")]
        assert rows[0]["comment"].startswith("'=HYPERLINK")  # never a formula in a cell
    plain = tmp_path / "plain.db"
    assert imported(ROOT / "sample_sessions" / "banking.jsonl", plain).exit_code == 0
    refused = CliRunner().invoke(cli, ["export", str(plain), "-f", fmt, "-o",
                                       str(tmp_path / "none.out")])
    assert refused.exit_code != 0 and "came from a tracer" in refused.output
    assert not (tmp_path / "none.out").exists()


def test_a_hugging_face_dataset_comes_in_from_parquet_json_lines_and_to_dict(
        tmp_path: Path) -> None:
    import datasets  # type: ignore[import-untyped]

    rows = {"user_input": ["What is the minimum balance?", "When does NEFT run?"],
            "reference": ["₹10,000 in urban branches.", "Round the clock."],
            "retrieved_contexts": [["Minimum balance is ₹10,000.", "KYC [b]8[/b] years."],
                                   ["NEFT runs 24x7 🏦.", "עברית"]],
            "retrieved_context_ids": [["kb-101", "kb-007"], ["kb-300", "kb-301"]],
            "retrieved_context_scores": [[0.9, 0.4], [0.8, 0.1]]}
    dataset = datasets.Dataset.from_dict(rows)
    dataset.to_parquet(str(tmp_path / "d.parquet"))
    dataset.to_json(str(tmp_path / "d.jsonl"), force_ascii=False)
    (tmp_path / "d.json").write_text(json.dumps(dataset.to_dict(), ensure_ascii=False))
    found = []
    for name in ("d.parquet", "d.jsonl", "d.json"):
        db = tmp_path / f"{name}.db"
        result = imported(tmp_path / name, db)
        assert result.exit_code == 0, result.output
        found.append(goldens(db))
    # RAGAS v1 column names (question, contexts, ground_truth), named as a Hugging Face
    # dataset with --from hf, read the same.
    v1 = {{"user_input": "question", "retrieved_contexts": "contexts",
           "reference": "ground_truth"}.get(k, k): v for k, v in rows.items()}
    datasets.Dataset.from_dict(v1).to_parquet(str(tmp_path / "v1.parquet"))
    result = imported(tmp_path / "v1.parquet", tmp_path / "v1.db", "--from", "hf")
    assert result.exit_code == 0, result.output
    found.append(goldens(tmp_path / "v1.db"))
    assert found[0] == found[1] == found[2] == found[3]
    assert found[0][0][3] == ["Minimum balance is ₹10,000.", "KYC [b]8[/b] years."]
    assert found[0][1][4] == ["kb-300", "kb-301"] and found[0][1][5] == [0.8, 0.1]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    result = imported(broken, tmp_path / "b.db")
    assert result.exit_code != 0 and "is not a parquet file pyarrow can read" in result.output
    assert not (tmp_path / "b.db").exists()


def stored(db: Path) -> list[dict[str, Any]]:
    """A session's goldens as its JSONL export writes them."""
    out = CliRunner().invoke(cli, ["export", str(db), "-f", "jsonl"])
    assert out.exit_code == 0, out.output
    return [json.loads(line) for line in out.output.splitlines()]


FIXTURES = ROOT / "tests" / "fixtures"


@pytest.mark.parametrize("name", ["phoenix-spans.parquet", "phoenix-spans.jsonl",
                                  "phoenix-trace-dataset.parquet"])
def test_phoenix_spans_dataframes_give_the_goldens_their_otlp_spans_give(
        tmp_path: Path, name: str) -> None:
    # The same spans, sent to a Phoenix server and read back with get_spans_dataframe(), or
    # saved as Phoenix's TraceDataset: the same goldens, ids in the same hex.
    result = imported(FIXTURES / name, tmp_path / "p.db", "--from", "phoenix")
    assert result.exit_code == 0, result.output
    assert "2 goldens added" in result.output and "1 retriever span found no document" in (
        result.output)
    assert imported(SPANS, tmp_path / "o.db").exit_code == 0
    assert stored(tmp_path / "p.db") == stored(tmp_path / "o.db")
    assert stored(tmp_path / "p.db")[0]["retrieved_context_scores"] == [0.91, 0.42, 0.77]


@pytest.mark.parametrize("name", ["mlflow-search-traces.parquet", "mlflow-search-traces.jsonl"])
def test_mlflow_search_traces_frames_give_the_goldens_to_json_gives(tmp_path: Path,
                                                                     name: str) -> None:
    result = imported(FIXTURES / name, tmp_path / "s.db")
    assert result.exit_code == 0, result.output
    assert imported(TRACES, tmp_path / "t.db").exit_code == 0
    assert stored(tmp_path / "s.db") == stored(tmp_path / "t.db")


def test_mlflow_per_document_feedback_becomes_labels_and_verdicts(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    result = imported(TRACES, db)
    assert "3 judge verdicts, 3 human labels" in result.output, result.output
    first = stored(db)[0]
    # alice's HUMAN feedback by chunk_index, her rationale as her note; the LLM judge's named
    # as its feedback; the span's average (no chunk_index) is no chunk's.
    assert first["human_labels"] == {"alice": [1, 0, 1]}
    assert first["human_notes"] == {"alice": [f"alice on chunk {n}" for n in (1, 2, 3)]}
    assert first["judge"] == "retrieval_relevance"
    assert [v["verdict"] for v in first["judge_verdicts"]] == [1, 1, 0]
    # The span id is MLflow's own (hex), the one its feedback names, so labels written back
    # land on the span: the exported feedback names the same span and chunk_index.
    trace = json.loads(TRACES.read_text())[0]
    logged = {a["span_id"] for a in trace["info"]["assessments"] if a.get("span_id")}
    assert first["metadata"]["span_id"] in logged
    back = CliRunner().invoke(cli, ["export", str(db), "-f", "mlflow-feedback"])
    lines = [json.loads(line) for line in back.output.splitlines()]
    assert [(x["span_id"], x["name"], x["metadata"]["chunk_index"], x["value"], x["rationale"])
            for x in lines] == [
        (first["metadata"]["span_id"], "retrieval_relevance", i, v, f"alice on chunk {i + 1}")
        for i, v in enumerate([True, False, True])]


def test_feedback_that_is_not_yes_or_no_is_said_and_left_out(tmp_path: Path) -> None:
    traces = json.loads(TRACES.read_text())
    for assessment in traces[0]["info"]["assessments"]:
        if (assessment.get("metadata") or {}).get("chunk_index") == "1" and (
                assessment["source"]["source_type"] == "HUMAN"):
            assessment["feedback"]["value"] = "maybe"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(traces), encoding="utf-8")
    result = imported(path, tmp_path / "m.db")
    assert result.exit_code == 0, result.output
    assert '1 per-document feedback value not yes or no ("maybe")' in result.output
    assert stored(tmp_path / "m.db")[0]["human_labels"] == {"alice": [1, None, 1]}


LANGFUSE = FIXTURES / "langfuse-observations.json"


def test_langfuse_observations_become_goldens_with_ids_scores_and_references(
        tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    result = imported(LANGFUSE, db)
    assert result.exit_code == 0, result.output
    first, second = stored(db)
    # A RETRIEVER of LangChain Documents: ids from their metadata, the root's output the
    # response, the dataset item naming the trace the reference.
    assert (first["id"], first["user_input"], first["response"], first["reference"]) == (
        "trace-1", "What is the minimum balance for a savings account?",
        "₹10,000 in urban branches.", "₹10,000 in urban branches.")
    assert first["retrieved_context_ids"] == ["kb-101", "kb-007", "kb-102"]
    assert "retrieved_context_scores" not in first
    # The only SPAN with documents (LlamaIndex-style nodes with scores); the last
    # GENERATION's output the response; an item's {"answer": ...} the reference.
    assert second["retrieved_contexts"] == ["NEFT runs 24x7, including holidays.",
                                            "עברית: RTL text about RTGS."]
    assert second["retrieved_context_ids"] == ["kb-300", "kb-301"]
    assert second["retrieved_context_scores"] == [0.88, 0.12]
    assert (second["response"], second["reference"]) == ("Round the clock, every day.", "24x7.")
    assert second["metadata"] == {"source": "langfuse", "trace_id": "trace-2",
                                  "span_id": "obs-vec-2"}
    # A trace downloaded whole: its own output is the response.
    whole = imported(FIXTURES / "langfuse-trace.json", tmp_path / "w.db", "--from", "langfuse")
    assert whole.exit_code == 0, whole.output
    [only] = stored(tmp_path / "w.db")
    assert only["retrieved_context_ids"] == ["kb-300", "kb-301"]
    # Labels go back as Langfuse scores on the observation.
    with Session(db) as session:
        session.decide("ann", session.golden("trace-2").chunks[0].id, 1, "set")
    scores = CliRunner().invoke(cli, ["export", str(db), "-f", "langfuse-scores"])
    assert "trace-2,obs-vec-2,chunk_relevance,1,BOOLEAN" in scores.output


def test_retriever_names_the_spans_and_several_candidates_are_said(tmp_path: Path) -> None:
    page = json.loads(LANGFUSE.read_text())
    named = imported(LANGFUSE, tmp_path / "n.db", "--retriever", "vector-search")
    assert named.exit_code == 0, named.output
    assert [g["id"] for g in stored(tmp_path / "n.db")] == ["trace-2"]
    # A second SPAN with documents in trace-2: which one retrieved is not guessed.
    extra = dict(next(o for o in page["data"] if o["id"] == "obs-vec-2"), id="obs-rerank-2",
                 name="rerank")
    page["data"].append(extra)
    path = tmp_path / "two.json"
    path.write_text(json.dumps(page), encoding="utf-8")
    result = imported(path, tmp_path / "t.db")
    assert result.exit_code == 0, result.output
    assert "1 trace holds several spans with documents (rerank, vector-search)" in result.output
    assert "--retriever NAME" in result.output
    assert [g["id"] for g in stored(tmp_path / "t.db")] == ["trace-1"]
    # --retriever on goldens that are no tracer's export is a sentence, and nothing is made.
    ragas = ROOT / "sample_sessions" / "banking.jsonl"
    refused = imported(ragas, tmp_path / "r.db", "--retriever", "x")
    assert refused.exit_code != 0 and "is not one" in refused.output
    assert not (tmp_path / "r.db").exists()
    nothing = imported(LANGFUSE, tmp_path / "x.db", "--retriever", "nope")
    assert nothing.exit_code != 0
    assert "looked for a span named 'nope' with documents" in nothing.output
    wrong = imported(SPANS, tmp_path / "w.db", "--from", "langfuse")
    assert wrong.exit_code != 0 and "not a Langfuse export" in wrong.output


def test_the_python_api_imports_a_tracers_export_with_its_options(tmp_path: Path) -> None:
    from annotator import api

    db = tmp_path / "a.db"
    [summary] = api.import_goldens(db, LANGFUSE, source="langfuse", retriever="vector-search")
    assert summary.goldens_added == 1
    with pytest.raises(InputError, match="not an MLflow trace export"):
        api.import_goldens(tmp_path / "b.db", LANGFUSE, source="mlflow")
    assert not (tmp_path / "b.db").exists()


def test_an_mlflow_2_trace_with_0x_ids_in_its_context_reads_the_same(tmp_path: Path) -> None:
    traces = json.loads(TRACES.read_text())
    for trace in traces:
        trace["info"]["request_id"] = trace["info"].pop("trace_id")
        for span in trace["data"]["spans"]:
            span["context"] = {"span_id": "0x" + base64.b64decode(span.pop("span_id")).hex()}
            parent = span.pop("parent_span_id", None)
            span["parent_id"] = parent and "0x" + base64.b64decode(parent).hex()
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(traces), encoding="utf-8")
    assert imported(path, tmp_path / "two.db").exit_code == 0
    assert imported(TRACES, tmp_path / "three.db").exit_code == 0
    assert stored(tmp_path / "two.db") == stored(tmp_path / "three.db")


def test_langfuse_dataset_items_downloaded_apart_give_the_references(tmp_path: Path) -> None:
    page = json.loads(LANGFUSE.read_text())
    observations = {"data": [o for o in page["data"] if "traceId" in o]}
    items = {"data": [o for o in page["data"] if "traceId" not in o],
             "meta": {"page": 1, "limit": 50, "totalItems": 2, "totalPages": 1}}
    (tmp_path / "observations.json").write_text(json.dumps(observations), encoding="utf-8")
    (tmp_path / "dataset-items.json").write_text(json.dumps(items), encoding="utf-8")
    db = tmp_path / "apart.db"
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "observations.json"),
                                      str(tmp_path / "dataset-items.json"), "--session", str(db)])
    assert result.exit_code == 0, result.output
    assert "dataset-items.json holds Langfuse dataset items" in result.output
    first, second = stored(db)
    assert (first["reference"], second["reference"]) == ("₹10,000 in urban branches.", "24x7.")
    whole = imported(LANGFUSE, tmp_path / "whole.db")  # the same as one file holding both
    assert whole.exit_code == 0 and stored(tmp_path / "whole.db") == [first, second]
    alone = CliRunner().invoke(cli, ["import", str(tmp_path / "dataset-items.json"),
                                     "--session", str(tmp_path / "alone.db")])
    assert alone.exit_code == 2 and "Traceback" not in alone.output


@pytest.mark.parametrize("fixture", ["otel-console-spans.json", "otel-console-spans.jsonl"])
def test_the_opentelemetry_sdks_console_spans_become_goldens(tmp_path: Path,
                                                              fixture: str) -> None:
    db = tmp_path / "c.db"
    result = imported(FIXTURES / fixture, db, "--from", "openinference")
    assert result.exit_code == 0, result.output
    first, second = stored(db)
    assert (first["user_input"], first["response"]) == (
        "What is the minimum balance for a savings account?", "₹10,000 in urban branches.")
    assert first["retrieved_context_ids"] == ["kb-101", "kb-007", "kb-102"]
    assert first["retrieved_context_scores"] == [0.91, 0.42, 0.77]
    assert second["retrieved_contexts"] == ["NEFT runs 24x7, including holidays.",
                                            "עברית: RTL text about RTGS."]
    assert first["metadata"]["source"] == "openinference"
    detected = imported(FIXTURES / fixture, tmp_path / "d.db")  # detected without --from
    assert detected.exit_code == 0 and stored(tmp_path / "d.db") == [first, second]


def test_spans_written_twice_make_one_golden_each(tmp_path: Path) -> None:
    lines = (FIXTURES / "otel-console-spans.jsonl").read_text(encoding="utf-8").splitlines()
    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join([*lines, *lines]) + "\n", encoding="utf-8")
    result = imported(twice, tmp_path / "t.db")
    assert result.exit_code == 0, result.output
    assert "4 spans are written twice" in result.output
    once = imported(FIXTURES / "otel-console-spans.jsonl", tmp_path / "o.db")
    assert once.exit_code == 0 and stored(tmp_path / "t.db") == stored(tmp_path / "o.db")


@pytest.mark.parametrize("documents", [
    [{"document.content": "a", "document.id": "d1", "document.score": 0.5,
      "document.metadata": {"source": "kb.md"}},
     {"document.metadata": {"source": "none"}},  # no content, id or score: no rank
     {"document.content": "c [b]x[/b] 🏦", "document.score": 1}],
    [{"document": {"content": "a", "id": "d1", "score": 0.5, "metadata": {"k": 1}}},
     {"document": {"content": {"deep": "dict"}}}, {"document": {"id": "only-id"}}],
    [{"document.content": ["list", "of", "words"], "document.id": 7}],
])
def test_a_rows_documents_read_at_once_equal_the_flattened_keys(documents: list[Any]) -> None:
    from annotator.importers import openinference as oi

    flat: dict[str, Any] = {}
    oi._flat("retrieval.documents", documents, flat)
    assert oi._documents({"attributes": flat}) == oi._documents(
        {"attributes": {}, "documents": oi._row_documents(documents)})
