"""Context precision and precision@k: the savings golden's numbers (docs/statistics.md), RAGAS's
floats, and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.stats.metrics import context_precision, precision_at_k

verdict_lists = st.lists(st.integers(0, 1), min_size=1, max_size=50)


def test_the_explainers_savings_golden() -> None:
    assert round(context_precision([1, 1, 0, 1, 1]), 4) == 0.8875
    # The value RAGAS's own helper prints, to the last bit.
    assert context_precision([1, 1, 0, 1, 1]) == 0.8874999999778125
    assert context_precision([1, 1, 0, 1, 1], ragas_compatible=False) == 0.8875
    assert precision_at_k([1, 1, 0, 1, 1]) == [1.0, 1.0, 2 / 3, 0.75, 0.8]


@pytest.mark.parametrize(
    ("noise_rank", "expected"),
    [(1, 0.6792), (2, 0.8042), (3, 0.8875), (4, 0.9500), (5, 1.0000)],
)
def test_moving_the_noise_chunk_through_the_ranks(noise_rank: int, expected: float) -> None:
    verdicts = [0 if k == noise_rank else 1 for k in range(1, 6)]
    assert round(context_precision(verdicts), 4) == expected


def test_the_judges_stricter_reading() -> None:
    assert round(context_precision([1, 0, 0, 1, 1]), 4) == 0.7


@pytest.mark.parametrize(
    ("verdicts", "ragas_repr"),
    [
        ([1], "0.9999999999"),
        ([1, 1], "0.99999999995"),
        ([1, 1, 1], "0.9999999999666667"),
        ([1, 0], "0.9999999999"),
        ([0, 1], "0.49999999995"),
        ([1, 0, 1], "0.8333333332916666"),
        ([0, 0, 1], "0.3333333333"),
        ([0, 0], "0.0"),
    ],
)
def test_ragas_0_4_floats_exactly(verdicts: list[int], ragas_repr: str) -> None:
    assert repr(context_precision(verdicts)) == ragas_repr


@pytest.mark.parametrize(
    ("verdicts", "exact"),
    [([1, 0, 1, 0, 0], 5 / 6), ([0, 1, 1, 0, 0], 7 / 12), ([0, 0, 0, 0, 1], 0.2),
     ([0, 0, 0, 0, 0], 0.0)],
)
def test_statistics_oracles(verdicts: list[int], exact: float) -> None:
    assert context_precision(verdicts, ragas_compatible=False) == pytest.approx(exact, abs=1e-15)
    assert context_precision(verdicts) == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("bad", [[2], ["1"], [True], [1, None], [0.5], [-1]])
def test_anything_but_0_or_1_is_refused_with_the_rank(bad: list[object]) -> None:
    with pytest.raises(ValueError, match=r"rank \d+ .* must be the integer 0 or 1"):
        context_precision(bad)  # type: ignore[arg-type]


def test_an_empty_list_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        context_precision([])
    with pytest.raises(ValueError, match="empty"):
        precision_at_k([])


def _reference_average_precision(verdicts: list[int]) -> float:
    """The savings golden computed by hand (docs/statistics.md), exact."""
    total, hits = 0.0, 0
    for k, verdict in enumerate(verdicts, 1):
        hits += verdict
        total += (hits / k) * verdict
    return total / sum(verdicts) if sum(verdicts) else 0.0


@given(verdict_lists)
def test_matches_the_hand_computation_and_ragas_within_1e9(verdicts: list[int]) -> None:
    exact = context_precision(verdicts, ragas_compatible=False)
    assert exact == pytest.approx(_reference_average_precision(verdicts), abs=1e-12)
    assert abs(context_precision(verdicts) - exact) < 1e-9


@given(verdict_lists)
def test_cp_is_between_0_and_1(verdicts: list[int]) -> None:
    for ragas in (True, False):
        assert 0.0 <= context_precision(verdicts, ragas_compatible=ragas) <= 1.0


@given(verdict_lists)
def test_cp_is_1_exactly_when_no_noise_precedes_the_last_relevant_chunk(verdicts: list[int]) -> None:
    if 1 not in verdicts:
        assert context_precision(verdicts) == 0.0
        return
    last = max(i for i, v in enumerate(verdicts) if v == 1)
    clean = 0 not in verdicts[:last]
    assert math.isclose(context_precision(verdicts), 1.0, abs_tol=1e-9) is clean


@given(verdict_lists, st.data())
def test_moving_a_noise_chunk_down_never_lowers_cp(verdicts: list[int], data: st.DataObject) -> None:
    noise = [i for i, v in enumerate(verdicts) if v == 0]
    if not noise:
        return
    i = data.draw(st.sampled_from(noise))
    j = data.draw(st.integers(i, len(verdicts) - 1))
    moved = verdicts[:i] + verdicts[i + 1:]
    moved.insert(j, 0)
    for ragas in (True, False):
        before = context_precision(verdicts, ragas_compatible=ragas)
        after = context_precision(moved, ragas_compatible=ragas)
        assert after >= before - 1e-12


def test_context_precision_waits_for_every_chunk() -> None:
    from annotator.stats.metrics import context_precision_when_complete

    assert context_precision_when_complete([1, None, 1]) is None
    assert context_precision_when_complete([1, 1, 0, 1, 1]) == context_precision([1, 1, 0, 1, 1])
    assert context_precision_when_complete([0, 0]) == 0.0


def test_cp_of_many_goldens_at_once_is_bit_for_bit_cp_of_each() -> None:
    import random

    import numpy as np

    from annotator.stats.metrics import context_precision_by_golden, context_precision_when_complete

    rng = random.Random(1)
    lists = []
    for _ in range(5_000):
        size = rng.choice([1, 2, 3, 5, 10, 40, 56, 57, 80, 200])  # past the keyed 56 too
        choices = [0, 1, 1, -1] if rng.random() < 0.1 else [0, 1]  # some incomplete
        lists.append([rng.choice(choices) for _ in range(size)])
    got = context_precision_by_golden(np.array([v for one in lists for v in one], dtype=np.int8),
                                      np.array([len(one) for one in lists]))
    for one, value in zip(lists, got.tolist(), strict=True):
        want = context_precision_when_complete([None if v < 0 else v for v in one])
        assert (math.isnan(value) if want is None else value == want), one
    assert context_precision_by_golden(np.zeros(0, dtype=np.int8), np.zeros(0, dtype=int)).size == 0


def test_bootstrap_replicates_are_those_of_whole_blocks_of_draws() -> None:
    """Drawing a replicate at a time (a third of the memory) gives the very replicates that
    drawing a whole block of them at once gave."""
    import numpy as np

    from annotator.stats import bootstrap

    rng = np.random.default_rng(3)
    for goldens in (7, 1_000, 30_001):
        sums = bootstrap.ClusterSums(goldens)
        for k in range(12):
            sums.add(f"c{k}", rng.integers(0, goldens, 3 * goldens), rng.random(3 * goldens))
        matrix = np.column_stack(list(sums.columns.values()))
        draws, blocks, done = np.random.default_rng(0), [], 0
        while done < 450:
            b = min(bootstrap.BLOCK, 450 - done)
            drawn = draws.integers(0, goldens, size=(b, goldens)) + (np.arange(b) * goldens)[:, None]
            blocks.append(np.bincount(drawn.ravel(), minlength=b * goldens).reshape(b, goldens)
                          @ matrix)
            done += b
        expected = np.vstack(blocks)
        got = sums.resample(450, 0)
        assert all(np.array_equal(got[name], expected[:, i]) for i, name in enumerate(got))
