"""Labelling designs end to end: 'sample' and 'plan' on a real session, the report's estimates
under a stratified or active sample, and the annotation screen's stopping rule."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.people.review import Review
from annotator.report.build import build_report
from annotator.report.render import markdown_report
from annotator.report.serialize import report_dict
from annotator.stats.metrics import context_precision
from annotator.store.session import Session
from annotator.tui.render import header
from tests.test_report import make_session

GOLDENS = 160


def study(seed: int = 5) -> list[dict[str, Any]]:
    """Goldens from two retrievers; the judge gives P(relevant) and errs where it is unsure."""
    rng = np.random.default_rng(seed)
    goldens = []
    for i in range(GOLDENS):
        truth = (rng.random(5) < rng.uniform(0.2, 0.8)).astype(int)
        p = np.clip(np.where(truth == 1, rng.beta(5, 2, 5), rng.beta(2, 5, 5)), 0.01, 0.99)
        judge = (p > 0.5).astype(int)
        goldens.append({
            "id": f"g{i:03d}", "user_input": f"question {i}", "reference": "the answer",
            "retrieved_contexts": [f"chunk {k} of {i}" for k in range(5)], "judge": "j",
            "judge_verdicts": [{"verdict": int(v), "p_relevant": float(q)}
                               for v, q in zip(judge, p, strict=True)],
            "metadata": {"retriever": "bm25" if i % 2 else "dense",
                         "truth": [int(t) for t in truth]}})
    return goldens


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def label(session: Session, goldens: list[dict[str, Any]], ids: list[str]) -> None:
    """Alice labels these goldens with their truth."""
    truth = {g["id"]: g["metadata"]["truth"] for g in goldens}
    chunk_ids = session.chunk_ids()
    for golden_id in ids:
        for chunk_id, verdict in zip(chunk_ids[golden_id], truth[golden_id], strict=True):
            session.decide("alice", chunk_id, verdict, "set")


@pytest.mark.parametrize("design", ["stratified", "active"])
def test_sample_stores_one_draw_and_gives_each_golden_its_chance(tmp_path: Path,
                                                                 design: str) -> None:
    make_session(tmp_path, study()).close()
    db = str(tmp_path / "s.db")
    code, out, err = invoke("sample", db, "--size", "40", "--design", design, "--seed", "3",
                            "--format", "json")
    assert code == 0, err
    drawn = json.loads(out)
    assert (drawn["design"], drawn["size"], drawn["seed"], drawn["judge"]) == (design, 40, 3, "j")
    ids = [row["golden_id"] for row in drawn["goldens"]]
    chances = [row["inclusion_probability"] for row in drawn["goldens"]]
    assert len(set(ids)) == len(ids) and all(0 < p <= 1 for p in chances)
    if design == "stratified":
        # Every stratum's draws stand for its goldens: one over the chance sums to them all.
        assert len(ids) == 40 and sum(1 / p for p in chances) == pytest.approx(GOLDENS)
    else:
        assert len(ids) == 40  # without replacement: 40 distinct goldens
        with Session(tmp_path / "s.db") as session:
            stored = session.random_sample()
        assert stored is not None and stored["draws"] == ids and not stored["replacement"]
        assert sum(stored["q"][g] for g in ids) <= 1
        # Each golden's chance is 40 times its size (at most 1): they add up to the sample.
        assert chances == pytest.approx([min(1.0, 40 * stored["q"][g]) for g in ids])
        assert sum(chances) <= 40
        # Goldens the judge is unsure of are drawn more often than the rest.
        p_of = {g["id"]: [v["p_relevant"] for v in g["judge_verdicts"]] for g in study()}
        unsure = {g: float(np.mean([min(p, 1 - p) for p in ps])) for g, ps in p_of.items()}
        assert np.mean([unsure[g] for g in ids]) > np.mean(list(unsure.values()))
    # The same arguments give the stored draw back; a different design is refused in words.
    again = invoke("sample", db, "--size", "40", "--design", design, "--seed", "3",
                   "--format", "json")
    assert again[0] == 0 and json.loads(again[1]) == drawn
    other = "active" if design == "stratified" else "stratified"
    code, _, err = invoke("sample", db, "--size", "40", "--design", other, "--seed", "3")
    assert code == 2 and f"--sample 40 --design {design} --seed 3" in err
    code, out, _ = invoke("sample", db, "--size", "40", "--design", design, "--seed", "3")
    assert code == 0 and out.splitlines()[1].split()[1] == ids[0]


def test_a_uniform_sample_lists_the_same_goldens_annotate_opens(tmp_path: Path) -> None:
    goldens = study()
    make_session(tmp_path, goldens).close()
    db = str(tmp_path / "s.db")
    code, out, _ = invoke("sample", db, "--size", "30", "--seed", "2", "--format", "json")
    assert code == 0
    drawn = json.loads(out)
    assert drawn["judge"] is None and {r["inclusion_probability"] for r in drawn["goldens"]} == {
        30 / GOLDENS}
    with Session(tmp_path / "s.db") as session:
        review = Review(session, "alice", "j", only=[r["golden_id"] for r in drawn["goldens"]])
        assert review.design == "uniform"


def test_the_design_needs_a_judge_that_judged_something(tmp_path: Path) -> None:
    goldens = study()
    for g in goldens:
        g["judge_verdicts"] = [None] * 5
    make_session(tmp_path, goldens).close()
    code, out, err = invoke("sample", str(tmp_path / "s.db"), "--size", "10", "--design",
                            "stratified", "--judge", "j")
    assert code == 2 and "has judged no golden whole" in err and "Traceback" not in out + err
    with Session(tmp_path / "s.db") as session:
        assert session.random_sample() is None  # a refused draw stores nothing


def test_a_stratified_sample_smaller_than_its_strata_need_is_refused_with_the_size(
        tmp_path: Path) -> None:
    make_session(tmp_path, study()).close()
    code, out, err = invoke("sample", str(tmp_path / "s.db"), "--size", "2", "--design",
                            "stratified", "--judge", "j")
    assert code == 2 and "keeps at least 2 goldens in each of its" in err, out + err
    needed = int(err.split("needs --size ")[1].split()[0])
    assert needed > 2 and "--design uniform" in err
    with Session(tmp_path / "s.db") as session:
        assert session.random_sample() is None
    code, out, err = invoke("sample", str(tmp_path / "s.db"), "--size", str(needed), "--design",
                            "stratified", "--judge", "j", "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["goldens"]) == needed  # what was asked, exactly


def test_plan_gives_each_design_a_size_and_rescales_on_labels(tmp_path: Path) -> None:
    goldens = study()
    make_session(tmp_path, goldens).close()
    db = str(tmp_path / "s.db")
    code, out, _ = invoke("plan", db, "--target-width", "0.1")
    assert code == 0
    sizes = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in out.splitlines()
             if line.strip().split(" ")[0] in ("uniform", "stratified", "active")}
    assert set(sizes) == {"uniform", "stratified", "active"}
    assert all(n > 0 for n in sizes.values()) and "(fewest)" in out
    assert "P(relevant) on 160 goldens" in out and "rescaled to" not in out
    # Before people's labels the sizes take the judge at its word, and the plan says so.
    assert "Until people have labelled 20 goldens these sizes take the judge at its word" in out
    assert f"sample {db} --size N --design D" in out  # the follow-up names this session
    # A judge unsure everywhere alike gains nothing from leaning on its confidence.
    assert sizes["active"] <= sizes["uniform"]
    # Halving the width needs about four times the goldens from an endless population:
    # n0 = n / (1 - n / N) undoes the finite-population correction of these 160 goldens.
    code, out2, _ = invoke("plan", db, "--target-width", "0.05")
    wider = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in out2.splitlines()
             if line.strip().split(" ")[0] in ("uniform", "stratified", "active")}

    def endless(n: int) -> float:
        return n / (1 - n / 160)

    assert 3.5 <= endless(wider["uniform"]) / endless(sizes["uniform"]) <= 4.5
    with Session(tmp_path / "s.db") as session:
        label(session, goldens, [g["id"] for g in goldens[:20]])
    code, out3, _ = invoke("plan", db, "--target-width", "0.05")
    assert code == 0 and "rescaled to what people found on 20 labelled goldens" in out3
    assert "Until people" not in out3


@pytest.mark.parametrize("design", ["stratified", "active"])
def test_the_report_estimates_mean_cp_as_the_design_allows(tmp_path: Path, design: str) -> None:
    goldens = study()
    with make_session(tmp_path, goldens) as session:
        from annotator.scoring.sampling import draw

        sample = draw(session, 60, design, 1, "j")
        ids = sample["golden_ids"]
        label(session, goldens, ids)
        # A golden labelled outside the sample was not drawn: it must change nothing.
        outside = next(g["id"] for g in goldens if g["id"] not in ids)
        before = build_report(session, resamples=0).design
        label(session, goldens, [outside])
        report = build_report(session, resamples=0, target_width=0.02)
        # A sample stored by the release before kept its systems under "systems".
        stored = dict(session.random_sample() or {})
        stored["systems"] = stored.pop("stratum_systems" if design == "stratified"
                                       else "golden_systems")
        session.conn.execute("UPDATE settings SET value = ? WHERE key = 'random_sample'",
                             [json.dumps(stored)])
        session.sqlite.commit()
        old = build_report(session, resamples=0, target_width=0.02).design
    section = report.design
    assert old is not None and section is not None and old.systems == section.systems
    assert section is not None and before is not None and report.ppi is None
    assert section.design == design and section.sampled == len(ids)
    assert section.labelled == len(ids)
    best = section.stats["ppi_plus_plus"]
    assert best.value == pytest.approx(before.stats["ppi_plus_plus"].value)
    truth = np.mean([context_precision(g["metadata"]["truth"]) for g in goldens])
    assert best.interval is not None and best.interval[0] < truth < best.interval[1]
    human = {g["id"]: context_precision(g["metadata"]["truth"]) for g in goldens}
    if design == "stratified":
        # People's labels alone: each stratum's labelled mean weighted by its share.
        members = sample["strata"]
        by_hand = sum(len(m) / GOLDENS * float(np.mean([human[g] for g in m if g in ids]))
                      for m in members.values())
        assert section.stats["human_only"].value == pytest.approx(by_hand)
    else:
        w = dict.fromkeys(ids, 0.0)
        for g in sample["draws"]:
            w[g] += 1 / sample["q"][g]
        by_hand = sum(w[g] * human[g] for g in ids) / sum(w.values())
        assert section.stats["human_only"].value == pytest.approx(by_hand)
    assert set(section.systems) == {"bm25", "dense"}
    assert all(s.interval is not None for s in section.systems.values())
    fp = section.stats["fp_rate"]
    assert fp.value is not None and 0 < fp.value < 0.5
    # The stopping rule: the half-width against --target-width, and how many more.
    assert section.half_width is not None
    assert section.half_width == pytest.approx((best.interval[1] - best.interval[0]) / 2)
    assert section.target == 0.02 and section.more is not None
    assert section.more == max(0, math.ceil(len(sample.get("draws", ids))
                                            * (section.half_width / 0.02) ** 2)
                               - len(sample.get("draws", ids)))
    data = report_dict(report)["design"]
    assert data["design"] == design and data["more_needed"] == section.more
    assert data["ci95"]["ppi_plus_plus"] == list(best.interval)
    text = markdown_report(report)
    assert f"Mean context precision under the {design} sample" in text
    assert "(--target-width)" in text
    assert any(line.startswith(f"Mean CP under the {design} sample") for line in report.headline)


def test_the_annotation_header_names_the_design_and_the_stopping_rule(tmp_path: Path) -> None:
    goldens = study()
    with make_session(tmp_path, goldens) as session:
        from annotator.scoring.sampling import draw

        ids = draw(session, 30, "stratified", 0, "j")["golden_ids"]
        review = Review(session, "alice", "j", only=ids)
        assert review.design == "stratified" and review.golden_ids == ids
        assert "(stratified sample)" in header(review, "s.db").plain
        label(session, goldens, ids[:-1])
        review = Review(session, "alice", "j", only=ids)
        review.open(len(ids) - 1)  # the one golden left
        for _ in review.chunk_views():
            outcome = review.accept()
            assert outcome.ok
        assert "Sample: mean CP +-" in outcome.message
        assert review.stopping in header(review, "s.db").plain


def test_a_stored_sample_of_a_design_this_release_does_not_know_is_refused(
        tmp_path: Path) -> None:
    goldens = study()
    with make_session(tmp_path, goldens) as session:
        from annotator.scoring.sampling import draw

        draw(session, 40, "active", 1, "j")
        stored = dict(session.random_sample() or {})
        stored["design"] = "adaptive"  # a later release's, or a hand edit
        session.conn.execute("UPDATE settings SET value = ? WHERE key = 'random_sample'",
                             [json.dumps(stored)])
        session.sqlite.commit()
    db = str(tmp_path / "s.db")
    code, _, err = invoke("report", db)
    assert code == 2 and "Traceback" not in err
    assert 'holds a sample drawn by a design this release does not know ("adaptive"; it ' \
           "knows uniform, stratified, active)" in " ".join(err.split())
    # Its advice works as printed: drawing again replaces the sample, and the report reads it.
    code, _, err = invoke("sample", db, "--size", "40", "--design", "active", "--judge", "j")
    assert code == 0, err
    code, _, err = invoke("report", db, "--bootstrap", "0")
    assert code == 0, err
