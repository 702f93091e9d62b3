"""The newer API surfaces (markets for privacy, allocation, anonymous games, own mechanisms) at the
edges: a ValidationError naming the argument, or a figure that is finite, or an infinity the
docstring names as the true answer.  Each test is one concrete input the API fuzz suite
(tests/test_fuzz_api.py) or a user met, with its oracle: a closed form, a definition, or the field
the error must name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgames import CustomMechanism, Population, truthfulness_audit
from dpgames.allocation import Market, single_minded_lies
from dpgames.games import AnonymousGame, AnonymousMediator, minority_game, misreport_gains
from dpgames.markets import (
    DiscreteCosts,
    ExponentialCosts,
    FairQuery,
    MixtureCosts,
    PopulationLaw,
    PowerCosts,
    TakeItOrLeaveIt,
    UniformCosts,
    envy_free_budget,
    expected_laplace_privacy_loss,
    least_epsilon,
    outcome_privacy_cost,
)
from dpgames.privacy import Accountant, PrivacyGuarantee
from dpgames.validation import ValidationError, index_pairs

LAWS = [
    UniformCosts(0, 2),
    ExponentialCosts(1.0),
    DiscreteCosts([1, 3], [0.25, 0.75]),
    PowerCosts(2.0),
    MixtureCosts([UniformCosts(0, 1), UniformCosts(1, 2)], [0.5, 0.5]),
]


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_cost_laws_sample_with_a_seed_a_generator_or_none(law):
    """The rule of every ``rng`` argument: a seed gives the same draws as a generator seeded
    alike."""
    by_seed = law.sample(50, 7)
    assert np.array_equal(by_seed, law.sample(50, np.random.default_rng(7)))
    assert law.sample(50, None).shape == (50,) and law.sample(0, 1).shape == (0,)
    for n, rng, field in [
        (-1, 0, "n"),
        (2.0, 0, "n"),
        (10**12, 0, "n"),
        (3, -1, "rng"),
        (3, "x", "rng"),
    ]:
        with pytest.raises(ValidationError) as err:
            law.sample(n, rng)
        assert err.value.field == field


@pytest.mark.parametrize("eps", [1e200, 1e300, float(np.finfo(float).max)])
def test_expected_laplace_privacy_loss_at_huge_eps_is_eps_minus_one(eps):
    """Closed form for large eps: E|L| = eps Pr[outside] + eps^2/2 int_0^1 |1-2t| e^{-eps t} dt, and
    the integral is 1/eps - 2/eps^2 + O(e^{-eps/2}): E|L| = eps/2 + eps/2 - 1 = eps - 1 (= eps in
    floats)."""
    assert expected_laplace_privacy_loss(eps) == pytest.approx(eps - 1, rel=1e-15)


def test_expected_laplace_privacy_loss_at_moderate_eps_is_unchanged():
    """eps = 1000: eps - 1 exactly (the e^{-eps/2} terms vanish); the bound E|L| <= eps holds
    throughout."""
    assert expected_laplace_privacy_loss(1000.0) == pytest.approx(999.0, rel=1e-15)
    for eps in np.geomspace(1e-6, 1e6, 25):
        assert 0 < expected_laplace_privacy_loss(float(eps)) <= eps


def test_single_minded_lies_refuses_a_huge_k_with_the_size_estimate():
    with pytest.raises(ValidationError) as err:
        single_minded_lies(10**7, 1.0)
    assert err.value.field == "k" and "TB" in str(err.value) and "limit" in str(err.value)
    # alpha = 1: the prices 0 and 1 -> 1 + 2 k lies (the empty report, then each good at each price)
    assert single_minded_lies(3, 1.0).shape == (7, 3)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: Population.from_list(["a"]), "values"),
        (lambda: Accountant().spend("q", PrivacyGuarantee(1.0)).group_total(2, "x"), "delta"),
        (
            lambda: TakeItOrLeaveIt(10, 0.1, 1.0, 0.1).law(
                PopulationLaw(0.5, UniformCosts()), tail="x"
            ),
            "tail",
        ),
        (
            lambda: truthfulness_audit(
                CustomMechanism(lambda r: max(r), lambda t, o: -abs(t - o), range(3)),
                [0, 1],
                true_types="all",
                n=2,
                profiles="search",
                rng=-1,
            ),
            "rng",
        ),
        (lambda: least_epsilon(2.5, [1.0], 2.0, 0.05), "n"),
        (lambda: least_epsilon(10, [-1.0], 2.0, 0.05), "unbought"),
        (lambda: outcome_privacy_cost(np.zeros((1, 0)), [0.0, 1.0], 0.5), "log_prob"),
        (lambda: outcome_privacy_cost(1e300, 1e300, -1e300), "outcome_privacy_cost"),
        (
            lambda: misreport_gains(AnonymousMediator(rounds=5), minority_game([2, 2]), pairs=5),
            "pairs",
        ),
        (
            lambda: misreport_gains(
                AnonymousMediator(rounds=5), minority_game([2, 2]), pairs=[(0, 1.0)]
            ),
            "pairs",
        ),
        (lambda: Market([[0.5], [0.2]], supply=1).is_feasible(np.array([0.0, -1.0])), "assignment"),
        (
            lambda: truthfulness_audit(
                CustomMechanism(lambda r: max(r), lambda t, o: 0.0, range(3)), np.array(0.5)
            ),
            "profile",
        ),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(call, field):
    with pytest.raises(ValidationError) as err:
        call()
    assert err.value.field == field, str(err.value)


def test_index_pairs():
    assert index_pairs("pairs", [(0, 1), np.array([1, 0])], 2) == [(0, 1), (1, 0)]
    for bad in [5, "ab", [(0,)], [(0, 2)], [(0, True)], [[0.0, 1]], {0: 1}]:
        with pytest.raises(ValidationError, match="pairs"):
            index_pairs("pairs", bad, 2)


def test_fair_query_that_buys_nobody_has_no_price():
    """A budget too small for the cheapest seller buys nobody: no winner, so no price (not NaN)."""
    out = FairQuery(1e-9, 1.0).run([1.0, 2.0])
    assert out.n_bought == 0 and out.price is None and out.total_payment == 0 and out.epsilon == 0


def test_envy_free_budget_eps_is_inf_only_for_free_sellers():
    """Free sellers (cost 0): any eps is affordable, the docstring's eps = inf; the radius is then
    u/2. A positive cost so small that B / (m c) overflows has a finite eps that no float holds:
    refused."""
    free = envy_free_budget([0.0, 0.5], 1.0)
    assert free.epsilon == math.inf and free.price == 0 and free.payment == 0 and free.radius == 0.5
    with pytest.raises(ValidationError) as err:
        envy_free_budget([5e-324, 5e-324], 1.0)
    assert err.value.field == "costs"
    # costs of 1e308 on a budget of 1e-300: eps = B / (m c) underflows to 0, a release of infinite
    # noise; buying nobody (radius n/2, the most a count of n bits can err by) is the best benchmark
    dear = envy_free_budget([1e308, 1e308], 1e-300)
    assert (dear.sellers, dear.epsilon, dear.payment, dear.radius) == (0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize("big", [1e308, -1e308])
def test_a_custom_utility_whose_gains_overflow_is_refused(big):
    """u = +-1e308: a gain u(lie) - u(truth) of 2e308 has no float; refused naming the utility."""
    mech = CustomMechanism(
        lambda r: sorted(r)[len(r) // 2],
        lambda t, o: big if t == o else -big,
        range(3),
        anonymous=True,
    )
    with pytest.raises(ValidationError) as err:
        truthfulness_audit(mech, [0, 1, 2])
    assert err.value.field == "utility"
    fine = CustomMechanism(
        lambda r: sorted(r)[len(r) // 2],
        lambda t, o: 1e307 if t == o else -1e307,
        range(3),
        anonymous=True,
    )
    assert math.isfinite(truthfulness_audit(fine, [0, 1, 2]).max_gain)


def test_a_payoff_returning_text_is_refused_in_dpgames_words():
    with pytest.raises(ValidationError) as err:
        # the game's largeness evaluates the payoff once built
        AnonymousGame(
            [1, 1], 2, lambda h: np.full((np.asarray(h).shape[0], 2, 2), "x"), largeness=0.5
        )
    assert err.value.field == "payoff" and "could not convert" not in str(err.value)
    assert "numbers" in str(err.value) and "<U1" in str(err.value)
