"""Judge epochs and re-checks end to end: a provider that changes what it serves in the middle
of a run, verdicts of two epochs kept apart everywhere, and `annotator recheck` on the real
openai client against the test server (exit status, figures, history, dry run, plan)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.store.session import Session
from tests.conftest import write_lines
from tests.fake_openai import FakeOpenAI, chunk_of
from tests.session_fixtures import fixture_path

SWITCH_AFTER = 23
"""Requests answered as the first epoch before the provider changes what it serves."""


def goldens_file(tmp_path: Path, goldens: int = 16, seed: int = 1) -> Path:
    """Goldens of 5 chunks each, every chunk labelled by alice (the truth): a chunk is useful
    when its text says so; alice agrees with that on nine chunks in ten."""
    rng = random.Random(seed)
    rows = []
    for g in range(goldens):
        useful = [rng.random() < 0.4 for _ in range(5)]
        rows.append({"id": f"g{g}", "user_input": f"Question {g}?", "reference": f"Answer {g}.",
                     "retrieved_contexts": [f"chunk {g}.{r} " + ("useful" if u else "noise")
                                            for r, u in enumerate(useful)],
                     "human_labels": {"alice": [int(u) if rng.random() < 0.9 else int(not u)
                                                for u in useful]}})
    return write_lines(tmp_path / "goldens.jsonl", rows)


def invoke(args: list[str], server: FakeOpenAI | None = None) -> Any:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    if server is not None:
        env["OPENAI_BASE_URL"] = server.base_url
    return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)


def imported(tmp_path: Path, place: str | Path) -> str | Path:
    """The goldens imported into a new session at ``place`` (each store's)."""
    assert invoke(["import", str(goldens_file(tmp_path)), "--session", str(place)]).exit_code == 0
    return place


def test_a_fingerprint_changed_mid_run_is_said_at_once_and_its_verdicts_kept_apart(
        tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        server.serving = lambda seen: ("gpt-x-0613", "fp_one" if seen <= SWITCH_AFTER
                                       else "fp_two")
        result = invoke(["judge", str(db), "--model", "gpt-x", "--name", "j",
                         "--concurrency", "1"], server)
        assert result.exit_code == 0, result.output
        # Said while the run goes on, naming both servings and both epochs.
        assert "now serves judge 'j' as model gpt-x-0613, fingerprint fp_two" in result.output
        assert "until now model gpt-x-0613, fingerprint fp_one" in result.output
        with Session(db) as session:
            epochs = session.judge_epochs("j")
            assert [(e["fingerprint"], e["chunks"]) for e in epochs] == [
                ("fp_one", SWITCH_AFTER), ("fp_two", 80 - SWITCH_AFTER)]
            first, second = (e["epoch"] for e in epochs)
            assert second in result.output and first in result.output
            # Caught on the first changed call: every call up to the switch is the first epoch,
            # every one after it the second (one request at a time, so in order).
            order = [c["epoch"] for c in session.calls("j")]
            assert order == [first] * SWITCH_AFTER + [second] * (80 - SWITCH_AFTER)
            assert session.epoch_in_use("j") == second
            assert len(session.verdicts("j")) == 80 - SWITCH_AFTER  # never pooled
            assert sum(session.judge_verdict_counts().values()) == 80 - SWITCH_AFTER
        info = " ".join(invoke(["info", str(db)]).stdout.split())
        assert f"Judge 'j' has verdicts of 2 epochs: this reads the latest, {second}" in info

        # The report reads the latest epoch and says what it leaves out.
        report = json.loads(invoke(["report", str(db), "--format", "json",
                                    "--bootstrap", "0"]).stdout)
        assert report["agreement"]["n"] == 80 - SWITCH_AFTER
        assert any(f"leaves out {first}" in line and "fp_one" in line
                   for line in report["headline"])
        # --epoch reads the other one, by a prefix; never both.
        earlier = json.loads(invoke(["report", str(db), "--format", "json", "--bootstrap", "0",
                                     "--epoch", first[:6]]).stdout)
        assert earlier["agreement"]["n"] == SWITCH_AFTER
        from annotator import api

        assert api.report(db, bootstrap=0, epochs=[first])["agreement"]["n"] == SWITCH_AFTER
        assert api.leaderboard(db, bootstrap=0, epochs=[f"j={first}"])["judges"][0]["chunks"] \
            == SWITCH_AFTER
        # The leaderboard: each judge carries its epoch, and every epoch when several.
        board = json.loads(invoke(["judges", str(db), "--format", "json",
                                   "--bootstrap", "0"]).stdout)
        row = board["judges"][0]
        assert row["epoch"] == second and row["chunks"] == 80 - SWITCH_AFTER
        assert [(e["epoch"], e["chunks"], e["read"]) for e in row["epochs"]] == [
            (first, SWITCH_AFTER, False), (second, 80 - SWITCH_AFTER, True)]
        assert any(line.startswith("Epochs read: 'j' " + second) for line in board["headline"])
        # The export reads one epoch too.
        exported = invoke(["export", str(db), "--format", "jsonl", "--epoch", f"j={first}"])
        verdicts = [v for line in exported.stdout.splitlines()
                    for v in json.loads(line).get("judge_verdicts") or [] if v is not None]
        assert len(verdicts) == SWITCH_AFTER
        assert f"this reads the one chosen with --epoch, {first}" in exported.stderr
        # Judging again brings the judge into one epoch: the earlier epoch's chunks are asked
        # again as the judge is served now.
        again = invoke(["judge", str(db), "--model", "gpt-x", "--name", "j"], server)
        assert "23 chunks judged" in again.output, again.output
    with Session(db) as session:
        assert len(session.verdicts("j")) == 80


def test_a_wrong_epoch_is_refused_with_the_epochs_there_are(tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        assert invoke(["judge", str(db), "--model", "m", "--name", "j"], server).exit_code == 0
    with Session(db) as session:
        (only,) = session.judge_epochs("j")
    for wrong, said in (("zzzz", "has an epoch starting 'zzzz'"),
                        ("ab", "give 4 characters or more"),
                        (f"other={only['epoch']}", "No judge named 'other'")):
        result = invoke(["report", str(db), "--epoch", wrong])
        assert result.exit_code == 2 and said in result.output, result.output
        assert only["epoch"] in result.output  # it lists what there is


def test_an_old_session_gets_one_epoch_a_judge_and_reads_as_before(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    old.write_bytes(fixture_path("m015_epochs").read_bytes())
    before = sqlite3.connect(old).execute(
        "SELECT chunk_id, verdict FROM verdicts WHERE error IS NULL ORDER BY chunk_id").fetchall()
    with Session(old) as session:
        (epoch,) = session.judge_epochs("old-judge")
        assert (epoch["model"], epoch["fingerprint"]) == ("gpt-4o-mini", None)
        assert sorted((c, v.verdict) for c, v in session.verdicts("old-judge").items()) == before
        # A reply that says the configured model and no fingerprint is the same epoch.
        assert session.epoch_for("old-judge", "gpt-4o-mini", None) == epoch["epoch"]
        assert session.epoch_for("old-judge", "gpt-4o-mini", "fp_1") != epoch["epoch"]


def drifting(server: FakeOpenAI, wrong: set[str]) -> None:
    """The server now gives the other verdict on these chunks."""
    server.decide = lambda body, text: int("useful" in text) ^ (text in wrong)


def test_recheck_finds_an_unchanged_judge_unchanged_and_a_drifted_one_worse(
        tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        assert invoke(["judge", str(db), "--model", "m", "--name", "j"], server).exit_code == 0
        # The dry run says the calls and writes nothing: no canary, no re-check.
        dry = invoke(["recheck", str(db), "--judge", "j", "--dry-run"], server)
        assert dry.exit_code == 0 and "80 for 80 chunks" in dry.output, dry.output
        assert "not chosen yet" in dry.output and "Nothing was sent" in dry.output
        with Session(db) as session:
            assert session.canary() == ([], None) and not session.rechecks("j")
        sent = len(server.requests)
        steady = invoke(["recheck", str(db), "--judge", "j", "--format", "json"], server)
        assert steady.exit_code == 0, steady.output
        figures = json.loads(steady.stdout)
        assert len(server.requests) == sent + 80  # every canary chunk asked again
        assert figures["chunks"] == 80 and figures["worse"] is False
        assert figures["kappa_drop"]["value"] == pytest.approx(0.0)
        assert figures["flips"] == {"useful_to_noise": 0, "noise_to_useful": 0,
                                    "right_to_wrong": 0, "wrong_to_right": 0}
        assert figures["epochs_now"] == [figures["epoch_before"]]

        # The provider starts serving something else, which gets 12 chunks wrong.
        texts = sorted(chunk_of(body) for _, body, _ in server.requests)
        with Session(db) as session:
            right = {t for t in texts if int("useful" in t) == _alice(session, t)}
        wrong = set(sorted(right)[:12])
        drifting(server, wrong)
        server.serving = lambda seen: ("m-2", "fp_new")
        worse = invoke(["recheck", str(db), "--judge", "j"], server)
        assert worse.exit_code == 1, worse.output
        assert "12 right -> wrong, 0 wrong -> right" in worse.output
        assert "a new epoch" in worse.output and "Worse: kappa dropped" in worse.output
        # The judge's verdicts are untouched: a re-check measures, it never changes a judge.
        with Session(db) as session:
            assert session.epoch_in_use("j") == figures["epoch_before"]
            assert len(session.verdicts("j")) == 80

        history = invoke(["recheck", str(db), "--judge", "j", "--history", "--format", "json"])
        looks = json.loads(history.stdout)
        assert [r["worse"] for r in looks["rechecks"]] == [False, True]
        bounds = [r["running_bound"] for r in looks["rechecks"]]
        assert bounds[0]["drop"] == pytest.approx(0.0)
        assert bounds[1]["drop"] == pytest.approx(12 / 80 / 2)  # over both re-checks
        assert all(b["lower"] < b["drop"] for b in bounds)
        table = invoke(["recheck", str(db), "--judge", "j", "--history"])
        assert "Re-checks of judge 'j'" in table.output and "No alarm." in table.output
        # The leaderboard names the epoch and the last re-check.
        board = json.loads(invoke(["judges", str(db), "--format", "json",
                                   "--bootstrap", "0"]).stdout)
        assert board["judges"][0]["last_recheck"]["worse"] is True
        assert any("(re-checked " in line and ": worse" in line for line in board["headline"])


def _alice(session: Session, text: str) -> int:
    for golden in session.goldens():
        for chunk in golden.chunks:
            if chunk.text == text:
                return session.labels("alice")[chunk.id].verdict  # type: ignore[return-value]
    raise AssertionError(text)


def test_the_canary_is_chosen_once_and_recheck_refuses_what_it_cannot_do(
        tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        assert invoke(["judge", str(db), "--model", "m", "--name", "j"], server).exit_code == 0
        first = invoke(["recheck", str(db), "--judge", "j", "--canary", "12"], server)
        assert first.exit_code == 0, first.output
        assert "The canary is chosen and frozen: 15 chunks of 3 goldens" in first.output
        with Session(db) as session:
            ids, how = session.canary()
            assert len(ids) == 15 and how is not None and how["asked"] == 12
        for args, said in (
                (["--canary", "30"], "The canary is frozen at 15 chunks"),
                (["--drop", "0.05"], "--drop sizes a canary: give --plan with it"),
                (["--plan"], "--plan needs --drop"),
                (["--plan", "--drop", "0.1", "--history"], "Give one of --plan")):
            result = invoke(["recheck", str(db), "--judge", "j", *args], server)
            assert result.exit_code == 2 and said in result.output, (args, result.output)
        with Session(db) as session:
            assert session.canary()[0] == ids  # unchanged
    never = invoke(["recheck", str(db), "--judge", "nobody", "--history"])
    assert never.exit_code == 2 and "no judge named 'nobody'" in never.output


def test_the_plan_sizes_a_canary_from_the_sessions_figures(tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        assert invoke(["judge", str(db), "--model", "m", "--name", "j"], server).exit_code == 0
    plan = json.loads(invoke(["recheck", str(db), "--plan", "--drop", "0.1",
                              "--format", "json"]).stdout)
    assert plan["labelled"] == 80 and 0 < plan["chunks"] < 2000
    assert plan["instability"] == 0.0 and "never run twice" in plan["instability_from"]
    larger = json.loads(invoke(["recheck", str(db), "--plan", "--drop", "0.05",
                                "--format", "json"]).stdout)
    assert larger["chunks"] > plan["chunks"]  # a smaller drop needs more chunks
    said = invoke(["recheck", str(db), "--plan", "--drop", "0.1"]).output
    assert f"A canary of {plan['chunks']:,} chunks finds a drop of 0.1" in said


def test_a_merge_keeps_each_judges_epochs_and_reads_the_same_epoch(tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        server.serving = lambda seen: ("gpt-x-0613", "fp_one" if seen <= SWITCH_AFTER
                                       else "fp_two")
        assert invoke(["judge", str(db), "--model", "gpt-x", "--name", "j", "--concurrency",
                       "1"], server).exit_code == 0
    other = tmp_path / "bob.db"
    assert invoke(["copy", str(db), str(other)]).exit_code == 0
    team = tmp_path / "team.db"
    assert invoke(["merge", str(db), str(other), "-o", str(team)]).exit_code == 0
    with Session(db) as one, Session(team) as merged:
        keys = ("epoch", "model", "fingerprint", "chunks")
        assert ([{k: e[k] for k in keys} for e in merged.judge_epochs("j")]
                == [{k: e[k] for k in keys} for e in one.judge_epochs("j")])
        assert merged.epoch_in_use("j") == one.epoch_in_use("j")
        assert ({(v.verdict, v.reason) for v in merged.verdicts("j").values()}
                == {(v.verdict, v.reason) for v in one.verdicts("j").values()})
        assert len(merged.verdicts("j")) == 80 - SWITCH_AFTER


def test_in_a_terminal_the_change_is_said_above_the_bar_while_the_run_waits(
        tmp_path: Path, place: str | Path) -> None:
    """Said at once: the note is on the screen while the run is held half-way, before any
    summary; then the run goes on and finishes."""
    from tests.terminal import Terminal
    from tests.waiting import PATIENCE

    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        server.serving = lambda seen: ("gpt-x-0613", "fp_one" if seen <= 5 else "fp_two")
        server.hold_after = 10  # requests past the tenth wait until let go
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
        with Terminal(["judge", str(db), "--model", "gpt-x", "--name", "j", "--concurrency",
                       "1"], env=env) as term:
            term.wait_for(rb"now serves judge 'j' as model gpt-x-0613, fingerprint fp_two",
                          timeout=PATIENCE)
            assert b"chunks judged" not in term.seen  # the run is still waiting
            server.let_go()
            assert term.finish(timeout=PATIENCE) == 0
        assert b"80 chunks judged" in term.seen and b"Traceback" not in term.seen


def test_a_listwise_judge_is_rechecked_a_request_a_golden_on_the_test_split(
        tmp_path: Path, place: str | Path) -> None:
    db = imported(tmp_path, place)
    with FakeOpenAI() as server:
        assert invoke(["judge", str(db), "--model", "m", "--prompt", "listwise", "--name", "lw"],
                      server).exit_code == 0
        assert invoke(["split", str(db), "--dev", "0.5", "--seed", "1"]).exit_code == 0
        sent = len(server.requests)
        result = invoke(["recheck", str(db), "--judge", "lw", "--format", "json"], server)
        assert result.exit_code == 0, result.output
        figures = json.loads(result.stdout)
        with Session(db) as session:
            test = [g for g, split in session.splits().items() if split == "test"]
        assert len(server.requests) - sent == len(test)  # one request a test golden
        assert figures["canary"]["from"] == "every labelled chunk of the test split"
        assert figures["chunks"] == 5 * len(test) and figures["kappa_drop"]["value"] == 0.0


def test_imported_verdicts_are_stored_under_their_judges_configured_epoch(
        tmp_path: Path) -> None:
    from tests.conftest import BANKING

    db = tmp_path / "b.db"
    assert invoke(["import", str(BANKING), "--session", str(db)]).exit_code == 0
    with Session(db) as session:
        (epoch,) = session.judge_epochs("sample-judge")
        newest = session.conn.execute("SELECT max(id) FROM verdicts").fetchone()[0]
        assert epoch["last_id"] == newest and epoch["fingerprint"] is None
        assert epoch["epoch"] == session.epoch_for("sample-judge", None, None)
        assert epoch["chunks"] == len(session.verdicts("sample-judge")) == session.count_chunks()
