"""Import and export on real session files: formats, round trips, re-import, and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.errors import InputError
from annotator.formats import read_goldens, write_csv, write_jsonl
from annotator.models import ImportSummary
from annotator.store.session import Session
from tests.conftest import BANKING, ROOT, SAMPLES, TEAM_BANKING, dump, golden, write_lines


def import_file(session: Session, path: Path, *, replace: bool = False) -> ImportSummary:
    return session.import_goldens(read_goldens(path), path=str(path), replace=replace)


def export_text(session: Session, writer=write_jsonl) -> str:  # type: ignore[no-untyped-def]
    import io

    buffer = io.StringIO()
    writer(session.export_records(), buffer)
    return buffer.getvalue()


def test_there_are_three_samples() -> None:
    assert {p.name for p in SAMPLES} >= {"banking.jsonl", "software_docs.jsonl", "insurance.jsonl"}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_imports_and_is_realistic(sample: Path, tmp_path: Path) -> None:
    with Session(tmp_path / "s.db") as session:
        summary = import_file(session, sample)
        goldens = session.goldens()
        assert 15 <= len(goldens) <= 30
        assert all(4 <= len(g.chunks) <= 10 for g in goldens)
        assert summary.goldens_added == len(goldens)
        [judge] = session.judges()
        verdicts = session.verdicts(judge.name)
        assert len(verdicts) == session.count_chunks()  # a verdict on every chunk
        assert all(v.reason for v in verdicts.values())
        team = TEAM_BANKING.parent / sample.name
        if team.exists():  # the newcomer's sample carries nobody's labels; its team copy does
            assert session.annotators() == []
            import_file(session, team)
        truth = session.labels("sample-reviewer")
        looser = sum(1 for c, v in verdicts.items() if v.verdict == 1 and truth[c].verdict == 0)
        stricter = sum(1 for c, v in verdicts.items() if v.verdict == 0 and truth[c].verdict == 1)
        assert looser >= 3 and stricter >= 3  # mistakes of both kinds
        assert all("no model produced them" in g.metadata["sample_note"] for g in goldens)
    assert "savings-min-balance" in sample.read_text(encoding="utf-8") or sample.stem != "banking"


def test_the_first_commands_sample_is_unlabelled_and_its_team_copy_has_two_people(
        tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme.split("<!-- try-command -->")[1].split("<!-- /try-command -->")[0]
    [opened] = [word for word in first.split() if word.endswith(".jsonl")]
    assert ROOT / opened == BANKING
    with Session(tmp_path / "solo.db") as solo, Session(tmp_path / "team.db") as team:
        import_file(solo, BANKING)
        import_file(team, TEAM_BANKING)
        assert solo.annotators() == [] and [j.name for j in solo.judges()] == ["sample-judge"]
        assert team.annotators() == ["sample-reviewer", "second-reviewer"]
        assert [g.chunks for g in team.goldens()] == [g.chunks for g in solo.goldens()]
        assert team.verdicts("sample-judge") == solo.verdicts("sample-judge")
        first_, second = (team.labels(who) for who in team.annotators())
        differ = sum(first_[c].verdict != second[c].verdict for c in first_)
        assert len(first_) == len(second) == team.count_chunks() and 3 <= differ <= 10


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_session_jsonl_round_trips_byte_for_byte(sample: Path, tmp_path: Path) -> None:
    with Session(tmp_path / "a.db") as a:
        import_file(a, sample)
        first = export_text(a)
    exported = tmp_path / "exported.jsonl"
    exported.write_text(first, encoding="utf-8")
    with Session(tmp_path / "b.db") as b:
        import_file(b, exported)
        assert export_text(b) == first


def test_csv_round_trips_and_reads_like_jsonl(tmp_path: Path) -> None:
    sample = SAMPLES[0]
    with Session(tmp_path / "a.db") as a:
        import_file(a, sample)
        as_jsonl, as_csv = export_text(a), export_text(a, write_csv)
    path = tmp_path / "exported.csv"
    path.write_text(as_csv, encoding="utf-8")
    with Session(tmp_path / "b.db") as b:
        import_file(b, path)
        assert export_text(b) == as_jsonl
        assert export_text(b, write_csv) == as_csv


def test_a_fresh_import_is_loaded_whole_and_the_file_is_left_as_every_session(
        tmp_path: Path) -> None:
    import sqlite3

    with Session(tmp_path / "a.db") as fresh:  # people, notes, judges: every kind of row
        import_file(fresh, TEAM_BANKING)
        assert fresh.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert fresh.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        # Loaded without row-by-row reference checks: every reference must hold all the same.
        assert fresh.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert fresh.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        loaded = export_text(fresh)
    other = sqlite3.connect(tmp_path / "b.db")  # a file someone else has open: loaded as usual
    with Session(tmp_path / "b.db") as shared:
        other.execute("SELECT count(*) FROM goldens").fetchone()
        import_file(shared, TEAM_BANKING)
        assert export_text(shared) == loaded
        assert shared.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()


def test_reimporting_the_same_file_changes_nothing(session: Session, session_path: Path) -> None:
    import_file(session, SAMPLES[0])
    before = dump(session_path)
    summary = import_file(session, SAMPLES[0])
    assert summary.changed_nothing
    assert dump(session_path) == before


def test_labels_made_after_import_survive_a_reimport(banking: Session) -> None:
    chunk = banking.goldens()[0].chunks[1]
    banking.decide("alice", chunk.id, 1, "flip", judge="sample-judge", shown_verdict=0)
    import_file(banking, Path(SAMPLES[0]).parent / "banking.jsonl")
    assert banking.labels("alice")[chunk.id].verdict == 1


def test_ragas_v1_aliases_and_unknown_fields(tmp_path: Path, session: Session) -> None:
    path = write_lines(tmp_path / "v1.jsonl", [
        {"question": "Q?", "ground_truth": "R", "answer": "A", "contexts": ["c1", "c2"],
         "reference_contexts": ["c1"]},
    ])
    import_file(session, path)
    [g] = session.goldens()
    assert (g.user_input, g.reference, g.response) == ("Q?", "R", "A")
    assert [c.text for c in g.chunks] == ["c1", "c2"]
    assert g.metadata == {"reference_contexts": ["c1"]}  # kept, not lost
    assert g.id.startswith("g-")


def test_a_missing_id_is_a_stable_content_hash(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "noid.jsonl", [golden(id=...)])
    ids = []
    for name in ("a.db", "b.db"):
        with Session(tmp_path / name) as s:
            import_file(s, path)
            ids.append(s.golden_ids())
    assert ids[0] == ids[1] and len(ids[0]) == 1
    with Session(tmp_path / "a.db") as s:
        assert import_file(s, path).changed_nothing


def test_csv_with_ragas_python_reprs_and_extra_columns(tmp_path: Path, session: Session) -> None:
    path = tmp_path / "ragas.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["user_input", "retrieved_contexts", "reference", "retriever"])
        writer.writerow(["Q?", str(['it\'s "quoted"', "b"]), "R", "bm25"])
        writer.writerow(["Q2?", json.dumps(["x"]), "R2", "dense"])
    import_file(session, path)
    first, second = session.goldens()
    assert [c.text for c in first.chunks] == ['it\'s "quoted"', "b"]
    assert first.metadata == {"retriever": "bm25"} and second.metadata == {"retriever": "dense"}


def test_a_json_array_file(tmp_path: Path, session: Session) -> None:
    path = tmp_path / "goldens.json"
    path.write_text(json.dumps([golden(), golden(id="g2")]), encoding="utf-8")
    import_file(session, path)
    assert session.golden_ids() == ["g1", "g2"]


def test_odd_text_is_stored_literally(tmp_path: Path, session: Session) -> None:
    odd = ["[/b] list[int] [link=x]y[/link]", "<s>[INST] hi [/INST]", "emoji 🧪👩‍🔬", "עברית RTL",
           "tab\tand\nnewline", ""]
    path = write_lines(tmp_path / "odd.jsonl", [golden(retrieved_contexts=odd, user_input="[b]?")])
    import_file(session, path)
    [g] = session.goldens()
    assert [c.text for c in g.chunks] == odd and g.user_input == "[b]?"


def test_a_5_mb_chunk_imports(tmp_path: Path, session: Session) -> None:
    big = "relevant text " * (5 * 1024 * 1024 // 14)
    path = write_lines(tmp_path / "big.jsonl", [golden(retrieved_contexts=[big, "small"])])
    import_file(session, path)
    assert session.goldens()[0].chunks[0].text == big
    csv_path = tmp_path / "big.csv"
    csv_path.write_text(export_text(session, write_csv), encoding="utf-8")
    with Session(tmp_path / "csv.db") as other:
        import_file(other, csv_path)
        assert other.goldens()[0].chunks[0].text == big


GOOD = json.dumps(golden(id="ok-1"))

BAD_JSONL = {
    "malformed JSON": ([GOOD, '{"user_input": "q", oops}'], 2, None, "not valid JSON"),
    "missing user_input": ([GOOD, json.dumps(golden(user_input=...))], 2, "user_input",
                           "question is missing"),
    "contexts not a list": ([json.dumps(golden(retrieved_contexts="chunk"))], 1,
                            "retrieved_contexts", "must be a list"),
    "contexts empty": ([json.dumps(golden(retrieved_contexts=[]))], 1, "retrieved_contexts",
                       "empty"),
    "verdict 2": ([json.dumps(golden(judge="j", judge_verdicts=[{"verdict": 2, "reason": "r"},
                                                                None, None]))],
                  1, "judge_verdicts", "rank 1 is 2"),
    'verdict "1"': ([json.dumps(golden(judge="j", judge_verdicts=[{"verdict": "1"}, 1, 1]))], 1,
                    "judge_verdicts", 'rank 1 is "1"'),
    "too many verdicts": ([json.dumps(golden(judge="j", judge_verdicts=[1, 0, 1, 1]))], 1,
                          "judge_verdicts", "golden 'g1' has 3 ranked chunks but 4 verdicts"),
    "too few verdicts": ([json.dumps(golden(judge="j", judge_verdicts=[1, 0]))], 1,
                         "judge_verdicts", "golden 'g1' has 3 ranked chunks but 2 verdicts"),
    "too few human labels": ([GOOD, json.dumps(golden(human_labels={"al": [1]}))], 2,
                             "human_labels.al", "golden 'g1' has 3 ranked chunks but 1 label "
                             r"here; give one per ranked chunk, in rank order \(null where"),
    "too few notes": ([json.dumps(golden(human_notes={"al": ["why"]}))], 1, "human_notes.al",
                      "golden 'g1' has 3 ranked chunks but 1 note here"),
    "duplicate id, other content": ([GOOD, json.dumps(golden(id="ok-1", reference="other"))], 2,
                                    "id", "already used on line 1"),
    "human label 2": ([json.dumps(golden(human_labels={"al": [2, 0, 0]}))], 1, "human_labels.al",
                      'use 0, 1, "unsure" or null'),
}


@pytest.mark.parametrize("case", list(BAD_JSONL), ids=list(BAD_JSONL))
def test_bad_jsonl_names_line_and_field_and_changes_nothing(
    case: str, tmp_path: Path, session: Session, session_path: Path
) -> None:
    import_file(session, SAMPLES[0])
    before = dump(session_path)
    lines, line, field, message = BAD_JSONL[case]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError, match=message) as caught:
        import_file(session, path)
    assert caught.value.line == line and caught.value.field == field
    assert str(caught.value).startswith(f"{path}, line {line}")
    assert dump(session_path) == before  # not half-imported


def test_a_different_golden_under_a_stored_id_needs_replace(
    tmp_path: Path, session: Session, session_path: Path
) -> None:
    import_file(session, write_lines(tmp_path / "a.jsonl", [golden()]))
    before = dump(session_path)
    changed = write_lines(tmp_path / "b.jsonl", [golden(reference="A different answer.")])
    with pytest.raises(InputError, match=r"already holds a different golden .*--replace"):
        import_file(session, changed)
    assert dump(session_path) == before
    summary = import_file(session, changed, replace=True)
    assert summary.goldens_replaced == 1
    assert session.golden("g1").reference == "A different answer."
    assert session.golden_ids() == ["g1"]


def test_a_conflicting_verdict_needs_replace(tmp_path: Path, session: Session) -> None:
    import_file(session, write_lines(tmp_path / "a.jsonl",
                                     [golden(judge="j", judge_verdicts=[1, 0, 0])]))
    other = write_lines(tmp_path / "b.jsonl", [golden(judge="j", judge_verdicts=[1, 1, 0])])
    with pytest.raises(InputError, match="rank 2"):
        import_file(session, other)
    import_file(session, other, replace=True)
    chunk = session.golden("g1").chunks[1]
    assert session.verdicts("j")[chunk.id].verdict == 1


@pytest.mark.parametrize(
    ("name", "content", "line", "message"),
    [
        ("bytes.jsonl", GOOD.encode() + b"\n" + b'{"user_input": "caf\xe9"}\n', 2, "not UTF-8"),
        ("empty.jsonl", b"", None, "empty"),
        ("blank.jsonl", b"\n \n", None, "only blank lines"),
        ("missing.csv", b"user_input,reference\nq,r\n", 1, "no 'retrieved_contexts' column"),
        ("bytes.csv", b'user_input,reference,retrieved_contexts\nq,r,"[""a""]"\nq2,\xff,[]\n', 3,
         "not UTF-8"),
        ("cell.csv", b"user_input,reference,retrieved_contexts\nq,r,not json\n", 2,
         "JSON array"),
        ("goldens.txt", b"hello", None, "not a format"),
    ],
)
def test_bad_files(tmp_path: Path, session: Session, session_path: Path, name: str,
                   content: bytes, line: int | None, message: str) -> None:
    before = dump(session_path)
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        import_file(session, path)
    assert caught.value.line == line
    assert dump(session_path) == before


def test_partial_labels_and_notes_round_trip(tmp_path: Path, session: Session) -> None:
    obj = golden(judge="j", judge_verdicts=[{"verdict": 1, "reason": "r", "p_relevant": 0.8}, None,
                                            None],
                 human_labels={"alice": [1, None, 0]}, human_notes={"bob": [None, "hmm", None]})
    path = write_lines(tmp_path / "a.jsonl", [obj])
    import_file(session, path)
    [exported] = [json.loads(line) for line in export_text(session).splitlines()]
    assert exported["judge_verdicts"] == [{"verdict": 1, "reason": "r", "p_relevant": 0.8},
                                          None, None]
    assert exported["human_labels"] == {"alice": [1, None, 0]}
    assert exported["human_notes"] == {"bob": [None, "hmm", None]}


def _pandas_table() -> Any:
    import pandas as pd

    return pd.DataFrame([
        {"id": "g1", "user_input": "q1", "reference": "r", "retrieved_contexts": ["a", "b"],
         "human_labels": {" alice ": [1, 0]}, "response": None},
        {"id": "g2", "user_input": "q2", "reference": "r", "retrieved_contexts": ["c"],
         "human_labels": {"Alice": [1]}, "response": "said"},
    ])


@pytest.mark.parametrize("orient", ["columns", "index", "split", "records"])
@pytest.mark.parametrize("indent", [None, 2])
def test_every_orientation_pandas_writes_is_read(tmp_path: Path, orient: str,
                                                 indent: int | None) -> None:
    path = tmp_path / "table.json"
    _pandas_table().to_json(path, orient=orient, indent=indent)
    notices: list[str] = []
    records = list(read_goldens(path, notices=notices))
    assert [(r.id, r.retrieved_contexts, r.response) for r in records] == [
        ("g1", ["a", "b"], None), ("g2", ["c"], "said")]
    assert [r.human_labels for r in records] == [{"alice": [1, 0]}, {"Alice": [1]}]
    assert notices == [f'{path}: the annotator name " alice " has spaces around it; its labels '
                       'are kept under "alice".']


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_dict_of_columns_as_hugging_face_to_dict_writes_is_read(tmp_path: Path,
                                                                  suffix: str) -> None:
    import pandas as pd

    # datasets.Dataset.to_dict() is column -> list of cells, as pandas' to_dict("list").
    table = {"question": ["q1", "q2"], "contexts": [["a", "b"], ["c"]],
             "ground_truth": ["r1", "r2"], "id": ["g1", "g2"]}
    assert pd.DataFrame(table).to_dict(orient="list") == table
    path = tmp_path / f"hf{suffix}"
    path.write_text(json.dumps(table), encoding="utf-8")
    records = list(read_goldens(path))
    assert [(r.id, r.user_input, r.retrieved_contexts, r.reference) for r in records] == [
        ("g1", "q1", ["a", "b"], "r1"), ("g2", "q2", ["c"], "r2")]
    path.write_text(json.dumps({**table, "ground_truth": ["r1"]}), encoding="utf-8")
    with pytest.raises(InputError, match=r"columns differ in length \(question: 2, contexts: "
                                         r"2, ground_truth: 1"):
        list(read_goldens(path))


def test_names_differing_only_by_case_are_warned_about_and_spaces_dropped(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    path = tmp_path / "table.json"
    _pandas_table().to_json(path, orient="columns")
    result = CliRunner().invoke(cli, ["import", str(path), "--session", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    assert 'Note: ' in result.stderr and 'kept under "alice"' in result.stderr
    assert ("Warning: the annotators 'Alice' and 'alice' differ only by case or spacing"
            in result.stderr)
    with Session(tmp_path / "s.db") as session:
        assert session.annotators() == ["Alice", "alice"]
    for labels, message in (({"al": [1, 0, 1], " al": [1, 1, 1]}, "once the spaces around them"),
                            ({"  ": [1, 0, 1]}, "the annotator's name is empty")):
        bad = write_lines(tmp_path / "bad.jsonl", [golden(human_labels=labels)])
        with pytest.raises(InputError, match=message):
            list(read_goldens(bad))


@pytest.mark.parametrize(("separator", "word", "given"), [(";", "semicolon", ";"),
                                                          ("\t", "tab", "\\t")])
def test_a_csv_with_another_separator_says_so_and_reads_with_delimiter(
        tmp_path: Path, separator: str, word: str, given: str) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    path = tmp_path / "sheet.csv"
    path.write_text(separator.join(["id", "user_input", "reference", "retrieved_contexts"])
                    + "\n" + separator.join(["g1", "q", "r", '["a", "b"]']) + "\n",
                    encoding="utf-8")
    db = str(tmp_path / "s.db")
    refused = CliRunner().invoke(cli, ["import", str(path), "--session", db])
    assert refused.exit_code == 2
    assert (f"line 1: this looks like a {word}-separated file: the header has '{given}' between "
            f"its columns and no ','. Save it as comma-separated, or pass --delimiter '{given}'."
            in refused.stderr)
    assert not (tmp_path / "s.db").exists()
    read = CliRunner().invoke(cli, ["import", str(path), "--session", db, "--delimiter", given])
    assert read.exit_code == 0 and "1 golden added" in read.stdout
    with Session(db) as session:
        assert session.goldens()[0].chunks[1].text == "b"


def test_json_errors_name_the_line_and_the_column_a_text_editor_shows(tmp_path: Path) -> None:
    cases = {
        "bom.jsonl": ('\ufeff{"user_input": "q", "retrieved_contexts": ["a"], "reference": "r",}\n',
                      1, 67),
        "wide.jsonl": (json.dumps(golden()) + '\n{"user_input": "é€😀", oops}\n', 2, 23),
        "pretty.json": ('[\n  {"user_input": "q",\n   "retrieved_contexts": ["a"] "reference": 1}'
                        '\n]\n', 3, 32),
    }
    for name, (text, line, column) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            list(read_goldens(path))
        assert caught.value.line == line and f"at column {column})" in caught.value.message, name


UNSAFE_JSON = {
    "nested 1,000 levels": ('{"user_input": "q", "reference": "r", "retrieved_contexts": ["a"], '
                            '"metadata": {"m": ' + "[" * 1000 + "]" * 1000 + "}}",
                            "nested more than 64 levels deep"),
    "a 5,000-digit number": ('{"user_input": "q", "reference": "r", "retrieved_contexts": ["a"], '
                             '"metadata": {"n": ' + "9" * 5000 + "}}", "number too long"),
    "a lone surrogate": ('{"user_input": "q \\ud800", "reference": "r", '
                         '"retrieved_contexts": ["a"]}', "lone surrogate"),
    "NaN": ('{"user_input": "q", "reference": "r", "retrieved_contexts": ["a"], '
            '"metadata": {"x": NaN}}', "NaN is not a JSON value"),
    "Infinity": ('{"user_input": "q", "reference": "r", "retrieved_contexts": ["a"], '
                 '"judge_verdicts": [{"verdict": 1, "p_relevant": Infinity}]}',
                 "Infinity is not a JSON value"),
    "a repeated key": ('{"user_input": "q", "reference": "r", "retrieved_contexts": ["a"], '
                       '"reference": "s"}', "the key 'reference' is given twice"),
    "a million chunks": (json.dumps(golden(retrieved_contexts=["c"] * 1_000_001)),
                         "1,000,001 ranked chunks; at most 1,000"),
}


@pytest.mark.parametrize("case", list(UNSAFE_JSON))
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_unsafe_json_is_a_sentence_naming_the_file_and_nothing_is_stored(
        tmp_path: Path, session: Session, session_path: Path, case: str, suffix: str) -> None:
    text, message = UNSAFE_JSON[case]
    path = tmp_path / f"bad{suffix}"
    path.write_text(GOOD + "\n" + (text if suffix == ".jsonl" else "") + "\n"
                    if suffix == ".jsonl" else "[" + GOOD + ", " + text + "]", encoding="utf-8")
    before = dump(session_path)
    with pytest.raises(InputError, match=message) as caught:
        import_file(session, path)
    assert str(path) in str(caught.value)
    if suffix == ".jsonl":
        assert caught.value.line == 2
    assert dump(session_path) == before


def test_look_alike_ids_are_one_id_said_once(tmp_path: Path) -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    rows = [golden(id=composed), golden(id=decomposed + " "), golden(id="x\u200b"),
            golden(id="x")]
    path = write_lines(tmp_path / "ids.jsonl", rows)
    notices: list[str] = []
    records = list(read_goldens(path, notices=notices))
    assert [r.id for r in records] == [composed, composed, "x", "x"]
    assert len(notices) == 1 and "one spelling (Unicode NFC" in notices[0]
    with pytest.raises(InputError, match="only spaces or invisible characters"):
        list(read_goldens(write_lines(tmp_path / "blank.jsonl", [golden(id="\u200b ")])))


def test_a_csv_file_that_changes_between_its_two_reads_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text('id,user_input,reference,retrieved_contexts\ng1,q,r,"[""a""]"\n',
                    encoding="utf-8")
    records = read_goldens(path)
    first = next(records)  # the first pass is done; the second has started
    assert first.id == "g1"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('g2,q,r,"[""b""]"\n')
    with pytest.raises(InputError, match="the file changed while it was being read"):
        list(records)


def test_a_csv_file_that_stops_being_utf8_while_it_is_read_is_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    rows = "".join(f'g{i},q{i},r,"[""{"chunk " * 40}""]"\n' for i in range(2000))
    path.write_text("id,user_input,reference,retrieved_contexts\n" + rows, encoding="utf-8")
    records = read_goldens(path)
    assert next(records).id == "g0"  # the encoding pass is done; rows are being read
    with path.open("r+b") as handle:  # another program rewrites the end as Latin-1
        handle.seek(path.stat().st_size - 4000)
        handle.write(b'g9,caf\xe9,r,"[""x""]"\n' * 100)
    with pytest.raises(InputError, match="the file changed while it was being read") as error:
        list(records)
    assert error.value.line is not None and error.value.line > 1000


def _indexes(path: Path) -> list[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                            "AND sql IS NOT NULL ORDER BY name").fetchall()


def test_a_fresh_import_builds_the_indexes_after_the_load_and_a_failed_one_keeps_them(
        tmp_path: Path) -> None:
    with Session(tmp_path / "empty.db"):
        pass
    schema = _indexes(tmp_path / "empty.db")
    assert any(name == "verdicts_judge_chunk" for name, _ in schema)
    with Session(tmp_path / "s.db") as session:
        session.import_goldens(read_goldens(BANKING), path=str(BANKING))
        # The indexes are back, and the queries that use them still answer.
        assert session.verdicts("sample-judge", ["savings-min-balance"])
    assert _indexes(tmp_path / "s.db") == schema
    bad = write_lines(tmp_path / "bad.jsonl", [golden(id="a"), golden(id="a", user_input="other")])
    with Session(tmp_path / "f.db") as session, pytest.raises(InputError):
        session.import_goldens(read_goldens(bad), path=str(bad))
    assert _indexes(tmp_path / "f.db") == schema


_ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-1, 2), st.floats(allow_nan=True),
                       st.text(max_size=3), st.lists(st.integers(), max_size=1))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    _ANY_VALUE,
    st.fixed_dictionaries({"verdict": _ANY_VALUE}, optional={"reason": _ANY_VALUE,
                                                             "p_relevant": _ANY_VALUE}),
), min_size=1, max_size=4))
def test_a_verdict_list_reads_the_same_whole_as_entry_by_entry(raw: list[Any]) -> None:
    # The importer checks the usual verdict list as a whole (in C); it must accept, refuse
    # and read exactly what the entry-by-entry checks do.
    from annotator.formats.validation import _judge_list, _judge_verdict

    def fail(message: str, field: str | None = None) -> ValueError:
        return ValueError(message)

    def outcome(read: Any) -> Any:
        try:
            return read()
        except ValueError as error:
            return str(error)

    whole = outcome(lambda: _judge_list(raw, len(raw), "judge_verdicts", fail, "g"))
    one_by_one = outcome(lambda: [_judge_verdict(item, rank, "judge_verdicts", fail)
                                  for rank, item in enumerate(raw, 1)])
    assert whole == one_by_one


@pytest.mark.parametrize(("ids", "scores", "says"), [
    (["a", "b"], None, "must be a list of 3 chunk ids (one per ranked chunk"),
    (["a", "a", None], None, 'the id "a" is given to two chunks of this golden'),
    (["a", True, "c"], None, "the id at rank 2 must be a non-empty string, not the boolean true"),
    (["a", " ", "c"], None, "the id at rank 2 must be a non-empty string"),
    (None, [1.0, "high", 0.2], "the score at rank 2 must be a finite number, not the string"),
    (None, {"a": 1}, "must be a list of 3 scores"),
])
def test_chunk_ids_and_scores_are_checked(tmp_path: Path, ids: Any, scores: Any,
                                          says: str) -> None:
    record = golden()
    assert len(record["retrieved_contexts"]) == 3
    if ids is not None:
        record["retrieved_context_ids"] = ids
    if scores is not None:
        record["retrieved_context_scores"] = scores
    path = write_lines(tmp_path / "g.jsonl", [record])
    with pytest.raises(InputError) as error:
        list(read_goldens(path))
    assert says in str(error.value) and "g.jsonl" in str(error.value)
    assert "retrieved_context_" in str(error.value)  # the field is named


def test_chunk_ids_come_in_from_csv_and_changing_them_is_a_different_golden(
        tmp_path: Path) -> None:
    plain = golden()
    path = tmp_path / "g.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "user_input", "reference", "retrieved_contexts",
                         "retrieved_context_ids", "retrieved_context_scores"])
        writer.writerow([plain["id"], plain["user_input"], plain["reference"],
                         json.dumps(plain["retrieved_contexts"]), '["d1", "d2", "d3"]',
                         "[0.9, 0.5, 0.1]"])
    [record] = read_goldens(path)
    assert record.retrieved_context_ids == ["d1", "d2", "d3"]
    assert record.retrieved_context_scores == [0.9, 0.5, 0.1]
    with Session(tmp_path / "s.db") as session:
        import_file(session, write_lines(tmp_path / "plain.jsonl", [plain]))
        with pytest.raises(InputError, match="already holds a different golden"):
            import_file(session, path)  # the same text, but now with ids: not the same golden
        import_file(session, path, replace=True)
        assert [c.doc_id for c in session.goldens()[0].chunks] == ["d1", "d2", "d3"]
        assert [c.score for c in session.goldens()[0].chunks] == [0.9, 0.5, 0.1]


def test_map_reads_a_tracer_or_langsmith_shaped_file(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    rows = [{"run_id": f"r{i}", "trace": {"id": f"t{i}"}, "latency": 0.5 + i,
             "inputs": {"question": f"What is fee {i}?"},
             "outputs": {"documents": [
                 {"page_content": f"fee {i} is 350", "metadata": {"id": f"doc-{i}", "score": 0.9}},
                 {"page_content": "KYC rules", "metadata": {"id": "doc-kyc", "score": 0.2}}]},
             "reference_outputs": {"answer": "350 plus taxes"}} for i in range(3)]
    source = write_lines(tmp_path / "runs.jsonl", rows)
    db = tmp_path / "s.db"
    maps = ["user_input=inputs.question", "retrieved_contexts=outputs.documents[].page_content",
            "retrieved_context_ids=outputs.documents[].metadata.id",
            "retrieved_context_scores=outputs.documents[].metadata.score",
            "ground_truth=reference_outputs.answer",  # a RAGAS v1 name works as a target too
            "id=run_id", "metadata.trace=trace.id"]
    args = ["import", str(source), "--session", str(db)]
    for pair in maps:
        args += ["--map", pair]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    with Session(db) as session:
        [first, *_] = session.goldens()
        assert (first.id, first.user_input, first.reference) == ("r0", "What is fee 0?",
                                                                 "350 plus taxes")
        assert [c.text for c in first.chunks] == ["fee 0 is 350", "KYC rules"]
        assert [(c.doc_id, c.score) for c in first.chunks] == [("doc-0", 0.9), ("doc-kyc", 0.2)]
        # The unmapped number stays as metadata; the mapped trace id under its own name.
        assert first.metadata == {"trace": "t0", "latency": 0.5}


def test_map_reads_a_csv_with_its_own_column_names_and_dotted_headers(tmp_path: Path) -> None:
    path = tmp_path / "hf.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["inputs.query", "passages", "gold"])
        writer.writerow(["Which fee?", '["fee is 350", "KYC"]', "350"])
    from annotator.formats import ColumnMap

    mapping = ColumnMap.parse(["user_input=inputs.query", "retrieved_contexts=passages",
                               "reference=gold"])
    [record] = read_goldens(path, mapping=mapping)
    assert (record.user_input, record.retrieved_contexts, record.reference) == (
        "Which fee?", ["fee is 350", "KYC"], "350")


@pytest.mark.parametrize(("maps", "says"), [
    (["user_input=inputs.q"], "--map user_input=inputs.q: found no 'q' (this level holds: "
                              "question)"),
    (["user_input=inputs.question", "retrieved_contexts=inputs[].x"],
     "'inputs[]' needs a list, and found an object"),
])
def test_a_map_that_does_not_fit_says_which_path_and_what_it_found(
        tmp_path: Path, maps: list[str], says: str) -> None:
    from annotator.formats import ColumnMap

    source = write_lines(tmp_path / "runs.jsonl", [{"inputs": {"question": "q?"}}])
    with pytest.raises(InputError) as error:
        list(read_goldens(source, mapping=ColumnMap.parse(maps)))
    assert says in str(error.value) and "runs.jsonl, line 1" in str(error.value)


@pytest.mark.parametrize(("given", "says"), [
    ("user_input", "is not TARGET=PATH"),
    ("question_text=q", "'question_text' is no golden field"),
])
def test_a_map_that_cannot_be_read_is_a_usage_error(tmp_path: Path, given: str, says: str) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    source = write_lines(tmp_path / "g.jsonl", [golden()])
    done = CliRunner().invoke(cli, ["import", str(source), "--session", str(tmp_path / "s.db"),
                                    "--map", given])
    assert done.exit_code == 2 and says in done.stderr
    assert not (tmp_path / "s.db").exists()


def test_map_reads_a_hugging_face_to_dict_with_its_own_column_names(tmp_path: Path) -> None:
    from annotator.formats import ColumnMap

    table = {"query": ["a?", "b?"], "passages": [["p1", "p2"], ["p3"]], "gold": ["x", "y"],
             "pid": [["d1", "d2"], ["d3"]]}
    path = tmp_path / "hf.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    mapping = ColumnMap.parse(["user_input=query", "retrieved_contexts=passages",
                               "reference=gold", "retrieved_context_ids=pid"])
    records = list(read_goldens(path, mapping=mapping))
    assert [(r.user_input, r.retrieved_contexts, r.reference, r.retrieved_context_ids)
            for r in records] == [("a?", ["p1", "p2"], "x", ["d1", "d2"]),
                                  ("b?", ["p3"], "y", ["d3"])]


def test_json_lines_named_csv_and_a_wide_header_get_short_sentences(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    misnamed = tmp_path / "goldens.csv"
    misnamed.write_text((ROOT / "sample_sessions" / "banking.jsonl").read_text(encoding="utf-8"),
                        encoding="utf-8")
    done = CliRunner().invoke(cli, ["import", str(misnamed), "--session", str(tmp_path / "s.db")])
    assert done.exit_code == 2 and "holds JSON, not comma-separated values" in done.output
    assert len(done.output) < 300
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"column-{'x' * 80}-{i}" for i in range(40)) + "\n" +
                    ",".join("v" for _ in range(40)) + "\n", encoding="utf-8")
    done = CliRunner().invoke(cli, ["import", str(wide), "--session", str(tmp_path / "s.db")])
    assert done.exit_code == 2 and "and 28 more" in done.output and len(done.output) < 900
    assert not (tmp_path / "s.db").exists()
