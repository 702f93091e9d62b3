"""Correlated costs: the cost reports' leak, against the closed form of the power-law family."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.markets.agents import PopulationLaw, UniformCosts
from dpgames.markets.impossibility import (
    correlated_uniform_law,
    correlation_sweep,
    selection_privacy_loss,
)
from dpgames.validation import ValidationError


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.9])
def test_selection_loss_closed_form(rho):
    law = correlated_uniform_law(rho)
    kappa = 1 / (1 - rho)
    theta = np.array([0.2, 0.5, 0.9, 0.5])
    bought = np.array([True, True, True, False])
    loss = selection_privacy_loss(law, theta, bought)
    # bought: |ln(theta^kappa / theta)|; not bought: |ln((1 - theta^kappa) / (1 - theta))|
    expected = [abs((kappa - 1) * math.log(t)) for t in theta[:3]] + [
        abs(math.log((1 - 0.5**kappa) / 0.5))
    ]
    assert loss == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_impossible_event_is_an_infinite_loss():
    law = correlated_uniform_law(0.5)
    # impossible for both
    assert selection_privacy_loss(law, np.array([1.5]), np.array([False])).tolist() == [0.0]
    wide = PopulationLaw(0.5, UniformCosts(0, 1), UniformCosts(0, 2))
    # a cost above 1.5 is impossible if b = 0: being left out proves b = 1
    assert selection_privacy_loss(wide, np.array([1.5]), np.array([False])).tolist() == [math.inf]


def test_sweep_leak_grows_while_the_guarantee_holds():
    rows = correlation_sweep([0.0, 0.5, 0.9, 0.99], n=1000, alpha=0.1, beta=0.05, rng=3)
    assert rows[0]["compensation_needed"] == 0 and rows[0]["max_selection_loss"] == 0
    need = [r["compensation_needed"] for r in rows]
    assert all(a < b for a, b in itertools.pairwise(need))
    for r in rows:
        assert r["realised_within"] >= r["guaranteed_within"] - 1e-12  # the worst-case guarantee
        assert abs(r["bias"]) <= 50  # |D| <= u/2, u = 100
    assert rows[-1]["ratio_to_payment"] > 10 * rows[1]["ratio_to_payment"] / 2


def test_bad_correlations():
    with pytest.raises(ValidationError, match="rho"):
        correlated_uniform_law(1.0)
    with pytest.raises(ValidationError, match="rhos"):
        correlation_sweep([0.5, 1.2])


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    rhos=st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=3),
    n=st.integers(-1, 300),
    alpha=st.floats(-0.1, 1.1),
)
def test_sweep_clean_error_or_invariants(rhos, n, alpha):
    try:
        rows = correlation_sweep(rhos, n=n, alpha=alpha, beta=0.1, rng=1)
    except ValidationError as e:
        assert e.field in ("rhos", "n", "alpha")
        return
    for r in rows:
        assert r["max_selection_loss"] >= 0 and r["compensation_needed"] >= 0
        assert r["realised_within"] >= 1 - 0.1 - 1e-12
