"""Attention checks: settled goldens shown among the others, answered apart from labels, scored
per person in the People section."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from annotator.cli import cli
from annotator.errors import InputError, SessionError
from annotator.people.review import Review
from annotator.report.build import build_report
from annotator.report.serialize import report_dict
from annotator.scoring import checks
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from tests.conftest import banking_file, golden, write_lines

SIZE = (140, 50)
GOLD_GOLDEN = "fd-premature-withdrawal"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The banking sample with carol's gold labels on the first two ranks of one golden: rank 1
    the opposite of the judge's verdict, rank 2 the same."""
    path = banking_file(tmp_path / "banking.db", people=())
    with Session(path) as session:
        chunks = session.golden(GOLD_GOLDEN).chunks
        said = session.verdicts("sample-judge", [GOLD_GOLDEN])
        session.set_gold(chunks[0].id, 1 - said[chunks[0].id].verdict, "carol")
        session.set_gold(chunks[1].id, said[chunks[1].id].verdict, "carol")
    return path


def count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def screen_text(app: AnnotatorApp) -> str:
    """Everything the current screen shows, as plain text."""
    import io

    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    for widget in app.screen.query(Static):
        console.print(widget.content)
    return console.export_text()


def on_check(app: AnnotatorApp) -> bool:
    """Whether the screen shows an attention check (a function: the review changes under it)."""
    return app.review.check is not None


async def test_a_check_is_shown_like_a_golden_answered_apart_and_scored(db: Path) -> None:
    with Session(db) as session:
        pool = checks.prepare(session, None)
        assert [c.golden.id for c in pool] == [GOLD_GOLDEN]
        app = AnnotatorApp(Review(session, "dan", "sample-judge", checks=pool, check_rate=1.0),
                           db.name)
        async with app.run_test(size=SIZE) as pilot:
            first = app.review.golden.id
            await pilot.press("a", "a", "a", "a", "a")  # the first golden, complete
            assert on_check(app)  # then a check, looking like any golden
            assert app.review.golden.id == GOLD_GOLDEN
            header = str(app.screen.query_one("#header", Static).content)
            assert "golden 2 of 16" in header  # the place of the golden it comes before
            shown = app.review.chunk_views()
            assert all(v.verdict is not None for v in shown)  # the judge's verdicts, as usual
            await pilot.press("a")
            assert count(db, "SELECT count(*) FROM check_answers WHERE answer IS NOT NULL") == 1
            await pilot.press("u")  # undo on a check takes back its own answer
            assert count(db, "SELECT count(*) FROM check_answers WHERE answer IS NOT NULL") == 0
            assert on_check(app) and app.review.cursor == 0
            await pilot.press("u")  # none left on it: the last decision before it, left behind
            assert not on_check(app) and app.review.golden.id == first
            assert count(db, "SELECT count(*) FROM labels WHERE annotator = 'dan' "
                             "AND verdict IS NOT NULL") == 4
            await pilot.press("a")  # deciding it again brings the check back
            assert on_check(app) and app.review.golden.id == GOLD_GOLDEN
            await pilot.press(*["a"] * len(shown))  # accept every verdict: rank 1 is wrong
            assert not on_check(app) and app.review.golden.id != first
            # Answers are on disk apart from labels, and no statistic counts them.
            assert count(db, "SELECT count(*) FROM check_answers") == len(shown)
            assert count(db, "SELECT count(*) FROM labels WHERE annotator = 'dan'") == 5
            assert app.review.overall.n == 5 and app.review.chunks_decided == 5
            # Every check answered whole: the next golden done brings no check.
            await pilot.press(*["a"] * len(app.review.golden.chunks))
            assert not on_check(app)
            # The statistics screen warns of the checks answered wrong.
            await pilot.press("s")
            await app.workers.wait_for_complete()  # the report is built in a worker
            assert "1 attention check of 2 answered wrong" in screen_text(app)
        report = build_report(session, judge="sample-judge", annotators=["dan"], resamples=0)
        [row] = report.people.annotators
        assert row.checks == 2 and row.stats["check_accuracy"].value == pytest.approx(0.5)
        assert row.warning is not None and "1 attention check of 2 answered wrong" in row.warning
        assert any(line.startswith("dan: 1 attention check") for line in report.headline)
        assert report.coverage.compared_chunks == 5 + 6  # the check's answers are not in it
        fine = build_report(session, judge="sample-judge", annotators=["dan"], resamples=0,
                            checks_min=0.5)
        assert fine.people.annotators[0].warning is None
        data = report_dict(report)["people"]["annotators"][0]
        assert data["checks_answered"] == 2 and data["check_accuracy"] == pytest.approx(0.5)
        low, high = data["ci95"]["check_accuracy"]
        assert 0.05 < low < 0.5 < high < 0.95
    result = CliRunner().invoke(cli, ["report", str(db), "--annotator", "dan",
                                      "--checks-min", "0.9"])
    assert result.exit_code == 0, result.output
    assert "attention" in result.output and "1 attention check of 2 answered wrong" in result.output


def test_a_gold_file_gives_checks_from_the_labels_its_people_agree_on(db: Path,
                                                                      tmp_path: Path) -> None:
    gold = write_lines(tmp_path / "gold.jsonl", [
        golden(id="gold-1", human_labels={"ann": [1, 0, None], "ben": [1, 1, None]},
               judge="j", judge_verdicts=[1, 0, 1]),
        golden(id="gold-2", human_labels={"ann": [None, None, None]})])
    with Session(db) as session:
        pool = checks.prepare(session, gold)
        [from_file] = [c for c in pool if c.source == str(gold)]
        assert from_file.golden.id == "gold-1"
        assert from_file.truth == [1, None, None]  # ann and ben disagree on rank 2
        assert [v.verdict for v in from_file.stored_verdicts("j").values()] == [1, 0, 1]
        assert len(checks.prepare(session, gold)) == 2  # the gold golden and gold-1, kept once
        assert session.count_goldens() == 16  # a check is never a golden of the session
    empty = write_lines(tmp_path / "none.jsonl", [golden(id="x")])
    with Session(db) as session, pytest.raises(InputError, match="no golden in it has a settled"):
        checks.prepare(session, empty)


def test_checks_without_a_settled_golden_are_a_sentence(tmp_path: Path) -> None:
    with Session(banking_file(tmp_path / "b.db", people=())) as session, \
            pytest.raises(SessionError, match="--adjudicate"):
        checks.prepare(session, None)


def test_the_turn_of_a_check_is_drawn_reproducibly_near_the_rate() -> None:
    turns = [checks.is_turn("s", "dan", n, 0.2) for n in range(2000)]
    assert turns == [checks.is_turn("s", "dan", n, 0.2) for n in range(2000)]
    assert 0.17 < sum(turns) / len(turns) < 0.23
    assert not any(checks.is_turn("s", "dan", n, 0.0) for n in range(100))


def test_a_merge_keeps_every_check_once_and_each_persons_answers(db: Path, tmp_path: Path) -> None:
    import shutil

    from annotator.people.merge import merge_sessions

    other = tmp_path / "other.db"
    shutil.copy(db, other)
    with Session(db) as one, Session(other) as two:
        [check] = checks.prepare(one, None)
        [again] = checks.prepare(two, None)
        one.answer_check("dan", check.id, 1, truth=check.truth[0], answer=1)
        two.answer_check("eve", again.id, 1, truth=again.truth[0], answer=0, note="noise")
    merged = tmp_path / "merged.db"
    merge_sessions([other, db], merged)
    with Session(merged) as session:
        [kept] = checks.load(session)
        assert kept.truth == check.truth and kept.golden.id == GOLD_GOLDEN
        scores = checks.scores(session)
        assert {p: (s.answered, s.right) for p, s in scores.items()} == {
            "dan": (1, int(check.truth[0] == 1)), "eve": (1, int(check.truth[0] == 0))}
