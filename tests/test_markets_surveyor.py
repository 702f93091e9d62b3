"""The sensitive surveyor's mechanisms and their envy-free benchmarks, against plain oracles."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.markets.surveyor import (
    AccuracyAuction,
    FairQuery,
    envy_free_accuracy,
    envy_free_budget,
)
from dpgames.validation import ValidationError


# ---- plain oracles (no dpgames code)
# ------------------------------------------------------------------
def worst_failure(u, eps, t):
    """max over bit vectors of Pr[|D + Lap(1/eps)| > t], D = u/2 - ones (scipy's Laplace)."""
    lap = stats.laplace(scale=1 / eps)
    return max(1 - (lap.cdf(t - d) - lap.cdf(-t - d)) for d in (u / 2 - k for k in range(u + 1)))


def bisect(f, lo, hi, iters=200):
    """Least x in [lo, hi] with f(x) true, f monotone false -> true."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if f(mid) else (mid, hi)
    return hi


def plain_least_eps(u, t, beta):
    return bisect(lambda e: worst_failure(u, e, t) <= beta, 1e-9, 1e4)


def plain_radius(u, eps, beta):
    return bisect(lambda t: worst_failure(u, eps, t) <= beta, 0.0, 1e7)


def sorted_agents(costs):
    return sorted(range(len(costs)), key=lambda i: (costs[i], i))


# ---- the accuracy auction
# -----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_accuracy_auction_is_the_plain_vickrey_auction(seed):
    rng = np.random.default_rng(seed)
    n, alpha, beta, share = 12, 0.25, 0.1, 0.5
    costs = [float(x) for x in rng.choice([0.1, 0.2, 0.5, 0.9, 1.3], n)]
    out = AccuracyAuction(alpha, beta, share).run(costs)
    u = max(1, math.floor(2 * share * alpha * n))
    m = n - u
    eps = plain_least_eps(u, alpha * n, beta)
    order = sorted_agents(costs)
    assert out.epsilon == pytest.approx(eps, rel=1e-9)
    assert sorted(np.nonzero(out.bought)[0].tolist()) == sorted(order[:m])
    threshold = costs[order[m]]
    for i in range(n):
        assert out.payments[i] == (out.epsilon * threshold if i in order[:m] else 0.0)


def test_accuracy_goal_met_for_every_bit_vector():
    n, alpha, beta = 8, 0.3, 0.1
    costs = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.6, 0.5]
    out = AccuracyAuction(alpha, beta).run(costs)
    worst = min(
        out.error_law(np.array(bits)).probability_within(alpha * n)
        for bits in itertools.product((0, 1), repeat=n)
    )
    assert worst >= 1 - beta - 1e-12
    assert worst == pytest.approx(1 - beta, abs=1e-9)  # the least eps: the worst vector is tight
    assert out.guaranteed_radius(beta) == pytest.approx(alpha * n, rel=1e-9)


def test_accuracy_auction_ir_and_vickrey_versus_envy_free_payment():
    rng = np.random.default_rng(0)
    for _ in range(20):
        costs = rng.exponential(1.0, 40)
        mech = AccuracyAuction(0.2, 0.05)
        out = mech.run(costs)
        assert (out.utilities(costs) >= 0).all()
        ef = envy_free_accuracy(costs, 0.2, 0.05)
        assert out.total_payment >= ef.payment  # the benchmark is the least fixed-price payment
        # with the auction's own (m, eps) the best fixed price is c_(m): ratio c_(m+1) / c_(m)
        m, eps = mech.plan(40)
        c = np.sort(costs)
        assert out.total_payment == pytest.approx(m * eps * c[m], rel=1e-12)


def test_envy_free_accuracy_against_plain_enumeration():
    costs = [0.5, 0.1, 2.0, 0.3, 0.3, 1.1, 0.8, 0.05, 0.6, 1.7]
    n, alpha, beta = len(costs), 0.2, 0.1
    c = sorted(costs)
    best = math.inf
    for m in range(1, n + 1):
        u = n - m
        if u / 2 >= alpha * n:
            continue
        best = min(best, m * plain_least_eps(u, alpha * n, beta) * c[m - 1])
    ef = envy_free_accuracy(costs, alpha, beta)
    assert ef.payment == pytest.approx(best, rel=1e-8)
    assert ef.radius <= alpha * n * (1 + 1e-12)


@pytest.mark.slow
def test_envy_free_budget_against_plain_enumeration():
    costs = [0.5, 0.1, 2.0, 0.3, 0.3, 1.1, 0.8, 0.05, 0.6, 1.7]
    n, budget, beta = len(costs), 0.8, 0.1
    c = sorted(costs)
    best = n / 2
    for m in range(1, n + 1):
        best = min(best, plain_radius(n - m, budget / (m * c[m - 1]), beta))
    ef = envy_free_budget(costs, budget, beta)
    assert ef.radius == pytest.approx(best, rel=1e-8)
    assert ef.payment <= budget * (1 + 1e-12)


# ---- FairQuery
# ----------------------------------------------------------------------------------------
def plain_fair_query(costs, budget, eps):
    order = sorted_agents(costs)
    k = 0
    for j in range(1, len(costs) + 1):
        if j * eps * costs[order[j - 1]] <= budget:
            k = j
    if k == 0:
        return set(), 0.0
    nxt = costs[order[k]] if k < len(costs) else math.inf
    return set(order[:k]), min(budget / k, eps * nxt)


@pytest.mark.parametrize("seed", range(8))
def test_fair_query_against_the_plain_rule(seed):
    rng = np.random.default_rng(seed)
    costs = [float(x) for x in rng.choice([0.0, 0.2, 0.5, 1.0, 3.0], 10)]
    budget, eps = float(rng.uniform(0.1, 4)), float(rng.uniform(0.1, 2))
    out = FairQuery(budget, eps).run(costs)
    winners, pay = plain_fair_query(costs, budget, eps)
    assert set(np.nonzero(out.bought)[0].tolist()) == winners
    assert out.payments.tolist() == [pay if i in winners else 0.0 for i in range(10)]
    assert out.total_payment <= budget * (1 + 1e-12)
    assert (out.utilities(costs) >= 0).all()


def test_fair_query_buys_as_many_as_the_best_fixed_price_at_its_eps():
    # fixed price p at eps: sellers {c <= p}, affordable iff |sellers| p eps <= B; the most sellers
    # is FairQuery's k
    rng = np.random.default_rng(2)
    for _ in range(30):
        costs = rng.uniform(0, 1, 25)
        budget, eps = float(rng.uniform(0.1, 5)), float(rng.uniform(0.1, 1))
        most = max(
            [0] + [int((costs <= p).sum()) for p in costs if (costs <= p).sum() * p * eps <= budget]
        )
        assert FairQuery(budget, eps).run(costs).n_bought == most
        out = FairQuery(budget, eps).run(costs)
        assert out.guaranteed_radius(0.05) >= envy_free_budget(costs, budget, 0.05).radius * (
            1 - 1e-12
        )


def test_nobody_affordable_buys_nobody_and_adds_no_noise():
    out = FairQuery(0.01, 1.0).run([1.0, 2.0])
    assert out.n_bought == 0 and out.total_payment == 0 and out.noise_scale is None
    assert out.release([1, 1]) == 1.0 and out.guaranteed_radius(0.1) == 1.0


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: AccuracyAuction(0.0), "alpha"),
        (lambda: AccuracyAuction(1.0), "alpha"),
        (lambda: AccuracyAuction(float("nan")), "alpha"),
        (lambda: AccuracyAuction(0.1, beta=0.6), "beta"),
        (lambda: FairQuery(0.0, 1.0), "budget"),
        (lambda: FairQuery(1.0, 0.0), "epsilon"),
        (lambda: AccuracyAuction(0.1).run([0.1, -1.0]), "costs"),
        (lambda: AccuracyAuction(0.1).run([np.nan]), "costs"),
        (lambda: AccuracyAuction(0.01).run([0.1] * 10), "alpha"),
        (lambda: envy_free_budget([1.0], 0.0), "budget"),
        (lambda: envy_free_accuracy([1.0, 2.0], 1.2), "alpha"),
    ],
)
def test_bad_input_names_the_field(make, field):
    with pytest.raises(ValidationError) as e:
        make()
    assert e.value.field == field


_cost = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(0, 1e6))


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    costs=st.lists(_cost, min_size=1, max_size=30),
    alpha=st.floats(-0.5, 1.5),
    beta=st.floats(-0.1, 0.7),
    budget=st.floats(-1, 1e4),
    eps=st.floats(-1, 50),
    share=st.floats(0.01, 0.99),
)
def test_mechanisms_clean_error_or_invariants(costs, alpha, beta, budget, eps, share):
    for build, check in (
        (lambda: AccuracyAuction(alpha, beta, share), "accuracy"),
        (lambda: FairQuery(budget, eps), "budget"),
    ):
        try:
            mech = build()
            out = mech.run(costs)
        except ValidationError:
            continue
        c = np.asarray(costs, dtype=float)
        util = out.utilities(c)
        assert np.isfinite(out.payments).all() and (out.payments >= 0).all()
        assert (util >= 0).all()  # individually rational, exactly
        if check == "budget":
            assert out.total_payment <= mech.budget * (1 + 1e-12)
        else:
            assert out.guaranteed_radius(mech.beta) <= mech.alpha * c.size * (1 + 1e-12)
            assert out.total_payment >= envy_free_accuracy(c, mech.alpha, mech.beta).payment * (
                1 - 1e-12
            )


def test_error_law_given_posteriors_equals_enumeration_of_unbought_bits():
    from dpgames.markets.agents import DiscreteCosts, PopulationLaw

    law = PopulationLaw(
        0.4, DiscreteCosts([0.1, 0.5], [0.5, 0.5]), DiscreteCosts([0.5, 0.9], [0.5, 0.5])
    )
    costs = np.array([0.1, 0.5, 0.9, 0.5, 0.1, 0.9, 0.5, 0.1])
    out = AccuracyAuction(0.45, 0.1).run(costs)
    q = law.posterior_one(costs)
    exact = out.error_law_given(q)
    t = 1.3
    unbought = np.nonzero(~out.bought)[0]
    lap = stats.laplace(scale=1 / out.epsilon)
    total = 0.0
    for bits in itertools.product((0, 1), repeat=unbought.size):
        b = np.array(bits)
        w = np.prod(np.where(b == 1, q[unbought], 1 - q[unbought]))
        d = float(np.sum(0.5 - b))
        total += w * (lap.cdf(t - d) - lap.cdf(-t - d))
    assert exact.probability_within(t) == pytest.approx(total, abs=1e-13)


def test_release_draws_follow_the_exact_error_law():
    costs = np.random.default_rng(0).uniform(size=50)
    bits = (np.random.default_rng(1).random(50) < 0.3).astype(int)
    out = AccuracyAuction(0.2, 0.1).run(costs)
    law = out.error_law(bits)
    rng = np.random.default_rng(2)
    draws = np.array([out.release(bits, rng) for _ in range(20_000)]) - bits.sum()
    t = 4.0
    hit, p = (np.abs(draws) <= t).mean(), law.probability_within(t)
    assert abs(hit - p) < 4.5 * math.sqrt(p * (1 - p) / draws.size)
