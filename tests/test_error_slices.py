"""Where the judge errs: error rates by rank, chunk length, overlap with the question and
system, and the slices that stand out named in the headline."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.cli import cli
from annotator.formats import read_goldens
from annotator.lexical import content_words, overlap
from annotator.report.build import build_report
from annotator.stats.multiple import holm_rejects as holm
from annotator.stats.slices import quartile_bins, rank_bins, wald_p
from annotator.store.session import Session
from tests.conftest import write_lines

FILLER = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed"]


def sliced_study(tmp_path: Path, *, fooled_by: str, goldens: int = 300, seed: int = 3
                 ) -> tuple[Session, list[dict[str, Any]]]:
    """Goldens of 8 chunks whose length and overlap with the question vary independently of
    rank and of each other; people's labels are random; the judge copies them except where
    ``fooled_by`` ('long' chunks, or 'nothing') makes it call a noise chunk useful."""
    rng = random.Random(seed)
    rows = []
    for g in range(goldens):
        question_words = [f"topic{g}a", f"topic{g}b", f"topic{g}c", f"topic{g}d"]
        chunks, human, judge = [], [], []
        for _ in range(8):
            long = rng.random() < 0.25
            shared = rng.sample(question_words, rng.randint(0, 4))
            words = shared + rng.choices(FILLER, k=(120 if long else rng.randint(5, 30)))
            rng.shuffle(words)
            chunks.append(" ".join(words))
            label = rng.randint(0, 1)
            human.append(label)
            judge.append(1 if fooled_by == "long" and long and label == 0 else label)
        rows.append({"id": f"g{g}", "user_input": "What about " + " ".join(question_words) + "?",
                     "reference": "An answer.", "retrieved_contexts": chunks,
                     "metadata": {"retriever": rng.choice(["bm25", "dense"])}, "judge": "j",
                     "judge_verdicts": [{"verdict": v} for v in judge],
                     "human_labels": {"ann": human}})
    path = write_lines(tmp_path / "g.jsonl", rows)
    session = Session(tmp_path / "s.db")
    session.import_goldens(read_goldens(path), path=str(path))
    return session, rows


def test_a_judge_fooled_by_long_chunks_is_flagged_there_and_nowhere_else(tmp_path: Path) -> None:
    session, rows = sliced_study(tmp_path, fooled_by="long")
    report = build_report(session, resamples=400)
    errors = report.errors
    assert errors is not None
    assert {s.dimension for s in errors.slices} == {"rank", "length", "overlap", "retriever"}
    higher = [(s.dimension, s.label) for s in errors.slices
              for finding in (s.fp_finding, s.fn_finding) if finding == "higher"]
    longest = [s for s in errors.slices if s.dimension == "length"][-1]
    assert higher == [("length", longest.label)]
    assert longest.last and longest.fp_finding == "higher" and longest.fn_finding is None
    # Nothing outside the length slices differs beyond chance; the shorter lengths are better.
    assert all(s.fp_finding is None and s.fn_finding is None
               for s in errors.slices if s.dimension != "length")
    assert any(line.startswith("The judge calls long chunks") and longest.label in line
               for line in report.headline), report.headline
    # The longest slice's rate equals a direct count over its chunks.
    low = int(longest.label.split("-")[0].replace(",", ""))
    noise = [(j, len(text)) for row in rows
             for text, h, j in zip(row["retrieved_contexts"], row["human_labels"]["ann"],
                                   [v["verdict"] for v in row["judge_verdicts"]], strict=True)
             if h == 0]
    inside = [j for j, n in noise if n >= low]
    outside = [j for j, n in noise if n < low]
    assert longest.fp_rate.value == pytest.approx(sum(inside) / len(inside))
    assert longest.fp_rest.value == pytest.approx(sum(outside) / len(outside))
    assert longest.fp_rate.interval is not None and longest.fp_rate.value is not None
    assert longest.fp_rate.interval[0] <= longest.fp_rate.value <= longest.fp_rate.interval[1]


def test_a_judge_that_copies_people_is_flagged_nowhere(tmp_path: Path) -> None:
    session, _ = sliced_study(tmp_path, fooled_by="nothing")
    report = build_report(session, resamples=200)
    assert report.errors is not None
    assert all(s.fp_finding is None and s.fn_finding is None for s in report.errors.slices)
    assert all(s.fp_rate.value in (0.0, None) for s in report.errors.slices)
    assert not any("too often" in line for line in report.headline)


def test_random_judges_find_a_slice_by_luck_rarely(tmp_path: Path) -> None:
    # A judge guessing at random errs alike everywhere: Holm's correction keeps the chance of
    # any finding near 5%, where twenty-odd uncorrected tests would find one most times.
    rng = np.random.default_rng(0)
    lucky = 0
    for _ in range(20):
        rank = np.tile(np.arange(1, 9), 150)
        human = rng.integers(0, 2, len(rank))
        judge = rng.integers(0, 2, len(rank))
        replicates = []
        for _ in range(200):
            take = rng.integers(0, 150, 150)
            rows = (take[:, None] * 8 + np.arange(8)).ravel()
            replicates.append((rank[rows], human[rows], judge[rows]))
        pvalues = []
        for k in range(1, 9):
            def fp_gap(r: np.ndarray, h: np.ndarray, j: np.ndarray, k: int = k) -> float:
                inside, outside = (r == k) & (h == 0), (r != k) & (h == 0)
                return float(j[inside].mean() - j[outside].mean())

            pvalues.append(wald_p(fp_gap(rank, human, judge), np.asarray(
                [fp_gap(*rep) for rep in replicates])))
        lucky += any(holm(pvalues))
    assert lucky <= 3


def test_holm_rejects_step_down_and_ignores_untested() -> None:
    assert holm([0.01, 0.04, None, 0.03]) == [True, False, False, False]
    assert holm([0.001, 0.012, 0.02]) == [True, True, True]  # 0.001<0.05/3, 0.012<0.025, 0.02<0.05
    assert holm([0.2, None]) == [False, False]
    assert holm([]) == []


def test_wald_p_is_the_normal_two_sided_p() -> None:
    from scipy.stats import norm

    rng = np.random.default_rng(1)
    reps = rng.normal(0.1, 0.05, 5000)
    assert wald_p(0.1, reps) == pytest.approx(2 * norm.sf(0.1 / reps.std(ddof=1)))
    assert wald_p(0.1, np.full(10, 0.1)) is None  # no spread: nothing to test with
    assert wald_p(0.1, np.asarray([np.nan, 0.2])) is None


def test_slices_keep_ties_together_and_label_their_ranges() -> None:
    bins = quartile_bins(np.asarray([0, 0, 0, 0, 0, 0.5, 1.0, np.nan]), lambda x: f"{x:.0%}",
                         "of the question's words")
    # The first three quartiles fall at 0, 0 and 0.25: the zeros are one slice, the rest one.
    assert bins.labels == ["0% of the question's words", "50%-100% of the question's words"]
    assert bins.code.tolist() == [0, 0, 0, 0, 0, 1, 1, -1]
    lengths = np.arange(1, 101, dtype=float)
    assert quartile_bins(lengths, lambda x: f"{x:,.0f}", "chars").labels == [
        "1-25 chars", "26-50 chars", "51-75 chars", "76-100 chars"]
    ranks = rank_bins(np.asarray([1, 2, 3, 4, 5, 9, 30]))
    assert ranks.labels == ["rank 1", "rank 2", "rank 3", "ranks 4-5", "ranks 6-10", "ranks 21+"]
    assert ranks.code.tolist() == [0, 1, 2, 3, 3, 4, 5]


def test_overlap_counts_the_questions_content_words() -> None:
    words = content_words("What is the minimum balance of a rural account?")
    assert words == {"minimum", "balance", "rural", "account"}
    assert overlap(words, "The RURAL account: no minimum.") == 0.75
    assert np.isnan(overlap(content_words("What is it?"), "anything"))
    assert overlap(words, "[b]minimum[/b] 🙂 حساب") == 0.25  # markup-like text is only text


def test_the_report_shows_the_slices_in_every_format(tmp_path: Path) -> None:
    session, _ = sliced_study(tmp_path, fooled_by="long", goldens=120)
    db = str(session.path)
    session.close()
    run = CliRunner()
    data = json.loads(run.invoke(cli, ["report", db, "--format", "json", "--bootstrap", "200"]
                                 ).output)["errors"]
    assert data["tests"] > 0
    lengths = [s for s in data["slices"] if s["dimension"] == "length"]
    assert lengths[-1]["fp_finding"] == "higher" and len(lengths[-1]["ci95"]["fp_rate"]) == 2
    table = run.invoke(cli, ["report", db, "--bootstrap", "200"], terminal_width=200).output
    assert "Where the judge errs" in table and lengths[-1]["slice"] in table
    html = tmp_path / "r.html"
    assert run.invoke(cli, ["report", db, "--format", "html", "--bootstrap", "100", "--output",
                            str(html)]).exit_code == 0
    page = html.read_text()
    assert 'id="errors"' in page and 'id="chart-error-slices"' in page
    untested = json.loads(run.invoke(cli, ["report", db, "--format", "json", "--bootstrap", "0"]
                                     ).output)["errors"]
    assert untested["tests"] == 0 and not any(s["fp_finding"] for s in untested["slices"])


@given(st.text(alphabet=st.sampled_from(list("ab Ab.-_1é文 ")), max_size=30),
       st.text(alphabet=st.sampled_from(list("ab Ab.-_1é文 ")), max_size=60))
@settings(max_examples=400, deadline=None)
def test_overlap_counts_whole_words_exactly_as_splitting_does(question: str, text: str) -> None:
    words = content_words(question)
    expected = (len(words & set(re.findall(r"\w+", text.lower()))) / len(words) if words
                else math.nan)
    got = overlap(words, text)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_a_word_character_is_what_re_calls_one_in_every_code_point() -> None:
    from annotator.lexical import _is_word_char

    word = re.compile(r"\w")
    assert all(bool(word.match(c)) == _is_word_char(c) for c in map(chr, range(0x110000)))
