"""The exponential mechanism on environments and the NST mix: exact deviation utilities against
brute force, the exact least q (truthful at it, strictly violated just below), the theorem's q,
pricing as the digital-goods auction itself."""

import itertools
import math

import numpy as np
import pytest

import truthfulness_oracles as oracle
from dpgames import DigitalGoodsAuction, misreport_audit
from dpgames.analysis.nst import least_q, nst_report
from dpgames.analysis.truthfulness import truthfulness_audit
from dpgames.mechanisms import deviations
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.facility_location import facility_location_environment, line_graph
from dpgames.mechanisms.nst_mix import NSTMix, balanced_epsilon, loss_bound_per_agent, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing, pricing_environment
from instances import random_environment


def brute_em_gains(env, agents, epsilon, forced=False):
    delta = oracle.sensitivity(env.objective, env.utility)
    return oracle.mix_gains(
        env.utility, env.objective, agents, epsilon, delta, q=0.0, forced=forced
    )


def per_class(gains, agents, profile):
    """Brute-force per-agent gains, restricted to the first agent of each class (like the audit)."""
    return np.array([gains[i] for i in profile.first_agent])


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("reactions", ["free", "forced"])
def test_exponential_deviation_utilities_against_brute_force(seed, reactions):
    rng = np.random.default_rng(seed)
    env = random_environment(rng, objective=bool(seed % 2))
    if not env.sensitivity > 0:
        pytest.skip("objective independent of the reports")
    agents = rng.integers(0, env.n_types, size=int(rng.integers(1, 6))).tolist()
    eps = float(rng.choice([0.3, 1.0, 4.0]))
    em = ObjectiveExponentialMechanism(env, eps, reactions=reactions)
    profile = env.profile(agents)
    np.testing.assert_allclose(
        em.distribution(profile).probabilities,
        oracle.em_law(env.utility, env.objective, agents, eps, env.sensitivity),
        atol=1e-12,
    )
    audit = truthfulness_audit(em, profile)
    brute = brute_em_gains(env, agents, eps, forced=reactions == "forced")
    np.testing.assert_allclose(audit.gains, per_class(brute, agents, profile), atol=1e-12)
    assert audit.max_gain <= np.expm1(eps) * env.utility_range + 1e-12  # exact form of Prop 10.1


@pytest.mark.parametrize("reactions", ["free", "forced"])
def test_huge_epsilon_takes_the_log_space_path_and_agrees(reactions, monkeypatch):
    # eps = 1500: weights exp(750 * ...) overflow a float; the deviations are summed in log space.
    env = facility_location_environment(line_graph(5), k=2)
    agents = [0, 0, 1, 4, 4, 3]
    profile = env.profile(agents)
    forced = reactions == "forced"

    def check(eps, tol):
        gains = truthfulness_audit(
            ObjectiveExponentialMechanism(env, eps, reactions=reactions), profile
        ).gains
        assert np.isfinite(gains).all()
        np.testing.assert_allclose(
            gains, per_class(brute_em_gains(env, agents, eps, forced), agents, profile), atol=tol
        )

    check(1500.0, 1e-9)
    check(2.0, 1e-12)
    monkeypatch.setattr(deviations, "MATMUL_SPREAD", 0.0)  # the log-space path on a spread-out law
    check(2.0, 1e-12)


def mix_instances():
    line = facility_location_environment(line_graph(6), k=2)
    yield line, [5, 3, 3, 1], 1.0
    yield line, [1, 4, 3, 5, 5], 0.4
    prices = pricing_environment([0.25, 0.5, 0.75, 1.0])
    yield prices, [0.125, 0.375, 0.375, 0.625, 0.875], 1.0


@pytest.mark.parametrize("env, agents, eps", list(mix_instances()))
def test_exact_q_is_truthful_and_just_below_it_is_strictly_violated(env, agents, eps):
    em = ObjectiveExponentialMechanism(env, eps)
    cm = CommitmentMechanism(env)
    profile = env.profile(agents)
    exact = least_q(em, cm, profile)
    assert exact.q is not None and 0 < exact.q < 1
    idx = profile.type_indices.tolist()
    delta = env.sensitivity
    at_q = oracle.mix_gains(env.utility, env.objective, idx, eps, delta, exact.q)
    assert max(max(row) for row in at_q) <= 1e-12
    below = exact.q * (1 - 1e-6)
    gains = oracle.mix_gains(env.utility, env.objective, idx, eps, delta, below)
    i, x = max(
        ((i, x) for i in range(len(idx)) for x in range(env.n_types)),
        key=lambda p: gains[p[0]][p[1]],
    )
    assert gains[i][x] > 0
    assert (env.type_label(idx[i]), env.type_label(x)) == (exact.true_type, exact.lie)
    # the library's own mix audit agrees on both sides
    assert truthfulness_audit(NSTMix(em, cm, exact.q), profile).is_truthful()
    assert truthfulness_audit(NSTMix(em, cm, below), profile).max_gain == pytest.approx(
        gains[i][x], rel=1e-6
    )


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0])
def test_theorem_q_makes_the_mix_truthful_at_every_profile(eps):
    # Dominant strategies: three agents on a 3-node line with two facilities, all 27 profiles.
    env = facility_location_environment(line_graph(3), k=2)
    em = ObjectiveExponentialMechanism(env, eps)
    cm = CommitmentMechanism(env)
    th = theorem_q(eps, cm.gap(), env.utility_range)
    assert th.q_exact_form <= th.q_dwork_roth  # e^eps - 1 <= 2 eps here
    worst_exact_q = 0.0
    for agents in itertools.product(range(3), repeat=3):
        gains = oracle.mix_gains(
            env.utility, env.objective, list(agents), eps, env.sensitivity, th.q_exact_form
        )
        assert max(max(row) for row in gains) <= 1e-12
        worst_exact_q = max(worst_exact_q, least_q(em, cm, env.profile(list(agents))).q)
    assert worst_exact_q <= th.q_exact_form


def test_theorem_forms_by_hand():
    env = facility_location_environment(line_graph(3), k=2)
    g = CommitmentMechanism(env).gap()  # gamma = 1, |P| = 3, U_max = 1
    th = theorem_q(0.5, g, env.utility_range)
    assert th.gain_dwork_roth == 1.0 and th.gain_exact == pytest.approx(math.expm1(0.5))
    assert th.q_dwork_roth == pytest.approx(3 / 4)  # 1 * 3 / (1 * 3 + 1)
    assert th.q_exact_form == pytest.approx(3 * math.expm1(0.5) / (3 * math.expm1(0.5) + 1))
    assert not theorem_q(2.0, g, 1.0).dwork_roth_valid
    zero = CommitmentMechanism(facility_location_environment(line_graph(3), k=1)).gap()
    assert theorem_q(0.5, zero, 1.0).q_exact_form is None
    with pytest.raises(ValueError, match="never told apart"):
        balanced_epsilon(100, 3, zero, 1.0, 1.0, 1.0)


def test_no_q_when_a_gaining_lie_is_never_punished():
    env = facility_location_environment(line_graph(5), k=1)
    em = ObjectiveExponentialMechanism(env, 1.0)
    cm = CommitmentMechanism(env)
    # at this profile nobody gains under the exponential mechanism: q = 0 works, gamma = 0 or not
    assert nst_report(em, cm, env.profile([0, 0, 2, 4])).least.q == 0.0
    report = nst_report(em, cm, env.profile([4, 3, 2, 1]))
    assert report.gap.gamma == 0 and report.theorem.q_exact_form is None
    assert report.least.q is None and report.mix_audit is None and report.mix_objective is None
    assert report.least.exponential_gain > 0 and report.least.commitment_loss == 0
    assert "never punishes" in report.least.diagnosis


def test_pricing_mechanism_is_the_auction():
    auction = DigitalGoodsAuction(0.8, alpha=0.1)
    values = np.array([0.05, 0.35, 0.35, 0.55, 0.65, 0.95, 0.95, 0.85])
    em = AuctionPricing(auction, values.size)
    env = em.environment
    profile = env.profile(values)
    np.testing.assert_allclose(
        em.distribution(profile).probabilities,
        auction.price_distribution(values).probabilities,
        atol=1e-15,
    )
    generic = ObjectiveExponentialMechanism(env, 0.8, sensitivity=1.0)
    np.testing.assert_allclose(
        generic.distribution(profile).probabilities,
        em.distribution(profile).probabilities,
        atol=1e-13,
    )
    assert em.expected_objective(profile) == pytest.approx(
        auction.expected_revenue(values), rel=1e-12
    )
    # the same gains as the foundation's misreport audit, with the type grid as the lies
    ours = truthfulness_audit(em, profile)
    theirs = misreport_audit(auction, values, lies=env.types, keep_gains=True)
    np.testing.assert_allclose(ours.gains, theirs.gains[profile.first_agent], atol=1e-12)


def test_pricing_report_and_the_continuous_price_set_is_refused():
    auction = DigitalGoodsAuction(0.5, alpha=0.25)
    em = AuctionPricing(auction, 6)
    profile = em.environment.profile([0.125, 0.375, 0.625, 0.625, 0.875, 0.875])
    report = nst_report(em, CommitmentMechanism(em.environment), profile)
    assert report.gap.gamma == pytest.approx(0.125)
    assert report.optimum == pytest.approx(
        max(p * sum(v >= p for v in profile_values(em, profile)) for p in [0.25, 0.5, 0.75, 1.0])
    )
    assert (
        report.commitment_objective
        <= report.mix_objective
        <= report.exponential_objective
        <= report.optimum
    )
    with pytest.raises(ValueError, match="finite price set"):
        AuctionPricing(DigitalGoodsAuction(0.5, prices="continuous"), 6)
    with pytest.raises(ValueError, match="built for 6 bidders"):
        em.distribution(em.environment.profile([0.125, 0.375]))
    with pytest.raises(ValueError, match="not in the type space"):
        em.environment.profile([0.125, 0.3])


def profile_values(em, profile):
    return em.environment.types[profile.type_indices]


def test_mix_law_runs_and_checks():
    env = facility_location_environment(line_graph(4), k=2)
    em, cm = ObjectiveExponentialMechanism(env, 1.0), CommitmentMechanism(env)
    profile = env.profile([0, 1, 3])
    mix = NSTMix(em, cm, 0.25)
    expected = 0.75 * em.distribution(profile).probabilities + 0.25 / env.n_outcomes
    np.testing.assert_allclose(mix.distribution(profile).probabilities, expected, atol=1e-15)
    forced = [mix.run(profile, rng=s).forced for s in range(400)]
    assert 0.15 < np.mean(forced) < 0.35
    a, b = mix.run(profile, rng=7), mix.run(profile, rng=7)
    assert (a.outcome, a.forced, a.reactions.tolist()) == (
        b.outcome,
        b.forced,
        b.reactions.tolist(),
    )
    with pytest.raises(ValueError, match="q must be in"):
        NSTMix(em, cm, 1.5)
    other = facility_location_environment(line_graph(4), k=2)
    with pytest.raises(ValueError, match="share one environment"):
        NSTMix(em, CommitmentMechanism(other), 0.5)


def test_balanced_epsilon_and_the_loss_bound_hold_as_n_grows():
    env = facility_location_environment(line_graph(6), k=2)
    cm = CommitmentMechanism(env)
    g = cm.gap()
    rng = np.random.default_rng(0)
    losses = []
    for n in (20, 200, 2000):
        profile = env.profile(rng.integers(0, 6, size=n))
        eps = balanced_epsilon(
            n, env.n_outcomes, g, env.sensitivity, env.utility_range, env.objective_range
        )
        report = nst_report(ObjectiveExponentialMechanism(env, eps), cm, profile)
        q = report.least.q
        loss = (report.optimum - report.mix_objective) / n
        bound = loss_bound_per_agent(
            eps, n, env.n_outcomes, q, env.sensitivity, env.objective_range
        )
        assert 0 <= loss <= bound
        losses.append(loss)
    assert losses[2] < losses[0]


def test_environment_input_errors():
    with pytest.raises(ValueError, match="shape"):
        Environment(np.arange(2), np.arange(3), ("a",), np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="distinct"):
        Environment(np.array([1, 1]), np.arange(2), ("a",), np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="finite"):
        Environment(np.arange(2), np.arange(2), ("a",), np.full((2, 2, 1), np.nan))
    flat = Environment(np.arange(2), np.arange(2), ("a",), np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="sensitivity 0"):
        ObjectiveExponentialMechanism(flat, 1.0)
    env = facility_location_environment(line_graph(3), k=2)
    with pytest.raises(ValueError, match="below the environment"):
        ObjectiveExponentialMechanism(env, 1.0, sensitivity=0.5)
    with pytest.raises(ValueError, match="counts"):
        env.profile_from_counts([1, -1, 0])
    assert env.profile_from_counts([2, 0, 1]).type_indices.tolist() == [0, 0, 2]
