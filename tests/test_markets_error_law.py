"""The surveyor's exact error law (oracles: scipy's Laplace, enumeration of bit vectors,
quadrature)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from scipy.integrate import quad

from dpgames.markets.error_law import ErrorLaw, least_epsilon, worst_case_radius
from dpgames.validation import ValidationError


def _within(shift, scale, t):
    lap = stats.laplace(loc=shift, scale=scale)
    return lap.cdf(t) - lap.cdf(-t)


@pytest.mark.parametrize(
    "shift, scale, t", [(0.0, 1.0, 0.5), (3.0, 2.0, 4.0), (-7.5, 0.1, 7.0), (2.0, 5.0, 0.0)]
)
def test_point_law_against_scipy(shift, scale, t):
    law = ErrorLaw.point(shift, scale)
    assert law.probability_within(t) == pytest.approx(_within(shift, scale, t), abs=1e-14)
    assert law.cdf([t])[0] == pytest.approx(stats.laplace(loc=shift, scale=scale).cdf(t), abs=1e-14)
    mae = quad(
        lambda y: abs(y) * stats.laplace(loc=shift, scale=scale).pdf(y),
        -np.inf,
        np.inf,
        points=None,
    )[0]
    assert law.mean_absolute_error() == pytest.approx(mae, rel=1e-8)


def test_unbought_law_equals_enumeration_of_bit_vectors():
    q = np.array([0.1, 0.1, 0.7, 0.5, 0.5])
    law = ErrorLaw.from_unbought(q, scale=1.3)
    t = 1.2
    total = 0.0
    for bits in itertools.product((0, 1), repeat=q.size):
        b = np.array(bits)
        weight = np.prod(np.where(b == 1, q, 1 - q))
        total += weight * _within(float(np.sum(0.5 - b)), 1.3, t)
    assert law.probability_within(t) == pytest.approx(total, abs=1e-13)
    assert law.mean() == pytest.approx(np.sum(0.5 - q), abs=1e-13)


def test_no_noise_law_is_the_point_mass():
    law = ErrorLaw.point(1.5, None)
    assert law.probability_within(1.5) == 1.0 and law.probability_within(1.49) == 0.0
    assert law.mean_absolute_error() == 1.5


@pytest.mark.parametrize(
    "u, eps, beta", [(0, 0.5, 0.1), (1, 0.5, 0.1), (6, 0.2, 0.05), (40, 1.0, 0.5), (5, 3.0, 1e-6)]
)
def test_worst_case_radius_is_the_worst_bit_vector(u, eps, beta):
    t = float(worst_case_radius(u, eps, beta))
    # enumerate every number of ones among the u unbought agents: D = u/2 - ones
    failures = [1 - _within(u / 2 - ones, 1 / eps, t) for ones in range(u + 1)]
    assert max(failures) == pytest.approx(beta, rel=1e-9)
    # and it is the least such radius: a hair smaller fails for the worst vector
    assert 1 - _within(u / 2, 1 / eps, t * (1 - 1e-6)) > beta


@pytest.mark.parametrize(
    "n, u, alpha, beta",
    [(100, 10, 0.1, 0.05), (1000, 1, 0.01, 0.2), (50, 0, 0.2, 0.5), (10**6, 99_999, 0.05, 0.01)],
)
def test_least_epsilon_meets_the_radius_and_is_least(n, u, alpha, beta):
    eps = float(least_epsilon(n, np.array(float(u)), alpha * n, beta))
    assert float(worst_case_radius(u, eps, beta)) <= alpha * n
    assert float(worst_case_radius(u, eps * (1 - 1e-9), beta)) > alpha * n


def test_errors_name_the_field():
    with pytest.raises(ValidationError, match="^alpha"):
        least_epsilon(10, np.array(8.0), 4.0, 0.1)
    with pytest.raises(ValidationError, match="^beta"):
        worst_case_radius(1, 1.0, 0.7)
    with pytest.raises(ValidationError, match="weights"):
        ErrorLaw(np.array([0.0, 1.0]), np.array([0.5, 0.6]), 1.0)
    with pytest.raises(ValidationError, match="probabilities_one"):
        ErrorLaw.from_unbought([1.5], 1.0)
    with pytest.raises(ValidationError, match="scale"):
        ErrorLaw.point(0.0, -1.0)


def test_monte_carlo_agrees_within_its_interval():
    law = ErrorLaw.from_unbought(np.full(30, 0.3), scale=2.0)
    rng = np.random.default_rng(3)
    draws = 200_000
    d = 15 - rng.binomial(30, 0.3, draws) + rng.laplace(0, 2.0, draws)
    hit = (np.abs(d) <= 6.0).mean()
    half = 4 * math.sqrt(hit * (1 - hit) / draws)
    assert abs(hit - law.probability_within(6.0)) < half


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    shifts=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=5),
    scale=st.one_of(st.none(), st.floats(1e-6, 1e6)),
    t=st.floats(0, 1e7),
)
def test_error_law_clean_or_a_probability(shifts, scale, t):
    w = np.full(len(shifts), 1 / len(shifts))
    law = ErrorLaw(np.array(shifts), w, scale)
    p = law.probability_within(t)
    assert 0.0 <= p <= 1.0
    assert law.mean_absolute_error() >= 0
    assert p <= law.probability_within(2 * t + 1) + 1e-12
