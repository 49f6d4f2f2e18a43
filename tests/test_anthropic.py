"""Judging through Anthropic's own Messages and Message Batches APIs: the real ``anthropic``
client against tests/fake_anthropic.py, which speaks that protocol on 127.0.0.1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from annotator.cli import cli
from annotator.store.session import Session
from tests.fake_anthropic import FakeAnthropic
from tests.test_align import FIX, decide, revising
from tests.test_align import goldens as align_goldens
from tests.test_batch import make_session

KEY = "sk-ant-test-0123456789"


def invoke(*args: str, key: str | None = KEY) -> Result:
    env = {"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": None, "OPENAI_BASE_URL": None,
           "ANTHROPIC_BASE_URL": None}
    return CliRunner().invoke(cli, list(args), env=env)


def judge(db: Path, server: FakeAnthropic, *extra: str, key: str | None = KEY) -> Result:
    return invoke("judge", str(db), "--provider", "anthropic", "--model", "claude-test",
                  "--base-url", server.base_url, "--name", "claude", "--max-retries", "2",
                  "--concurrency", "4", *extra, key=key)


def calls(db: Path) -> list[tuple[int, int | None, str | None, float | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT chunk_id, verdict, error, p_relevant FROM verdicts "
                            "WHERE judge = 'claude' ORDER BY id").fetchall()


def truth(db: Path) -> dict[int, int]:
    """What a healthy judge answers: 1 for a chunk whose text says useful."""
    with Session(db) as session:
        return {c.id: int("useful" in c.text) for g in session.goldens() for c in g.chunks}


def in_force(db: Path) -> dict[int, int]:
    return {chunk: verdict for chunk, verdict, error, _ in calls(db) if error is None
            and verdict is not None}


def test_a_live_run_speaks_the_messages_api_and_stores_the_provider(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=6)
    with FakeAnthropic() as server:
        server.key = KEY  # any other key is refused
        result = judge(db, server)
        assert result.exit_code == 0, result.output
        body, headers = server.requests[0]
        sent = len(server.requests)
        # Run again: every chunk is judged already, nothing is sent.
        again = judge(db, server)
        assert again.exit_code == 0, again.output
        assert len(server.requests) == sent and "24 already judged" in again.output
    assert in_force(db) == truth(db)
    assert "24 chunks judged" in result.output
    # Anthropic's protocol: its key header and version, the system text apart, the reply's
    # schema as a forced tool; no logprobs (none are asked for, none stored).
    assert KEY in (headers.get("x-api-key"), headers.get("authorization", "")[len("Bearer "):])
    assert headers["anthropic-version"]
    assert body["system"].startswith("You") and all(m["role"] != "system"
                                                    for m in body["messages"])
    assert body["tool_choice"] == {"type": "tool", "name": "chunk_verdict"}
    assert body["tools"][0]["input_schema"]["required"] == ["reason", "verdict"]
    assert "logprobs" not in body and "response_format" not in body
    assert all(p is None for *_, p in calls(db))
    with Session(db) as session:
        [stored] = session.judges()
        summary = session.call_summary("claude")
    assert stored.parameters["provider"] == "anthropic" and stored.base_url == server.base_url
    assert summary["tokens_in"] > 0 and summary["tokens_out"] > 0
    assert KEY.encode() not in db.read_bytes()  # the key is never stored


def test_rate_limits_and_overload_are_waited_out_and_retried(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=2)
    with FakeAnthropic() as server:
        server.plan["chunk 0.1 useful"] = ["429", "529"]
        server.plan["chunk 1.0 useful"] = ["500"]
        result = judge(db, server)
        assert result.exit_code == 0, result.output
    assert in_force(db) == truth(db)
    errors = [e for _, _, e, _ in calls(db) if e]
    assert sorted(e.split(":")[0] for e in errors) == ["HTTP 429", "HTTP 500", "HTTP 529"]
    assert "Number of request tokens has exceeded your rate limit" in " ".join(errors)


def test_a_wrong_key_stops_at_once_naming_the_providers_variable(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=6)
    with FakeAnthropic() as server:
        server.key = "sk-ant-the-right-one"
        result = judge(db, server)
        sent = len(server.hits)
    assert result.exit_code != 0
    assert "check ANTHROPIC_API_KEY: this server refused it" in result.output
    assert "Traceback" not in result.output
    assert sent < 24  # stopped, not every chunk tried


def test_a_missing_key_is_a_sentence_naming_its_variable_and_sends_nothing(
        tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=2)
    before = db.read_bytes()
    result = invoke("judge", str(db), "--provider", "anthropic", "--model", "claude-test",
                    key=None)
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY is not set" in result.output and "Traceback" not in result.output
    assert db.read_bytes() == before


def test_a_refused_tool_choice_steps_down_to_the_prompt_alone(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=2)
    with FakeAnthropic() as server:
        server.plan["chunk 0.0 noise"] = ["no_tools"]
        result = judge(db, server, "--concurrency", "1")
        bodies = [b for b, _ in server.requests]
    assert result.exit_code == 0, result.output
    assert in_force(db) == truth(db)
    assert "the server refused tool; now asking with none" in result.output
    assert "tools" in bodies[0] and "tools" not in bodies[-1]
    with Session(db) as session:
        assert session.judge_transport("claude") == {"response_format": "none",
                                                     "logprobs": False}


@pytest.mark.parametrize(("behaviour", "said"), [
    ("malformed", "verdict"),
    ("truncated", "the reply was cut off at the token limit"),
    ("html_page", "the server answered with an HTML page, not a message"),
])
def test_a_reply_without_a_verdict_is_an_error_kept_with_its_cause(
        tmp_path: Path, behaviour: str, said: str) -> None:
    db = make_session(tmp_path, goldens=1)
    with FakeAnthropic() as server:
        server.plan["chunk 0.1 useful"] = [behaviour]
        result = judge(db, server, "--temperature", "0.5")
    assert result.exit_code == 0, result.output
    errors = [e for _, _, e, _ in calls(db) if e]
    assert len(errors) == 1 and said in errors[0]
    assert in_force(db) == truth(db)  # asked again, answered


def test_a_batch_round_with_failed_requests_resubmits_them_and_matches_a_live_run(
        tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=5)
    live = make_session(tmp_path, goldens=5, name="live")
    with FakeAnthropic() as server:
        assert judge(live, server).exit_code == 0
        server.plan["chunk 0.1 useful"] = ["500"]  # errored in the batch
        server.expire = {"r1-3-1-0"}  # its request expires
        made = judge(db, server, "--batch")
        assert made.exit_code == 0, made.output
        assert "Created 1 batch for 20 chunks" in made.output
        followed = invoke("batches", str(db), "--wait", "--poll", "0.01")
        assert followed.exit_code == 0, followed.output
        assert "19 calls stored this time" in followed.output
        assert len(in_force(db)) == 18  # one errored, one expired
        again = judge(db, server, "--batch")
        assert "Created 1 batch for 2 chunks" in again.output, again.output
        assert invoke("batches", str(db), "--wait", "--poll", "0.01").exit_code == 0
        [first, second] = [server.batch_requests[b] for b in server.batches]
    assert len(first) == 20 and len(second) == 2
    assert first[0]["params"]["tool_choice"]["type"] == "tool"
    assert in_force(db) == in_force(live) == truth(db)
    errors = [e for _, _, e, _ in calls(db) if e]
    assert errors == ["HTTP 500: Internal server error"]  # the expired one never ran
    with Session(db) as session:
        assert {b["state"] for b in session.batches()} == {"completed"}


def test_a_batch_can_be_cancelled_and_keeps_nothing_it_did_not_finish(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=2)
    with FakeAnthropic() as server:
        server.polls_to_end = 100
        assert judge(db, server, "--batch").exit_code == 0
        cancelled = invoke("batches", str(db), "--cancel")
        assert cancelled.exit_code == 0, cancelled.output
        assert "Cancelling 1 batch of 'claude'" in cancelled.output
    with Session(db) as session:
        [batch] = session.batches()
    assert batch["state"] == "cancelled" and batch["collected"]
    assert calls(db) == []


def test_a_dry_run_counts_and_costs_and_sends_nothing(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=5)
    before = db.read_bytes()
    with FakeAnthropic() as server:
        result = judge(db, server, "--dry-run", "--price-in", "1", "--price-out", "5")
        batch = judge(db, server, "--dry-run", "--batch", "--price-in", "1", "--price-out", "5")
        assert not server.hits
    assert result.exit_code == 0 and batch.exit_code == 0, result.output + batch.output
    rows = dict(line.split(None, 1) for line in result.output.splitlines()
                if line.startswith(("calls", "cost")))
    assert rows["calls"].startswith("20 for 20 chunks")
    assert "about 4 characters a token" in result.output
    live_cost = float(rows["cost"].strip().lstrip("$"))
    batch_cost = float(next(line for line in batch.output.splitlines()
                            if line.startswith("cost")).split("$")[1])
    assert live_cost > 0 and batch_cost == pytest.approx(live_cost / 2, abs=1e-4)
    assert db.read_bytes() == before


def test_export_requests_is_refused_for_a_provider_that_batches_itself(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=1)
    with FakeAnthropic() as server:
        result = judge(db, server, "--export-requests", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2 and "give --batch" in result.output
    assert not (tmp_path / "r.jsonl").exists()


def test_align_asks_its_optimizer_and_judges_its_candidates_through_anthropic(
        tmp_path: Path) -> None:
    from tests.conftest import write_lines

    db = tmp_path / "team.db"
    path = write_lines(tmp_path / "g.jsonl", align_goldens())
    assert invoke("import", str(path), "--session", str(db)).exit_code == 0
    assert invoke("split", str(db), "--dev", "0.5", "--seed", "1").exit_code == 0
    with FakeAnthropic() as server:
        server.decide = decide
        made = invoke("judge", str(db), "--provider", "anthropic", "--model", "judge-model",
                      "--base-url", server.base_url, "--name", "base")
        assert made.exit_code == 0, made.output
        server.optimize = revising(FIX)
        result = invoke("align", str(db), "--judge", "base", "--optimizer-model", "opt-model",
                        "--base-url", server.base_url, "--bootstrap", "400",
                        "--candidates", "2")
        assert result.exit_code == 0, result.output
        optimizer_bodies: list[dict[str, Any]] = server.optimizer_requests
    assert "Registered as judge 'base-aligned-1'" in result.output
    assert optimizer_bodies and all(b["model"] == "opt-model" and "tools" in b
                                    and b["tool_choice"]["name"] == "prompt_revision"
                                    for b in optimizer_bodies)
    with Session(db) as session:
        judges = {j.name: j for j in session.judges()}
    assert judges["base-aligned-1"].parameters["provider"] == "anthropic"


def test_the_anthropic_reply_reader_never_raises_on_odd_bodies() -> None:
    from annotator.judge.anthropic_messages import AnthropicMessages, as_batch_result

    read = AnthropicMessages.completion
    odd: Any
    for odd in ([], None, "x", {"type": "message"}, {"type": "message", "content": "no"},
                {"type": "message", "content": [None, {"type": "tool_use", "input": []}]},
                {"type": "message", "content": [], "usage": {"input_tokens": True}}):
        assert isinstance(read(odd), str) or read(odd).content is None  # type: ignore[union-attr]
    done = read({"type": "message", "content": [{"type": "text", "text": '{"verdict": 1}'}],
                 "stop_reason": "max_tokens", "model": "m",
                 "usage": {"input_tokens": 10, "cache_read_input_tokens": 90,
                           "output_tokens": 3}})
    assert not isinstance(done, str)
    assert (done.content, done.finish_reason, done.tokens_in, done.tokens_cached,
            done.tokens_out, done.model) == ('{"verdict": 1}', "length", 100, 90, 3, "m")
    assert json.loads(as_batch_result(b'{"custom_id": "a", "result": {"type": "expired"}}')
                      )["error"]["code"] == "expired"
    assert as_batch_result(b"not json") == b"not json"


def test_every_provider_is_a_choice_of_the_commands_that_take_one() -> None:
    import click

    from annotator.judge.providers import PROVIDERS
    from annotator.judge.transport import provider_of

    for command, option in (("judge", "provider"), ("align", "optimizer_provider")):
        [param] = [p for p in cli.commands[command].params if p.name == option]
        assert isinstance(param.type, click.Choice) and list(param.type.choices) == list(PROVIDERS)
    assert all(provider_of(name).provider == name for name in PROVIDERS)
