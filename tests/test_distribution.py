import math

import numpy as np
import pytest
from scipy import stats

from dpgames import FiniteDistribution


def test_normalisation_matches_plain_computation():
    logw = [0.3, -1.2, 2.0, 0.0]
    total = sum(math.exp(w) for w in logw)
    d = FiniteDistribution.from_log_weights(logw)
    assert np.allclose(d.probabilities, [math.exp(w) / total for w in logw], rtol=1e-14)


def test_huge_log_weights_do_not_overflow():
    d = FiniteDistribution.from_log_weights([1e12, 1e12 - 1.0, 0.0])
    p = d.probabilities
    assert np.isfinite(d.log_probabilities[:2]).all()
    assert p[0] == pytest.approx(1 / (1 + math.exp(-1)), rel=1e-12)
    assert p[2] == 0.0 and d.log_probabilities[2] == pytest.approx(-1e12, rel=1e-12)


def test_impossible_outcomes_are_never_sampled():
    d = FiniteDistribution.from_log_weights([0.0, -np.inf, 0.0, -np.inf])
    draws = d.sample_indices(10_000, rng=1)
    assert set(np.unique(draws)) == {0, 2}


def test_sampling_frequencies_match_chi_square():
    p = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625])
    d = FiniteDistribution.from_probabilities(p, outcomes=np.array(list("abcde")))
    draws = d.sample(200_000, rng=7)
    counts = np.array([(draws == c).sum() for c in "abcde"])
    assert stats.chisquare(counts, p * draws.size).pvalue > 1e-3


def test_one_draw_is_a_label_and_seeded():
    d = FiniteDistribution.from_probabilities([0.2, 0.8], outcomes=np.array([10.0, 20.0]))
    assert d.sample(rng=3) == d.sample(rng=3)
    assert d.sample(rng=3) in (10.0, 20.0)


def test_expect_vectorised_function_and_array():
    d = FiniteDistribution.from_probabilities([1, 2, 3, 4], outcomes=np.array([1.0, 2.0, 3.0, 4.0]))
    assert d.expect(lambda x: x**2) == pytest.approx((1 + 8 + 27 + 64) / 10)
    both = d.expect(np.stack([np.ones(4), np.arange(4.0)], axis=1))
    assert both == pytest.approx([1.0, (0 + 2 + 6 + 12) / 10])


def test_privacy_loss_is_the_largest_log_ratio():
    p = FiniteDistribution.from_probabilities([0.5, 0.3, 0.2])
    q = FiniteDistribution.from_probabilities([0.4, 0.4, 0.2])
    expected = max(abs(math.log(0.5 / 0.4)), abs(math.log(0.3 / 0.4)))
    assert p.max_privacy_loss(q) == pytest.approx(expected)
    r = FiniteDistribution.from_probabilities([0.5, 0.5, 0.0])
    assert p.max_privacy_loss(r) == math.inf
    assert r.max_privacy_loss(r) == 0.0


def test_mixture_against_direct_formula():
    p = FiniteDistribution.from_probabilities([0.7, 0.3, 0.0])
    q = FiniteDistribution.from_probabilities([0.0, 0.5, 0.5])
    assert np.allclose(p.mixture(q, 0.25).probabilities, [0.525, 0.35, 0.125])


@pytest.mark.parametrize("bad", [[], [np.nan, 0.0], [np.inf, 0.0], [-np.inf, -np.inf]])
def test_bad_log_weights_are_refused(bad):
    with pytest.raises(ValueError):
        FiniteDistribution.from_log_weights(bad)
