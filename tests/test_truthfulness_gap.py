"""The commitment mechanism M^P and its gap gamma: hand-worked cases, the gamma = 0 diagnosis, and
brute force on random small environments."""

import numpy as np
import pytest

import truthfulness_oracles as oracle
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import (
    facility_location_environment,
    grid_graph,
    line_graph,
)
from dpgames.mechanisms.pricing import pricing_environment
from instances import random_environment


def test_gap_on_a_three_node_line_with_two_facilities_by_hand():
    # Outcomes {0,1}, {0,2}, {1,2}.  Type 0 reporting 1 is forced to node 1 when {0,1} opens (loss
    # 1) and nowhere else; type 0 reporting 2 loses 2 at {0,2}; every adjacent pair is separated by
    # 1.
    env = facility_location_environment(line_graph(3), k=2)
    cm = CommitmentMechanism(env)
    g = cm.gap()
    assert g.gamma == 1.0 and (g.true_label, g.lie_label) == (0, 1)
    assert env.outcomes[g.outcome].tolist() == [0, 1] and g.diagnosis is None
    expected_loss = np.array([[0, 1 / 3, 4 / 3], [1 / 3, 0, 1 / 3], [4 / 3, 1, 0]])
    np.testing.assert_allclose(cm.forced_loss(np.arange(3)), expected_loss, atol=1e-15)


def test_gap_on_pricing_with_midpoint_types_is_half_the_step():
    # Prices 0.5 and 1, values 0.25 and 0.75: the price 0.5 separates them by 0.25 either way.
    env = pricing_environment([0.5, 1.0])
    assert env.types.tolist() == [0.25, 0.75]
    g = CommitmentMechanism(env).gap()
    assert g.gamma == pytest.approx(0.25) and env.outcomes[g.outcome] == 0.5
    ten = CommitmentMechanism(pricing_environment(np.arange(1, 11) / 10)).gap()
    assert ten.gamma == pytest.approx(0.05)


def test_gamma_zero_when_a_value_sits_on_a_price():
    # Value 0.5 is indifferent at price 0.5 and value 0.75 buys there: they never lose by swapping.
    env = pricing_environment([0.5, 1.0], types=[0.5, 0.75])
    g = CommitmentMechanism(env).gap()
    assert g.gamma == 0.0 and g.outcome is None
    assert "types 0.5 and 0.75 are never told apart by the punishing outcomes" in g.diagnosis
    assert "no q < 1" in g.diagnosis


def test_gamma_zero_with_one_facility_there_is_nothing_to_force():
    g = CommitmentMechanism(facility_location_environment(grid_graph(3, 3), k=1)).gap()
    assert g.gamma == 0.0 and "never told apart" in g.diagnosis


def test_a_punishing_set_that_misses_the_separating_outcomes():
    # Only {1,2} punishes: types 0 and 1 both use node 1 there.
    env = facility_location_environment(line_graph(3), k=2)
    g = CommitmentMechanism(env, punishing=[2]).gap()
    assert g.gamma == 0.0 and {g.true_label, g.lie_label} == {0, 1} and g.n_punishing == 1


@pytest.mark.parametrize("seed", range(12))
def test_gap_and_forced_utilities_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    env = random_environment(rng)
    punishing = (
        None if seed % 3 else sorted(rng.choice(env.n_outcomes, size=2, replace=False).tolist())
    )
    cm = CommitmentMechanism(env, punishing)
    g = cm.gap()
    assert g.gamma == pytest.approx(oracle.gap(env.utility, punishing), abs=1e-12)
    u = env.utility
    outcomes = range(env.n_outcomes) if punishing is None else punishing
    t, x = g.true_type, g.lie
    attained = max(
        u[t][s][oracle.best_reaction(u, t, s)] - u[t][s][oracle.best_reaction(u, x, s)]
        for s in outcomes
    )
    assert t != x and attained == pytest.approx(g.gamma, abs=1e-12)
    types = np.arange(env.n_types)
    expected = [[oracle.commitment_utility(u, t, x, punishing) for x in types] for t in types]
    np.testing.assert_allclose(cm.forced_utility(types), expected, atol=1e-12)
    loss = cm.forced_loss(types)
    assert (loss >= 0).all()
    np.testing.assert_allclose(loss, np.diag(expected)[:, None] - np.array(expected), atol=1e-12)


def test_commitment_law_is_uniform_on_the_punishing_set_and_forces_reactions():
    env = facility_location_environment(line_graph(4), k=2)
    cm = CommitmentMechanism(env, punishing=[0, 5])
    np.testing.assert_allclose(cm.distribution().probabilities, [0.5, 0, 0, 0, 0, 0.5])
    profile = env.profile([0, 3, 3])
    draws = {cm.run(profile, rng=s).outcome for s in range(40)}
    assert draws == {0, 5}
    d = cm.run(profile, rng=1)
    assert d.forced and d.reactions.tolist() == env.best_reaction[[0, 3, 3], d.outcome].tolist()


@pytest.mark.parametrize(
    "punishing, message",
    [
        ([], "non-empty"),
        ([0, 9], r"\[0, 5\]"),
        ([1, 1], "distinct"),
        ([0.5], "non-empty list of outcome indices"),
    ],
)
def test_bad_punishing_sets(punishing, message):
    env = facility_location_environment(line_graph(4), k=2)
    with pytest.raises(ValueError, match=message):
        CommitmentMechanism(env, np.asarray(punishing))
