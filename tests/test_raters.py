"""Agreement among several people, against krippendorff, statsmodels and scikit-learn."""

from __future__ import annotations

import json
import warnings
from itertools import combinations
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotator.cli import cli
from annotator.report.build import build_report
from annotator.stats.bootstrap import ClusterSums, Estimates
from annotator.stats.raters import RaterAgreement, add_rater_columns, rater_agreement
from tests.test_report import make_session


def agreement(ratings: np.ndarray, judge: np.ndarray | None = None, k: int = 5,
              resamples: int = 0) -> RaterAgreement:
    cluster = np.arange(ratings.shape[1]) // k
    sums = ClusterSums(int(cluster.max()) + 1)
    people = [f"p{i}" for i in range(ratings.shape[0])]
    columns = add_rater_columns(sums, people, ratings, cluster, None if judge is None else "j",
                                judge)
    return rater_agreement(Estimates(sums, resamples, 0, None), columns)


def random_ratings(rng: np.random.Generator, raters: int, chunks: int, missing: float
                   ) -> np.ndarray:
    truth = rng.random(chunks) < rng.uniform(0.2, 0.8)
    noise = rng.random((raters, chunks)) < rng.uniform(0.02, 0.4)
    ratings = (truth ^ noise).astype(float)
    ratings[rng.random((raters, chunks)) < missing] = np.nan
    return ratings


def kappa_or_none(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(set(a) | set(b)) < 2:
        return None
    value = cohen_kappa_score(a, b)
    return None if np.isnan(value) else float(value)


@pytest.mark.parametrize("seed", range(60))
def test_every_coefficient_matches_the_libraries_complete_and_with_missing_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters = int(rng.integers(2, 6))
    missing = 0.0 if seed % 3 == 0 else float(rng.uniform(0.05, 0.5))
    ratings = random_ratings(rng, raters, int(rng.integers(10, 80)), missing)
    judge = random_ratings(rng, 1, ratings.shape[1], 0.0)[0]
    result = agreement(ratings, judge)

    alpha = krippendorff.alpha(reliability_data=ratings, level_of_measurement="nominal")
    ours = result.stats["alpha_people"].value
    if np.isnan(alpha):
        assert ours is None
    else:
        assert ours == pytest.approx(alpha, abs=1e-9)
    both = krippendorff.alpha(reliability_data=np.vstack([ratings, judge]),
                              level_of_measurement="nominal")
    assert result.stats["alpha_with_judge"].value == pytest.approx(both, abs=1e-9)

    complete = ratings[:, ~np.isnan(ratings).any(axis=0)]
    assert result.complete_chunks == complete.shape[1]
    if complete.shape[1]:
        table, _ = aggregate_raters(complete.T.astype(int), n_cat=2)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # one category only: NaN, as meant
            expected = fleiss_kappa(table)
        fleiss = result.stats["fleiss_kappa"].value
        if np.isnan(expected):
            assert fleiss is None
        else:
            assert fleiss == pytest.approx(expected, abs=1e-9)
    else:
        assert result.stats["fleiss_kappa"].reason == "no chunk is labelled by every person"

    pairwise = []
    for pair, (i, j) in zip(result.pairs, combinations(range(raters), 2), strict=True):
        mask = ~np.isnan(ratings[i]) & ~np.isnan(ratings[j])
        expected_pair = kappa_or_none(ratings[i, mask], ratings[j, mask])
        assert pair.chunks == int(mask.sum())
        assert pair.kappa.value == (None if expected_pair is None else
                                    pytest.approx(expected_pair, abs=1e-9))
        if expected_pair is not None:
            pairwise.append(expected_pair)
    light = result.stats["light_kappa"].value
    assert light == (pytest.approx(np.mean(pairwise), abs=1e-9) if pairwise else None)
    for versus, i in zip(result.judge_vs, range(raters), strict=True):
        mask = ~np.isnan(ratings[i])
        expected_j = kappa_or_none(ratings[i, mask], judge[mask])
        assert versus.kappa.value == (None if expected_j is None else
                                      pytest.approx(expected_j, abs=1e-9))


def test_statistics_md_example_a_as_two_raters() -> None:
    # Example A of docs/statistics.md: Fleiss (Scott's pi) 0.4885 against Cohen 0.5 for two raters.
    a = np.array([1] * 5 + [0] * 5, dtype=float)
    b = np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0], dtype=float)
    result = agreement(np.vstack([a, b]))
    assert result.stats["light_kappa"].value == pytest.approx(cohen_kappa_score(a, b))
    table, _ = aggregate_raters(np.vstack([a, b]).T.astype(int), n_cat=2)
    assert result.stats["fleiss_kappa"].value == pytest.approx(fleiss_kappa(table))


def test_intervals_come_from_the_golden_bootstrap_and_bracket_the_estimate() -> None:
    rng = np.random.default_rng(5)
    ratings = random_ratings(rng, 3, 400, 0.2)
    judge = random_ratings(rng, 1, 400, 0.0)[0]
    result = agreement(ratings, judge, k=8, resamples=500)
    for key in ("alpha_people", "alpha_with_judge", "fleiss_kappa", "light_kappa",
                "judge_mean_kappa"):
        stat = result.stats[key]
        assert stat.interval is not None and stat.value is not None, key
        assert stat.interval[0] < stat.value < stat.interval[1], key
    # The same data and seed give the same intervals, every one of them.
    again = agreement(ratings, judge, k=8, resamples=500)
    assert {k: s.interval for k, s in again.stats.items()} == {
        k: s.interval for k, s in result.stats.items()}


def test_one_person_or_no_overlap_is_undefined_with_a_reason() -> None:
    lonely = np.array([[1, 0, 1, np.nan], [np.nan, np.nan, np.nan, 1]], dtype=float)
    result = agreement(lonely)
    assert result.shared_chunks == 0
    assert result.stats["alpha_people"].reason == "no chunk is labelled by two people"
    assert result.pairs[0].kappa.reason == "no chunk labelled by both"
    assert "needs two people" in result.ceiling


def test_the_report_has_inter_annotator_agreement_in_every_format(tmp_path: Path) -> None:
    """Three people over a real session file (one with gaps), the report against the libraries."""
    rng = np.random.default_rng(11)
    goldens: list[dict[str, Any]] = []
    rows: dict[str, list[float]] = {name: [] for name in ("ana", "ben", "cy")}
    judge_all: list[float] = []
    for i in range(30):
        truth = (rng.random(5) < 0.5).astype(int)
        labels = {}
        for name, noise in (("ana", 0.05), ("ben", 0.1), ("cy", 0.3)):
            mine: list[int | None] = [int(t ^ (rng.random() < noise)) for t in truth]
            if name == "cy" and i % 3 == 0:
                mine = [None] * 5  # cy skipped every third golden
            labels[name] = mine
            rows[name] += [np.nan if v is None else v for v in mine]
        judge = [int(t ^ (rng.random() < 0.15)) for t in truth]
        judge_all += judge
        goldens.append({"id": f"g{i:02d}", "user_input": f"q{i}", "reference": "a",
                        "retrieved_contexts": [f"c{i}-{k} [b]x[/b]" for k in range(5)],
                        "judge": "j", "judge_verdicts": [{"verdict": v} for v in judge],
                        "human_labels": labels})
    ratings = np.array([rows[n] for n in ("ana", "ben", "cy")], dtype=float)
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, annotators=["ana"], resamples=300)
    team = report.raters
    assert team is not None and team.people == ["ana", "ben", "cy"]
    assert team.stats["alpha_people"].value == pytest.approx(
        krippendorff.alpha(reliability_data=ratings, level_of_measurement="nominal"))
    complete = ratings[:, ~np.isnan(ratings).any(axis=0)]
    assert team.complete_chunks == 100
    assert team.stats["fleiss_kappa"].value == pytest.approx(
        fleiss_kappa(aggregate_raters(complete.T.astype(int), n_cat=2)[0]))
    mask = ~np.isnan(ratings[2])
    cy_vs_judge = next(p for p in team.judge_vs if p.second == "cy")
    assert cy_vs_judge.kappa.value == pytest.approx(
        cohen_kappa_score(ratings[2, mask], np.array(judge_all)[mask]))
    assert all(s.interval is not None for s in team.stats.values())
    assert team.ceiling in report.headline

    db = str(tmp_path / "s.db")
    for fmt in ("table", "markdown", "html", "json"):
        out = tmp_path / f"r.{fmt}"
        result = CliRunner().invoke(cli, ["report", db, "-a", "ana", "-f", fmt, "-o", str(out),
                                          "--bootstrap", "100"])
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        if fmt == "json":
            data = json.loads(text)["inter_annotator"]
            assert data["annotators"] == ["ana", "ben", "cy"]
            assert data["fleiss_kappa"] == pytest.approx(team.stats["fleiss_kappa"].value)
            assert len(data["pairs"]) == 3 and len(data["judge_vs_annotator"]) == 3
        else:
            assert "Between people" in text and "Light" in text and "(n=100)" in text
