"""Gullibility probes: noise chunks made to fool a judge, judged with its own settings, kept
apart from every statistic and export."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.formats import read_goldens
from annotator.scoring.probes import INSTRUCTION, KINDS, probe_rates
from annotator.store.session import Session
from tests.conftest import write_lines
from tests.fake_openai import FakeOpenAI, question_of

GOLDENS = 12


def keyword_judge(body: dict[str, Any], text: str) -> int:
    """A gullible judge: useful whenever a word of the question (five letters or more) is in
    the chunk."""
    words = {w for w in re.findall(r"\w+", question_of(body).lower()) if len(w) >= 5}
    return int(bool(words & set(re.findall(r"\w+", text.lower()))))


def probed_study(tmp_path: Path) -> Path:
    """Goldens whose questions share no word with any other golden's chunks, labelled by a
    person, so the report and exports have something to say."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(GOLDENS):
        mine = f"zorb{i}x"
        chunks = [f"The {mine} setting doubles throughput.", f"Plain filler text number {i}.",
                  f"Unrelated remark {i} about weather and lunch, and other matters entirely "
                  "beside the point of anything asked here, at some length to be the longest."]
        rows.append({"id": f"g{i:02d}", "user_input": f"How does {mine} change speed?",
                     "reference": f"{mine} doubles it.", "retrieved_contexts": chunks,
                     "metadata": {"retriever": "bm25" if i % 2 else "dense"},
                     "human_labels": {"ann": [1, 0, 0]}})
    path = write_lines(tmp_path / "g.jsonl", rows)
    db = tmp_path / "s.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(path), path=str(path))
    return db


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def test_a_keyword_judge_is_caught_on_stuffed_probes_and_not_on_padded(tmp_path: Path) -> None:
    db = probed_study(tmp_path)
    with FakeOpenAI() as server:
        server.decide = keyword_judge
        judged = invoke("judge", str(db), "--model", "fake-model", "--base-url", server.base_url,
                        "--name", "kw")
        assert judged.exit_code == 0, judged.output
        own_requests = [body for _, body, _ in server.requests]
        report_before = json.loads(invoke("report", str(db), "--format", "json",
                                          "--bootstrap", "50").output)
        board_before = json.loads(invoke("judges", str(db), "--format", "json",
                                         "--bootstrap", "50").output)
        export_before = invoke("export", str(db), "--format", "jsonl").output
        with Session(db) as session:
            chunks_before, calls_before = session.count_chunks(), len(session.calls("kw"))

        out = invoke("probe", str(db), "--judge", "kw", "--goldens", str(GOLDENS))
        assert out.exit_code == 0, out.output
        assert f"{3 * GOLDENS} probes made for {GOLDENS} goldens" in out.output
        probe_requests = [body for _, body, _ in server.requests[len(own_requests):]]
        assert len(probe_requests) == 3 * GOLDENS
        # The judge's own settings, as stored: model, sampling, the same system message.
        for body in probe_requests:
            assert (body["model"], body["temperature"], body["max_tokens"]) == (
                own_requests[0]["model"], own_requests[0]["temperature"],
                own_requests[0]["max_tokens"])
            assert body["messages"][0] == own_requests[0]["messages"][0]

        with Session(db) as session:
            rates = probe_rates(session, "kw")["kw"]
            assert {k: (r.probes, r.useful) for k, r in rates.items()} == {
                "stuffed": (GOLDENS, GOLDENS), "instruction": (GOLDENS, 0),
                "padded": (GOLDENS, 0)}
            assert rates["stuffed"].rate.value == 1.0 and rates["padded"].rate.value == 0.0
            probes = session.probes()
            for probe in probes:
                golden = session.golden(probe.golden_id)
                longest = max(len(c.text) for c in golden.chunks)
                assert all(probe.text != c.text for c in golden.chunks)
                if probe.kind == "padded":
                    assert len(probe.text) >= longest
                if probe.kind == "instruction":
                    assert probe.text.endswith(INSTRUCTION)
            # Nothing else changed: no chunk, no call, no verdict was added.
            assert (session.count_chunks(), len(session.calls("kw"))) == (chunks_before,
                                                                          calls_before)
        assert "called 12 of 12 stuffed probes useful (100%" in out.output

        # A rerun makes no probe and sends nothing.
        sent = len(server.requests)
        again = invoke("probe", str(db), "--judge", "kw", "--goldens", str(GOLDENS))
        assert again.exit_code == 0 and "0 probes made" in again.output
        assert "36 probes already there" in again.output and len(server.requests) == sent

    report_after = json.loads(invoke("report", str(db), "--format", "json", "--bootstrap",
                                     "50").output)
    assert without(report_after, "probes", "headline") == without(report_before, "probes",
                                                                  "headline")
    assert report_after["headline"][:-1] == report_before["headline"]
    assert report_after["probes"]["stuffed"]["fp_rate"] == 1.0
    assert invoke("export", str(db), "--format", "jsonl").output == export_before
    board_after = json.loads(invoke("judges", str(db), "--format", "json", "--bootstrap",
                                    "50").output)
    [row] = board_after["judges"]
    assert row["probes"]["stuffed"]["useful"] == GOLDENS
    assert [without(r, "probes") for r in board_after["judges"]] == [
        without(r, "probes") for r in board_before["judges"]]
    table = CliRunner().invoke(cli, ["judges", str(db), "--bootstrap", "0"],
                               terminal_width=200).output
    assert "Gullibility probes" in table and "stuffed" in table
    csv = invoke("judges", str(db), "--format", "csv", "--bootstrap", "0").output
    header, line = csv.splitlines()[:2]
    cells = dict(zip(header.split(","), line.split(","), strict=True))
    assert cells["probe_stuffed"] == "1.0" and cells["probe_padded"] == "0.0"


def test_a_listwise_judge_is_probed_listwise_and_keeps_only_the_probes_verdict(
        tmp_path: Path) -> None:
    db = probed_study(tmp_path)
    with FakeOpenAI() as server:
        server.decide = keyword_judge
        assert invoke("judge", str(db), "--model", "fake-model", "--base-url",
                      server.base_url, "--prompt", "listwise", "--name", "lw").exit_code == 0
        own = len(server.requests)
        with Session(db) as session:
            verdicts_before = len(session.calls("lw"))
        out = invoke("probe", str(db), "--kinds", "stuffed,padded", "--goldens", "4")
        assert out.exit_code == 0, out.output
        bodies = [body for _, body, _ in server.requests[own:]]
        assert len(bodies) == 8
        # Each request lists the golden's own chunks, then the probe as the last rank.
        for body in bodies:
            user = body["messages"][-1]["content"]
            listed = json.loads(user.partition("\n\nFor each of the")[0])["chunks"]
            assert [c["rank"] for c in listed] == [1, 2, 3, 4]
        with Session(db) as session:
            assert len(session.calls("lw")) == verdicts_before
            rates = probe_rates(session)["lw"]
            assert {k: (r.probes, r.useful) for k, r in rates.items()} == {
                "stuffed": (4, 4), "padded": (4, 0)}


def test_probes_are_made_again_the_same_way_and_bad_kinds_are_sentences(tmp_path: Path
                                                                         ) -> None:
    from annotator.scoring.probes import add_probes

    texts = []
    for n in range(2):
        db = probed_study(tmp_path / str(n))
        with Session(db) as session:
            if n:  # a few first, the rest later: each probe is made the same way regardless
                add_probes(session, goldens=5, per_golden=1, kinds=["padded"], seed=4)
            add_probes(session, goldens=5, per_golden=2, kinds=KINDS, seed=4)
            texts.append([(p.golden_id, p.kind, p.number, p.text) for p in session.probes()])
    assert texts[0] == texts[1] and len(texts[0]) == 5 * 3 * 2
    with FakeOpenAI() as server:
        db = probed_study(tmp_path / "bad")
        invoke("judge", str(db), "--model", "fake-model", "--base-url", server.base_url)
        bad = CliRunner().invoke(cli, ["probe", str(db), "--kinds", "stuffed,sneaky"])
        assert bad.exit_code == 2 and "No probe kind 'sneaky'" in bad.output
        assert "stuffed, instruction, padded" in bad.output
        with Session(db) as session:
            assert session.probes() == []  # a refused command makes nothing


def test_a_server_that_refuses_stops_at_once_and_names_the_cause(tmp_path: Path) -> None:
    db = probed_study(tmp_path)
    with FakeOpenAI() as server:
        invoke("judge", str(db), "--model", "fake-model", "--base-url", server.base_url)
        server.default = "404"
        out = CliRunner().invoke(cli, ["probe", str(db), "--goldens", "6"])
        assert out.exit_code != 0
        assert "HTTP 404" in out.output and "fake-model" in out.output
        assert len(server.requests) < 3 * 6 + 12 * 3  # stopped, not every probe tried
        with Session(db) as session:
            assert probe_rates(session) == {}


def test_a_session_of_one_golden_cannot_be_probed(tmp_path: Path) -> None:
    rows = [{"id": "only", "user_input": "Q?", "reference": "A.", "retrieved_contexts": ["x"]}]
    path = write_lines(tmp_path / "g.jsonl", rows)
    db = tmp_path / "s.db"
    with Session(db) as session:
        session.import_goldens(read_goldens(path), path=str(path))
    from annotator.errors import SessionError
    from annotator.scoring.probes import add_probes

    with Session(db) as session, pytest.raises(SessionError, match="at least two goldens"):
        add_probes(session, goldens=1, per_golden=1, kinds=KINDS, seed=0)


def test_a_merge_keeps_every_probe_and_call_once_and_refuses_two_texts_for_one(
        tmp_path: Path) -> None:
    db = probed_study(tmp_path)
    copy, other = tmp_path / "copy.db", tmp_path / "other.db"
    with FakeOpenAI() as server:
        server.decide = keyword_judge
        invoke("judge", str(db), "--model", "fake-model", "--base-url", server.base_url,
               "--name", "kw")
        with Session(db) as session:
            session.copy_to(other)
        assert invoke("probe", str(db), "--goldens", "6").exit_code == 0
        with Session(db) as session:
            session.copy_to(copy)
        assert invoke("probe", str(copy), "--goldens", "12").exit_code == 0
        assert invoke("probe", str(other), "--goldens", "12", "--seed", "1").exit_code == 0
    merged = tmp_path / "merged.db"
    out = invoke("merge", str(db), str(copy), "--output", str(merged))
    assert out.exit_code == 0, out.output
    with Session(copy) as session:
        expected = ([(p.golden_id, p.kind, p.number, p.text) for p in session.probes()],
                    probe_rates(session), len(session.probes_answered("kw")))
    with Session(merged) as session:
        assert ([(p.golden_id, p.kind, p.number, p.text) for p in session.probes()],
                probe_rates(session), len(session.probes_answered("kw"))) == expected
        calls = session.conn.execute("SELECT count(*) FROM probe_calls").fetchone()[0]
        assert calls == 36  # the six goldens' calls in both files are one each
    clash = CliRunner().invoke(cli, ["merge", str(db), str(other), "--output",
                                     str(tmp_path / "no.db")])
    assert clash.exit_code == 2 and "differs between" in clash.output and "--seed" in clash.output
    assert not (tmp_path / "no.db").exists()
