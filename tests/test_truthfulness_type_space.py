"""The audit over every hypothetical true type (``true_types="all"``): gains against a brute-force
oracle that recomputes the whole law for every (agent, true type, lie) with plain loops, on random
environments, pricing, facility location (k = 2 on a line), the NST mix and Huang-Kannan (public
project and facility); the least q over every true type (>= the realised-type one; the mix truthful
for every true type at it and strictly violated just below); the size limit; the scenario
metrics."""

import numpy as np
import pytest

from dpgames import run_scenario
from dpgames.analysis.nst import least_q, nst_report
from dpgames.analysis.truthfulness import TypeSpaceAudit, truthfulness_audit
from dpgames.mechanisms import deviations
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import facility_location_environment, line_graph
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import pricing_environment
from dpgames.mechanisms.public_project import public_project_environment
from instances import HK_FILES, ROOT, environment_instance, first_of_each_class, quick
from truthfulness_oracles import brute_hk, brute_mix


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("reactions", ["free", "forced"])
def test_exponential_and_mix_against_brute_force(seed, reactions):
    env, agents, eps = environment_instance(seed)
    if not env.sensitivity > 0:
        pytest.skip("objective independent of the reports")
    profile = env.profile(env.types[agents])
    forced = reactions == "forced"
    em = ObjectiveExponentialMechanism(env, eps, reactions=reactions)
    audit = truthfulness_audit(em, profile, true_types="all")
    assert isinstance(audit, TypeSpaceAudit) and audit.gains.shape == (
        profile.classes.size,
        env.n_types,
        env.n_types,
    )
    np.testing.assert_allclose(
        audit.gains,
        first_of_each_class(brute_mix(env, agents, eps, 0.0, forced), profile),
        atol=1e-12,
    )
    mix = NSTMix(em, CommitmentMechanism(env), 0.37)
    np.testing.assert_allclose(
        truthfulness_audit(mix, profile, "all").gains,
        first_of_each_class(brute_mix(env, agents, eps, 0.37, forced), profile),
        atol=1e-12,
    )
    # the realised-type audit is the slice t = the class's own type
    own = truthfulness_audit(em, profile)
    np.testing.assert_allclose(
        audit.gains[np.arange(profile.classes.size), profile.classes], own.gains, atol=1e-15
    )


def test_log_space_path_agrees(monkeypatch):
    env = facility_location_environment(line_graph(5), k=2)
    agents = [0, 0, 1, 4, 3]
    profile = env.profile(agents)
    em = ObjectiveExponentialMechanism(env, 2.0, reactions="forced")
    expected = first_of_each_class(brute_mix(env, agents, 2.0, 0.0, True), profile)
    monkeypatch.setattr(deviations, "MATMUL_SPREAD", 0.0)
    np.testing.assert_allclose(truthfulness_audit(em, profile, "all").gains, expected, atol=1e-12)


def test_blocks_of_classes_agree(monkeypatch):
    env = facility_location_environment(line_graph(5), k=2)
    agents = [0, 1, 2, 3, 4, 4]
    profile = env.profile(agents)
    em = ObjectiveExponentialMechanism(env, 1.0)
    # 2 classes a block
    monkeypatch.setattr(deviations, "_BLOCK_ELEMENTS", 2 * env.n_types * env.n_outcomes)
    np.testing.assert_allclose(
        truthfulness_audit(em, profile, "all").gains,
        first_of_each_class(brute_mix(env, agents, 1.0, 0.0, False), profile),
        atol=1e-12,
    )


@pytest.mark.parametrize("seed", range(4))
def test_huang_kannan_public_project_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    values = rng.integers(0, 5, size=(m, k)) / 4
    cost = np.concatenate([[0.0], rng.uniform(0, 2, size=k - 1)])
    env = public_project_environment(values, np.arange(k), np.arange(m), cost=cost)
    agents = rng.integers(0, m, size=int(rng.integers(1, 6))).tolist()
    hk = HuangKannan(env, float(rng.choice([0.5, 3.0])))
    profile = env.profile(agents)
    audit = truthfulness_audit(hk, profile, "all")
    np.testing.assert_allclose(
        audit.gains, first_of_each_class(brute_hk(hk, agents, env.offset), profile), atol=1e-12
    )
    # dominant-strategy truthful: for every true type, not only the realised one
    assert audit.is_truthful()


def test_huang_kannan_facility_against_brute_force():
    env = facility_location_environment(line_graph(5), k=2)
    agents = [4, 0, 0, 2, 3]
    hk = HuangKannan(env, 0.8)
    profile = env.profile(agents)
    audit = truthfulness_audit(hk, profile, "all")
    np.testing.assert_allclose(
        audit.gains, first_of_each_class(brute_hk(hk, agents), profile), atol=1e-12
    )
    assert audit.is_truthful()


def mix_instances():
    yield facility_location_environment(line_graph(6), k=2), [5, 3, 3, 1], 1.0, "free"
    yield facility_location_environment(line_graph(6), k=2), [0, 0, 0, 1], 1.0, "free"
    yield pricing_environment([0.25, 0.5, 0.75, 1.0]), [0.125, 0.375, 0.375, 0.625], 1.0, "forced"
    yield pricing_environment([0.25, 0.5, 0.75, 1.0]), [0.875, 0.875], 0.7, "free"


@pytest.mark.parametrize("instance", list(mix_instances()), ids=lambda i: i[0].name)
def test_least_q_over_every_true_type(instance):
    env, labels, eps, reactions = instance
    agents = env.type_indices(labels).tolist()
    profile = env.profile(labels)
    em = ObjectiveExponentialMechanism(env, eps, reactions=reactions)
    cm = CommitmentMechanism(env)
    own, every = least_q(em, cm, profile), least_q(em, cm, profile, true_types="all")
    assert own.q is not None and every.q is not None and every.q >= own.q - 1e-12 and every.q > 0
    forced = reactions == "forced"
    at_q = np.array(brute_mix(env, agents, eps, every.q, forced))
    assert at_q.max() <= 1e-12  # truthful for every hypothetical type
    below = np.array(brute_mix(env, agents, eps, every.q - 1e-6, forced))
    assert below.max() > 0  # strictly violated just below
    assert every.exponential_gain / (
        every.exponential_gain + every.commitment_loss
    ) == pytest.approx(every.q)
    assert truthfulness_audit(NSTMix(em, cm, every.q), profile, "all").is_truthful()
    report = nst_report(em, cm, profile)
    assert report.type_space_least == every and report.type_space_mix_audit.is_truthful()


def test_a_hypothetical_type_can_need_a_larger_q():
    # Everybody at one end of a 6-node line: no resident there gains from any lie (q = 0 suffices at
    # the profile), but a resident living elsewhere would gain by pulling a facility towards her.
    env = facility_location_environment(line_graph(6), k=2)
    profile = env.profile([0, 0, 0, 1])
    em = ObjectiveExponentialMechanism(env, 1.0)
    cm = CommitmentMechanism(env)
    own, every = least_q(em, cm, profile), least_q(em, cm, profile, true_types="all")
    assert own.q == 0 and own.agent is None and every.q > 0
    assert every.replaces in (0, 1) and "her type in the profile" in every.who
    assert not truthfulness_audit(NSTMix(em, cm, own.q), profile, "all").is_truthful()


def test_bad_options_and_the_size_limit(monkeypatch):
    env = facility_location_environment(line_graph(4), k=2)
    profile = env.profile([0, 1, 3])
    em = ObjectiveExponentialMechanism(env, 1.0)
    with pytest.raises(ValueError, match="true_types must be 'own' or 'all'"):
        truthfulness_audit(em, profile, true_types="every")
    with pytest.raises(ValueError, match="does not match"):
        least_q(
            em, CommitmentMechanism(env), profile, truthfulness_audit(em, profile), true_types="all"
        )
    monkeypatch.setattr(deviations, "TYPE_SPACE_LIMIT", 10)
    import dpgames.analysis.truthfulness as truthfulness

    monkeypatch.setattr(truthfulness, "TYPE_SPACE_LIMIT", 10)
    with pytest.raises(
        ValueError, match=r"3 x 4 x 4 x 6 = 288 exceeds 10; use the realised-type audit"
    ):
        truthfulness_audit(em, profile, "all")
    with pytest.raises(ValueError, match="exceeds"):
        em.type_space_deviation_utilities(profile)
    report = nst_report(em, CommitmentMechanism(env), profile)  # too large: left out, not an error
    assert report.type_space_least is None and report.least.q is not None


@pytest.mark.parametrize("name", ["nst_pricing", "nst_facility_k2", "nst_facility_k1"])
def test_nst_scenario_metrics_over_every_true_type(name):
    m = quick(name).run().metrics
    if m["q_exact"] == "none":
        # a lie no profile-agent can punish stays unpunished
        assert m["q_exact_all_types"] == "none"
    else:
        assert m["q_exact"] - 1e-12 <= m["q_exact_all_types"] <= 1
        assert (
            m["mix_truthful_all_types"] is True
            and "her type in the profile" in m["q_exact_all_types_attained_by"]
        )


@pytest.mark.parametrize("name", HK_FILES)
def test_huang_kannan_scenarios_are_truthful_for_every_true_type(name):
    m = run_scenario(ROOT / "scenarios" / f"{name}.toml").metrics
    assert (
        m["truthful_all_types"] is True
        and m["max_gain"] <= m["max_gain_all_types"] + 1e-12
        and m["max_gain_all_types"] <= 1e-12
    )


def test_worst_case_names_the_brute_force_maximum():
    env = facility_location_environment(line_graph(6), k=2)
    agents = [0, 0, 0, 1]
    profile = env.profile(agents)
    audit = truthfulness_audit(ObjectiveExponentialMechanism(env, 1.0), profile, "all")
    brute = first_of_each_class(brute_mix(env, agents, 1.0, 0.0, False), profile)
    for d in range(brute.shape[0]):
        np.fill_diagonal(brute[d], -np.inf)  # truth-telling is not a lie
    d, t, x = np.unravel_index(np.argmax(brute), brute.shape)
    assert audit.worst_case == {
        "agent": int(profile.first_agent[d]),
        "replaces": int(profile.classes[d]),
        "true_type": int(t),
        "lie": int(x),
        "gain": pytest.approx(brute[d, t, x], abs=1e-12),
    }
    assert audit.max_gain > 0 and not audit.is_truthful()
