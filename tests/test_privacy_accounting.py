"""The accountant's totals against values worked by hand, conversions against the Gaussian
mechanism's exact delta(eps) (Balle & Wang 2018, Thm 8) and a continuous optimisation, and the
budget's refusals."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpgames.privacy import Accountant, BudgetExceededError, Neighbouring, PrivacyGuarantee
from dpgames.privacy.conversions import RDPCurve, rdp_to_dp, zcdp_to_dp, zcdp_to_dp_bun_steinke


def gaussian_exact_delta(mu, eps):
    """Gaussian mechanism with sensitivity / sigma = mu: delta(eps) = Phi(mu/2 - eps/mu) - e^eps
    Phi(-mu/2 - eps/mu)."""
    return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def test_basic_composition_by_hand():
    acc = (
        Accountant()
        .spend("query", PrivacyGuarantee(0.1), count=3)
        .spend("release", PrivacyGuarantee(0.5, 1e-6))
    )
    total = acc.basic_total()
    assert total.epsilon == pytest.approx(0.8)  # 3 * 0.1 + 0.5
    assert total.delta == pytest.approx(1e-6)
    assert [e.name for e in acc.events] == ["query", "release"]


def test_advanced_composition_by_hand():
    acc = Accountant().spend("q", PrivacyGuarantee(0.1), count=100)
    # sqrt(2 * 100 * ln(1e6)) * 0.1 = sqrt(2763.1021) * 0.1 = 5.2565218; 100 * 0.1 * (e^0.1 - 1) =
    # 1.0517092
    assert acc.advanced_total(1e-6).epsilon == pytest.approx(5.2565218 + 1.0517092, abs=1e-6)
    # with a delta of 1e-7 per event, delta' = 2e-5 - 100 * 1e-7 = 1e-5
    acc2 = Accountant().spend("q", PrivacyGuarantee(0.1, 1e-7), count=100)
    # sqrt(2 * 100 * ln(1e5)) = sqrt(200 * 11.512925) = 47.985259
    assert acc2.advanced_total(2e-5).epsilon == pytest.approx(0.1 * 47.985259 + 1.0517092, abs=1e-6)
    assert acc2.advanced_total(1e-5 * 0.9).epsilon == math.inf  # all of delta is used by the events


def test_zcdp_by_hand_and_valid_for_the_gaussian():
    # a Gaussian with sensitivity 1 and sigma 2 is 1/8-zCDP; 8 rounds: rho = 1
    acc = Accountant().spend("round", PrivacyGuarantee.from_zcdp(1 / 8), count=8)
    assert acc.rho == pytest.approx(1.0)
    # Bun-Steinke: 1 + 2 sqrt(ln(1e5)) = 1 + 2 * 3.3930 = 7.7861
    assert zcdp_to_dp_bun_steinke(1.0, 1e-5) == pytest.approx(7.786140, abs=1e-5)
    eps = acc.zcdp_total(1e-5).epsilon
    assert eps < 7.7861
    # eight Gaussians of mu = 1/2 compose exactly into one of mu = sqrt(8)/2 = sqrt(2): the
    # certified eps must hold for the exact mechanism
    assert gaussian_exact_delta(math.sqrt(2), eps) <= 1e-5


def test_cks_conversion_matches_a_continuous_optimum():
    """eps(alpha) = alpha rho + ln(1 - 1/alpha) - (ln delta + ln alpha)/(alpha - 1), minimised over
    alpha."""
    for rho, delta in [(1.0, 1e-5), (0.01, 1e-6), (5.0, 1e-3), (1e-5, 1e-8)]:
        f = lambda a: a * rho + math.log(1 - 1 / a) - (math.log(delta) + math.log(a)) / (a - 1)  # noqa: E731
        best = optimize.minimize_scalar(
            f, bounds=(1 + 1e-6, 1e7), method="bounded", options={"xatol": 1e-10}
        )
        assert zcdp_to_dp(rho, delta) == pytest.approx(
            min(best.fun, zcdp_to_dp_bun_steinke(rho, delta)), rel=1e-3
        )


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_conversions_are_valid_for_the_gaussian(mu, delta):
    eps = PrivacyGuarantee.from_zcdp(mu**2 / 2).at_delta(delta).epsilon
    assert gaussian_exact_delta(mu, eps) <= delta * (1 + 1e-9)


def test_rdp_of_pure_dp_by_hand():
    curve = RDPCurve.pure(1.0)
    np.testing.assert_allclose(curve(np.array([1.5, 2.0, 3.0])), [0.75, 1.0, 1.0])
    # 1-DP converted at delta: never worse than 1, and its conversion is valid for randomized
    # response with eps = 1 (whose hockey-stick delta at eps' is (e - e^eps') / (1 + e) for eps' <
    # 1)
    eps = rdp_to_dp(curve, 1e-5)
    assert eps <= 1.0 and (math.e - math.exp(eps)) / (1 + math.e) <= 1e-5


def test_mixed_events_compose_the_rest_by_basic_composition():
    acc = (
        Accountant()
        .spend("gauss", PrivacyGuarantee.from_zcdp(0.5))
        .spend("approx", PrivacyGuarantee(0.3, 1e-6))
    )
    assert acc.rho is None
    assert acc.zcdp_total(1e-5).epsilon == pytest.approx(zcdp_to_dp(0.5, 1e-5 - 1e-6) + 0.3)
    # the approximate event alone uses the whole delta
    assert acc.zcdp_total(1e-6).epsilon == math.inf
    assert acc.basic_total().epsilon == math.inf  # zCDP alone is no pure eps


def test_best_total_is_the_smallest_valid_total():
    acc = Accountant().spend("q", PrivacyGuarantee(0.05), count=400)
    totals = acc.totals(1e-6)
    best = acc.best_total(1e-6)
    assert best.epsilon == min(t.epsilon for t in totals.values())
    assert best.epsilon < totals["basic"].epsilon == pytest.approx(20.0)
    assert best.delta == 1e-6
    # a few large pure events: basic composition wins
    few = Accountant().spend("q", PrivacyGuarantee(2.0), count=2)
    assert few.best_total(1e-6).epsilon == pytest.approx(4.0)
    assert few.best_total(0.0).epsilon == pytest.approx(4.0)


def test_huge_and_infinite_epsilons_do_not_overflow():
    acc = (
        Accountant()
        .spend("huge", PrivacyGuarantee(1e6))
        .spend("zcdp only", PrivacyGuarantee.from_zcdp(0.1))
    )
    assert acc.advanced_total(1e-6).epsilon == math.inf
    assert acc.best_total(1e-6).epsilon < 1e6 + 10


def test_group_privacy_by_hand():
    g = PrivacyGuarantee(0.5, 1e-6, rho=0.1).for_group(3)
    assert g.epsilon == pytest.approx(1.5)
    assert g.delta == pytest.approx(3 * math.exp(1.0) * 1e-6)  # 8.1548455e-6
    assert g.rho == pytest.approx(0.9)
    acc = Accountant().spend("q", PrivacyGuarantee(0.2), count=2)
    assert acc.group_total(2).epsilon == pytest.approx(0.8)  # 2 events of 2 * 0.2


def test_the_total_states_the_relation_and_every_detail():
    bid, vote = (
        Neighbouring.REPLACE_ONE.described(d) for d in ("one bid changes", "one vote changes")
    )
    acc = Accountant().spend("a", PrivacyGuarantee(1.0, neighbouring=bid))
    assert acc.best_total().neighbouring == bid
    acc = acc.spend("b", PrivacyGuarantee(1.0, neighbouring=vote)).spend(
        "c", PrivacyGuarantee(1.0, neighbouring=bid)
    )
    assert acc.best_total().neighbouring == Neighbouring.REPLACE_ONE.described(
        "one bid changes; one vote changes"
    )


def test_the_accountant_is_immutable():
    empty = Accountant()
    one = empty.spend("q", PrivacyGuarantee(1.0))
    assert empty.events == () and len(one.events) == 1
    with pytest.raises(AttributeError):
        one.budget = PrivacyGuarantee(5.0)


def test_budget_refuses_to_overspend_with_a_clear_message():
    acc = Accountant(budget=PrivacyGuarantee(1.0))
    acc = acc.spend("first", PrivacyGuarantee(0.6))
    with pytest.raises(BudgetExceededError, match=r"'second'.*1\.1.*budget"):
        acc.spend("second", PrivacyGuarantee(0.5))
    assert acc.affordable_count(PrivacyGuarantee(0.1)) == 4  # 0.6 + 4 * 0.1 = 1.0
    assert not acc.can_spend(PrivacyGuarantee(0.1), count=5)


def test_zcdp_budget_counts_rounds():
    acc = Accountant(budget=PrivacyGuarantee.from_zcdp(1.0))
    assert acc.affordable_count(PrivacyGuarantee.from_zcdp(0.125)) == 8
    with pytest.raises(BudgetExceededError, match="no zCDP bound"):
        acc.spend("approx", PrivacyGuarantee(0.1, 1e-9))


def test_eps_delta_budget_with_gaussian_rounds():
    """How many 1/8-zCDP rounds fit in (8, 1e-5)? 8 rounds certify < 7.79 (rho = 1), and the count
    is the largest k whose rho = k / 8 converts below 8."""
    acc = Accountant(budget=PrivacyGuarantee(8.0, 1e-5))
    k = acc.affordable_count(PrivacyGuarantee.from_zcdp(0.125))
    assert zcdp_to_dp(k / 8, 1e-5) <= 8.0 < zcdp_to_dp((k + 1) / 8, 1e-5)
    assert k >= 8


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: PrivacyGuarantee(-1.0), "epsilon"),
        (lambda: PrivacyGuarantee(1.0, 2.0), "delta"),
        (lambda: PrivacyGuarantee.from_zcdp(-0.1), "rho"),
        (lambda: Accountant().spend("q", PrivacyGuarantee(1.0), count=0), "count"),
        (lambda: Accountant().spend("q", 1.0), "PrivacyGuarantee"),
        (lambda: Accountant(budget=(1.0, 0.0)), "budget"),
        (lambda: Accountant().advanced_total(0.0), "delta"),
        (lambda: PrivacyGuarantee(1.0).for_group(0), "group size"),
    ],
)
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()
