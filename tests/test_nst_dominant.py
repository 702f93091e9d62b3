"""The exact dominant-strategy least q of the NST mix (Nissim, Smorodinsky & Tennenholtz 2012; Dwork
& Roth 10.2.3): the maximum over every profile of the per-profile least q.

Oracle: a brute force that enumerates every profile of n agents as an ordered tuple (not a
multiset), and for every agent and lie recomputes the exponential mechanism's law with plain loops
(``truthfulness_oracles``) and the commitment mechanism's mean over the punishing outcomes; the
least q is then ``max G / (G + L)`` by its definition.  The library's enumeration (``least_q`` per
multiset) and its fast method (one softmax per block of the others' multisets) are both checked
against it."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import truthfulness_oracles as oracle
from dpgames.analysis.nst import (
    DOMINANT_LIMIT,
    dominant_affordable,
    dominant_least_q,
    dominant_profile_count,
    least_q,
    nst_report,
)
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing, pricing_environment
from dpgames.validation import ValidationError
from instances import random_environment

SLACK = 1e-12


def brute_gain_loss(env, agents, eps, forced, punishing=None):
    """For every agent i and lie x: (G, L) by recomputation (G under the EM alone, L under M^P
    alone)."""
    delta = oracle.sensitivity(env.objective, env.utility)
    gains = oracle.mix_gains(env.utility, env.objective, agents, eps, delta, 0.0, punishing, forced)
    out = []
    for i, t in enumerate(agents):
        for x in range(env.n_types):
            if x == t:
                continue
            loss = oracle.commitment_utility(
                env.utility, t, t, punishing
            ) - oracle.commitment_utility(env.utility, t, x, punishing)
            out.append((gains[i][x], loss))
    return out


def brute_least_q(pairs, slack=SLACK):
    """max over gaining lies of G / (G + L); None when a gaining lie is never punished; 0 when none
    gains."""
    worst = 0.0
    for g, loss in pairs:
        if g <= slack:
            continue
        if loss <= 0:
            return None
        worst = max(worst, g / (g + loss))
    return worst


def brute_dominant(env, n, eps, forced, punishing=None):
    """The least q over every ordered profile of n agents, and the profiles attaining it."""
    per_profile = {}
    for agents in itertools.product(range(env.n_types), repeat=n):
        per_profile[agents] = brute_least_q(
            brute_gain_loss(env, list(agents), eps, forced, punishing),
            SLACK * max(1.0, env.utility_range),
        )
    if any(q is None for q in per_profile.values()):
        return None, per_profile
    return max(per_profile.values()), per_profile


def test_the_issue_instance_pricing_four_prices_three_agents():
    env = pricing_environment([0.25, 0.5, 0.75, 1.0])  # types: the midpoints 0.125 .. 0.875
    eps = 0.5
    em, cm = ObjectiveExponentialMechanism(env, eps), CommitmentMechanism(env)
    dominant, per_profile = brute_dominant(env, 3, eps, forced=False)
    labels = {tuple(env.type_label(t) for t in p): q for p, q in per_profile.items()}
    # the three figures of the issue, from the brute force (not from the library)
    assert labels[(0.125, 0.625, 0.875)] == pytest.approx(0.2497, abs=5e-5)
    assert labels[(0.875, 0.875, 0.875)] == pytest.approx(0.292, abs=5e-4)
    assert dominant == labels[(0.875, 0.875, 0.875)]
    gamma = oracle.gap(env.utility)
    prices, values = [0.25, 0.5, 0.75, 1.0], [0.125, 0.375, 0.625, 0.875]
    u_max = max(
        max(max(v - p, 0.0) for p in prices) - min(max(v - p, 0.0) for p in prices) for v in values
    )
    theorem = math.expm1(eps) * u_max * 4 / (math.expm1(eps) * u_max * 4 + gamma)
    assert theorem == pytest.approx(0.928, abs=5e-4)
    # the library agrees, by both methods, and names the worst profile
    for method in ("fast", "enumerate"):
        dom = dominant_least_q(em, cm, 3, method)
        assert dom.q == pytest.approx(dominant, rel=1e-9)
        assert dom.profile == (0.875, 0.875, 0.875) and dom.true_type == 0.875
    # the per-profile q is not enough: at 0.2497 a lie still gains at the worst profile (about
    # 0.00187)
    q_profile = labels[(0.125, 0.625, 0.875)]
    worst = [env.n_types - 1] * 3
    gains = oracle.mix_gains(env.utility, env.objective, worst, eps, env.sensitivity, q_profile)
    assert max(max(row) for row in gains) == pytest.approx(0.00187, abs=1e-5)
    report = nst_report(em, cm, env.profile([0.125, 0.625, 0.875]))
    assert report.least.q == pytest.approx(q_profile, rel=1e-9)
    assert report.dominant_least.q == pytest.approx(dominant, rel=1e-9)
    assert report.least.q <= report.dominant_least.q <= report.theorem.q_exact_form


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 3),
    eps=st.sampled_from([0.2, 1.0, 3.0]),
    forced=st.booleans(),
    objective=st.booleans(),
    some_punishing=st.booleans(),
)
def test_fast_and_enumeration_equal_the_brute_force_on_random_environments(
    seed, n, eps, forced, objective, some_punishing
):
    rng = np.random.default_rng(seed)
    env = random_environment(rng, objective=objective)
    if not env.sensitivity > 0:
        return  # the exponential mechanism is refused there (nothing to protect)
    punishing = None
    if some_punishing and env.n_outcomes > 1:
        punishing = sorted(
            rng.choice(
                env.n_outcomes, size=int(rng.integers(1, env.n_outcomes)), replace=False
            ).tolist()
        )
    em = ObjectiveExponentialMechanism(env, eps, reactions="forced" if forced else "free")
    cm = CommitmentMechanism(env, None if punishing is None else np.array(punishing))
    expected, per_profile = brute_dominant(env, n, eps, forced, punishing)
    fast, slow = dominant_least_q(em, cm, n, "fast"), dominant_least_q(em, cm, n, "enumerate")
    for dom in (fast, slow):
        if expected is None:
            assert dom.q is None and dom.exponential_gain > 0 and dom.commitment_loss == 0
            assert "never punishes" in dom.diagnosis
        else:
            assert dom.q == pytest.approx(expected, abs=1e-9)
            assert dom.diagnosis is None
        assert dom.n_profiles == math.comb(n - 1 + env.n_types - 1, env.n_types - 1)
        if dom.profile is not None:
            # the named profile attains it (ties may name another such profile)
            agents = tuple(
                sorted(int(np.flatnonzero(env.types == label)[0]) for label in dom.profile)
            )
            assert len(agents) == n
            at = least_q(
                em, cm, env.profile_from_counts(np.bincount(agents, minlength=env.n_types))
            )
            if expected is not None:
                assert at.q == pytest.approx(expected, abs=1e-9)
            else:
                assert at.q is None
    # at least every per-profile least q (and equal to the largest)
    if expected is not None:
        assert all(q <= expected + 1e-12 for q in per_profile.values())


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_mix_at_the_dominant_q_is_truthful_at_every_profile_and_not_below(eps):
    env = pricing_environment([0.2, 0.4, 0.6, 0.8, 1.0])
    em, cm = ObjectiveExponentialMechanism(env, eps), CommitmentMechanism(env)
    dom = dominant_least_q(em, cm, 3)
    assert 0 < dom.q < 1
    for agents in itertools.product(range(env.n_types), repeat=3):
        gains = oracle.mix_gains(
            env.utility, env.objective, list(agents), eps, env.sensitivity, dom.q
        )
        assert max(max(row) for row in gains) <= 1e-12
    worst = [int(np.flatnonzero(env.types == label)[0]) for label in dom.profile]
    below = oracle.mix_gains(
        env.utility, env.objective, worst, eps, env.sensitivity, dom.q * (1 - 1e-6)
    )
    assert max(max(row) for row in below) > 0


def test_auction_pricing_fast_equals_enumeration():
    # the auction's own price law (McSherry-Talwar through DigitalGoodsAuction), forced and free
    # reactions
    for reactions in ("forced", "free"):
        em = AuctionPricing(DigitalGoodsAuction(0.7, alpha=0.2), 4, reactions=reactions)
        cm = CommitmentMechanism(em.environment)
        fast, slow = dominant_least_q(em, cm, 4, "fast"), dominant_least_q(em, cm, 4, "enumerate")
        assert fast.q == pytest.approx(slow.q, abs=1e-12)


def test_refused_above_the_limit_with_the_count_and_bad_arguments():
    env = pricing_environment(np.arange(1, 41) / 40)
    em, cm = ObjectiveExponentialMechanism(env, 0.5), CommitmentMechanism(env)
    count = dominant_profile_count(30, env.n_types)
    assert count == math.comb(29 + 39, 39)
    assert not dominant_affordable(env, 30)
    with pytest.raises(ValidationError, match=f"{count:,} profiles") as info:
        dominant_least_q(em, cm, 30)
    assert info.value.field == "n_agents"
    # left out, not an error
    assert nst_report(em, cm, env.profile([0.0125] * 30)).dominant_least is None
    for bad in (0, 2.0, "3", True):
        with pytest.raises(ValidationError, match="n_agents"):
            dominant_least_q(em, cm, bad)
    with pytest.raises(ValidationError, match="method"):
        dominant_least_q(em, cm, 2, "guess")
    assert DOMINANT_LIMIT >= 1e6
    auction = AuctionPricing(DigitalGoodsAuction(0.7, alpha=0.2), 4)
    with pytest.raises(ValidationError, match="built for 4 bidders"):
        dominant_least_q(auction, CommitmentMechanism(auction.environment), 3)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    n=st.one_of(
        st.integers(-3, 7), st.floats(allow_nan=True), st.text(max_size=3), st.none(), st.booleans()
    ),
    method=st.one_of(
        st.sampled_from(["fast", "enumerate"]),
        st.text(max_size=5),
        st.none(),
        st.lists(st.integers(), max_size=2),
    ),
)
def test_any_input_gives_a_clean_error_or_a_valid_result(n, method):
    env = pricing_environment([0.5, 1.0])
    em, cm = ObjectiveExponentialMechanism(env, 1.0), CommitmentMechanism(env)
    try:
        dom = dominant_least_q(em, cm, n, method)
    except ValidationError as exc:
        assert exc.field in ("n_agents", "method")
        return
    assert dom.q is None or 0.0 <= dom.q < 1.0
    assert dom.profile is None or (len(dom.profile) == n and dom.true_type in dom.profile)
    assert dom.n_profiles == dominant_profile_count(n, env.n_types)


def test_the_nst_mix_scenario_reports_the_dominant_q_when_affordable():
    from dpgames.scenarios import Scenario

    prices = [0.25, 0.5, 0.75, 1.0]
    data = {
        "kind": "nst_mix",
        "seed": 1,
        "environment": {"type": "pricing"},
        "population": {"distribution": "list", "values": [0.125, 0.625, 0.875]},
        "mechanism": {"epsilon": 0.5, "prices": prices, "reactions": "free"},
    }
    m = Scenario.from_dict(data).run().metrics
    em = AuctionPricing(DigitalGoodsAuction(0.5, prices), 3, reactions="free")
    expected = dominant_least_q(em, CommitmentMechanism(em.environment), 3)
    assert m["q_exact_dominant"] == pytest.approx(expected.q, rel=1e-12)
    assert m["q_exact"] <= m["q_exact_dominant"] <= m["q_theorem_exact"]
    assert "(0.875, 0.875, 0.875)" in m["q_exact_dominant_attained_by"]
    data["population"] = {"distribution": "list", "values": [0.125, 0.625, 0.875] * 400}
    data["mechanism"]["prices"] = [j / 40 for j in range(1, 41)]
    assert Scenario.from_dict(data).run().metrics["q_exact_dominant"].startswith("not computed")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(4, 7),
    eps=st.sampled_from([0.3, 1.0, 4.0]),
    forced=st.booleans(),
)
def test_the_pruned_fast_method_equals_the_enumeration_with_more_agents(seed, n, eps, forced):
    """The fast method prunes (type, lie) pairs by a bound over every law; with more agents the
    extreme others are further from most profiles: still equal to the per-profile enumeration
    (itself checked against the brute force above)."""
    rng = np.random.default_rng(seed)
    env = random_environment(rng, objective=bool(seed % 2))
    if not env.sensitivity > 0:
        return
    em = ObjectiveExponentialMechanism(env, eps, reactions="forced" if forced else "free")
    cm = CommitmentMechanism(env)
    fast, slow = dominant_least_q(em, cm, n, "fast"), dominant_least_q(em, cm, n, "enumerate")
    if slow.q is None:
        assert fast.q is None and fast.exponential_gain == pytest.approx(
            slow.exponential_gain, abs=1e-12
        )
    else:
        assert fast.q == pytest.approx(slow.q, abs=1e-12)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    eps=st.sampled_from([0.2, 1.0, 5.0, 300.0]),
    forced=st.booleans(),
)
def test_the_pair_bound_holds_for_every_law_and_is_attained_by_two_points(seed, eps, forced):
    """The pruning bound: sup over every law P of E_P[r V] / E_P[r] - E_P[u].  Oracle: random laws
    (Dirichlet) never exceed it, and a grid over the two-point laws comes within 1e-3 of it."""
    from dpgames.analysis.nst import _gain_bound, _report_values

    rng = np.random.default_rng(seed)
    env = random_environment(rng)
    if not env.sensitivity > 0:
        return
    em = ObjectiveExponentialMechanism(env, eps, reactions="forced" if forced else "free")
    values = _report_values(em)
    t, x = rng.choice(env.n_types, 2, replace=False)
    bound = _gain_bound(em, values, int(t), int(x))
    log_r = em.scale * (env.score[x] - env.score[t])
    r = np.exp(log_r - log_r.max())
    v, u = values[t, x], values[t, t]

    def f(p):
        return float((p * r * v).sum() / (p * r).sum() - (p * u).sum())

    for p in rng.dirichlet(np.full(env.n_outcomes, 0.3), size=200):
        assert f(p) <= bound + 1e-9
    grid = max(
        f(
            np.where(np.arange(env.n_outcomes) == a, 1 - w, 0)
            + np.where(np.arange(env.n_outcomes) == b, w, 0)
        )
        for a in range(env.n_outcomes)
        for b in range(env.n_outcomes)
        for w in np.linspace(0, 1, 401)
        if (r[a] > 0 or w > 0) and (r[b] > 0 or w < 1)
    )
    assert grid <= bound + 1e-9
    if eps < 100:  # at eps = 300 the tilt is a step: the peak sits within 1e-100 of an endpoint
        assert bound <= grid + 1e-3


def test_the_reports_show_their_figures_in_html():
    """Jupyter tables of the three q: every figure appears in the parsed HTML cells."""
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells = []

        def handle_data(self, data):
            self.cells.append(data)

    def cells(obj):
        parser = Cells()
        parser.feed(obj._repr_html_())
        return parser.cells

    env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    em, cm = ObjectiveExponentialMechanism(env, 0.5), CommitmentMechanism(env)
    report = nst_report(em, cm, env.profile([0.125, 0.625, 0.875]))
    shown = cells(report)
    for figure in (
        report.least.q,
        report.dominant_least.q,
        report.theorem.q_exact_form,
        report.gap.gamma,
    ):
        assert f"{figure:,.6g}" in shown
    dom = cells(report.dominant_least)
    assert f"{report.dominant_least.q:,.6g}" in dom and any(
        "(0.875, 0.875, 0.875)" in c for c in dom
    )
    assert f"{report.least.q:,.6g}" in cells(report.least)
