"""import-trec: an IR collection in (topics, a run or a pool, graded qrels, a corpus), graded
agreement in the report and the leaderboard equal to their oracles, unranked pools without
order statistics in every format, and bad files refused with file, line and value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner, Result
from sklearn.metrics import cohen_kappa_score

from annotator.cli import cli
from annotator.store.session import Session

JUDGES = ("gpt", "llama", "mistral")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ok(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.output


def collection(tmp: Path, queries: int = 30, docs: int = 8, seed: int = 0,
               judges: tuple[str, ...] = JUDGES) -> dict[str, Any]:
    """A random collection: topics, a pool, NIST-like grades and three judges' grades (each
    agreeing with the assessors more or less), and a corpus holding some of the texts."""
    rng = np.random.default_rng(seed)
    topics = tmp / "queries.tsv"
    topics.write_text("".join(f"q{i}\tquestion {i} [b]bold[/b] 🏦\n" for i in range(queries)))
    pairs = [(f"q{i}", f"d{i}_{k}") for i in range(queries) for k in range(docs)]
    nist = {p: int(rng.integers(0, 4)) for p in pairs}
    grades: dict[str, dict[tuple[str, str], int]] = {"nist": nist}
    for n, name in enumerate(judges):
        share = 0.4 + 0.5 * n / max(len(judges) - 1, 1)
        grades[name] = {p: g if rng.random() < share else int(rng.integers(0, 4))
                        for p, g in nist.items()}
    files = {}
    for name, given in grades.items():
        path = tmp / f"{name}.qrels"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in given.items()))
        files[name] = path
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "title": "T", "text": f"text of {d}"}) + "\n"
                              for _, d in pairs[::2]))
    run_file = tmp / "bm25.run"
    run_file.write_text("".join(f"{q} Q0 {d} {k + 1} {float(docs - k) + rng.random():.4f} bm25\n"
                                for q, d in pairs for k in [int(d.split('_')[1])]))
    return {"topics": topics, "files": files, "grades": grades, "pairs": pairs,
            "corpus": corpus, "run": run_file}


def imported(tmp: Path, c: dict[str, Any], *extra: str, ranked: bool = False) -> Path:
    db = tmp / "trec.db"
    order = ["--run", str(c["run"])] if ranked else ["--pool", str(c["files"]["nist"])]
    ok("import-trec", str(db), "--queries", str(c["topics"]), *order, "--corpus",
       str(c["corpus"]), "--labels", f"nist={c['files']['nist']}",
       *(a for name in JUDGES for a in ("--judge", f"{name}={c['files'][name]}")), *extra)
    return db


def oracles(c: dict[str, Any], judge: str) -> dict[str, float]:
    """The graded statistics by scikit-learn and krippendorff on every pair."""
    human = np.asarray([c["grades"]["nist"][p] for p in c["pairs"]])
    said = np.asarray([c["grades"][judge][p] for p in c["pairs"]])
    labels = [0, 1, 2, 3]
    data = np.vstack([human, said]).astype(float)
    return {
        "grade_kappa": cohen_kappa_score(human, said, labels=labels),
        "kappa_linear": cohen_kappa_score(human, said, labels=labels, weights="linear"),
        "kappa_quadratic": cohen_kappa_score(human, said, labels=labels, weights="quadratic"),
        "alpha_ordinal": krippendorff.alpha(reliability_data=data,
                                            level_of_measurement="ordinal",
                                            value_domain=labels),
        "alpha_interval": krippendorff.alpha(reliability_data=data,
                                             level_of_measurement="interval",
                                             value_domain=labels),
        "alpha_nominal": krippendorff.alpha(reliability_data=data,
                                            level_of_measurement="nominal",
                                            value_domain=labels),
        "binary_kappa": cohen_kappa_score(human >= 2, said >= 2),
        "binary_kappa_3": cohen_kappa_score(human >= 3, said >= 3),
    }


def test_a_pool_with_graded_qrels_comes_in_whole(tmp_path: Path) -> None:
    c = collection(tmp_path)
    db = imported(tmp_path, c)
    with Session(db, create=False) as session:
        scale = session.scale()
        assert scale is not None and (scale.top, scale.relevant_from) == (3, 2)
        assert session.unranked()
        [first, *_] = session.goldens()
        assert first.user_input == "question 0 [b]bold[/b] 🏦" and first.reference is None
        assert [ch.doc_id for ch in first.chunks] == [f"d0_{k}" for k in range(8)]
        assert first.chunks[0].text == "T\ntext of d0_0"
        assert first.chunks[1].text == "(text not provided) d0_1"
        labels = session.labels("nist", [first.id])
        assert [labels[ch.id].grade for ch in first.chunks] == [
            c["grades"]["nist"][("q0", f"d0_{k}")] for k in range(8)]
        assert [labels[ch.id].verdict for ch in first.chunks] == [
            int(c["grades"]["nist"][("q0", f"d0_{k}")] >= 2) for k in range(8)]
        said = session.verdicts("gpt", [first.id])
        assert [said[ch.id].grade for ch in first.chunks] == [
            c["grades"]["gpt"][("q0", f"d0_{k}")] for k in range(8)]
    # Importing the same files again changes nothing; graded qrels export as they came in.
    again = ok("import-trec", str(db), "--queries", str(c["topics"]), "--pool",
               str(c["files"]["nist"]), "--corpus", str(c["corpus"]), "--labels",
               f"nist={c['files']['nist']}")
    assert "0 queries" in again
    assert ok("export", str(db), "-f", "qrels", "-a", "nist") == c["files"]["nist"].read_text()
    assert ok("export", str(db), "-f", "qrels", "--truth", "gpt") == c["files"]["gpt"].read_text()


def test_graded_agreement_in_the_report_and_the_leaderboard_equals_the_oracles(
        tmp_path: Path) -> None:
    c = collection(tmp_path)
    db = imported(tmp_path, c)
    board = json.loads(ok("judges", str(db), "-f", "json", "--bootstrap", "200"))
    assert board["grades"] == {"scale": [0, 3], "relevant_from": 2} and board["unranked"]
    for row in board["judges"]:
        expected = oracles(c, row["judge"])
        for key in ("grade_kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal",
                    "alpha_interval", "alpha_nominal"):
            assert row[key] == pytest.approx(expected[key], abs=1e-9), (row["judge"], key)
        assert row["cohen_kappa"] == pytest.approx(expected["binary_kappa"], abs=1e-9)
        assert row["kappa_from_2_2"] == pytest.approx(expected["binary_kappa"], abs=1e-9)
        assert row["kappa_from_3_3"] == pytest.approx(expected["binary_kappa_3"], abs=1e-9)
        assert len(row["ci95"]["kappa_from_1_3"]) == 2  # each with its interval
        assert "mae" not in row  # no CP on a pool
    report = json.loads(ok("report", str(db), "-j", "gpt", "-f", "json", "--bootstrap", "200"))
    grades = report["grades"]
    expected = oracles(c, "gpt")
    assert grades["kappa_quadratic"] == pytest.approx(expected["kappa_quadratic"], abs=1e-9)
    assert grades["alpha_ordinal"] == pytest.approx(expected["alpha_ordinal"], abs=1e-9)
    assert sum(map(sum, grades["table"])) == len(c["pairs"])
    assert grades["kappa_by_thresholds"][1][1] == pytest.approx(expected["binary_kappa"])
    assert report["context_precision"] is None and report["unranked"] is True
    # Another threshold, for this report only: the binary statistics follow it.
    moved = json.loads(ok("report", str(db), "-j", "gpt", "-f", "json", "--bootstrap", "0",
                          "--relevant-from", "3"))
    assert moved["agreement"]["cohen_kappa"] == pytest.approx(expected["binary_kappa_3"])
    assert moved["grades"]["relevant_from"] == 3


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_an_unranked_pool_shows_nothing_that_needs_an_order(tmp_path: Path, fmt: str) -> None:
    db = imported(tmp_path, collection(tmp_path, queries=6))
    out = ok("report", str(db), "-j", "gpt", "-f", fmt, "--bootstrap", "50", "--top-k")
    assert "unranked pool" in out
    for needs_order in ("Agreement by rank", "Worst goldens", "Top-k: each golden cut",
                        "Reranking these chunks", "Context precision per golden"):
        assert needs_order not in out, needs_order
    assert "Agreement on grades" in out
    board = ok("judges", str(db), "-f", fmt, "--bootstrap", "50")
    assert "no order, so no judge" in board and "Lin's" not in board
    refused = run("judges", str(db), "--sort", "mae")
    assert refused.exit_code != 0 and "unranked pool has no CP" in refused.output


def test_a_run_is_ranked_by_score_and_keeps_cp(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=8)
    db = imported(tmp_path, c, ranked=True)
    with Session(db, create=False) as session:
        assert not session.unranked()
        ranked: dict[str, list[tuple[float, str]]] = {}
        for line in c["run"].read_text().splitlines():
            q, _, d, _, score, _ = line.split()
            ranked.setdefault(q, []).append((float(score), d))
        for golden in session.goldens():
            expected = [d for _, d in sorted(ranked[golden.id], reverse=True)]
            assert [ch.doc_id for ch in golden.chunks] == expected
    report = json.loads(ok("report", str(db), "-j", "gpt", "-f", "json", "--bootstrap", "50"))
    assert report["context_precision"]["goldens"] == 8
    assert all(row["mean_cp_human"] is not None for row in report["grades"]["sensitivity"])
    # A pool cannot join ranked lists.
    refused = run("import-trec", str(db), "--queries", str(c["topics"]), "--pool",
                  str(c["files"]["nist"]))
    assert refused.exit_code != 0 and "holds ranked lists" in refused.output


@pytest.mark.parametrize(("name", "text", "said"), [
    ("qrels", "q0 0 d0_0 7\n", "line 1, field 'grade': the grade 7 is outside the scale (0 to 3)"),
    ("qrels", "q0 0 d0_0 high\n", "line 1, field 'grade': the grade 'high' is not a whole"),
    ("qrels", "q0 0 d0_0\n", "line 1: a line holds qid 0 docid grade (4 fields); this one has 3"),
    ("run", "q0 Q0 d0_0 1 x bm25\n", "line 1, field 'score': the score 'x' is not a number"),
    ("run", "q99 Q0 d 1 2.0 bm25\n", "query 'q99' is not in"),
    ("queries", "q0 no tab here\n", "line 1: a query line is its id, a tab, then its text"),
])
def test_a_bad_file_is_refused_by_file_line_and_value_and_no_session_is_left(
        tmp_path: Path, name: str, text: str, said: str) -> None:
    c = collection(tmp_path, queries=2)
    bad = tmp_path / f"bad.{name}"
    bad.write_text(text)
    queries = str(bad) if name == "queries" else str(c["topics"])
    db = tmp_path / "new.db"
    result = run("import-trec", str(db), "--queries", queries,
                 *(["--run", str(bad)] if name == "run" else ["--pool", str(c["files"]["nist"])]),
                 "--scale", "0-3",
                 *(["--judge", f"j={bad}"] if name == "qrels" else []))
    assert result.exit_code != 0
    assert str(bad) in result.output and said in result.output, result.output
    assert "Traceback" not in result.output
    assert not db.exists()


def test_a_failed_import_into_an_existing_session_changes_nothing(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=3)
    db = imported(tmp_path, c)
    with Session(db, create=False) as session:
        before = session.judge_verdict_counts()
    bad = tmp_path / "bad.qrels"
    bad.write_text("q0 0 d0_0 1\nq0 0 d0_1 9\n")
    result = run("import-trec", str(db), "--queries", str(c["topics"]), "--pool",
                 str(c["files"]["nist"]), "--judge", f"late={bad}")
    assert result.exit_code != 0 and "line 2" in result.output and "9" in result.output
    with Session(db, create=False) as session:
        assert "late" not in {j.name for j in session.judges()}
        assert session.judge_verdict_counts() == before


def test_options_that_cannot_stand_are_sentences(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=2)
    both = run("import-trec", str(tmp_path / "x.db"), "--queries", str(c["topics"]),
               "--run", str(c["run"]), "--pool", str(c["files"]["nist"]))
    assert both.exit_code != 0 and "give one of --run" in both.output
    named = run("import-trec", str(tmp_path / "x.db"), "--queries", str(c["topics"]),
                "--pool", str(c["files"]["nist"]), "--labels", "nist")
    assert named.exit_code != 0 and "NAME=QRELS" in named.output
    scale = run("import-trec", str(tmp_path / "x.db"), "--queries", str(c["topics"]),
                "--pool", str(c["files"]["nist"]), "--scale", "1-3")
    assert scale.exit_code != 0 and "0-N" in scale.output
    assert not (tmp_path / "x.db").exists()


MANY = tuple(f"a-rather-long-judge-name-number-{n:02d}" for n in range(12))


def test_a_leaderboard_of_many_judges_stays_readable(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=20, judges=MANY)
    db = tmp_path / "many.db"
    ok("import-trec", str(db), "--queries", str(c["topics"]), "--pool", str(c["files"]["nist"]),
       "--labels", f"nist={c['files']['nist']}",
       *(a for name in MANY for a in ("--judge", f"{name}={c['files'][name]}")))
    board = json.loads(ok("judges", str(db), "-f", "json", "--bootstrap", "100"))
    separated = [p for p in board["pairs"] if p["better"] is not None]
    assert len(board["pairs"]) == 66 and 5 < len(separated) < 66  # JSON keeps every pair
    table = ok("judges", str(db), "--bootstrap", "100")
    assert "the 10 most and 10 least alike" in table
    assert "Judges against each other: Cohen's kappa" not in table
    markdown = ok("judges", str(db), "--bootstrap", "100", "-f", "markdown")
    assert markdown.count(" is better") == len(separated)
    assert "no significant difference" not in markdown
    assert f"{66 - len(separated)} pairs no test separates are left out" in markdown
    headline = table.split("\n\n")[0]
    assert headline.count(" beats ") == 5 and f"and {len(separated) - 5} more pairs" in headline
    # A column no judge has a value for goes, with one line saying why; names never break.
    assert "Left out, undefined for every judge: reasons marked wrong" in markdown
    for name in MANY:
        assert name in table
    every = ok("judges", str(db), "--bootstrap", "100", "--all-pairs", "-f", "markdown")
    assert "Judges against each other: Cohen's kappa" in every
    assert every.count("no significant difference") == 66 - len(separated)
    html = ok("judges", str(db), "--bootstrap", "100", "-f", "html")
    assert 'id="chart-judge-heatmap"' in html


def test_a_goldens_file_with_a_grade_past_the_sessions_scale_is_refused(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=2)
    db = imported(tmp_path, c)
    with Session(db, create=False) as session:
        [golden, _] = session.goldens()
    line = {"id": "extra", "user_input": "q", "retrieved_contexts": ["a", "b"],
            "metadata": {"trec": "pool"},
            "judges": {"gpt": [{"verdict": 1, "grade": 2}, {"verdict": 1, "grade": 4}]}}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    result = run("import", str(bad), "--session", str(db))
    assert result.exit_code != 0
    assert "line 1, field 'judge_verdicts.gpt': the grade 4 at rank 2" in result.output
    assert "(0 to 3)" in result.output
    with Session(db, create=False) as session:
        assert "extra" not in session.golden_ids() and golden.id in session.golden_ids()


def test_a_trec_session_round_trips_through_the_session_jsonl(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=3)
    db = imported(tmp_path, c)
    first = tmp_path / "first.jsonl"
    ok("export", str(db), "-o", str(first))
    again = tmp_path / "again.db"
    ok("import", str(first), "--session", str(again))
    second = tmp_path / "second.jsonl"
    ok("export", str(again), "-o", str(second))
    assert first.read_text() == second.read_text()
    assert '"grade": 3' in first.read_text()  # people's grades ride in their marks


def test_topics_and_corpora_under_other_collections_key_names(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=2)
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"qid": f"q{i}", "query": f"question {i}"}) + "\n"
                               for i in range(2)))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"docid": "d0_0", "passage": "a passage"}) + "\n" +
                      json.dumps({"pid": "d1_3", "contents": "more text"}) + "\n")
    db = tmp_path / "k.db"
    ok("import-trec", str(db), "--queries", str(queries), "--pool", str(c["files"]["nist"]),
       "--corpus", str(corpus))
    with Session(db, create=False) as session:
        first, second = session.goldens()
        assert (first.user_input, first.chunks[0].text) == ("question 0", "a passage")
        assert second.chunks[3].text == "more text"


def test_a_windows_topics_file_with_a_byte_order_mark_reads_clean(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=2)
    topics = tmp_path / "bom.tsv"
    topics.write_bytes("\ufeffq0\tquestion zero\r\nq1\tquestion one\r\n".encode())
    db = tmp_path / "bom.db"
    ok("import-trec", str(db), "--queries", str(topics), "--pool", str(c["files"]["nist"]))
    with Session(db, create=False) as session:
        assert session.golden_ids() == ["q0", "q1"]
        assert session.golden("q0").user_input == "question zero"


def test_a_missing_file_is_a_sentence_that_says_to_check_the_path(tmp_path: Path) -> None:
    c = collection(tmp_path, queries=2)
    result = run("import-trec", str(tmp_path / "n.db"), "--queries", str(c["topics"]), "--pool",
                 str(tmp_path / "nope.qrels"))
    assert result.exit_code != 0
    assert f"{tmp_path / 'nope.qrels'}: there is no such file. Check the path" in result.output
    assert not (tmp_path / "n.db").exists()


def test_the_python_api_imports_a_collection_as_the_command_does(tmp_path: Path) -> None:
    from annotator import api
    from annotator.errors import AnnotatorError

    c = collection(tmp_path)
    by_command = imported(tmp_path, c, "--relevant-from", "3")
    by_api = tmp_path / "api.db"
    summary = api.import_trec(by_api, c["topics"], pool=c["files"]["nist"], corpus=c["corpus"],
                              labels={"nist": c["files"]["nist"]},
                              judges={name: c["files"][name] for name in JUDGES},
                              relevant_from=3)
    assert (summary.goldens_added, summary.labels_added) == (30, 240)
    assert summary.verdicts_added == 240 * len(JUDGES)
    stamps = re.compile(r'"(created_at|updated_at)": "[^"]*"')
    exported = [stamps.sub("", ok("export", str(db), "--format", "jsonl"))
                for db in (by_command, by_api)]
    assert exported[0] == exported[1]  # the same goldens, grades and verdicts, but their time
    with Session(by_api) as session:
        assert session.scale() is not None and session.scale().relevant_from == 3  # type: ignore[union-attr]
        assert session.unranked()
    # A bad option is a sentence, and a session the call made is not left behind.
    with pytest.raises(AnnotatorError, match="0-N"):
        api.import_trec(tmp_path / "none.db", c["topics"], pool=c["files"]["nist"], scale="3")
    assert not (tmp_path / "none.db").exists()


def test_qrels_outside_the_pool_are_counted_and_a_pair_graded_twice_is_refused(
        tmp_path: Path) -> None:
    c = collection(tmp_path, queries=3, docs=4)
    judge = tmp_path / "outside.qrels"
    judge.write_text(c["files"]["gpt"].read_text() + "q0 0 not-pooled 2\nq9 0 d9_0 1\n"
                     "q0 0 not-pooled 2\n")  # the same grade again is no conflict
    db = tmp_path / "trec.db"
    said = ok("import-trec", str(db), "--queries", str(c["topics"]), "--pool",
              str(c["files"]["nist"]), "--judge", f"gpt={judge}")
    assert "grades 2 documents that the pool does not hold" in said
    for extra, line in (("q0 0 d0_0 9\n", 13), ("q0 0 not-pooled 2\nq0 0 not-pooled 1\n", 14),
                        (f"q0 0 d0_1 {2**40}\n", 13)):
        bad = tmp_path / "bad.qrels"
        bad.write_text(c["files"]["gpt"].read_text() + extra)
        result = run("import-trec", str(tmp_path / "new.db"), "--queries", str(c["topics"]),
                     "--pool", str(c["files"]["nist"]), "--judge", f"gpt={bad}")
        assert result.exit_code == 2 and f"bad.qrels, line {line}" in result.output, \
            result.output
        assert not (tmp_path / "new.db").exists()
