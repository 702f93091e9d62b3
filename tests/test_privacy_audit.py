"""Exact privacy audits: hockey-stick divergence by a plain loop, eps at delta against bisection on
it, values worked by hand on randomized response, worst pair reporting, laws as dicts over any
hashable outcomes in any order (a brute-force loop over the union of outcomes is the oracle), a
user's CustomMechanism, the candidate pairs of neighbouring_inputs, and every bad input as a clean
error."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames import CustomMechanism
from dpgames.privacy import (
    FiniteDistribution,
    KaryResponse,
    WarnerResponse,
    audit_privacy,
    neighbouring_inputs,
)
from dpgames.privacy.audit import audit_finite, epsilon_at_delta, hockey_stick_divergence
from dpgames.privacy.audit_result import PrivacyAudit
from dpgames.privacy.neighbour_inputs import Neighbours, statdp_patterns
from dpgames.testing import assert_private
from dpgames.validation import ValidationError


def test_hockey_stick_against_a_plain_loop():
    rng = np.random.default_rng(1)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        q[rng.integers(6)] = 0.0
        q /= q.sum()
        for eps in (0.0, 0.3, 2.0):
            plain = sum(max(0.0, a - math.exp(eps) * b) for a, b in zip(p, q))
            got = hockey_stick_divergence(
                FiniteDistribution.from_probabilities(p),
                FiniteDistribution.from_probabilities(q),
                eps,
            )
            assert got == pytest.approx(plain, abs=1e-14)


def _bisect_epsilon(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """The smallest eps with sum max(0, p - e^eps q) <= delta, by bisection on the plain sum."""

    def h(eps):
        return sum(max(0.0, a - math.exp(eps) * b) for a, b in zip(p, q))

    if h(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while h(hi) > delta:
        hi *= 2
        if hi > 1e3:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if h(mid) <= delta else (mid, hi)
    return hi


def test_epsilon_at_delta_closed_form_against_bisection():
    rng = np.random.default_rng(7)
    for trial in range(40):
        m = int(rng.integers(2, 9))
        p, q = rng.dirichlet(np.ones(m) * 0.7), rng.dirichlet(np.ones(m) * 0.7)
        if trial % 4 == 0:
            q[rng.integers(m)] = 0.0
            q /= q.sum()
        with np.errstate(divide="ignore"):
            log_p, loss = np.log(p), np.log(p) - np.log(q)
        loss[(p == 0) & (q == 0)] = 0.0
        for delta in (1e-4, 0.01, 0.2):
            want = _bisect_epsilon(p, q, delta)
            got = epsilon_at_delta(log_p, loss, delta)
            if math.isinf(want):
                assert math.isinf(got)
            else:
                assert got == pytest.approx(want, abs=1e-9)


def test_randomized_response_audit_by_hand():
    rr = WarnerResponse()  # reports: [3/4, 1/4] for a true no, [1/4, 3/4] for a true yes
    audit = audit_finite(rr, [(0, 1)], epsilon=math.log(2))
    assert audit.exact and audit.epsilon == pytest.approx(math.log(3))
    assert audit.delta_at_claim == pytest.approx(0.75 - 2 * 0.25)  # at eps = ln 2: 3/4 - 2 * 1/4
    # total variation
    assert audit_finite(rr, [(0, 1)], epsilon=0.0).delta_at_claim == pytest.approx(0.5)
    assert audit.satisfies(math.log(2), 0.25) and not audit.satisfies(math.log(2), 0.2)
    assert audit.satisfies(math.log(3)) and audit.refutes(1.0)
    # at delta = 0.25 the smallest eps is ln 2 (3/4 - e^eps 1/4 = 1/4), by hand
    assert audit_finite(rr, [(0, 1)], delta=0.25).epsilon == pytest.approx(math.log(2))


def test_worst_pair_and_outcome_are_reported():
    # a mechanism over inputs 0..3 whose outputs drift with the input; the pair (2, 3) is the worst
    table = {0: [0.5, 0.5], 1: [0.45, 0.55], 2: [0.4, 0.6], 3: [0.1, 0.9]}
    mech = lambda x: FiniteDistribution.from_probabilities(table[x], outcomes=["left", "right"])  # noqa: E731
    audit = audit_finite(mech, [(0, 1), (1, 2), (2, 3)])
    assert audit.worst["pair"] == (2, 3) and audit.worst["outcome"] == "left"
    assert audit.epsilon == pytest.approx(math.log(4)) and audit.pairs == 3
    with pytest.raises(
        AssertionError, match=r"inputs 2 vs 3, outcome 'left' \(probabilities 0.4 vs 0.1\)"
    ):
        assert_private(mech, [(0, 1), (1, 2), (2, 3)], 1.0)
    # (1, 0.3): 0.4 - e * 0.1 = 0.128
    assert_private(mech, [(0, 1), (1, 2), (2, 3)], 1.0, delta=0.3)


def test_approximate_dp_is_checked_with_delta():
    p = FiniteDistribution.from_probabilities([0.0, 0.5, 0.5])
    q = FiniteDistribution.from_probabilities([0.01, 0.495, 0.495])
    mech = {"x": p, "y": q}.__getitem__
    with pytest.raises(AssertionError, match="inf"):
        assert_private(mech, [("x", "y")], 1.0)
    assert_private(mech, [("x", "y")], 0.05, delta=0.01)
    with pytest.raises(AssertionError, match=r"not \(0.05, 0.005\)-DP"):
        assert_private(mech, [("x", "y")], 0.05, delta=0.005)


def _brute_force_epsilon(laws: dict, pairs: list) -> float:
    """max |ln p(o) - ln q(o)| over the union of outcomes of each pair, outcome missing =
    probability 0."""
    worst = 0.0
    for x, y in pairs:
        for o in set(laws[x]) | set(laws[y]):
            p, q = laws[x].get(o, 0.0), laws[y].get(o, 0.0)
            if p == q == 0:
                continue
            worst = max(worst, math.inf if min(p, q) == 0 else abs(math.log(p) - math.log(q)))
    return worst


outcome_labels = st.one_of(
    st.integers(-3, 3),
    st.sampled_from(["a", "b", "c"]),
    st.tuples(st.sampled_from(["T", "F"]), st.integers(0, 2)),
)


@st.composite
def dict_laws(draw):
    keys = draw(st.lists(outcome_labels, min_size=1, max_size=6, unique=True))
    weights = draw(st.lists(st.floats(0.0, 1.0), min_size=len(keys), max_size=len(keys)))
    if sum(weights) == 0:
        weights[0] = 1.0
    total = sum(weights)
    return {k: w / total for k, w in zip(keys, weights)}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(dict_laws(), min_size=2, max_size=4), st.data())
def test_dict_laws_over_any_outcomes_match_brute_force(laws, data):
    laws = dict(enumerate(laws))
    pairs = data.draw(
        st.lists(
            st.tuples(st.sampled_from(list(laws)), st.sampled_from(list(laws))),
            min_size=1,
            max_size=5,
        )
    )
    audit = audit_privacy(laws.__getitem__, pairs)
    want = _brute_force_epsilon(laws, pairs)
    assert audit.exact
    assert (
        audit.epsilon == pytest.approx(want, abs=1e-9)
        if math.isfinite(want)
        else math.isinf(audit.epsilon)
    )
    x, y = audit.worst["pair"]
    p, q = audit.worst["probabilities"]
    assert laws[x].get(audit.worst["outcome"], 0.0) == pytest.approx(p)
    assert laws[y].get(audit.worst["outcome"], 0.0) == pytest.approx(q)


def test_listing_order_and_tuple_labels_do_not_matter():
    a = {("T", 1): 0.6, ("F", 0): 0.4}
    b = {("F", 0): 0.5, ("T", 1): 0.5}
    audit = audit_privacy({0: a, 1: b}.__getitem__, [(0, 1)])
    assert audit.epsilon == pytest.approx(math.log(0.5 / 0.4))  # > ln(0.6 / 0.5)
    assert audit.worst["outcome"] == ("F", 0)  # a tuple, not ['F', '0']
    assert audit.worst["pair"] == (1, 0)
    law = FiniteDistribution.from_probabilities([0.6, 0.4], outcomes=[("T", 1), ("F", 0)])
    other = FiniteDistribution.from_probabilities([0.5, 0.5], outcomes=[("F", 0), ("T", 1)])
    assert audit_finite({0: law, 1: other}.__getitem__, [(0, 1)]).epsilon == pytest.approx(
        audit.epsilon
    )
    mixed = FiniteDistribution.from_probabilities([1, 1, 2], outcomes=["a", 1, ("a", 1)])
    assert mixed.outcomes.tolist() == ["a", 1, ("a", 1)]


def test_custom_mechanism_is_audited_exactly_over_one_report_changes():
    """Randomized response on each agent's bit, released as the noisy count: a CustomMechanism whose
    law is a dict.  Neighbours: one agent's report changes.  Oracle: KaryResponse's eps, ln 3."""
    keep = 0.75

    def rule(reports):
        law = {0: 1.0}
        for bit in reports:  # the count's law, built by convolution
            flip = {bit: keep, 1 - bit: 1 - keep}
            new: dict = {}
            for c, p in law.items():
                for b, w in flip.items():
                    new[c + b] = new.get(c + b, 0.0) + p * w
            law = new
        return law

    mech = CustomMechanism(rule, lambda t, o: 0.0, types=[0, 1])
    audit = audit_privacy(mech, n=3)
    # 8 profiles x 3 agents, each pair met from both ends once
    assert audit.exact and audit.pairs == 12
    assert audit.epsilon == pytest.approx(math.log(3))
    assert "report" in audit.relation
    assert_private(mech, epsilon=math.log(3), n=3)
    with pytest.raises(AssertionError):
        assert_private(mech, epsilon=1.0, profiles=[(0, 0, 1)])
    at = audit_privacy(mech, profiles=[(0, 0, 1)])
    assert at.pairs == 3


@pytest.mark.parametrize(
    "n, m, anonymous",
    [(1, 3, False), (3, 2, False), (2, 4, False), (3, 3, True), (4, 2, True), (1, 1, False)],
)
def test_neighbouring_reports_counts_against_brute_force(n, m, anonymous):
    """The pairs of a CustomMechanism against a brute-force set of unordered pairs differing in one
    report (multisets when anonymous)."""
    import itertools

    mech = CustomMechanism(lambda r: 0, lambda t, o: 0.0, types=range(m), anonymous=anonymous)
    pairs = mech.neighbouring_reports(n=n)
    norm = (lambda p: tuple(sorted(p))) if anonymous else tuple
    got = [frozenset((norm(a), norm(b))) for a, b in pairs]
    want = {
        frozenset((norm(a), norm(b)))
        for a in itertools.product(range(m), repeat=n)
        for b in itertools.product(range(m), repeat=n)
        if sum(x != y for x, y in zip(a, b)) == 1 and norm(a) != norm(b)
    }
    if m == 1:
        assert len(got) == len(pairs) == 1
        return
    assert len(got) == len(set(got)) == len(pairs) and set(got) == want


def test_neighbouring_inputs_patterns_satisfy_their_relations():
    for length in (1, 2, 5, 10):
        for relation in ("all-entries", "one-entry", "add-remove"):
            pairs = neighbouring_inputs(length, relation, random=7, rng=3)
            assert len(list(pairs)) == len(pairs) == len(pairs.names)
            for x, y in pairs:
                moved = np.abs(np.asarray(x) - np.asarray(y))
                assert moved.max() <= 1 + 1e-12 and (x >= -10).all() and (y <= 10).all()
                if relation != "all-entries":
                    assert np.count_nonzero(moved) == 1
                if relation == "add-remove":
                    assert (x >= 0).all() and (y >= 0).all() and moved.max() == 1
    names = [name for name, _, _ in statdp_patterns(6, "first")]
    assert names == [
        "one above",
        "one below",
        "one above rest below",
        "one below rest above",
        "half half",
        "all above",
        "all below",
        "X shape",
    ]
    assert len(statdp_patterns(6, "all")) == 4 * 6 + 5 and len(statdp_patterns(6)) == 4 * 2 + 5
    assert len(statdp_patterns(1)) == 4 + 4  # one position; no reversed half half
    a, b = neighbouring_inputs(5, random=4, rng=1), neighbouring_inputs(5, random=4, rng=1)
    assert all(
        np.array_equal(x1, x2) and np.array_equal(y1, y2) for (x1, y1), (x2, y2) in zip(a, b)
    )


@settings(max_examples=80, deadline=None)
@given(
    length=st.one_of(st.integers(-2, 30), st.floats(), st.text(max_size=2)),
    relation=st.one_of(
        st.sampled_from(["all-entries", "one-entry", "add-remove", "x"]), st.integers()
    ),
    low=st.one_of(st.floats(-50, 50), st.just(math.nan)),
    high=st.floats(-50, 60),
    random=st.one_of(st.integers(-1, 20), st.booleans()),
)
def test_neighbouring_inputs_arguments_fuzz(length, relation, low, high, random):
    try:
        pairs = neighbouring_inputs(length, relation, low=low, high=high, random=random, rng=0)
    except ValidationError:
        return
    assert len(pairs) >= 1
    for x, y in pairs:
        assert np.isfinite(x).all() and np.isfinite(y).all() and np.abs(x - y).max() <= 1 + 1e-12


def test_bad_laws_and_mechanisms_are_clean_errors():
    with pytest.raises(ValidationError, match="FiniteDistribution or a mapping"):
        audit_finite(lambda x: [0.5, 0.5], [(0, 1)])
    with pytest.raises(ValidationError, match="sum to 0.9"):
        audit_privacy(lambda x: {"a": 0.5, "b": 0.4}, [(0, 1)])
    with pytest.raises(ValidationError, match=">= 0"):
        audit_privacy(lambda x: {"a": 1.5, "b": -0.5}, [(0, 1)])
    with pytest.raises(ValidationError, match="empty"):
        audit_finite(WarnerResponse(), [])
    with pytest.raises(ValidationError, match="pair"):
        audit_finite(WarnerResponse(), [(0, 1, 2)])
    with pytest.raises(ValidationError, match=r"raised ZeroDivisionError on input 2"):
        audit_privacy(lambda x: {"a": 1.0} if x < 2 else 1 / 0, [(1, 2)])
    with pytest.raises(ValidationError, match="one parameter .* or three"):
        audit_privacy(lambda x, y: {"a": 1.0}, [(1, 2)])
    with pytest.raises(ValidationError, match="neighbours"):
        audit_privacy(lambda x: {"a": 1.0})
    with pytest.raises(ValidationError, match="not a string"):
        audit_privacy(lambda x: {"a": 1.0}, "ab")
    with pytest.raises(ValidationError, match="n and profiles"):
        audit_privacy(lambda x: {"a": 1.0}, [(0, 1)], n=3)
    with pytest.raises(ValidationError, match="not hashable"):
        audit_finite(
            lambda x: FiniteDistribution.from_probabilities([1, 1], outcomes=[{x: 1}, "b"]),
            [(0, 1)],
        )


def test_result_invariants_are_checked():
    with pytest.raises(ValidationError):
        PrivacyAudit(-0.1, True, {"pair": (0, 1), "outcome": 0, "probabilities": (1.0, 1.0)}, 1)
    with pytest.raises(ValidationError):
        PrivacyAudit(
            math.inf,
            False,
            {"pair": (0, 1), "event": "", "counts": (1, 1), "samples": (1, 1)},
            1,
            confidence=0.9,
        )
    with pytest.raises(ValidationError):
        PrivacyAudit(math.nan, True, {"pair": (0, 1), "outcome": 0, "probabilities": (1.0, 1.0)}, 1)


def test_exact_audit_of_kary_response_on_neighbours_object():
    k = KaryResponse(3, 1.0)
    pairs = Neighbours.of(
        [(i, j) for i in range(3) for j in range(3) if i < j], "any answer changes"
    )
    audit = audit_privacy(k, pairs, epsilon=1.0)
    assert audit.epsilon == pytest.approx(1.0) and audit.relation == "any answer changes"
    assert audit.delta_at_claim == pytest.approx(0.0, abs=1e-12)
    assert "any answer changes" in audit.describe()
