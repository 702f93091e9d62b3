"""Privacy-aware agents: populations, cost laws, the two cost models (oracles: plain Bayes,
quadrature)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.integrate import quad

from dpgames.markets.agents import (
    DiscreteCosts,
    ExponentialCosts,
    PopulationLaw,
    PrivacyPopulation,
    UniformCosts,
    cost_law,
    expected_laplace_privacy_loss,
    outcome_privacy_cost,
    privacy_population,
)
from dpgames.validation import ValidationError


def test_same_seed_same_population_and_vectorised_shapes():
    law = PopulationLaw(0.3, UniformCosts(0, 2))
    a, b = privacy_population(10_000, law, rng=4), privacy_population(10_000, law, rng=4)
    assert np.array_equal(a.bits, b.bits) and np.array_equal(a.costs, b.costs)
    assert a.bits.dtype == np.int8 and a.costs.shape == (10_000,)
    assert not np.array_equal(a.costs, privacy_population(10_000, law, rng=5).costs)
    # bit rate within a 6-sigma band of 0.3
    assert abs(a.bits.mean() - 0.3) < 6 * math.sqrt(0.3 * 0.7 / 10_000)
    assert ((a.costs >= 0) & (a.costs <= 2)).all()


def test_correlated_costs_follow_the_law_of_each_bit():
    law = PopulationLaw(0.5, UniformCosts(0, 1), UniformCosts(5, 6))
    pop = privacy_population(5000, law, rng=1)
    assert (pop.costs[pop.bits == 1] >= 5).all() and (pop.costs[pop.bits == 0] <= 1).all()


def test_posterior_is_bayes_on_point_masses():
    law = PopulationLaw(0.2, DiscreteCosts([1, 2], [0.5, 0.5]), DiscreteCosts([2, 3], [0.25, 0.75]))
    post = law.posterior_one([1.0, 2.0, 3.0])
    # plain Bayes: Pr[b=1 | c=2] = .2*.25 / (.2*.25 + .8*.5)
    assert post[0] == 0 and post[2] == 1
    assert post[1] == pytest.approx(0.2 * 0.25 / (0.2 * 0.25 + 0.8 * 0.5), rel=1e-15)
    with pytest.raises(ValidationError, match="probability 0"):
        law.posterior_one([7.0])
    assert PopulationLaw(0.2, UniformCosts()).posterior_one([0.3]).tolist() == [0.2]


def test_discrete_law_samples_its_probabilities():
    law = DiscreteCosts([3.0, 1.0], [0.75, 0.25])
    x = law.sample(40_000, np.random.default_rng(0))
    assert set(np.unique(x)) == {1.0, 3.0}
    assert abs((x == 1.0).mean() - 0.25) < 6 * math.sqrt(0.25 * 0.75 / 40_000)
    assert law.cdf([0.0, 1.0, 2.9, 3.0]).tolist() == [0.0, 0.25, 0.25, 1.0]


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"law": "discrete", "values": [1, 2], "probabilities": [0.5, 0.6]}, "costs.probabilities"),
        ({"law": "discrete", "values": [-1, 2], "probabilities": [0.5, 0.5]}, "costs.values"),
        (
            {"law": "discrete", "values": [1, 2], "probabilities": [1.5, -0.5]},
            "costs.probabilities",
        ),
        (
            {"law": "discrete", "values": [1, float("nan")], "probabilities": [0.5, 0.5]},
            "costs.values",
        ),
        ({"law": "uniform", "low": 2, "high": 1}, "costs.high"),
        ({"law": "uniform", "low": -1, "high": 1}, "costs.low"),
        ({"law": "exponential", "mean": 0}, "costs.mean"),
        ({"law": "exponential", "scale": 1}, "costs.scale"),
        ({"law": "gamma"}, "costs.law"),
        ("uniform", "costs"),
    ],
)
def test_specs_that_are_not_distributions_are_refused_naming_the_field(spec, field):
    with pytest.raises(ValidationError) as e:
        cost_law(spec)
    assert e.value.field == field


def test_bad_population_inputs():
    with pytest.raises(ValidationError, match="bit_rate"):
        PopulationLaw(1.5, UniformCosts())
    with pytest.raises(ValidationError, match="costs_if_one.probabilities"):
        PopulationLaw(
            0.5, UniformCosts(), {"law": "discrete", "values": [1], "probabilities": [0.9]}
        )
    with pytest.raises(ValidationError, match="costs"):
        PrivacyPopulation(np.array([0, 1]), np.array([0.5, -1.0]))
    with pytest.raises(ValidationError, match="costs"):
        PrivacyPopulation(np.array([0, 1]), np.array([0.5, np.nan]))
    with pytest.raises(ValidationError, match="bits"):
        PrivacyPopulation(np.array([0, 2]), np.array([0.5, 1.0]))
    with pytest.raises(ValidationError, match="^n "):
        privacy_population(0, PopulationLaw(0.5, UniformCosts()))


def test_linear_cost_model():
    pop = PrivacyPopulation(np.array([0, 1, 1]), np.array([0.5, 2.0, 0.0]))
    assert pop.linear_cost(0.1).tolist() == [0.05, 0.2, 0.0]
    assert pop.count == 2
    with pytest.raises(ValidationError, match="epsilon"):
        pop.linear_cost(-1)


@pytest.mark.parametrize("eps", [1e-7, 1e-3, 0.3, 0.999999, 1.0, 1.5, 4.0, 40.0])
def test_expected_laplace_privacy_loss_against_quadrature(eps):
    # independent oracle: integrate |loss(y)| against the Laplace density directly
    def loss(y):
        return eps * abs(abs(y - 1) - abs(y))

    def density(y):
        return eps / 2 * math.exp(-eps * abs(y))

    width = 60 / eps
    value = sum(
        quad(lambda y: loss(y) * density(y), a, b, limit=200)[0]
        for a, b in ((-width, 0), (0, 1), (1, 1 + width))
    )
    assert expected_laplace_privacy_loss(eps) == pytest.approx(value, rel=1e-7, abs=1e-14)
    assert expected_laplace_privacy_loss(eps) <= eps


def test_outcome_privacy_cost_is_value_times_loss():
    assert outcome_privacy_cost(
        [2.0, 1.0], [math.log(0.5), -1.0], [math.log(0.25), -1.0]
    ).tolist() == pytest.approx([2 * math.log(2), 0.0])
    with pytest.raises(ValidationError, match="value"):
        outcome_privacy_cost([-1.0], [0.0], [0.0])


_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.integers(-3, 3),
    st.none(),
    st.text(max_size=2),
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    law=st.sampled_from(["uniform", "exponential", "discrete", "beta"]),
    a=_values,
    b=_values,
    vals=st.lists(_values, max_size=3),
    probs=st.lists(_values, max_size=3),
)
def test_cost_law_specs_clean_error_or_a_distribution(law, a, b, vals, probs):
    spec = {
        "law": law,
        "uniform": {"low": a, "high": b},
        "exponential": {"mean": a},
        "discrete": {"values": vals, "probabilities": probs},
    }.get(law, {})
    spec = {"law": law, **spec}
    try:
        built = cost_law(spec)
    except ValidationError as e:
        assert e.field.startswith("costs")
        return
    x = built.sample(200, np.random.default_rng(0))
    assert np.isfinite(x).all() and (x >= 0).all()
    grid = np.linspace(-1, 10, 50)
    cdf = built.cdf(grid)
    assert ((cdf >= 0) & (cdf <= 1)).all() and (np.diff(cdf) >= 0).all()


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    n=st.one_of(st.integers(-5, 2000), st.floats(allow_nan=True), st.none()),
    rate=st.one_of(st.floats(-1, 2), st.floats(allow_nan=True)),
    eps=st.one_of(st.floats(-1, 1e3), st.floats(allow_nan=True)),
    seed=st.integers(0, 2**32),
)
def test_population_and_loss_clean_error_or_invariants(n, rate, eps, seed):
    try:
        pop = privacy_population(n, PopulationLaw(rate, ExponentialCosts(2.0)), rng=seed)
    except ValidationError as e:
        assert e.field in ("n", "bit_rate")
    else:
        assert pop.n == n and set(np.unique(pop.bits)) <= {0, 1} and (pop.costs >= 0).all()
    try:
        loss = expected_laplace_privacy_loss(eps)
    except ValidationError as e:
        assert e.field == "epsilon"
    else:
        assert 0 <= loss <= eps and math.isfinite(loss)


def test_uniform_cdf_on_a_tiny_width_does_not_overflow():
    """A width of 1e-300 and costs up to 1e308: the cdf is 0 below low, 1 from high on (the uniform
    law's definition), x / width in between, with no overflow warning."""
    law = UniformCosts(0.0, 1e-300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cdf = law.cdf([-1e308, 0.0, 0.25e-300, 1e-300, 1e10, 1e308])
    assert cdf.tolist() == [0.0, 0.0, 0.25e-300 / 1e-300, 1.0, 1.0, 1.0]
