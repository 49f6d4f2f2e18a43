"""A real local server in the suite: llama.cpp's own server (the xllamacpp wheel) serving the
tiny generated GGUF, one slot, as a person runs one. The judge works against it at its
defaults: no --timeout, no --max-tokens, no --concurrency; pointwise and listwise."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from tests.conftest import BANKING, ROOT, banking_file
from tests.llama_server import llama_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    spec = importlib.util.spec_from_file_location("tiny_gguf", ROOT / "scripts" / "tiny_gguf.py")
    assert spec is not None and spec.loader is not None
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    model = tmp_path_factory.mktemp("model") / "tiny.gguf"
    tiny.write(str(model))
    with llama_server(model) as url:
        yield url


def judged(db: Path, judge: str) -> tuple[int, int]:
    """(chunks with a verdict, failed calls) of a judge, read by plain sqlite3."""
    with sqlite3.connect(db) as conn:
        done = conn.execute("SELECT count(DISTINCT chunk_id) FROM verdicts WHERE judge = ? AND "
                            "error IS NULL", [judge]).fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM verdicts WHERE judge = ? AND error IS NOT "
                              "NULL", [judge]).fetchone()[0]
    return done, failed


@pytest.mark.parametrize("prompt", ["builtin", "listwise"])
def test_the_judge_at_its_defaults_judges_every_chunk_on_a_real_llama_cpp_server(
        server: str, tmp_path: Path, prompt: str) -> None:
    db = tmp_path / "b.db"
    assert CliRunner().invoke(cli, ["import", str(BANKING), "--session", str(db)]).exit_code == 0
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    # Listwise: the random model's replies are refused (below), and each refused one would be
    # asked again: none is, to keep the test short.
    retries = ["--max-retries", "0"] if prompt == "listwise" else []
    done = CliRunner().invoke(cli, ["judge", str(db), "--model", "tiny", "--base-url", server,
                                    "--prompt", prompt, "--name", "tiny", "--limit", "15",
                                    *retries], env=env)
    assert "timed out" not in done.output and "cut off" not in done.output, done.output
    if prompt == "builtin":
        assert done.exit_code == 0, done.output
        assert judged(db, "tiny") == (15, 0), done.output
        return
    # A model of random weights ranks a list at random (a rank twice): a failure of the model,
    # said as such; what the defaults decide is that no reply was cut off or timed out.
    assert "failed calls: the reply judges rank" in done.output
    assert "Judge 'tiny' is not kept: it has no verdict yet." in done.output


def test_a_recheck_against_the_real_server_reads_its_model_and_build_as_the_epoch(
        server: str, tmp_path: Path) -> None:
    """llama-server names the model file it serves and its build (system_fingerprint): the
    epoch. At temperature 0 the same server answers alike, so a re-check finds nothing."""
    db = banking_file(tmp_path / "b.db")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = CliRunner().invoke(cli, ["judge", str(db), "--model", "tiny", "--base-url", server,
                                    "--name", "tiny"], env=env)
    assert done.exit_code == 0, done.output
    with sqlite3.connect(db) as conn:
        (model, fingerprint), = conn.execute(
            "SELECT model, fingerprint FROM epochs WHERE judge = 'tiny'").fetchall()
    assert model.endswith("tiny.gguf") and fingerprint  # what the server said, not 'tiny'
    again = CliRunner().invoke(cli, ["recheck", str(db), "--judge", "tiny", "--canary", "10"],
                               env=env)
    assert again.exit_code == 0, again.output
    assert "the same epoch" in again.output and "0 right -> wrong" in again.output


def test_anthropics_protocol_is_spoken_with_llama_cpps_own_messages_endpoint(
        server: str, tmp_path: Path) -> None:
    """llama-server also serves Anthropic's Messages API (/v1/messages): the anthropic client
    reaches it and every reply is read as a Message. The random model calls no tool and runs to
    the token limit, and that is what the judge reads from the reply's stop_reason: a cut-off,
    not an HTTP error or a body that is no message."""
    db = banking_file(tmp_path / "b.db")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                        "ANTHROPIC_BASE_URL")}
    done = CliRunner().invoke(cli, ["judge", str(db), "--provider", "anthropic", "--model",
                                    "tiny", "--base-url", server.removesuffix("/v1"),
                                    "--name", "tiny", "--limit", "3", "--max-tokens", "40"],
                              env=env)
    assert "calls failed the same way, before any verdict: the reply was cut off at the " \
        "token limit" in done.output, done.output
    assert "HTTP" not in done.output and "not a message" not in done.output


def test_a_listwise_replys_limit_grows_with_its_window() -> None:
    from annotator.judge.types import default_max_tokens

    assert default_max_tokens(False, None) == 512
    assert default_max_tokens(True, 20) == 2624  # 512 cut 10 of 80 chunks off at a window of 20
    assert default_max_tokens(True, 2) == 512
