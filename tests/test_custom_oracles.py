"""Oracles for ``dpgames.CustomMechanism`` and its audits.

1. Every built-in mechanism rewritten as a user's plain functions (:mod:`custom_wrappers`, from the
   built-ins' public laws and utility arrays only) must give, under the generic custom audit (one
   law per report tuple), the same gain for every (agent, true type, lie) as the built-in fast audit
   (tilted laws, class rows), to 1e-12, on seeded random small instances: the exponential mechanism
   on facility location and on pricing (free and forced reactions), ``M^P``, the NST mix,
   Huang-Kannan (payments) and the digital-goods auction on a grid (against ``misreport_audit`` and
   ``AuctionPricing``); the vectorised utility form gives the same gains.  Random table mechanisms
   (random laws, utilities and payments per profile) against plain loops: ex post over every true
   type, dominant strategy over every profile, Bayesian under a common and per-agent priors,
   anonymous or not.
2. Hand-worked cases, each expected figure derived in a comment: the median rule (truthful ex post,
   over every true type, in dominant strategy), the rounded mean (not truthful, exact gain), Vickrey
   (truthful in dominant strategy), first price (not truthful, exact gain; and its interim gain
   under a uniform prior, against a plain loop over the other's types, exact and Monte Carlo);
   sampling-only rules (a deterministic simulator: exact gains; the random dictator: gain -|t - x| /
   n in the intervals).
3. ``assert_truthful`` on custom mechanisms and plain callables: passing, and failing with a message
   that names the agent, true type, lie, gain and profile.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings

import dpgames
import dpgames.analysis
import dpgames.testing
from custom_wrappers import (
    auction_custom,
    commitment_custom,
    exponential_custom,
    huang_kannan_custom,
    mix_custom,
    vectorized_exponential_custom,
)
from dpgames import FiniteDistribution
from dpgames.analysis import truthfulness as fast
from dpgames.analysis.misreport import misreport_audit
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.facility_location import (
    facility_location_environment,
    grid_graph,
    line_graph,
)
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing, pricing_environment
from dpgames.mechanisms.public_project import public_project_environment
from dpgames.testing import assert_truthful

audit = dpgames.truthfulness_audit
TOL = 1e-12


# --- reading a custom audit's gains
# --------------------------------------------------------------------


def custom_gains(result, n: int, n_types: int, all_types: bool) -> np.ndarray:
    """Every gain of a custom audit as an array ``[agent, lie]`` (``[agent, true type, lie]`` with
    ``all_types``), types in the order given to the mechanism.  An anonymous audit has one row per
    class (``agents``: the first agent of each); every agent of a class faces the same others, so it
    gets the row of her class."""
    gains = np.asarray(result.gains, dtype=float)
    agents = np.asarray(result.agents).tolist()
    assert gains.shape == ((len(agents), n_types, n_types) if all_types else (len(agents), n_types))
    if agents == list(range(n)):
        return gains
    row_of_label = {result.profile[a]: k for k, a in enumerate(agents)}
    return gains[[row_of_label[result.profile[i]] for i in range(n)]]


def fast_rows(profile, n: int) -> np.ndarray:
    """The built-in audit's class row of each agent."""
    return np.searchsorted(profile.classes, profile.type_indices[:n])


def compare_with_fast(custom, builtin, labels, all_types: bool = False) -> None:
    """The custom audit's gains equal the built-in fast audit's at the profile ``labels``."""
    env = builtin.environment
    profile = env.profile(np.asarray(labels, dtype=env.types.dtype))
    want = fast.truthfulness_audit(builtin, profile, "all" if all_types else "own")
    got = audit(custom, list(labels), true_types="all" if all_types else "own")
    per_agent = want.gains[fast_rows(profile, len(labels))]
    np.testing.assert_allclose(
        custom_gains(got, len(labels), env.n_types, all_types), per_agent, rtol=0, atol=TOL
    )
    # the built-in audit's max_gain is the best lie's gain, negative when every lie loses: the
    # custom audit floors it at 0 and names the rest the margin
    assert abs(got.max_gain - max(want.max_gain, 0.0)) <= TOL
    assert abs(got.margin + want.max_gain) <= TOL
    assert set(got.worst_case) >= {"agent", "true_type", "lie", "gain"}
    assert abs(got.worst_case["gain"] - want.max_gain) <= TOL


# --- 1. built-in mechanisms as custom ones
# -------------------------------------------------------------


def random_environment(rng):
    """Facility location on a small line or 2 x 2 grid (k = 1 or 2), or pricing with midpoint types
    or values on a 1/8 grid (values equal to prices: ties in the reactions)."""
    if rng.random() < 0.5:
        graph = line_graph(int(rng.integers(3, 6))) if rng.random() < 0.7 else grid_graph(2, 2)
        return facility_location_environment(graph, k=int(rng.integers(1, 3)))
    prices = np.sort(rng.choice(np.arange(1, 9) / 8, size=int(rng.integers(2, 5)), replace=False))
    types = (
        None
        if rng.random() < 0.5
        else np.sort(rng.choice(np.arange(0, 9) / 8, size=4, replace=False))
    )
    return pricing_environment(prices, types)


def random_instance(seed):
    rng = np.random.default_rng(seed)
    env = random_environment(rng)
    while not env.sensitivity > 0:  # the exponential mechanism needs a report-dependent objective
        env = random_environment(rng)
    labels = env.types[rng.integers(0, env.n_types, size=int(rng.integers(1, 5)))].tolist()
    return rng, env, labels, float(rng.choice([0.3, 1.0, 4.0]))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("reactions", ["free", "forced"])
def test_exponential_mechanism_as_custom(seed, reactions):
    _, env, labels, eps = random_instance(seed)
    em = ObjectiveExponentialMechanism(env, eps, reactions=reactions)
    for anonymous in (False, True) if reactions == "free" else (False,):
        custom = exponential_custom(em, anonymous=anonymous)
        compare_with_fast(custom, em, labels)
        compare_with_fast(custom, em, labels, all_types=True)


def test_many_agents_anonymous_and_not():
    # 40 agents of 4 types: the anonymous audit has one row per class, the plain one a row per
    # agent; both equal the built-in class rows
    env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    labels = env.types[np.random.default_rng(9).integers(0, 4, size=40)].tolist()
    for reactions in ("free", "forced"):
        em = ObjectiveExponentialMechanism(env, 0.7, reactions=reactions)
        compare_with_fast(exponential_custom(em), em, labels)
    em = ObjectiveExponentialMechanism(env, 0.7)
    anonymous = exponential_custom(em, anonymous=True)
    compare_with_fast(anonymous, em, labels)
    assert len(audit(anonymous, labels).agents) == len(set(labels))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("reactions", ["free", "forced"])
def test_vectorized_utility_gives_the_same_gains(seed, reactions):
    _, env, labels, eps = random_instance(500 + seed)
    em = ObjectiveExponentialMechanism(env, eps, reactions=reactions)
    custom = vectorized_exponential_custom(em)
    compare_with_fast(custom, em, labels)
    compare_with_fast(custom, em, labels, all_types=True)


@pytest.mark.parametrize("seed", range(6))
def test_commitment_mechanism_as_custom(seed):
    # M^P's outcome includes the FORCED reactions: label (s, r_0, ..., r_{n-1}), utility u(t, s,
    # r_agent)
    rng, env, labels, _ = random_instance(100 + seed)
    punishing = (
        None
        if seed % 2
        else np.sort(rng.choice(env.n_outcomes, size=max(1, env.n_outcomes // 2), replace=False))
    )
    cm = CommitmentMechanism(env, punishing)
    compare_with_fast(commitment_custom(cm), cm, labels)
    compare_with_fast(commitment_custom(cm), cm, labels, all_types=True)


@pytest.mark.parametrize("seed", range(6))
def test_nst_mix_as_custom(seed):
    rng, env, labels, eps = random_instance(200 + seed)
    reactions = "forced" if seed % 2 else "free"
    mix = NSTMix(
        ObjectiveExponentialMechanism(env, eps, reactions=reactions),
        CommitmentMechanism(env),
        float(rng.uniform(0.05, 0.95)),
    )
    compare_with_fast(mix_custom(mix), mix, labels)
    compare_with_fast(mix_custom(mix), mix, labels, all_types=True)


def test_nst_mix_at_the_exact_least_q_is_truthful_as_custom_and_not_below():
    env = facility_location_environment(line_graph(6), k=2)
    labels = [5, 3, 3, 1]
    em, cm = ObjectiveExponentialMechanism(env, 1.0), CommitmentMechanism(env)
    q = dpgames.analysis.least_q(em, cm, env.profile(labels)).q
    assert 0 < q < 1
    assert audit(mix_custom(NSTMix(em, cm, q)), labels).is_truthful(1e-12)
    below = audit(mix_custom(NSTMix(em, cm, q * (1 - 1e-3))), labels)
    assert below.max_gain > 1e-9 and not below.is_truthful(0.0)


@pytest.mark.parametrize("seed", range(6))
def test_huang_kannan_as_custom_with_payments(seed):
    rng, env, labels, _ = random_instance(300 + seed)
    hk = HuangKannan(env, float(rng.choice([0.3, 1.5, 6.0])))
    for anonymous in (False, True):
        compare_with_fast(huang_kannan_custom(hk, anonymous), hk, labels)
    compare_with_fast(huang_kannan_custom(hk), hk, labels, all_types=True)
    # exactly truthful (Gibbs variational principle): no lie gains, for any true type
    assert audit(huang_kannan_custom(hk), labels, true_types="all").max_gain <= 1e-12


def test_huang_kannan_public_project_with_costs_as_custom():
    env = public_project_environment(
        [[0.0, 3.0, 1.0, 3.5], [0.0, 0.5, 2.0, 2.5], [0.0, 1.0, 1.0, 1.0]],
        ["none", "park", "library", "both"],
        cost=[0.0, 1.5, 1.5, 2.5],
    )
    hk = HuangKannan(env, 0.8)
    labels = ["type 0", "type 1", "type 1", "type 2"]
    compare_with_fast(huang_kannan_custom(hk), hk, labels)
    compare_with_fast(huang_kannan_custom(hk, anonymous=True), hk, labels, all_types=True)


@pytest.mark.parametrize("seed", range(5))
def test_digital_goods_auction_on_a_grid_as_custom(seed):
    # types = reports = {0} + the price grid: misreport_audit's default (exhaustive) report set
    rng = np.random.default_rng(400 + seed)
    n, eps = int(rng.integers(1, 5)), float(rng.choice([0.5, 2.0, 6.0]))
    auction = DigitalGoodsAuction(eps, alpha=float(rng.choice([0.2, 0.25])))
    custom, grid = auction_custom(auction, n)
    values = [grid[i] for i in rng.integers(0, len(grid), size=n)]
    want = misreport_audit(auction, values, keep_gains=True)
    assert want.lies.tolist() == grid
    got = audit(custom, values)
    np.testing.assert_allclose(custom_gains(got, n, len(grid), False), want.gains, rtol=0, atol=TOL)
    assert abs(got.max_gain - max(want.max_gain, 0.0)) <= TOL
    # the same auction seen as the exponential mechanism of the pricing environment (forced
    # reactions)
    pricing = AuctionPricing(auction, n, types=grid)
    compare_with_fast(custom, pricing, values)
    compare_with_fast(custom, pricing, values, all_types=True)


def test_posted_price_with_free_reactions_as_custom():
    # NST's posted price: the price from the auction's law on the bids, then each buys iff her VALUE
    # is at least it: outcome p, utility (v - p)+
    auction, n = DigitalGoodsAuction(2.0, alpha=0.25), 3
    grid = [0.0] + auction.prices_for(n).tolist()

    def rule(reports):
        law = auction.price_distribution(np.array(reports, dtype=float))
        return dict(zip(law.outcomes.tolist(), law.probabilities.tolist()))

    def utility(v, p):
        return max(v - p, 0.0)

    custom = CustomMechanism(rule, utility, grid, anonymous=True)
    pricing = AuctionPricing(auction, n, types=grid, reactions="free")
    for values in ([0.25, 0.75, 1.0], [0.0, 0.5, 0.5], [1.0, 1.0, 0.25]):
        compare_with_fast(custom, pricing, values)
        compare_with_fast(custom, pricing, values, all_types=True)


# --- random table mechanisms against plain loops
# ------------------------------------------------------


def random_table_mechanism(seed, anonymous):
    """A random mechanism on 3 types and 3 agents given by tables: a law over 4 outcomes per profile
    (per multiset when ``anonymous``), utilities u[t][o] (u[t][o][agent] when not anonymous) and
    payments."""
    rng = np.random.default_rng(seed)
    m, n, k = 3, 3, 4
    key = (lambda r: tuple(sorted(r))) if anonymous else tuple
    laws = {
        key(r): rng.dirichlet(np.full(k, 0.7)).tolist()
        for r in itertools.product(range(m), repeat=n)
    }
    pay_of_type = {
        key(r): rng.uniform(0, 1, size=m).tolist() for r in itertools.product(range(m), repeat=n)
    }
    u = rng.uniform(-1, 1, size=(m, k, n)).tolist()

    def rule(reports):
        return {o: p for o, p in enumerate(laws[key(reports)])}

    def payments(reports):  # what each agent pays depends on the profile and her own report
        return [pay_of_type[key(reports)][x] for x in reports]

    def utility3(t, o, agent):
        return u[t][o][agent]

    def utility2(t, o):
        return u[t][o][0]

    utility = utility2 if anonymous else utility3
    mech = CustomMechanism(rule, utility, types=range(m), payments=payments, anonymous=anonymous)

    def expected(agent, t, reports):  # plain loop: E[u] - payment
        law = rule(tuple(reports))
        us = [utility2(t, o) if anonymous else utility3(t, o, agent) for o in law]
        return sum(p * x for p, x in zip(law.values(), us)) - payments(tuple(reports))[agent]

    return mech, expected, m, n


def deviate(profile, i, x):
    return tuple(profile[:i]) + (x,) + tuple(profile[i + 1 :])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("anonymous", [False, True])
def test_random_table_mechanisms_against_plain_loops(seed, anonymous):
    mech, expected, m, n = random_table_mechanism(seed, anonymous)
    profiles = list(itertools.product(range(m), repeat=n))
    # ex post over every true type at one profile
    profile = profiles[seed * 7 % len(profiles)]
    want = np.array(
        [
            [
                [
                    expected(i, t, deviate(profile, i, x)) - expected(i, t, deviate(profile, i, t))
                    for x in range(m)
                ]
                for t in range(m)
            ]
            for i in range(n)
        ]
    )
    got = audit(mech, list(profile), true_types="all")
    np.testing.assert_allclose(custom_gains(got, n, m, True), want, rtol=0, atol=TOL)
    # dominant strategy: the largest ex-post gain (own type) over every profile
    best = max(
        expected(i, p[i], deviate(p, i, x)) - expected(i, p[i], p)
        for p in profiles
        for i in range(n)
        for x in range(m)
        if x != p[i]
    )
    dominant = audit(mech, n=n, profiles="all")
    assert abs(dominant.max_gain - best) <= TOL
    w = dominant.worst_case
    p = tuple(w["profile"])
    assert p[w["agent"]] == w["true_type"]
    assert (
        abs(
            expected(w["agent"], w["true_type"], deviate(p, w["agent"], w["lie"]))
            - expected(w["agent"], w["true_type"], p)
            - best
        )
        <= TOL
    )
    # Bayesian under a random common prior: interim gains by a plain sum over the others' profiles
    prior = np.random.default_rng(seed + 50).dirichlet(np.ones(m)).tolist()

    def interim(i, t, x):
        total = 0.0
        for others in itertools.product(range(m), repeat=n - 1):
            weight = np.prod([prior[o] for o in others])
            total += weight * (
                expected(i, t, others[:i] + (x,) + others[i:])
                - expected(i, t, others[:i] + (t,) + others[i:])
            )
        return total

    want = np.array([[[interim(i, t, x) for x in range(m)] for t in range(m)] for i in range(n)])
    bayes = audit(mech, n=n, prior=dict(enumerate(prior)))
    got = np.asarray(bayes.gains)
    rows = [want[i] for i in np.asarray(bayes.agents).tolist()]
    np.testing.assert_allclose(got, np.array(rows), rtol=0, atol=TOL)
    if anonymous:  # every agent faces the same: one row is enough, and it is every agent's
        np.testing.assert_allclose(want, np.broadcast_to(want[0], want.shape), rtol=0, atol=TOL)
    # one prior per agent (not common: no multiset shortcut)
    priors = np.random.default_rng(seed + 60).dirichlet(np.ones(m), size=n).tolist()

    def interim_per_agent(i, t, x):
        total = 0.0
        rest = [j for j in range(n) if j != i]
        for others in itertools.product(range(m), repeat=n - 1):
            weight = np.prod([priors[j][o] for j, o in zip(rest, others)])
            total += weight * (
                expected(i, t, others[:i] + (x,) + others[i:])
                - expected(i, t, others[:i] + (t,) + others[i:])
            )
        return total

    want = np.array(
        [[[interim_per_agent(i, t, x) for x in range(m)] for t in range(m)] for i in range(n)]
    )
    bayes = audit(mech, n=n, prior=[dict(enumerate(p)) for p in priors])
    assert np.asarray(bayes.agents).tolist() == list(range(n))
    np.testing.assert_allclose(np.asarray(bayes.gains), want, rtol=0, atol=TOL)


# --- 2. hand-worked cases
# --------------------------------------------------------------------------------


def median_rule(reports):
    return sorted(reports)[len(reports) // 2]


def distance_utility(t, outcome):
    return -abs(t - outcome)


MEDIAN = CustomMechanism(median_rule, distance_utility, types=range(11), anonymous=True)


def test_median_rule_truthful_ex_post_with_the_exact_gains():
    # Profile (3, 7, 5, 1, 9): the median is 5.  A report moves the median only if it crosses 5, and
    # then only AWAY from the liar's type (moving the median towards t would need a report beyond 5
    # on t's side, which leaves it at 5).  So no lie gains and the best lies gain exactly 0 (e.g.
    # agent 0, type 3, reporting 2: median still 5).  The median agent (agent 2, type 5) loses by
    # every lie: reporting x in {4, 6} gives median x, a loss of 1; reporting x <= 3 gives median 3
    # (loss 2), x >= 7 median 7 (loss 2).
    result = audit(MEDIAN, [3, 7, 5, 1, 9])
    assert result.max_gain == 0.0 and result.is_truthful(0.0)
    assert result.worst_case["gain"] == 0.0
    gains = custom_gains(result, 5, 11, False)
    assert gains[2].tolist() == [-2, -2, -2, -2, -1, 0, -1, -2, -2, -2, -2]
    # agent 0 (type 3): reports 0..4 keep the median at 5 (gain 0); 6 -> 6 (loss 1); >= 7 -> 7 (loss
    # 2)
    assert gains[0].tolist() == [0, 0, 0, 0, 0, 0, -1, -2, -2, -2, -2]


def test_median_rule_truthful_over_every_true_type():
    # Replacing one agent by any true type t, the others fixed: the median is t clamped to the
    # others' middle interval; a lie moves it only further from t.  Max gain 0 (a lie on the same
    # side of the interval as t changes nothing).
    result = audit(MEDIAN, [3, 7, 5, 1, 9], true_types="all")
    assert result.max_gain == 0.0 and result.is_truthful()
    g = custom_gains(result, 5, 11, True)
    # agent 2's slot (the others 1, 3, 7, 9): true type 5 reporting 9 -> median 7: loss 2;
    # true type 0 reporting 4 -> median 4 instead of 3: loss 1
    assert g[2, 5, 9] == -2.0 and g[2, 0, 4] == -1.0 and g[2, 0, 2] == 0.0


@pytest.mark.parametrize("anonymous", [False, True])
def test_median_rule_truthful_in_dominant_strategy_for_three_agents(anonymous):
    mech = CustomMechanism(median_rule, distance_utility, types=range(5), anonymous=anonymous)
    result = audit(mech, n=3, profiles="all")
    # every profile: a lie never moves the median of three towards the liar; some lie (e.g. the
    # lowest agent reporting lower, or any agent repeating the median's side) changes nothing: max
    # gain 0
    assert result.max_gain == 0.0 and result.is_truthful()
    assert set(result.worst_case) >= {"agent", "true_type", "lie", "gain", "profile"}


def plain_ex_post_gains(rule, utility, profile, types):
    """gains[i][x] by plain recomputation of a deterministic rule's outcome."""

    def value(i, t, reports):
        return utility(t, rule(tuple(reports)))

    return [
        [value(i, t, deviate(profile, i, x)) - value(i, t, profile) for x in types]
        for i, t in enumerate(profile)
    ]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(profile=dpgames.testing.profiles(range(7), 3))
def test_median_and_rounded_mean_on_any_profile(profile):
    # the median of three never rewards a lie (max gain exactly 0); the rounded mean's gains are
    # those of a plain recomputation, and its worst case is one of them
    median = audit(CustomMechanism(median_rule, distance_utility, types=range(7)), list(profile))
    assert median.max_gain == 0.0
    want = np.array(
        plain_ex_post_gains(rounded_mean, distance_utility, profile, range(7)), dtype=float
    )
    got = audit(CustomMechanism(rounded_mean, distance_utility, types=range(7)), list(profile))
    np.testing.assert_allclose(custom_gains(got, 3, 7, False), want, rtol=0, atol=TOL)
    w = got.worst_case
    assert want[w["agent"], w["lie"]] == pytest.approx(got.max_gain, abs=TOL)
    assert w["lie"] != profile[w["agent"]]  # a lie, never the truth


def test_the_three_forms_of_a_law_agree():
    # one outcome, {outcome: 1}, and a FiniteDistribution with the outcome as label
    def as_dict(reports):
        return {median_rule(reports): 1.0}

    def as_distribution(reports):  # with an outcome of probability 0, which must not matter
        o = median_rule(reports)
        return FiniteDistribution.from_probabilities([1.0, 0.0], outcomes=[o, o + 100])

    profile = [3, 7, 5, 1, 9]
    base = custom_gains(audit(MEDIAN, profile, true_types="all"), 5, 11, True)
    for rule in (as_dict, as_distribution):
        mech = CustomMechanism(rule, distance_utility, types=range(11))
        np.testing.assert_array_equal(
            custom_gains(audit(mech, profile, true_types="all"), 5, 11, True), base
        )


def test_rule_is_called_once_per_report_tuple():
    # ex post at 5 agents x 11 types: the truthful tuple and 5 x 10 one-agent deviations, all
    # distinct
    calls = []

    def counting_median(reports):
        assert isinstance(reports, tuple)
        calls.append(reports)
        return median_rule(reports)

    mech = CustomMechanism(counting_median, distance_utility, types=range(11))
    audit(mech, [3, 7, 5, 1, 9])
    assert len(calls) == len(set(calls)) == 51
    # over every true type the deviation tuples are the same set plus nothing new (t's truthful
    # tuple is a deviation tuple of the realised profile): still 51 distinct, each called once
    calls.clear()
    audit(
        CustomMechanism(counting_median, distance_utility, types=range(11)),
        [3, 7, 5, 1, 9],
        true_types="all",
    )
    assert len(calls) == len(set(calls)) == 51


def rounded_mean(reports):
    # n = 3: the mean is k/3, never a half, so round() has no tie to break
    return round(sum(reports) / len(reports))


def test_rounded_mean_not_truthful_with_the_exact_gain():
    # Profile (0, 4, 5): sum 9, mean 3, outcome 3.
    # Agent 2 (type 5, utility -2): reporting x gives mean (4 + x) / 3, outcome 5 iff (4 + x) / 3 >=
    # 4.5, i.e. x >= 9.5: x = 10 gives outcome 5, utility 0, GAIN 2; x = 6..8 gives outcome 4 (gain
    # 1). Agent 1 (type 4, utility -1): outcome 4 iff 3.5 <= (5 + x) / 3 < 4.5, i.e. x in {6, 7, 8}:
    # gain 1. Agent 0 (type 0, utility -3): any x > 0 raises the mean: outcome >= 3, gain <= 0 (x =
    # 1: 0). Worst: agent 2, true type 5, lie 10, gain 2 (unique).
    mech = CustomMechanism(rounded_mean, distance_utility, types=range(11))
    result = audit(mech, [0, 4, 5])
    assert result.max_gain == pytest.approx(2.0, abs=1e-12)
    w = result.worst_case
    assert (w["agent"], w["true_type"], w["lie"]) == (2, 5, 10) and w["gain"] == pytest.approx(
        2.0, abs=1e-12
    )
    assert not result.is_truthful(1.9) and result.is_truthful(2.0)
    gains = custom_gains(result, 3, 11, False)
    # agent 1 (type 4, truthful utility -1) reporting x: outcome round((5 + x) / 3) = 2 for x <= 2
    # (gain -1), 3 for x in 3..5 (0), 4 for x in 6..8 (+1), 5 for x >= 9 (0)
    assert gains[1].tolist() == pytest.approx([-1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0], abs=1e-12)


def highest_bidder(reports):
    """Index of the highest report, ties to the lowest index."""
    return max(range(len(reports)), key=lambda i: (reports[i], -i))


def winner_utility(value, winner, agent):
    return value if winner == agent else 0.0


def second_price(reports):
    w = highest_bidder(reports)
    return [
        max(r for j, r in enumerate(reports) if j != w) if i == w else 0.0
        for i in range(len(reports))
    ]


def first_price(reports):
    w = highest_bidder(reports)
    return [reports[i] if i == w else 0.0 for i in range(len(reports))]


VICKREY = CustomMechanism(highest_bidder, winner_utility, types=range(5), payments=second_price)
FIRST_PRICE = CustomMechanism(highest_bidder, winner_utility, types=range(6), payments=first_price)


def test_vickrey_truthful_in_dominant_strategy():
    # Agent i of value v against the others' highest bid b: truthful, she wins iff v beats b (ties
    # to the lower index) and gets v - b >= 0 or 0.  A lie either keeps the result (same price, the
    # price does not depend on her bid) or flips it: winning when truth loses costs b - v >= 0,
    # losing when truth wins gives up v - b >= 0.  Max gain 0 at every profile (a lie that changes
    # nothing).
    result = audit(VICKREY, n=3, profiles="all")
    assert result.max_gain == 0.0 and result.is_truthful()
    # at (1, 3, 3): agent 2 (value 3) loses the tie to agent 1; reporting 4 wins at price 3: gain 0
    ex_post = audit(VICKREY, [1, 3, 3])
    assert custom_gains(ex_post, 3, 5, False)[2].tolist() == [0, 0, 0, 0, 0]
    # agent 1 (value 3) wins at price 3 (utility 0); reporting 0..2 loses: 0; gain 0 everywhere
    assert custom_gains(ex_post, 3, 5, False)[1].tolist() == [0, 0, 0, 0, 0]


def test_first_price_not_truthful_with_the_exact_gain():
    # Profile (1, 4), values 0..5.  Agent 1 (value 4) wins paying 4: utility 0.  Reporting x: x = 0,
    # 1 loses (x = 1 ties and agent 0 wins): 0; x = 2 wins paying 2: gain 2; x = 3: gain 1; x = 5:
    # -1. Agent 0 (value 1) loses: 0; x = 4 ties and wins at 4: -3; x = 5: -4; others 0. Worst:
    # agent 1, true type 4, lie 2, gain 2 (unique).
    result = audit(FIRST_PRICE, [1, 4])
    w = result.worst_case
    assert (w["agent"], w["true_type"], w["lie"], w["gain"]) == (1, 4, 2, 2.0)
    assert custom_gains(result, 2, 6, False).tolist() == [[0, 0, 0, 0, -3, -4], [0, 0, 2, 1, 0, -1]]


def test_first_price_dominant_strategy_audits():
    # Over every profile of 2 agents with values 0..5: agent 0 of value 5 facing a 0 reports 0, ties
    # and wins at price 0: gain 5, the largest possible (no utility exceeds 5, truthful utility >=
    # 0). Agent 1 needs to beat the other strictly: at most 5 - 0 - 1 = 4.  Unique worst: profile
    # (5, 0).
    result = audit(FIRST_PRICE, n=2, profiles="all")
    w = result.worst_case
    assert (w["agent"], w["true_type"], w["lie"], w["gain"]) == (0, 5, 0, 5.0)
    assert tuple(w["profile"]) == (5, 0)
    # random profiles and the adversarial search: never above the exhaustive maximum, and the worst
    # profile each reports re-audits ex post to the same gain
    for kind in (20, "search"):
        found = audit(FIRST_PRICE, n=2, profiles=kind, rng=3)
        assert 0 < found.max_gain <= 5.0
        again = audit(FIRST_PRICE, list(found.worst_case["profile"]))
        assert again.max_gain == found.max_gain
    # The gain at (v0, v1) is v0 - v1 when v0 > v1 (agent 0 bids v1, wins the tie) and max(0, v1 -
    # v0 - 1) otherwise (agent 1 bids v0 + 1): from every profile a one-agent change strictly
    # improves until (5, 0) [gain 5] or (0, 5) [gain 4], the only local maxima.  So a hill climb
    # ends at >= 4.
    assert audit(FIRST_PRICE, n=2, profiles="search", rng=3).max_gain >= 4.0


def interim_utility(agent, value, bid, grid, prior):
    """First price, 2 agents, the other truthful with a value drawn from ``prior``: plain loop."""
    total = 0.0
    for w, p in zip(grid, prior):
        wins = bid > w or (bid == w and agent == 0)  # ties to the lower index
        total += p * ((value - bid) if wins else 0.0)
    return total


def test_first_price_interim_gain_under_a_uniform_prior():
    # Values uniform on {0, 1/5, ..., 1}, 2 agents.  Agent 0 (she wins ties) of value 1 bidding j/5
    # wins iff the other's value is <= j/5: probability (j + 1)/6, utility (j + 1)(1 - j/5)/6 =
    # (j+1)(5-j)/30: 5/30, 8/30, 9/30, 8/30, 5/30 for j = 0..4; truthful (j = 5) gives 0.  Best
    # shading: bid 2/5, interim gain 9/30 = 0.3.  Agent 1 (loses ties) gets j(5 - j)/30 <= 6/30 and
    # lower types less: the worst case is agent 0, true type 1, lie 0.4, gain 0.3.
    k = 5
    grid = [j / k for j in range(k + 1)]
    prior = [1 / (k + 1)] * (k + 1)
    mech = CustomMechanism(highest_bidder, winner_utility, types=grid, payments=first_price)
    result = audit(mech, n=2, prior=dict(zip(grid, prior)))
    assert result.max_gain == pytest.approx(0.3, abs=1e-12)
    w = result.worst_case
    assert (w["agent"], w["true_type"], w["lie"]) == (0, 1.0, 0.4)
    want = np.array(
        [
            [
                [
                    interim_utility(a, v, b, grid, prior) - interim_utility(a, v, v, grid, prior)
                    for b in grid
                ]
                for v in grid
            ]
            for a in range(2)
        ]
    )
    np.testing.assert_allclose(custom_gains(result, 2, k + 1, True), want, rtol=0, atol=1e-12)
    # one prior per agent: the same
    per_agent = audit(mech, n=2, prior=[dict(zip(grid, prior))] * 2)
    assert per_agent.max_gain == pytest.approx(0.3, abs=1e-12)
    # Monte Carlo (samples=): each estimate with a 95% interval; the exact gains above fall inside
    # for (nearly) every entry, and the worst one's interval holds 0.3
    mc = audit(mech, n=2, prior=dict(zip(grid, prior)), samples=4000, rng=1)
    assert not mc.exact
    lo, hi = np.asarray(mc.gains) - mc.half_width, np.asarray(mc.gains) + mc.half_width
    covered = (lo - 1e-12 <= want) & (want <= hi + 1e-12)
    assert covered.mean() >= 0.85
    assert covered[0, k, 2] and mc.worst_case["ci"] is not None


def test_vickrey_bayesian_truthful():
    # dominant-strategy truthful, so interim truthful under any prior
    prior = {v: p for v, p in zip(range(5), [0.1, 0.3, 0.2, 0.25, 0.15])}
    assert audit(VICKREY, n=3, prior=prior).max_gain <= 1e-12


@pytest.mark.slow
def test_sampling_only_rules_against_closed_forms():
    # A deterministic simulator: every draw is the same, so the sampled gains are the exact ones
    # (first price at (1, 4): agent 1 gains 2 by bidding 2) with zero-width intervals.
    def first_price_sim(reports, rng):
        return highest_bidder(reports)

    sim = CustomMechanism(first_price_sim, winner_utility, types=range(6), payments=first_price)
    result = audit(sim, [1, 4], samples=50, rng=0)
    assert np.asarray(result.gains).tolist() == [[0, 0, 0, 0, -3, -4], [0, 0, 2, 1, 0, -1]]
    assert np.all(np.asarray(result.half_width) == 0)
    assert not result.is_truthful() and (result.worst_case["agent"], result.worst_case["lie"]) == (
        1,
        2,
    )

    # Random dictator: the outcome is the report of a uniform agent J.  A lie x of agent i (type t)
    # matters only when J = i: gain -|t - x| / n exactly.  With common random numbers the estimate
    # is
    # -|t - x| times the fraction of draws with J = i; its interval should hold the exact gain, and
    # no lie's lower bound is above 0: "truthful at 95% confidence".
    def random_dictator(reports, rng):
        return reports[int(rng.integers(len(reports)))]

    sim = CustomMechanism(random_dictator, distance_utility, types=range(5))
    profile = [0, 2, 4]
    result = audit(sim, profile, samples=3000, rng=2)
    exact = np.array([[-abs(t - x) / 3 for x in range(5)] for t in profile])
    g, h = np.asarray(result.gains), np.asarray(result.half_width)
    assert ((g - h <= exact + 1e-12) & (exact <= g + h + 1e-12)).mean() >= 0.8
    assert result.is_truthful()
    assert_truthful(sim, profile, samples=3000, rng=2)


# --- 3. assert_truthful
# --------------------------------------------------------------------------------


def test_assert_truthful_passes_on_the_truthful_cases():
    assert_truthful(MEDIAN, [3, 7, 5, 1, 9])
    assert_truthful(MEDIAN, [3, 7, 5, 1, 9], true_types="all")
    assert_truthful(MEDIAN, n=3, profiles="all")
    assert_truthful(VICKREY, n=3, profiles="all")
    assert_truthful(VICKREY, [4, 2, 4])


def test_assert_truthful_plain_callable_form():
    assert_truthful(median_rule, [3, 7, 5, 1, 9], utility=distance_utility, types=range(11))
    assert_truthful(
        highest_bidder, [4, 2, 4], utility=winner_utility, types=range(5), payments=second_price
    )
    with pytest.raises(AssertionError, match=r"agent 2"):
        assert_truthful(rounded_mean, [0, 4, 5], utility=distance_utility, types=range(11))
    with pytest.raises(AssertionError, match=r"agent 1"):
        assert_truthful(
            highest_bidder, [1, 4], utility=winner_utility, types=range(6), payments=first_price
        )


def failure_message(*args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_truthful(*args, **kwargs)
    return str(info.value)


def test_assert_truthful_failure_names_agent_type_lie_gain_and_profile():
    rounded = CustomMechanism(rounded_mean, distance_utility, types=range(11))
    text = failure_message(rounded, [0, 4, 5])
    assert "agent 2" in text and re.search(r"\btrue type 5\b", text) and re.search(r"\b10\b", text)
    assert re.search(r"\b2(\.0+)?\b", text) and re.search(r"[\[(]0, 4, 5[\])]", text)
    assert_truthful(rounded, [0, 4, 5], tol=2.0)  # within tol: passes

    text = failure_message(FIRST_PRICE, n=2, profiles="all")
    assert (
        "agent 0" in text
        and re.search(r"\btrue type 5\b", text)
        and re.search(r"[\[(]5, 0[\])]", text)
    )
    assert re.search(r"\b5(\.0+)?\b", text)

    grid = [j / 5 for j in range(6)]
    mech = CustomMechanism(highest_bidder, winner_utility, types=grid, payments=first_price)
    text = failure_message(mech, n=2, prior={v: 1 / 6 for v in grid})
    assert "agent 0" in text and "0.3" in text and "0.4" in text
    assert_truthful(mech, n=2, prior={v: 1 / 6 for v in grid}, tol=0.31)
