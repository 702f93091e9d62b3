"""The exact discrete samplers: frequencies against the exact pmf by chi-square (fixed seeds), with
a check that the same test rejects a slightly wrong pmf, so it can fail."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpgames.privacy.discrete import (
    MAX_DRAWS,
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    _bernoulli_exp,
    _RandomBits,
    discrete_gaussian_pmf,
    discrete_laplace_pmf,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from dpgames.validation import ValidationError


def chi_square_pvalue(samples, pmf, reach):
    """Chi-square over the cells -reach..reach plus the two tails lumped."""
    cells = np.arange(-reach, reach + 1)
    observed = np.array(
        [np.sum(samples < -reach)]
        + [np.sum(samples == c) for c in cells]
        + [np.sum(samples > reach)]
    )
    inside = pmf(cells)
    tail = (1 - inside.sum()) / 2
    expected = np.concatenate([[tail], inside, [tail]]) * samples.size
    return stats.chisquare(observed, expected).pvalue


def laplace_pmf_by_hand(t):
    """Pr[x] = C e^{-|x|/t} with C = 1 / sum_x e^{-|x|/t} = (1 - e^{-1/t}) / (1 + e^{-1/t})."""
    r = math.exp(-1 / t)
    return lambda x: (1 - r) / (1 + r) * r ** np.abs(x)


@pytest.mark.slow
@pytest.mark.parametrize("scale, reach", [(Fraction(2), 10), (Fraction(1, 3), 3), ("7/2", 15)])
def test_discrete_laplace_frequencies_match_the_pmf(scale, reach):
    samples = sample_discrete_laplace(scale, 30_000, rng=42)
    t = float(Fraction(scale))
    np.testing.assert_allclose(
        discrete_laplace_pmf(np.arange(-5, 6), scale), laplace_pmf_by_hand(t)(np.arange(-5, 6))
    )
    assert chi_square_pvalue(samples, laplace_pmf_by_hand(t), reach) > 1e-3
    # power: a wrong scale fails
    assert chi_square_pvalue(samples, laplace_pmf_by_hand(1.15 * t), reach) < 1e-3


def gaussian_pmf_by_hand(s2):
    support = np.arange(-400, 401)
    z = np.exp(-(support**2) / (2 * s2)).sum()
    return lambda x: np.exp(-(np.asarray(x, dtype=float) ** 2) / (2 * s2)) / z


@pytest.mark.slow
@pytest.mark.parametrize(
    "sigma2, reach", [(Fraction(9, 4), 6), (Fraction(1, 2), 3), (Fraction(50), 25)]
)
def test_discrete_gaussian_frequencies_match_the_pmf(sigma2, reach):
    samples = sample_discrete_gaussian(sigma2, 20_000, rng=7)
    s2 = float(sigma2)
    np.testing.assert_allclose(
        discrete_gaussian_pmf(np.arange(-4, 5), sigma2), gaussian_pmf_by_hand(s2)(np.arange(-4, 5))
    )
    assert chi_square_pvalue(samples, gaussian_pmf_by_hand(s2), reach) > 1e-3
    assert chi_square_pvalue(samples, gaussian_pmf_by_hand(1.3 * s2), reach) < 1e-3


def test_discrete_gaussian_variance_is_below_sigma_squared():
    """Canonne, Kamath & Steinke Cor. 9: Var <= sigma^2 (1 - 4 pi^2 sigma^2 / (e^{4 pi^2 sigma^2} -
    1)), checked on the exact pmf."""
    for s2 in (0.3, 1.0, 4.0, 25.0):
        x = np.arange(-300, 301)
        var = np.sum(x**2 * discrete_gaussian_pmf(x, s2))
        c = 4 * math.pi**2 * s2
        assert var <= s2 * (1 - c / math.expm1(min(c, 700))) * (1 + 1e-12)
    assert (
        np.sum(np.arange(-9, 10) ** 2 * discrete_gaussian_pmf(np.arange(-9, 10), 0.3)) < 0.3 - 0.01
    )


@pytest.mark.parametrize("num, den", [(1, 3), (5, 2), (0, 1), (7, 7)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(num, den):
    bits = _RandomBits(np.random.default_rng(3))
    n = 40_000
    hits = sum(_bernoulli_exp(bits, num, den) for _ in range(n))
    p = math.exp(-num / den)
    assert abs(hits - n * p) <= 4 * math.sqrt(n * p * (1 - p)) + 1e-9


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 2**62, 3 * 2**70 + 12345])
def test_uniform_integers_of_any_size(n):
    bits = _RandomBits(np.random.default_rng(5))
    draws = [bits.uniform(n) for _ in range(30_000)]
    assert all(0 <= d < n for d in draws)
    cells = min(n, 8)  # equal cells: n <= 8, or 8 divides n, or a bias below 2^-60
    counts = np.bincount([d * cells // n for d in draws], minlength=cells)
    if cells > 1:
        assert stats.chisquare(counts).pvalue > 1e-3


def test_mechanisms_state_their_guarantees_and_keep_integers():
    lap = DiscreteLaplaceMechanism("1/2", sensitivity=2)
    assert lap.scale == 4 and lap.guarantee.epsilon == 0.5
    out = lap.release(np.array([10, 20, 30]), rng=1)
    assert out.dtype == np.int64 and out.shape == (3,)
    gau = DiscreteGaussianMechanism(8, sensitivity=2)
    assert gau.rho == pytest.approx(4 / 16) and gau.guarantee.rho == pytest.approx(0.25)
    np.testing.assert_array_equal(
        gau.release(np.zeros((2, 2), dtype=int), rng=4),
        gau.release(np.zeros((2, 2), dtype=int), rng=4),
    )
    assert DiscreteLaplaceMechanism(0.1).epsilon == Fraction(1, 10)


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: DiscreteLaplaceMechanism(0), "epsilon"),
        (lambda: DiscreteLaplaceMechanism("x"), "epsilon"),
        (lambda: DiscreteLaplaceMechanism(1, sensitivity=1.5), "sensitivity"),
        (lambda: DiscreteGaussianMechanism(-1), "sigma_squared"),
        (lambda: DiscreteLaplaceMechanism(1).release([1.5]), "integers"),
        (lambda: sample_discrete_laplace(1, size=-1), "size"),
    ],
)
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()


def test_more_draws_than_a_call_allows_are_refused_up_front():
    """The exact samplers are a Python loop: a call is bounded (MAX_DRAWS), refused before any
    work."""
    with pytest.raises(ValidationError, match=f"size must be an integer in .*{MAX_DRAWS}"):
        sample_discrete_gaussian(1e-10, size=MAX_DRAWS + 1, rng=0)
    with pytest.raises(ValidationError, match="values.*batches"):
        DiscreteLaplaceMechanism(1).release(np.zeros(MAX_DRAWS + 1, dtype=np.int64), rng=0)
    # a scale whose first draw does not fit int64 is refused at that draw (not after MAX_DRAWS of
    # them)
    with pytest.raises(ValidationError, match="64-bit"):
        sample_discrete_laplace(10**300, size=MAX_DRAWS, rng=0)
