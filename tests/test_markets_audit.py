"""Audits of the surveyor's mechanisms: every agent x every lie against re-running the mechanism,
against dpgames' generic CustomMechanism audit, and the release's privacy by the exact audit of its
binned law."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dpgames
from dpgames.markets.audit import as_custom_mechanism, cost_audit, release_law
from dpgames.markets.surveyor import AccuracyAuction, FairQuery
from dpgames.testing import assert_private, assert_truthful
from dpgames.validation import ValidationError


def rerun_gains(mech, costs, lies):
    """Plain oracle: run the mechanism on every deviated profile."""
    costs = np.asarray(costs, dtype=float)
    base = mech.run(costs)
    truth = base.payments - np.where(base.bought, costs * base.epsilon, 0.0)
    gains = np.zeros((costs.size, len(lies)))
    for i in range(costs.size):
        for a, r in enumerate(lies):
            d = costs.copy()
            d[i] = r
            out = mech.run(d)
            gains[i, a] = (
                out.payments[i] - (costs[i] * out.epsilon if out.bought[i] else 0.0) - truth[i]
            )
    return gains


MECHS = [
    AccuracyAuction(0.3, 0.1),
    AccuracyAuction(0.45, 0.2, unbought_share=0.8),
    FairQuery(1.0, 0.7),
    FairQuery(0.35, 2.0),
    FairQuery(100.0, 1.0),
]


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: f"{m.name}")
@pytest.mark.parametrize("seed", range(6))
def test_vectorised_audit_equals_rerunning_the_mechanism(mech, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 10))
    costs = rng.choice([0.0, 0.25, 0.5, 1.0], n) if seed % 2 else rng.uniform(0, 1.5, n)
    lies = np.union1d(np.r_[np.linspace(0, 3, 13), 1e3], costs)
    audit = cost_audit(mech, costs, lies, keep_gains=True)
    oracle = rerun_gains(mech, costs, lies)
    assert np.array_equal(audit.gains, oracle)  # bit for bit, ties included
    assert audit.max_gain == oracle.max() <= 0.0
    assert audit.truthful and audit.individually_rational and audit.within_budget


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: m.name)
def test_the_gain_table_is_not_vacuous(mech):
    costs = [0.05, 0.4, 0.7, 0.1, 0.9, 0.3, 0.6, 0.2]
    audit = cost_audit(mech, costs, [0.0, 0.5, 1e3], keep_gains=True)
    winners = mech.run(costs).bought
    # a winner with positive utility who reports 1e3 loses it all; a loser who reports 0 pays for it
    assert (audit.gains[winners, 2] < 0).any() or (audit.gains[~winners, 0] < 0).any()


@pytest.mark.parametrize(
    "mech", [AccuracyAuction(0.3, 0.1), FairQuery(1.0, 1.0)], ids=lambda m: m.name
)
def test_audit_equals_dpgames_generic_audit_of_the_custom_mechanism(mech):
    grid = [0.0, 0.25, 0.5, 1.0, 2.0]
    profile = [0.25, 0.5, 0.0, 1.0, 0.5, 2.0]
    custom = as_custom_mechanism(mech, grid)
    generic = dpgames.truthfulness_audit(custom, profile)
    ours = cost_audit(mech, profile, grid, keep_gains=True)
    assert np.allclose(generic.gains, ours.gains, rtol=0, atol=1e-15)
    assert_truthful(custom, profile)


@pytest.mark.parametrize(
    "mech", [AccuracyAuction(0.4, 0.1), FairQuery(0.6, 1.0)], ids=lambda m: m.name
)
def test_dominant_strategy_truthful_on_every_profile_of_a_grid(mech):
    custom = as_custom_mechanism(mech, [0.0, 0.3, 0.6, 1.2])
    assert_truthful(custom, n=4, profiles="all")  # 256 profiles x every agent x every lie


def test_generic_audit_catches_a_pay_as_bid_variant():
    # control: paying each winner her own report (first price) is not truthful: overbidding pays
    def rule(reports):
        out = FairQuery(1.0, 1.0).run(np.array(reports))
        return tuple(out.bought.tolist()), tuple((np.array(reports) * out.bought).tolist())

    def utility(t, outcome, agent):
        return outcome[1][agent] - (t if outcome[0][agent] else 0.0)

    custom = dpgames.CustomMechanism(rule, utility, [0.0, 0.1, 0.2, 0.3])
    with pytest.raises(AssertionError, match="not truthful"):
        assert_truthful(custom, [0.0, 0.1, 0.3])


def test_release_is_eps_private_for_bought_and_silent_for_unbought():
    costs = [0.1, 0.9, 0.2, 0.8, 0.3]
    out = AccuracyAuction(0.45, 0.2).run(costs)
    bits = np.array([1, 0, 0, 1, 1])
    edges = np.linspace(-10, 15, 201)

    def law(b):
        return release_law(out, np.array(b), edges)

    bought = int(np.nonzero(out.bought)[0][0])
    unbought = int(np.nonzero(~out.bought)[0][0])

    def flip(i):
        return tuple(np.where(np.arange(5) == i, 1 - bits, bits))

    audit = assert_private(law, [(tuple(bits), flip(bought))], out.epsilon)
    assert audit.epsilon == pytest.approx(out.epsilon, rel=1e-9)  # attained in the tail bins
    with pytest.raises(AssertionError):
        assert_private(law, [(tuple(bits), flip(bought))], out.epsilon * 0.99)
    assert_private(law, [(tuple(bits), flip(unbought))], 0.0)


def test_audit_inputs():
    with pytest.raises(ValidationError, match="mechanism"):
        cost_audit(object(), [1.0])
    with pytest.raises(ValidationError, match="lies"):
        cost_audit(FairQuery(1, 1), [1.0], [-1.0])
    with pytest.raises(ValidationError, match="edges"):
        release_law(FairQuery(1, 1).run([0.1, 0.2]), [0, 1], [1.0, 0.0])


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    costs=st.lists(st.floats(0, 10), min_size=1, max_size=12),
    budget=st.floats(0.01, 20),
    eps=st.floats(0.01, 5),
    alpha=st.floats(0.05, 0.95),
    lies=st.lists(st.one_of(st.floats(0, 20), st.floats(allow_nan=True)), min_size=1, max_size=6),
)
def test_audit_clean_error_or_truthful_ir_feasible(costs, budget, eps, alpha, lies):
    for mech in (FairQuery(budget, eps), AccuracyAuction(alpha, 0.1)):
        try:
            audit = cost_audit(mech, costs, lies, keep_gains=True)
        except ValidationError:
            continue
        assert audit.truthful and audit.individually_rational and audit.within_budget
        assert np.array_equal(audit.gains, rerun_gains(mech, costs, lies))
