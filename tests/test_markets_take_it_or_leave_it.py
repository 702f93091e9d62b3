"""dpgames' doubling take-it-or-leave-it surveyor: exact laws against enumeration and simulation."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.markets.agents import DiscreteCosts, PopulationLaw, UniformCosts
from dpgames.markets.take_it_or_leave_it import TakeItOrLeaveIt
from dpgames.validation import ValidationError


def test_one_round_against_enumeration_of_every_person():
    # each of m = 3 people: (accepts?, bit) with exact probabilities; enumerate all 4^3 patterns
    pop = PopulationLaw(
        0.4, DiscreteCosts([0.1, 0.5], [0.5, 0.5]), DiscreteCosts([0.1, 0.9], [0.25, 0.75])
    )
    survey = TakeItOrLeaveIt(sample_size=3, alpha=0.34, epsilon=0.7, start_price=0.5, max_rounds=1)
    # (accept, bit): price 0.5
    cell = {
        (1, 0): 0.6 * 1.0,
        (1, 1): 0.4 * 0.25,
        (0, 0): 0.0,
        (0, 1): 0.4 * 0.75,
    }
    success, t = 0.0, 0.8
    within = 0.0
    lap = stats.laplace(scale=1 / 0.7)
    for people in itertools.product(cell, repeat=3):
        w = math.prod(cell[p] for p in people)
        refusals = sum(1 for a, _ in people if a == 0)
        if w == 0 or refusals > 1:
            continue
        success += w
        shift = sum(b for a, b in people if a == 1) + refusals / 2 - 3 * 0.4
        within += w * (lap.cdf(t - shift) - lap.cdf(-t - shift))
    law = survey.law(pop)
    assert law.stop[0] == pytest.approx(success, abs=1e-15)
    assert law.never == pytest.approx(1 - success, abs=1e-15)
    assert law.error.probability_within(t) == pytest.approx(within / success, abs=1e-13)
    # payment: acceptors x price x eps
    assert law.expected_payment == pytest.approx(3 * (0.6 + 0.1) * 0.5 * 0.7, rel=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize(
    "pop",
    [
        PopulationLaw(0.3, UniformCosts(0, 1)),
        PopulationLaw(0.5, UniformCosts(0, 1), UniformCosts(0.5, 1.5)),
    ],
    ids=["independent", "correlated"],
)
def test_exact_law_agrees_with_simulation_within_intervals(pop):
    survey = TakeItOrLeaveIt(sample_size=60, alpha=0.15, epsilon=0.4, start_price=0.02)
    law = survey.law(pop)
    runs = [survey.simulate(pop, rng=s) for s in range(4000)]
    pay = np.array([r["payment"] for r in runs])
    assert abs(pay.mean() - law.expected_payment) < 4.5 * pay.std() / math.sqrt(pay.size)
    rounds = np.array([r["round"] for r in runs])
    for j in range(law.stop.size):
        p = law.stop[j]
        assert abs((rounds == j).mean() - p) <= 4.5 * math.sqrt(p * (1 - p) / rounds.size) + 1e-12
    err = np.array([r["error"] for r in runs])
    hit, p = (np.abs(err) <= 6).mean(), law.error.probability_within(6)
    assert abs(hit - p) < 4.5 * math.sqrt(p * (1 - p) / err.size)
    assert abs(err.mean() - law.error.mean()) < 4.5 * err.std() / math.sqrt(err.size)


def test_correlated_costs_bias_the_acceptors():
    # dear costs go with b = 1: acceptors under-represent ones, the error's mean is negative
    # it stops at price 1.4 (0.0875 x 2^4) almost surely: acceptance 1 for b = 0, 0.9 for b = 1, so
    # the acceptors' rate of ones is .45/.95 and E[error] ~ E[(m - R) .45/.95 + R/2] - 100 with E[R]
    # ~ 10
    pop = PopulationLaw(0.5, UniformCosts(0, 1), UniformCosts(0.5, 1.5))
    law = TakeItOrLeaveIt(200, 0.1, 1.0, 0.0875).law(pop)
    assert law.mean_price_paid == pytest.approx(1.4, rel=1e-2)
    assert law.error.mean() == pytest.approx((200 - 10) * 0.45 / 0.95 + 5 - 100, abs=0.1)
    indep = TakeItOrLeaveIt(200, 0.1, 1.0, 0.0875).law(PopulationLaw(0.5, UniformCosts(0, 1)))
    assert abs(indep.error.mean()) < 1e-9


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"sample_size": 0}, "sample_size"),
        ({"alpha": 1.0}, "alpha"),
        ({"epsilon": -1}, "epsilon"),
        ({"start_price": 0}, "start_price"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"alpha": float("nan")}, "alpha"),
    ],
)
def test_bad_parameters(kwargs, field):
    base = {"sample_size": 10, "alpha": 0.1, "epsilon": 1.0, "start_price": 0.1}
    with pytest.raises(ValidationError) as e:
        TakeItOrLeaveIt(**{**base, **kwargs})
    assert e.value.field == field


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    m=st.integers(-2, 300),
    alpha=st.floats(-0.5, 1.5),
    eps=st.floats(-1, 10),
    p0=st.floats(-1, 5),
    rate=st.floats(0, 1),
    high=st.floats(0, 10),
)
def test_survey_clean_error_or_a_law(m, alpha, eps, p0, rate, high):
    try:
        survey = TakeItOrLeaveIt(m, alpha, eps, p0, max_rounds=30)
        law = survey.law(PopulationLaw(rate, UniformCosts(0, high)))
    except ValidationError:
        return
    assert law.stop.sum() + law.never == pytest.approx(1.0, abs=1e-9)
    assert (
        (law.stop >= 0).all() and law.expected_payment >= 0 and math.isfinite(law.expected_payment)
    )
    if law.error is not None:
        assert 0 <= law.error.probability_within(survey.alpha * m) <= 1
