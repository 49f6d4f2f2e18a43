"""Adjudication: only the disputed chunks, each gold label on disk before the screen moves on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Input, Static

from annotator.cli import cli
from annotator.errors import SessionError
from annotator.people.adjudication import Adjudication
from annotator.report.build import build_report
from annotator.report.leaderboard import build_leaderboard
from annotator.store.session import Session
from annotator.tui.app import AdjudicatorApp
from annotator.tui.screens.help import HelpScreen
from tests.conftest import banking_file, second_opinion
from tests.terminal import in_terminal

SIZE = (120, 40)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The banking sample with a second person, bob, who disagrees on three chunks."""
    path = banking_file(tmp_path / "team.db")
    with Session(path) as s:
        ids = s.chunk_ids()
        goldens = s.golden_ids()
        second_opinion(s, "bob", {ids[goldens[1]][0], ids[goldens[1]][3], ids[goldens[4]][2]})
        s.set_note("bob", ids[goldens[1]][0], "only [b]half[/b] relevant 🙂")
    return path


def gold_on_disk(path: Path) -> dict[int, tuple[int, str, str | None]]:
    conn = sqlite3.connect(path)
    try:
        return {c: (v, who, note) for c, v, who, note in
                conn.execute("SELECT chunk_id, verdict, decided_by, note FROM gold_labels")}
    finally:
        conn.close()


async def test_the_adjudicator_walks_only_disputes_and_every_gold_label_is_on_disk(
        team: Path) -> None:
    with Session(team) as session:
        adjudication = Adjudication(session, "carol")
        disputes = [d.chunk.id for d in adjudication.disputes]
        assert len(disputes) == 3
        app = AdjudicatorApp(adjudication, team.name)
        async with app.run_test(size=SIZE) as pilot:
            text = str(app.screen.query_one("#dispute", Static).render())
            assert "only [b]half[/b] relevant 🙂" in text  # literal, never markup
            assert "sample-reviewer:" in text and "bob:" in text and "sample-judge:" in text
            assert "dispute 1 of 3" in str(app.screen.query_one("#header", Static).render())
            await pilot.press("1")
            assert gold_on_disk(team) == {disputes[0]: (1, "carol", None)}
            await pilot.press("k", "c")  # a note on a settled chunk is saved at once
            await pilot.pause()
            app.screen.query_one(Input).value = "the policy says so"
            await pilot.press("enter")
            assert gold_on_disk(team)[disputes[0]] == (1, "carol", "the policy says so")
            await pilot.press("j", "c")  # on dispute 2, before deciding: saved with the label
            await pilot.pause()
            app.screen.query_one(Input).value = "bob misread it"
            await pilot.press("enter")
            assert disputes[1] not in gold_on_disk(team)
            assert "saved with the gold label" in str(app.screen.query_one("#status",
                                                                            Static).render())
            await pilot.press("0")
            assert gold_on_disk(team)[disputes[1]] == (0, "carol", "bob misread it")
            await pilot.press("u")  # taken back: off the disk too
            assert disputes[1] not in gold_on_disk(team)
            await pilot.press("0", "1")
            assert gold_on_disk(team) == {disputes[0]: (1, "carol", "the policy says so"),
                                          disputes[1]: (0, "carol", "bob misread it"),
                                          disputes[2]: (1, "carol", None)}
            assert "Every dispute is settled" in str(
                app.screen.query_one("#status", Static).render())
            await pilot.press("k", "k", "0")  # changing a verdict keeps the note
            assert gold_on_disk(team)[disputes[0]] == (0, "carol", "the policy says so")
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape", "q")
        events = [e for e in session.events("carol") if e["kind"] == "adjudicate"]
        assert len(events) == 7  # 1, note, 0, undo, 0, 1, change


def test_the_leaderboard_scores_against_the_gold_labels(team: Path) -> None:
    with Session(team) as session:
        before = build_leaderboard(session, resamples=0)
        assert before.truth.pending == 3 and before.chunks == 77
        adjudication = Adjudication(session, "carol")
        for dispute in adjudication.disputes:
            adjudication.decide(1 - dispute.verdicts[0].verdict)  # against the judge each time
        after = build_leaderboard(session, resamples=0)
    assert (after.truth.pending, after.truth.adjudicated, after.chunks) == (0, 3, 80)
    assert after.judges[0].stats["percent"].value is not None
    # 3 more chunks, each a disagreement with the judge.
    percent_before = before.judges[0].stats["percent"].value
    assert percent_before is not None
    agree_before = percent_before * 77
    assert after.judges[0].stats["percent"].value == pytest.approx(agree_before / 80)


def test_no_disagreement_is_a_sentence(tmp_path: Path) -> None:
    with (Session(banking_file(tmp_path / "s.db")) as s,
          pytest.raises(SessionError, match="Nobody disagrees")):
        Adjudication(s, "carol")
    code, text = in_terminal("annotate", str(tmp_path / "s.db"), "--adjudicate")
    assert code == 2 and "Nobody disagrees" in text


def test_the_report_scores_against_the_gold_labels_with_gold(team: Path) -> None:
    runner = CliRunner()
    ambiguous = runner.invoke(cli, ["report", str(team), "--bootstrap", "0"])
    assert ambiguous.exit_code == 2 and "--gold" in ambiguous.output
    with Session(team) as session:
        report = build_report(session, gold=True, resamples=0)
        assert report.annotators == ["the team's gold labels"]
        assert report.chunks.confusion.n == 77  # three chunks await adjudication
        assert [a.annotator for a in report.people.annotators] == ["bob", "sample-reviewer"]
        adjudication = Adjudication(session, "carol")
        for _ in adjudication.disputes:
            adjudication.decide(1)
        report = build_report(session, gold=True, resamples=0)
    assert report.chunks.confusion.n == 80
    assert report.headline[0].startswith("Judge 'sample-judge' against the team's gold labels")
    out = team.with_suffix(".json")
    result = runner.invoke(cli, ["report", str(team), "--gold", "-f", "json", "-o", str(out),
                                 "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    both = runner.invoke(cli, ["report", str(team), "--gold", "--annotator", "bob"])
    assert both.exit_code == 2 and "Give one of" in both.output


async def test_the_palette_has_every_adjudication_action_and_runs_it(team: Path) -> None:
    from annotator.tui.keys import ADJUDICATE_KEYS

    with Session(team) as session:
        app = AdjudicatorApp(Adjudication(session, "carol"), team.name)
        async with app.run_test(size=SIZE) as pilot:
            commands = {c.title: c for c in app.get_system_commands(app.screen)}
            for key in ADJUDICATE_KEYS:
                if key.action != "app.quit":
                    assert any(title.startswith(key.label) for title in commands)
            noise = next(c for title, c in commands.items() if title.startswith("Noise"))
            await noise.callback()
            await pilot.pause()
            first = app.adjudication.disputes[0].chunk.id
            assert gold_on_disk(team) == {first: (0, "carol", None)}


async def test_people_and_judges_verdicts_are_written_alike(team: Path) -> None:
    import re

    with Session(team) as session:
        app = AdjudicatorApp(Adjudication(session, "carol"), team.name)
        async with app.run_test(size=SIZE):
            text = str(app.screen.query_one("#dispute", Static).render())
    people, judges = text.split("Judges")[0].split("People")[1], text.split("Judges")[1]
    words = set(re.findall(r": (useful|noise|USEFUL|NOISE|Useful|Noise)\b", people + judges))
    assert words and words <= {"USEFUL", "NOISE"}, words
