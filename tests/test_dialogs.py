"""Nothing typed for a dialog reaches the screen behind it: every note box that refuses what it
was given stays open, says why inside itself, and keeps what is typed next as text."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from annotator.people.adjudication import Adjudication
from annotator.people.review import Review
from annotator.store.session import Session
from annotator.tui.app import AdjudicatorApp, AnnotatorApp
from annotator.tui.screens.comment import CommentModal
from tests.conftest import banking_file, second_opinion

SIZE = (120, 40)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return banking_file(tmp_path / "banking.db", people=())


def labels_and_events(db: Path) -> tuple[int, int]:
    """How many labels and events the file holds, read by plain sqlite3."""
    conn = sqlite3.connect(db)
    try:
        return (conn.execute("SELECT count(*) FROM labels").fetchone()[0],
                conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


@contextmanager
def held(db: Path) -> Iterator[None]:
    """Another process's write lock on the session file, so every write is refused as busy."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def dialog_open(app: AnnotatorApp | AdjudicatorApp) -> bool:
    return isinstance(app.screen, CommentModal)


def refusal(app: AnnotatorApp | AdjudicatorApp) -> str:
    return str(app.screen.query_one("#comment-refusal", Static).render())


async def test_an_unsure_note_refused_stays_open_and_what_is_typed_next_is_the_note(
        db: Path) -> None:
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            before = labels_and_events(db)
            await pilot.press("m", "enter")  # no note: refused
            assert dialog_open(app)
            assert "needs a note" in refusal(app)
            await pilot.press(*"aaaa fx 10 u")  # every one a command on the screen behind
            assert labels_and_events(db) == before  # nothing decided, nothing logged
            assert app.screen.query_one(Input).value == "aaaa fx 10 u"
            await pilot.press("enter")
            assert not dialog_open(app)
        with Session(db) as fresh:
            chunk = fresh.golden(app.review.golden_ids[0]).chunks[0]
            label = fresh.labels("alice")[chunk.id]
            assert (label.answer, label.note) == ("unsure", "aaaa fx 10 u")
        assert labels_and_events(db)[0] == 1


@pytest.mark.parametrize("key", ["c", "r", "m"])
async def test_a_note_box_refused_by_a_busy_file_stays_open_and_saves_once_free(
        db: Path, key: str) -> None:
    with Session(db, busy_timeout=0.05) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            before = labels_and_events(db)
            with held(db):
                await pilot.press(key, *"why", "enter")
                assert dialog_open(app)
                assert "nothing was saved" in refusal(app)
                await pilot.press(*" aaaa")  # a note still, never accept x 4
                assert labels_and_events(db) == before
            await pilot.press("enter")  # the file is free: saved, the box closes
            assert not dialog_open(app)
        with Session(db) as fresh:
            chunk = fresh.golden(app.review.golden_ids[0]).chunks[0]
            assert fresh.labels("alice")[chunk.id].note == "why aaaa"


async def test_the_adjudicators_note_box_stays_open_when_refused(tmp_path: Path) -> None:
    path = banking_file(tmp_path / "team.db")
    with Session(path) as s:
        ids = s.chunk_ids()
        goldens = s.golden_ids()
        second_opinion(s, "bob", {ids[goldens[1]][0]})
    with Session(path, busy_timeout=0.05) as session:
        app = AdjudicatorApp(Adjudication(session, "carol"), path.name)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("1")  # settled, so a note is written at once
            before = labels_and_events(path)
            with held(path):
                await pilot.press("c", *"per policy", "enter")
                assert dialog_open(app)
                assert "nothing was saved" in refusal(app)
                await pilot.press(*" 0u")  # a 0 or an undo here would change the gold label
                assert labels_and_events(path) == before
            await pilot.press("enter")
            assert not dialog_open(app)
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT verdict, note FROM gold_labels").fetchall() == [
                (1, "per policy 0u")]
        finally:
            conn.close()
