"""Would the judge pick the same retriever? The systems' ranking under both label sets."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from annotator.cli import cli
from annotator.formats import read_goldens
from annotator.report.build import build_report
from annotator.report.leaderboard import build_leaderboard
from annotator.stats.metrics import context_precision
from annotator.stats.ranks import ranking_tau_ap, ranking_tau_b
from annotator.store.session import Session
from tests.conftest import write_lines

# Per system: (people's verdicts, the judge's) on every one of its goldens. People rank
# A > B > C; the judge swaps the two best (B > A > C) and gets C right.
SYSTEMS = {"A": ([1, 1, 0, 0], [0, 1, 1, 0]), "B": ([1, 0, 1, 0], [1, 1, 0, 0]),
           "C": ([0, 1, 0, 1], [0, 1, 0, 1])}


def study(tmp_path: Path, systems: dict[str, tuple[list[int], list[int]]] = SYSTEMS,
          goldens: int = 6) -> Session:
    rows: list[dict[str, Any]] = []
    for name, (human, judge) in systems.items():
        for i in range(goldens):
            rows.append({"id": f"{name}{i}", "user_input": f"Question {i}?", "reference": "An answer.",
                         "retrieved_contexts": [f"{name} chunk {i}.{k}" for k in range(4)],
                         "metadata": {"retriever": name}, "judge": "j",
                         "judge_verdicts": [{"verdict": v} for v in judge],
                         "human_labels": {"ann": human}})
    path = write_lines(tmp_path / "g.jsonl", rows)
    session = Session(tmp_path / "s.db")
    session.import_goldens(read_goldens(path), path=str(path))
    return session


def test_a_judge_that_swaps_the_best_two_systems_is_caught(tmp_path: Path) -> None:
    session = study(tmp_path)
    report = build_report(session, resamples=200)
    systems = report.systems
    assert systems is not None
    assert [p.first + p.second for p in systems.swapped] == ["AB"]
    assert (systems.best_human, systems.best_judge) == ("A", "B")
    human = [context_precision(h) for h, _ in SYSTEMS.values()]
    judge = [context_precision(j) for _, j in SYSTEMS.values()]
    assert systems.kendall.value == pytest.approx(kendalltau(human, judge).statistic)
    assert systems.kendall.value == pytest.approx(1 / 3)  # one of three pairs discordant
    assert systems.tau_ap.value == pytest.approx(0.0)  # by hand: (0/1 + 2/2) x 2/2 - 1
    assert any("would pick a different best retriever: B" in line for line in report.headline)
    assert any("swap" in line and "A vs B" in line for line in report.headline)
    board = build_leaderboard(session, resamples=200)
    [row] = board.judges
    assert row.stats["systems_tau_b"].value == pytest.approx(systems.kendall.value)
    assert row.stats["systems_tau_ap"].value == pytest.approx(systems.tau_ap.value)
    assert row.best_system == ("A", "B")
    assert any("'j' picks B" in line for line in board.headline)
    typo = CliRunner().invoke(cli, ["judges", str(session.path), "--group-by", "retreiver"])
    assert typo.exit_code == 2 and "has metadata 'retreiver'" in typo.output, typo.output
    out = CliRunner().invoke(cli, ["report", str(session.path), "--format", "json",
                                   "--bootstrap", "50"])
    data = json.loads(out.output)["systems"]
    assert (data["best_human"], data["best_judge"], data["same_best"]) == ("A", "B", False)
    assert data["swapped_pairs"] == [["A", "B"]] and data["tau_ap"] == pytest.approx(0)


def test_a_judge_that_ranks_as_people_do_and_two_systems_have_no_tau(tmp_path: Path) -> None:
    same = {name: (human, human) for name, (human, _) in SYSTEMS.items()}
    report = build_report(study(tmp_path, same), resamples=100)
    assert report.systems is not None
    assert report.systems.kendall.value == report.systems.tau_ap.value == 1.0
    assert not any("different best" in line for line in report.headline)
    two = {name: SYSTEMS[name] for name in ("A", "B")}
    (tmp_path / "two").mkdir()
    paired = build_report(study(tmp_path / "two", two), resamples=100).systems
    assert paired is not None and paired.kendall.value is None and paired.tau_ap.value is None
    assert "two systems" in (paired.kendall.reason or "")
    assert [p.first + p.second for p in paired.swapped] == ["AB"]  # the pair says it


def test_a_pair_only_one_label_set_separates_is_named(tmp_path: Path) -> None:
    # People see A above B on every golden; the judge sees them alike.
    systems = {"A": ([1, 1, 0, 0], [1, 0, 1, 0]), "B": ([1, 0, 1, 0], [1, 0, 1, 0]),
               "C": ([0, 0, 0, 1], [0, 0, 0, 1])}
    report = build_report(study(tmp_path, systems), resamples=200)
    assert report.systems is not None
    assert [p.first + p.second for p in report.systems.separated] == ["AB"]
    assert any("Only people's labels tell A and B apart" in line for line in report.headline)


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 7).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n))))
def test_tau_b_equals_scipy_and_tau_ap_is_a_top_weighted_correlation(
        pair: tuple[list[int], list[int]]) -> None:
    truth, estimate = (np.asarray(x, dtype=float) for x in pair)
    expected = kendalltau(truth, estimate).statistic
    got = float(ranking_tau_b(truth, estimate))
    assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected)
    # Many replicates at once give each row's own value.
    both = ranking_tau_b(np.stack([truth, truth]), np.stack([estimate, truth]))
    assert both[0] == pytest.approx(got, nan_ok=True)
    untied = np.arange(len(truth), 0, -1, dtype=float)
    assert ranking_tau_ap(untied, untied) == pytest.approx(1.0)
    assert ranking_tau_ap(untied, -untied) == pytest.approx(-1.0)
    top, bottom = untied.copy(), untied.copy()
    top[[0, 1]], bottom[[-2, -1]] = top[[1, 0]], bottom[[-1, -2]]
    assert ranking_tau_ap(untied, top) < ranking_tau_ap(untied, bottom)  # the top weighs more
    assert ranking_tau_b(untied, top) == pytest.approx(ranking_tau_b(untied, bottom))
    # tau_AP_b as its authors' ircor package computes it, on ties in either ranking.
    assert float(ranking_tau_ap(truth, estimate)) == pytest.approx(tau_ap_b(truth, estimate),
                                                                   nan_ok=True)
    assert ranking_tau_ap(np.stack([truth, truth]), np.stack([estimate, truth]))[0] == \
        pytest.approx(tau_ap_b(truth, estimate), nan_ok=True)


def tau_ap_b(x: np.ndarray, y: np.ndarray) -> float:
    """ircor's tauAP_b (Urbano & Marrero 2017), written out as its R source reads: the mean of
    tauAP_b_ties(x, y) and tauAP_b_ties(y, x), higher scores first."""
    from scipy.stats import rankdata

    def ties(x: np.ndarray, y: np.ndarray) -> float:
        rx, ry = rankdata(-x), rankdata(-y, method="ordinal")
        p = rankdata(-y, method="min") - 1
        total, scored = 0.0, 0
        for i in range(len(p)):
            if p[i] == 0:
                continue
            scored += 1
            agree = sum((rx[i] > rx[j]) == (ry[i] > ry[j]) for j in range(len(p)) if p[j] < p[i])
            total += agree / p[i]
        return 2 * total / scored - 1 if scored else math.nan

    return (ties(x, y) + ties(y, x)) / 2


def test_tau_ap_follows_the_published_tie_aware_definition_and_counts_near_equal_means_tied(
        ) -> None:
    # People tie the second and third systems; the judge splits them.
    people = np.asarray([0.9, 0.6, 0.6, 0.3])
    judge = np.asarray([0.8, 0.7, 0.5, 0.4])
    assert float(ranking_tau_ap(people, judge)) == pytest.approx(tau_ap_b(people, judge))
    assert float(ranking_tau_ap(people, judge)) == pytest.approx(5 / 6)  # (2/3 + 1) / 2
    # Means equal but for the order they were summed in are ties, not a ranking.
    summed = np.asarray([0.9, 0.1 + 0.2 + 0.3, 0.6, 0.3])
    assert summed[1] != summed[2]
    assert float(ranking_tau_ap(summed, judge)) == pytest.approx(5 / 6)
    assert float(ranking_tau_b(summed, judge)) == pytest.approx(
        kendalltau(people, judge).statistic)
    # Nothing ranked (no golden complete: every mean equal): undefined, never -1.
    flat = np.full(4, 0.5)
    assert np.isnan(ranking_tau_ap(flat, judge)) and np.isnan(ranking_tau_b(flat, judge))


def test_reranking_by_people_and_by_the_judge_equals_a_direct_computation(tmp_path: Path
                                                                         ) -> None:
    report = build_report(study(tmp_path), resamples=200)
    every, *by_system = report.reranking
    assert every.system is None and [r.system for r in by_system] == ["A", "B", "C"]

    def judge_order(human: list[int], judge: list[int]) -> list[int]:
        order = sorted(range(len(human)), key=lambda i: (-judge[i], i))  # verdict, then rank
        return [human[i] for i in order]

    retrieved = [context_precision(h) for h, _ in SYSTEMS.values()]
    ceiling = [context_precision(sorted(h, reverse=True)) for h, _ in SYSTEMS.values()]
    judge = [context_precision(judge_order(h, j)) for h, j in SYSTEMS.values()]
    for row, r, c, j in zip(by_system, retrieved, ceiling, judge, strict=True):
        assert (row.retrieved.value, row.ceiling.value, row.judge.value) == pytest.approx((r, c, j))
    mean = np.mean
    assert every.judge.value == pytest.approx(mean(judge))
    assert every.captured.value == pytest.approx(
        (mean(judge) - mean(retrieved)) / (mean(ceiling) - mean(retrieved)))
    assert every.captured.interval is not None
    assert any("As a reranker" in line for line in report.headline)
    data = json.loads(CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format",
                                               "json", "--bootstrap", "0"]).output)
    assert data["reranking"][0]["captured_share"] == pytest.approx(every.captured.value)


def test_the_judges_confidence_orders_chunks_of_the_same_verdict(tmp_path: Path) -> None:
    row = {"id": "g", "user_input": "Q?", "reference": "A.", "retrieved_contexts": ["a", "b", "c"],
           "judge": "j", "judge_verdicts": [{"verdict": 1, "p_relevant": p} for p in (0.2, 0.9,
                                                                                      0.5)],
           "human_labels": {"ann": [0, 1, 1]}}
    path = write_lines(tmp_path / "g.jsonl", [row])
    with Session(tmp_path / "s.db") as session:
        session.import_goldens(read_goldens(path), path=str(path))
        [every] = build_report(session, resamples=0).reranking
    assert every.retrieved.value == pytest.approx(context_precision([0, 1, 1]))
    assert every.judge.value == pytest.approx(context_precision([1, 1, 0]))  # by P: b, c, a


def test_top_k_figures_equal_a_direct_computation_on_the_verdict_lists(tmp_path: Path) -> None:
    session = study(tmp_path)
    assert build_report(session, resamples=0).top_k is None  # only when asked for
    report = build_report(session, resamples=100, top_k=True, keep_share=0.95)
    cut = report.top_k
    assert cut is not None and cut.keep == 0.95
    lists = [(h, j, name) for name, (h, j) in SYSTEMS.items()]
    for row in cut.rows:
        mine = [(h, j) for h, j, name in lists if row.system in (None, name)]
        k = row.k
        assert row.cp_human.value == pytest.approx(np.mean([context_precision(h[:k])
                                                            for h, _ in mine]))
        assert row.cp_judge.value == pytest.approx(np.mean([context_precision(j[:k])
                                                            for _, j in mine]))
        assert row.precision_judge.value == pytest.approx(np.mean([sum(j[:k]) / k
                                                                   for _, j in mine]))
        assert row.lost_human.value == pytest.approx(
            1 - sum(sum(h[:k]) for h, _ in mine) / sum(sum(h) for h, _ in mine))
    # People's relevant chunks sit in ranks 1-4 across systems, the judge's in 1-4 as well:
    # every golden needs all 4 chunks for 95% under both.
    assert cut.smallest[None] == (4, 4)
    assert cut.smallest["A"] == (2, 3)  # A: people [1,1,0,0], the judge [0,1,1,0]
    assert any("the judge would choose the same k" in line for line in report.headline)
    out = CliRunner().invoke(cli, ["report", str(session.path), "--format", "json", "--top-k",
                                   "--keep", "0.5", "--bootstrap", "0"])
    data = json.loads(out.output)["top_k"]
    assert data["keep"] == 0.5 and data["smallest_k"][0] == {"system": None, "human": 2,
                                                              "judge": 2}


def test_top_k_precision_is_trec_evals_p_at_k_on_goldens_of_unequal_length(
        tmp_path: Path) -> None:
    import ir_measures

    lists = [[1, 0, 1, 1, 0], [1, 1], [0, 1, 0]]
    rows = [{"id": f"g{i}", "user_input": f"q{i}", "reference": "a",
             "retrieved_contexts": [f"c{i}.{r}" for r in range(len(v))], "judge": "j",
             "judge_verdicts": [{"verdict": x} for x in v], "human_labels": {"ann": v}}
            for i, v in enumerate(lists)]
    path = write_lines(tmp_path / "g.jsonl", rows)
    with Session(tmp_path / "s.db") as session:
        session.import_goldens(read_goldens(path), path=str(path))
        cut = build_report(session, resamples=0, top_k=True).top_k
    assert cut is not None
    qrels = [ir_measures.Qrel(f"g{i}", f"c{i}.{r}", x) for i, v in enumerate(lists)
             for r, x in enumerate(v)]
    run = [ir_measures.ScoredDoc(f"g{i}", f"c{i}.{r}", 100.0 - r) for i, v in enumerate(lists)
           for r in range(len(v))]
    for row in (r for r in cut.rows if r.system is None):
        measure = ir_measures.parse_measure(f"P@{row.k}")
        expected = np.mean([m.value for m in ir_measures.iter_calc([measure], qrels, run)])
        assert row.precision_human.value == pytest.approx(expected), row.k


def test_the_html_report_draws_cp_at_k_with_top_k(tmp_path: Path) -> None:
    session = study(tmp_path)
    session.close()
    page = tmp_path / "r.html"
    out = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format", "html",
                                   "--top-k", "--bootstrap", "50", "--output", str(page)])
    assert out.exit_code == 0, out.output
    html = page.read_text(encoding="utf-8")
    assert 'id="chart-cp-at-k"' in html and 'id="chart-reranking"' in html
    assert "Top-k: each golden cut to its first k chunks" in html


def test_a_session_nobody_has_labelled_reports_without_the_decision_sections(
        tmp_path: Path) -> None:
    from tests.conftest import BANKING

    with Session(tmp_path / "s.db") as session:
        session.import_goldens(read_goldens(BANKING), path=str(BANKING))
        report = build_report(session, resamples=50, top_k=True)
    assert report.reranking and all(row.goldens == 0 for row in report.reranking)
    assert report.top_k is not None and report.top_k.smallest[None] == (None, None)
    out = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--bootstrap", "0"])
    assert out.exit_code == 0 and "annotate some goldens first" in out.output


def test_a_difference_of_exactly_a_tenth_is_not_big_and_a_lone_golden_says_why(
        tmp_path: Path) -> None:
    # A golden whose CP moves by 0.1 exactly, which RAGAS's epsilon nudges just past 0.1; the
    # system B holds one golden.
    systems = {"A": ([1, 0, 1, 0, 1], [1, 0, 1, 0, 1]), "B": ([0, 1, 0, 1, 0], [1, 0, 0, 0, 0])}
    rows = [{"id": f"{name}{i}", "user_input": "q", "reference": "a",
             "retrieved_contexts": [f"{name}{i}.{r}" for r in range(len(h))], "judge": "j",
             "judge_verdicts": [{"verdict": v} for v in j], "human_labels": {"ann": h},
             "metadata": {"retriever": name}}
            for name, (h, j) in systems.items() for i in range(2 if name == "A" else 1)]
    near = {"id": "n", "user_input": "q", "reference": "a",  # CP 1/6 against 0.2667: 0.1
            "retrieved_contexts": list("uvwxyz"), "judge": "j",
            "judge_verdicts": [{"verdict": v} for v in (0, 0, 0, 0, 1, 1)],
            "human_labels": {"ann": [0, 0, 0, 0, 0, 1]}, "metadata": {"retriever": "A"}}
    path = write_lines(tmp_path / "g.jsonl", [*rows, near])
    with Session(tmp_path / "s.db") as session:
        session.import_goldens(read_goldens(path), path=str(path))
        report = build_report(session, resamples=100)
    assert report.goldens is not None
    diffs = [r.difference for r in report.goldens.per_golden]
    assert any(0.1 < abs(d) < 0.1 + 1e-9 for d in diffs)
    assert report.goldens.stats["share_big_difference"].value == pytest.approx(
        sum(abs(d) > 0.1 + 1e-9 for d in diffs) / len(diffs))
    assert report.systems is not None
    lone = next(r for r in report.systems.systems if r.system == "B")
    assert lone.goldens == 1 and lone.mean_human.value is not None
    assert "[undefined: one golden]" in lone.mean_human.format(style="cell", interval=True)


def test_a_pair_with_a_one_golden_system_says_why_it_has_no_interval(tmp_path: Path) -> None:
    from tests.test_report import golden_obj, make_session

    goldens = [golden_obj(i, [1, 0, 1], [1, 0, i % 2], retriever="bm25" if i < 6 else "dense")
               for i in range(12)]
    goldens.append(golden_obj(12, [0, 0, 1], [1, 1, 0], retriever="solo"))
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, judge="j", annotators=["alice"], resamples=200, seed=1)
    systems = report.systems
    assert systems is not None
    pairs = {(p.first, p.second): p for p in systems.pairs}
    lonely = [p for key, p in pairs.items() if "solo" in key]
    assert len(lonely) == 2
    for pair in lonely:
        for stat in (pair.difference_human, pair.difference_judge):
            assert stat.value is not None and stat.interval is None
            assert stat.reason == "solo holds one golden"
        assert pair.significant_human is None  # no interval, so no claim either way
    both = next(p for key, p in pairs.items() if "solo" not in key)
    assert both.difference_human.interval is not None
