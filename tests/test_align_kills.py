"""An align or a judge run stopped from outside: SIGTERM and SIGHUP stop it as Ctrl-C does
(nothing half made is left); SIGKILL leaves candidates that no leaderboard shows and the next
run removes, naming them; a kill between writing a kept prompt and recording it leaves
nothing the next run does not clear."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.align.loop import clear_stopped_runs
from annotator.cli import cli
from annotator.store.session import Session
from tests.fake_openai import FakeOpenAI
from tests.test_align import decide, judge_base, revising, team  # noqa: F401  (a fixture)
from tests.waiting import wait_until

FIX = "Chunks that repeat the question's words without stating a fact are noise."


def candidates(db: Path) -> list[str]:
    with Session(db) as session:
        return [j.name for j in session.judges() if "~align" in j.name]


def start_align(db: Path, server: FakeOpenAI) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    return subprocess.Popen(
        [sys.executable, "-m", "annotator", "align", str(db), "--judge", "base",
         "--optimizer-model", "opt", "--base-url", server.base_url, "--bootstrap", "200",
         "--candidates", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)


def held_mid_candidate(db: Path, server: FakeOpenAI) -> subprocess.Popen[str]:
    """An align run stopped by the server in the middle of judging its first candidate."""
    server.optimize = revising(FIX)
    server.hold_after = len(server.requests) + 2  # the optimizer, one candidate call, then hold
    running = start_align(db, server)
    wait_until(lambda: len(server.requests) > server.hold_after and candidates(db),  # type: ignore[operator]
               "a candidate registered and its calls held")
    return running


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_align_as_ctrl_c_does(team: Path, stop: int) -> None:  # noqa: F811
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        running = held_mid_candidate(team, server)
        running.send_signal(stop)
        _, err = running.communicate(timeout=120)
    assert running.returncode == 130, err
    assert "Stopped. Nothing was registered" in err and "Traceback" not in err
    assert candidates(team) == []
    with Session(team) as session:
        [run] = session.align_runs()
        assert run["outcome"] == "stopped: interrupted" and run["finished_at"] is not None


def test_a_killed_align_leaves_candidates_no_one_sees_and_the_next_run_removes(
        team: Path) -> None:  # noqa: F811
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        running = held_mid_candidate(team, server)
        running.send_signal(signal.SIGKILL)
        running.wait(timeout=60)
        server.let_go()
        left = candidates(team)
        assert left  # SIGKILL cannot be caught: the candidate is still there...
        board = CliRunner().invoke(cli, ["judges", str(team), "--format", "json",
                                         "--bootstrap", "0"])
        assert board.exit_code == 0, board.output
        assert [row["judge"] for row in json.loads(board.stdout)["judges"]] == ["base"]
        report = CliRunner().invoke(cli, ["report", str(team), "--bootstrap", "0"])
        assert report.exit_code == 0, report.output  # ...but no leaderboard or report sees it
        server.hold_after = None
        server.release.clear()
        again = start_align(team, server)
        _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "Align run 1 was stopped before it ended (its process was killed): removed " \
           "1 candidate judge." in err
    assert not [name for name in candidates(team) if "~align1." in name]
    with Session(team) as session:
        first = session.align_runs()[0]
        assert first["outcome"] == "stopped: its process ended before the run did"


def test_a_kill_between_the_kept_prompt_and_its_record_leaves_nothing_behind(
        team: Path, tmp_path: Path) -> None:  # noqa: F811
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
    orphan = tmp_path / "base-aligned-1.toml"
    orphan.write_text("written, then the process was killed\n", encoding="utf-8")
    with Session(team) as session:  # the state a kill after the file, before the record, leaves
        run_id = session.start_align_run("base", "judge-model", "opt", None, {}, [], [])
        session.update_align_run(run_id, prompt_path=str(orphan))
        said = clear_stopped_runs(session)
        assert said == [f"Align run {run_id} was stopped before it ended (its process was "
                        f"killed): removed 0 candidate judges and the unrecorded prompt file "
                        f"{orphan}."]
        assert not orphan.exists()
        [run] = session.align_runs()
        assert run["prompt_path"] is None and run["registered_as"] is None
        assert clear_stopped_runs(session) == []  # once only


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_stops_a_judge_run_as_ctrl_c_does(tmp_path: Path, stop: int) -> None:
    from tests.conftest import banking_file

    db = banking_file(tmp_path / "b.db")
    with FakeOpenAI() as server:
        server.hold_after = 0  # every call waits: the run has no verdict when it is stopped
        running = subprocess.Popen(
            [sys.executable, "-m", "annotator", "judge", str(db), "--model", "m",
             "--base-url", server.base_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "OPENAI_API_KEY": "sk-test"})
        wait_until(lambda: server.requests, "the first call held")
        running.send_signal(stop)
        _, err = running.communicate(timeout=120)
    assert running.returncode == 130, err
    assert "Judge 'm-builtin' is not kept: it has no verdict yet." in err
    with Session(db) as session:
        assert [j.name for j in session.judges()] == ["sample-judge"]
