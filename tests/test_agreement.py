"""Chunk-level agreement against scikit-learn, statsmodels and krippendorff: oracles and random data."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
from statsmodels.stats.inter_rater import fleiss_kappa

from annotator.stats.chunk_agreement import (
    ChunkAgreement,
    Confusion,
    cohen_kappa,
    direction,
    gwet_ac1,
    krippendorff_alpha,
)


def pairs(c: Confusion) -> tuple[list[int], list[int]]:
    """(human, judge) label lists with the confusion's counts."""
    human = [1] * c.tp + [0] * c.fp + [1] * c.fn + [0] * c.tn
    judge = [1] * c.tp + [1] * c.fp + [0] * c.fn + [0] * c.tn
    return human, judge


# docs/statistics.md, chunk-level agreement: examples A (judge looser), B (skewed) and B2 (balanced).
ORACLES = [
    (Confusion(tp=9, fp=4, fn=1, tn=6), 0.5000, 0.51100, 0.50128),
    (Confusion(tp=90, fp=5, fn=5, tn=0), -0.05263, 0.88950, -0.04737),
    (Confusion(tp=45, fp=5, fn=5, tn=45), 0.8000, 0.8000, 0.8010),
]


@pytest.mark.parametrize(("c", "kappa", "ac1", "alpha"), ORACLES)
def test_statistics_md_oracles(c: Confusion, kappa: float, ac1: float, alpha: float) -> None:
    assert cohen_kappa(c).value == pytest.approx(kappa, abs=5e-5)
    assert gwet_ac1(c).value == pytest.approx(ac1, abs=5e-5)
    assert krippendorff_alpha(c).value == pytest.approx(alpha, abs=5e-5)


def test_example_a_precision_recall_and_direction() -> None:
    a = ChunkAgreement.of(Confusion(tp=9, fp=4, fn=1, tn=6))
    assert (a.precision.value, a.recall.value, a.f1.value) == pytest.approx((0.6923, 0.9, 0.7826),
                                                                            abs=5e-5)
    assert a.percent.value == 0.75
    # 4 against 1 is a lean (exact McNemar p = 0.375), a finding only where the test says so.
    assert direction(a.confusion, 0.375).startswith(
        "The judge leans looser than the person, no more than chance explains: 4 chunks")
    assert direction(a.confusion).startswith("The judge leans looser")
    assert direction(a.confusion, 0.01).startswith("The judge is looser than the person: 4 chunks")


def test_the_kappa_paradox_gets_a_sentence() -> None:
    skewed = ChunkAgreement.of(Confusion(tp=90, fp=5, fn=5, tn=0))
    assert skewed.note is not None and "95% of chunks are relevant" in skewed.note
    assert ChunkAgreement.of(Confusion(tp=45, fp=5, fn=5, tn=45)).note is None


confusions = st.builds(Confusion, st.integers(0, 40), st.integers(0, 40), st.integers(0, 40),
                       st.integers(0, 40)).filter(lambda c: c.n > 0)


@settings(max_examples=200)
@given(confusions)
def test_random_tables_against_the_libraries(c: Confusion) -> None:
    human, judge = pairs(c)
    a = ChunkAgreement.of(c)
    single_class = len(set(human) | set(judge)) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk_kappa = cohen_kappa_score(human, judge)
    if single_class:
        assert a.cohen_kappa.value is None and "single class" in str(a.cohen_kappa.reason)
        assert a.krippendorff_alpha.value is None
        assert a.gwet_ac1.value == 1.0  # defined, as irrCAC gives
        return
    if np.isnan(sk_kappa):
        assert a.cohen_kappa.value is None
    else:
        assert a.cohen_kappa.value == pytest.approx(sk_kappa, abs=1e-12)
    alpha = krippendorff.alpha(reliability_data=[human, judge], level_of_measurement="nominal")
    assert a.krippendorff_alpha.value == pytest.approx(alpha, abs=1e-12)
    # Scott's pi (Fleiss on two raters) <= Cohen's kappa, and AC1's closed form by hand.
    table = np.array([[h + j, 2 - h - j] for h, j in zip(human, judge, strict=True)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pi = fleiss_kappa(table)
    if not np.isnan(pi) and a.cohen_kappa.value is not None:
        assert a.cohen_kappa.value >= pi - 1e-12
    pooled = (sum(human) + sum(judge)) / (2 * c.n)
    p_o = c.agreements / c.n
    assert a.gwet_ac1.value == pytest.approx((p_o - 2 * pooled * (1 - pooled))
                                             / (1 - 2 * pooled * (1 - pooled)), abs=1e-12)
    precision, recall, f1, _ = precision_recall_fscore_support(
        human, judge, average="binary", zero_division=np.nan)
    for mine, theirs in ((a.precision, precision), (a.recall, recall), (a.f1, f1)):
        if np.isnan(theirs):
            assert mine.value is None and mine.reason
        else:
            assert mine.value == pytest.approx(theirs, abs=1e-12)


def test_nothing_decided_is_undefined_everywhere() -> None:
    a = ChunkAgreement.of(Confusion())
    for stat in (a.percent, a.cohen_kappa, a.gwet_ac1, a.krippendorff_alpha, a.precision,
                 a.recall, a.f1, a.human_prevalence):
        assert stat.value is None and stat.reason
    assert a.cohen_kappa.format() == "undefined (no chunk decided by both)"


def test_a_judge_that_calls_every_chunk_the_same_has_kappa_exactly_zero() -> None:
    import numpy as np

    from annotator.stats.chunk_agreement import kappa_values

    # The numbers the hostile tester met: 9e-17 in the JSON, from two rounded shares.
    for tp, fp, fn, tn in [(0, 0, 37, 63), (0, 0, 1, 2), (41, 59, 0, 0), (3, 6, 1, 2)]:
        assert kappa_values(tp, fp, fn, tn) == 0.0
    tables = np.array([[0, 0, 37, 63], [5, 2, 3, 9], [0.5, 1.0, 1.0, 2.0]]).T  # weights too
    got = kappa_values(*tables)
    assert got[0] == 0.0 and got[2] == 0.0 and 0 < got[1] < 1
