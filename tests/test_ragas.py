"""The ragas prompt: the same requests as RAGAS's own ContextPrecision, and the same verdicts.

Needs the ragas extra, which the test extra includes (pip install -e '.[test]').
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI
from ragas.llms import llm_factory
from ragas.metrics.collections import ContextPrecision, ContextPrecisionWithoutReference

from annotator.formats import read_goldens
from annotator.judge.ragas_prompt import RAGAS_MAX_TOKENS, RAGAS_TEMPERATURE, RagasPrompt
from annotator.judge.runner import RunOptions, RunStats, run_judge
from annotator.judge.transport import connect
from annotator.judge.types import JudgeSettings
from annotator.stats.metrics import context_precision
from annotator.store.session import Session
from tests.conftest import ROOT, banking_file, write_lines
from tests.fake_openai import FakeOpenAI, chunk_of

QUESTION = "What is the minimum balance for my savings account?"
REFERENCE = "Urban ₹10,000; the fee is ₹350 + taxes; semi-urban ₹5,000; rural ₹2,500."
RESPONSE = "You need ₹10,000 in an urban branch."
CHUNKS = ["Minimum balance is ₹10,000 for urban branches (useful).", "KYC every 8 years.",
          "Non-maintenance fee is ₹350 + taxes (useful).", 'Quote "inside" and \\ back'
          "slash, useful", "Rural branch minimum balance is ₹2,500."]


def test_the_prompt_is_ragas_own_byte_for_byte() -> None:
    # RAGAS 0.4.3's rendering of (Q?, CTX, ANS).
    [message] = RagasPrompt().messages("Q?", "ANS", "CTX")
    text = message["content"]
    assert len(text) == 4041
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "2f6c7ea47cda51a3a4230e7fa88caf7f10a1663a10b8bd08d95a5d77d3fd06ca")


def session_with_one_golden(tmp_path: Path) -> Session:
    path = write_lines(tmp_path / "g.jsonl", [{"id": "g", "user_input": QUESTION,
                                               "reference": REFERENCE, "response": RESPONSE,
                                               "retrieved_contexts": CHUNKS}])
    session = Session(tmp_path / "s.db")
    session.import_goldens(read_goldens(path), path=str(path))
    return session


def ours(session: Session, server: FakeOpenAI, against: str) -> RunStats:
    settings = JudgeSettings(model="judge-model", prompt=RagasPrompt(against),  # type: ignore[arg-type]
                             temperature=RAGAS_TEMPERATURE, max_tokens=RAGAS_MAX_TOKENS)

    async def go() -> RunStats:
        async with connect("openai", server.base_url, "sk-test") as client:
            return await run_judge(session, f"ragas-{against}", settings, client,
                                   RunOptions(concurrency=4, max_retries=1, backoff_base=0.01),
                                   RunStats())

    return asyncio.run(go())


def theirs(server: FakeOpenAI, against: str) -> tuple[float, list[Any]]:
    """RAGAS's own metric, with a wrapper that keeps each reply."""
    replies: list[Any] = []

    async def go() -> float:
        async with AsyncOpenAI(api_key="sk-test", base_url=server.base_url) as client:
            llm = llm_factory("judge-model", provider="openai", client=client)
            ask = llm.agenerate

            async def keep(prompt: Any, response_model: Any) -> Any:
                reply = await ask(prompt, response_model)
                replies.append(reply)
                return reply

            llm.agenerate = keep  # type: ignore[method-assign]
            if against == "reference":
                result = await ContextPrecision(llm=llm).ascore(
                    user_input=QUESTION, reference=REFERENCE, retrieved_contexts=CHUNKS)
            else:
                result = await ContextPrecisionWithoutReference(llm=llm).ascore(
                    user_input=QUESTION, response=RESPONSE, retrieved_contexts=CHUNKS)
            return float(result.value)

    return asyncio.run(go()), replies


@pytest.mark.parametrize("against", ["reference", "response"])
def test_same_requests_and_verdicts_as_ragas_context_precision(tmp_path: Path, against: str) -> None:
    session = session_with_one_golden(tmp_path)
    with FakeOpenAI() as server:
        stats = ours(session, server, against)
        assert (stats.judged, stats.errors) == (len(CHUNKS), 0)
        mine = [body for _, body, _ in server.requests]
        server.requests.clear()
        score, replies = theirs(server, against)
        ragas_requests = [body for _, body, _ in server.requests]
    # Same requests, chunk for chunk (ours go concurrently, RAGAS's in rank order).
    assert sorted(mine, key=chunk_of) == sorted(ragas_requests, key=chunk_of)
    assert len(mine) == len(CHUNKS)
    # Same verdicts, and the same context precision from them.
    golden = session.golden("g")
    stored = session.verdicts(f"ragas-{against}")
    verdicts = [stored[c.id].verdict for c in golden.chunks]
    assert verdicts == [reply.verdict for reply in replies] == [1, 0, 1, 1, 0]
    assert [stored[c.id].reason for c in golden.chunks] == [reply.reason for reply in replies]
    assert context_precision(verdicts) == score


def test_a_verdict_ragas_would_take_is_an_error_here(tmp_path: Path) -> None:
    session = session_with_one_golden(tmp_path)
    with FakeOpenAI() as server:
        server.plan[CHUNKS[0]] = ["verdict2", "verdict2"]  # RAGAS itself would score with a 2
        stats = ours(session, server, "reference")
        assert (stats.judged, stats.gave_up) == (len(CHUNKS) - 1, 1)
        [error] = [c["error"] for c in session.calls("ragas-reference") if c["error"]][:1]
        assert error == "the verdict is 2, not 0 or 1"
        stats = ours(session, server, "reference")  # the rerun recovers that chunk only
        assert (stats.judged, stats.skipped) == (1, len(CHUNKS) - 1)


def test_without_ragas_a_sentence_says_how_to_get_it(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "ragas.py").write_text("raise ImportError('No module named ragas')\n")
    db = tmp_path / "b.db"
    with Session(db) as session:
        path = ROOT / "sample_sessions" / "banking.jsonl"
        session.import_goldens(read_goldens(path), path=str(path))
    env = {**os.environ, "PYTHONPATH": str(blocker), "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run([sys.executable, "-m", "annotator", "judge", str(db), "--model", "m",
                           "--prompt", "ragas", "--base-url", "http://127.0.0.1:9/v1"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 2
    # From a checkout no index has cp-annotator: the hint installs the checkout's extra.
    assert f"pip install -e '{ROOT}[ragas]'" in done.stderr and "Traceback" not in done.stderr


def test_the_ragas_annotation_export_trains_ragas_own_metric(tmp_path: Path) -> None:
    """RAGAS loads the file with its own MetricAnnotation loader, and metric.train() turns
    every chunk into a few-shot example whose output is the corrected verdict."""
    import hashlib as _hashlib

    from click.testing import CliRunner
    from ragas.config import DemonstrationConfig
    from ragas.dataset_schema import MetricAnnotation
    from ragas.embeddings.base import BaseRagasEmbeddings

    with warnings.catch_warnings():
        # The legacy metric is the one with train() (the collections one has none).
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.metrics import LLMContextPrecisionWithReference

    from annotator.cli import cli

    db = banking_file(tmp_path / "s.db")
    with Session(db) as session:
        truth = {c.text: session.labels("sample-reviewer")[c.id].verdict
                 for g in session.goldens() for c in g.chunks}
    out = tmp_path / "annotated.json"
    result = CliRunner().invoke(cli, ["export", str(db), "-f", "ragas-annotation", "-o", str(out)])
    assert result.exit_code == 0, result.output
    metric = LLMContextPrecisionWithReference()
    loaded = MetricAnnotation.from_json(str(out), metric_name=metric.name)
    assert len(loaded) == 80
    edited = [s for s in loaded[metric.name] if s.prompts["context_precision_prompt"].edited_output]
    assert len(edited) == 17  # the sample's judge mistakes: 7 too strict, 10 too loose

    class Embeddings(BaseRagasEmbeddings):  # deterministic, offline: no model is called
        def embed_query(self, text: str) -> list[float]:
            return [b / 255 for b in _hashlib.sha256(text.encode()).digest()[:16]]

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.embed_query(t) for t in texts]

        async def aembed_query(self, text: str) -> list[float]:
            return self.embed_query(text)

        async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.embed_documents(texts)

    metric.train(str(out), demonstration_config=DemonstrationConfig(embedding=Embeddings()))
    prompt: Any = metric.get_prompts()["context_precision_prompt"]
    examples = prompt.example_store._examples_list[-80:]
    assert {example.context: output.verdict for example, output in examples} == truth


def test_the_ragas_path_records_tokens_and_every_request(tmp_path: Path) -> None:
    session = session_with_one_golden(tmp_path)
    with FakeOpenAI() as server:
        # instructor retries a reply it cannot validate inside one call: two requests, one verdict.
        server.plan[CHUNKS[0]] = ["malformed"]
        stats = ours(session, server, "reference")
        usage = [server.completion(body, "", "stop")["usage"]["prompt_tokens"]
                 for _, body, _ in server.requests]
        sent = len(server.requests)
    calls = session.calls("ragas-reference")
    assert stats.tokens_in == sum(usage) == sum(c["tokens_in"] for c in calls) > 0
    assert stats.tokens_out == sum(c["tokens_out"] for c in calls) > 0
    assert stats.requests == sent == sum(c["requests"] for c in calls) > len(calls)


def test_a_model_ragas_cannot_read_stops_at_once_with_a_sentence(tmp_path: Path) -> None:
    db = banking_file(tmp_path / "b.db")
    with FakeOpenAI() as server:
        server.default = "malformed"  # every reply: RAGAS's instructor retries, then gives up
        done = subprocess.run(
            [sys.executable, "-m", "annotator", "judge", str(db), "--model", "m", "--prompt",
             "ragas", "--base-url", server.base_url, "--name", "weak", "--concurrency", "1"],
            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": "sk"})
        sent = len(server.requests)
    assert done.returncode == 2, done.stderr
    error = " ".join(done.stderr.split())
    assert "Stopped after 3 calls failed the same way, before any verdict: the reply is not the " \
           "JSON object RAGAS asks for (reason, verdict) (Invalid JSON" in error
    assert "in 4 attempts" in error and "--prompt builtin" in error
    # instructor's own log lines and exception dumps never reach the person
    assert "Max retries" not in done.stderr and "InstructorRetryException" not in done.stderr
    assert sent == 12  # 3 calls of RAGAS's 4 attempts, none repeated by our retries
