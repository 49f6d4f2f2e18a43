"""What real OpenAI-compatible servers do, replayed on the test server: llama-cpp-python's
refusals (response format and logprobs, both as HTTP 500), llama-server's fenced logprobs, a
server that serves one request at a time. The recipe that checks the real servers themselves
is scripts/interop.sh."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace as T
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.judge.client import RESPONSE_FORMATS, p_relevant
from annotator.store.session import Session
from tests.fake_openai import FakeOpenAI
from tests.test_judge import cli_env, make_session, run


def tokens(*pieces: str, top: dict[str, float] | None = None) -> list[T]:
    """Logprob tokens; the lone digit token carries ``top`` as its alternatives."""
    out = []
    for piece in pieces:
        alternatives = [T(token=k, logprob=math.log(v)) for k, v in (top or {}).items()]
        out.append(T(token=piece, logprob=-0.01,
                     top_logprobs=alternatives if piece.strip() in "01" else []))
    return out


def test_p_relevant_comes_from_the_digit_token_when_the_tokens_keep_a_fence() -> None:
    # llama-server: the content has no fence, its logprob tokens do. An offset into the
    # content would land on 'erd' inside "verdict".
    stream = tokens("```json\n", '{"reason": "r", "', "verd", 'ict": ', "1", "}", "\n```",
                    top={"1": 0.7, "0": 0.1, " yes": 0.2})
    assert p_relevant(stream, 1) == pytest.approx(0.875)


def test_a_digit_token_with_a_space_or_a_brace_still_counts() -> None:
    stream = [T(token='{"verdict":', logprob=0, top_logprobs=[]),
              T(token=" 0}", logprob=0, top_logprobs=[T(token=" 0}", logprob=math.log(0.6)),
                                                     T(token=" 1}", logprob=math.log(0.2))])]
    assert p_relevant(stream, 0) == pytest.approx(0.25)


def test_no_confidence_rather_than_a_wrong_one() -> None:
    missing = tokens('{"reason": "the verdict is clear", "answer": ', "1", "}", top={"1": 0.9})
    assert p_relevant(missing, 1) == "the verdict's token was not found in the logprobs"
    disagree = tokens('{"reason": "r", "verdict": ', "0", "}", top={"0": 0.9, "1": 0.1})
    assert p_relevant(disagree, 1) == "the logprobs' verdict token disagrees with the reply's verdict"
    escaped = tokens('{"reason": "a \\"verdict\\": 1 in the text", "verdict": ', "0", "}",
                     top={"0": 0.8, "1": 0.2})
    assert p_relevant(escaped, 0) == pytest.approx(0.2)  # the key, not the quote in the reason


def test_fenced_logprobs_end_to_end_store_the_digit_tokens_confidence(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=8)
    with FakeOpenAI() as server:
        server.fenced, server.confidence = True, 0.8
        assert run(session, server).judged == 8
    for stored in session.verdicts("test-judge").values():
        assert stored.p_relevant == pytest.approx(0.8 if stored.verdict == 1 else 0.2)
    assert session.confidence_gaps("test-judge") == {}


def test_llama_cpp_pythons_format_refusal_walks_down_to_the_format_it_takes(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=8)
    with FakeOpenAI() as server:
        server.formats = {"json_object_schema"}  # HTTP 500 "Input should be 'text' or 'json_object'"
        stats = run(session, server, concurrency=4, max_retries=0)
        assert stats.judged == 8 and stats.gave_up == 0
        assert stats.response_format == "json_object_schema"
        sent = [body.get("response_format", {}).get("type") for _, body, _ in server.requests]
        assert sent[0] == "json_schema"
        assert [b["response_format"] for _, b, _ in server.requests[-8:]] == [
            {"type": "json_object", "schema": b["response_format"]["schema"]}
            for _, b, _ in server.requests[-8:]]
        # The next run starts from what worked: not one refused request.
        before = len(server.requests)
        session.db.conn.execute("DELETE FROM verdicts WHERE error IS NULL")
        session.db.conn.commit()
        again = run(session, server, concurrency=4, max_retries=0)
        assert again.judged == 8 and len(server.requests) - before == 8
    assert session.judge_transport("test-judge") == {"response_format": "json_object_schema",
                                                     "logprobs": True}


def test_a_server_that_takes_no_response_format_at_all_still_judges(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=4)
    with FakeOpenAI() as server:
        server.formats = {"none"}
        stats = run(session, server, concurrency=1, max_retries=0)
    assert stats.judged == 4 and stats.response_format == RESPONSE_FORMATS[-1]
    assert len(stats.refused) == 3


def test_a_500_naming_logprobs_is_retried_once_without_them(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=8)
    with FakeOpenAI() as server:
        server.logprobs_refusal = 500
        stats = run(session, server, concurrency=1, max_retries=0)
        asked = [bool(body.get("logprobs")) for _, body, _ in server.requests]
    assert stats.judged == 8 and not stats.logprobs
    assert asked == [True] + [False] * 8  # one refusal, then never asked again
    assert stats.refused == ["the server refused logprobs; asking without them (no P(relevant))"]
    assert all(v.p_relevant is None for v in session.verdicts("test-judge").values())


def test_the_cli_summary_says_which_format_is_in_use(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    make_session(tmp_path, chunks=4).close()
    with FakeOpenAI() as server:
        server.formats, server.logprobs_refusal = {"json_object_schema"}, 500
        result = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--concurrency", "1"],
                                    env=cli_env(server))
    assert result.exit_code == 0, result.output
    assert "4 chunks judged" in result.stdout
    assert "Note: the server refused json_schema; now asking with json_object_schema." in result.stdout
    assert ("Replies are asked for with JSON mode with a schema (json_object + schema), without "
            "logprobs") in result.stdout


def test_verdicts_without_confidence_say_why(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=4)
    with FakeOpenAI() as server:
        # The logprobs' digit says the opposite of the reply's verdict: no P stored.
        def lying(reply: dict[str, Any], verdict: int) -> None:
            for token in reply["choices"][0]["logprobs"]["content"]:
                if token["token"] in "01":
                    token["token"] = "1" if token["token"] == "0" else "0"

        server.rewrite = lying
        assert run(session, server).judged == 4
    assert all(v.p_relevant is None for v in session.verdicts("test-judge").values())
    assert session.confidence_gaps("test-judge") == {
        "the logprobs' verdict token disagrees with the reply's verdict": 4}


@pytest.mark.parametrize(("serial", "warned", "cold"), [(True, True, 0.0), (False, False, 0.0),
                                                        (True, True, 1.0), (False, False, 1.0)])
def test_a_one_at_a_time_server_is_named(tmp_path: Path, serial: bool, warned: bool,
                                         cold: float) -> None:
    session = make_session(tmp_path, chunks=12)
    with FakeOpenAI(latency=0.08) as server:
        server.serial = serial
        server.cold = cold  # a first call that loads the model: measured warm all the same
        stats = run(session, server, concurrency=4, timeout=10.0)
    assert stats.judged == 12
    assert bool(stats.warnings) is warned
    spans = sorted(server.spans)
    # Two calls alone (the faster is the warm latency), three (and the one still out) two at
    # a time; then one at a time for a serial server.
    overlapping = max(sum(1 for a, b in spans if a < end and b > start) for start, end in spans[6:])
    if warned:
        assert "serves one request at a time" in stats.warnings[0]
        assert "--concurrency 1" in stats.warnings[0]
        assert overlapping == 1
    else:
        assert overlapping > 2  # the rest went four at a time


def test_the_report_says_how_many_verdicts_carry_no_confidence_and_why(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=8)
    with FakeOpenAI() as server:
        def no_logprobs_on_noise(reply: dict[str, Any], verdict: int) -> None:
            if verdict == 0:
                reply["choices"][0].pop("logprobs")

        server.rewrite = no_logprobs_on_noise
        assert run(session, server).judged == 8
    for chunk_id, stored in session.verdicts("test-judge").items():
        session.decide("ann", chunk_id, stored.verdict, "accept", judge="test-judge")
    session.close()
    out = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format", "json",
                                   "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["confidence_gaps"] == {"the reply carried no logprobs": 4}
    table = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--bootstrap", "0"])
    assert "4 of the judge's verdicts carry no P(relevant)" in table.stdout
    assert "4 because the reply carried no logprobs" in table.stdout


def test_a_refused_connection_is_summarised_with_the_url_and_what_to_check(tmp_path: Path) -> None:
    import socket

    make_session(tmp_path, chunks=4).close()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = CliRunner().invoke(cli, ["judge", str(tmp_path / "s.db"), "--model", "m",
                                      "--base-url", url, "--max-retries", "1"],
                                env={"OPENAI_API_KEY": "sk-test"})
    # A refused connection is hopeless: the run stops at once, exits 2, and keeps no judge.
    assert result.exit_code == 2
    assert ("Stopped after 3 calls failed the same way, before any verdict: connection failed "
            f"to {url}/ (APIConnectionError): check that the server is running and that "
            "--base-url is right. Nothing was stored (the judge is not kept).") in result.stderr
    with Session(tmp_path / "s.db") as session:
        assert session.judges() == [] and session.calls("m-builtin") == []


def test_a_refused_response_format_is_a_step_not_a_failed_call(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=8)
    with FakeOpenAI() as server:
        server.formats = {"json_object_schema", "json_object", "none"}  # llama-cpp-python's
        result = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake",
                                          "--concurrency", "1"], env=cli_env(server))
    assert result.exit_code == 0, result.output
    assert "8 chunks judged" in result.stdout and "0 failed calls" in result.stdout
    assert "overloaded" not in result.output
    assert "refused json_schema; now asking with json_object_schema" in result.output
    assert all(c["error"] is None for c in session.calls("fake-builtin"))  # nothing stored


def _template_drops_system(body: dict[str, Any], text: str) -> int:
    """A model behind a chat template that drops system messages: without the instructions it
    calls every chunk noise."""
    read = " ".join(m["content"] for m in body["messages"] if m["role"] != "system")
    return int("useful" in text) if "You grade the chunks" in read else 0


def test_every_chunk_judged_alike_suggests_system_as_user_which_mends_it(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=12)
    with FakeOpenAI() as server:
        server.decide = _template_drops_system
        plain = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake",
                                         "--name", "plain"], env=cli_env(server))
        assert plain.exit_code == 0, plain.output
        assert "called all 12 chunks it judged noise" in plain.output
        assert "try --system-as-user" in plain.output
        mended = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake",
                                          "--name", "mended", "--system-as-user"],
                                    env=cli_env(server))
        assert mended.exit_code == 0, mended.output
        assert "called all" not in mended.output
        last = server.requests[-1][1]["messages"]
    assert [m["role"] for m in last] == ["user"] and last[0]["content"].startswith("You grade")
    assert {v.verdict for v in session.verdicts("mended").values()} == {0, 1}
    [judge] = [j for j in session.judges() if j.name == "mended"]
    assert judge.parameters.get("system_as_user") is True  # part of the judge's definition


def test_a_call_timed_out_two_at_once_means_one_at_a_time(tmp_path: Path) -> None:
    session = make_session(tmp_path, chunks=10)
    with FakeOpenAI(latency=0.4) as server:
        server.serial = True  # two at once: the second waits 0.4 s behind the first
        stats = run(session, server, concurrency=4, timeout=0.6, max_retries=4)
        spans = sorted(server.spans)
    assert any("a call two at once ran past its timeout" in w for w in stats.warnings)
    # Once it said so, the rest went one at a time (a timed-out request may still be served).
    late = spans[-3:]
    assert all(not (a < end and b > start) for i, (start, end) in enumerate(late)
               for a, b in late[i + 1:])
    assert stats.judged >= 6


def test_the_timeout_fits_the_endpoint_unless_one_is_given() -> None:
    from annotator.judge.runner import RunStats, _Pace

    pace = _Pace(4, RunStats())
    assert pace.timeout(None) == _Pace.COLD_TIMEOUT_S  # before any call: a model may load
    assert pace.timeout(7.0) == 7.0
    pace.solo = [56.0, 16.0]  # a cold first call, then a warm one
    assert pace.alone == 16.0
    assert pace.timeout(None) == 80.0  # five times the slowest warm call
    pace.solo = [0.9, 0.2]
    assert pace.timeout(None) == _Pace.MIN_TIMEOUT_S
