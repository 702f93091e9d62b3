"""Private multiplicative weights: the update rule replayed by hand, the relative-entropy bound on
the number of updates (with negligible noise), online accuracy, and the privacy spent by hand."""

import math

import numpy as np
import pytest

from dpgames.privacy import PrivateMultiplicativeWeights


def range_queries(universe, k, rng):
    lo = rng.integers(0, universe, k)
    hi = np.minimum(lo + rng.integers(1, universe // 2, k), universe)
    u = np.arange(universe)
    return ((u >= lo[:, None]) & (u < hi[:, None])).astype(float)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    universe = 200
    histogram = np.bincount(
        np.clip(rng.normal(60, 10, 5000).astype(int), 0, universe - 1), minlength=universe
    )
    return histogram, range_queries(universe, 150, rng)


@pytest.mark.parametrize("selection", ["exponential", "sparse_vector"])
def test_update_rule_replayed_by_hand(data, selection):
    histogram, queries = data
    result = PrivateMultiplicativeWeights(1.0, 0.1, rounds=20, selection=selection).run(
        histogram, queries, rng=1
    )
    p = np.full(histogram.size, 1 / histogram.size)
    for i, sign in result.updates:
        p = p * np.exp(-0.05 * sign * queries[i])  # eta = alpha / 2
        p = p / p.sum()
    np.testing.assert_allclose(result.synthetic, p, rtol=1e-9)
    np.testing.assert_allclose(result.true_answers, queries @ histogram / histogram.sum())
    assert result.max_error_after_update.size == len(result.updates)
    assert result.max_error_after_update[-1] == pytest.approx(
        np.abs(queries @ p - result.true_answers).max()
    )


def test_sparse_vector_pmw_with_negligible_noise_meets_the_relative_entropy_bound(data):
    """Each update lowers KL(x/n || p) by >= eta alpha - eta^2 from at most ln N, and every online
    answer is within alpha (plus the negligible noise)."""
    histogram, queries = data
    alpha = 0.05
    pmw = PrivateMultiplicativeWeights(1e7, alpha, selection="sparse_vector")
    bound = math.log(histogram.size) / (alpha * alpha / 2 - alpha * alpha / 4)
    assert pmw.update_bound(histogram.size) == math.ceil(bound)
    result = pmw.run(histogram, queries, rng=2)
    assert 0 < len(result.updates) <= bound
    assert result.max_error <= alpha + 1e-3
    start_error = np.abs(queries.mean(axis=1) - result.true_answers).max()
    assert start_error > 5 * alpha  # the uniform start was far off: the updates did the work


def test_exponential_selection_reduces_the_error(data):
    histogram, queries = data
    result = PrivateMultiplicativeWeights(1e6, 0.05, rounds=300, selection="exponential").run(
        histogram, queries, rng=3
    )
    start_error = np.abs(queries.mean(axis=1) - result.true_answers).max()
    assert result.max_error < start_error / 4
    np.testing.assert_allclose(result.answers, queries @ result.synthetic)


@pytest.mark.parametrize("selection", ["exponential", "sparse_vector"])
def test_privacy_spent_by_hand(data, selection):
    histogram, queries = data
    result = PrivateMultiplicativeWeights(0.8, 0.1, rounds=10, selection=selection).run(
        histogram, queries, rng=4
    )
    events = {e.name: (e.guarantee.epsilon, e.count) for e in result.accountant.events}
    if selection == "exponential":  # 10 selections and 10 measurements at 0.8 / 20 each
        assert list(events.values()) == [(pytest.approx(0.04), 10), (pytest.approx(0.04), 10)]
    else:  # the sparse vector at 0.4, then 10 measurements at 0.04
        assert list(events.values()) == [(pytest.approx(0.4), 1), (pytest.approx(0.04), 10)]
    assert result.guarantee.epsilon == pytest.approx(0.8)
    assert "record" in result.guarantee.neighbouring.detail


@pytest.mark.parametrize(
    "kwargs, args, match",
    [
        ({"epsilon": 0.0, "alpha": 0.1}, None, "epsilon"),
        ({"epsilon": 1.0, "alpha": 0.1, "selection": "greedy"}, None, "selection"),
        ({"epsilon": 1.0, "alpha": 0.1, "eta": 0.2}, "default", "eta >= alpha"),
        ({"epsilon": 1.0, "alpha": 0.1}, ([1, 2], [[0.5, 1.5]]), r"\[0, 1\]"),
        ({"epsilon": 1.0, "alpha": 0.1}, ([1, 2], [[0.5, 0.5, 0.5]]), "one column"),
        ({"epsilon": 1.0, "alpha": 0.1}, ([0, 0], [[0.5, 0.5]]), "at least one record"),
    ],
)
def test_bad_input_is_refused(kwargs, args, match):
    with pytest.raises(ValueError, match=match):
        pmw = PrivateMultiplicativeWeights(**kwargs)
        histogram, queries = ([3, 4], [[1.0, 0.0]]) if args in (None, "default") else args
        pmw.run(histogram, queries, rng=0)
