"""dpgames.estimates, the one Student-t interval of the package, against scipy's t distribution
(computed here independently), and its one-draw rule as the sweep summary and the incentive audit
see it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.estimates import MeanEstimate, mean_ci, t_interval
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.incentives import audit_incentives
from dpgames.games.mediator import PrivateMediator
from dpgames.validation import ValidationError


def scipy_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    """The textbook interval: scipy's t quantiles around the mean, scale = the standard error."""
    return stats.t.interval(level, df=x.size - 1, loc=x.mean(), scale=stats.sem(x))


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.999])
@pytest.mark.parametrize("k", [2, 3, 10, 200])
def test_mean_ci_is_scipys_t_interval(k, level):
    x = np.random.default_rng(k).gamma(2.0, size=k)
    est = mean_ci(x, level)
    assert est.n == k and est.defined and est.mean == pytest.approx(x.mean(), rel=1e-14)
    assert (est.low, est.high) == pytest.approx(scipy_interval(x, level), rel=1e-12)


def test_t_interval_columns_are_the_intervals_of_each_column():
    x = np.random.default_rng(5).normal(size=(7, 3, 2))
    mean, low, high = t_interval(x, 0.9)
    for i in range(3):
        for j in range(2):
            assert (low[i, j], high[i, j]) == pytest.approx(
                scipy_interval(x[:, i, j], 0.9), rel=1e-12
            )
            assert mean[i, j] == pytest.approx(x[:, i, j].mean(), rel=1e-14)


def test_one_draw_has_an_estimate_but_no_interval():
    one = mean_ci([2.5])
    assert (one.n, one.mean, one.defined) == (1, 2.5, False)
    assert math.isnan(one.low) and math.isnan(one.high)
    mean, low, high = t_interval([[1.0, 4.0]])
    assert mean.tolist() == [1.0, 4.0] and np.isnan(low).all() and np.isnan(high).all()
    empty = mean_ci([])
    assert empty.n == 0 and not empty.defined and math.isnan(empty.mean)
    assert t_interval(np.zeros((0, 3)))[0].shape == (3,)


def test_non_finite_draws_are_left_out():
    assert mean_ci([1.0, math.nan, 3.0, math.inf]) == mean_ci([1.0, 3.0])


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, math.nan, "0.95", None, True])
def test_a_bad_level_is_refused_naming_it(level):
    with pytest.raises(ValidationError) as info:
        mean_ci([1.0, 2.0], level)
    assert info.value.field == "level"


@pytest.mark.parametrize("samples", [3.0, ["a", "b"], [[1.0], [1.0, 2.0]], [None, 1.0j]])
def test_a_scalar_or_non_numbers_are_refused(samples):
    with pytest.raises(ValidationError) as info:
        t_interval(samples)
    assert info.value.field == "samples"
    if not isinstance(samples, float):
        with pytest.raises(ValidationError, match="values"):
            mean_ci(samples)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, width=64),
            st.integers(-(10**6), 10**6),
            st.just("x"),
            st.none(),
        ),
        max_size=30,
    ),
    st.one_of(st.floats(0.01, 0.99), st.floats(allow_nan=True)),
)
def test_mean_ci_is_an_estimate_inside_its_interval_or_says_it_has_none(values, level):
    """Oracle: a clean ValidationError (a label or None among the draws, a level outside (0, 1)), or
    a result passing the invariants (the interval holds the mean, finite when defined) for moderate
    inputs; only overflow of the data itself may give a non-finite figure."""
    try:
        est = mean_ci(values, level)
    except ValidationError as error:
        assert error.field in ("values", "level")
        assert any(v is None or isinstance(v, str) for v in values) or not 0 < level < 1
        return
    assert isinstance(est, MeanEstimate) and est.n == sum(math.isfinite(v) for v in values)
    assert 0 < level < 1 and not any(v is None or isinstance(v, str) for v in values)
    finite = [v for v in values if math.isfinite(v)]
    if est.defined and max(map(abs, finite)) < 1e150:
        assert math.isfinite(est.low) and math.isfinite(est.high)
        tol = 1e-9 * (1 + abs(est.mean))
        assert est.low - tol <= est.mean <= est.high + tol
    elif not est.defined:
        assert math.isnan(est.low) and math.isnan(est.high)


def _two_class_game() -> CongestionGame:
    """Two classes on two roads (a Pigou-like game): a player of either class may claim the
    other."""
    costs = PolynomialCosts([1.0, 0.0], [0.0, 0.25], [1, 1])
    return CongestionGame.from_action_lists(costs, [[[0], [1]], [[0], [1]]], [2, 2])


def test_the_incentive_audit_follows_the_one_draw_rule():
    mediator, game = PrivateMediator(rounds=20, epsilon=1.0), _two_class_game()
    one = audit_incentives(mediator, game, [2, 2], seeds=1, rng=0)
    assert not one.has_intervals and one.misreport_gain.size == 2
    assert np.isnan(one.misreport_ci).all() and np.isnan(one.ignore_ci).all()
    three = audit_incentives(mediator, game, [2, 2], seeds=3, rng=0)
    assert three.has_intervals and np.isfinite(three.misreport_ci).all()
    assert (three.misreport_ci[:, 0] <= three.misreport_gain + 1e-12).all()
    assert (three.misreport_gain <= three.misreport_ci[:, 1] + 1e-12).all()
