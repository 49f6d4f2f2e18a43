"""The qualification gate (--gate N): a newcomer answers N check chunks before any golden; their
labels count toward the truth only once they pass at --checks-min; people who labelled before
the gate are exempt; the report and the dashboard say who is gated and why."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.columns import MISSING
from annotator.people.review import Review
from annotator.people.team import team_progress
from annotator.report.build import build_report
from annotator.report.serialize import report_dict
from annotator.scoring.gate import keep_gate, standing
from annotator.scoring.truth import truth
from annotator.store.session import Session
from annotator.tui.serve import dashboard_html
from tests.conftest import banking_file, dump

GATE = 4


@pytest.fixture
def db(place: str | Path) -> str | Path:
    """The banking sample labelled by two reviewers, with gold labels on every rank of three
    goldens (the checks: 15 scored chunks), and a gate of 4 chunks at 0.75; on each store."""
    path = banking_file(place, people=("sample-reviewer", "second-reviewer"))
    with Session(path) as session:
        said = session.verdicts("sample-judge")
        for golden_id in session.golden_ids()[-3:]:
            for chunk in session.golden(golden_id).chunks:
                verdict = said[chunk.id].verdict
                assert verdict is not None
                session.set_gold(chunk.id, verdict, "carol")
    return path


def _serve(db: str | Path, *options: str) -> str:
    """Run serve on a port already taken: it keeps what it keeps in the session, then stops
    with the sentence for the port, so the command ends by itself."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(cli, ["serve", str(db), *options, "--port", port])
    return result.output


def on_check(review: Review) -> bool:
    """Whether the review shows a check (a function: mypy narrows no attribute)."""
    return review.check is not None


def _qualify(session: Session, who: str, right: bool) -> Review:
    """A newcomer's review: answer every check chunk shown (right, or each one wrong) until
    the first golden comes."""
    review = Review(session, who, "sample-judge")
    assert on_check(review)  # a check first, before any golden
    while (check := review.check) is not None:
        truth_ = check.truth[review.cursor]
        answer = 1 if truth_ is None else (truth_ if right else 1 - truth_)
        assert review.set(answer).ok
    return review


def test_a_newcomer_answers_checks_first_and_counts_once_passed(db: str | Path) -> None:
    with Session(db) as session:
        keep_gate(session, GATE, 0.75)
        assert standing(session)["sample-reviewer"].status == "exempt"  # type: ignore[index]
        review = _qualify(session, "nia", right=True)
        answered, correct = session.check_scores()["nia"]
        assert answered >= GATE and correct == answered
        assert review.check is None and not review.gated  # now a golden
        at_gate = standing(session)
        assert at_gate is not None and at_gate["nia"].status == "passed"
        # nia says the opposite of what both reviewers agree on: her label counts, so the
        # chunk is disputed now.
        frame = session.chunk_frame()
        before = truth(session, frame=frame).verdict.copy()
        rows = frame.slots(np.asarray([v.chunk.id for v in review.chunk_views()]))
        i = next(i for i, row in enumerate(rows.tolist()) if before[row] != MISSING)
        review.select(i)
        assert review.set(1 - int(before[rows[i]])).ok
        assert truth(session, frame=frame).verdict[rows[i]] == MISSING


def test_a_newcomer_below_the_minimum_is_kept_but_left_out_of_the_truth(db: str | Path) -> None:
    with Session(db) as session:
        keep_gate(session, GATE, 0.75)
        frame = session.chunk_frame()
        before = truth(session, frame=frame).verdict.copy()
        review = _qualify(session, "fay", right=False)
        at_gate = standing(session)
        assert at_gate is not None and at_gate["fay"].status == "failed"
        assert "labels not counted" in at_gate["fay"].sentence
        while review.set(0).ok and len(session.labels("fay")) < 20:
            pass
        assert len(session.labels("fay")) == 20  # kept on disk
        assert np.array_equal(truth(session, frame=frame).verdict, before)  # never counted
        document = report_dict(build_report(session, gold=True, resamples=50))
        assert document["gate"]["fay"] == {"status": "failed", "counts": False,
                                           "answered": at_gate["fay"].answered, "right": 0,
                                           "needed": GATE, "minimum": 0.75}
        assert any("Left out of the truth by the qualification gate: fay" in line
                   for line in document["headline"])
        pooled = build_report(session, resamples=50)
        assert "fay" not in pooled.annotators
        page = dashboard_html(team_progress(session))
        assert "qualification gate" in page and "failed: 0 of" in page


def test_a_gate_the_checks_cannot_fill_is_a_sentence_and_stores_nothing(db: str | Path) -> None:
    before = dump(db)
    output = _serve(db, "--gate", "99")
    assert "--gate 99 asks each newcomer for 99 check chunks" in output
    assert "Traceback" not in output
    with Session(db) as session:
        assert session.gate() is None
    assert [line for line in dump(db) if "gate" in line] == [
        line for line in before if "gate" in line]


def test_the_gate_is_kept_by_serve_and_annotate_reads_it(db: str | Path) -> None:
    assert "is in use" in _serve(db, "--gate", str(GATE))
    with Session(db) as session:
        gate = session.gate()
        assert gate is not None and gate["checks"] == GATE
        assert gate["exempt"] == ["sample-reviewer", "second-reviewer"]
        assert on_check(Review(session, "newcomer", "sample-judge"))
        assert Review(session, "sample-reviewer", "sample-judge").check is None
    said = CliRunner().invoke(cli, ["info", str(db)]).output
    assert f"Qualification gate: {GATE} check chunks at 80% for newcomers (2 people exempt)" \
        in " ".join(said.split())


def test_a_gated_newcomer_cannot_skip_the_checks_with_the_golden_keys(db: str | Path) -> None:
    with Session(db) as session:
        keep_gate(session, GATE, 0.75)
        review = Review(session, "kim", "sample-judge")
        assert on_check(review)
        assert review.next_golden().ok and on_check(review)
        assert review.previous_golden().ok and on_check(review)
        assert review.go_to(session.golden_ids()[0]).ok and on_check(review)
        assert review.take_next().ok and on_check(review)
        assert session.labels("kim") == {}  # no golden decided before the gate
