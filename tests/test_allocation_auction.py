"""The ascending auction with copies against independent oracles: brute-force optima and
linear_sum_assignment on the expanded instance, Walrasian conditions checked by definition, the
theorem's welfare bound OPT - alpha x copies sold, a plain-loop first-in-first-out auction
(non-private), a plain-loop replay of each bidder against the public history (billboard, private),
and the counters' node sums enumerated interval by interval (privacy)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from scipy.optimize import linear_sum_assignment

from dpgames.allocation.auction import AscendingAuction, round_coins, top_level
from dpgames.allocation.baselines import (
    dual_upper_bound,
    equilibrium_violations,
    optimal_allocation,
)
from dpgames.allocation.incentives import misreport_gains
from dpgames.allocation.market import Market
from dpgames.privacy.audit import laplace_delta
from dpgames.validation import ValidationError

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


def brute_force_optimum(values: np.ndarray, supply: np.ndarray) -> float:
    """Enumerate every assignment of bidders to goods or nothing; keep the feasible ones."""
    n, k = values.shape
    best = 0.0
    for choice in itertools.product(range(-1, k), repeat=n):
        counts = [sum(1 for c in choice if c == j) for j in range(k)]
        if all(counts[j] <= supply[j] for j in range(k)):
            best = max(best, sum(values[i, c] for i, c in enumerate(choice) if c >= 0))
    return best


def assignment_optimum(values: np.ndarray, supply: np.ndarray) -> float:
    """linear_sum_assignment on one column per copy (written here, independently of
    optimal_allocation)."""
    columns = [
        j for j in range(values.shape[1]) for _ in range(min(int(supply[j]), values.shape[0]))
    ]
    rows, cols = linear_sum_assignment(values[:, columns], maximize=True)
    return float(values[rows, np.array(columns)[cols]].sum())


def fifo_auction(
    values: np.ndarray, supply: np.ndarray, alpha: float
) -> tuple[list[int], list[float], list[float]]:
    """The non-private rule in plain Python, one bid at a time: bids of a round in index order; a
    good whose bids at its level exceed its supply rises; a holder who bid below the ask is outbid
    once the good has had s_j bids after hers.  Returns (goods, prices paid, final asks)."""
    n, k = values.shape
    top = top_level(alpha)
    level, at_level = [0] * k, [0] * k
    queue = [[] for _ in range(k)]  # every bid ever made on each good: [bidder, level]
    # current: (good, position) of her holding bid
    holding, paid, current = (
        [-1] * n,
        [0.0] * n,
        [None] * n,
    )
    waiting = list(range(n))
    while waiting:
        for i in waiting:
            utilities = [values[i, j] - level[j] * alpha for j in range(k)]
            best = max(range(k), key=lambda j: (utilities[j], -j))
            if utilities[best] >= 0:
                current[i] = (best, len(queue[best]))
                queue[best].append([i, level[best]])
                holding[i], paid[i] = best, level[best] * alpha
                at_level[best] += 1
        for j in range(k):
            if at_level[j] > supply[j] and level[j] <= top:
                level[j], at_level[j] = level[j] + 1, 0
        waiting = []
        for j in range(k):
            for position, (i, bid_level) in enumerate(queue[j]):
                if (
                    current[i] == (j, position)
                    and bid_level < level[j]
                    and len(queue[j]) - 1 - position >= supply[j]
                ):
                    holding[i], paid[i], current[i] = -1, 0.0, None
                    waiting.append(i)
        waiting.sort()
    return holding, paid, [level[j] * alpha for j in range(k)]


def replay_bidder(values_i: np.ndarray, i: int, out) -> tuple[int, list[tuple[int, int]]]:
    """Bidder i alone against the public history of a private run (asks and the counters' cumulative
    counts) with her own coins, in plain Python: her final good and her bids as (round, good)."""
    path, cum, supply, n = out.price_path, out.cumulative, out.market.supply, out.market.n
    holding, gone, bids = -1, False, []
    bid_ask, bid_round, coin = 0.0, 0, 0.0
    for t in range(out.rounds):
        asks = path[t]
        if holding < 0 and not gone:
            utilities = [values_i[j] - asks[j] for j in range(len(asks))]
            best = max(range(len(asks)), key=lambda j: (utilities[j], -j))
            if utilities[best] >= 0:
                holding, bid_ask, bid_round = best, asks[best], t
                coin = round_coins(out.coin_key, t, n)[i]
                bids.append((t, best))
            else:
                gone = True
        if holding >= 0 and path[t + 1][holding] > bid_ask:
            before = cum[bid_round - 1][holding] if bid_round > 0 else 0.0
            later = (
                cum[t][holding]
                - cum[bid_round][holding]
                + (1 - coin) * (cum[bid_round][holding] - before)
                - 0.5
            )
            if later > supply[holding] - 0.5 - out.margin:
                holding = -1
    return holding, bids


def node_sums(bids: list[tuple[int, int]], horizon: int, k: int) -> dict[tuple[int, int, int], int]:
    """Sum of a bid stream over every dyadic interval ((m-1) 2^j, m 2^j] of rounds 1..horizon, per
    good."""
    sums = {}
    j = 0
    while 2**j <= horizon:
        for m in range(1, horizon // 2**j + 1):
            lo, hi = (m - 1) * 2**j, m * 2**j  # rounds lo+1 .. hi, i.e. indices lo .. hi-1
            for g in range(k):
                sums[(j, m, g)] = sum(1 for t, gg in bids if gg == g and lo <= t < hi)
        j += 1
    return sums


tiny_markets = st.tuples(
    st.integers(1, 5), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2**32 - 1)
)


@SETTINGS
@given(tiny_markets)
def test_optimum_equals_brute_force(params):
    n, k, s, seed = params
    market = Market.random(n, k, s, rng=seed)
    best = optimal_allocation(market)
    assert best.welfare == pytest.approx(
        brute_force_optimum(market.values, market.supply), abs=1e-12
    )
    assert market.is_feasible(best.assignment)


def test_transportation_lp_equals_assignment(monkeypatch):
    from dpgames.allocation import baselines

    market = Market.random(40, 4, [3, 5, 1, 10], rng=7)
    exact = optimal_allocation(market)
    monkeypatch.setattr(baselines, "ASSIGNMENT_LIMIT", 0)
    lp = optimal_allocation(market)
    assert lp.method == "linprog" and market.is_feasible(lp.assignment)
    assert lp.welfare == pytest.approx(exact.welfare, abs=1e-9)


def check_theorem(market: Market, out, opt: float, alpha: float) -> None:
    """The module's theorem, each clause checked by definition."""
    check = equilibrium_violations(market, out.served, out.prices)
    # (i): unsold copies at the reserve
    assert check.oversold == 0 and check.priced_unsold.size == 0
    assert check.demand_gap <= alpha + 1e-12  # (ii): in demand up to alpha
    assert (out.served == out.assignment).all()
    best = np.maximum((market.values - out.prices).max(axis=1), 0.0)
    for i in range(market.n):
        g = out.served[i]
        if g >= 0:  # (ii): in demand at her own price
            assert out.paid[i] in (
                pytest.approx(out.prices[g]),
                pytest.approx(out.prices[g] - alpha),
            )
            assert market.values[i, g] - out.paid[i] >= best[i] - 1e-12
        else:
            assert (market.values[i] - out.prices < 0).all()  # out: wants nothing at the asks
    sold = int((out.served >= 0).sum())
    lower = sum(
        1
        for i in range(market.n)
        if out.served[i] >= 0 and out.paid[i] < out.prices[out.served[i]] - 1e-12
    )
    assert out.welfare <= opt + 1e-9
    assert out.welfare >= opt - alpha * lower - 1e-9 >= opt - alpha * sold - 1e-9  # (iii)
    assert out.welfare_certificate == pytest.approx(alpha * lower, abs=1e-9)
    assert dual_upper_bound(market, out.prices) >= opt - 1e-9


@SETTINGS
@given(
    tiny_markets,
    st.sampled_from([0.05, 0.1, 0.25, 0.5, 1.0]),
    st.sampled_from(["uniform", "common"]),
)
def test_nonprivate_auction_is_walrasian_up_to_alpha_against_brute_force(params, alpha, law):
    n, k, s, seed = params
    market = Market.random(n, k, s, rng=seed, law=law)
    out = AscendingAuction(alpha).run(market)
    check_theorem(market, out, brute_force_optimum(market.values, market.supply), alpha)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("law", ["uniform", "common"])
def test_nonprivate_auction_is_walrasian_up_to_alpha_against_linear_sum_assignment(seed, law):
    rng = np.random.default_rng(seed)
    supply = rng.integers(1, 30, size=6)
    market = Market.random(200, 6, supply, rng=seed, law=law)
    alpha = [0.01, 0.05, 0.2][seed % 3]
    out = AscendingAuction(alpha).run(market)
    check_theorem(market, out, assignment_optimum(market.values, market.supply), alpha)
    assert (out.bids_per_bidder <= out.bid_bound).all()


@SETTINGS
@given(tiny_markets, st.sampled_from([0.1, 0.25, 0.5]))
def test_nonprivate_auction_equals_a_plain_fifo_auction(params, alpha):
    n, k, s, seed = params
    market = Market.random(n, k, s, rng=seed, law="common" if seed % 2 else "uniform")
    out = AscendingAuction(alpha).run(market)
    goods, paid, asks = fifo_auction(market.values, market.supply, alpha)
    assert out.served.tolist() == goods
    assert np.allclose(out.paid, paid) and np.allclose(out.prices, asks)


def test_the_old_overshoot_is_gone():
    """Two copies of one good, three bidders (0.9, 0.3, 0.3), alpha = 0.25.  Releasing every holder
    at a rise sold one copy at 0.5 (the two 0.3s leave together).  First in, first out: bidder 0
    outbids bidder 1, who outbids bidder 2 ...; at 0.5 only bidder 1, the last outbid, leaves: both
    copies sold, to 0 and 2 (welfare 1.2 = OPT by hand), bidder 2 at the lower price 0.25."""
    market = Market([[0.9], [0.3], [0.3]], supply=2)
    out = AscendingAuction(0.25).run(market)
    assert out.served.tolist() == [0, -1, 0] and out.welfare == pytest.approx(1.2)
    assert out.prices.tolist() == [0.5] and out.paid.tolist() == [0.5, 0.0, 0.25]
    assert equilibrium_violations(market, out.served, out.prices).priced_unsold.size == 0


def test_walrasian_exactly_when_no_good_is_contested():
    market = Market(
        [[0.9, 0.1, 0.2], [0.1, 0.8, 0.3], [0.3, 0.2, 0.7], [0.6, 0.1, 0.1]], supply=[2, 1, 1]
    )
    out = AscendingAuction(0.1).run(market)
    assert equilibrium_violations(market, out.served, out.prices).holds()
    assert out.served.tolist() == [0, 1, 2, 0] and out.welfare == pytest.approx(3.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("epsilon", [1e12, 5.0])
def test_private_welfare_certificate_holds_against_linear_sum_assignment(seed, epsilon):
    """The certificate's proof holds for every run, private or not, whatever the noise."""
    market = Market.random(300, 3, [40, 60, 80], rng=seed, law="common" if seed % 2 else "uniform")
    out = AscendingAuction(0.1, epsilon, margin=0.0).run(market, rng=seed)
    opt = assignment_optimum(market.values, market.supply)
    assert market.is_feasible(out.served) and out.welfare <= opt + 1e-9
    assert out.welfare >= opt - out.welfare_certificate - 1e-9
    assert (out.bids_per_bidder <= out.bid_bound).all()


@SETTINGS
@given(
    tiny_markets,
    st.sampled_from([0.1, 0.25]),
    st.sampled_from([0.5, 5.0, 1e12]),
    st.sampled_from([0.0, "auto"]),
)
def test_every_bidder_replays_her_own_outcome_from_the_public_history(
    params, alpha, epsilon, margin
):
    """Billboard: a bidder's good is a function of the public history, her own values and coins
    only."""
    n, k, s, seed = params
    market = Market.random(n, k, s, rng=seed)
    auction = AscendingAuction(alpha, epsilon, margin=margin)
    out = auction.run(market, rng=seed)
    for i in range(n):
        holding, bids = replay_bidder(market.values[i], i, out)
        assert holding == out.assignment[i]
        assert (
            len(bids)
            == out.bids_per_bidder[i]
            <= auction.bid_bound(k)
            == k * (top_level(alpha) + 1)
        )
    assert (np.diff(out.price_path, axis=0) >= 0).all()
    replayed = [g for i in range(n) for _, g in replay_bidder(market.values[i], i, out)[1]]
    assert (
        out.bids.sum(axis=0).tolist()
        == np.bincount(np.array(replayed, dtype=int), minlength=k).tolist()
    )


@SETTINGS
@given(tiny_markets, st.integers(0, 4), st.lists(st.floats(0, 1), min_size=3, max_size=3))
def test_a_changed_bidder_moves_the_node_sums_within_the_counter_sensitivity(params, who, other):
    """Exact privacy audit on the realised history: one bidder's report changed, the others' bids
    fixed by the public prices, every dyadic node sum recomputed; the Laplace privacy loss of the
    node sums, at most their l1 change over the scale, must be within epsilon (delta exactly 0)."""
    n, k, s, seed = params
    who = who % n
    market = Market.random(n, k, s, rng=seed)
    auction = AscendingAuction(0.25, 1.0, margin=0.0)
    out = auction.run(market, rng=seed)
    counter = auction.counter(k)
    horizon = counter.horizon
    _, mine = replay_bidder(market.values[who], who, out)
    _, theirs = replay_bidder(np.array(other[:k]), who, out)
    a, b = node_sums(mine, horizon, k), node_sums(theirs, horizon, k)
    shift = sum(abs(a[key] - b[key]) for key in a)
    assert shift <= counter.node_sensitivity
    assert counter.node_sensitivity == 2 * auction.bid_bound(k) * horizon.bit_length()
    assert laplace_delta(1.0, shift, counter.noise_scale) == 0.0
    assert out.guarantee.epsilon == 1.0 and out.accountant.best_total().epsilon == 1.0


def test_the_privacy_audit_can_fail_a_too_small_sensitivity():
    """The audit above is not vacuous: a bidder who bids in every round moves the node sums by far
    more than one round's worth."""
    bids = [(t, t % 2) for t in range(5)]
    sums, none = node_sums(bids, 5, 2), node_sums([], 5, 2)
    assert sum(abs(sums[key] - none[key]) for key in sums) > (5).bit_length()


def test_the_fix_removes_the_over_demand():
    """1,020 single-minded bidders per good, 1,000 copies: the exact auction raises both prices at
    once; the noisy counters often miss the 20 extra bids, the fixed thresholds never (w.p. >= 1 -
    beta)."""
    rng = np.random.default_rng(0)
    values = np.zeros((2040, 2))
    values[:1020, 0], values[1020:, 1] = rng.uniform(0.5, 1, 1020), rng.uniform(0.5, 1, 1020)
    market = Market(values, 1000)
    assert AscendingAuction(0.25).run(market).oversold.sum() == 0
    raw = [
        AscendingAuction(0.25, 2.0, margin=0.0).run(market, rng=r).oversold.sum() for r in range(10)
    ]
    fixed = [
        AscendingAuction(0.25, 2.0, beta=0.01).run(market, rng=r).oversold.sum() for r in range(10)
    ]
    assert sum(raw) > 0  # without the fix, noisy counts undercount and goods are oversold
    assert sum(f > 0 for f in fixed) <= 1  # at most 1 of 10 with beta = 0.01 (P[>=2 of 10] < 0.005)


def test_misreport_gains_replay_the_same_noise():
    market = Market.random(6, 2, 2, rng=11)
    auction = AscendingAuction(0.25, 3.0, margin=0.0)
    lies = np.vstack([market.values[2], np.zeros(2), [1.0, 0.0]])
    gains = misreport_gains(auction, market, lies, rng=5, bidders=[2])
    truth = auction.run(market, rng=5).utilities()[2]
    by_hand = []
    for lie in lies:
        values = market.values.copy()
        values[2] = lie
        out = auction.run(Market(values, market.supply), rng=5)
        g = out.served[2]
        by_hand.append(0.0 if g < 0 else market.values[2, g] - out.paid[2])
    assert by_hand[0] == truth == gains.truthful[0]
    assert gains.gains[0] == pytest.approx(max(0.0, max(by_hand) - truth))


def test_misreport_gain_of_a_lone_bidder_is_zero():
    gains = misreport_gains(AscendingAuction(0.1), Market([[0.7, 0.3]], supply=1))
    assert gains.truthful.tolist() == [pytest.approx(0.7)] and gains.max_gain == 0.0


# --- input surfaces -----------------------------------------------------------------------------
anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.none(),
    st.text(max_size=3),
    st.lists(st.floats(-1, 2), max_size=3),
)


@SETTINGS
@given(
    st.lists(
        st.lists(st.one_of(st.floats(-0.5, 1.5), st.just(float("nan"))), min_size=1, max_size=3),
        min_size=1,
        max_size=4,
    ),
    st.one_of(st.integers(-1, 3), anything),
)
def test_market_input_is_refused_cleanly_or_valid(rows, supply):
    try:
        market = Market(rows, supply)
    except ValidationError as error:
        assert error.field in ("values", "supply")
        return
    assert market.values.min() >= 0 and market.values.max() <= 1 and (market.supply >= 1).all()
    out = AscendingAuction(0.5).run(market)
    assert market.is_feasible(out.served)


@SETTINGS
@given(
    anything,
    st.one_of(st.none(), anything),
    st.one_of(st.just("auto"), anything),
    anything,
    st.one_of(st.none(), anything),
)
def test_auction_parameters_are_refused_cleanly_or_valid(alpha, epsilon, margin, beta, rounds):
    try:
        auction = AscendingAuction(alpha, epsilon, margin=margin, beta=beta, rounds=rounds)
    except ValidationError as error:
        assert error.field in ("alpha", "epsilon", "margin", "beta", "rounds")
        return
    assert 1e-4 <= auction.alpha <= 1
    out = auction.run(Market.random(5, 2, 1, rng=0), rng=0)
    assert out.market.is_feasible(out.served) and (out.prices >= 0).all()
    most = auction.horizon(2) if auction.epsilon is not None else 5 * (auction.bid_bound(2) + 1)
    assert np.isfinite(out.welfare) and out.rounds <= most


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"alpha": 0}, "alpha"),
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": 1e-300}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": float("nan")}, "alpha"),
        ({"alpha": 0.1, "epsilon": 0}, "epsilon"),
        ({"alpha": 0.1, "margin": -1}, "margin"),
        ({"alpha": 0.1, "margin": "fix"}, "margin"),
        ({"alpha": 0.1, "beta": 1}, "beta"),
        ({"alpha": 0.1, "rounds": 0}, "rounds"),
    ],
)
def test_bad_auction_arguments_name_the_argument(kwargs, field):
    with pytest.raises(ValidationError) as error:
        AscendingAuction(**kwargs)
    assert error.value.field == field


@pytest.mark.parametrize(
    "values, supply, field",
    [
        ([[0.5, 1.2]], 1, "values"),
        ([[float("nan")]], 1, "values"),
        ([[-0.1]], 1, "values"),
        ([], 1, "values"),
        ([[0.5]], 0, "supply"),
        ([[0.5, 0.5]], [1], "supply"),
        ([[0.5]], 1.5, "supply"),
        ([[0.5]], -2, "supply"),
    ],
)
def test_bad_markets_name_the_field(values, supply, field):
    with pytest.raises(ValidationError) as error:
        Market(values, supply)
    assert error.value.field == field


def test_run_refuses_a_non_market():
    with pytest.raises(ValidationError, match="market"):
        AscendingAuction(0.1).run([[0.5]])


@SETTINGS
@example(None, [], 0)
@given(
    st.one_of(
        st.none(),
        anything,
        st.lists(st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=3), max_size=3),
    ),
    st.one_of(st.none(), anything, st.lists(st.integers(-2, 5), max_size=3)),
    st.one_of(st.none(), st.integers(0, 9)),
)
def test_misreport_audit_inputs_are_refused_cleanly_or_valid(lies, bidders, rng):
    market = Market.random(4, 2, 1, rng=1)
    try:
        gains = misreport_gains(AscendingAuction(0.5, 2.0), market, lies, rng=rng, bidders=bidders)
    except ValidationError as error:
        assert error.field in ("lies", "bidders", "rng")
        return
    assert (
        gains.gains >= 0
    ).all() and gains.gains.shape == gains.bidders.shape == gains.truthful.shape
    assert set(gains.bidders.tolist()) <= set(range(4))


@SETTINGS
@given(
    st.one_of(anything, st.lists(st.integers(-2, 3), min_size=3, max_size=3)),
    st.one_of(anything, st.lists(st.floats(-1, 2), min_size=2, max_size=2)),
    st.one_of(st.floats(0, 1), anything),
)
def test_baseline_inputs_are_refused_cleanly_or_valid(assignment, prices, reserve):
    market = Market([[0.9, 0.2], [0.3, 0.8], [0.7, 0.1]], supply=1)
    try:
        bound = dual_upper_bound(market, prices)
    except ValidationError as error:
        assert error.field == "prices"
    else:
        assert bound >= optimal_allocation(market).welfare - 1e-12
    try:
        check = equilibrium_violations(
            market,
            np.asarray(assignment) if isinstance(assignment, list) else assignment,
            prices,
            reserve,
        )
    except ValidationError as error:
        assert error.field in ("assignment", "prices", "reserve")
        return
    assert check.demand_gap >= 0 and check.oversold >= 0
