"""annotator.api, the Python way in: docs/python.md's example runs as written, and each function
gives what the matching command gives."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator import api
from annotator.cli import cli
from annotator.errors import InputError, SessionError
from annotator.store.session import Session
from tests.conftest import ROOT, TEAM_BANKING, banking_file, write_lines


def example() -> str:
    """The Python block of docs/python.md."""
    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(.*?)```", page, re.S)
    return str(code)


def test_the_documented_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "sample_sessions").symlink_to(ROOT / "sample_sessions")
    script = tmp_path / "example.py"
    script.write_text(example(), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "16 goldens, 160 labels"
    assert lines[1].startswith("Judge 'sample-judge' against sample-reviewer on 80 chunks")
    assert re.fullmatch(r"kappa 0\.\d{3} \(95% CI 0\.\d{3} to 0\.\d{3}\)", lines[2])
    assert lines[3] == "['sample-judge']"
    assert lines[5].endswith("chunks where the judge and sample-reviewer differ")


def test_the_report_and_leaderboard_are_the_commands_json(tmp_path: Path) -> None:
    db = tmp_path / "team.db"
    api.import_goldens(db, TEAM_BANKING)
    runner = CliRunner()
    for command, ours in (
            (["report", str(db), "--annotator", "sample-reviewer", "--bootstrap", "100",
              "--format", "json"],
             api.report(db, annotators=["sample-reviewer"], bootstrap=100)),
            (["judges", str(db), "--annotator", "second-reviewer", "--bootstrap", "100",
              "--format", "json"],
             api.leaderboard(db, annotator="second-reviewer", bootstrap=100))):
        done = runner.invoke(cli, command)
        assert done.exit_code == 0, done.output
        assert ours == json.loads(done.stdout)


def test_chunks_hold_every_judge_verdict_and_every_label(tmp_path: Path) -> None:
    db = tmp_path / "team.db"
    api.import_goldens(db, TEAM_BANKING)
    with api.open_session(db) as session:
        rows = api.chunks(session)  # an open session works as well as a path
        assert len(rows) == session.count_chunks() == 80
        labels = session.labels("second-reviewer")
        verdicts = session.verdicts("sample-judge")
        for row in rows:
            chunk = session.golden(row["golden_id"]).chunks[row["rank"] - 1]
            assert row["chunk"] == chunk.text
            assert row["label:second-reviewer"] == labels[chunk.id].verdict
            assert row["verdict:sample-judge"] == verdicts[chunk.id].verdict
            assert row["reason:sample-judge"] == verdicts[chunk.id].reason
    only = api.chunks(db, judges=[], annotators=["sample-reviewer"])
    assert set(only[0]) == {"golden_id", "rank", "question", "chunk", "doc_id", "score",
                            "label:sample-reviewer", "note:sample-reviewer"}
    frame = api.chunks_frame(db)
    assert len(frame) == 80 and list(frame.columns) == list(rows[0])


def test_a_reader_never_writes_and_errors_are_sentences(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = banking_file(tmp_path / "b.db")
    with Session(db):
        pass  # a clean close: the file as a person leaves it

    def digest() -> str:
        return hashlib.sha256(db.read_bytes()).hexdigest()

    before = digest()
    api.report(db, bootstrap=0)
    api.chunks(db)
    assert digest() == before and not Path(f"{db}-wal").exists()
    with pytest.raises(SessionError, match="does not exist; make it with"):
        api.report(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(SessionError, match=r"chunks_frame needs pandas \(pip install pandas\)"):
        api.chunks_frame(db)


def test_a_bad_file_changes_nothing_and_leaves_no_new_session(tmp_path: Path) -> None:
    good = ROOT / "sample_sessions" / "banking.jsonl"
    bad = write_lines(tmp_path / "bad.jsonl", [{"id": "x", "user_input": "q?",
                                                "retrieved_contexts": "not a list"}])
    with pytest.raises(InputError, match=r"bad\.jsonl"):
        api.import_goldens(tmp_path / "new.db", bad)
    assert not (tmp_path / "new.db").exists()
    db = tmp_path / "kept.db"
    with pytest.raises(InputError):
        api.import_goldens(db, good, bad)  # the first file is in; the second changed nothing
    with api.open_session(db) as session:
        assert session.count_goldens() == 16


def test_misuse_is_a_sentence_never_a_raw_error(tmp_path: Path) -> None:
    from annotator.errors import AnnotatorError

    db = tmp_path / "team.db"
    api.import_goldens(db, TEAM_BANKING)
    closed = api.open_session(db)
    closed.close()
    misuse: dict[str, Callable[[], object]] = {
        "no judge named 'nope'": lambda: api.chunks(db, judges=["nope"]),
        "Nobody called 'nobody'": lambda: api.report(db, annotators=["nobody"], bootstrap=0),
        "0 or more": lambda: api.report(db, annotators=["sample-reviewer"], bootstrap=-1),
        "from 0 to 1": lambda: api.report(db, annotators=["sample-reviewer"], pass_mark=3),
        "source is one of": lambda: api.import_goldens(db, TEAM_BANKING, source="zzz"),
        "mapping:": lambda: api.import_goldens(db, TEAM_BANKING, mapping={"nope": "x"}),
        "was closed; open it again": lambda: api.chunks(closed),
        "not int": lambda: api.chunks(5),  # type: ignore[arg-type]
    }
    for sentence, call in misuse.items():
        with pytest.raises(AnnotatorError, match=re.escape(sentence)):
            call()
    # One name as a string is that name, not its letters.
    assert api.chunks(db, judges="sample-judge", annotators="second-reviewer") == api.chunks(
        db, judges=["sample-judge"], annotators=["second-reviewer"])


def test_chunks_read_as_columns_are_the_session_jsonl_s_chunk_table(tmp_path: Path) -> None:
    """chunks() and chunks_frame() read each column in one query; they give what the session
    JSONL's records give, row for row and dtype for dtype: on a team sample with notes, unsure
    answers and a distractor, a judge run twice with a failed call, and a TREC pool with
    document ids and scores."""
    import pandas
    from pandas.testing import assert_frame_equal

    from annotator.formats import chunk_table
    from annotator.store.session import Session
    from annotator.verdict import DISTRACTOR, UNSURE
    from tests.conftest import banking_file
    from tests.test_import_trec import collection, imported

    team = banking_file(tmp_path / "team.db", people=("sample-reviewer", "second-reviewer"))
    with Session(team) as session:
        goldens = session.goldens()
        first, second = goldens[0].chunks, goldens[1].chunks
        session.decide("alice", first[0].id, UNSURE, "set", note="can't tell [b]why[/b] 🏦")
        session.decide("alice", first[1].id, DISTRACTOR, "set")
        session.decide("alice", second[2].id, 1, "set", note="")
        session.set_note("alice", second[3].id, "only a note")
        # An empty note stored by an older version, on a golden with no other note: the
        # session JSONL gives that golden's chunks no note at all.
        session.decide("alice", goldens[2].chunks[0].id, 0, "set")
        with session.sqlite:
            session.conn.execute("UPDATE labels SET note = '' WHERE chunk_id = ?",
                                 [goldens[2].chunks[0].id])
        session.record_call("sample-judge", first[0].id, verdict=1, reason="again",
                            p_relevant=0.25)
        session.record_call("sample-judge", first[1].id, verdict=None, error="HTTP 500")
        session.record_call("sample-judge", first[2].id, verdict=0, reason="second run",
                            repetition=2)
    trec_dir = tmp_path / "trec"
    trec_dir.mkdir()
    trec = imported(trec_dir, collection(trec_dir, queries=4), ranked=True)
    for db in (team, trec):
        with Session(db) as session:
            judges = [j.name for j in session.judges()]
            people = session.annotators()
            expected = list(chunk_table(session.export_records(), judges, people))
        assert api.chunks(db) == expected
        assert_frame_equal(api.chunks_frame(db), pandas.DataFrame(expected))
    assert api.chunks(team, judges=[], annotators=["alice"])[0]["label:alice"] == "unsure"
