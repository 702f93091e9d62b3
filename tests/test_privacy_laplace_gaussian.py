"""Laplace and Gaussian mechanisms against their formulas, checked by numerical integration of the
densities (an oracle written apart from the closed forms in the library)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

from dpgames.privacy import Accountant
from dpgames.privacy.audit import laplace_delta, laplace_privacy_loss
from dpgames.privacy.black_box import audit_black_box
from dpgames.privacy.gaussian import GaussianMechanism, gaussian_delta, gaussian_epsilon
from dpgames.privacy.laplace import LaplaceMechanism, laplace_log_cdf, laplace_rdp
from dpgames.validation import ValidationError


def hockey_stick_by_integration(p, q, eps, lo, hi, points=()):
    value, _ = integrate.quad(
        lambda y: max(0.0, p(y) - math.exp(eps) * q(y)),
        lo,
        hi,
        points=list(points),
        limit=400,
        epsabs=1e-14,
        epsrel=1e-10,
    )
    return value


def test_laplace_scale_variance_and_release():
    m = LaplaceMechanism(0.5, sensitivity=2.0)
    assert m.scale == 4.0 and m.variance == 32.0
    noise = m.release(np.zeros(400_000), rng=1)
    assert abs(noise.var() - 32.0) < 4 * 32.0 * math.sqrt(5 / 400_000)  # kurtosis of Laplace: 6
    assert isinstance(m.release(3.0, rng=2), float)
    np.testing.assert_array_equal(m.release([1.0, 2.0], rng=5), m.release([1.0, 2.0], rng=5))


def test_laplace_tail_bound_is_exact_for_one_coordinate_and_valid_for_many():
    m = LaplaceMechanism(1.0)
    assert 2 * stats.laplace.sf(m.error_bound(0.05), scale=1.0) == pytest.approx(0.05)
    errors = np.abs(m.release(np.zeros((20_000, 10)), rng=3)).max(axis=1)
    assert (errors > m.error_bound(0.1, k=10)).mean() <= 0.1 + 3 * math.sqrt(0.09 / 20_000)


@pytest.mark.parametrize(
    "eps_mech, eps", [(1.0, 0.0), (1.0, 0.5), (1.0, 0.99), (2.0, 1.0), (1.0, 1.2)]
)
def test_laplace_delta_equals_the_integrated_hockey_stick(eps_mech, eps):
    p = lambda y: stats.laplace.pdf(y, 0.0, 1.0)  # noqa: E731  scale 1, shift eps_mech
    q = lambda y: stats.laplace.pdf(y, eps_mech, 1.0)  # noqa: E731
    exact = laplace_delta(eps, eps_mech, 1.0)
    assert exact == pytest.approx(
        hockey_stick_by_integration(p, q, eps, -60, 60, [0.0, eps_mech]), abs=1e-9
    )
    loss = laplace_privacy_loss(np.linspace(-5, 5, 101), eps_mech, 1.0)
    assert np.abs(loss).max() == pytest.approx(eps_mech)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0, 20.0])
def test_laplace_rdp_curve_equals_the_integrated_renyi_divergence(alpha):
    eps = 0.8
    integrand = lambda y: math.exp(  # noqa: E731
        alpha * stats.laplace.logpdf(y) + (1 - alpha) * stats.laplace.logpdf(y, eps)
    )
    value, _ = integrate.quad(integrand, -80, 80, points=[0.0, eps], limit=400, epsrel=1e-12)
    assert laplace_rdp(eps)(np.array([alpha]))[0] == pytest.approx(
        math.log(value) / (alpha - 1), rel=1e-8
    )


def test_laplace_log_cdf_on_both_tails():
    z = np.array([-3.0, 0.0, 2.0, 40.0])
    np.testing.assert_allclose(laplace_log_cdf(z), stats.laplace.logcdf(z), rtol=1e-12)
    assert laplace_log_cdf(-800.0) == pytest.approx(-800 - math.log(2))  # CDF = e^z / 2 below 0


def test_laplace_rdp_makes_many_laplace_queries_cheaper_than_basic_composition():
    acc = Accountant().spend("count", LaplaceMechanism(0.1).guarantee, count=200)
    assert acc.basic_total().epsilon == pytest.approx(20.0)
    assert acc.rdp_total(1e-6).epsilon < acc.zcdp_total(1e-6).epsilon < 20.0


def test_planted_bug_laplace_scale_too_small_is_caught():
    """A Laplace mechanism claiming eps = 1 with scale 1/2 instead of 1: exact and black-box
    audits."""
    assert laplace_delta(1.0, 1.0, 1.0) == 0.0
    assert laplace_delta(1.0, 1.0, 0.5) > 0.2  # 1 - e^{-1/2} = 0.39
    correct = lambda x, n, g: x + g.laplace(0.0, 1.0, n)  # noqa: E731
    broken = lambda x, n, g: x + g.laplace(0.0, 0.5, n)  # noqa: E731
    assert audit_black_box(broken, [(0.0, 1.0)], samples=200_000, rng=1).refutes(1.0)
    assert not any(
        audit_black_box(correct, [(0.0, 1.0)], samples=200_000, rng=s).refutes(1.0)
        for s in range(5)
    )


@pytest.mark.parametrize("mu, eps", [(0.5, 0.0), (1.0, 0.5), (1.0, 2.0), (3.0, 1.0), (0.2, 0.1)])
def test_gaussian_delta_equals_the_integrated_hockey_stick(mu, eps):
    p = lambda y: stats.norm.pdf(y, 0.0, 1.0)  # noqa: E731
    q = lambda y: stats.norm.pdf(y, mu, 1.0)  # noqa: E731
    assert gaussian_delta(eps, mu) == pytest.approx(
        hockey_stick_by_integration(p, q, eps, -40, 40, [mu / 2]), abs=1e-10
    )


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-8), (20.0, 1e-3)])
def test_analytic_gaussian_is_valid_and_tight(eps, delta):
    g = GaussianMechanism.analytic(eps, delta, sensitivity=2.0)
    assert g.delta_for_epsilon(eps) <= delta
    assert g.delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-6)
    slightly_less_noise = GaussianMechanism(g.sigma * (1 - 1e-4), sensitivity=2.0)
    assert slightly_less_noise.delta_for_epsilon(eps) > delta
    assert g.epsilon_for_delta(delta) == pytest.approx(eps, rel=1e-6)
    assert g.rho == pytest.approx(4.0 / (2 * g.sigma**2))
    assert (g.guarantee.epsilon, g.guarantee.delta) == (eps, delta)


@pytest.mark.parametrize("eps", [0.05, 0.5, 0.9])
def test_classic_gaussian_is_valid_below_one_and_looser_than_analytic(eps):
    classic = GaussianMechanism.classic(eps, 1e-5)
    assert classic.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / eps)
    assert classic.delta_for_epsilon(eps) <= 1e-5
    assert GaussianMechanism.analytic(eps, 1e-5).sigma < classic.sigma


def test_classic_gaussian_refuses_epsilon_at_least_one():
    with pytest.raises(ValueError, match="epsilon < 1 only"):
        GaussianMechanism.classic(1.0, 1e-5)


def test_planted_bug_gaussian_with_half_the_noise_is_caught():
    good = GaussianMechanism.analytic(1.0, 1e-5)
    assert GaussianMechanism(good.sigma / 2).delta_for_epsilon(1.0) > 1e-5


def test_gaussian_release_variance_and_epsilon_inverse():
    g = GaussianMechanism(3.0)
    noise = g.release(np.zeros(300_000), rng=2)
    assert abs(noise.var() - 9.0) < 4 * 9.0 * math.sqrt(2 / 300_000)
    assert gaussian_delta(gaussian_epsilon(1e-6, 0.7), 0.7) <= 1e-6
    assert gaussian_epsilon(0.9, 0.1) == 0.0  # delta(0) = 2 Phi(mu/2) - 1 = 0.04 already
    assert g.guarantee.rho == pytest.approx(1 / 18) and math.isinf(g.guarantee.epsilon)


def test_laplace_release_is_the_values_plus_numpys_draw_bit_for_bit():
    values = np.random.default_rng(0).uniform(-5, 5, (30, 4))
    out = LaplaceMechanism(0.5, sensitivity=2.0).release(values, rng=9)
    np.testing.assert_array_equal(
        out, values + np.random.default_rng(9).laplace(0.0, 4.0, values.shape)
    )
    ints = [3, -1, 7]
    np.testing.assert_array_equal(
        LaplaceMechanism(1.0).release(ints, rng=2),
        np.array(ints, float) + np.random.default_rng(2).laplace(0.0, 1.0, 3),
    )
    assert values.flags.writeable and np.array_equal(
        values, np.random.default_rng(0).uniform(-5, 5, (30, 4))
    )


@pytest.mark.parametrize(
    "values, field",
    [
        ([0.0, np.nan], "values"),
        ([np.inf, 1.0], "values"),
        (np.full(3, -np.inf), "values"),
        (np.full(20, 1.7e308), "release"),
    ],
)
def test_laplace_release_names_a_non_finite_value_or_an_overflow(values, field):
    with pytest.raises(ValidationError) as err:
        LaplaceMechanism(1e-308).release(values, rng=1)  # noise of scale 1e308: some sum overflows
    assert err.value.field == field


def test_laplace_release_of_finite_values_whose_total_overflows_is_returned():
    values = np.full(4, 1.7e308)  # finite, though their total is not
    np.testing.assert_array_equal(
        LaplaceMechanism(1.0).release(values, rng=3),
        values + np.random.default_rng(3).laplace(0.0, 1.0, 4),
    )


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=2),
        st.none(),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5),
        st.lists(st.one_of(st.integers(-(10**400), 10**400), st.text(max_size=1)), max_size=3),
    ),
    st.floats(1e-3, 1e3),
)
def test_property_laplace_release_clean_error_or_finite_noisy_values(values, eps):
    try:
        out = LaplaceMechanism(eps).release(values, rng=4)
    except ValidationError as exc:
        assert exc.field in ("values", "release")
        return
    expected = np.asarray(values, dtype=float)
    assert np.all(np.isfinite(out)) and np.shape(out) == expected.shape
    np.testing.assert_array_equal(
        out, expected + np.random.default_rng(4).laplace(0.0, 1 / eps, expected.shape)
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: LaplaceMechanism(0.0), "epsilon"),
        (lambda: LaplaceMechanism(1.0, sensitivity=-1), "sensitivity"),
        (lambda: LaplaceMechanism(1.0).release([np.inf]), "finite"),
        (lambda: GaussianMechanism(0.0), "sigma"),
        (lambda: GaussianMechanism.analytic(1.0, 1.0), "delta"),
        (lambda: gaussian_delta(-1.0, 1.0), "epsilon"),
    ],
)
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()
