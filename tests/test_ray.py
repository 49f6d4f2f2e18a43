"""The distributed-engine recipe: request shards through Ray Data on a local cluster
(127.0.0.1 only) against the test server, the results stored by import-results, each once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from annotator.cli import cli
from annotator.store.session import Session
from tests.conftest import ROOT, banking_file
from tests.fake_openai import FakeOpenAI
from tests.waiting import PATIENCE


def test_shards_run_through_ray_data_and_every_result_is_stored_once(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    shards, results = tmp_path / "shards", tmp_path / "results"
    runner = CliRunner()
    with FakeOpenAI() as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        made = runner.invoke(cli, ["judge", str(db), "--model", "m", "--name", "ray",
                                   "--export-requests", str(shards), "--shard-size", "30"],
                             env=env)
        assert made.exit_code == 0 and "in 3 shards" in made.output, made.output
        # One request the endpoint keeps refusing (the client retries 3 times): written as its
        # error, stored as a failed call the next run asks again.
        server.plan["Non-maintenance fee is ₹350 + taxes."] = ["500"] * 6
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "ray_judge.py"), str(shards), str(results),
             "--base-url", server.base_url, "--block", "25"],
            env={**env, "RAY_USAGE_STATS_ENABLED": "0"}, capture_output=True, text=True,
            timeout=PATIENCE)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Answered 80 requests" in done.stdout
        assert len(server.requests) >= 80  # every request went to the endpoint
    stored = runner.invoke(cli, ["import-results", str(db), str(results)])
    assert stored.exit_code == 0, stored.output
    assert "80 results read from" in stored.output and "80 calls stored" in stored.output
    with Session(db) as session:
        calls = session.calls("ray")
        assert len(calls) == 80
        assert sum(c["error"] is not None for c in calls) == 1  # the refused one, to ask again
        assert len(session.verdicts("ray")) == 79
    again = runner.invoke(cli, ["import-results", str(db), str(results)])
    assert "0 calls stored; 80 repeated results skipped" in again.output
