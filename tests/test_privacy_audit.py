"""Exact and statistical audits: hockey-stick divergence by a plain loop, values worked by hand on
randomized response, worst pair reporting, Clopper-Pearson coverage by enumeration, and planted bugs."""

import math

import numpy as np
import pytest
from scipy import stats

from dpgames.privacy import FiniteDistribution, WarnerResponse
from dpgames.privacy.audit import audit_black_box, audit_finite, clopper_pearson, hockey_stick_divergence
from dpgames.testing import assert_private


def test_hockey_stick_against_a_plain_loop():
    rng = np.random.default_rng(1)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        q[rng.integers(6)] = 0.0
        q /= q.sum()
        for eps in (0.0, 0.3, 2.0):
            plain = sum(max(0.0, a - math.exp(eps) * b) for a, b in zip(p, q))
            got = hockey_stick_divergence(FiniteDistribution.from_probabilities(p),
                                          FiniteDistribution.from_probabilities(q), eps)
            assert got == pytest.approx(plain, abs=1e-14)


def test_randomized_response_audit_by_hand():
    rr = WarnerResponse()  # reports: [3/4, 1/4] for a true no, [1/4, 3/4] for a true yes
    audit = audit_finite(rr, [(0, 1)], epsilon=math.log(2))
    assert audit.max_privacy_loss == pytest.approx(math.log(3))
    assert audit.delta == pytest.approx(0.75 - 2 * 0.25)  # at eps = ln 2: 3/4 - 2 * 1/4
    assert audit_finite(rr, [(0, 1)], epsilon=0.0).delta == pytest.approx(0.5)  # total variation
    assert audit.satisfies(math.log(2), 0.25) and not audit.satisfies(math.log(2), 0.2)
    assert audit.satisfies(math.log(3))


def test_worst_pair_and_outcome_are_reported():
    # a mechanism over inputs 0..3 whose outputs drift with the input; the pair (2, 3) is the worst
    table = {0: [0.5, 0.5], 1: [0.45, 0.55], 2: [0.4, 0.6], 3: [0.1, 0.9]}
    mech = lambda x: FiniteDistribution.from_probabilities(table[x], outcomes=["left", "right"])  # noqa: E731
    audit = audit_finite(mech, [(0, 1), (1, 2), (2, 3)])
    assert audit.worst_pair == (2, 3) and audit.worst_outcome == "left"
    assert audit.max_privacy_loss == pytest.approx(math.log(4))
    with pytest.raises(AssertionError, match=r"inputs 2 vs 3, outcome 'left' \(probabilities 0.4 vs 0.1\)"):
        assert_private(mech, [(0, 1), (1, 2), (2, 3)], 1.0)
    assert_private(mech, [(0, 1), (1, 2), (2, 3)], 1.0, delta=0.3)  # (1, 0.3): 0.4 - e * 0.1 = 0.128


def test_approximate_dp_is_checked_with_delta():
    p = FiniteDistribution.from_probabilities([0.0, 0.5, 0.5])
    q = FiniteDistribution.from_probabilities([0.01, 0.495, 0.495])
    mech = {"x": p, "y": q}.__getitem__
    with pytest.raises(AssertionError, match="inf"):
        assert_private(mech, [("x", "y")], 1.0)
    assert_private(mech, [("x", "y")], 0.05, delta=0.01)
    with pytest.raises(AssertionError, match="smallest delta"):
        assert_private(mech, [("x", "y")], 0.05, delta=0.005)


def test_bad_mechanisms_and_neighbours_are_refused():
    with pytest.raises(ValueError, match="FiniteDistribution"):
        audit_finite(lambda x: [0.5, 0.5], [(0, 1)])
    with pytest.raises(ValueError, match="empty"):
        audit_finite(WarnerResponse(), [])
    with pytest.raises(ValueError, match="different outcomes"):
        audit_finite(lambda x: FiniteDistribution.from_probabilities([1.0] * (x + 1)), [(1, 2)])


@pytest.mark.parametrize("p, n", [(0.3, 40), (0.02, 200), (0.9, 25)])
def test_clopper_pearson_covers_by_enumeration(p, n):
    """Pr[lower <= p] >= confidence and Pr[upper >= p] >= confidence, summed over all outcomes k."""
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    bounds = [clopper_pearson(k, n, 0.95) for k in range(n + 1)]
    assert sum(w for w, (lo, _) in zip(pmf, bounds) if lo <= p) >= 0.95
    assert sum(w for w, (_, hi) in zip(pmf, bounds) if hi >= p) >= 0.95


def test_black_box_audit_catches_broken_randomized_response():
    """Claims ln 3 (keep with probability 3/4) but keeps with probability 0.9: true eps = ln 9."""
    def rr(keep):
        return lambda bit, n, g: np.where(g.random(n) < keep, bit, 1 - bit)

    event = lambda y: y == 1  # noqa: E731
    broken = audit_black_box(rr(0.9), 1, 0, 100_000, event=event, rng=2)
    assert broken.refutes(math.log(3)) and broken.epsilon_lower_bound <= math.log(9)
    fine = [audit_black_box(rr(0.75), 1, 0, 100_000, event=event, rng=s) for s in range(5)]
    assert not any(a.refutes(math.log(3)) for a in fine)
    assert max(a.epsilon_lower_bound for a in fine) > 0.9 * math.log(3)  # and it is close to tight


def test_black_box_audit_with_delta_and_bad_input():
    gauss = lambda x, n, g: x + g.normal(0.0, 1.0, n)  # noqa: E731  mu = 1: (eps, delta(eps))-DP exactly
    from dpgames.privacy import gaussian_delta
    bound = audit_black_box(gauss, 0.0, 1.0, delta=gaussian_delta(1.0, 1.0), rng=3)
    assert not bound.refutes(1.0)
    with pytest.raises(ValueError, match="outputs"):
        audit_black_box(lambda x, n, g: np.zeros(3), 0, 1, 10)
    with pytest.raises(ValueError, match="confidence"):
        audit_black_box(gauss, 0, 1, 10, confidence=1.0)
