import math

import numpy as np
import pytest
from scipy import stats

from dpgames import ExponentialMechanism


def plain_distribution(scores, epsilon, sensitivity):
    weights = [math.exp(epsilon * (s - max(scores)) / (2 * sensitivity)) for s in scores]
    return [w / sum(weights) for w in weights]


def test_distribution_matches_thm_3_10_weights():
    scores = [3.0, 1.0, 2.5, 0.0, 3.0]
    em = ExponentialMechanism(0.8, sensitivity=2.0)
    assert np.allclose(
        em.distribution(scores).probabilities, plain_distribution(scores, 0.8, 2.0), rtol=1e-13
    )


def test_mcsherry_talwar_convention_weights_and_guarantee():
    em = ExponentialMechanism(0.5, sensitivity=1.5, convention="mcsherry-talwar")
    scores = [1.0, 0.0]
    p = em.distribution(scores).probabilities
    assert p[0] / p[1] == pytest.approx(math.exp(0.5))
    assert em.guarantee.epsilon == pytest.approx(2 * 0.5 * 1.5)


def test_gumbel_noisy_max_has_the_same_law():
    scores = np.array([0.0, 1.0, 2.0, 4.0, 1.5])
    em = ExponentialMechanism(1.0, sensitivity=1.0)
    exact = em.distribution(scores).probabilities
    draws = em.sample_noisy_max(scores, size=100_000, rng=11)
    counts = np.bincount(draws, minlength=scores.size)
    assert stats.chisquare(counts, exact * draws.size).pvalue > 1e-3
    inverse_cdf = np.bincount(
        em.sample_indices(scores, size=100_000, rng=12), minlength=scores.size
    )
    assert stats.chisquare(inverse_cdf, exact * 100_000).pvalue > 1e-3


def test_privacy_loss_at_most_epsilon_on_all_neighbours():
    # Scores move by at most Delta between neighbours: every sign pattern of +-Delta changes.
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 5, size=6)
    em = ExponentialMechanism(0.7, sensitivity=1.0)
    wrong = ExponentialMechanism(0.7, sensitivity=1.0, convention="mcsherry-talwar")  # no factor 2

    def worst_loss(mechanism):
        worst = 0.0
        for pattern in range(3**6):
            shift = np.array([(pattern // 3**k) % 3 - 1 for k in range(6)], dtype=float)
            worst = max(
                worst,
                mechanism.distribution(base).max_privacy_loss(mechanism.distribution(base + shift)),
            )
        return worst

    assert worst_loss(em) <= 0.7 + 1e-12
    assert worst_loss(wrong) > 0.7  # the same enumeration catches weights missing the factor 2


def test_utility_theorem_3_11_exactly():
    rng = np.random.default_rng(5)
    scores = rng.uniform(0, 50, size=400)
    em = ExponentialMechanism(0.3, sensitivity=1.0)
    d = em.distribution(scores)
    for t in (0.5, 1.0, 3.0):
        bound = em.utility_loss_bound(scores.size, t)
        prob_bad = d.expect(scores <= scores.max() - bound)
        assert prob_bad <= math.exp(-t)


def test_extreme_parameters_stay_finite():
    em = ExponentialMechanism(1e-9)
    p = em.distribution([0.0, 1.0, 2.0]).probabilities
    assert np.allclose(p, 1 / 3, rtol=1e-8)
    big = ExponentialMechanism(1.0).distribution([2e12, 2e12 - 2.0, 0.0])
    assert np.isfinite(big.probabilities).all()
    assert big.probabilities[0] == pytest.approx(1 / (1 + math.exp(-1)))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0},
        {"epsilon": -1},
        {"epsilon": np.nan},
        {"epsilon": 1, "sensitivity": 0},
        {"epsilon": 1, "convention": "x"},
    ],
)
def test_invalid_parameters(kwargs):
    with pytest.raises(ValueError):
        ExponentialMechanism(**kwargs)
