"""Batch judging through the real openai client against the test server's Batch API, and
request files answered by an offline engine."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.formats import read_goldens
from annotator.store.session import Session
from tests.conftest import ROOT, write_lines
from tests.fake_batches import Capture
from tests.fake_openai import FakeOpenAI
from tests.offline_engine import run as offline_engine
from tests.waiting import wait_until


def make_session(tmp_path: Path, goldens: int = 10, chunks: int = 4, name: str = "s") -> Path:
    rows = [{"id": f"g{i}", "user_input": f"Question {i}?", "reference": f"Answer {i}.",
             "retrieved_contexts": [f"chunk {i}.{k} " + ("useful" if (i + k) % 2 else "noise")
                                    for k in range(chunks)]}
            for i in range(goldens)]
    path = write_lines(tmp_path / f"{name}.jsonl", rows)
    db = tmp_path / f"{name}.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(path), path=str(path))
    return db


def invoke(server: FakeOpenAI, *args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env={"OPENAI_API_KEY": "sk-test",
                                                    "OPENAI_BASE_URL": server.base_url})


def calls(db: Path, judge: str) -> list[tuple[int, int, int | None, str | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT chunk_id, repetition, verdict, error FROM verdicts WHERE "
                            "judge = ? ORDER BY id", [judge]).fetchall()


def verdicts(db: Path, judge: str) -> dict[int, int | None]:
    return {c: v for c, _, v, e in calls(db, judge) if e is None}


def test_a_batch_round_is_created_followed_and_stored_like_a_live_run(tmp_path: Path) -> None:
    db = make_session(tmp_path)
    with FakeOpenAI() as server:
        live = invoke(server, "judge", str(db), "--model", "m", "--name", "live")
        assert live.exit_code == 0, live.output
        dry = invoke(server, "judge", str(db), "--model", "m", "--name", "b", "--batch",
                     "--batch-max-requests", "15", "--price-in", "2", "--price-out", "8",
                     "--dry-run")
        assert dry.exit_code == 0 and "3 batches" in dry.output and server.batch.batches == {}
        made = invoke(server, "judge", str(db), "--model", "m", "--name", "b", "--batch",
                      "--batch-max-requests", "15", "--price-in", "2", "--price-out", "8")
        assert made.exit_code == 0, made.output
        assert "Created 3 batches for 40 chunks" in made.output
        assert [len(b.lines) for b in server.batch.batches.values()] == [15, 15, 10]
        bodies = [line["body"] for b in server.batch.batches.values() for line in b.lines]
        live_bodies = [body for _, body, _ in server.requests]
        # The same bodies as the live run sends: the same request hashes, the same resume rules.
        key = functools.partial(json.dumps, sort_keys=True)
        assert sorted(map(key, bodies)) == sorted(map(key, live_bodies))
        once = invoke(server, "batches", str(db))
        assert once.exit_code == 0 and "in_progress" in once.output and not verdicts(db, "b")
        waited = invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        assert waited.exit_code == 0, waited.output
        assert "40 calls stored" in waited.output
        again = invoke(server, "judge", str(db), "--model", "m", "--name", "b", "--batch")
        assert "Nothing to send" in again.output and len(server.batch.batches) == 3
    assert verdicts(db, "b") == verdicts(db, "live") and len(calls(db, "b")) == 40
    with sqlite3.connect(db) as conn:  # each call names the batch it came back in
        assert {row[0] for row in conn.execute("SELECT batch_id FROM verdicts WHERE judge = "
                                               "'b'")} == set(server.batch.batches)
    with Session(db) as session:
        price = session.price("b")
        assert price is not None and (price.input, price.output) == (1.0, 4.0)  # half price
        assert session.call_summary("b")["tokens_in"] == session.call_summary("live")[
            "tokens_in"]


def test_a_dry_run_splits_files_where_the_round_splits_them(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=6)
    with FakeOpenAI() as server:
        first = ("judge", str(db), "--model", "m", "--batch", "--batch-max-mb", "0.006")
        dry = invoke(server, *first, "--dry-run")
        made = invoke(server, *first)
        assert made.exit_code == 0, made.output
        files = list(server.batch.batches.values())
        sizes = [sum(len(json.dumps(line)) for line in b.lines) for b in files]
        assert len(files) > 2 and max(sizes) <= 6_000 * 1.1  # split by size, not by count
        assert f"{len(files)} batches in as many files" in dry.output, dry.output
        # Chunks still out in a batch are left out of the next dry run, as of the next round.
        busy = invoke(server, "judge", str(db), "--model", "m", "--batch", "--dry-run")
        assert re.search(r"calls +0 for 0 chunks", busy.output) and "0 batches" in busy.output, (
            busy.output)


def test_failed_and_expired_requests_go_into_the_next_round(tmp_path: Path) -> None:
    db = make_session(tmp_path)
    with Session(db) as session:
        texts = [c.text for g in session.goldens() for c in g.chunks]
    with FakeOpenAI() as server:
        server.plan[texts[0]] = ["500"]  # one request fails inside a batch that completes
        server.plan[texts[1]] = ["malformed"]
        server.batch.end = "expired"  # and half of every batch expires
        invoke(server, "judge", str(db), "--model", "m", "--batch", "--batch-max-requests", "10")
        out = invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        assert out.exit_code == 0 and "expired" in out.output, out.output
        first = verdicts(db, "m-builtin")
        assert len(first) == 18  # 4 batches x 5 answered, minus the two that failed
        errors = [e for _, _, _, e in calls(db, "m-builtin") if e]
        assert any("HTTP 500" in e for e in errors) and any("JSON" in e for e in errors)
        server.batch.end = "completed"
        second = invoke(server, "judge", str(db), "--model", "m", "--batch")
        assert "for 22 chunks" in second.output, second.output
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        answered = Counter(server.batch.answered)
    assert len(verdicts(db, "m-builtin")) == 40
    assert set(answered.values()) == {1}  # no request was ever sent twice
    assert Counter(c for c, _, _, e in calls(db, "m-builtin") if e is None).most_common(1)[0][
        1] == 1


def test_a_batch_the_provider_refuses_fails_and_its_chunks_are_sent_again(
        tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=5)
    with FakeOpenAI() as server:
        server.batch.max_requests = 10
        invoke(server, "judge", str(db), "--model", "m", "--batch", "--batch-max-requests", "20")
        out = invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        assert "failed" in out.output and not verdicts(db, "m-builtin")
        retry = invoke(server, "judge", str(db), "--model", "m", "--batch",
                       "--batch-max-requests", "10")
        assert "Created 2 batches for 20 chunks" in retry.output, retry.output
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
    assert len(verdicts(db, "m-builtin")) == 20


def test_cancel_keeps_what_finished(tmp_path: Path) -> None:
    db = make_session(tmp_path)
    with FakeOpenAI() as server:
        server.batch.polls_per_state = 5
        invoke(server, "judge", str(db), "--model", "m", "--batch")
        out = invoke(server, "batches", str(db), "--cancel")
        assert "Cancelling 1 batch" in out.output, out.output
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        [batch] = server.batch.batches.values()
        assert batch.status == "cancelled"
        assert len(verdicts(db, "m-builtin")) == 20  # half ran before the cancel took effect
        again = invoke(server, "judge", str(db), "--model", "m", "--batch")
        assert "for 20 chunks" in again.output


def test_listwise_windows_and_repeats_through_a_batch_match_a_live_run(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=4, chunks=9)
    with FakeOpenAI() as server:
        invoke(server, "judge", str(db), "--model", "m", "--prompt", "listwise", "--window", "4",
               "--name", "live", "--repeat", "2")
        made = invoke(server, "judge", str(db), "--model", "m", "--prompt", "listwise",
                      "--window", "4", "--name", "b", "--repeat", "2", "--batch",
                      "--batch-max-requests", "5")
        assert made.exit_code == 0, made.output
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
    assert verdicts(db, "b") == verdicts(db, "live")
    assert len(calls(db, "b")) == len(calls(db, "live")) == 72
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM verdicts WHERE judge = 'b' AND "
                            "unstable = 0").fetchone()[0] == 72


def test_a_listwise_golden_with_a_window_that_never_ran_is_asked_again(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=3, chunks=9)  # 3 windows of 4 per golden
    listwise = ("--model", "m", "--prompt", "listwise", "--window", "4", "--batch")
    with FakeOpenAI() as server:
        server.batch.end = "expired"  # 4 of the 9 requests run: the second golden's first
        invoke(server, "judge", str(db), *listwise)
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        first = verdicts(db, "m-listwise")
        # Never a partial golden: only goldens whose every window ran have verdicts.
        assert len(first) == 9
        server.batch.end = "completed"
        again = invoke(server, "judge", str(db), *listwise)
        assert "for 18 chunks" in again.output, again.output
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
    assert len(verdicts(db, "m-listwise")) == 27


def _reached(server: FakeOpenAI, process: subprocess.Popen[bytes], hits: int) -> bool:
    """The server has seen ``hits`` requests, or the process ended first."""
    return server.hits >= hits or process.poll() is not None


def test_killed_followers_lose_nothing_and_store_nothing_twice(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=30, chunks=4)
    rng = random.Random(7)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with FakeOpenAI() as server:
        server.batch.polls_per_state = 2
        env["OPENAI_BASE_URL"] = server.base_url
        server.plan.update({f"chunk {i}.1 " + ("useful" if (i + 1) % 2 else "noise"): ["500"]
                            for i in range(0, 30, 7)})
        for trial in range(20):
            # Every fourth trial kills the command that creates a round; the others a follower.
            command = (["judge", str(db), "--model", "m", "--batch", "--batch-max-requests", "8"]
                       if trial % 4 == 0 else ["batches", str(db), "--wait", "--poll", "0.01"])
            # Killed right after its k-th request reached the server (or once it ended): a
            # point in its work, not in time, so a busy machine kills it at the same places.
            seen, k = server.hits, rng.randint(1, 8)
            process = subprocess.Popen([sys.executable, "-m", "annotator", *command], cwd=ROOT,
                                       env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            wait_until(partial(_reached, server, process, seen + k), f"request {k} of trial {trial}")
            process.send_signal(signal.SIGKILL)
            process.wait()
        server.plan.clear()
        during = len(verdicts(db, "m-builtin"))
        assert during > 0  # the killed commands did part of the work
        for _ in range(3):  # then run to the end, as a person would
            subprocess.run([sys.executable, "-m", "annotator", "judge", str(db), "--model", "m",
                            "--batch", "--batch-max-requests", "8"], cwd=ROOT, env=env,
                           check=True, capture_output=True)
            subprocess.run([sys.executable, "-m", "annotator", "batches", str(db), "--wait",
                            "--poll", "0.01"], cwd=ROOT, env=env, check=True,
                           capture_output=True)
        answered = Counter(server.batch.answered)
    stored = Counter(c for c, _, _, e in calls(db, "m-builtin") if e is None)
    assert len(stored) == 120 and set(stored.values()) == {1}  # every chunk judged once
    assert set(answered.values()) == {1}
    with sqlite3.connect(db) as conn:
        states = dict(conn.execute("SELECT state, count(*) FROM batch_requests GROUP BY state"))
    assert states.get("pending", 0) == 0 and states.get("answered", 0) == 0


def test_an_offline_engines_results_import_to_the_live_verdicts(tmp_path: Path) -> None:
    db = make_session(tmp_path)
    requests, results = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    with FakeOpenAI() as server:
        invoke(server, "judge", str(db), "--model", "m", "--name", "live")
        out = invoke(server, "judge", str(db), "--model", "m", "--name", "offline",
                     "--export-requests", str(requests))
        assert out.exit_code == 0 and "Wrote 40 requests" in out.output, out.output
        assert not server.batch.batches  # nothing uploaded
        assert offline_engine(str(requests), str(results), server) == 40
    # A malformed line or a request this session never made: a sentence naming the line, and
    # nothing stored (not even the good lines before it).
    good = results.read_text().splitlines()
    unknown = json.dumps({"custom_id": "r9-1-1-0", "response": {"status_code": 200,
                                                                "body": {}}})
    for bad, where in (([*good[:3], "{not json"], "line 4"),
                       ([*good[:2], unknown], "line 3, field 'custom_id'")):
        broken = tmp_path / "broken.jsonl"
        broken.write_text("\n".join(bad) + "\n")
        refused = CliRunner().invoke(cli, ["import-results", str(db), str(broken)])
        assert refused.exit_code == 2 and where in refused.output, refused.output
        assert not verdicts(db, "offline")
    stored = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert stored.exit_code == 0 and "40 calls stored" in stored.output, stored.output
    again = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert "0 calls stored" in again.output  # a second import stores nothing twice
    assert verdicts(db, "offline") == verdicts(db, "live") and len(calls(db, "offline")) == 40
    with sqlite3.connect(db) as conn:
        assert {row[0] for row in conn.execute("SELECT batch_id FROM verdicts WHERE judge = "
                                               "'offline'")} == {"export:offline:1"}


def test_shards_for_a_distributed_engine_go_out_in_a_folder_and_come_back_once(
        tmp_path: Path) -> None:
    db = make_session(tmp_path)
    shards, results = tmp_path / "shards", tmp_path / "results"
    with FakeOpenAI() as server:
        invoke(server, "judge", str(db), "--model", "m", "--name", "live")
        # A judge named after a model id with a slash: still one file a shard.
        out = invoke(server, "judge", str(db), "--model", "org/m", "--name", "org/offline",
                     "--export-requests", str(shards), "--shard-size", "15")
        assert out.exit_code == 0, out.output
        assert "Wrote 40 requests for 40 chunks in 3 shards" in out.output
        files = sorted(shards.iterdir())
        assert [f.name for f in files] == [f"org%2Foffline-round1-part{k}.jsonl"
                                           for k in (1, 2, 3)]
        assert [len(f.read_text().splitlines()) for f in files] == [15, 15, 10]
        assert not list(tmp_path.glob(".shards.*"))  # made whole: no partial folder left
        results.mkdir()
        for k, shard in enumerate(files, 1):  # each shard run on its own worker
            offline_engine(str(shard), str(results / f"part{k}.jsonl"), server)
        refused = invoke(server, "judge", str(db), "--model", "org/m", "--name", "other",
                         "--export-requests", str(shards), "--shard-size", "15")
        assert refused.exit_code == 2 and "already exists" in refused.output
    stored = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert stored.exit_code == 0, stored.output
    assert "40 results read from 3 files; 40 calls stored." in stored.output
    again = CliRunner().invoke(cli, ["import-results", str(db), str(results),
                                     str(results / "part1.jsonl")])
    assert again.exit_code == 0 and "0 calls stored; 55 repeated results skipped" in again.output
    assert verdicts(db, "org/offline") == verdicts(db, "live")
    assert len(calls(db, "org/offline")) == 40  # each stored once
    usage = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--shard-size", "5"])
    assert usage.exit_code == 2 and "give --export-requests FOLDER" in usage.output
    older = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--format", "parquet"])
    assert older.exit_code == 2 and "--shard-format parquet writes shards" in older.output


@pytest.mark.parametrize("prompt", ["ragas"])
def test_a_prompt_sent_by_its_own_library_cannot_be_batched(tmp_path: Path, prompt: str) -> None:
    db = make_session(tmp_path, goldens=1)
    with FakeOpenAI() as server:
        out = invoke(server, "judge", str(db), "--model", "m", "--prompt", prompt, "--batch")
        assert out.exit_code == 2 and "batch judging needs a template prompt" in out.output
        assert not server.batch.files
    with Session(db) as session:
        assert not session.judges()  # the judge it defined is gone again


def test_the_follow_up_command_runs_as_printed_at_the_judges_own_endpoint(tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=3)
    bare = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    with FakeOpenAI() as server:
        made = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--batch", "--base-url",
                                        server.base_url], env=bare)
        assert made.exit_code == 0, made.output
        printed = re.search(r"'annotator (batches [^']+)'", made.output)
        assert printed is not None, made.output
        # Run exactly as printed, with no OPENAI_BASE_URL: the judge's own endpoint is used.
        followed = CliRunner().invoke(cli, [*printed.group(1).split(), "--poll", "0.01"], env=bare)
        assert followed.exit_code == 0, followed.output
        assert f"Following judge 'm-builtin' at {server.base_url} (where it was run)" in \
            followed.output
        assert len(verdicts(db, "m-builtin")) == 12
    # The server is gone: one sentence naming the URL, no traceback, nothing retried for ever.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE batches SET collected = 0")
    gone = CliRunner().invoke(cli, ["batches", str(db)], env=bare)
    assert gone.exit_code == 2, gone.output
    assert f"Could not reach {server.base_url}" in gone.output and "--base-url" in gone.output
    assert ("Traceback" not in gone.output and gone.exception is None) or \
        isinstance(gone.exception, SystemExit)


def test_a_result_given_twice_or_stored_before_is_skipped_and_counted(tmp_path: Path) -> None:
    db = make_session(tmp_path)
    requests, results = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    with FakeOpenAI() as server:
        server.plan.update({"chunk 0.1 useful": ["500"], "chunk 1.0 useful": ["500"]})
        out = invoke(server, "judge", str(db), "--model", "m", "--export-requests", str(requests))
        assert out.exit_code == 0, out.output
        assert offline_engine(str(requests), str(results), server) == 40
    lines = results.read_text().splitlines()
    doubled = tmp_path / "doubled.jsonl"  # two engine runs concatenated
    doubled.write_text("\n".join(lines + lines[:5]) + "\n")
    stored = CliRunner().invoke(cli, ["import-results", str(db), str(doubled)])
    assert stored.exit_code == 0, stored.output
    assert "40 calls stored; 5 repeated results skipped" in stored.output, stored.output
    again = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert "0 calls stored; 40 repeated results skipped" in again.output, again.output
    every = calls(db, "m-builtin")
    assert len(every) == 40 and sum(e is not None for _, _, _, e in every) == 2  # failures once


def test_a_follower_stopped_before_it_marked_a_batch_collected_stores_nothing_twice(
        tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=5)
    with FakeOpenAI() as server:
        server.plan.update({"chunk 0.1 useful": ["500"], "chunk 1.0 useful": ["500"]})
        invoke(server, "judge", str(db), "--model", "m", "--batch")
        invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        before = calls(db, "m-builtin")
        assert sum(e is not None for _, _, _, e in before) == 2
        # As if killed after storing the results but before marking the batch collected.
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE batches SET collected = 0")
        again = invoke(server, "batches", str(db), "--wait", "--poll", "0.01")
        assert again.exit_code == 0, again.output
        assert "0 calls stored this time (20 repeated results skipped" in again.output, \
            again.output
    assert calls(db, "m-builtin") == before  # the failed results' tokens count once


@pytest.mark.parametrize(("line", "says"), [
    (b'{"custom_id": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested more than"),
    (b'{"custom_id": "r1-1-1-0", "response": {"status_code": 200, "body": "\\ud800"}}',
     "lone surrogate"),
    (b'{"custom_id": "\xff"}', "not UTF-8"),
])
def test_a_hostile_result_line_is_a_sentence_naming_it(tmp_path: Path, line: bytes,
                                                        says: str) -> None:
    db = make_session(tmp_path, goldens=1)
    with FakeOpenAI() as server:
        invoke(server, "judge", str(db), "--model", "m", "--export-requests",
               str(tmp_path / "requests.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(line)
    result = CliRunner().invoke(cli, ["import-results", str(db), str(bad)])
    assert result.exit_code == 2, result.output
    assert "line 1" in result.output and says in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_parquet_shards_go_out_and_parquet_results_come_back(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    db = make_session(tmp_path)
    shards, results = tmp_path / "shards", tmp_path / "results"
    with FakeOpenAI() as server:
        invoke(server, "judge", str(db), "--model", "m", "--name", "live")
        out = invoke(server, "judge", str(db), "--model", "m", "--name", "spark",
                     "--export-requests", str(shards), "--shard-size", "25", "--shard-format",
                     "parquet")
        assert out.exit_code == 0, out.output
        files = sorted(shards.iterdir())
        assert [f.name for f in files] == ["spark-round1-part1.parquet",
                                           "spark-round1-part2.parquet"]
        results.mkdir()
        for k, shard in enumerate(files, 1):  # a table engine's worker: rows in, rows out
            rows = pq.read_table(shard).to_pylist()
            assert set(rows[0]) == {"custom_id", "method", "url", "body"}
            answered = []
            for row in rows:
                capture = Capture()
                server.batch._answer(capture, json.loads(row["body"]))
                answered.append({"custom_id": row["custom_id"],
                                 "response": {"status_code": capture.status,
                                              "body": capture.data.decode()}})
            pq.write_table(pa.Table.from_pylist(answered), results / f"part{k}.parquet")
        refused = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--format",
                                           "parquet"])
        assert refused.exit_code == 2 and "--shard-size N" in refused.output
    stored = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert stored.exit_code == 0, stored.output
    assert "40 results read from 2 files; 40 calls stored." in stored.output
    assert verdicts(db, "spark") == verdicts(db, "live")


def test_an_endpoint_without_a_batch_api_is_a_sentence_and_live_judging_still_does_all(
        tmp_path: Path) -> None:
    db = make_session(tmp_path)
    with FakeOpenAI() as server:
        server.batch.absent = True  # llama.cpp, Ollama: no /v1/files
        made = invoke(server, "judge", str(db), "--model", "m", "--name", "b", "--batch")
        assert made.exit_code == 2, made.output
        assert "has no Batch API (HTTP 404 on /v1/files)" in made.output
        assert "without --batch" in made.output and "Traceback" not in made.output
        assert made.exception is None or isinstance(made.exception, SystemExit)
        live = invoke(server, "judge", str(db), "--model", "m", "--name", "b")
        assert live.exit_code == 0, live.output
    assert len(verdicts(db, "b")) == 40  # nothing was left waiting on a batch never made


KILLED_WRITING = """
import os, sys
from annotator.store.session import Session
from annotator import cli
original = Session.{method}
def dies(self, *args, **kwargs):
    original(self, *args, **kwargs)
    os._exit(9)  # as SIGKILL: no clean-up runs
Session.{method} = dies
sys.argv = ["annotator", *sys.argv[1:]]
cli.main()
"""


@pytest.mark.parametrize(("method", "shards"), [("add_batch_requests", False),
                                                ("add_batch_requests", True),
                                                ("record_batch", True)])
def test_an_export_killed_while_written_strands_no_chunk(tmp_path: Path, method: str,
                                                         shards: bool) -> None:
    import subprocess
    import sys

    db = make_session(tmp_path, goldens=30)
    target = tmp_path / ("shards" if shards else "requests.jsonl")
    args = ["judge", str(db), "--model", "m", "--name", "off", "--export-requests", str(target),
            *(["--shard-size", "50"] if shards else [])]
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITING.format(method=method), *args],
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == 9, killed.stderr
    with Session(db) as session:  # the kill left requests stored for no batch or export
        assert session.unsubmitted_parts("off")
    if target.exists():  # a shard folder made whole before its record: set it aside
        target.rename(tmp_path / "set-aside")
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert "Wrote 120 requests for 120 chunks" in again.output  # every chunk asked again
    written = (sorted(target.iterdir()) if shards else [target])
    assert sum(len(f.read_text().splitlines()) for f in written) == 120
    with Session(db) as session:
        assert not session.unsubmitted_parts("off")


def test_a_results_body_written_as_text_holding_a_lone_surrogate_is_stored(
        tmp_path: Path) -> None:
    db = make_session(tmp_path, goldens=2)
    requests, results = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    with FakeOpenAI() as server:
        out = invoke(server, "judge", str(db), "--model", "m", "--name", "offline",
                     "--export-requests", str(requests))
        assert out.exit_code == 0, out.output
        server.rewrite = lambda reply, verdict: reply["choices"][0]["message"].update(
            content=json.dumps({"reason": "half a pair \ud800", "verdict": verdict}))
        offline_engine(str(requests), str(results), server)
    # An engine that writes each body as JSON text: the surrogate is escaped inside a string.
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    for line in lines:
        line["response"]["body"] = json.dumps(line["response"]["body"])
    results.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    stored = CliRunner().invoke(cli, ["import-results", str(db), str(results)])
    assert stored.exit_code == 0, stored.output
    assert "Traceback" not in stored.output and "8 calls stored" in stored.output
    with sqlite3.connect(db) as conn:
        reasons = {r for (r,) in conn.execute("SELECT reason FROM verdicts WHERE judge = "
                                              "'offline'")}
    assert reasons == {"half a pair \ufffd"}


@pytest.mark.parametrize("prompt", ["builtin", "listwise"])
def test_a_request_line_written_fast_is_the_openai_transports_line(tmp_path: Path,
                                                                    prompt: str) -> None:
    """RequestLines encodes the part every OpenAI line shares once; each line must still be
    what the transport's batch_line writes for the live request's body."""
    from annotator.judge.batch import RequestLines
    from annotator.judge.client import request_body
    from annotator.judge.openai_chat import OpenAIChat
    from annotator.judge.runner import RunOptions, RunStats, collect_tasks, task_messages
    from annotator.judge.styles import make_prompt
    from annotator.judge.types import JudgeSettings

    db = make_session(tmp_path, goldens=2, chunks=3)
    settings = JudgeSettings(model="m", prompt=make_prompt(prompt, "reference"),
                             window=2 if prompt == "listwise" else None)
    with Session(db) as session:
        tasks = collect_tasks(session, settings, RunOptions(), RunStats())
    lines = RequestLines(settings, 1)
    written = 0
    for task in tasks:
        every = task_messages(settings, task)
        for (line, row), messages in zip(lines.of(task, every), every, strict=True):
            ranks = json.loads(row["ranks"]) if row["ranks"] else None
            wanted = OpenAIChat.batch_line(row["custom_id"],
                                           request_body(settings, messages, ranks))
            assert json.loads(line) == json.loads(wanted)
            written += 1
    assert written == (6 if prompt == "builtin" else 4)  # two windows of 2 for 3 chunks
