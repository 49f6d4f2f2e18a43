"""The agreement report: every statistic against scikit-learn, statsmodels, krippendorff and scipy
on docs/statistics.md's examples, on 200 random sessions and on degenerate ones; the bootstrap's
reproducibility and coverage; the stable JSON keys; every format on odd text."""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import (
    brier_score_loss,
    cohen_kappa_score,
    log_loss,
    precision_recall_fscore_support,
    roc_auc_score,
)
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from annotator.formats import read_goldens
from annotator.jsonout import plain
from annotator.report.build import build_report
from annotator.report.html import html_report
from annotator.report.render import markdown_report, rich_report
from annotator.report.serialize import report_dict
from annotator.stats import cp_agreement
from annotator.stats.bootstrap import ClusterSums, add_confusion, percentile_interval
from annotator.stats.chunk_agreement import McNemar, kappa_values, wilson_interval
from annotator.stats.metrics import context_precision
from annotator.stats.stat import Stat
from annotator.store.session import Session
from annotator.verdict import flipped
from tests.conftest import banking_file, write_lines


def make_session(tmp_path: Path, goldens: list[dict[str, Any]], name: str = "s") -> Session:
    """A real session file holding these goldens."""
    path = write_lines(tmp_path / f"{name}.jsonl", goldens)
    session = Session(tmp_path / f"{name}.db")
    session.import_goldens(read_goldens(path), path=str(path))
    return session


def golden_obj(i: int, judge: Sequence[int | None], human: Sequence[int | None] | None,
               p: Sequence[float | None] | None = None, retriever: str | None = None,
               **extra: Any) -> dict[str, Any]:
    """One golden with the judge 'j' and the annotator 'alice'."""
    obj: dict[str, Any] = {
        "id": f"g{i:03d}", "user_input": f"question {i}", "reference": "the answer",
        "retrieved_contexts": [f"chunk {k} of {i}" for k in range(len(judge))],
        "judge": "j",
        "judge_verdicts": [None if v is None else {"verdict": v, "reason": "because",
                                                   "p_relevant": None if p is None else p[k]}
                           for k, v in enumerate(judge)],
    }
    if human is not None:
        obj["human_labels"] = {"alice": human}
    if retriever is not None:
        obj["metadata"] = {"retriever": retriever}
    obj.update(extra)
    return obj


def random_goldens(rng: np.random.Generator) -> list[dict[str, Any]]:
    """A small random session: ragged goldens, some labels missing, some with P(relevant)."""
    goldens = []
    n = int(rng.integers(1, 14))
    with_p = bool(rng.integers(0, 2))
    for i in range(n):
        k = int(rng.integers(1, 7))
        prevalence = rng.uniform(0.05, 0.95)
        human = (rng.random(k) < prevalence).astype(int)
        flip = rng.random(k) < rng.uniform(0, 0.4)
        judge = np.where(flip, 1 - human, human)
        labels: list[int | None] = [int(h) if rng.random() > 0.1 else None for h in human]
        p = np.clip(np.where(judge == 1, rng.uniform(0.4, 1, k), rng.uniform(0, 0.6, k)), 0, 1)
        goldens.append(golden_obj(i, [int(v) for v in judge], labels,
                                  [float(x) for x in p] if with_p else None,
                                  retriever=str(rng.choice(["bm25", "dense", "hybrid"]))))
    return goldens


def reference_numbers(goldens: list[dict[str, Any]]) -> dict[str, Any]:
    """What the libraries say about these goldens (human = alice, judge = j)."""
    h: list[int] = []
    j: list[int] = []
    p: list[float] = []
    rank: list[int] = []
    b, c = [], []
    cp_h, cp_j = [], []
    for g in goldens:
        judge = [v["verdict"] for v in g["judge_verdicts"]]
        human = g["human_labels"]["alice"]
        pairs = [(hh, jj, v["p_relevant"], k + 1)
                 for k, (hh, jj, v) in enumerate(zip(human, judge, g["judge_verdicts"], strict=True))
                 if hh is not None]
        h += [x[0] for x in pairs]
        j += [x[1] for x in pairs]
        p += [x[2] for x in pairs if x[2] is not None]
        rank += [x[3] for x in pairs]
        b.append(sum(1 for hh, jj, _, _ in pairs if jj == 1 and hh == 0))
        c.append(sum(1 for hh, jj, _, _ in pairs if jj == 0 and hh == 1))
        if None not in human:
            cp_h.append(context_precision(human))
            cp_j.append(context_precision(judge))
    return {"h": np.array(h), "j": np.array(j), "p": np.array(p), "rank": np.array(rank),
            "b": b, "c": c, "cp_h": np.array(cp_h), "cp_j": np.array(cp_j)}


def check(value: float | None, expected: float, abs_tol: float = 1e-9) -> None:
    """A defined statistic equals the library's; an undefined one is nan in the library too."""
    if value is None:
        assert np.isnan(expected)
    else:
        assert value == pytest.approx(expected, abs=abs_tol)


@pytest.mark.parametrize("seed", range(200))
def test_random_sessions_against_the_libraries(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    goldens = random_goldens(rng)
    ref = reference_numbers(goldens)
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, resamples=0)
    h, j = ref["h"], ref["j"]
    chunks = report.chunks.stats
    assert report.chunks.confusion.n == len(h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(h):
            single = len(set(h) | set(j)) == 1
            check(chunks["percent"].value, float(np.mean(h == j)))
            check(chunks["cohen_kappa"].value,
                  np.nan if single else cohen_kappa_score(h, j))
            alpha = (np.nan if single else krippendorff.alpha(
                reliability_data=[h, j], level_of_measurement="nominal"))
            check(chunks["krippendorff_alpha"].value, alpha)
            precision, recall, f1, _ = precision_recall_fscore_support(
                h, j, average="binary", zero_division=np.nan)
            check(chunks["precision"].value, precision)
            check(chunks["recall"].value, recall)
            check(chunks["f1"].value, f1)
            low, high = proportion_confint(int((h == j).sum()), len(h), alpha=0.05, method="wilson")
            assert report.chunks.wilson == pytest.approx((low, high), abs=1e-9)
            for row in report.chunks.by_rank:
                at = ref["rank"] == row.rank
                check(row.stats["percent"].value, float(np.mean(h[at] == j[at])))
                if len(set(h[at]) | set(j[at])) > 1:
                    check(row.stats["cohen_kappa"].value, cohen_kappa_score(h[at], j[at]))
            m = report.chunks.mcnemar
            if m.looser + m.stricter:
                table = [[0, m.looser], [m.stricter, 0]]
                check(m.exact_p.value, mcnemar(table, exact=True).pvalue)
                d = np.array(ref["b"]) - np.array(ref["c"])
                if (d * d).sum():
                    x2 = d.sum() ** 2 / (d * d).sum()
                    check(m.cluster_statistic.value, x2)
                    check(m.cluster_p.value, stats.chi2.sf(x2, 1))
        assert report.goldens is not None
        g = report.goldens.stats
        cp_h, cp_j = ref["cp_h"], ref["cp_j"]
        assert report.goldens.goldens == len(cp_h)
        if len(cp_h):
            d = cp_j - cp_h
            check(g["mean_human"].value, cp_h.mean())
            check(g["mean_judge"].value, cp_j.mean())
            check(g["bias"].value, d.mean())
            check(g["mae"].value, np.abs(d).mean())
            check(g["rmse"].value, np.sqrt((d * d).mean()))
            # CP values equal within 1e-9 are equal (README), a move of exactly 0.1 is not big
            check(g["share_big_difference"].value, float(np.mean(np.abs(d) > 0.1 + 1e-9)))
            if len(cp_h) > 1:
                sd = d.std(ddof=1)
                check(g["limits_low"].value, d.mean() - 1.96 * sd)
                check(g["limits_high"].value, d.mean() + 1.96 * sd)
            # CP values that differ only by RAGAS's 1e-10 epsilon count as the same value.
            constant = len(cp_h) < 2 or np.ptp(cp_h) <= 1e-9 or np.ptp(cp_j) <= 1e-9
            if constant:
                for key in ("pearson", "spearman", "kendall"):
                    assert g[key].value is None and g[key].reason
            else:
                check(g["pearson"].value, stats.pearsonr(cp_h, cp_j).statistic)
                check(g["spearman"].value, stats.spearmanr(cp_h, cp_j).statistic)
                check(g["kendall"].value, stats.kendalltau(cp_h, cp_j).statistic)
            if len(cp_h) > 1:
                sxy = ((cp_h - cp_h.mean()) * (cp_j - cp_j.mean())).mean()
                den = cp_h.var() + cp_j.var() + (cp_h.mean() - cp_j.mean()) ** 2
                if np.ptp(np.concatenate([cp_h, cp_j])) > 1e-9:
                    check(g["ccc"].value, 2 * sxy / den)
        conf = report.confidence
        p = ref["p"]
        if len(p) and len(h):
            assert conf is not None and conf.chunks == len(p)
            check(conf.stats["brier"].value, brier_score_loss(h, p))
            check(conf.stats["log_loss"].value, log_loss(h, p, labels=[0, 1]))
            if len(set(h)) == 2:
                check(conf.stats["auroc"].value, roc_auc_score(h, p))
            else:
                assert conf.stats["auroc"].value is None
            # Class-1 ECE from scikit-learn's reliability curve, weighted by bin counts.
            true, pred = calibration_curve(h, p, n_bins=10, strategy="uniform")
            counts = np.bincount(np.searchsorted(np.linspace(0, 1, 11)[1:-1], p), minlength=10)
            ece = float(np.sum(counts[counts > 0] * np.abs(true - pred)) / len(p))
            check(conf.stats["ece_class1"].value, ece)
        else:
            assert conf is None or conf.chunks == len(p)


def test_statistics_md_oracles() -> None:
    # Section 6.4: the cluster-adjusted McNemar of Durkalski, against plain McNemar.
    m = McNemar.of([3, 0, 2, 1, 0, 4], [1, 1, 0, 0, 2, 1])
    assert m.cluster_statistic.value == pytest.approx(1.086957, abs=1e-6)
    assert m.cluster_p.value == pytest.approx(0.297, abs=5e-4)
    plain = mcnemar([[0, m.looser], [m.stricter, 0]], exact=False, correction=False)
    assert plain.statistic == pytest.approx(1.666667, abs=1e-6)  # what ignoring clusters gives
    # Section 2.1: example A (fp 4, fn 1) exact p 0.375; section 6.4: [[50,12],[4,34]].
    assert McNemar.of([4], [1]).exact_p.value == pytest.approx(0.375)
    assert McNemar.of([12], [4]).exact_p.value == pytest.approx(0.076813, abs=1e-6)
    # Section 2.2: Wilson for 15/20.
    assert wilson_interval(15, 20) == pytest.approx((0.53130, 0.88814), abs=1e-5)
    assert McNemar.of([0, 0], [0, 0]).cluster_p.value is None
    assert McNemar.of([1, 1], [1, 1]).cluster_p.reason == (
        "every golden has as many looser as stricter chunks")


def test_system_ranking_one_swap_among_five(tmp_path: Path) -> None:
    """Section 4.2: five systems, one adjacent swap between label sets, gives tau 0.8."""
    goldens = []
    # System s has human CP falling with s; under the judge, systems 'c' and 'd' trade places.
    # (Every CP differs: [1, 1, 1] and [1, 1, 0] both score 1.0 and would tie.)
    human = {"a": [1, 1, 1], "b": [1, 0, 1], "c": [0, 1, 1], "d": [0, 1, 0], "e": [0, 0, 1]}
    judge = {**human, "c": [0, 1, 0], "d": [0, 1, 1]}
    for i, s in enumerate("abcde"):
        goldens.append(golden_obj(i, judge[s], human[s], retriever=s))
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, resamples=200)
    systems = report.systems
    assert systems is not None
    assert systems.kendall.value == pytest.approx(0.8)
    assert [(p.first, p.second) for p in systems.swapped] == [("c", "d")]
    assert [r.system for r in systems.systems] == ["a", "b", "c", "d", "e"]
    assert {r.system: r.rank_judge for r in systems.systems} == {
        "a": 1, "b": 2, "c": 4, "d": 3, "e": 5}
    assert any("swap" in line and "c vs d" in line for line in report.headline)


def _all_formats(report: Any) -> dict[str, str]:
    from rich.console import Console

    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(rich_report(report))
    return {"table": console.export_text(), "markdown": markdown_report(report),
            "json": json.dumps(plain(report_dict(report))), "html": html_report(report)}


DEGENERATE = {
    "all relevant": [golden_obj(i, [1, 1, 1], [1, 1, 1]) for i in range(3)],
    "none relevant": [golden_obj(i, [0, 0], [0, 0]) for i in range(3)],
    "one golden": [golden_obj(0, [1, 0, 1], [1, 1, 0])],
    "one chunk": [golden_obj(0, [1], [0])],
    "nothing decided": [golden_obj(i, [1, 0], None) for i in range(3)],
}


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_degenerate_sessions_give_reasons_not_numbers(tmp_path: Path, case: str) -> None:
    with make_session(tmp_path, DEGENERATE[case]) as session:
        annotators = ["alice"] if case == "nothing decided" else None
        report = build_report(session, annotators=annotators, resamples=300)
    data = report_dict(report)
    agreement, cp = data["agreement"], data["context_precision"]
    for key in ("cohen_kappa", "krippendorff_alpha", "percent", "gwet_ac1"):
        if agreement[key] is None:
            assert agreement["why_undefined"][key], key
        else:
            assert key not in agreement["why_undefined"]
    for key in ("pearson", "spearman", "kendall", "ccc"):
        assert cp[key] is None and cp["why_undefined"][key], key
    if case in ("all relevant", "none relevant"):
        assert agreement["cohen_kappa"] is None
        assert "single class" in agreement["why_undefined"]["cohen_kappa"]
        assert agreement["gwet_ac1"] == 1.0 and agreement["percent"] == 1.0
    if case == "none relevant":
        assert cp["no_relevant_chunk"]["both"] == 3 and cp["mean_human"] == 0.0
    if case == "nothing decided":
        assert agreement["n"] == 0 and cp["goldens"] == 0
        assert "annotate some goldens first" in report.headline[0]
        assert cp["why_undefined"]["mean_human"] == "no golden is complete under both label sets"
    for fmt, text in _all_formats(report).items():
        assert "nan" not in text.replace("nano", "").lower().split(), fmt
        if agreement["cohen_kappa"] is None and agreement["n"]:
            assert "single class" in text, fmt


def test_json_keeps_the_stable_keys(tmp_path: Path) -> None:
    with Session(banking_file(tmp_path / "b.db")) as session:
        data = json.loads(json.dumps(plain(report_dict(build_report(session, resamples=100)))))
    a, cp = data["agreement"], data["context_precision"]
    assert set(a["confusion"]) == {"tp", "fp", "fn", "tn"}
    assert a["n"] == sum(a["confusion"].values()) == 80
    for key in ("percent", "cohen_kappa", "gwet_ac1", "krippendorff_alpha"):
        assert isinstance(a[key], float) and len(a["ci95"][key]) == 2
    assert cp["goldens"] == len(cp["per_golden"]) == 16
    assert set(cp["per_golden"][0]) >= {"golden_id", "human", "judge"}
    assert cp["mean_human"] == pytest.approx(np.mean([g["human"] for g in cp["per_golden"]]))
    assert cp["mean_judge"] == pytest.approx(np.mean([g["judge"] for g in cp["per_golden"]]))
    savings = next(g for g in cp["per_golden"] if g["golden_id"] == "savings-min-balance")
    assert savings["human"] == pytest.approx(0.8875, abs=1e-9)  # docs/statistics.md's savings golden


def test_the_bootstrap_is_reproducible_and_brackets_the_estimate(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    goldens = [golden_obj(i, [int(x) for x in rng.integers(0, 2, 5)],
                          [int(x) for x in rng.integers(0, 2, 5)]) for i in range(30)]
    with make_session(tmp_path, goldens) as session:
        first = build_report(session, resamples=500, seed=3)
        again = build_report(session, resamples=500, seed=3)
        other = build_report(session, resamples=500, seed=4)
    kappa = first.chunks.stats["cohen_kappa"]
    assert kappa.interval == again.chunks.stats["cohen_kappa"].interval
    assert kappa.interval != other.chunks.stats["cohen_kappa"].interval
    assert first.goldens is not None
    for stat in [*first.chunks.stats.values(), *first.goldens.stats.values()]:
        if stat.interval is not None and stat.value is not None:
            assert stat.interval[0] - 1e-9 <= stat.value <= stat.interval[1] + 1e-9


def test_resampling_goldens_keeps_their_chunks_together() -> None:
    """Each replicate holds whole goldens: the chunk count moves in multiples of golden sizes."""
    sums = ClusterSums(3)
    cluster = np.array([0, 0, 0, 0, 1, 2, 2])  # goldens of 4, 1 and 2 chunks
    sums.add("chunks", cluster)
    replicates = sums.resample(200, seed=1)["chunks"]
    draws = {int(x) for x in replicates}
    possible = {4 * a + b + 2 * c for a in range(4) for b in range(4) for c in range(4)
                if a + b + c == 3}
    assert draws <= possible and len(draws) > 3


def _simulate(rng: np.random.Generator, goldens: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated judges: each golden has its own relevance rate and its own judge error rate,
    and the judge errs more often toward 'relevant' (looser)."""
    rate = rng.beta(2, 2, size=(goldens, 1))
    human = (rng.random((goldens, k)) < rate).astype(int)
    err = rng.beta(1.5, 8, size=(goldens, 1))
    up = (human == 0) & (rng.random((goldens, k)) < err * 1.6)
    down = (human == 1) & (rng.random((goldens, k)) < err * 0.6)
    judge = np.where(up | down, 1 - human, human)
    return human, judge


def _cp_rows(v: np.ndarray) -> np.ndarray:
    """Context precision of each row of verdicts (exact convention; 0 when none relevant)."""
    k = np.arange(1, v.shape[1] + 1)
    precision = np.cumsum(v, axis=1) / k
    relevant = v.sum(axis=1)
    return np.where(relevant > 0, (precision * v).sum(axis=1) / np.maximum(relevant, 1), 0.0)


def _sums(human: np.ndarray, judge: np.ndarray) -> ClusterSums:
    goldens, k = human.shape
    sums = ClusterSums(goldens)
    cluster = np.repeat(np.arange(goldens), k)
    add_confusion(sums, cluster, human.ravel(), judge.ravel())
    every = np.arange(goldens)
    sums.add("n", every)
    sums.add("h", every, _cp_rows(human))
    sums.add("j", every, _cp_rows(judge))
    return sums


def test_bootstrap_intervals_cover_at_about_the_nominal_rate() -> None:
    """500 simulated sessions of 60 goldens x 5 chunks: the 95% intervals for kappa and for the
    mean CP difference cover the true value between 92% and 98% of the time."""
    rng = np.random.default_rng(2026)
    human, judge = _simulate(rng, 400_000, 5)
    population = _sums(human, judge).totals()
    true_kappa = float(kappa_values(*(population[x] for x in ("tp", "fp", "fn", "tn"))))
    true_bias = float(cp_agreement.bias(population))
    covered = {"kappa": 0, "bias": 0}
    runs = 500
    for run in range(runs):
        sums = _sums(*_simulate(rng, 60, 5))
        replicates = sums.resample(1000, seed=run)
        kappa = percentile_interval(kappa_values(*(replicates[x] for x in ("tp", "fp", "fn", "tn"))))
        bias = percentile_interval(cp_agreement.bias(replicates))
        assert kappa is not None and bias is not None
        covered["kappa"] += kappa.low <= true_kappa <= kappa.high
        covered["bias"] += bias.low <= true_bias <= bias.high
    rates = {k: v / runs for k, v in covered.items()}
    print("coverage", rates)
    assert 0.92 <= rates["kappa"] <= 0.98, rates
    assert 0.92 <= rates["bias"] <= 0.98, rates


def test_report_command_choices_and_errors(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from annotator.cli import cli

    goldens = [golden_obj(i, [1, 0, 1], [1, 1, 0], human_labels={"alice": [1, 1, 0],
                                                                 "bob": [1, 0, 1]})
               for i in range(4)]
    make_session(tmp_path, goldens).close()
    db = str(tmp_path / "s.db")
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(cli, ["report", db, *args])

    several = run()
    assert several.exit_code == 2
    assert "several annotators (alice, bob)" in several.output and "--all-annotators" in several.output
    assert "no judge named 'nope' (judges: j)" in run("--judge", "nope", "-a", "bob").output
    assert "No golden in the session has metadata 'team'" in run("--annotator", "alice",
                                                                 "--group-by", "team").output
    assert run("--annotator", "alice", "--all-annotators").exit_code == 2
    pooled = json.loads(run("--all-annotators", "--format", "json", "--bootstrap", "50").output)
    assert pooled["annotators"] == ["alice", "bob"]
    assert pooled["agreement"]["n"] == 24 and pooled["context_precision"]["goldens"] == 8
    assert {p["annotator"] for p in pooled["people"]["annotators"]} == {"alice", "bob"}
    bob = json.loads(run("--annotator", "bob", "--format", "json", "--bootstrap", "0").output)
    assert bob["agreement"]["percent"] == 1.0 and bob["agreement"]["ci95"] == {}


def test_csv_has_one_row_per_chunk_with_every_label_and_note(tmp_path: Path) -> None:
    import csv
    import io

    from click.testing import CliRunner

    from annotator.cli import cli

    goldens = [golden_obj(0, [1, 0], [1, None], human_notes={"alice": ["a, \"quoted\"\nnote", None]}),
               golden_obj(1, [0, 1, 1], [0, 1, 0])]
    make_session(tmp_path, goldens).close()
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert len(rows) == 5
    assert [r["rank"] for r in rows] == ["1", "2", "1", "2", "3"]
    assert rows[0]["note:alice"] == 'a, "quoted"\nnote' and rows[0]["label:alice"] == "1"
    assert rows[1]["label:alice"] == "" and rows[1]["judge_verdict"] == "0"
    assert rows[2]["judge_reason"] == "because" and rows[4]["chunk"] == "chunk 2 of 1"


def test_people_acceptance_speed_and_rubber_stamping(tmp_path: Path) -> None:
    goldens = [golden_obj(i, [1, 0, 1, 0, 1], None) for i in range(8)]
    with make_session(tmp_path, goldens) as session:
        chunks = [c.id for g in session.goldens() for c in g.chunks]
        verdicts = session.verdicts("j")
        for chunk in chunks[:30]:  # 30 accepts, each in 0.4 s: too fast to have read them
            v = verdicts[chunk].verdict
            session.decide("fast", chunk, v, "accept", judge="j", shown_verdict=v, decision_ms=400)
        for n, chunk in enumerate(chunks[:10]):  # slow and careful, flipping every other one
            v = verdicts[chunk].verdict
            session.decide("careful", chunk, v if n % 2 else flipped(v), "accept" if n % 2 else "flip",
                           judge="j", shown_verdict=v, decision_ms=5000 + n)
        report = build_report(session, annotators=["fast", "careful"], resamples=0)
    rows = {r.annotator: r for r in report.people.annotators}
    fast, careful = rows["fast"], rows["careful"]
    assert fast.chunks_decided == fast.shown_judge == 30
    assert fast.stats["acceptance_rate"].value == 1.0
    assert fast.stats["median_decision_ms"].value == 400
    assert fast.longest_fast_accept_run == 30 and fast.warning is not None
    assert "30 accepts in a row" in fast.warning
    assert careful.stats["acceptance_rate"].value == 0.5 and careful.warning is None
    assert careful.stats["median_decision_ms"].value == pytest.approx(5004.5)
    assert careful.stats["cohen_kappa"].value is not None
    assert any(line.startswith("fast: 30 accepts in a row") for line in report.headline)


def test_markdown_escapes_each_character_once() -> None:
    from annotator.report.layout import Grid
    from annotator.report.render import markdown_blocks

    text = markdown_blocks([Grid("x", "t", ["a"], [["a|b\\c\nd"]])], "T")
    assert "| a\\|b\\\\c d |" in text.splitlines()


def test_counts_say_what_they_count_and_directions_need_their_test(tmp_path: Path) -> None:
    # 16 goldens; alice labelled 7 of them, bob 3 of those 7; the judge is looser than alice
    # on 3 chunks and stricter on 1: a lean, not a finding.
    goldens = []
    for i in range(16):
        human = [1, 0, 1, 0] if i < 7 else None
        judge = [1, 1, 1, 0] if i < 3 else ([0, 0, 1, 0] if i == 3 else [1, 0, 1, 0])
        g = golden_obj(i, judge, human)
        if i < 3:
            g["human_labels"]["bob"] = [1, 1, 1, 0]
        goldens.append(g)
    with make_session(tmp_path, goldens) as session:
        alone = build_report(session, annotators=["alice"], resamples=200)
        pooled = build_report(session, resamples=200)
    assert alone.headline[0].startswith("Judge 'j' against alice on 28 chunks from 7 goldens:")
    assert alone.headline[1].startswith("The judge leans looser than the person, no more than "
                                        "chance explains: 3 chunks")
    assert pooled.headline[0].startswith(
        "Judge 'j' against alice and bob on 40 labels (28 chunks from 7 goldens):")
    assert "Over 10 person-golden pairs (7 goldens) complete under both" in pooled.headline[2]
    # With a large, one-sided difference the direction is a finding.
    many = [golden_obj(i, [1, 1, 1, 0], [1, 0, 1, 0]) for i in range(30)]
    with make_session(tmp_path, many, name="many") as session:
        firm = build_report(session, resamples=200)
    assert firm.headline[1].startswith("The judge is looser than the person: 30 chunks")
    assert "the judge overstates it by" in firm.headline[2]


def test_a_bias_whose_interval_holds_zero_is_not_called_a_direction(tmp_path: Path) -> None:
    goldens = [golden_obj(i, judge, [1, 0, 1, 1]) for i, judge in
               enumerate([[1, 1, 1, 1], [0, 0, 1, 1], [1, 0, 1, 1], [1, 0, 1, 1]] * 3)]
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, resamples=300)
    assert report.goldens is not None
    bias = report.goldens.stats["bias"]
    assert bias.interval is not None and bias.interval[0] < 0 < bias.interval[1]
    line = report.headline[2]
    assert "is within chance (bias 95% CI" in line
    assert "overstates it by" not in line and "understates it by" not in line


def test_no_figure_is_written_as_minus_zero() -> None:
    from annotator.stats.stat import number

    assert [number(-1e-12), number(-4e-5, sign=True), number(-0.001, 2, percent=True),
            number(0.0125, sign=True), number(-0.02, sign=True)] == [
        "0.0000", "0.0000", "0%", "+0.0125", "-0.0200"]
    assert Stat(-1e-13).format(4) == "0.0000"


def test_replicates_left_out_are_listed_on_one_line_per_kind(tmp_path: Path) -> None:
    # Two goldens, one all-relevant: many replicates draw one class, so kappa and its kin are
    # undefined in many of them.
    goldens = [golden_obj(0, [1, 1, 1], [1, 1, 1]), golden_obj(1, [1, 0, 0], [1, 0, 1])]
    with make_session(tmp_path, goldens) as session:
        report = build_report(session, resamples=200)
    from annotator.report.layout import Paragraphs, layout

    [dropped] = [b for b in layout(report) if b.id == "dropped"]
    assert isinstance(dropped, Paragraphs)
    assert len(report.dropped_replicates) >= 3 and len(dropped.lines) == 2
    assert dropped.lines == [
        "Undefined in too many of 200 replicates for an interval, so none is given: Lin's CCC "
        "(43), Cohen's kappa (43), Krippendorff's alpha (nominal) (43), share of the reranking "
        "gain the judge captures (43).",  # those drawing the all-relevant golden alone
        "Error rates by slice: up to 64 of 200 replicates drew no chunk of a slice's class and "
        "were left out."]


def test_without_an_interval_the_bias_sentence_says_why(tmp_path: Path) -> None:
    with make_session(tmp_path, [golden_obj(0, [0, 1, 0], [1, 1, 0])]) as session:
        one = build_report(session, resamples=200)
        none = build_report(session, resamples=0)
    assert "no interval to tell that from chance (too few complete goldens for one" in \
        one.headline[2]
    assert "('annotator report --bootstrap 2000' gives one)" in none.headline[2]
