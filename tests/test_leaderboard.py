"""The judge leaderboard: a simulated calibration study, Holm's correction, the command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from annotator.cli import cli
from annotator.report.leaderboard import build_leaderboard
from annotator.stats.multiple import holm, holm_rejects
from tests.test_report import make_session


def study(error_rates: dict[str, float], goldens: int = 100, k: int = 10, seed: int = 1
          ) -> list[dict[str, Any]]:
    """Goldens labelled by 'alice', and judges that err on a known share of chunks."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(goldens):
        human = (rng.random(k) < rng.uniform(0.2, 0.8)).astype(int)
        judges = {name: [{"verdict": int(1 - h if rng.random() < rate else h), "reason": "sim"}
                         for h in human] for name, rate in error_rates.items()}
        out.append({"id": f"g{i:03d}", "user_input": f"q{i}", "reference": "a",
                    "retrieved_contexts": [f"c{i}-{r}" for r in range(k)], "judges": judges,
                    "human_labels": {"alice": [int(h) for h in human]}})
    return out


def test_a_ten_point_gap_is_found_and_a_one_point_gap_is_not(tmp_path: Path) -> None:
    goldens = study({"good": 0.05, "poor": 0.15, "close": 0.06})
    with make_session(tmp_path, goldens) as session:
        board = build_leaderboard(session, resamples=1000, seed=3)
    order = [row.judge for row in board.judges]
    assert order[0] == "good" and order[-1] == "poor"
    pairs = {frozenset((p.first, p.second)): p for p in board.pairs}
    assert pairs[frozenset(("good", "poor"))].better == "good"  # 10 points: found
    assert pairs[frozenset(("close", "poor"))].better == "close"
    assert pairs[frozenset(("good", "close"))].better is None  # 1 point: not found
    assert board.best is None  # 'good' does not beat 'close' significantly
    assert any("No judge is right significantly more often" in line for line in board.headline)
    # Kappa per judge equals scikit-learn's on the same chunks, and the intervals are paired:
    # the kappa difference of good and poor has an interval excluding 0.
    human = [h for g in goldens for h in g["human_labels"]["alice"]]
    for row in board.judges:
        judge = [v["verdict"] for g in goldens for v in g["judges"][row.judge]]
        assert row.stats["cohen_kappa"].value == pytest.approx(cohen_kappa_score(human, judge))
    gap = pairs[frozenset(("good", "poor"))].kappa_difference
    assert gap.interval is not None and min(abs(x) for x in gap.interval) > 0
    assert gap.interval[0] * gap.interval[1] > 0


def test_best_needs_a_significant_win_over_every_other_judge(tmp_path: Path) -> None:
    with make_session(tmp_path, study({"good": 0.03, "poor": 0.2, "worse": 0.3})) as session:
        board = build_leaderboard(session, resamples=200)
    assert board.best == "good"
    assert board.headline[1].startswith("Best: 'good'")


STATSMODELS_HOLM = """
import gc, json, sys
from statsmodels.stats.multitest import multipletests
gc.collect = lambda *args: 0  # it collects on every call (below); the arithmetic is untouched
families = json.load(sys.stdin)
json.dump([[list(map(float, multipletests(p, method="holm")[1])),
            list(map(bool, multipletests(p, alpha=0.05, method="holm")[0]))] for p in families],
          sys.stdout)
"""
"""statsmodels' Holm on many families, in an interpreter of its own: multipletests calls
gc.collect() on every call since 0.15, which in the suite's heap costs a third of a second
(and 50 ms even in a fresh interpreter holding statsmodels: 26 s for these 500 calls), so the
collection is left out there."""


def test_holm_matches_statsmodels() -> None:
    rng = np.random.default_rng(0)
    families = [list(rng.random(int(rng.integers(1, 8))) ** 2) for _ in range(50)]
    families += [list(rng.random(int(rng.integers(1, 12))) ** 3) for _ in range(200)]
    done = subprocess.run([sys.executable, "-c", STATSMODELS_HOLM], input=json.dumps(families),
                          capture_output=True, text=True, check=True)
    for p, (adjusted, rejected) in zip(families, json.loads(done.stdout), strict=True):
        assert holm(p) == pytest.approx(adjusted)
        # Rejecting: statsmodels' step-down decisions, on random families too.
        assert holm_rejects(p) == rejected
    assert holm([None, 0.01, 0.04]) == [None, pytest.approx(0.02), pytest.approx(0.04)]


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html", "csv"])
def test_the_judges_command_in_every_format(tmp_path: Path, fmt: str) -> None:
    make_session(tmp_path, study({"a": 0.05, "b": 0.2}, goldens=20)).close()
    out = tmp_path / f"board.{fmt}"
    result = CliRunner().invoke(cli, ["judges", str(tmp_path / "s.db"), "--format", fmt,
                                      "--output", str(out), "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    if fmt in ("table", "markdown", "html"):
        words = " ".join(text.split())
        assert "a is better" in words
        # A pair is two lines in a table's cell: "a", then "vs b" below it.
        assert re.search(r"^a\s.*\n\s*vs b\b", text, re.MULTILINE) if fmt == "table" else \
            "a vs b" in words
    if fmt == "json":
        data = json.loads(text)
        assert [j["judge"] for j in data["judges"]] == ["a", "b"] and data["best"] == "a"
        assert data["judges"][0]["call_why_undefined"]["tokens_per_1000_chunks"].startswith(
            "imported")
    if fmt == "csv":
        assert text.splitlines()[0].startswith("judge,prompt,examples,cohen_kappa,cohen_kappa_low")
        assert len(text.splitlines()) == 3


def test_split_is_reproducible_and_the_leaderboard_scores_the_test_goldens(tmp_path: Path) -> None:
    goldens = study({"good": 0.05, "poor": 0.2}, goldens=40)
    make_session(tmp_path, goldens).close()
    db = str(tmp_path / "s.db")
    runner = CliRunner()
    result = runner.invoke(cli, ["judges", db, "--split", "test"])
    assert result.exit_code == 2 and "annotator split" in result.output
    result = runner.invoke(cli, ["split", db, "--dev", "0.25", "--seed", "4"])
    assert result.exit_code == 0 and "now has 10 dev and 30 test goldens" in result.output
    again = runner.invoke(cli, ["split", db, "--dev", "0.5", "--seed", "9"])
    assert "nothing changed" in again.output  # a split in use never changes by accident
    from annotator.scoring.splits import assign_splits
    from annotator.store.session import Session

    with Session(db) as session:
        splits = session.splits()
        # The same ids and seed give the same split, in any order.
        assert splits == assign_splits(list(reversed(session.golden_ids())), 0.25, 4)
        test = [g for g in goldens if splits[g["id"]] == "test"]
        board = build_leaderboard(session, resamples=0)  # the test split by default
        assert (board.split, board.goldens, board.chunks) == ("test", 30, 300)
        human = [h for g in test for h in g["human_labels"]["alice"]]
        for row in board.judges:
            judge = [v["verdict"] for g in test for v in g["judges"][row.judge]]
            assert row.stats["cohen_kappa"].value == pytest.approx(cohen_kappa_score(human, judge))
        dev = build_leaderboard(session, resamples=0, split="dev")
        assert dev.goldens == 10 and any("dev goldens" in line for line in dev.headline)
        assert build_leaderboard(session, resamples=0, split="all").goldens == 40
    redrawn = runner.invoke(cli, ["split", db, "--dev", "0.5", "--seed", "9", "--replace"])
    assert "now has 20 dev and 20 test goldens" in redrawn.output


def test_the_team_truth_is_gold_where_adjudicated_else_what_people_agree_on(tmp_path: Path) -> None:
    goldens = study({"j": 0.1}, goldens=6, k=4)
    for g in goldens:
        g["human_labels"]["bob"] = list(g["human_labels"]["alice"])
    goldens[0]["human_labels"]["bob"][0] ^= 1  # two disagreements
    goldens[1]["human_labels"]["bob"][2] ^= 1
    with make_session(tmp_path, goldens) as session:
        board = build_leaderboard(session, resamples=0)
        assert (board.truth.pending, board.chunks, board.goldens) == (2, 22, 4)
        first = session.chunk_ids()["g000"][0]
        session.set_gold(first, goldens[0]["human_labels"]["bob"][0], "carol")
        board = build_leaderboard(session, resamples=0)
        assert (board.truth.adjudicated, board.truth.pending, board.chunks) == (1, 1, 23)
        assert board.truth.at([first]) == [goldens[0]["human_labels"]["bob"][0]]
        assert any("1 where people disagree await adjudication" in line for line in board.headline)
        alice = build_leaderboard(session, resamples=0, annotator="alice")
        assert alice.chunks == 24 and alice.truth.source == "alice"


def test_a_stratified_split_splits_every_system_in_the_same_proportion(tmp_path: Path) -> None:
    goldens = study({"j": 0.1}, goldens=40, k=3)
    for i, g in enumerate(goldens):
        g["metadata"] = {"retriever": "bm25" if i < 10 else "dense"}  # 10 and 30 goldens
    make_session(tmp_path, goldens).close()
    db = str(tmp_path / "s.db")
    result = CliRunner().invoke(cli, ["split", db, "--dev", "0.5", "--seed", "2",
                                      "--stratify", "retriever"])
    assert result.exit_code == 0, result.output
    from annotator.store.session import Session

    with Session(db) as session:
        splits = session.splits()
    dev = {"bm25": 0, "dense": 0}
    for g in goldens:
        dev[g["metadata"]["retriever"]] += splits[g["id"]] == "dev"
    assert dev == {"bm25": 5, "dense": 15}
    bad = CliRunner().invoke(cli, ["split", db, "--seed", "2", "--stratify", "nope", "--replace"])
    assert bad.exit_code == 2 and "no golden has a metadata value 'nope'" in bad.output


def test_with_no_chunk_judged_by_all_each_pair_is_scored_on_the_chunks_it_shares(
        tmp_path: Path) -> None:
    goldens = study({"a": 0.05, "b": 0.2, "c": 0.1}, goldens=100)
    judged_by = {"a": range(0, 60), "b": range(40, 100), "c": [*range(0, 20), *range(80, 100)]}
    for i, g in enumerate(goldens):
        g["judges"] = {n: v for n, v in g["judges"].items() if i in judged_by[n]}
    with make_session(tmp_path, goldens) as session:
        board = build_leaderboard(session, resamples=200)
    assert board.pairwise and board.chunks == 0
    assert "no chunk carries a verdict from every judge" in board.headline[0]

    def on(indices: Iterable[int]) -> tuple[list[int], dict[str, list[int]]]:
        picked = [goldens[i] for i in indices]
        human = [h for g in picked for h in g["human_labels"]["alice"]]
        every = set.intersection(*(set(g["judges"]) for g in picked))
        return human, {n: [v["verdict"] for g in picked for v in g["judges"][n]] for n in every}

    for row in board.judges:  # each judge on its own chunks, as scikit-learn scores them
        human, said = on(judged_by[row.judge])
        assert row.chunks == len(human) and row.goldens == len(judged_by[row.judge])
        assert row.stats["cohen_kappa"].value == pytest.approx(
            cohen_kappa_score(human, said[row.judge]))
    pairs = {(p.first, p.second): p for p in board.pairs}
    for (first, second), shared in ((("a", "b"), range(40, 60)), (("a", "c"), range(0, 20)),
                                    (("b", "c"), range(80, 100))):
        human, said = on(shared)
        pair = pairs[(first, second)]
        right = {n: [s == h for s, h in zip(said[n], human, strict=True)] for n in said}
        assert pair.chunks == len(human) == 200
        assert pair.first_only_right == sum(a and not b for a, b in
                                            zip(right[first], right[second], strict=True))
        assert pair.kappa_difference.value == pytest.approx(
            cohen_kappa_score(human, said[first]) - cohen_kappa_score(human, said[second]))
    result = CliRunner().invoke(cli, ["judges", str(tmp_path / "s.db"), "--bootstrap", "0"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "each pair on the chunks both judged" in " ".join(result.stdout.split())


def test_judges_without_verdicts_are_no_default_and_can_be_removed(tmp_path: Path) -> None:
    from annotator.models import Judge
    from annotator.report.build import choose_judge
    from annotator.store.session import Session

    make_session(tmp_path, study({"a": 0.05}, goldens=20)).close()
    db = str(tmp_path / "s.db")
    with Session(db) as session:  # what a failed run of an older version left behind
        session.define_judge(Judge("empty", "m", None, "builtin", None, {}))
        assert session.judge_verdict_counts() == {"a": 200, "empty": 0}
        assert choose_judge(session, None) == "a"
        board = build_leaderboard(session, resamples=0)
    assert [row.judge for row in board.judges] == ["a"] and board.left_out == ["empty"]
    assert any("Left out, with no verdict yet: 'empty'" in line for line in board.headline)
    report = CliRunner().invoke(cli, ["report", db, "--bootstrap", "0"])
    assert report.exit_code == 0 and "Judge 'a' against alice" in report.stdout
    removed = CliRunner().invoke(cli, ["remove-judge", db, "empty", "--annotator", "carol"])
    assert removed.exit_code == 0, removed.output
    assert "Removed judge 'empty' and its 0 stored calls" in removed.stdout
    unknown = CliRunner().invoke(cli, ["remove-judge", db, "nope"])
    assert unknown.exit_code == 2 and "no judge named 'nope' (judges: a)" in unknown.stderr
    with Session(db) as session:
        assert [j.name for j in session.judges()] == ["a"]
        [event] = [e for e in session.events() if e["kind"] == "remove_judge"]
        assert event["annotator"] == "carol" and event["payload"] == {
            "judge": "empty", "calls": 0, "verdicts": 0}
        chunk = session.goldens()[0].chunks[0].id
        session.decide("bob", chunk, 1, "accept", judge="a", shown_verdict=1)
    refused = CliRunner().invoke(cli, ["remove-judge", db, "a"])
    assert refused.exit_code == 2
    assert "Judge 'a' is not removed: people decided chunks while reviewing" in refused.stderr
    assert "alice" not in refused.stderr and "bob (1)" in refused.stderr
    with Session(db) as session:
        assert session.judge_verdict_counts() == {"a": 200}


def test_judge_names_are_never_split_in_a_narrow_terminal(tmp_path: Path) -> None:
    names = ["fake-judge-builtin", "gpt-4o-mini-listwise-ex8", "llama3.1-8b-instruct-q4"]
    make_session(tmp_path, study(dict.fromkeys(names, 0.1), goldens=20)).close()
    result = CliRunner().invoke(cli, ["judges", str(tmp_path / "s.db"), "--bootstrap", "50"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    for name in names:  # each row's name whole on one line, in every table that lists judges
        rows = [line for line in lines if line.lstrip().startswith(name[:8])]
        assert rows and all(name in line for line in rows), (name, rows)


def test_the_flip_rate_hint_is_a_command_that_measures_it(tmp_path: Path) -> None:
    import os
    import shlex

    from tests.conftest import banking_file
    from tests.fake_openai import FakeOpenAI

    db = banking_file(tmp_path / "b.db")
    runner = CliRunner()
    with FakeOpenAI() as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        judged = runner.invoke(cli, ["judge", str(db), "--model", "fake", "--base-url",
                                     server.base_url, "--name", "live"], env=env)
        assert judged.exit_code == 0, judged.output

        def flip_reason(name: str) -> str | None:
            done = runner.invoke(cli, ["judges", str(db), "--format", "json", "--bootstrap",
                                       "0"])
            [row] = [r for r in json.loads(done.stdout)["judges"] if r["judge"] == name]
            reason: str | None = row["call_why_undefined"].get("flip_rate")
            return reason

        assert "its verdicts were imported" in (flip_reason("sample-judge") or "")
        [hint] = re.findall(r"'(annotator judge [^']*)'", flip_reason("live") or "")
        assert runner.invoke(cli, shlex.split(hint)[1:], env=env).exit_code == 0  # as printed
        assert flip_reason("live") is None  # measured now
