"""Judges a team would try: prompt files, examples from the calibration set, listwise requests,
cached tokens, dry runs, and the leaderboard comparing them honestly (through the real client
against the test server)."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from annotator.cli import cli
from annotator.columns import MISSING
from annotator.errors import SessionError
from annotator.formats import read_goldens
from annotator.judge import prompt_file, tokens
from annotator.judge.prompts import builtin, listwise
from annotator.judge.runner import RunOptions, RunStats, run_judge, windows
from annotator.judge.template import TemplatePrompt
from annotator.judge.transport import connect
from annotator.judge.types import JudgeSettings
from annotator.models import Price
from annotator.report.build import build_report
from annotator.report.leaderboard import build_leaderboard
from annotator.store.session import Session
from tests.conftest import ROOT, write_lines
from tests.fake_openai import FakeOpenAI, count_prompt, listed_chunks

SAMPLES = sorted((ROOT / "sample_sessions").glob("*.jsonl"))


def make_session(tmp_path: Path, goldens: int = 6, chunks: int = 5, name: str = "s") -> Session:
    """Goldens of ``chunks`` chunks with unique texts; every other one says 'useful'."""
    rows = [{"id": f"g{i}", "user_input": f"Question {i}?", "reference": f"Answer {i}.",
             "metadata": {"retriever": "bm25" if i % 2 else "dense"},
             "retrieved_contexts": [f"chunk {i}.{k} " + ("useful" if (i + k) % 2 else "noise")
                                    for k in range(chunks)]}
            for i in range(goldens)]
    path = write_lines(tmp_path / f"{name}.jsonl", rows)
    session = Session(tmp_path / f"{name}.db")
    session.import_goldens(read_goldens(path), path=str(path))
    return session


def judge(session: Session, server: FakeOpenAI, prompt: Any, name: str = "j",
          window: int | None = None, **options: Any) -> RunStats:
    settings = JudgeSettings(model="fake-model", prompt=prompt, base_url=server.base_url,
                             window=window if prompt.listwise else None)
    opts = RunOptions(**{"backoff_base": 0.01, "timeout": 5.0, **options})

    async def go() -> RunStats:
        async with connect("openai", server.base_url, "sk-test", concurrency=8) as client:
            return await run_judge(session, name, settings, client, opts, RunStats())

    return asyncio.run(go())


def label_all(session: Session, person: str = "alice",
              wrong: frozenset[int] | set[int] = frozenset()) -> None:
    """The person labels every chunk by its text ('useful' is 1), except ``wrong`` chunk ids."""
    for golden in session.goldens():
        for chunk in golden.chunks:
            truth = int("useful" in chunk.text)
            session.decide(person, chunk.id, 1 - truth if chunk.id in wrong else truth, "set")


MY_PROMPT = '''\
style = "pointwise"
system = """You judge chunks. Reply as JSON: {{"reason": "...", "verdict": 0 or 1}}."""
user = """Question: {question}
Answer: {reference}
Chunk: {chunk}
Rank: {rank}"""

[reply]
kind = "binary"

[sampling]
temperature = 0.2
max_tokens = 100
'''


def test_a_prompt_files_request_is_exactly_the_one_expected(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(MY_PROMPT)
    session = make_session(tmp_path, goldens=1, chunks=2)
    with FakeOpenAI() as server:
        out = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake-model",
                                       "--prompt-file", str(path), "--base-url", server.base_url],
                                 env={"OPENAI_API_KEY": "sk-test"})
        assert out.exit_code == 0, out.output
        assert "Judge 'fake-model-mine'" in out.output
        bodies = [body for _, body, _ in server.requests]
        # An edited file is another judge: refused under the old name, nothing stored.
        path.write_text(MY_PROMPT.replace("You judge chunks.", "You judge chunks carefully."))
        edited = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake-model",
                                          "--prompt-file", str(path), "--base-url",
                                          server.base_url], env={"OPENAI_API_KEY": "sk-test"})
        assert edited.exit_code != 0 and "has changed since" in edited.output, edited.output
        assert len(server.requests) == len(bodies)
    chunk = "chunk 0.0 noise"
    expected = {
        "model": "fake-model",
        "messages": [
            {"role": "system", "content": 'You judge chunks. Reply as JSON: {"reason": "...", '
                                          '"verdict": 0 or 1}.'},
            {"role": "user", "content": f"Question: Question 0?\nAnswer: Answer 0.\nChunk: "
                                        f"{chunk}\nRank: 1"}],
        "temperature": 0.2, "max_tokens": 100,
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "chunk_verdict", "strict": True,
            "schema": builtin().schema}},
        "logprobs": True, "top_logprobs": 5}
    first = next(b for b in bodies if chunk in b["messages"][-1]["content"])
    assert json.dumps(first, sort_keys=True) == json.dumps(expected, sort_keys=True)
    [stored] = session.judges()
    definition = json.loads(stored.prompt_text or "")
    assert definition["user"].startswith("Question: {question}")
    assert stored.prompt_id == "file:mine" and stored.parameters["temperature"] == 0.2


@pytest.mark.parametrize("style", ["builtin", "listwise"])
def test_a_builtin_shown_as_a_file_loads_back_to_the_same_requests(style: str) -> None:
    original: TemplatePrompt = {"builtin": builtin, "listwise": listwise}[style]()
    out = CliRunner().invoke(cli, ["prompts", "show", style])
    assert out.exit_code == 0
    loaded = prompt_file.parse(out.output, f"{style}.toml")
    question, answer = 'A "quoted" {question}?', "Answer with\nnewlines and {braces} 🏦"
    chunks = [(1, 'chunk [b]one[/b] "x"'), (2, "שלום")]
    if style == "listwise":
        assert loaded.list_messages(question, answer, chunks) == original.list_messages(
            question, answer, chunks)
        assert loaded.schema_for([1, 2]) == original.schema_for([1, 2])
    else:
        assert loaded.messages(question, answer, chunks[0][1]) == original.messages(
            question, answer, chunks[0][1])
        assert loaded.schema == original.schema
    assert loaded.style == original.style and loaded.reply == original.reply


BAD_FILES = [
    ('style = "pointwise"\nsystem = "x"\nuser = """unterminated\n', "line 3", "not valid TOML"),
    ('system = "x"\nuser = "{question} {chunk} {answer}"\n[reply]\nkind = "binary"\n',
     "line 2, 'user'", "unknown field {answer}"),
    ('system = "x"\nuser = "Question: {question}"\n[reply]\nkind = "binary"\n',
     "line 2, 'user'", "never shows {chunk}"),
    ('system = "x"\nuser = "{question} {chunk}"\n', "'reply'", "missing"),
    ('system = "x"\nuser = "{chunk}"\ncolour = "red"\n[reply]\nkind = "binary"\n',
     "line 3, 'colour'", "unknown key"),
    ('system = "x"\nuser = "{chunk}"\n[reply]\nkind = "graded"\nscale = 3\nthreshold = 5\n',
     "line 6, 'reply.threshold'", "1 to 3"),
    ('system = "x {chunk}"\nuser = "{chunk}"\n[reply]\nkind = "binary"\n',
     "line 1, 'system'", "unknown field {chunk}"),
    ('style = "listwise"\nsystem = "x"\nuser = "{question} {chunk}"\n[reply]\nkind = "binary"\n',
     "line 3, 'user'", "unknown field {chunk}"),
    ('system = "x"\nuser = "{chunk} {reference} {response}"\n[reply]\nkind = "binary"\n',
     "'user'", "both {reference} and {response}"),
    ('user = "{chunk}"\n[reply]\nkind = "binary"\n', "'system'", "missing"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "bad.toml", "nest thousands of levels deep"),
    ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", "bad.toml", "nest thousands of levels"),
]


@pytest.mark.parametrize(("text", "where", "what"), BAD_FILES)
def test_each_bad_prompt_file_is_its_own_sentence_and_stores_nothing(
        tmp_path: Path, text: str, where: str, what: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    session = make_session(tmp_path, goldens=1, chunks=2)
    session.close()
    before = (tmp_path / "s.db").read_bytes()
    with FakeOpenAI() as server:
        out = CliRunner().invoke(cli, ["judge", str(tmp_path / "s.db"), "--model", "m",
                                       "--prompt-file", str(path), "--base-url", server.base_url],
                                 env={"OPENAI_API_KEY": "sk-test"})
        assert not server.requests
    assert out.exit_code == 2, out.output
    assert str(path) in out.output and where in out.output and what in out.output
    assert "Traceback" not in out.output
    with Session(tmp_path / "s.db") as again:
        assert again.judges() == []
    assert (tmp_path / "s.db").read_bytes() == before
    check = CliRunner().invoke(cli, ["prompts", "check", str(path)])
    assert check.exit_code == 2 and what in check.output


def test_a_graded_reply_keeps_its_grade_and_thresholds_it(tmp_path: Path) -> None:
    """(And a prompt whose words ask for another scale than its reply kind is refused.)"""
    path = tmp_path / "graded.toml"
    graded = MY_PROMPT.replace('kind = "binary"', 'kind = "graded"\nscale = 3\nthreshold = 2')
    path.write_text(graded)  # its words still ask for 0 or 1: read as 0-3, all would be noise
    with pytest.raises(prompt_file.PromptFileError, match="the templates ask for 0 or 1"):
        prompt_file.load(path)
    path.write_text(graded.replace('"verdict": 0 or 1', '"grade": 0 to 3'))
    prompt = prompt_file.load(path)
    session = make_session(tmp_path, goldens=2, chunks=4)
    with FakeOpenAI() as server:
        stats = judge(session, server, prompt)
        body = server.requests[0][1]
    assert stats.judged == 8
    assert body["response_format"]["json_schema"]["schema"]["properties"]["grade"]["enum"] == [
        0, 1, 2, 3]
    rows = sqlite3.connect(session.path).execute(
        "SELECT c.text, v.verdict, v.grade, v.p_relevant FROM verdicts v JOIN chunks c "
        "ON c.id = v.chunk_id WHERE v.judge = 'j'").fetchall()
    for text, verdict, grade, p in rows:
        assert grade == (3 if "useful" in text else 0) and verdict == int(grade >= 2)
        assert p == pytest.approx(0.9 if verdict else 0.1)


# -- examples ------------------------------------------------------------------------------


def split_session(tmp_path: Path) -> Session:
    session = make_session(tmp_path, goldens=12, chunks=4)
    label_all(session)
    runner = CliRunner().invoke(cli, ["split", str(session.path), "--dev", "0.5", "--seed", "3"])
    assert runner.exit_code == 0, runner.output
    return session


def test_examples_come_only_from_dev_goldens_and_are_never_scored(tmp_path: Path) -> None:
    session = split_session(tmp_path)
    splits = session.splits()
    with FakeOpenAI() as server:
        plain = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake-model",
                                         "--name", "plain", "--base-url", server.base_url],
                                   env={"OPENAI_API_KEY": "k"})
        assert plain.exit_code == 0, plain.output
        out = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake-model",
                                       "--examples", "6", "--seed", "1",
                                       "--base-url", server.base_url],
                                 env={"OPENAI_API_KEY": "k"})
        assert out.exit_code == 0, out.output
        body = server.requests[-1][1]
        # A rerun shows the same examples (though a new judge has erred since): it resumes.
        asked = len(server.requests)
        again = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "fake-model",
                                         "--examples", "6", "--seed", "2",
                                         "--base-url", server.base_url],
                                   env={"OPENAI_API_KEY": "k"})
        assert again.exit_code == 0 and len(server.requests) == asked, again.output
        # ...and says so, with the way to other examples.
        assert "keeps the 6 examples it was shown" in again.stderr
        assert "--seed 2 draws nothing new" in again.stderr and "new --name" in again.stderr
    shown = session.judge_examples()["fake-model-builtin-ex6"]
    assert len(shown) == 6 and {splits[g] for g, _, _ in shown} == {"dev"}
    assert sorted(v for _, _, v in shown) == [0, 0, 0, 1, 1, 1]  # balanced
    # The examples are few-shot turns, before the chunk: system, 6 x (user, assistant), user.
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", *["user", "assistant"] * 6, "user"]
    replies = [json.loads(m["content"]) for m in body["messages"] if m["role"] == "assistant"]
    assert [r["verdict"] for r in replies] == [v for _, _, v in shown]
    seen = {g for g, _, _ in shown}
    board = build_leaderboard(session, resamples=0, split="all")
    assert board.excluded == len(seen) and any("left out" in line for line in board.headline)
    assert board.goldens == 12 - len(seen)
    test_board = build_leaderboard(session, resamples=0)  # the test split: nothing to exclude
    assert test_board.split == "test" and test_board.excluded == 0
    report = build_report(session, judge="fake-model-builtin-ex6", annotators=["alice"],
                          resamples=0)
    assert report.coverage.goldens == sum(1 for s in splits.values() if s == "test")
    assert any("test split only" in line for line in report.headline)
    row = next(r for r in board.judges if r.judge == "fake-model-builtin-ex6")
    assert row.calls.examples == 6


def test_a_test_golden_among_the_examples_fails_loudly(tmp_path: Path) -> None:
    session = split_session(tmp_path)
    with FakeOpenAI() as server:
        judge(session, server, builtin().with_examples([]), name="plain")
        from annotator.calibration.examples import draw_examples

        prompt = builtin().with_examples(draw_examples(session, 4, 0, "reference"))
        judge(session, server, prompt, name="taught")
    # The split drawn again: some example goldens are now in test.
    out = CliRunner().invoke(cli, ["split", str(session.path), "--dev", "0.5", "--seed", "99",
                                   "--replace"])
    assert out.exit_code == 0, out.output
    seen = {g for g, _, _ in session.judge_examples()["taught"]}
    assert any(session.splits()[g] == "test" for g in seen)
    with pytest.raises(SessionError, match=r"learned from .* now in the test split"):
        build_leaderboard(session, resamples=0)
    with pytest.raises(SessionError, match="learned from"):
        build_report(session, judge="taught", resamples=0)
    out = CliRunner().invoke(cli, ["judges", str(session.path), "--bootstrap", "0"])
    assert out.exit_code != 0 and "learned from" in out.output and "Traceback" not in out.output


def test_examples_without_a_split_are_refused_before_any_call(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    label_all(session)
    with FakeOpenAI() as server:
        out = CliRunner().invoke(cli, ["judge", str(session.path), "--model", "m",
                                       "--examples", "4", "--base-url", server.base_url],
                                 env={"OPENAI_API_KEY": "k"})
        assert not server.requests
    assert out.exit_code != 0 and "annotator split" in out.output
    assert session.judges() == []


# -- listwise ------------------------------------------------------------------------------


def test_listwise_judges_a_golden_in_one_call_stored_per_chunk(tmp_path: Path) -> None:
    session = make_session(tmp_path, goldens=4, chunks=5)
    with FakeOpenAI() as server:
        stats = judge(session, server, listwise())
        assert stats.judged == 20 and len(server.requests) == 4
        schema = server.requests[0][1]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["verdicts"]["minItems"] == 5
        tokens_sent = sum(count_prompt(b["messages"]) for _, b, _ in server.requests)
    calls = session.calls("j")
    assert len(calls) == 20 and all(c["error"] is None for c in calls)
    assert sum(c["tokens_in"] for c in calls) == tokens_sent  # split evenly, adding up
    for golden in session.goldens():
        verdicts = session.verdicts("j", [golden.id])
        for chunk in golden.chunks:
            assert verdicts[chunk.id].verdict == int("useful" in chunk.text)
            assert verdicts[chunk.id].p_relevant == pytest.approx(
                0.9 if "useful" in chunk.text else 0.1)
    # Every report works unchanged on listwise verdicts.
    label_all(session)
    assert build_report(session, judge="j", resamples=0).chunks.confusion.tp == 10


@pytest.mark.parametrize("fault", ["short_list", "repeat_rank", "truncated", "malformed"])
def test_a_listwise_reply_that_is_not_whole_stores_no_verdict_and_is_retried(
        tmp_path: Path, fault: str) -> None:
    session = make_session(tmp_path, goldens=2, chunks=5)
    first = session.goldens()[0]
    with FakeOpenAI() as server:
        server.plan[first.chunks[0].text] = [fault]  # wrong once, then right
        stats = judge(session, server, listwise(), max_retries=0)
        assert stats.gave_up == 5 and stats.judged == 5
        assert not session.verdicts("j", [first.id])  # never a partial golden
        errors = [c for c in session.calls("j") if c["error"]]
        assert len(errors) == 5 and {c["chunk_id"] for c in errors} == {
            c.id for c in first.chunks}
        if fault == "short_list":
            assert "4 verdicts for 5 chunks" in errors[0]["error"]
        if fault == "repeat_rank":
            assert "twice" in errors[0]["error"]
        again = judge(session, server, listwise())  # the next run asks that golden again
        assert (again.judged, again.skipped) == (5, 5)
    assert len(session.verdicts("j", [first.id])) == 5


def test_long_goldens_go_in_windows_that_must_agree_on_their_overlap(tmp_path: Path) -> None:
    assert windows(5, 8) == [range(5)]
    assert windows(12, 8) == [range(0, 8), range(4, 12)]
    assert windows(20, 8) == [range(0, 8), range(6, 14), range(12, 20)]
    session = make_session(tmp_path, goldens=2, chunks=12)
    flipped = session.goldens()[1]
    with FakeOpenAI() as server:
        # The second window of the second golden answers every chunk the other way.
        server.plan[flipped.chunks[4].text] = ["flip"]
        stats = judge(session, server, listwise(), window=8)
        assert stats.judged == 24 and len(server.requests) == 4
        sizes = sorted(len(listed_chunks(b) or []) for _, b, _ in server.requests)
        assert sizes == [8, 8, 8, 8]
    rows = sqlite3.connect(session.path).execute(
        "SELECT c.golden_id, c.rank, v.unstable FROM verdicts v JOIN chunks c ON c.id = "
        "v.chunk_id WHERE v.judge = 'j' AND v.unstable = 1").fetchall()
    assert sorted((g, r) for g, r, _ in rows) == [("g1", r) for r in range(5, 9)]
    assert [j.parameters["window"] for j in session.judges()] == [8]


# -- cost, caching, dry runs ----------------------------------------------------------------


def taught_session(tmp_path: Path, name: str, seed: int, also_listwise: bool = False
                   ) -> Session:
    """A split session judged, a call at a time on a server caching prompt prefixes, by the
    builtin prompt shown 4 dev examples (and, if asked, by a listwise judge 'lists')."""
    from annotator.calibration.examples import draw_examples

    session = split_session(tmp_path)
    prompt = builtin().with_examples(draw_examples(session, 4, seed, "reference"))
    with FakeOpenAI() as server:
        server.prefix_cache = True
        judge(session, server, prompt, name=name, concurrency=1)
        if also_listwise:
            judge(session, server, listwise(), name="lists")
    return session


def test_cached_prompt_tokens_are_stored_and_priced(tmp_path: Path) -> None:
    session = taught_session(tmp_path, "cached", seed=0)
    calls = session.calls("cached")
    assert calls[0]["tokens_cached"] == 0 and all(c["tokens_cached"] > 0 for c in calls[1:])
    summary = session.call_summary("cached")
    price = Price(1.0, 2.0, 0.1)
    board = build_leaderboard(session, resamples=0, split="all", prices={"cached": price})
    [row] = board.judges
    cost = (summary["tokens_in"] - summary["tokens_cached"]) * 1.0 + summary[
        "tokens_cached"] * 0.1 + summary["tokens_out"] * 2.0
    assert row.calls.figures["cost_per_1000_chunks"].value == pytest.approx(
        cost / 1e6 * 1000 / len(calls))
    assert row.calls.figures["cached_share"].value == pytest.approx(
        summary["tokens_cached"] / summary["tokens_in"])
    uncached = build_leaderboard(session, resamples=0, split="all",
                                 prices={"cached": Price(1.0, 2.0)})
    full = uncached.judges[0].calls.figures["cost_per_1000_chunks"].value
    assert full is not None and full > (row.calls.figures["cost_per_1000_chunks"].value or 0)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("style", ["builtin", "listwise"])
def test_a_dry_run_sends_nothing_and_counts_the_tokens_a_run_sends(
        tmp_path: Path, sample: Path, style: str) -> None:
    db = tmp_path / "s.db"
    assert CliRunner().invoke(cli, ["import", str(sample), "--session", str(db)]).exit_code == 0
    with FakeOpenAI() as server:
        args = ["judge", str(db), "--model", "m", "--prompt", style, "--base-url",
                server.base_url, "--price-in", "1", "--price-out", "2"]
        dry = CliRunner().invoke(cli, [*args, "--dry-run"], env={"OPENAI_API_KEY": "k"})
        assert dry.exit_code == 0, dry.output
        assert not server.requests and "Nothing was sent" in dry.output
        with Session(db) as session:
            assert "m-" + style not in {j.name for j in session.judges()}
        planned = number(r"prompt tokens\s+([\d,]+)", dry.output)
        calls = number(r"calls\s+([\d,]+)", dry.output)
        run = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "k"})
        assert run.exit_code == 0, run.output
        sent = sum(count_prompt(b["messages"]) for _, b, _ in server.requests)
        assert calls == len(server.requests)
        rough = sum(tokens.prompt_tokens(b["messages"], approximate=True)
                    for _, b, _ in server.requests)
    assert abs(planned - sent) / sent < 0.02  # exact encoding: only the chat overhead differs
    assert abs(rough - sent) / sent < 0.10  # the 4-characters rule without one


def number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, text
    return int(found[1].replace(",", ""))


def test_listwise_sends_well_under_half_the_pointwise_prompt_tokens() -> None:
    for sample in SAMPLES:
        point = sum(tokens.prompt_tokens(builtin().messages(g.user_input, g.reference or "",
                                                            c, r))
                    for g in read_goldens(sample) for r, c in enumerate(g.retrieved_contexts, 1))
        lists = sum(tokens.prompt_tokens(listwise().list_messages(
            g.user_input, g.reference or "", list(enumerate(g.retrieved_contexts, 1))))
            for g in read_goldens(sample))
        assert lists / point <= 0.40, (sample.name, lists / point)


# -- the leaderboard compares styles -----------------------------------------------------------


def test_a_cheaper_judge_with_the_same_errors_ranks_first_by_kappa_per_dollar(
        tmp_path: Path) -> None:
    session = make_session(tmp_path, goldens=10, chunks=5)
    golden_chunks = [c for g in session.goldens() for c in g.chunks]
    wrong = {golden_chunks[i].id for i in (1, 7, 12, 30)}
    label_all(session, wrong=wrong)  # the judges err on the same chunks: they read the texts
    with FakeOpenAI() as server:
        judge(session, server, builtin(), name="pointwise")
        judge(session, server, listwise(), name="listwise")
        server.plan.update({golden_chunks[i].text: ["flip"] for i in (2, 3, 4)})
        judge(session, server, builtin(), name="sloppy")
    for name in ("pointwise", "listwise", "sloppy"):
        session.set_price(name, Price(1.0, 4.0))
    board = build_leaderboard(session, resamples=0, sort="kappa_per_dollar")
    order = [row.judge for row in board.judges]
    assert order[0] == "listwise"
    by = {row.judge: row for row in board.judges}
    assert by["listwise"].stats["cohen_kappa"].value == pytest.approx(
        by["pointwise"].stats["cohen_kappa"].value)
    cheap = by["listwise"].calls.figures["cost_per_1000_chunks"].value
    assert cheap is not None and cheap < (
        by["pointwise"].calls.figures["cost_per_1000_chunks"].value or 0)
    assert "listwise" in by["listwise"].calls.style and by["pointwise"].calls.style == "builtin"
    # The judge-judge matrix is scikit-learn's kappa on the chunks both judged.
    frame = session.chunk_frame()
    said = {n: session.judge_columns(n, frame).verdict for n in ("pointwise", "listwise",
                                                                   "sloppy")}
    for pair in board.agreement:
        a, b = said[pair.first], said[pair.second]
        both = (a != MISSING) & (b != MISSING)
        if len(set(a[both])) == 1 and len(set(b[both])) == 1:
            continue
        assert pair.kappa.value == pytest.approx(cohen_kappa_score(a[both], b[both]))
        assert pair.chunks == int(both.sum())
    sloppy = next(p for p in board.agreement if {"pointwise", "sloppy"} == {p.first, p.second})
    assert sloppy.kappa.value is not None and sloppy.kappa.value < 1
    for fmt in ("table", "markdown", "csv", "json", "html"):
        out = CliRunner().invoke(cli, ["judges", str(session.path), "--bootstrap", "0",
                                       "--format", fmt, "--sort", "kappa_per_dollar"])
        assert out.exit_code == 0, out.output
        if fmt == "json":
            data = json.loads(out.output)
            assert len(data["judge_agreement"]) == 3 and data["judges"][0]["judge"] == "listwise"
        elif fmt == "csv":
            assert "kappa_with_sloppy" in out.output.splitlines()[0]
        else:
            assert "against each other" in out.output


def test_random_judges_agreement_matrix_matches_scikit_learn() -> None:
    from annotator.report.leaderboard import _judge_agreement

    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(5, 200))
        said = {f"j{i}": np.where(rng.random(n) < 0.1, MISSING,
                                  (rng.random(n) < rng.random()).astype(np.int8)).astype(np.int8)
                for i in range(3)}
        for pair in _judge_agreement(said, list(said)):
            a, b = said[pair.first], said[pair.second]
            both = (a != MISSING) & (b != MISSING)
            if len(set(a[both])) < 2 or len(set(b[both])) < 2:
                continue  # one class in either: kappa is undefined (the module says so)
            expected = cohen_kappa_score(a[both], b[both])
            assert pair.kappa.value == pytest.approx(expected)


def test_a_merge_keeps_each_judges_examples_and_new_columns(tmp_path: Path) -> None:
    from annotator.people.merge import merge_sessions

    taught_session(tmp_path, "taught", seed=2, also_listwise=True).close()
    copy = tmp_path / "copy.db"
    with Session(tmp_path / "s.db") as original:
        original.copy_to(copy)
        shown = original.judge_examples()
        cached = original.call_summary("taught")["tokens_cached"]
    merge_sessions([tmp_path / "s.db", copy], tmp_path / "team.db")
    with Session(tmp_path / "team.db") as team:
        assert team.judge_examples() == shown
        assert team.call_summary("taught")["tokens_cached"] == cached > 0
        [taught] = [j for j in team.judges() if j.name == "taught"]
        assert json.loads(taught.prompt_text or "")["examples"][0]["chunk"]
        assert build_leaderboard(team, resamples=0, split="all").excluded == len(
            {g for g, _, _ in shown["taught"]})


def test_prompts_lists_every_style_and_refuses_to_show_ragas() -> None:
    out = CliRunner().invoke(cli, ["prompts"])
    assert out.exit_code == 0
    for style in ("builtin", "listwise", "ragas"):
        assert style in out.output
    shown = CliRunner().invoke(cli, ["prompts", "show", "ragas"])
    assert shown.exit_code == 2 and "no template to show" in shown.output
    response = CliRunner().invoke(cli, ["prompts", "show", "builtin", "--against", "response"])
    assert prompt_file.parse(response.output, "r.toml").against == "response"
