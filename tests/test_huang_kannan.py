"""Huang & Kannan's exponential mechanism with payments: payments against the formula summed
explicitly, exact truthfulness (also for lies outside the type space) and individual rationality on
random instances, on facility location and a public project."""

import numpy as np
import pytest

import truthfulness_oracles as oracle
from dpgames.analysis.truthfulness import truthfulness_audit
from dpgames.mechanisms.facility_location import (
    facility_location_environment,
    grid_graph,
    line_graph,
)
from dpgames.mechanisms.huang_kannan import HuangKannan, huang_kannan_payments
from dpgames.mechanisms.public_project import public_project_environment
from dpgames.testing import assert_truthful


@pytest.mark.parametrize("seed", range(8))
def test_truthful_and_individually_rational_for_arbitrary_lies(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 5)), int(rng.integers(2, 6))
    values = rng.uniform(0, 1, size=(n, k))
    beta = float(rng.choice([0.5, 2.0, 10.0]))
    offset = rng.uniform(-1, 0, size=k) if seed % 2 else None
    pay = huang_kannan_payments(values, beta, offset)
    law, _ = oracle.hk_outcome_law(values.tolist(), beta, offset)
    for i in range(n):
        truthful, expected_payment = oracle.hk_utility(
            values[i].tolist(), values.tolist(), i, beta, offset
        )
        assert pay[i] == pytest.approx(expected_payment, abs=1e-12)
        assert truthful >= -1e-12  # individually rational (values >= 0)
        assert truthful >= float(np.dot(law, values[i])) - pay[i] - 1e-12
        for _ in range(20):  # any report, even outside [0, 1]
            lie = values.copy()
            lie[i] = rng.uniform(-1, 2, size=k)
            lied_pay = huang_kannan_payments(lie, beta, offset)[i]
            lied_law, _ = oracle.hk_outcome_law(lie.tolist(), beta, offset)
            assert float(np.dot(lied_law, values[i])) - lied_pay <= truthful + 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_environment_mechanism_against_the_oracle(seed):
    rng = np.random.default_rng(seed)
    env = facility_location_environment(line_graph(5), k=int(seed % 2) + 1)
    agents = rng.integers(0, 5, size=6).tolist()
    beta = float(rng.choice([0.3, 1.5]))
    hk = HuangKannan(env, beta)
    profile = env.profile(agents)
    v = hk.valuations
    # the worst: 0
    assert v.min() == 0.0 and np.allclose(v, env.best_utility - env.best_utility.min())
    reports = [v[t].tolist() for t in agents]
    np.testing.assert_allclose(
        hk.distribution(profile).probabilities, oracle.hk_outcome_law(reports, beta)[0], atol=1e-12
    )
    np.testing.assert_allclose(
        hk.agent_payments(profile), huang_kannan_payments(v[agents], beta), atol=1e-12
    )
    audit = truthfulness_audit(hk, profile)
    for d, i in enumerate(profile.first_agent):
        t = agents[i]
        truthful, _ = oracle.hk_utility(v[t].tolist(), reports, i, beta)
        assert audit.truthful_utility[d] == pytest.approx(truthful, abs=1e-12)
        assert hk.truthful_utilities(profile)[d] == pytest.approx(truthful, abs=1e-12)
        for x in range(env.n_types):
            lied = list(reports)
            lied[i] = v[x].tolist()
            assert audit.gains[d, x] == pytest.approx(
                oracle.hk_utility(v[t].tolist(), lied, i, beta)[0] - truthful, abs=1e-12
            )
    assert audit.is_truthful() and hk.truthful_utilities(profile).min() >= 0


def test_payments_and_welfare_do_not_depend_on_the_valuation_shift():
    env = facility_location_environment(grid_graph(3, 3), k=2)
    hk = HuangKannan(env, 1.0)
    profile = env.profile([0, 0, 4, 8, 8, 8])
    # negative valuations
    shifted = huang_kannan_payments(env.best_utility[profile.type_indices], 1.0)
    np.testing.assert_allclose(hk.agent_payments(profile), shifted, atol=1e-12)
    assert hk.revenue(profile) == pytest.approx(shifted.sum())
    welfare = hk.expected_objective(profile)
    assert env.optimum(profile)[1] >= welfare >= env.objective_values(profile).min()


def test_large_beta_goes_to_log_space_and_stays_truthful():
    env = facility_location_environment(line_graph(6), k=2)
    agents = [0, 1, 5, 5, 2]
    hk = HuangKannan(env, 200.0)  # beta * Delta = 1000: past the matrix-product range
    profile = env.profile(agents)
    audit = assert_truthful(hk, profile)
    v = hk.valuations
    reports = [v[t].tolist() for t in agents]
    for d, i in enumerate(profile.first_agent):
        truthful, _ = oracle.hk_utility(v[agents[i]].tolist(), reports, i, 200.0)
        assert audit.truthful_utility[d] == pytest.approx(truthful, abs=1e-9)


def test_public_project_with_costs():
    # A park (cost 3) and a library (cost 5); 'both' costs 8.  Families love the park, students the
    # library.
    outcomes = ["nothing", "park", "library", "both"]
    values = [[0, 1.0, 0.2, 1.2], [0, 0.1, 0.9, 1.0], [0, 0.3, 0.3, 0.6]]
    env = public_project_environment(
        values, outcomes, ["family", "student", "retiree"], cost=[0, 3, 5, 8]
    )
    profile = env.profile(["family"] * 6 + ["student"] * 4 + ["retiree"] * 2)
    welfare = env.objective_values(profile)
    np.testing.assert_allclose(
        welfare, [0, 6.0 + 0.4 + 0.6 - 3, 1.2 + 3.6 + 0.6 - 5, 7.2 + 4 + 1.2 - 8]
    )
    hk = HuangKannan(env, 5.0)
    assert_truthful(hk, profile)
    assert hk.truthful_utilities(profile).min() >= 0
    p = hk.distribution(profile).probabilities
    assert int(np.argmax(p)) == int(np.argmax(welfare)) == 3
    reports = [values[t] for t in profile.type_indices]
    np.testing.assert_allclose(
        p, oracle.hk_outcome_law(reports, 5.0, [0, -3, -5, -8])[0], atol=1e-12
    )
    assert hk.guarantee.epsilon == pytest.approx(2 * 5.0 * hk.sensitivity)


def test_input_errors():
    env = facility_location_environment(line_graph(3), k=1)
    with pytest.raises(ValueError, match="beta must be a finite number > 0"):
        HuangKannan(env, 0)
    flat = HuangKannan(public_project_environment([[1, 1], [2, 2]], ["a", "b"]), 1.0)
    profile = flat.environment.profile(["type 0", "type 1"])
    np.testing.assert_allclose(flat.payments(profile), 0.0, atol=1e-15)  # nobody moves the outcome
    with pytest.raises(ValueError, match="outcomes: need 2 labels"):
        public_project_environment([[1, 2]], ["a"])
    with pytest.raises(ValueError, match="valuations: need a finite"):
        huang_kannan_payments([[np.nan, 1]], 1.0)
