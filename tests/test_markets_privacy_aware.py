"""Privacy-aware truthfulness audit of the existing mechanisms (oracles: the auction's own price law
recomputed on every deviated bid vector with plain loops; the DP guarantee as a bound)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dpgames
from dpgames.markets.privacy_aware import privacy_aware_audit, privacy_aware_custom_audit
from dpgames.mechanisms import AuctionPricing, facility_location_environment, line_graph
from dpgames.validation import ValidationError

ENV = facility_location_environment(line_graph(6), k=2)
PROFILE = ENV.profile(ENV.types[[0, 0, 0, 1, 3, 5]])
EM = dpgames.ObjectiveExponentialMechanism(ENV, epsilon=1.0)
CM = dpgames.CommitmentMechanism(ENV)
HK = dpgames.HuangKannan(ENV, beta=0.5)


@pytest.mark.parametrize(
    "mech", [EM, CM, dpgames.NSTMix(EM, CM, 0.05), HK], ids=lambda m: type(m).__name__
)
def test_zero_valuation_is_the_standard_audit(mech):
    audit = privacy_aware_audit(mech, PROFILE, 0.0)
    assert np.array_equal(audit.gains, audit.standard)
    u = mech.deviation_utilities(PROFILE)
    assert np.allclose(
        audit.standard, u - u[np.arange(u.shape[0]), PROFILE.classes][:, None], atol=0
    )
    assert not audit.breaks and not audit.restores


def test_commitment_mechanism_reveals_nothing():
    audit = privacy_aware_audit(CM, PROFILE, 3.0)
    assert (audit.privacy_cost == 0).all()


@pytest.mark.parametrize("mech", [EM, HK], ids=lambda m: type(m).__name__)
def test_privacy_cost_within_the_dp_guarantee(mech):
    v = 2.0
    audit = privacy_aware_audit(mech, PROFILE, v)
    assert (audit.privacy_cost >= 0).all()
    assert (audit.privacy_cost <= v * mech.guarantee.epsilon * (1 + 1e-12)).all()


def test_auction_privacy_costs_against_the_price_law_recomputed():
    auction = dpgames.DigitalGoodsAuction(1.0, alpha=0.1)
    mech = AuctionPricing(auction, 6)
    env = mech.environment
    labels = env.types[[0, 2, 4, 6, 9, 9]]
    profile = env.profile(labels)
    v = 0.7
    audit = privacy_aware_audit(mech, profile, v)
    for d, agent in enumerate(profile.first_agent):
        laws = []
        for x in env.types:
            bids = np.array(labels, dtype=float)
            bids[agent] = x
            laws.append(auction.price_distribution(bids).probabilities)
        laws = np.array(laws)
        for x in range(len(env.types)):
            cost = 0.0
            for s in range(laws.shape[1]):
                logs = [math.log(laws[y, s]) for y in range(len(env.types))]
                cost += laws[x, s] * (max(logs) - min(logs))
            assert audit.privacy_cost[d, x] == pytest.approx(v * cost, rel=1e-9, abs=1e-15)


def test_privacy_awareness_breaks_huang_kannan():
    # with payments the lie never pays (exactly truthful); a privacy-aware agent may lie to hide
    low, high = privacy_aware_audit(HK, PROFILE, 0.1), privacy_aware_audit(HK, PROFILE, 5.0)
    assert low.max_standard_gain <= 1e-12 and high.max_standard_gain <= 1e-12
    assert high.max_gain > 0 and high.breaks
    agent, t, lie, gain = high.breaks[0]
    d = list(high.agents).index(agent)
    assert gain == pytest.approx(
        high.standard[d, lie] - (high.privacy_cost[d, lie] - high.privacy_cost[d, t])
    )


def test_bad_inputs():
    with pytest.raises(ValidationError, match="valuation"):
        privacy_aware_audit(EM, PROFILE, -1.0)
    with pytest.raises(ValidationError, match="valuation"):
        privacy_aware_audit(EM, PROFILE, [1.0, 2.0])
    with pytest.raises(ValidationError, match="mechanism"):
        privacy_aware_audit(object(), PROFILE, 1.0)
    with pytest.raises(ValidationError, match="profile"):
        privacy_aware_audit(EM, [0, 1], 1.0)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    v=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True), st.lists(st.floats(-1, 10), max_size=8)
    )
)
def test_valuations_clean_error_or_consistent_audit(v):
    try:
        audit = privacy_aware_audit(EM, PROFILE, v)
    except ValidationError as e:
        assert e.field == "valuation"
        return
    assert np.isfinite(audit.gains).all() and (audit.privacy_cost >= 0).all()
    assert audit.max_gain <= audit.max_standard_gain + float(np.max(audit.privacy_cost)) + 1e-12


# ---- users' own mechanisms
# ----------------------------------------------------------------------------

Q = [0.2, 0.5, 0.7, 0.8]  # Pr[outcome "A"] when 0, 1, 2 or 3 agents report type 1


def _vote(anonymous=False):
    def rule(reports):
        q = Q[sum(reports)]
        return {"A": q, "B": 1 - q}

    def utility(t, o):
        return 1.0 if (o == "A") == (t == 1) else 0.0

    return dpgames.CustomMechanism(rule, utility, [0, 1], anonymous=anonymous)


def test_custom_audit_against_the_hand_computation():
    v = 0.8
    audit = privacy_aware_custom_audit(_vote(), [1, 0], v)
    # agent 0 (type 1), the other reports 0: report 1 -> Pr[A] = .5, report 0 -> Pr[A] = .2
    loss_a, loss_b = abs(math.log(0.5 / 0.2)), abs(math.log(0.5 / 0.8))
    cost = {x: v * (p * loss_a + (1 - p) * loss_b) for x, p in ((1, 0.5), (0, 0.2))}
    assert audit.privacy_cost[0, 1] == pytest.approx(cost[1], rel=1e-12)
    assert audit.privacy_cost[0, 0] == pytest.approx(cost[0], rel=1e-12)
    assert audit.gains[0, 0] == pytest.approx((0.2 - 0.5) - (cost[0] - cost[1]), rel=1e-12)
    # agent 1 (type 0), the other reports 1: report 0 -> Pr[A] = .5, report 1 -> Pr[A] = .7; utility
    # Pr[B]
    loss_a, loss_b = abs(math.log(0.7 / 0.5)), abs(math.log(0.3 / 0.5))
    c0, c1 = (v * (p * loss_a + (1 - p) * loss_b) for p in (0.5, 0.7))
    assert audit.gains[1, 1] == pytest.approx((0.3 - 0.5) - (c1 - c0), rel=1e-12)


def test_custom_anonymous_audit_is_one_agent_per_type():
    full = privacy_aware_custom_audit(_vote(), [1, 0, 1], 0.5)
    anon = privacy_aware_custom_audit(_vote(anonymous=True), [1, 0, 1], 0.5)
    assert anon.agents.tolist() == [1, 0]  # first agent of type 0, of type 1
    assert np.allclose(anon.gains, full.gains[[1, 0]])


def test_deterministic_rules_have_unbounded_privacy_costs():
    mech = dpgames.CustomMechanism(lambda r: sum(r), lambda t, o: 0.0, [0, 1])
    with pytest.raises(ValidationError, match="unbounded"):
        privacy_aware_custom_audit(mech, [0, 1], 1.0)
    with pytest.raises(ValidationError, match="mechanism"):
        privacy_aware_custom_audit(EM, [0, 1], 1.0)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    profile=st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=3),
    v=st.one_of(st.floats(-1, 5), st.lists(st.floats(-1, 5), min_size=2, max_size=2)),
)
def test_custom_audit_clean_error_or_consistent(profile, v):
    try:
        audit = privacy_aware_custom_audit(_vote(), profile, v)
    except ValidationError as e:
        assert e.field in ("valuation", "profile")
        return
    assert (audit.privacy_cost >= 0).all() and np.isfinite(audit.gains).all()
    rows = np.arange(audit.agents.size)
    assert (audit.gains[rows, audit.types] == 0).all()
