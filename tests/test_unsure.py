"""A person's "unsure" and "verdict right, reason wrong": on disk after each key, undone, never
counted as 0 or 1, walked by the adjudicator, carried by every file, and reported per judge."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Input

from annotator.calibration.examples import draw_examples
from annotator.cli import cli
from annotator.errors import InputError, SessionError
from annotator.exports import calibration_records, ragas_annotation
from annotator.formats import read_goldens, write_jsonl
from annotator.people.adjudication import Adjudication
from annotator.people.merge import merge_sessions
from annotator.people.review import Review
from annotator.report.build import build_report
from annotator.report.leaderboard import build_leaderboard
from annotator.report.serialize import report_dict
from annotator.scoring.truth import disagreements, truth
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from annotator.tui.widgets.chunk_card import ChunkCard
from annotator.verdict import DISTRACTOR
from tests.conftest import banking_file, golden, write_lines
from tests.session_fixtures import fixture_path

SIZE = (140, 50)
FIRST = "savings-min-balance"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return banking_file(tmp_path / "banking.db", people=())


def label_row(db: Path, rank: int, annotator: str = "alice", golden_id: str = FIRST
              ) -> tuple[object, ...] | None:
    """(verdict, action, unsure, reason_wrong, note) of one label, read by plain sqlite3."""
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            """SELECT l.verdict, l.action, l.unsure, l.reason_wrong, l.note FROM labels l
               JOIN chunks c ON c.id = l.chunk_id
               WHERE l.annotator = ? AND c.golden_id = ? AND c.rank = ?""",
            [annotator, golden_id, rank]).fetchone()
        return None if row is None else tuple(row)
    finally:
        conn.close()


def status(app: AnnotatorApp) -> str:
    from textual.widgets import Static

    return str(app.screen.query_one("#status", Static).content)


async def test_unsure_needs_a_note_is_on_disk_after_enter_and_undo_restores_pending(
        db: Path) -> None:
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("m")
            assert isinstance(app.screen.query_one(Input), Input)
            await pilot.press("escape")  # cancelled: nothing written
            assert label_row(db, 1) is None and app.review.cursor == 0
            await pilot.press("m", "enter")  # no note: refused inside the box, nothing written
            assert label_row(db, 1) is None
            assert "needs a note" in str(app.screen.query_one("#comment-refusal").render())
            await pilot.press(*"is [b]urban[/b] the branch?", "enter")
            assert label_row(db, 1) == (None, None, 1, 0, "is [b]urban[/b] the branch?")
            assert app.review.cursor == 1  # answered: moves on as a decision does
            assert app.review.chunks_decided == 1
            assert app.review.overall.n == 0  # never a 0 or a 1 against the judge
            card = next(iter(app.screen.query(ChunkCard)))
            assert "UNSURE" in str(card.content) and "[b]urban[/b]" in str(card.content)
            # The rest of the golden decided: it is complete for the person, and has no CP.
            await pilot.press("a", "a", "a", "a")
            assert app.review.golden.id != FIRST
            assert app.review.goldens_complete == 1
            fresh = Review(session, "alice", "sample-judge")
            assert (fresh.chunks_decided, fresh.goldens_complete, fresh.overall) == (
                app.review.chunks_decided, app.review.goldens_complete, app.review.overall)
            await pilot.press("u", "u", "u", "u", "u")
            assert label_row(db, 1) == (None, None, 0, 0, "is [b]urban[/b] the branch?")
            assert app.review.chunks_decided == 0 and app.review.golden.id == FIRST
            assert "pending again" in status(app)


async def test_an_unsure_blind_chunk_stays_blind(db: Path) -> None:
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge", blind_rate=1.0), db.name)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("m", *"cannot tell", "enter")
            assert label_row(db, 1) == (None, None, 1, 0, "cannot tell")
            view = app.review.chunk_views()[0]
            assert view.hidden and view.state == "unsure"
            app.review.select(0)
            await pilot.press("1")  # a blind answer afterwards is still a blind answer
            assert "Revealed" in status(app)
            label = session.labels("alice")[view.chunk.id]
            assert (label.verdict, label.blind_verdict, label.answer) == (1, 1, 1)


async def test_reason_wrong_accepts_marks_and_undoes(db: Path) -> None:
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("r", "escape")
            assert label_row(db, 1) is None
            await pilot.press("r", "enter")  # the note is optional
            assert label_row(db, 1) == (1, "accept", 0, 1, None)
            await pilot.press("r", *"cites the rural rate", "enter")
            assert label_row(db, 2) == (0, "accept", 0, 1, "cites the rural rate")
            assert app.review.overall.tp == 1 and app.review.overall.tn == 1
            card = list(app.screen.query(ChunkCard))[1]
            assert "reason marked wrong" in str(card.content)
            await pilot.press("u")
            assert label_row(db, 2) == (None, None, 0, 0, "cites the rural rate")
            await pilot.press("a")  # a plain accept clears the mark
            assert label_row(db, 2) == (0, "accept", 0, 0, "cites the rural rate")
    with Session(db) as session:
        blind = AnnotatorApp(Review(session, "bob", "sample-judge", blind_rate=1.0), db.name)
        async with blind.run_test(size=SIZE) as pilot:
            await pilot.press("r")  # no verdict on screen to accept: refused, no box
            assert "blind" in status(blind)
            assert label_row(db, 1, "bob") is None


def test_the_session_refuses_an_unsure_without_a_note_and_a_mark_on_anything_but_accept(
        db: Path) -> None:
    with Session(db) as session:
        chunk = session.golden(FIRST).chunks[0].id
        with pytest.raises(SessionError, match="needs a note"):
            session.decide("alice", chunk, "unsure", None, note="  ")
        with pytest.raises(SessionError, match="accepted verdict"):
            session.decide("alice", chunk, 0, "flip", reason_wrong=True)
        assert session.labels("alice") == {}


def _two_people_one_unsure(db: Path) -> dict[int, int]:
    """alice and bob agree on every chunk of the first golden, but alice is unsure of rank 2."""
    with Session(db) as session:
        ids = {c.rank: c.id for c in session.golden(FIRST).chunks}
        for person in ("alice", "bob"):
            for rank, chunk in ids.items():
                if person == "alice" and rank == 2:
                    session.decide(person, chunk, "unsure", None, note="fee or balance?")
                else:
                    session.decide(person, chunk, 1 if rank != 3 else 0, "set")
    return ids


def test_unsure_is_never_a_0_or_1_in_agreement_or_cp_until_adjudicated(db: Path) -> None:
    ids = _two_people_one_unsure(db)
    with Session(db) as session:
        mine = build_report(session, judge="sample-judge", annotators=["alice"], resamples=0)
        data = report_dict(mine)
        assert data["agreement"]["n"] == 4 and data["agreement"]["unsure_left_out"] == 1
        [alice] = data["coverage"]["annotators"]
        assert (alice["chunks_decided"], alice["chunks_unsure"], alice["goldens_unsure"]) == (
            4, 1, 1)
        assert data["context_precision"]["goldens"] == 0  # the golden has no CP under alice
        assert any("1 golden waits for an adjudicator to settle an unsure chunk" in line
                   for line in mine.headline)
        team = truth(session)
        assert team.pending == 1 and int(team.unsure.sum()) == 1
        assert team.at([ids[2]]) == [None] and team.at([ids[1]]) == [1]
        assert truth(session, "alice").at([ids[2]]) == [None]

        adjudication = Adjudication(session, "carol")
        [dispute] = adjudication.disputes  # the only chunk to settle: nobody else disagrees
        assert dispute.chunk.id == ids[2]
        assert {(o.annotator, o.verdict, o.note) for o in dispute.opinions} == {
            ("alice", "unsure", "fee or balance?"), ("bob", 1, None)}
        adjudication.decide(0, "the fee, not the balance")
        assert truth(session).at([ids[2]]) == [0]
        assert truth(session, "alice").at([ids[2]]) == [0]  # settled: alice's CP counts again
        gold = report_dict(build_report(session, judge="sample-judge", gold=True, resamples=0))
        assert gold["agreement"]["unsure_left_out"] == 0
        assert gold["context_precision"]["goldens"] == 1


async def test_the_adjudication_screen_walks_an_unsure_answer_with_its_note(db: Path) -> None:
    from textual.widgets import Static

    from annotator.tui.app import AdjudicatorApp

    ids = _two_people_one_unsure(db)
    with Session(db) as session:
        app = AdjudicatorApp(Adjudication(session, "carol"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            text = str(app.screen.query_one("#dispute", Static).render())
            assert "alice: UNSURE  fee or balance?" in text and "bob: USEFUL" in text
            assert "dispute 1 of 1" in str(app.screen.query_one("#header", Static).render())
            await pilot.press("0")
        assert session.gold_labels()[ids[2]].verdict == 0
        assert truth(session, "alice").at([ids[2]]) == [0]


def test_unsure_round_trips_through_jsonl_and_csv_and_merges(db: Path, tmp_path: Path) -> None:
    _two_people_one_unsure(db)
    out = tmp_path / "out.jsonl"
    with Session(db) as session, out.open("w", encoding="utf-8") as f:
        write_jsonl(session.export_records(), f)
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["human_labels"]["alice"] == [1, "unsure", 0, 1, 1]
    assert first["human_notes"]["alice"][1] == "fee or balance?"
    with Session(tmp_path / "again.db") as again:
        again.import_goldens(read_goldens(out), path=str(out))
        label = again.labels("alice")[again.golden(FIRST).chunks[1].id]
        assert (label.verdict, label.note, label.answer) == (None, "fee or balance?", "unsure")
        again_out = tmp_path / "again.jsonl"
        with again_out.open("w", encoding="utf-8") as f:
            write_jsonl(again.export_records(), f)
    assert again_out.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["export", str(db), "--format", "csv"])
    assert result.exit_code == 0 and "\"\"unsure\"\"" in result.output

    # Merged with a file where alice decided the chunk after all: both versions are kept.
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    with Session(other) as session:
        session.decide("alice", session.golden(FIRST).chunks[1].id, 1, "set")
    merged = merge_sessions([db, other], tmp_path / "merged.db")
    [conflict] = merged.conflicts
    assert [v[0] for v in conflict.versions] == ["unsure", 1]


def test_an_unsure_label_without_a_note_is_refused_with_its_line_and_field(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "g.jsonl", [
        golden(id="ok", human_labels={"alice": ["unsure", 1, None]},
               human_notes={"alice": ["which year?", None, None]}),
        golden(id="bad", human_labels={"alice": [1, "unsure", 0]})])
    with pytest.raises(InputError) as error:
        list(read_goldens(path))
    text = str(error.value)
    assert "line 2" in text and "human_labels.alice" in text and "needs one" in text
    maybe = write_lines(tmp_path / "m.jsonl", [golden(human_labels={"alice": ["maybe", 1, 0]})])
    with pytest.raises(InputError, match='"unsure"'):
        list(read_goldens(maybe))


def _reasons_marked(db: Path) -> dict[int, int]:
    """alice accepts every chunk of the first golden, marking the reason wrong on ranks 1 and 2."""
    with Session(db) as session:
        ids = {c.rank: c.id for c in session.golden(FIRST).chunks}
        said = session.verdicts("sample-judge", [FIRST])
        for rank, chunk in ids.items():
            session.decide("alice", chunk, said[chunk].verdict, "accept", judge="sample-judge",
                           shown_verdict=said[chunk].verdict, reason_wrong=rank <= 2,
                           note="wrong clause" if rank == 1 else None)
    return ids


def test_the_report_and_leaderboard_give_the_rate_of_reasons_marked_wrong(db: Path) -> None:
    _reasons_marked(db)
    with Session(db) as session:
        data = report_dict(build_report(session, judge="sample-judge", resamples=0))
        reasons = data["reasons"]
        assert (reasons["accepted"], reasons["marked_wrong"]) == (5, 2)
        assert reasons["rate"] == pytest.approx(0.4)
        low, high = reasons["ci95"]["rate"]
        assert 0.05 < low < 0.4 < high < 0.85  # Wilson, n = 5
        board = build_leaderboard(session, resamples=0)
        [row] = board.judges
        assert row.stats["reason_wrong"].value == pytest.approx(0.4)
    result = CliRunner().invoke(cli, ["report", str(db), "--judge", "sample-judge"])
    assert result.exit_code == 0, result.output
    assert "Right verdict, wrong reason" in result.output


def test_exports_and_examples_leave_out_chunks_whose_reason_was_marked_wrong(db: Path) -> None:
    ids = _reasons_marked(db)
    with Session(db) as session:
        data, left_out = ragas_annotation(session, "sample-judge", "alice")
        [samples] = data.values()
        assert left_out == 2 and len(samples) == 3
        contexts = {s["metric_input"]["retrieved_contexts"][0] for s in samples}
        texts = {c.rank: c.text for c in session.golden(FIRST).chunks}
        assert texts[1] not in contexts and texts[2] not in contexts
        [record] = [r for r in calibration_records(session, "alice") if r["id"] == FIRST]
        marks = [v["reason_marked_wrong"] for v in record["judges"]["sample-judge"]]
        assert marks == [True, True, False, False, False]
        session.set_splits(dict.fromkeys(session.golden_ids(), "dev"), 1, replace=False)
        drawn = draw_examples(session, 3, 0, "reference", "alice")
        assert {(e.golden_id, e.rank) for e in drawn} == {(FIRST, 3), (FIRST, 4), (FIRST, 5)}
        with pytest.raises(SessionError, match="holds 3 labelled"):
            draw_examples(session, 4, 0, "reference", "alice")
    result = CliRunner().invoke(cli, ["export", str(db), "--format", "ragas-annotation",
                                       "--annotator", "alice"])
    assert result.exit_code == 0
    assert "Left out 2 chunks whose reason people marked wrong" in result.output
    result = CliRunner().invoke(cli, ["export", str(db), "--format", "calibration",
                                      "--annotator", "alice"])
    assert result.exit_code == 0
    assert "2 judge verdicts carry reason_marked_wrong" in result.output
    assert len(ids) == 5


def test_a_session_from_before_unsure_opens_and_undoes_its_old_decisions(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(fixture_path("m007_unsure_and_reasons"), path)
    with Session(path, create=False) as session:
        labels = session.labels("alice")
        assert labels and not any(label.answer == "unsure" or label.reason_wrong
                                  for label in labels.values())
        before = {c: label.answer for c, label in labels.items()}
        undone = session.undo("alice")  # an event written before the new fields existed
        assert undone is not None and undone.restored is None
        assert session.labels("alice")[undone.chunk_id].answer is None
        assert undone.undone == before[undone.chunk_id]
        session.decide("alice", undone.chunk_id, "unsure", None, note="new in m007")
        assert session.labels("alice")[undone.chunk_id].answer == "unsure"


async def test_a_distractor_is_noise_that_misleads_on_disk_in_files_and_in_the_report(
        tmp_path: Path) -> None:
    db = banking_file(tmp_path / "d.db")
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "alice", "sample-judge"), db.name)
        async with app.run_test(size=(140, 50)) as pilot:
            await pilot.press("d")  # rank 1: a distractor, saved as its kind
            with Session(db) as fresh:
                golden = fresh.goldens()[0]
                label = fresh.labels("alice", [golden.id])[golden.chunks[0].id]
                assert (label.answer, label.verdict, label.action) == (DISTRACTOR, 0, "set")
            card = str(app.screen.query(ChunkCard).first().content)
            assert "DISTRACTOR" in card
            await pilot.press("u")  # undo: pending again
            with Session(db) as fresh:
                undone = fresh.labels("alice", [golden.id])[golden.chunks[0].id]
                assert (undone.answer, undone.verdict) == (None, None)
            await pilot.press("d", "a", "a", "a", "a")  # then the rest accepted
    with Session(db) as session:
        report = build_report(session, judge="sample-judge", annotators=["alice"],
                              resamples=200)
        d = report.distractors
        assert d is not None and d.distractors == 1
        assert d.rate.value == pytest.approx(1 / d.chunks)
        assert d.judge_rate.value is None
        assert report.chunks.confusion.n == d.chunks  # it counts as noise: compared as 0
        # A distractor and a noise answer agree on the verdict: no dispute to adjudicate.
        session.decide("bob", golden.chunks[0].id, 0, "set")
        assert golden.chunks[0].id not in disagreements(
            {p: session.labels(p) for p in ("alice", "bob")})
    out = tmp_path / "d.jsonl"
    result = CliRunner().invoke(cli, ["export", str(db), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert '"distractor"' in out.read_text()
    again = tmp_path / "again.db"
    assert CliRunner().invoke(cli, ["import", str(out), "--session", str(again)]).exit_code == 0
    with Session(again) as session:
        assert session.labels("alice", [golden.id])[golden.chunks[0].id].answer == DISTRACTOR


def test_each_system_s_distractor_rate_has_the_overall_rate_s_denominator(
        tmp_path: Path) -> None:
    """Goldens the judge has not judged whole are not compared, yet people's decisions on them
    count in the overall rate: they count in their system's rate too, so the systems' counts
    add up to the overall ones."""
    from tests.test_report import golden_obj, make_session

    goldens = [golden_obj(i, [1, 0, 1], [1, 0, 0], retriever="bm25" if i % 2 else "dense")
               for i in range(6)]
    for g in goldens[:2]:
        g["judge_verdicts"][0] = None  # incomplete under the judge: not compared
    with make_session(tmp_path, goldens) as session:
        for stored in session.goldens():
            session.decide("alice", stored.chunks[2].id, DISTRACTOR, "set")
        for stored in session.goldens()[:2]:  # the goldens not compared hold one more each
            session.decide("alice", stored.chunks[1].id, DISTRACTOR, "set")
        report = build_report(session, judge="j", annotators=["alice"], resamples=50)
    d = report.distractors
    assert d is not None and d.distractors == 8 and d.chunks == 18
    assert d.rate.value == pytest.approx(8 / 18)
    assert set(d.systems) == {"bm25", "dense"}
    for stat in d.systems.values():  # 3 goldens each: 4 distractors among 9 chunks
        assert stat.value == pytest.approx(4 / 9)
