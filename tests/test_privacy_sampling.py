"""Sampling the exponential mechanism: the fast path (scale, shift, exp and cumsum in place) against
the previous implementation kept here as the oracle (same inverse-CDF algorithm, same seed, same
draws), and the sampled law against the exact probabilities written out here (chi-square)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from scipy.special import logsumexp

from dpgames.privacy import ExponentialMechanism, FiniteDistribution
from dpgames.validation import ValidationError


def old_log_weights(scale: float, s: np.ndarray) -> np.ndarray:
    """The previous ExponentialMechanism.log_weights."""
    half = s / 2 - s.max() / 2
    with np.errstate(over="ignore"):
        logw = (2 * scale) * half if math.isfinite(2 * scale) else scale * (2 * half)
    return np.where(half == 0, 0.0, logw)


def old_sample_indices(scale: float, s: np.ndarray, size, seed):
    """The previous path: normalised log-probabilities, probabilities, labels, cumsum,
    searchsorted."""
    logw = old_log_weights(scale, s)
    shifted = logw - logw.max()
    weights = np.exp(shifted)
    total = weights.sum()
    probabilities = weights / total
    cdf = np.cumsum(probabilities)
    u = np.random.default_rng(seed).random(size) * cdf[-1]
    idx = np.searchsorted(cdf, u, side="right")
    return int(idx) if size is None else idx


CASES = [
    np.array([0.0, 1.0, 2.0, 3.0]),
    np.random.default_rng(0).uniform(0, 100, 1000),
    np.random.default_rng(1).normal(0, 1e3, 100_000),
    np.array([5.0]),
    np.array([1e300, -1e300, 0.0]),
]


@pytest.mark.parametrize("scores", CASES, ids=lambda s: f"m={s.size}")
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 30.0])
def test_same_draws_as_the_previous_implementation(scores, epsilon):
    em = ExponentialMechanism(epsilon)
    np.testing.assert_array_equal(em.log_weights(scores), old_log_weights(em.scale, scores))
    for size in (None, 5_000):
        expected = old_sample_indices(em.scale, scores, size, seed=11)
        np.testing.assert_array_equal(em.sample_indices(scores, size, rng=11), expected)
        np.testing.assert_array_equal(
            em.distribution(scores).sample_indices(size, rng=11), expected
        )
        np.testing.assert_array_equal(em.distribution(scores).sample(size, rng=11), expected)


def test_the_law_is_the_exact_one():
    scores = np.array([0.0, 1.0, 1.5, 3.0, -2.0, 3.0])
    eps, draws = 1.2, 300_000
    weights = [math.exp(eps * s / 2) for s in scores]  # Dwork & Roth Thm 3.10, Delta = 1
    exact = np.array(weights) / sum(weights)
    em = ExponentialMechanism(eps)
    for sampled in (
        em.sample_indices(scores, draws, rng=5),
        em.distribution(scores).sample(draws, rng=6),
    ):
        counts = np.bincount(sampled, minlength=scores.size)
        assert stats.chisquare(counts, draws * exact).pvalue > 1e-4
    np.testing.assert_allclose(em.distribution(scores).probabilities, exact, rtol=1e-14)


def test_labels_are_made_only_when_asked_and_impossible_outcomes_never_drawn():
    d = FiniteDistribution.from_log_weights(
        np.array([0.0, -np.inf, -1.0]), outcomes=["a", "b", "c"]
    )
    assert set(d.sample(10_000, rng=1).tolist()) == {"a", "c"}
    plain = FiniteDistribution.from_log_weights([0.0, -np.inf, -1.0])
    assert plain._labels is None and 1 not in plain.sample(10_000, rng=1)
    np.testing.assert_array_equal(plain.outcomes, [0, 1, 2])
    np.testing.assert_allclose(
        plain.log_probabilities, np.array([0.0, -np.inf, -1.0]) - logsumexp([0.0, -1.0])
    )


def test_from_log_weights_keeps_no_reference_to_the_callers_array_by_default():
    w = np.array([0.0, -1.0])
    d = FiniteDistribution.from_log_weights(w)
    w[1] = 5.0
    assert d.probabilities[0] > d.probabilities[1]


@pytest.mark.parametrize(
    "bad", [[], [np.nan, 1.0], [np.inf], [[1.0, 2.0]], ["a"], None, np.array([1.0, np.inf])]
)
def test_bad_scores_are_refused_before_sampling(bad):
    with pytest.raises(ValidationError, match="scores"):
        ExponentialMechanism(1.0).sample_indices(bad, rng=0)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    scores=st.lists(
        st.one_of(st.floats(-1e308, 1e308), st.sampled_from([0.0, 1e-300, -5e-324, 1e308])),
        min_size=1,
        max_size=30,
    ),
    epsilon=st.sampled_from([1e-300, 1e-6, 0.5, 10.0, 1e300]),
    size=st.sampled_from([None, 0, 7]),
)
def test_any_scores_give_a_clean_error_or_draws_of_positive_probability(scores, epsilon, size):
    try:
        em = ExponentialMechanism(epsilon)
    except ValidationError:
        return
    s = np.array(scores)
    draws = np.atleast_1d(em.sample_indices(s, size, rng=3))
    p = em.distribution(s).probabilities
    assert np.all((draws >= 0) & (draws < s.size)) and np.all(p[draws] > 0)
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
    np.testing.assert_array_equal(
        draws, np.atleast_1d(old_sample_indices(em.scale, s, size, seed=3))
    )
