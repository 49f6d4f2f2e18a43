"""The annotation app driven by Textual's Pilot: every key, asserted against the session file."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from textual.widgets import DataTable, Input, Static

from annotator.errors import ReadStopped
from annotator.formats import read_goldens
from annotator.models import GoldenRecord, JudgeVerdict, ReviewTotals
from annotator.people.review import QueueRow, Review, is_blind
from annotator.report.build import build_report
from annotator.report.model import Report
from annotator.store.session import Session
from annotator.tui.app import AnnotatorApp
from annotator.tui.keys import KEYS
from annotator.tui.screens.annotate import AnnotateScreen
from annotator.tui.screens.help import HelpScreen
from annotator.tui.screens.queue import QueueScreen
from annotator.tui.screens.stats import StatsScreen
from annotator.tui.widgets.chunk_card import ChunkCard
from tests.conftest import BANKING, ROOT, banking_file, golden, write_lines
from tests.waiting import PATIENCE

SIZE = (140, 50)
T = TypeVar("T")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return banking_file(tmp_path / "banking.db")


@pytest.fixture
def session(db: Path) -> Iterator[Session]:
    with Session(db) as s:
        yield s


def make_app(session: Session, annotator: str = "alice", **kwargs: Any) -> AnnotatorApp:
    review = Review(session, annotator, "sample-judge", **kwargs)
    return AnnotatorApp(review, session.path.name)


def on_disk(db: Path, annotator: str = "alice") -> dict[tuple[str, int], tuple[int, str | None]]:
    """(golden id, rank) -> (verdict, action), read through a fresh connection."""
    with Session(db) as fresh:
        out: dict[tuple[str, int], tuple[int, str | None]] = {}
        for g in fresh.goldens():
            labels = fresh.labels(annotator, [g.id])
            for c in g.chunks:
                if (label := labels.get(c.id)) is not None and label.verdict is not None:
                    out[(g.id, c.rank)] = (label.verdict, label.action)
        return out


def status(app: AnnotatorApp) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def test_accept_flip_and_set_are_on_disk_after_each_key(session: Session, db: Path) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        assert on_disk(db) == {("savings-min-balance", 1): (1, "accept")}
        await pilot.press("f")  # the judge said noise at rank 2; the person flips it to useful
        assert on_disk(db)[("savings-min-balance", 2)] == (1, "flip")
        await pilot.press("x")  # x is flip too: rank 3, judge noise -> useful
        assert on_disk(db)[("savings-min-balance", 3)] == (1, "flip")
        await pilot.press("0")  # set by hand: rank 4 noise
        assert on_disk(db)[("savings-min-balance", 4)] == (0, "set")
        await pilot.press("1")
        assert on_disk(db)[("savings-min-balance", 5)] == (1, "set")
        with Session(db) as fresh:
            decided = [e for e in fresh.events("alice") if e["kind"] == "decide"]
            assert len(decided) == 5
            label = fresh.labels("alice")[fresh.golden("savings-min-balance").chunks[1].id]
            assert label.shown_verdict == 0 and label.judge == "sample-judge"
            assert label.decision_ms is not None and label.decision_ms >= 0
        # The golden is complete: the screen moved to the next unfinished one and said why.
        assert app.review.golden.id == "fd-premature-withdrawal"
        assert "savings-min-balance complete" in status(app)


async def test_the_summary_shows_cp_under_both_label_sets(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        summary = app.screen.query_one("#summary", Static)
        assert "0.7000" in str(summary.content) and "5 pending" in str(summary.content)
        await pilot.press("a", "f", "a", "a")
        assert "1 pending" in str(summary.content)
        app.review.select(4)
        await pilot.press("k", "j", "up", "up", "down")  # moving does not decide anything
        assert app.review.cursor == 3
        await pilot.press("down")
        assert app.review.cursor == 4
        # The last decision completes the golden: check the numbers before it moves on.
        comparison = app.review.comparison()
        assert comparison.cp_judge() == pytest.approx(0.7)
        await pilot.press("a")
        assert "0.8875 (you) vs 0.7000 (judge)" in status(app)


async def test_undo_walks_back_across_goldens(session: Session, db: Path) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "a", "a", "a", "a", "a")  # five on golden 1, one on golden 2
        assert app.review.golden.id == "fd-premature-withdrawal"
        assert len(on_disk(db)) == 6
        await pilot.press("u")
        assert len(on_disk(db)) == 5 and app.review.golden.id == "fd-premature-withdrawal"
        await pilot.press("backspace")  # back into the previous golden
        assert app.review.golden.id == "savings-min-balance" and app.review.cursor == 4
        await pilot.press("f")  # decide again differently, then check the running totals
        fresh = Review(session, "alice", "sample-judge")
        assert (app.review.overall, app.review.chunks_decided, app.review.goldens_complete) == (
            fresh.overall, fresh.chunks_decided, fresh.goldens_complete)
        await pilot.press("u")
        assert ("savings-min-balance", 5) not in on_disk(db)
        await pilot.press("u", "u", "u", "u")
        assert on_disk(db) == {}
        await pilot.press("u")
        assert "Nothing to undo" in status(app)
        assert app.review.chunks_decided == 0


async def test_next_and_previous_golden(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket")
        assert app.review.index == 1
        cards = app.screen.query(ChunkCard)
        assert len(cards) == len(app.review.golden.chunks) == 6
        await pilot.press("left_square_bracket")
        assert status(app) == ""
        await pilot.press("left_square_bracket")
        assert app.review.index == 15  # wraps to the last golden, and says so
        assert status(app) == "That was the first of 16 goldens: on to the last."
        assert len(app.screen.query(ChunkCard)) == len(app.review.golden.chunks)
        await pilot.press("right_square_bracket")
        assert app.review.index == 0
        assert status(app) == "That was the last of 16 goldens: back to the first."


async def test_comment_is_saved_and_shown(session: Session, db: Path) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j", "c")
        assert isinstance(app.screen.query_one(Input), Input)
        await pilot.press(*"fee [b]matters[/b]", "enter")
        with Session(db) as fresh:
            chunk = fresh.golden("savings-min-balance").chunks[1]
            assert fresh.labels("alice")[chunk.id].note == "fee [b]matters[/b]"
            assert fresh.labels("alice")[chunk.id].verdict is None  # a comment is no decision
        card = list(app.screen.query(ChunkCard))[1]
        assert "fee [b]matters[/b]" in str(card.content)
        await pilot.press("c", "escape")  # escape cancels: nothing changes
        with Session(db) as fresh:
            assert fresh.labels("alice")[chunk.id].note == "fee [b]matters[/b]"


async def test_blind_flow_hides_then_reveals_and_keeps_both_answers(session: Session, db: Path) -> None:
    app = make_app(session, blind_rate=1.0)  # every chunk blind
    async with app.run_test(size=SIZE) as pilot:
        card = next(iter(app.screen.query(ChunkCard)))
        assert "hidden (blind)" in str(card.content)
        assert "urban branches require" not in str(card.content)  # the reason is hidden too
        # Nothing else gives the hidden verdicts away: no judge P@k, no judge CP.
        for other in app.screen.query(ChunkCard):
            assert "judge ·········· -" in str(other.content)
        summary = str(app.screen.query_one("#summary", Static).content)
        assert "0.7000" not in summary and "5 hidden or not judged" in summary
        await pilot.press("a")  # accept is refused while the verdict is hidden
        assert "blind" in status(app) and on_disk(db) == {}
        await pilot.press("j", "k")
        await pilot.press("0")  # blind answer: noise; the judge said useful
        assert app.review.cursor == 0  # stays, to show the reveal
        assert "Revealed: the judge says useful (disagrees)" in status(app)
        assert "urban branches require" in str(card.content)
        await pilot.press("a")  # switch to the judge after the reveal
        with Session(db) as fresh:
            label = fresh.labels("alice")[fresh.golden("savings-min-balance").chunks[0].id]
            assert (label.blind_verdict, label.verdict, label.action) == (0, 1, "accept")
        await pilot.press("s")
        text = _screen_text(app)
        assert "Anchoring: blind answers versus pre-filled labels" in text
        assert "1 of 1 blind answers that disagreed with the judge were changed" in text


def _screen_text(app: AnnotatorApp) -> str:
    """Everything the current screen shows, as plain text."""
    import io

    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    for widget in app.screen.query(Static):
        console.print(widget.content)
    return console.export_text()


def test_blind_draw_is_reproducible_and_near_the_rate() -> None:
    draws = [is_blind("sess", "alice", chunk, 0.2) for chunk in range(5000)]
    assert draws == [is_blind("sess", "alice", chunk, 0.2) for chunk in range(5000)]
    assert 0.18 < sum(draws) / len(draws) < 0.22
    assert draws != [is_blind("sess", "bob", chunk, 0.2) for chunk in range(5000)]
    assert not any(is_blind("sess", "alice", chunk, 0.0) for chunk in range(100))


async def test_statistics_screen_numbers_come_from_the_core(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        # docs/statistics.md's savings golden: you [1,1,0,1,1], the judge [1,0,0,1,1]
        await pilot.press("a", "f", "a", "a", "a")
        await pilot.press("s")
        await app.workers.wait_for_complete()  # the report is built in a worker
        assert isinstance(app.screen, StatsScreen)
        text = _screen_text(app)
        assert "tp 3  fp 0  fn 1  tn 1" in text
        assert "0.8000" in text and "0.5455" in text  # percent agreement, Cohen's kappa
        assert "0.8875" in text and "0.7000" in text and "-0.1875" in text  # CP you, judge, bias
        report = build_report(session, judge="sample-judge", annotators=["alice"], resamples=0)
        assert report.goldens is not None
        for stat in (*report.chunks.stats.values(), *report.goldens.stats.values()):
            assert (f"{stat.value:.4f}" if stat.value is not None else "undefined") in text
        await pilot.press("escape")
        assert isinstance(app.screen, AnnotateScreen)


async def test_below_100_columns_the_statistics_screen_says_undefined_once_per_table(
        session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a", "a", "f", "s")  # three chunks: no golden complete, so no CP
        await app.workers.wait_for_complete()
        await pilot.pause()
        narrow = _screen_text(app)
        assert "undefined: no golden is complete" not in narrow
        assert "mean CP, human labels" not in narrow  # rows without a value are left out
        assert "rows with no value left out. Undefined: no golden is complete under" in narrow
        assert "Cohen's kappa" in narrow and "0.4000" in narrow  # the defined ones stay
        await pilot.resize_terminal(140, 50)
        await until(pilot, lambda: "mean CP, human labels" in _screen_text(app),
                    "the whole report at 140 columns")
        wide = _screen_text(app)
        assert "undefined: no golden is complete under both label sets" in wide
        assert "left out" not in wide


def test_folding_undefined_keeps_values_and_counts_reasons() -> None:
    from annotator.report.layout import Grid
    from annotator.report.render import fold_undefined

    grid = Grid("g", "t", ["statistic", "a", "b"],
                [["one", "undefined: no pairs", "undefined: no pairs"],
                 ["two", "0.5", "undefined: single class"],
                 ["three", "0.1", "0.2"]], ["a note"])
    folded = fold_undefined(grid)
    assert folded.rows == [["two", "0.5", "undefined"], ["three", "0.1", "0.2"]]
    assert folded.notes == ["1 row with no value left out. Undefined: no pairs (2); "
                            "single class.", "a note"]
    whole = Grid("g", "t", ["x", "y"], [["a", "1"]])
    assert fold_undefined(whole) is whole


async def test_queue_filters_and_jumps(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "f", "a", "a", "a")  # golden 1 complete, one disagreement
        await pilot.press("right_square_bracket", "right_square_bracket", "c", *"check", "enter")
        await pilot.press("g")
        await app.workers.wait_for_complete()  # the rows are computed in a worker
        assert isinstance(app.screen, QueueScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 16
        await pilot.press("2")
        assert table.row_count == 15  # pending: all but the complete one
        await pilot.press("3")
        assert table.row_count == 1 and table.get_row_at(0)[1].plain == "savings-min-balance"
        await pilot.press("4")
        assert table.row_count == 1 and table.get_row_at(0)[1].plain == "neft-timings"
        await pilot.press("1")  # the cursor starts on the golden being annotated (row 4)
        assert table.cursor_row == 3
        await pilot.press("down", "enter")
        assert isinstance(app.screen, AnnotateScreen)
        assert app.review.golden.id == "home-loan-eligibility"


async def test_help_lists_every_key_and_the_palette_has_every_action(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = _screen_text(app)
        for key in KEYS:
            assert key.help in text
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for key in KEYS:
            if key.action != "app.quit":
                assert any(title.startswith(key.label) for title in titles)


async def test_q_quits(session: Session) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert app.return_code == 0


async def test_long_chunk_folds_and_unfolds(tmp_path: Path) -> None:
    long_text = "line of text\n" * 2000  # 26 KB
    path = write_lines(tmp_path / "long.jsonl", [golden(retrieved_contexts=[long_text, "short"])])
    with Session(tmp_path / "long.db") as s:
        s.import_goldens(read_goldens(path), path=str(path))
        app = AnnotatorApp(Review(s, "alice", None), "long.db")
        async with app.run_test(size=SIZE) as pilot:
            card = next(iter(app.screen.query(ChunkCard)))
            assert "more characters: o to unfold" in str(card.content)
            await pilot.press("o")
            assert str(card.content).count("line of text") == 2000
            await pilot.press("o")
            assert "o to unfold" in str(card.content)
            await pilot.press("1")  # no judge: set by hand works
            assert s.labels("alice")[s.golden("g1").chunks[0].id].verdict == 1


ODD = ["[/b] closes nothing", "list[int] and [link=x]y[/link]", "<s>[INST] hi [/INST]",
       "emoji 🧪👩‍🔬 and RTL: עברית ومرحبا", "[bold red]not red[/]", "x" * 100_000]


async def test_markup_like_text_renders_literally_and_crashes_nothing(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "odd.jsonl", [golden(
        id="[b]id[/b]", user_input="[/oops] list[int]?", reference="[INST] ref [/INST]",
        retrieved_contexts=ODD, judge="j[/x]",
        judge_verdicts=[{"verdict": 1, "reason": "[/b] reason [link=z]"}] * len(ODD),
        metadata={"retriever": "[red]bm25[/red]"})])
    with Session(tmp_path / "odd.db") as s:
        s.import_goldens(read_goldens(path), path=str(path))
        app = AnnotatorApp(Review(s, "alice", "j[/x]"), "odd.db")
        async with app.run_test(size=SIZE) as pilot:
            text = _screen_text(app)
            for literal in ("[/oops] list[int]?", "[INST] ref [/INST]", "[b]id[/b]",
                            "[red]bm25[/red]", "j[/x]"):
                assert literal in text
            cards = list(app.screen.query(ChunkCard))
            for card, odd in zip(cards, ODD, strict=True):
                assert odd[:40] in str(card.content)
                assert "[/b] reason [link=z]" in str(card.content)
            await pilot.press(*["a"] * len(ODD))
            await pilot.press("g")
            assert app.screen.query_one(DataTable).get_row_at(0)[1].plain == "[b]id[/b]"
            await pilot.press("escape", "s", "escape", "question_mark", "escape")
            assert s.count_chunks() == len(ODD)
            assert len(s.labels("alice")) == len(ODD)


async def test_an_empty_session_is_a_sentence_not_a_crash(tmp_path: Path) -> None:
    from annotator.errors import SessionError

    with Session(tmp_path / "empty.db") as s, pytest.raises(SessionError, match="holds no goldens"):
        Review(s, "alice", None)


async def test_reopening_continues_where_the_person_stopped(session: Session, db: Path) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "a", "a", "a", "a", "a", "a")  # golden 1 done, two into golden 2
    with Session(db) as again:
        review = Review(again, "alice", "sample-judge")
        assert review.golden.id == "fd-premature-withdrawal" and review.cursor == 2
        assert (review.chunks_decided, review.goldens_complete) == (7, 1)
        assert Review(again, "bob", "sample-judge").golden.id == "savings-min-balance"


async def test_at_80x24_the_chunks_get_the_width_and_the_footer_keeps_every_key(
        session: Session) -> None:
    from textual.widgets._footer import FooterKey

    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-narrow") and screen.has_class("-short")
        assert screen.query_one("#chunks").size.width >= 76  # the summary no longer beside it
        line = screen.query_one("#summary-line", Static)
        assert line.display and str(line.render()).startswith("CP judge 0.7000 pass")
        assert not screen.query_one("#summary").display
        shown = [k.key_display for k in screen.query(FooterKey)
                 if k.region.right <= 80 and k.region.width > 0]
        assert shown[:9] == ["a", "f", "1", "0", "u", "g", "s", "?", "q"]
        # The golden's panel is cut short at 24 lines: its border says so, and e opens it whole.
        panel = screen.query_one("#golden-scroll")
        await until(pilot, lambda: panel.border_subtitle == "more: e expands",
                    "the panel to say the reference is cut short")
        assert panel.max_scroll_y > 0
        await pilot.press("e")
        await until(pilot, lambda: panel.border_subtitle == "e shrinks", "the panel to expand")
        assert panel.max_scroll_y == 0 and "rural branches" in str(
            screen.query_one("#golden", Static).render())
        await pilot.press("e")
        await until(pilot, lambda: panel.border_subtitle == "more: e expands",
                    "the panel to shrink")
        await pilot.resize_terminal(130, 46)
        await pilot.pause()
        assert screen.has_class("-wide") and screen.query_one("#summary").display
        assert not screen.query_one("#summary-line").display


async def test_help_explains_precision_at_k_cp_and_the_pass_mark(session: Session) -> None:
    app = make_app(session, pass_mark=0.75)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        text = str(app.screen.query_one("#help-metric", Static).render())
    assert "Precision@k (P@k) is the share of useful chunks among the first k" in text
    assert "Context precision (CP) is the mean of P@k over the ranks that hold a useful" in text
    for line in ("P@3 = 2/3 = 0.67   (noise: not counted)", "P@5 = 4/5 = 0.80",
                 "CP = (1.00 + 1.00 + 0.75 + 0.80) / 4 = 0.8875",
                 "a golden passes when its CP reaches 0.75"):
        assert line in text
    async with make_app(session).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "? explains P@k, CP and the pass mark" in str(
            pilot.app.screen.query_one("#summary", Static).render())


async def test_reopening_goes_to_the_golden_the_person_was_on_not_the_first_unfinished(
        session: Session, db: Path) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "a")  # two decisions on golden 1, then on to look at golden 4
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        looked_at = app.review.golden.id
    assert looked_at == session.golden_ids()[3]
    with Session(db) as again:
        review = Review(again, "alice", "sample-judge")
        assert review.golden.id == looked_at and review.cursor == 0
    # On a complete golden (revising it), the chunk under the cursor is kept too.
    with Session(db) as again:
        review = Review(again, "alice", "sample-judge")
        review.go_to(session.golden_ids()[0])
        for _ in range(3):
            review.accept()
        review.go_to(session.golden_ids()[0])  # complete now; the cursor on rank 4
        review.move(3)
        review.remember_position()
    with Session(db) as again:
        review = Review(again, "alice", "sample-judge")
        assert (review.golden.id, review.cursor) == (session.golden_ids()[0], 3)
        assert Review(again, "bob", "sample-judge").golden.id == session.golden_ids()[0]


async def test_a_blind_answer_that_ends_a_golden_moves_on_with_j(session: Session) -> None:
    app = make_app(session, blind_rate=1.0)
    first, second = session.golden_ids()[:2]
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(5):  # every chunk of the first golden answered blind, each kept with j
            await pilot.press("1")
            assert app.review.golden.id == first and "Keep yours with j" in status(app)
            await pilot.press("j")
        assert app.review.golden.id == second and app.review.cursor == 0
        assert status(app).startswith(f"{first} complete: CP")
    assert all(label.verdict == 1 for label in
               session.labels("alice", [first]).values())


async def test_verdicts_from_a_judge_running_elsewhere_appear_as_they_land(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from tests.fake_openai import FakeOpenAI

    # The banking goldens without any verdict or label.
    plain = [{k: v for k, v in json.loads(line).items()
              if k not in ("judge", "judge_verdicts", "human_labels")}
             for line in BANKING.read_text(encoding="utf-8").splitlines()]
    source = write_lines(tmp_path / "plain.jsonl", plain)
    db = tmp_path / "s.db"
    with FakeOpenAI() as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        judge = [sys.executable, "-m", "annotator", "judge", str(db), "--model", "m",
                 "--base-url", server.base_url]
        with Session(db) as s:
            s.import_goldens(read_goldens(source), path=str(source))
        # Define the judge with one chunk judged, then annotate while it judges the rest.
        subprocess.run([*judge, "--limit", "1"], env=env, cwd=ROOT, check=True,
                       capture_output=True)
        with Session(db) as s:
            app = AnnotatorApp(Review(s, "alice", "m-builtin"), "s.db")
            async with app.run_test(size=SIZE) as pilot:
                cards = list(app.screen.query(ChunkCard))
                assert sum("no verdict yet" in str(c.content) for c in cards) == 4
                await pilot.press("right_square_bracket", "1", "0")  # decided before judged
                subprocess.run(judge, env=env, cwd=ROOT, check=True, capture_output=True)
                fresh = Review(s, "alice", "m-builtin")
                await until(pilot, lambda: app.review.overall == fresh.overall,
                            "the screen's totals to take in the new verdicts")
                assert app.review.overall.n == 2
                await pilot.press("left_square_bracket")
                assert not any("no verdict yet" in str(c.content) for c in cards)
                summary = str(app.screen.query_one("#summary", Static).content)
                assert "hidden or not judged" not in summary
                await pilot.press("a")
                assert s.labels("alice")[s.golden("savings-min-balance").chunks[0].id].action == "accept"


async def test_a_screen_opened_before_any_judge_shows_the_first_judges_verdicts(
        tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from tests.fake_openai import FakeOpenAI

    plain = [{k: v for k, v in json.loads(line).items()
              if k not in ("judge", "judge_verdicts", "human_labels")}
             for line in BANKING.read_text(encoding="utf-8").splitlines()]
    source = write_lines(tmp_path / "plain.jsonl", plain)
    db = tmp_path / "s.db"
    with Session(db) as s:
        s.import_goldens(read_goldens(source), path=str(source))
    with Session(db) as s, FakeOpenAI() as server:
        app = AnnotatorApp(Review(s, "alice", None), "s.db")  # labelling before any judge
        async with app.run_test(size=SIZE) as pilot:
            cards = list(app.screen.query(ChunkCard))
            assert all("no verdict yet" in str(c.content) for c in cards)
            await pilot.press("1")  # decided before anyone judged
            subprocess.run([sys.executable, "-m", "annotator", "judge", str(db), "--model", "m",
                            "--base-url", server.base_url, "--limit", "10"],
                           env={**os.environ, "OPENAI_API_KEY": "sk-test"}, cwd=ROOT, check=True,
                           capture_output=True)
            await until(pilot, lambda: not any("no verdict yet" in str(c.content)
                                               for c in app.screen.query(ChunkCard)),
                        "the new judge's verdicts on the screen")
            assert app.review.judge == "m-builtin"
            assert "m-builtin" in str(app.screen.query_one("#header", Static).content)
            await until(pilot, lambda: app.review.overall.n == 1, "the totals to count")
            await pilot.press("a")  # the judge's verdict is there to accept
            label = s.labels("alice")[s.golden("savings-min-balance").chunks[1].id]
            assert label.action == "accept"


def ready(screen: QueueScreen | StatsScreen) -> bool:
    """Whether the screen's worker has delivered (read afresh, after an await)."""
    return screen.ready


class GatedReview(Review):
    """A Review whose worker-side reads wait for the test to open a gate, so a test can act
    while the screen's worker is provably still running (no clock involved)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.finished: list[str] = []
        self.done = threading.Event()

    def _gated(self, what: str, read: Callable[[], T]) -> T:
        assert self.gate.wait(60), "the test never opened the gate"
        try:
            return read()
        finally:
            self.finished.append(what)
            self.done.set()

    def queue(self) -> Iterator[list[QueueRow]]:
        """The first page at once; the rest once the gate opens."""
        pages = super().queue()
        yield next(pages)
        yield from self._gated("queue", lambda: list(pages))

    def report(self) -> Report:
        return self._gated("report", super().report)


@pytest.fixture(scope="module")
def ten_thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session of 10,000 goldens x 3 chunks, judged, nobody's labels yet."""
    path = tmp_path_factory.mktemp("big") / "big.db"
    records = [GoldenRecord(id=f"g{i:05d}", user_input=f"question {i}?", reference="answer",
                            retrieved_contexts=["one", "two", "three"],
                            judge_verdicts={"j": [JudgeVerdict(i % 2), JudgeVerdict(1),
                                                  JudgeVerdict(0)]})
               for i in range(10_000)]
    with Session(path) as s:
        s.import_goldens(records, path="generated")
    return path


async def test_statistics_screen_computes_in_a_worker_and_keys_work_meanwhile(
        ten_thousand: Path) -> None:
    with Session(ten_thousand) as s:
        review = GatedReview(s, "alice", "j")
        app = AnnotatorApp(review, "big.db")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("s")
            assert isinstance(app.screen, StatsScreen) and not app.screen.ready
            assert "Computing the statistics" in _screen_text(app)
            await pilot.press("escape", "a")  # back, and a decision, while the worker runs
            assert isinstance(app.screen, AnnotateScreen)
            first = s.golden("g00000").chunks[0].id
            assert s.labels("alice")[first].action == "accept"  # on disk already
            assert review.finished == []  # ...and the worker had not finished
            review.gate.set()  # the screen is gone: its worker still ends cleanly
            assert await asyncio.to_thread(review.done.wait, 60)
            await pilot.pause()
            assert review.finished == ["report"] and isinstance(app.screen, AnnotateScreen)


async def until(pilot: Any, condition: Callable[[], bool], what: str = "the condition") -> None:
    """Let the app run until the condition holds (a screen polling the file needs a second or
    two; a loaded machine more), failing after PATIENCE seconds."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"waited {PATIENCE:.0f} s for {what}, in vain"
        await pilot.pause(0.02)


async def test_queue_screen_shows_its_first_page_while_reading_the_rest_and_keeps_the_filter(
        ten_thousand: Path) -> None:
    with Session(ten_thousand) as s:
        review = GatedReview(s, "alice", "j")
        app = AnnotatorApp(review, "big.db")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("g")
            screen = app.screen
            assert isinstance(screen, QueueScreen)
            table = screen.query_one(DataTable)
            # The first page is on screen while the rest are still being read.
            await until(pilot, lambda: table.row_count == Review.QUEUE_FIRST)
            assert not screen.ready and review.finished == []
            assert f"reading {Review.QUEUE_FIRST:,} of 10,000" in _screen_text(app)
            await pilot.press("3")  # disagreements: none, as nobody has labelled
            await pilot.pause()
            assert screen.current == "disagreements" and table.row_count == 0
            review.gate.set()
            await app.workers.wait_for_complete()
            await until(pilot, lambda: screen.ready)
            assert review.finished == ["queue"] and len(screen.rows) == 10_000
            assert [row.number for row in screen.rows] == list(range(1, 10_001))
            assert table.row_count == 0  # the filter chosen early holds for every page
            await pilot.press("1")
            await app.workers.wait_for_complete()
            assert table.row_count == 10_000


async def test_a_decision_the_file_cannot_take_says_so_and_stays_pending(db: Path) -> None:
    import sqlite3

    with Session(db, busy_timeout=0.2) as session:
        app = make_app(session)
        async with app.run_test(size=SIZE) as pilot:
            blocker = sqlite3.connect(db, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")  # another command holding the write lock
            try:
                await pilot.press("a")
                assert status(app).startswith("Not saved: ") and "is busy" in status(app)
                assert app.review.chunks_decided == 0 and app.review.cursor == 0
                await pilot.press("u")
                assert status(app).startswith("Not undone: ")
            finally:
                blocker.execute("ROLLBACK")
                blocker.close()
            await pilot.press("a")  # the lock is gone: the same key saves
            assert app.review.chunks_decided == 1 and status(app) == ""
    assert len(on_disk(db)) == 1


class CountGated(Review):
    """A Review whose totals are read in the screen's worker, with a gate before the snapshot
    is read (``before``) or after it is read and before it is handed back (``after``)."""

    def __init__(self, *args: Any, where: str, **kwargs: Any) -> None:
        self.where = where
        self.gate = threading.Event()
        self.read = threading.Event()
        super().__init__(*args, count=False, **kwargs)

    def count(self) -> ReviewTotals:
        self._counting = True  # as Review.count does before it reads
        if self.where == "before":  # decisions now are in the snapshot and must not count twice
            assert self.gate.wait(60)
        with self.session.another() as session:
            totals = session.review_totals(self.annotator, self.judge)
        self.read.set()
        if self.where == "after":
            assert self.gate.wait(60)
        return totals


@pytest.mark.parametrize("where", ["before", "after"])
async def test_the_screen_paints_before_the_totals_and_keeps_decisions_made_while_counting(
        db: Path, where: str) -> None:
    with Session(db) as s:
        review = CountGated(s, "alice", "sample-judge", where=where)
        app = AnnotatorApp(review, s.path.name)
        async with app.run_test(size=SIZE) as pilot:
            header = str(app.screen.query_one("#header", Static).content)
            assert "counting…" in header and "golden 1 of" in header
            assert not review.totals_known
            if where == "after":  # the snapshot is read: this decision is not in it
                await until(pilot, review.read.is_set)
            await pilot.press("a", "f")  # two decisions while the totals are being read
            assert len(on_disk(db)) == 2
            review.gate.set()
            await app.workers.wait_for_complete()
            await until(pilot, lambda: review.totals_known)
            fresh = Review(s, "alice", "sample-judge")
            assert (review.chunks_decided, review.overall, review.goldens_complete,
                    review.total_chunks) == (2, fresh.overall, fresh.goldens_complete,
                                             fresh.total_chunks)
            assert "chunks 2/" in str(app.screen.query_one("#header", Static).content)


async def test_the_queue_shows_how_far_others_are_on_each_golden_but_not_their_labels(
        session: Session) -> None:
    first = session.golden_ids()[0]
    bob = [c.id for c in session.golden(first).chunks][:2]
    for chunk_id in bob:
        session.decide("bob", chunk_id, 1, "set")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await app.workers.wait_for_complete()
        table = app.screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count == 16)
        others = {str(table.get_row_at(i)[1]): table.get_row_at(i)[-1].plain for i in range(16)}
    assert others[first] == "bob 2/5, sample-reviewer done"
    assert set(list(others.values())[1:]) == {"sample-reviewer done"}


def trec_pool(tmp_path: Path) -> Path:
    """A graded, unranked TREC pool (two queries), imported as import-trec does it."""
    from click.testing import CliRunner

    from annotator.cli import cli

    (tmp_path / "q.tsv").write_text("q1\tWhat is the minimum balance?\nq2\tWhen does NEFT run?\n")
    (tmp_path / "gpt.qrels").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 3\nq2 0 d4 0\n")
    db = tmp_path / "pool.db"
    result = CliRunner().invoke(cli, ["import-trec", str(db), "--queries", str(tmp_path / "q.tsv"),
                                      "--pool", str(tmp_path / "gpt.qrels"), "--judge",
                                      f"gpt={tmp_path / 'gpt.qrels'}", "--scale", "0-3"])
    assert result.exit_code == 0, result.output
    return db


async def test_grades_from_the_keyboard_on_a_pool_are_on_disk_and_no_order_is_shown(
        tmp_path: Path) -> None:
    db = trec_pool(tmp_path)
    with Session(db) as session:
        app = AnnotatorApp(Review(session, "me", "gpt"), db.name)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            cards = list(screen.query(ChunkCard))
            first = str(cards[0].content)
            assert "no order, no P@k" in first and "P@1" not in first
            assert "grade 2 highly relevant" in first  # the judge's grade, named
            panel = str(screen.query_one("#golden", Static).content)
            assert "relevance to the query itself" in panel
            assert "no CP" in str(screen.query_one("#summary", Static).content)
            await pilot.press("3")  # a grade: useful at the session's threshold (2)
            await pilot.press("a")  # accepting a graded judge takes its grade: 1, noise
            await pilot.press("5")  # outside the scale: refused, nothing written
            assert "grades run 0 to 3" in status(app)
            with Session(db) as fresh:
                ids = [c.id for c in fresh.golden("q1").chunks]
                labels = fresh.labels("me", ["q1"])
                assert [(labels[i].grade, labels[i].verdict, labels[i].action)
                        for i in ids if i in labels] == [(3, 1, "set"), (1, 0, "accept")]
            await pilot.press("u")  # undo restores the chunk, grade and all
            with Session(db) as fresh:
                assert ids[1] not in {c for c, lab in fresh.labels("me", ["q1"]).items()
                                      if lab.verdict is not None}
            assert "3 perfectly relevant" in str(screen.query(ChunkCard).first().content)


def test_a_count_is_given_up_once_its_screen_closes(tmp_path: Path) -> None:
    # 20,000 chunks: the totals read takes many SQLite steps, and the stop is seen between them.
    goldens = [golden(id=f"g{i}", retrieved_contexts=[f"chunk {i}.{k}" for k in range(10)])
               for i in range(2000)]
    path = write_lines(tmp_path / "g.jsonl", goldens)
    with Session(tmp_path / "s.db") as s:
        s.import_goldens(read_goldens(path), path=str(path))
        review = Review(s, "alice", None, count=False)
        assert sum(review.count().chunks.values()) == 20_000
        review.stop_counting()  # the screen is closing: a read under way stops, a new one too
        with pytest.raises(ReadStopped):
            review.count()


async def test_q_right_after_the_first_paint_quits_with_the_totals_unread(
        tmp_path: Path) -> None:
    goldens = [golden(id=f"g{i}", retrieved_contexts=[f"chunk {i}.{k}" for k in range(10)])
               for i in range(2000)]
    path = write_lines(tmp_path / "g.jsonl", goldens)
    with Session(tmp_path / "s.db") as s:
        s.import_goldens(read_goldens(path), path=str(path))
        review = Review(s, "alice", None, count=False)
        app = AnnotatorApp(review, s.path.name)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("q")
        assert review._closing  # the worker's read was told to stop
        assert all(w.error is None for w in app.workers)


async def test_at_80_by_24_the_header_still_names_the_person_the_judge_and_the_file(
        session: Session) -> None:
    app = make_app(session, annotator="alice-from-the-night-shift")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        header = str(app.screen.query_one("#header", Static).render())
        assert "alice-from-the-night-shift" in header, header
        assert "sample-judge" in header and session.path.name in header, header
        assert "golden 1/16" in header
