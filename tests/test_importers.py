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
    assert "not an OpenInference (OTLP JSON) trace export" in result.output
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
    assert "no RETRIEVER span with documents among 9 spans" in result.output
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
    assert found[0] == found[1] == found[2]
    assert found[0][0][3] == ["Minimum balance is ₹10,000.", "KYC [b]8[/b] years."]
    assert found[0][1][4] == ["kb-300", "kb-301"] and found[0][1][5] == [0.8, 0.1]
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    result = imported(broken, tmp_path / "b.db")
    assert result.exit_code != 0 and "is not a parquet file pyarrow can read" in result.output
    assert not (tmp_path / "b.db").exists()
