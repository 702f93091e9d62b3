"""Exact audits at the edges of the float range, against an mpmath oracle at 60 digits.

The oracles recompute the law after every change from scratch, in plain loops with mpmath numbers
(no log-space tricks, no cancellation-free rearrangements): independent of the library's
segment trees and log-sum-exp accumulations."""

import itertools
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames import DigitalGoodsAuction, misreport_audit
from dpgames.analysis.auction_privacy import single_bid_privacy_audit

mp.mp.dps = 60
EPSILONS = [1e-6, 1e-3, 1.0, 300.0, 1000.0, 1e4, 1e6]


def grid_log_law(prices, bids, eps):
    k = mp.mpf(eps) / (2 * mp.mpf(max(prices)))
    scores = [k * mp.mpf(p) * sum(1 for b in bids if b >= p) for p in prices]
    log_z = mp.log(mp.fsum(mp.exp(s) for s in scores))
    return [s - log_z for s in scores]


def grid_utility(prices, bids, eps, value, report):
    log_p = grid_log_law(prices, bids, eps)
    return mp.fsum(
        mp.exp(lp) * (mp.mpf(value) - mp.mpf(p)) for lp, p in zip(log_p, prices) if report >= p
    )


def continuous_utility(bids, eps, value, report):
    """E[(v - p) 1{p <= report}] for the density exp(k p #{b >= p}) on [0, 1], integrated in closed
    form."""
    k = mp.mpf(eps) / 2
    cuts = sorted(set([0.0, 1.0] + [b for b in bids if 0 < b < 1]))
    total, part = mp.mpf(0), mp.mpf(0)
    v = mp.mpf(value)
    for lo, hi in itertools.pairwise(cuts):
        r = k * sum(1 for b in bids if b >= hi)  # the count on (lo, hi]
        a, b = mp.mpf(lo), mp.mpf(hi)

        def mass(x, y, r=r):
            return (mp.exp(r * y) - mp.exp(r * x)) / r if r else y - x

        def first(x, y, r=r):  # integral of p e^{r p}
            if not r:
                return (y * y - x * x) / 2
            return (mp.exp(r * y) * (y / r - 1 / r**2)) - (mp.exp(r * x) * (x / r - 1 / r**2))

        total += mass(a, b)
        top = min(b, mp.mpf(report))
        if top > a:
            part += v * mass(a, top) - first(a, top)
    return part / total


def close(actual, expected, rel=1e-9, abs_=1e-13):
    expected = float(expected)
    return abs(actual - expected) <= rel * abs(expected) + abs_


@pytest.mark.parametrize("eps", EPSILONS)
def test_grid_gains_match_mpmath_for_every_eps(eps):
    values = [0.95, 0.8, 0.8, 0.55, 0.5, 0.3, 0.1]
    prices = [j / 10 for j in range(1, 11)]
    lies = [0.0] + prices
    audit = misreport_audit(DigitalGoodsAuction(eps, alpha=0.1), values, lies=lies, keep_gains=True)
    assert np.isfinite(audit.gains).all()
    for i, v in enumerate(values):
        truthful = grid_utility(prices, values, eps, v, v)
        for c, lie in enumerate(lies):
            moved = list(values)
            moved[i] = lie
            expected = grid_utility(prices, moved, eps, v, lie) - truthful
            assert close(audit.gains[i, c], expected), (i, lie, audit.gains[i, c], expected)
    assert audit.max_gain <= 2 * eps + 1e-12
    assert (audit.best_gain <= audit.monotone_bound + 1e-12).all()


@pytest.mark.parametrize("eps", [1e-6, 1.0, 700.0, 1e4, 1e6])
def test_continuous_gains_match_mpmath(eps):
    values = [0.9, 0.62, 0.6, 0.35, 0.1]
    lies = [0.0, 0.3, 0.61, 0.8, 1.0]
    audit = misreport_audit(
        DigitalGoodsAuction(eps, prices="continuous"), values, lies=lies, keep_gains=True
    )
    assert np.isfinite(audit.gains).all()
    for i, v in enumerate(values):
        truthful = continuous_utility(values, eps, v, v)
        for c, lie in enumerate(lies):
            moved = list(values)
            moved[i] = lie
            expected = continuous_utility(moved, eps, v, lie) - truthful
            # k p is rounded once in floats: relative 1e-16 of k, i.e. ~1e-16 eps in each exponent
            assert close(audit.gains[i, c], expected, abs_=1e-13 + 1e-15 * eps), (
                i,
                lie,
                audit.gains[i, c],
                expected,
            )


@pytest.mark.parametrize("eps", EPSILONS)
def test_grid_privacy_loss_matches_mpmath(eps):
    bids = np.array([0.9, 0.7, 0.7, 0.4, 0.2])
    prices = [j / 5 for j in range(1, 6)]
    audit = single_bid_privacy_audit(DigitalGoodsAuction(eps, alpha=0.2), bids)
    base = grid_log_law(prices, bids, eps)
    worst = mp.mpf(0)
    for i in range(bids.size):
        for r in [0.0] + prices:
            moved = bids.copy()
            moved[i] = r
            other = grid_log_law(prices, moved, eps)
            worst = max(worst, max(abs(a - b) for a, b in zip(base, other)))
    assert 0 <= audit.max_loss <= eps / 2 * (1 + 1e-12)
    assert close(audit.max_loss, worst, rel=1e-12, abs_=1e-14)


@pytest.mark.parametrize("eps", [1e-6, 1.0, 1e3, 1e6])
def test_continuous_privacy_loss_is_within_the_guarantee(eps):
    bids = np.array([0.9, 0.62, 0.6, 0.35, 0.1])
    audit = single_bid_privacy_audit(
        DigitalGoodsAuction(eps, prices="continuous"), bids, np.linspace(0, 1, 11)
    )
    assert 0 <= audit.max_loss <= eps / 2 * (1 + 1e-12)
    # Moving the top bid to 0 takes the buyer away at every price in (0, 0.9]: the density there
    # drops by e^{-k p} up to p = 0.9 against the normaliser, so the loss is a sizeable part of eps
    # / 2.
    assert audit.max_loss >= 0.1 * eps / 2


def test_the_scenario_at_huge_eps_reports_true_figures():
    from dpgames.scenarios.loader import Scenario

    for eps in (300.0, 1000.0, 1e5):
        result = (
            Scenario.from_file(
                Path(__file__).resolve().parent.parent / "scenarios" / "small_exact.toml"
            )
            .with_overrides({"mechanism.epsilon": eps})
            .run()
        )
        m = result.metrics
        assert 0 <= m["max_privacy_loss"] <= eps / 2 * (1 + 1e-12)
        assert math.isfinite(m["max_misreport_gain"]) and m["max_misreport_gain"] <= 2 * eps
        assert m["gains_within_bounds"] is True


# --- Huang & Kannan's payments
# ---------------------------------------------------------------------


def hk_payments_oracle(valuations, beta):
    """p_i = E_P[v_i] - (1/beta) (ln Z - ln Z_{-i}), every sum in 60-digit mpmath."""
    b = mp.mpf(beta)
    n, k = len(valuations), len(valuations[0])
    total = [mp.fsum(mp.mpf(valuations[i][o]) for i in range(n)) for o in range(k)]
    z = mp.fsum(mp.exp(b * t) for t in total)
    law = [mp.exp(b * t) / z for t in total]
    out = []
    for i in range(n):
        z_without = mp.fsum(mp.exp(b * (total[o] - valuations[i][o])) for o in range(k))
        mean = mp.fsum(law[o] * valuations[i][o] for o in range(k))
        out.append(mean - (mp.log(z) - mp.log(z_without)) / b)
    return out


@pytest.mark.parametrize("beta", [1e-12, 1e-10, 1e-6, 1e-2, 1.0, 30.0, 1e3, 1e6])
@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_huang_kannan_payments_match_mpmath(beta, scale):
    from dpgames.mechanisms.huang_kannan import huang_kannan_payments

    rng = np.random.default_rng(7)
    v = rng.integers(0, 5, size=(4, 6)) * scale / 4
    got = huang_kannan_payments(v, beta / scale)
    want = hk_payments_oracle(v.tolist(), beta / scale)
    for g, w in zip(got, want):
        # relative precision whatever beta (the payment ~ beta Var / 2 is tiny as beta -> 0)
        assert abs(g - float(w)) <= 1e-9 * abs(float(w)) + 1e-15 * scale * min(1.0, beta), (g, w)


# --- environment audits (tilted laws of deviations.py) at extreme eps
# --------------------------------


@pytest.mark.parametrize("eps", [1e-6, 700.0, 1e4, 1e6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_environment_gains_at_extreme_eps_match_brute_force(eps, seed):
    """The exponential mechanism over environments, every (class, true type, lie), against
    recomputing the law with plain loops (math.exp of scores relative to the top: exact to double
    precision)."""
    from dpgames.analysis.truthfulness import truthfulness_audit
    from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
    from instances import environment_instance, first_of_each_class
    from truthfulness_oracles import brute_mix

    env, agents, _ = environment_instance(seed)
    if not env.sensitivity > 0:
        pytest.skip("objective independent of the reports")
    profile = env.profile(env.types[agents])
    audit = truthfulness_audit(
        ObjectiveExponentialMechanism(env, eps, reactions="free"), profile, true_types="all"
    )
    assert np.isfinite(audit.gains).all()
    want = first_of_each_class(brute_mix(env, agents, eps, 0.0, False), profile)
    scale = float(np.max(np.abs(env.utility))) or 1.0
    # Scores are sums of floats, rounded at ~1e-16 of their size in either computation; the law
    # multiplies that by eps / (2 Delta): a conditioning of the problem itself, ~1e-16 eps.
    np.testing.assert_allclose(audit.gains, want, atol=scale * (1e-12 + 1e-15 * eps), rtol=1e-9)


# --- the range functionals themselves
# --------------------------------------------------------------


@pytest.mark.parametrize("eps", [1e-6, 3.0, 1e5])
@pytest.mark.parametrize("prices", ["grid", "continuous"])
def test_both_range_strategies_agree_and_match_plain_sums(eps, prices):
    """log_between (prefix/suffix differences, exact fallback) = log_range on (min, max] pairs, for
    bids at cell boundaries, ties, 0 and 1 and reports anywhere (even outside [0, 1]); on the grid
    both equal a plain sum over the prices written in the test."""
    from dpgames.mechanisms.price_laws import FUNCTIONALS

    auction = (
        DigitalGoodsAuction(eps, alpha=0.05)
        if prices == "grid"
        else DigitalGoodsAuction(eps, prices="continuous")
    )
    for bids in [
        np.random.default_rng(1).uniform(size=200),
        np.array([0.0, 0.2, 0.2, 0.5, 1.0, 1.0]),
    ]:
        law = auction.price_law(bids)
        u = np.unique(np.r_[bids, 0.0, 0.37])
        r = np.r_[np.linspace(0, 1, 23), bids[:3], -0.5, 1.5]
        fast = law.log_between(u, r)
        slow = law.log_range(np.minimum(u[:, None], r[None, :]), np.maximum(u[:, None], r[None, :]))
        assert np.array_equal(np.isfinite(fast), np.isfinite(slow))
        # a sum held as a logarithm of size up to ~k carries ~1e-16 k of relative error in either
        # method
        assert np.allclose(
            fast[np.isfinite(slow)],
            slow[np.isfinite(slow)],
            rtol=1e-14,
            atol=1e-12 + 1e-15 * law.scale,
        )
        if prices == "grid":
            p, logp, k = law.prices, law.cell_log_mass, law.scale
            for lo, hi in [(0.1, 0.6), (-1.0, 0.35), (0.5, 2.0), (0.3, 0.3)]:
                inside = (p > lo) & (p <= hi)
                got = law.log_range(lo, hi)
                for row, (_, tilt, moment) in enumerate(FUNCTIONALS):
                    terms = [
                        lp + tilt * k * x + (math.log(x) if moment else 0.0)
                        for lp, x in zip(logp[inside], p[inside])
                    ]
                    want = float(mp.log(mp.fsum(mp.exp(t) for t in terms))) if terms else -math.inf
                    assert (
                        got[row] == pytest.approx(want, abs=1e-9)
                        if terms
                        else got[row] == -math.inf
                    )


# --- Huang & Kannan end to end at extreme beta
# ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("beta", [1e-12, 1e-10, 1e-6, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("name", ["huang_kannan_public_project", "huang_kannan_facility"])
def test_huang_kannan_is_truthful_and_rational_at_every_beta(name, beta):
    """Exactly truthful and individually rational (theorems): the exact audit must say so at every
    beta (before the stable payments it reported "not truthful" at beta <= 1e-10)."""
    from dpgames.scenarios.loader import Scenario

    path = Path(__file__).resolve().parent.parent / "scenarios" / f"{name}.toml"
    # invariants checked
    m = Scenario.from_file(path).with_overrides({"mechanism.beta": beta}).run().metrics
    assert m["truthful"] is True and m["individually_rational"] is True
    assert m["max_gain"] <= 1e-9 * (1 + abs(m["optimum"]))
    assert m["min_utility"] >= -1e-9


# --- property tests: any input gives a clean error or figures within the invariants
# ----------------


_anything = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(10**400), 10**400)
    | st.text(max_size=3)
    | st.none()
    | st.booleans()
    | st.lists(st.floats(-2, 2), max_size=3)
)
_eps = st.floats(5e-324, 1e6) | st.sampled_from([1e-6, 700.0, 1e4]) | _anything


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    eps=_eps,
    prices=st.sampled_from(["grid", "continuous", [0.25, 0.5, 1.0]]) | _anything,
    alpha=st.none() | st.floats(1e-3, 1.0) | _anything,
    values=st.lists(st.floats(0, 1), min_size=1, max_size=6) | _anything,
    lies=st.none() | st.lists(st.floats(0, 1), min_size=1, max_size=4) | _anything,
)
def test_property_auction_audits_clean_error_or_true_figures(eps, prices, alpha, values, lies):
    try:
        auction = DigitalGoodsAuction(eps, prices, alpha)
        audit = misreport_audit(auction, values, lies=lies)
        privacy = single_bid_privacy_audit(auction, values, lies)
        utilities = auction.expected_utilities(values)
    except ValueError as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return
    g = auction.guarantee.epsilon
    assert np.isfinite(audit.best_gain).all() and np.isfinite(utilities).all()
    assert audit.max_gain <= min(2 * g, 1.0) + 1e-12
    assert (audit.best_gain <= audit.monotone_bound + 1e-12).all()
    assert 0 <= privacy.max_loss <= g * (1 + 1e-12) + 1e-12
    assert ((utilities >= -1) & (utilities <= 1)).all()


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.lists(st.floats(-1e12, 1e12), min_size=3, max_size=3), min_size=1, max_size=4
    )
    | _anything,
    beta=st.floats(5e-324, 1e6) | _anything,
)
def test_property_huang_kannan_payments_clean_error_or_finite(values, beta):
    from dpgames.mechanisms.huang_kannan import huang_kannan_payments

    try:
        p = huang_kannan_payments(values, beta)
    except ValueError as exc:
        assert str(exc)
        return
    v = np.asarray(values, dtype=float)
    assert np.isfinite(p).all()
    # 0 <= p_i <= E_P[v_i] - E_{P_-i}[v_i] <= the spread of v_i (regularised VCG), up to rounding
    spread = v.max(axis=1) - v.min(axis=1)
    assert (p >= -1e-12 * (1 + np.abs(v).max())).all() and (p <= spread * (1 + 1e-9) + 1e-9).all()


@pytest.mark.slow
def test_huang_kannan_valid_extremes_found_by_the_fuzzer():
    """E1: beta = 3.7e5 with 7 agents (beta W ~ 1e7); E2: costs and values x 1e10.  Both are valid
    input: the run must pass its invariants (no internal error) and the largest gain stay at
    rounding level."""
    from dpgames.scenarios.loader import Scenario

    root = Path(__file__).resolve().parent.parent / "scenarios"
    m = (
        Scenario.from_file(root / "huang_kannan_facility.toml")
        .with_overrides({"population.n": 7, "mechanism.beta": 371580.05485050124})
        .run()
        .metrics
    )
    assert m["max_gain"] <= 1e-9 * (1 + abs(m["optimum"]))
    # the verdict allows float rounding
    assert m["truthful"] is True and m["individually_rational"] is True
    scenario = Scenario.from_file(root / "huang_kannan_public_project.toml")
    env = scenario.data["environment"]
    overrides = {
        "environment.cost": [c * 1e10 for c in env["cost"]],
        "mechanism.beta": 26.210305848421367,
    }
    overrides.update(
        {f"environment.valuations.{t}": [x * 1e10 for x in v] for t, v in env["valuations"].items()}
    )
    m = scenario.with_overrides(overrides).run().metrics
    assert m["truthful"] is True and m["revenue"] >= -1e-12 * m["optimum"]


# --- the linear prefix functionals of the rank-one audits
# ------------------------------------------


@pytest.mark.parametrize("eps", [1e-6, 0.1, 2.0, 5.9])
@pytest.mark.parametrize("prices", ["grid", "continuous"])
def test_linear_prefix_matches_the_log_range_functionals_and_plain_sums(eps, prices):
    """E[f(p); p <= x] for f = 1, p, e^{kp} - 1, p (e^{kp} - 1), 1 - e^{-kp}, at bids, just beside
    them, 0, 1 and outside [0, 1]: equal to the segment tree's log-space functionals (independent
    code) to ~1e-15 absolute, and on the grid to a plain sum over the prices written here."""
    from dpgames.mechanisms.price_laws import prefix_sums

    auction = (
        DigitalGoodsAuction(eps, alpha=0.05)
        if prices == "grid"
        else DigitalGoodsAuction(eps, prices="continuous")
    )
    bids = np.r_[np.random.default_rng(2).uniform(size=200), 0.0, 0.0, 0.5, 1.0, 1.0]
    law = auction.price_law(bids)
    x = np.r_[np.linspace(-0.2, 1.2, 29), bids, np.nextafter(bids, 2.0), np.nextafter(bids, -1.0)]
    got = law.linear_prefix(x)
    logs = np.exp(law.log_range(-1.0, x))
    want = np.stack([logs[0], logs[1], logs[2] - logs[0], logs[3] - logs[1], logs[0] - logs[4]])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    if prices == "grid":
        p, mass, k = law.prices, np.exp(law.cell_log_mass), law.scale
        for point in (0.0, 0.33, 0.5, 1.0):
            inside = p <= point
            terms = [
                mass * 1,
                mass * p,
                mass * np.expm1(k * p),
                mass * p * np.expm1(k * p),
                -mass * np.expm1(-k * p),
            ]
            plain = [math.fsum(t[inside]) for t in terms]
            np.testing.assert_allclose(
                law.linear_prefix(np.array([point]))[:, 0], plain, rtol=1e-14, atol=1e-300
            )
    # two-level prefix sums of integers are exact
    ints = np.random.default_rng(3).integers(0, 1000, size=(2, 1234)).astype(float)
    assert np.array_equal(prefix_sums(ints)[:, 1:], np.cumsum(ints, axis=1))
