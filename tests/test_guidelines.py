"""The team's guidelines: stored whole as versions, shown on the screen before a person's next
golden and on a key, recorded on every label, carried by exports and merges, and reported per
version with intervals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score
from textual.widgets import Markdown

from annotator.cli import cli
from annotator.exports import calibration_records
from annotator.formats import read_goldens, write_jsonl
from annotator.people.guidelines import due
from annotator.people.merge import merge_sessions
from annotator.people.review import Review
from annotator.place import place_name
from annotator.report.build import build_report
from annotator.report.serialize import report_dict
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from annotator.tui.screens.guidelines import GuidelinesScreen
from tests.conftest import banking_file, dump

SIZE = (120, 40)
HOSTILE = "# Rules\n\nUseful means it [b]states[/b] the fact 🏦 עברית.\n\n- \x1b]52;c;aGk=\x07 odd\n"


def on_guidelines(app: AnnotatorApp) -> bool:
    """Whether the guidelines are over the screen (a function: mypy narrows no attribute)."""
    return isinstance(app.screen, GuidelinesScreen)


@pytest.fixture
def db(place: str | Path) -> str | Path:
    """The banking sample, nobody's labels, on each store."""
    return banking_file(place, people=())


def stamped(db: str | Path, annotator: str = "alice") -> list[tuple[int, str | None, int | None]]:
    """(chunk id, answer, guideline) of a person's labels, read by a connection of its own."""
    with Session(db, create=False) as session:
        return [tuple(row) for row in session.conn.execute(
            "SELECT chunk_id, answer, guideline FROM labels WHERE annotator = ? ORDER BY chunk_id",
            [annotator])]


def test_set_show_and_list_and_the_same_text_twice_stores_nothing(db: str | Path, tmp_path: Path
                                                                  ) -> None:
    runner = CliRunner()
    first = tmp_path / "g1.md"
    first.write_text(HOSTILE, encoding="utf-8")
    done = runner.invoke(cli, ["guidelines", str(db), "set", str(first), "--by", "lead"])
    assert done.exit_code == 0, done.output
    assert "version 1 stored" in done.output
    again = runner.invoke(cli, ["guidelines", str(db), "set", str(first)])
    assert again.exit_code == 0 and "already in force; nothing changed" in again.output
    second = tmp_path / "g2.md"
    second.write_text("Stricter: the chunk must state the number.\n", encoding="utf-8")
    assert runner.invoke(cli, ["guidelines", str(db), "set", str(second)]).exit_code == 0
    with Session(db) as session:
        versions = session.guidelines()
    assert (versions[0].version, versions[0].text, versions[0].set_by) == (1, HOSTILE, "lead")
    assert [g.version for g in versions] == [1, 2]
    shown = runner.invoke(cli, ["guidelines", str(db), "show", "--version", "1"])
    # The file's text as data: the escape is shown, never sent to the terminal.
    assert "\x1b" not in shown.stdout and "␛]52;c;aGk=" in shown.stdout
    assert "[b]states[/b]" in shown.stdout
    assert "Stricter" in runner.invoke(cli, ["guidelines", str(db), "show"]).stdout
    listed = runner.invoke(cli, ["guidelines", str(db), "list"]).stdout
    assert "version 1" in listed and "by lead" in listed and "version 2" in listed
    info = " ".join(runner.invoke(cli, ["info", str(db)]).stdout.split())
    assert "Guidelines: version 2 in force" in info


@pytest.mark.parametrize(("content", "says"), [
    (None, "there is no such file"),
    (b"", "it is empty"),
    (b"# ok\n\xff\xfe bad", "line 2: not UTF-8 text"),
    (b"x" * 100_001, "guidelines are at most 100,000 bytes"),
])
def test_a_bad_file_is_one_sentence_exit_2_and_changes_nothing(
        db: Path, tmp_path: Path, content: bytes | None, says: str) -> None:
    path = tmp_path / "g.md"
    if content is not None:
        path.write_bytes(content)
    before = dump(db)
    result = CliRunner().invoke(cli, ["guidelines", str(db), "set", str(path)])
    assert result.exit_code == 2
    assert says in result.output and "Traceback" not in result.output
    assert dump(db) == before


def test_show_on_a_session_without_guidelines_says_how_to_set_them_and_writes_nothing(
        db: Path) -> None:
    before = dump(db)
    result = CliRunner().invoke(cli, ["guidelines", str(db), "show"])
    assert result.exit_code == 0 and "has no guidelines yet" in result.output
    refused = CliRunner().invoke(cli, ["guidelines", str(db), "show", "--version", "1"])
    assert refused.exit_code == 0  # nothing to show: the same sentence
    assert dump(db) == before


def test_a_label_records_the_version_its_person_had_been_shown_and_undo_restores_it(
        db: Path) -> None:
    with Session(db) as session:
        ids = [c.id for c in session.golden(session.golden_ids()[0]).chunks]
        session.decide("alice", ids[0], 1, "set")  # before any guidelines
        session.set_guidelines("v1", source=None, by="lead")
        session.decide("alice", ids[1], 1, "set")  # set, but not yet shown to alice
        assert due(session, "alice") is not None
        session.read_guidelines("alice", 1)
        assert due(session, "alice") is None
        session.decide("alice", ids[2], 0, "set")
        session.set_guidelines("v2", source=None, by="lead")
        session.read_guidelines("alice", 2)
        session.read_guidelines("alice", 1)  # an older version shown again changes nothing
        assert session.guidelines_read("alice") == 2
        session.decide("alice", ids[2], 1, "set")  # re-decided under version 2
        assert stamped(db) == [(ids[0], "useful", None), (ids[1], "useful", None),
                               (ids[2], "useful", 2)]
        session.undo("alice")
        assert stamped(db)[2] == (ids[2], "noise", 1)
        session.set_note("alice", ids[2], "a note is no decision")
        assert stamped(db)[2] == (ids[2], "noise", 1)
        assert session.labels("alice")[ids[2]].guideline == 1
        # Events from before guidelines read as they did: no guideline key while none.
        first = next(e for e in session.events("alice") if e["kind"] == "decide")
        assert "guideline" not in first["payload"]["after"]


async def test_the_screen_shows_new_guidelines_before_the_next_golden_and_on_i(db: str | Path) -> None:
    with Session(db) as lead:
        lead.set_guidelines(HOSTILE, source="g1.md", by="lead")
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), place_name(db))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert on_guidelines(app) and app.screen.new  # type: ignore[attr-defined]
            source = app.screen.query_one(Markdown).source
            assert "\x1b" not in source and "␛]52" in source and "[b]states[/b]" in source
            assert session.guidelines_read("alice") == 0  # not read till closed
            await pilot.press(*"af10ux[d]mc")  # keys typed at the guidelines reach nothing behind
            assert on_guidelines(app) and stamped(db) == []
            await pilot.press("enter")
            assert not on_guidelines(app)
            assert session.guidelines_read("alice") == 1
            await pilot.press("a")
            with Session(db) as lead:
                lead.set_guidelines("Version two.", source="g2.md", by="lead")
            await pilot.press("a")  # still on the golden: decided under version 1
            assert [g for _, _, g in stamped(db)] == [1, 1]
            await pilot.press("right_square_bracket")  # the next golden: version 2 first
            await pilot.pause()
            assert on_guidelines(app)
            assert app.screen.guideline.version == 2  # type: ignore[attr-defined]
            await pilot.press("escape", "a")
            assert [g for _, _, g in stamped(db)] == [1, 1, 2]
            await pilot.press("i")
            await pilot.pause()
            assert on_guidelines(app) and not app.screen.new  # type: ignore[attr-defined]
            await pilot.press("i")
            assert not on_guidelines(app)


async def test_i_without_guidelines_says_so_on_the_status_line(db: str | Path) -> None:
    from textual.widgets import Static

    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), place_name(db))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("i")
            assert not on_guidelines(app)
            status = str(app.screen.query_one("#status", Static).content)
            assert "No guidelines yet" in status and len(status) < 80  # one line at 80 columns


def _label_under_two_versions(db: str | Path, seed: int = 3) -> dict[int | None, tuple[list[int],
                                                                                 list[int]]]:
    """alice and bob label every chunk, a random share under version 1 and the rest under
    version 2 (bob's first ten before any guidelines); returns per version the (person, judge)
    pairs."""
    rng = np.random.default_rng(seed)
    pairs: dict[int | None, tuple[list[int], list[int]]] = {}
    with Session(db) as session:
        session.set_guidelines("v1", source=None, by="lead")
        verdicts = session.verdicts("sample-judge")
        chunks = [c.id for g in session.goldens() for c in g.chunks]
        for who in ("alice", "bob"):
            if who == "alice":
                session.read_guidelines(who, 1)
            for i, chunk_id in enumerate(chunks):
                if who == "bob" and i == 10:
                    session.read_guidelines(who, 1)
                if i == len(chunks) // 2:
                    if session.guideline_in_force() == 1:
                        session.set_guidelines("v2", source=None, by="lead")
                    session.read_guidelines(who, 2)
                judge = verdicts[chunk_id].verdict
                assert judge is not None
                answer = int(judge if rng.random() < 0.8 else 1 - judge)
                session.decide(who, chunk_id, answer, "set")
                version = session.labels(who)[chunk_id].guideline
                mine = pairs.setdefault(version, ([], []))
                mine[0].append(answer)
                mine[1].append(judge)
    return pairs


def test_the_report_gives_agreement_per_version_with_intervals(db: str | Path) -> None:
    pairs = _label_under_two_versions(db)
    assert set(pairs) == {None, 1, 2}
    with Session(db) as session:
        report = build_report(session, resamples=200)
        document = report_dict(report)
    rows = document["guidelines"]
    assert [r["version"] for r in rows] == [None, 1, 2]
    assert [r["people"] for r in rows] == [1, 2, 2]
    for row in rows:
        human, judge = pairs[row["version"]]
        assert row["labels"] == len(human)
        assert row["cohen_kappa"] == pytest.approx(cohen_kappa_score(human, judge))
        assert row["percent"] == pytest.approx(np.mean(np.equal(human, judge)))
        if row["version"] is not None:  # bob's first ten chunks, 2 goldens: no interval
            low, high = row["ci95"]["cohen_kappa"]
            assert low <= row["cohen_kappa"] <= high
    markdown = CliRunner().invoke(cli, ["report", str(db), "--all-annotators", "--format",
                                      "markdown"]).stdout
    assert "Agreement with the judge by guideline version" in markdown
    assert "before any" in markdown and "version 2" in markdown


def test_the_report_has_no_guidelines_part_while_labels_span_one_version(db: str | Path) -> None:
    with Session(db) as session:
        session.set_guidelines("v1", source=None, by="lead")
        session.read_guidelines("alice", 1)
        for chunk_id, verdict in list(session.verdicts("sample-judge").items())[:20]:
            assert verdict.verdict is not None
            session.decide("alice", chunk_id, verdict.verdict, "accept")
        assert "guidelines" not in report_dict(build_report(session, resamples=50))


def test_exports_carry_the_version_and_an_import_and_a_merge_keep_it(db: str | Path, tmp_path: Path
                                                                     ) -> None:
    _label_under_two_versions(db)
    out = tmp_path / "out.jsonl"
    with Session(db) as session, out.open("w", encoding="utf-8") as f:
        write_jsonl(session.export_records(), f)
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert [m["guideline"] for m in first["human_marks"]["alice"]] == [1] * 5
    assert [m.get("guideline") for m in first["human_marks"]["bob"]] == [None] * 5
    with Session(tmp_path / "again.db") as again:
        again.import_goldens(read_goldens(out), path=str(out))
        again_out = tmp_path / "again.jsonl"
        with again_out.open("w", encoding="utf-8") as f:
            write_jsonl(again.export_records(), f)
    assert again_out.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")

    with Session(db) as session:
        first_record = next(calibration_records(session))
    assert first_record["human_guidelines"] == {"alice": [1] * 5, "bob": [None] * 5}

    merged = tmp_path / "merged.db"
    merge_sessions([db, tmp_path / "again.db"], merged)
    with Session(merged) as session, Session(db) as original:
        assert [(g.version, g.text) for g in session.guidelines()] == [
            (g.version, g.text) for g in original.guidelines()]
        assert session.guidelines_read("bob") == 2
        assert {c: lab.guideline for c, lab in session.labels("alice").items()} == {
            c: lab.guideline for c, lab in original.labels("alice").items()}


def test_a_merge_of_two_texts_under_one_version_is_refused_and_leaves_no_file(
        tmp_path: Path) -> None:
    a = banking_file(tmp_path / "a.db", people=())
    b = banking_file(tmp_path / "b.db", people=())
    with Session(a) as session:
        session.set_guidelines("one text", source=None, by="ana")
    with Session(b) as session:
        session.set_guidelines("another text", source=None, by="ben")
    result = CliRunner().invoke(cli, ["merge", str(a), str(b), "--output",
                                      str(tmp_path / "ab.db")])
    assert result.exit_code == 2
    assert "Version 1 of the guidelines differs between" in result.output
    assert not (tmp_path / "ab.db").exists()


def test_a_later_rebuild_of_the_answer_tables_keeps_the_version(tmp_path: Path) -> None:
    from sqlite_utils import Database

    from annotator.store.migrations import _M012_ANSWER, rebuild_answer_tables

    db = banking_file(tmp_path / "banking.db", people=())  # a file's migration
    with Session(db) as session:
        session.set_guidelines("v1", source=None, by="lead")
        session.read_guidelines("alice", 1)
        chunk_id = session.golden(session.golden_ids()[0]).chunks[0].id
        session.decide("alice", chunk_id, 1, "set")
    conn = sqlite3.connect(db)
    try:
        with conn:
            rebuild_answer_tables(Database(conn), "m999", _M012_ANSWER)
    finally:
        conn.close()
    assert stamped(db) == [(chunk_id, "useful", 1)]
