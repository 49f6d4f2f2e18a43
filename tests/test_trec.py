"""TREC qrels and runs: ir_measures on the exported files gives the project's figures back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ir_measures
import pytest
from click.testing import CliRunner
from ir_measures import AP, P

from annotator.cli import cli
from annotator.formats import read_goldens
from annotator.report.build import build_report
from annotator.stats.metrics import context_precision_when_complete, precision_at_k
from annotator.store.session import Session
from tests.conftest import SAMPLES, TEAM_BANKING, write_lines


def export(*args: str) -> str:
    out = CliRunner().invoke(cli, ["export", *args])
    assert out.exit_code == 0, out.output
    return out.output


def measured(qrels: str, run: str, measures: list[Any]) -> dict[tuple[str, str], float]:
    found = ir_measures.iter_calc(measures,
                                  ir_measures.read_trec_qrels(qrels),  # type: ignore[no-untyped-call]
                                  ir_measures.read_trec_run(run))  # type: ignore[no-untyped-call]
    return {(m.query_id, str(m.measure)): m.value for m in found}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_average_precision_is_each_goldens_context_precision(sample: Path, tmp_path: Path
                                                            ) -> None:
    db = tmp_path / "s.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(sample), path=str(sample))
        judge = session.judges()[0].name
        goldens = session.goldens()
        said = session.verdicts(judge)
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    export(str(db), "--format", "qrels", "--truth", judge, "--output", str(qrels_path))
    export(str(db), "--format", "run", "--output", str(run_path))
    got = measured(str(qrels_path), str(run_path), [AP, P @ 1, P @ 3])
    for golden in goldens:
        verdicts = [said[c.id].verdict for c in golden.chunks]
        cp = context_precision_when_complete(verdicts)
        assert cp is not None
        if not any(verdicts):
            continue  # trec_eval scores no query without a relevant document
        qid = golden.id
        assert got[(qid, "AP")] == pytest.approx(cp, abs=1e-9)
        at = precision_at_k(verdicts)
        for k in (1, 3):  # past the list's end, trec_eval counts the missing as not relevant
            expected = at[k - 1] if k <= len(at) else sum(verdicts) / k
            assert got[(qid, f"P@{k}")] == pytest.approx(expected)


def test_qrels_under_the_team_truth_reproduce_the_reports_mean_cp(tmp_path: Path) -> None:
    db = tmp_path / "team.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(TEAM_BANKING), path=str(TEAM_BANKING))
        report = build_report(session, resamples=0, gold=True)
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    export(str(db), "--format", "qrels", "--output", str(qrels))
    export(str(db), "--format", "run", "--output", str(run))
    got = measured(str(qrels), str(run), [AP])
    assert report.goldens is not None
    rows = report.goldens.per_golden
    assert rows
    for row in rows:
        if any(row.human_verdicts):
            assert got[(row.golden_id, "AP")] == pytest.approx(row.human, abs=1e-9)


def test_ids_with_spaces_survive_and_each_system_is_its_own_run(tmp_path: Path) -> None:
    rows = [{"id": f"q {i}#x", "user_input": f"Question {i}?", "reference": "Answer.",
             "retrieved_contexts": ["a", "b", "c"], "metadata": {"retriever": system},
             "judge": "j", "judge_verdicts": [{"verdict": v} for v in verdicts]}
            for i, (system, verdicts) in enumerate([("bm25", [1, 0, 1]), ("dense", [0, 1, 1]),
                                                    ("dense", [1, 1, 0])])]
    path = write_lines(tmp_path / "g.jsonl", rows)
    db = tmp_path / "s.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(path), path=str(path))
    qrels = export(str(db), "--format", "qrels", "--truth", "j")
    dense = export(str(db), "--format", "run", "--system", "dense")
    assert all(len(line.split()) == 4 for line in qrels.splitlines())
    assert {line.split()[5] for line in dense.splitlines()} == {"dense"}
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "r.txt").write_text(dense)
    got = measured(str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), [AP])
    assert {line.split()[0] for line in dense.splitlines()} == {"q%201%23x", "q%202%23x"}
    assert got[("q%201%23x", "AP")] == pytest.approx(context_precision_when_complete([0, 1, 1]))
    assert got[("q%202%23x", "AP")] == pytest.approx(context_precision_when_complete([1, 1, 0]))
    missing = CliRunner().invoke(cli, ["export", str(db), "--format", "run", "--system", "sparse"])
    assert missing.exit_code == 2 and "bm25, dense" in missing.output
    typo = CliRunner().invoke(cli, ["export", str(db), "--format", "run", "--group-by",
                                    "retreiver"])
    assert typo.exit_code == 2 and "has metadata 'retreiver'" in typo.output, typo.output
    unknown = CliRunner().invoke(cli, ["export", str(db), "--format", "qrels", "--truth", "nope"])
    assert unknown.exit_code == 2 and "nope" in unknown.output
    assert "--truth takes 'human', 'gold' or a judge's name" in unknown.output
    assert {line.split()[3] for line in qrels.splitlines()} == {"0", "1"}  # relevance, as given


def test_chunks_with_their_own_ids_are_named_by_them_in_the_qrels_and_the_run(
        tmp_path: Path) -> None:
    goldens = [
        {"id": "q1", "user_input": "first?", "reference": "a",
         "retrieved_contexts": ["c1", "c2", "c3"],
         "retrieved_context_ids": ["MSMARCO 17", 42, None],  # a space, a number, none
         "retrieved_context_scores": [12.5, 9.0, None],
         "judge": "j", "judge_verdicts": [1, 0, 1]},
        # An own id spelled like another chunk's rank name: escaped, it names its own chunk.
        {"id": "q2", "user_input": "second?", "reference": "b",
         "retrieved_contexts": ["d1", "d2"], "retrieved_context_ids": [None, "q2#1"],
         "judge": "j", "judge_verdicts": [0, 1]},
    ]
    source = write_lines(tmp_path / "g.jsonl", goldens)
    db = tmp_path / "s.db"
    assert CliRunner().invoke(cli, ["import", str(source), "--session", str(db)]).exit_code == 0
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    export(str(db), "--format", "qrels", "--truth", "j", "--output", str(qrels))
    export(str(db), "--format", "run", "--output", str(run))
    assert qrels.read_text().splitlines() == [
        "q1 0 MSMARCO%2017 1", "q1 0 42 0", "q1 0 q1#3 1", "q2 0 q2#1 0", "q2 0 q2%231 1"]
    assert [line.split()[2] for line in run.read_text().splitlines()] == [
        "MSMARCO%2017", "42", "q1#3", "q2#1", "q2%231"]
    got = measured(str(qrels), str(run), [AP])
    assert got[("q1", "AP")] == pytest.approx((1 + 2 / 3) / 2)  # CP of [1, 0, 1]
    assert got[("q2", "AP")] == pytest.approx(0.5)  # CP of [0, 1]
    # The ids and scores go out with the session JSONL, as given (an id as a string).
    line = export(str(db), "--format", "jsonl").splitlines()[0]
    assert '"retrieved_context_ids": ["MSMARCO 17", "42", null]' in line
    assert '"retrieved_context_scores": [12.5, 9.0, null]' in line
