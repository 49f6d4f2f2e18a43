"""The Session facade: decisions, undo, notes, judges, the event log and the file itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.errors import SessionError
from annotator.models import Judge
from annotator.store.migrations import migrations
from annotator.store.session import Session


def test_a_new_file_is_migrated_in_wal_mode_with_foreign_keys(session_path: Path) -> None:
    session = Session(session_path)
    assert session.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert session.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert migrations.pending(session.db) == []
    assert {"goldens", "chunks", "judges", "verdicts", "labels", "events"} <= set(
        session.db.table_names())
    assert len(session.session_id) == 32
    session.close()


def test_reopening_keeps_the_session_id(session_path: Path) -> None:
    with Session(session_path) as first:
        sid = first.session_id
    with Session(session_path) as second:
        assert second.session_id == sid


def test_opening_something_that_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("just some text, not SQLite\n" * 100)
    with pytest.raises(SessionError, match="not a session file"):
        Session(path)
    with pytest.raises(SessionError, match="no session file"):
        Session(tmp_path / "missing.db", create=False)


def test_decide_commits_the_label_and_its_event(banking: Session) -> None:
    chunk = banking.goldens()[0].chunks[1]
    label = banking.decide("alice", chunk.id, 1, "flip", judge="sample-judge", shown_verdict=0,
                           decision_ms=812.5)
    assert (label.verdict, label.action, label.shown_verdict, label.decision_ms) == (
        1, "flip", 0, 812.5)
    # Visible from another connection: committed, not pending in a transaction.
    with banking.another() as other:
        row = other.conn.execute(
            "SELECT verdict, action FROM labels WHERE annotator = 'alice'").fetchone()
    assert tuple(row) == (1, "flip")
    [event] = banking.events("alice")
    assert event["kind"] == "decide" and event["chunk_id"] == chunk.id
    assert event["payload"]["before"] is None and event["payload"]["after"]["answer"] == "useful"


def test_undo_walks_back_across_goldens_one_decision_at_a_time(banking: Session) -> None:
    first, second = banking.goldens()[:2]
    a, b, c = first.chunks[0].id, first.chunks[1].id, second.chunks[0].id
    banking.decide("alice", a, 1, "accept")
    banking.decide("alice", b, 1, "flip")
    banking.decide("alice", b, 0, "accept")   # changed her mind on b
    banking.decide("alice", c, 0, "set")
    banking.decide("bob", c, 1, "set")        # someone else's decision is not hers to undo
    assert banking.undo("alice").chunk_id == c  # type: ignore[union-attr]
    assert banking.labels("alice")[c].verdict is None
    assert banking.undo("alice").chunk_id == b  # type: ignore[union-attr]
    assert banking.labels("alice")[b].verdict == 1  # back to the earlier decision
    assert banking.undo("alice").chunk_id == b  # type: ignore[union-attr]
    assert banking.labels("alice")[b].verdict is None
    assert banking.undo("alice").chunk_id == a  # type: ignore[union-attr]
    assert banking.undo("alice") is None
    assert banking.labels("bob")[c].verdict == 1
    kinds = [e["kind"] for e in banking.events("alice")]
    assert kinds.count("undo") == 4 and kinds.count("decide") == 4


def test_undo_keeps_the_note(banking: Session) -> None:
    chunk = banking.goldens()[0].chunks[0].id
    banking.decide("alice", chunk, 0, "flip")
    banking.set_note("alice", chunk, "the fee is part of the answer")
    banking.undo("alice")
    label = banking.labels("alice")[chunk]
    assert label.verdict is None and label.note == "the fee is part of the answer"


def test_a_blind_answer_is_kept_through_later_decisions(banking: Session) -> None:
    chunk = banking.goldens()[0].chunks[1].id
    banking.decide("alice", chunk, 0, "set", blind_verdict=0)
    banking.decide("alice", chunk, 1, "flip", shown_verdict=0, judge="sample-judge")
    label = banking.labels("alice")[chunk]
    assert (label.blind_verdict, label.verdict) == (0, 1)
    banking.undo("alice")
    assert banking.labels("alice")[chunk].verdict == 0
    banking.undo("alice")
    assert banking.labels("alice")[chunk].blind_verdict is None


@pytest.mark.parametrize("bad", [2, -1, "1", None, True])
def test_a_label_must_be_0_or_1(banking: Session, bad: object) -> None:
    chunk = banking.goldens()[0].chunks[0].id
    with pytest.raises(ValueError, match="0 or 1"):
        banking.decide("alice", chunk, bad, "set")  # type: ignore[arg-type]
    assert chunk not in banking.labels("alice")


def test_the_schema_refuses_a_verdict_of_2_whatever_writes_it(banking: Session) -> None:
    import sqlite3

    with pytest.raises(sqlite3.IntegrityError):
        banking.conn.execute("UPDATE verdicts SET verdict = 2 WHERE id = 1")


def test_a_judge_name_keeps_its_definition(session: Session) -> None:
    judge = Judge("gpt", "gpt-4o-mini", None, "builtin", "abc", {"temperature": 0})
    session.define_judge(judge)
    session.define_judge(judge)  # the same again is fine
    with pytest.raises(SessionError, match=r"already defined .* another --name"):
        session.define_judge(Judge("gpt", "gpt-4o-mini", None, "builtin", "abc",
                                   {"temperature": 0.7}))
    assert session.judges() == [judge]


def test_labels_and_verdicts_follow_import_order(banking: Session) -> None:
    ids = banking.golden_ids()
    assert ids[0] == "savings-min-balance"
    golden = banking.golden(ids[0])
    verdicts = banking.verdicts("sample-judge", [ids[0]])
    assert [verdicts[c.id].verdict for c in golden.chunks] == [1, 0, 0, 1, 1]
    truth = banking.labels("sample-reviewer", [ids[0]])
    assert [truth[c.id].verdict for c in golden.chunks] == [1, 1, 0, 1, 1]
    with pytest.raises(SessionError, match="no golden"):
        banking.golden("nope")


def test_last_decided_golden_skips_undone_decisions(banking: Session) -> None:
    first, second = banking.goldens()[:2]
    assert banking.last_decided_golden("alice") is None
    banking.decide("alice", first.chunks[0].id, 1, "accept")
    banking.decide("alice", second.chunks[0].id, 1, "accept")
    assert banking.last_decided_golden("alice") == second.id
    banking.undo("alice")
    assert banking.last_decided_golden("alice") == first.id


@pytest.mark.parametrize("create", [False, True])
def test_another_tools_database_is_refused_and_left_byte_identical(tmp_path: Path,
                                                                   create: bool) -> None:
    import sqlite3

    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE orders (id INTEGER, total REAL)")
    conn.execute("INSERT INTO orders VALUES (1, 9.5)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(SessionError, match=r"a SQLite database but not a cp-annotator session "
                                           r"\(its tables: orders\); it was left as it is"):
        Session(other, create=create)
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]  # no -wal, no -shm


def test_an_empty_file_becomes_a_session_only_where_sessions_are_made(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(SessionError, match="is empty, not a session yet"):
        Session(empty, create=False)
    assert empty.read_bytes() == b""
    with Session(empty) as session:  # import (create=True) may make it one
        assert migrations.pending(session.db) == []
