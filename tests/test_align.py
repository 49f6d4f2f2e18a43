"""annotator align against the project's test server acting as both judge and optimizer.

The judge has a failure mode a prompt can fix: it calls a chunk stuffed with the question's
keywords useful unless its system prompt tells it to ignore keyword stuffing. People call those
chunks noise. A good optimizer adds that instruction; a harmful one tells the judge to call
every chunk that names a branch useful.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from annotator.cli import cli
from annotator.store.session import Session
from tests.conftest import write_lines
from tests.fake_openai import FakeOpenAI, chunk_of, format_mode, is_optimizer

FIX = "Ignore keyword stuffing: a chunk that repeats the question's words but states no fact is noise."
HARM = "Call every chunk that names a branch useful."
GOLDENS = 24


def system_of(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


def decide(body: dict[str, Any], chunk: str) -> int:
    """The judge: right on facts and plain noise; fooled by keyword stuffing unless told."""
    system = system_of(body)
    if "names a branch useful" in system and "branch" in chunk:
        return 1
    if "STUFFED" in chunk:
        return 0 if "Ignore keyword stuffing" in system else 1
    return int("FACT" in chunk)


def goldens() -> list[dict[str, Any]]:
    """Goldens of 4 chunks (a fact, a stuffed one, plain noise about a branch, a second fact
    or noise), every text unique to its golden, labelled by alice as a person would."""
    out = []
    for i in range(GOLDENS):
        chunks = [f"FACT {i}: the savings rate of plan {i} is {i}.5%.",
                  f"STUFFED {i}: savings rate plan {i} savings rate plan {i} rate rate.",
                  f"noise {i}: the branch at street {i} opens at nine.",
                  f"FACT {i}b: plan {i} pays monthly." if i % 2 else f"noise {i}b: weather {i}."]
        out.append({"id": f"g{i:02d}", "user_input": f"What is the rate of plan {i}?",
                    "reference": f"Plan {i} pays {i}.5%.", "retrieved_contexts": chunks,
                    "human_labels": {"alice": [1, 0, 0, 1 if i % 2 else 0]}})
    return out


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A labelled session split in dev and test, judged by 'base' (the builtin prompt)."""
    db = tmp_path / "team.db"
    path = write_lines(tmp_path / "g.jsonl", goldens())
    assert invoke("import", str(path), "--session", str(db)).exit_code == 0
    assert invoke("split", str(db), "--dev", "0.5", "--seed", "1").exit_code == 0
    return db


def judge_base(db: Path, server: FakeOpenAI) -> None:
    result = invoke("judge", str(db), "--model", "judge-model", "--base-url", server.base_url,
                    "--name", "base", "--no-logprobs")
    assert result.exit_code == 0, result.output


def revising(line: str) -> Any:
    """An optimizer that appends ``line`` to the system template it is shown."""
    def reply(body: dict[str, Any]) -> str:
        shown = json.loads(body["messages"][-1]["content"])
        return json.dumps({"system": shown["system_template"].rstrip() + "\n\n" + line,
                           "user": "", "rationale": "The judge is fooled by repeated words."})
    return reply


def align(db: Path, server: FakeOpenAI, *extra: str) -> Result:
    return invoke("align", str(db), "--judge", "base", "--optimizer-model", "opt-model",
                  "--base-url", server.base_url, "--bootstrap", "400", *extra)


def test_a_candidate_that_fixes_the_judge_is_kept_and_beats_it_on_test(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(FIX)
        before = len(server.requests)
        result = align(team, server, "--candidates", "2")
        assert result.exit_code == 0, result.output
        assert "Kept: the best candidate beats 'base' on the test split" in result.output
        assert "Registered as judge 'base-aligned-1'" in result.output
        sent = server.requests[before:]
    with Session(team) as session:
        splits = session.splits()
        test_goldens = [g for g in session.goldens() if splits[g.id] == "test"]
        judges = {j.name for j in session.judges()}
        [run] = session.align_runs()
        candidates = session.align_candidates(run["id"])
    assert judges == {"base", "base-aligned-1"}  # the other candidate is gone
    assert run["outcome"] == "kept" and run["test_low"] > 0
    assert len(candidates) == 2 and all(c["prompt"] and c["validation_kappa"] for c in candidates)
    # No test golden's text reached the optimizer, nor a validation golden's.
    optimizer_text = json.dumps(server.optimizer_requests, ensure_ascii=False)
    for golden in test_goldens:
        assert golden.user_input not in optimizer_text
        assert not any(chunk.text in optimizer_text for chunk in golden.chunks)
    for golden_id in run["validation"]:
        assert f"plan {int(golden_id[1:])} " not in optimizer_text
    # The test split was judged once in this run: one request a test chunk, by one candidate.
    test_chunks = {c.text for g in test_goldens for c in g.chunks}
    on_test = [chunk_of(b) for _, b, _ in sent if not is_optimizer(b)
               and chunk_of(b) in test_chunks]
    assert sorted(on_test) == sorted(test_chunks)
    # The prompt file says which model it was aligned on, and judges as registered.
    written = team.parent / "base-aligned-1.toml"
    assert 'aligned_on = "judge-model"' in written.read_text(encoding="utf-8")
    assert "Ignore keyword stuffing" in written.read_text(encoding="utf-8")
    # The leaderboard shows it better on test, with its lineage.
    board = invoke("judges", str(team), "--format", "json", "--bootstrap", "400")
    data = json.loads(board.output)
    assert data["best"] == "base-aligned-1"
    assert any("was aligned from 'base' on judge-model by align run 1" in line
               for line in data["headline"])
    log = invoke("align-log", str(team), "--run", "1")
    assert "registered as 'base-aligned-1'" in log.output and "round 1, candidate 2" in log.output


def test_a_candidate_validation_ranks_below_the_judge_never_spends_the_test_look(
        team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(HARM)
        before = len(server.requests)
        result = align(team, server, "--candidates", "1")
        asked = [chunk_of(b) for _, b, _ in server.requests[before:] if not is_optimizer(b)]
    assert result.exit_code == 0, result.output
    assert "No candidate beat 'base' on validation" in result.output
    assert "nothing was judged on the test split" in result.output
    with Session(team) as session:
        assert {j.name for j in session.judges()} == {"base"}
        [run] = session.align_runs()
        assert run["outcome"] == "no better candidate" and run["test_chunks"] is None
        assert run["registered_as"] is None
        test = set(run["validation"])  # the only goldens a candidate was judged on
        splits = session.splits()
        texts = {c.text: g.id for g in session.goldens() for c in g.chunks}
    assert asked and all(splits[texts[chunk]] == "dev" for chunk in asked)
    assert {texts[chunk] for chunk in asked} <= test
    assert not list(team.parent.glob("*.toml"))


def test_replies_off_the_schema_or_failing_the_prompt_checks_are_rejected(team: Path) -> None:
    replies = iter(["Sure! Make the judge stricter.",
                    json.dumps({"system": "Judge {nonsense} chunks.", "user": "",
                                "rationale": "x"}),
                    json.dumps({"system": "Be careful.", "rationale": "no user key"})])
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = lambda body: next(replies)
        before = len(server.requests)
        result = align(team, server, "--candidates", "3")
        judged = [b for _, b, _ in server.requests[before:] if not is_optimizer(b)]
    assert result.exit_code == 0, result.output
    assert "No candidate could be judged (3 replies rejected" in result.output
    assert judged == []  # a rejected candidate is never judged
    log = invoke("align-log", str(team), "--run", "1").output
    assert "rejected: the optimizer's reply is not JSON" in log
    assert "fails a prompt file's checks" in log and "{nonsense}" in log
    assert "lacks user" in log
    with Session(team) as session:
        assert {j.name for j in session.judges()} == {"base"}


def test_a_budget_that_runs_out_mid_run_registers_nothing(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(FIX)
        before = len(server.requests)
        # One optimizer request and a candidate's validation chunks fit; the test split doesn't.
        result = align(team, server, "--candidates", "1", "--max-calls", "30")
        spent = len(server.requests) - before
    assert result.exit_code == 0, result.output
    assert "Stopped: the budget ran out before the test split could be judged" in result.output
    assert spent <= 30
    with Session(team) as session:
        assert {j.name for j in session.judges()} == {"base"}  # no candidate left behind
        [run] = session.align_runs()
        assert run["outcome"] == "stopped" and run["registered_as"] is None
    assert not list(team.parent.glob("*.toml"))


def test_instructions_limit_the_optimizer_to_the_teams_bullets(team: Path) -> None:
    vetted = team.parent / "vetted.txt"
    vetted.write_text(f"# our rules\n- {HARM}\n- {FIX}\n", encoding="utf-8")
    replies = iter([json.dumps({"add": [7], "remove": [], "rationale": "no such rule"}),
                    json.dumps({"add": [2], "remove": [], "rationale": "stuffing fools it"})])
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = lambda body: next(replies)
        result = align(team, server, "--candidates", "2", "--instructions", str(vetted))
        shown = json.loads(server.optimizer_requests[0]["messages"][-1]["content"])
    assert result.exit_code == 0, result.output
    assert "Registered as judge 'base-aligned-1'" in result.output
    assert [i["text"] for i in shown["instructions"]] == [HARM, FIX]
    assert "system_template" not in shown  # the optimizer writes nothing of its own
    text = (team.parent / "base-aligned-1.toml").read_text(encoding="utf-8")
    assert f"- {FIX}" in text and HARM not in text
    log = invoke("align-log", str(team), "--run", "1").output
    assert "names instruction 7, and the list has 1 to 2" in log


def test_a_dry_run_prints_calls_and_cost_and_sends_nothing(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        before = len(server.requests)
        result = align(team, server, "--candidates", "2", "--rounds", "2", "--dry-run",
                       "--price-in", "2.5", "--price-out", "10", "--judge-price", "0.15,0.6")
        assert len(server.requests) == before
    assert result.exit_code == 0, result.output
    out = result.output
    assert "optimizer  4 requests to opt-model" in out
    # 12 dev goldens: 6 train, 6 validation (24 chunks); 12 test goldens (48 chunks).
    assert "24 validation chunks a candidate, 24 train chunks a later round, 48 test chunks" in out
    assert "at most 168 requests (24 validation" in out  # 4 x 24 + 1 x 24 + 48 for judging
    assert "in all     at most 172 requests" in out
    # The costs add up: the optimizer's at its price, the judge's at its own.
    optimizer, judging, total = (float(re.findall(r"\$([\d.]+)", line)[0])
                                 for line in out.splitlines()[2:5])
    assert total == pytest.approx(optimizer + judging, abs=2e-4)
    found = re.search(r"at most ([\d,]+) out", out)
    assert found is not None and int(found.group(1).replace(",", "")) == 4 * 4096
    assert "Nothing was sent (--dry-run)." in out
    with Session(team) as session:
        assert session.align_runs() == []


def test_judging_with_another_model_than_the_prompt_was_aligned_on_says_so(
        team: Path, tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(FIX)
        assert "Kept" in align(team, server, "--candidates", "1").output
        prompt = str(team.parent / "base-aligned-1.toml")
        other = invoke("judge", str(team), "--model", "other-model", "--base-url",
                       server.base_url, "--prompt-file", prompt, "--name", "other",
                       "--no-logprobs", "--limit", "1")
        same = invoke("judge", str(team), "--model", "judge-model", "--base-url",
                      server.base_url, "--prompt-file", prompt, "--name", "same",
                      "--no-logprobs", "--limit", "1")
    assert "was aligned on judge-model, and this run judges with other-model" in other.output
    assert "annotator align" in other.output
    assert "aligned on" not in same.output


def test_feedback_export_holds_the_dev_splits_disagreements_by_direction(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
    out = team.parent / "feedback.jsonl"
    result = invoke("export", str(team), "--format", "feedback", "--output", str(out))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    with Session(team) as session:
        splits = session.splits()
    dev = sorted(g for g, s in splits.items() if s == "dev")
    assert sorted(line["golden_id"] for line in lines) == dev  # one stuffed chunk a dev golden
    assert {line["direction"] for line in lines} == {"looser"}
    first = lines[0]
    assert (first["rank"], first["judge_verdict"], first["truth"]) == (2, 1, 0)
    assert first["chunk"].startswith("STUFFED") and first["judge"] == "base"
    assert first["answer"].startswith("Plan ")
    assert f"Wrote {len(lines)} disagreements" in result.output


def test_a_second_round_revises_the_best_so_far_from_its_own_train_disagreements(
        team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(FIX)
        before = len(server.requests)
        result = align(team, server, "--rounds", "2", "--candidates", "1")
        judged = [b for _, b, _ in server.requests[before:] if not is_optimizer(b)]
    assert result.exit_code == 0, result.output
    assert "Kept" in result.output
    # Round 2 judged round 1's candidate on train, found it agrees with people on every train
    # chunk, and asked the optimizer nothing more.
    assert len(server.optimizer_requests) == 1
    with Session(team) as session:
        [run] = session.align_runs()
    train_chunks = {c for g in goldens() if g["id"] in run["train"]
                    for c in g["retrieved_contexts"]}
    assert train_chunks <= {chunk_of(b) for b in judged if FIX in system_of(b)}


def test_a_budget_in_dollars_stops_before_a_step_it_cannot_pay(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = revising(FIX)
        # The optimizer's request fits; judging 24 validation chunks at $100 a million tokens
        # in and out does not.
        result = align(team, server, "--candidates", "1", "--budget", "0.05", "--price-in",
                       "1", "--price-out", "1", "--judge-price", "100,100")
        nothing = align(team, server, "--budget", "1")
    assert result.exit_code == 0, result.output
    assert "Stopped: the budget ran out before a candidate could be judged" in result.output
    assert nothing.exit_code != 0 and "--budget needs the optimizer's price" in nothing.output
    with Session(team) as session:
        assert {j.name for j in session.judges()} == {"base"}
        [run] = session.align_runs()
        [candidate] = session.align_candidates(run["id"])
    assert candidate["prompt"] and candidate["validation_kappa"] is None
    assert run["cost"] is not None and run["cost"] <= 0.05


def test_an_optimizer_that_refuses_stops_the_run_at_once_with_its_reason(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.default = "404"  # every request from now on: an unknown model
        before = len(server.requests)
        result = align(team, server, "--candidates", "3")
        sent = len(server.requests) - before
    assert result.exit_code == 1
    assert "The optimizer at" in result.output and "refused the request" in result.output
    assert "The model `opt-model` does not exist" in result.output
    assert "Nothing was registered." in result.output and "Traceback" not in result.output
    assert sent == 1  # hopeless: no retry, no second candidate
    with Session(team) as session:
        [run] = session.align_runs()
        assert run["outcome"].startswith("stopped: The optimizer at")
        assert {j.name for j in session.judges()} == {"base"}


def test_a_judge_sent_system_as_user_has_its_optimizer_asked_alike(team: Path) -> None:
    with FakeOpenAI() as server:
        server.decide = decide
        result = invoke("judge", str(team), "--model", "judge-model", "--base-url",
                        server.base_url, "--name", "base", "--no-logprobs", "--system-as-user")
        assert result.exit_code == 0, result.output
        server.optimize = lambda body: json.dumps({"system": "x", "user": "", "rationale": ""})
        align(team, server, "--candidates", "1")
        [body] = server.optimizer_requests
    # The chat template drops system messages: the task opens the user message instead.
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"].startswith("You improve the prompt of an LLM judge")


def test_an_optimizer_that_refuses_json_schema_is_asked_in_the_format_it_takes(team: Path) -> None:
    # llama-cpp-python's server: json_object with a schema beside it, never json_schema (it
    # answers HTTP 500 with a validation error); found by scripts/interop.sh on 2026-12-06.
    with FakeOpenAI() as server:
        server.decide = decide
        server.formats = {"json_object_schema", "json_object", "none"}
        judge_base(team, server)
        server.optimize = revising(FIX)
        before = len(server.requests)
        result = align(team, server, "--candidates", "2")
        assert result.exit_code == 0, result.output
        asked = [format_mode(body) for body in server.optimizer_requests]
        judged_in = {format_mode(body) for _, body, _ in server.requests[before:]
                     if not is_optimizer(body)}
    assert "The optimizer's endpoint refused json_schema; now asking with json_object_schema." \
        in result.output
    assert "Kept: the best candidate beats 'base' on the test split" in result.output
    # One refusal in the run: the second candidate is asked in the format the first settled on.
    assert asked == ["json_schema", "json_object_schema", "json_object_schema"]
    # The candidates' judges ask in the format the judge's endpoint settled on, refused never.
    assert judged_in == {"json_object_schema"}
    with Session(team) as session:
        [run] = session.align_runs()
        candidates = session.align_candidates(run["id"])
        test_goldens = sum(split == "test" for split in session.splits().values())
    # Every request sent is counted, the refused one too: the first candidate took two optimizer
    # requests, the second one; each was judged on the validation goldens' 4 chunks, and the
    # first, the best, on the test goldens' too. None of its judge's requests was refused.
    validation = 4 * len(run["validation"])
    assert [c["calls"] for c in candidates] == [2 + validation + 4 * test_goldens, 1 + validation]
    assert run["calls"] == sum(c["calls"] for c in candidates)


def test_aligning_an_imported_judge_says_to_run_one_first(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    rows = [{**g, "judge": "imported", "judge_verdicts": [1, 0, 0, 1]} for g in goldens()]
    assert invoke("import", str(write_lines(tmp_path / "g.jsonl", rows)), "--session",
                  str(db)).exit_code == 0
    result = CliRunner().invoke(cli, ["align", str(db), "--judge", "imported",
                                      "--optimizer-model", "m"])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "Judge 'imported' has no stored prompt" in said and "its verdicts were imported" in said
    assert f"judge {db} --model MODEL --name NAME" in said and "Traceback" not in said


def test_the_optimizer_is_asked_again_as_a_judge_is_then_given_up_with_its_last_error(
        team: Path) -> None:
    """One retry policy for every request: the server's Retry-After honoured, --max-retries
    retries, then the candidate is rejected with the last error (not the run stopped)."""
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.default, server.retry_after = "429", "0.3"
        before = len(server.requests)
        result = align(team, server, "--candidates", "1", "--max-retries", "2")
        asked = [t for t, body, _ in server.requests[before:]]
    assert len(asked) == 3  # the request and 2 retries
    assert all(b - a >= 0.28 for a, b in itertools.pairwise(asked))
    assert "the optimizer never answered (HTTP 429" in result.output
    assert "nothing was registered" in result.output and "Traceback" not in result.output


def test_an_optimizer_url_with_credentials_that_refuses_stores_and_shows_no_secret(
        team: Path) -> None:
    import base64

    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.default = "404"
        url = server.base_url.replace("http://", "http://opt-user:KEY-s3cr3t-42@")
        result = invoke("align", str(team), "--judge", "base", "--optimizer-model", "opt-model",
                        "--base-url", url, "--bootstrap", "400")
    assert result.exit_code == 1 and "refused the request" in result.output
    forms = [b"KEY-s3cr3t-42", base64.b64encode(b"opt-user:KEY-s3cr3t-42")]
    for form in forms:
        assert form.decode() not in result.output
    with Session(team) as session:
        [run] = session.align_runs()
        assert "KEY-s3cr3t" not in run["outcome"] and "opt-user" not in run["outcome"]
    for path in team.parent.iterdir():
        if path.is_file():
            for form in forms:
                assert form not in path.read_bytes(), path


def test_an_optimizers_deep_huge_or_half_surrogate_reply_is_a_rejected_candidate(
        team: Path) -> None:
    half = json.dumps({"system": "Judge strictly \ud800 please.", "user": "",
                       "rationale": "a lone surrogate"}, ensure_ascii=False)
    replies = iter(["[" * 5000 + "]" * 5000, '{"system": ' + "9" * 5000 + "}", half])
    with FakeOpenAI() as server:
        server.decide = decide
        judge_base(team, server)
        server.optimize = lambda body: next(replies)
        result = align(team, server, "--candidates", "3")
    assert "Traceback" not in result.output
    assert result.exit_code == 0, result.output
    log = invoke("align-log", str(team), "--run", "1")
    assert log.exit_code == 0, log.output
    assert log.output.count("rejected: the optimizer's reply is JSON no prompt") == 2
    with Session(team) as session:
        replies_stored = [c["reply"] for c in session.align_candidates(1)]
    assert any("\ufffd" in (r or "") for r in replies_stored), log.output[-1500:]
