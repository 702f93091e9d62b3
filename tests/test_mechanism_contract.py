"""The shared contract of every mechanism that states a guarantee (in the style of dp-accounting's
shared accountant test): register a class below and it is checked for

* the declared protocol (:class:`~dpgames.mechanisms.protocol.EnvironmentMechanism` for mechanisms
  on an environment);
* exact privacy as stated: the largest privacy loss over every neighbouring pair of inputs
  (enumerated) is at most ``guarantee.epsilon`` (Dwork & Roth Def. 2.4, audited by exact
  enumeration);
* for environment mechanisms: the two audit paths agree (``deviation_utilities[d, x]`` is the entry
  ``[d, t_d, x]`` of ``type_space_deviation_utilities``), ``run`` draws only outcomes of the law,
  and the mechanisms that promise truthfulness (``M^P``, Huang-Kannan, the NST mix at its exact
  least ``q``) pass ``assert_truthful`` over every true type.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpgames.analysis.nst import least_q
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.protocol import EnvironmentMechanism
from dpgames.privacy import KaryResponse, ReportNoisyMax, WarnerResponse
from dpgames.privacy.audit import audit_finite
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.testing import assert_private, assert_truthful
from instances import random_environment


def _nst_at_least_q(env, profile):
    """The NST mix at the exact least ``q`` over every true type at ``profile`` (``None``: there is
    none)."""
    em = ObjectiveExponentialMechanism(env, 1.0)
    cm = CommitmentMechanism(env)
    least = least_q(em, cm, profile, true_types="all")
    return None if least.q is None else NSTMix(em, cm, least.q)


#: name -> (factory on an environment, promises exact truthfulness)
ENVIRONMENT_MECHANISMS = {
    "exponential, free reactions": (lambda env: ObjectiveExponentialMechanism(env, 0.8), False),
    "exponential, forced reactions": (
        lambda env: ObjectiveExponentialMechanism(env, 0.8, reactions="forced"),
        False,
    ),
    "exponential, McSherry-Talwar weights": (
        lambda env: ObjectiveExponentialMechanism(env, 0.8, convention="mcsherry-talwar"),
        False,
    ),
    "commitment M^P": (CommitmentMechanism, True),
    "NST mix at q = 0.4": (
        lambda env: NSTMix(ObjectiveExponentialMechanism(env, 1.0), CommitmentMechanism(env), 0.4),
        False,
    ),
    "Huang-Kannan": (lambda env: HuangKannan(env, 0.7), True),
}


def _environments(count=6):
    rng = np.random.default_rng(20261124)
    found = []
    while len(found) < count:
        env = random_environment(rng, objective=bool(len(found) % 2))
        if env.sensitivity > 0:
            found.append(env)
    return found


ENVS = _environments()


def _neighbouring_profiles(m, n):
    """Every pair of profiles of ``n`` agents over ``m`` types that differ in exactly one agent's
    type."""
    for profile in itertools.product(range(m), repeat=n):
        for i in range(n):
            for x in range(m):
                if x != profile[i]:
                    yield profile, profile[:i] + (x,) + profile[i + 1 :]


@pytest.fixture(params=list(ENVIRONMENT_MECHANISMS), ids=list(ENVIRONMENT_MECHANISMS))
def factory(request):
    return ENVIRONMENT_MECHANISMS[request.param]


@pytest.mark.parametrize("env", ENVS, ids=[f"env{i}" for i in range(len(ENVS))])
def test_environment_mechanism_contract(factory, env):
    make, truthful = factory
    mech = make(env)
    assert isinstance(mech, EnvironmentMechanism)
    eps = mech.guarantee.epsilon

    # Privacy as stated, over every neighbouring pair of 3-agent profiles.
    pairs = list(_neighbouring_profiles(env.n_types, 3))
    audit = assert_private(
        lambda reports: mech.distribution(env.profile(list(reports))), pairs, eps
    )
    assert 0.0 <= audit.epsilon <= eps + 1e-9

    # The two audit paths agree, at several profiles.
    rng = np.random.default_rng(7)
    for _ in range(3):
        profile = env.profile(rng.integers(0, env.n_types, size=4).tolist())
        own = mech.deviation_utilities(profile)
        every = mech.type_space_deviation_utilities(profile)
        d = np.arange(profile.classes.size)
        np.testing.assert_allclose(own, every[d, profile.classes, :], atol=1e-12)
        law = mech.distribution(profile)
        draws = {mech.run(profile, rng=s).outcome for s in range(20)}
        assert all(law.probabilities[s] > 0 for s in draws)
        if truthful:
            assert_truthful(mech, profile, true_types="all")


def test_nst_mix_at_its_exact_least_q_is_truthful_over_every_true_type():
    checked = 0
    for env in ENVS:
        profile = env.profile([0, 1, 1])
        mix = _nst_at_least_q(env, profile)
        if mix is not None:
            assert_truthful(mix, profile, true_types="all")
            checked += 1
    assert checked >= 2


def test_a_mechanism_missing_a_member_does_not_pass_for_one():
    class Incomplete:
        environment = ENVS[0]

        def distribution(self, profile):
            raise NotImplementedError

    assert not isinstance(Incomplete(), EnvironmentMechanism)


#: name -> (mechanism, every neighbouring pair of inputs); each maps an input to an exact law.
FINITE_MECHANISMS = {
    "Warner randomized response": (WarnerResponse(0.5), [(0, 1)]),
    "k-ary randomized response": (
        KaryResponse(4, 1.3),
        [(a, b) for a in range(4) for b in range(4) if a != b],
    ),
    "report-noisy-max, exponential noise": (
        ReportNoisyMax(0.9),
        [
            (np.array(s), np.array(s) + np.array(e))
            for s in ([0, 1, 2], [1.0, 1.0, 0.5])
            for e in itertools.product([-1, 0, 1], repeat=3)
            if any(e)
        ],
    ),
}


@pytest.mark.parametrize("name", list(FINITE_MECHANISMS))
def test_finite_mechanism_contract(name):
    mech, pairs = FINITE_MECHANISMS[name]
    eps = mech.guarantee.epsilon
    audit = audit_finite(mech, pairs)
    assert 0.0 <= audit.epsilon <= eps + 1e-9


def test_exponential_mechanism_contract_over_score_vectors_within_the_sensitivity():
    em = ExponentialMechanism(0.7, sensitivity=1.0)
    rng = np.random.default_rng(3)
    pairs = []
    for _ in range(50):
        s = rng.uniform(0, 5, size=6)
        pairs.append((s, s + rng.uniform(-1, 1, size=6)))
    audit = audit_finite(lambda s: em.distribution(s), pairs)
    assert 0.0 <= audit.epsilon <= em.guarantee.epsilon + 1e-9
