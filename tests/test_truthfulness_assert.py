"""dpgames.testing.assert_truthful on every mechanism of the truthfulness module and on the
auction."""

import numpy as np
import pytest

import truthfulness_oracles as oracle
from dpgames import DigitalGoodsAuction
from dpgames.analysis.nst import least_q
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import facility_location_environment, line_graph
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing
from dpgames.testing import assert_truthful

ENV = facility_location_environment(line_graph(6), k=2)
AGENTS = [5, 3, 3, 1]


def test_exponential_mechanism_alone_fails_with_the_worst_case():
    em = ObjectiveExponentialMechanism(ENV, 1.0)
    gains = oracle.mix_gains(ENV.utility, ENV.objective, AGENTS, 1.0, ENV.sensitivity, 0.0)
    i, x = max(((i, x) for i in range(4) for x in range(6)), key=lambda p: gains[p[0]][p[1]])
    with pytest.raises(AssertionError) as info:
        assert_truthful(em, AGENTS)
    text = str(info.value)
    assert f"agent {i} (true type {AGENTS[i]}) gains {gains[i][x]:.6g} by reporting {x}" in text
    assert "4 agents x 6 types" in text
    assert_truthful(em, AGENTS, tol=gains[i][x] * 1.001)  # approximately truthful


def test_the_mix_passes_at_the_exact_q_and_fails_just_below():
    em, cm = ObjectiveExponentialMechanism(ENV, 1.0), CommitmentMechanism(ENV)
    profile = ENV.profile(AGENTS)
    q = least_q(em, cm, profile).q
    audit = assert_truthful(NSTMix(em, cm, q), profile)
    assert audit.max_gain <= 1e-12
    with pytest.raises(AssertionError, match="not truthful within tol=0"):
        assert_truthful(NSTMix(em, cm, q * (1 - 1e-6)), profile)
    assert_truthful(cm, AGENTS)
    assert_truthful(HuangKannan(ENV, 0.7), AGENTS)


def test_the_auction_through_the_misreport_audit():
    auction = DigitalGoodsAuction(0.5, alpha=0.1)
    values = np.random.default_rng(0).uniform(size=40)
    with pytest.raises(
        AssertionError, match=r"agent \d+ \(true type 0\.\d+\) gains .* by reporting"
    ):
        assert_truthful(auction, values)
    assert_truthful(auction, values, tol=2 * 0.5)  # Prop 10.1
    # the auction inside the pricing environment: the same verdict
    em = AuctionPricing(auction, 10)
    types = em.environment.types[[0, 2, 2, 4, 5, 5, 6, 7, 9, 9]]
    with pytest.raises(AssertionError):
        assert_truthful(em, types)
    mix = NSTMix(
        em,
        CommitmentMechanism(em.environment),
        least_q(em, CommitmentMechanism(em.environment), em.environment.profile(types)).q,
    )
    assert_truthful(mix, types)


def test_bad_arguments():
    with pytest.raises(ValueError, match="tol must be a number >= 0"):
        assert_truthful(CommitmentMechanism(ENV), AGENTS, tol=-1)
    with pytest.raises(ValueError, match="every type is tried"):
        assert_truthful(CommitmentMechanism(ENV), AGENTS, lies=[1, 2])
    with pytest.raises(ValueError, match="not in the type space"):
        assert_truthful(CommitmentMechanism(ENV), [0, 17])


def test_every_hypothetical_true_type_on_request():
    """At [0, 0, 0, 1] nobody gains by lying, but a resident elsewhere would: only true_types='all'
    sees it."""
    em = ObjectiveExponentialMechanism(ENV, 1.0)
    assert_truthful(em, [0, 0, 0, 1])
    with pytest.raises(AssertionError, match=r"true type .* gains .* x 6 true types"):
        assert_truthful(em, [0, 0, 0, 1], true_types="all")
    with pytest.raises(
        ValueError, match="true_types='all' applies to mechanisms on an environment"
    ):
        assert_truthful(DigitalGoodsAuction(1.0, alpha=0.1), [0.2, 0.6], true_types="all")


def test_types_is_an_own_mechanisms_type_space_never_the_profile():
    """``types`` names a type space (of a rule given as a function); a mechanism on an environment
    refuses it, naming it, rather than auditing it as the profile."""
    with pytest.raises(ValueError, match="types: for a CustomMechanism or a plain callable rule"):
        assert_truthful(CommitmentMechanism(ENV), types=AGENTS)
    with pytest.raises(ValueError, match="profile"):
        assert_truthful(CommitmentMechanism(ENV))
