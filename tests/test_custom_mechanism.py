"""CustomMechanism and its audits against plain brute-force loops written here.

Oracles: expected utilities summed outcome by outcome over the rule's own dict; every profile listed
by itertools; interim gains summed over every profile of the others with product weights; the exact
law of a simulator against its sampled audit's confidence intervals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.analysis.custom_audit import custom_truthfulness_audit, dominant_audit, ex_post_audit
from dpgames.analysis.custom_enumeration import ENUMERATION_LIMIT
from dpgames.analysis.limits import count_profiles
from dpgames.analysis.sampled_audit import bayesian_audit, sampled_audit
from dpgames.analysis.truthfulness import truthfulness_audit
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.testing import assert_truthful, profiles
from dpgames.validation import ValidationError


def median_rule(reports):
    return sorted(reports)[len(reports) // 2]


def mean_rule(reports):
    return round(sum(reports) / len(reports))


def distance(t, outcome):
    return -abs(t - outcome)


# --- brute force, written plainly
# ------------------------------------------------------------------------
def law_dict(rule, reports):
    out = rule(tuple(reports))
    return dict(out) if isinstance(out, dict) else {out: 1.0}


def brute_eu(rule, utility, payments, agent, t, reports, with_agent=False):
    total = 0.0
    for o, p in law_dict(rule, reports).items():
        total += p * (utility(t, o, agent) if with_agent else utility(t, o))
    if payments is not None:
        total -= payments(tuple(reports))[agent]
    return total


def brute_ex_post(rule, utility, payments, types, profile, with_agent=False):
    """gains[i][t][x]: agent i, true type t, report x, the others as in profile."""
    n, m = len(profile), len(types)
    gains = np.zeros((n, m, m))
    for i in range(n):
        for a, t in enumerate(types):
            for b, x in enumerate(types):
                lie = list(profile)
                lie[i] = x
                truth = list(profile)
                truth[i] = t
                gains[i, a, b] = brute_eu(
                    rule, utility, payments, i, t, lie, with_agent
                ) - brute_eu(rule, utility, payments, i, t, truth, with_agent)
    return gains


def brute_dominant(rule, utility, payments, types, n, with_agent=False):
    best = -math.inf
    for profile in itertools.product(types, repeat=n):
        for i in range(n):
            truth = brute_eu(rule, utility, payments, i, profile[i], profile, with_agent)
            for x in types:
                if x != profile[i]:
                    lie = list(profile)
                    lie[i] = x
                    best = max(
                        best,
                        brute_eu(rule, utility, payments, i, profile[i], lie, with_agent) - truth,
                    )
    return best


def brute_interim(rule, utility, payments, types, priors, i, with_agent=False):
    """gains[t][x] of agent i: sum over every profile of the others with product weights."""
    n, m = len(priors), len(types)
    out = np.zeros((m, m))
    rest = [j for j in range(n) if j != i]
    for others in itertools.product(range(m), repeat=n - 1):
        w = 1.0
        for j, k in zip(rest, others):
            w *= priors[j][k]
        if w == 0:
            continue
        for a, t in enumerate(types):
            for b, x in enumerate(types):
                lie = [types[k] for k in others]
                lie.insert(i, x)
                truth = [types[k] for k in others]
                truth.insert(i, t)
                out[a, b] += w * (
                    brute_eu(rule, utility, payments, i, t, lie, with_agent)
                    - brute_eu(rule, utility, payments, i, t, truth, with_agent)
                )
    return out


# a randomised, agent-dependent mechanism with payments: agent 0 is favoured, a lottery over two
# prices
def lottery_rule(reports):
    top = max(reports)
    return {
        ("low", top): 0.25,
        ("high", top): 0.75 - 0.05 * reports[0] / 4,
        ("none", 0): 0.05 * reports[0] / 4,
    }


def lottery_utility(t, outcome, agent):
    kind, level = outcome
    bonus = 1.5 if agent == 0 else 0.0
    return {"low": 1.0, "high": 0.5, "none": 0.0}[kind] * t - 0.3 * level + bonus * (kind == "none")


def lottery_payments(reports):
    return [0.1 * r - 0.05 * sum(reports) / len(reports) for r in reports]


LOTTERY = {"types": [0, 1, 2, 4]}


def lottery_mechanism(**extra):
    return CustomMechanism(
        lottery_rule, lottery_utility, LOTTERY["types"], payments=lottery_payments, **extra
    )


# --- exactness against brute force
# ------------------------------------------------------------------------
def test_ex_post_own_and_all_match_brute_force_with_payments_and_agent_utility():
    mech = lottery_mechanism()
    profile = [4, 1, 1, 0]
    expected = brute_ex_post(
        lottery_rule, lottery_utility, lottery_payments, LOTTERY["types"], profile, True
    )
    every = ex_post_audit(mech, profile, "all")
    np.testing.assert_allclose(every.gains, expected, atol=1e-12)
    own = ex_post_audit(mech, profile)
    types = LOTTERY["types"]
    rows = np.array([expected[i, types.index(profile[i])] for i in range(4)])
    np.testing.assert_allclose(own.gains, rows, atol=1e-12)
    masked = [(rows[i, b], i, b) for i in range(4) for b in range(4) if types[b] != profile[i]]
    gain, i, b = max(masked)
    assert own.max_gain == pytest.approx(gain, abs=1e-12)
    assert own.worst_case == {
        "agent": i,
        "true_type": profile[i],
        "lie": types[b],
        "gain": pytest.approx(gain),
        "profile": tuple(profile),
    }
    assert mech.expected_utility(2, 4, profile) == pytest.approx(
        brute_eu(lottery_rule, lottery_utility, lottery_payments, 2, 4, profile, True), abs=1e-12
    )
    outcomes, probs = mech.law(profile)
    assert dict(zip(outcomes, probs)) == pytest.approx(lottery_rule(tuple(profile)))


def test_anonymous_and_plain_audits_agree_and_share_the_law_of_permutations():
    def rule(reports):  # a symmetric lottery: the median or the mean, rounded
        return (
            {median_rule(reports): 0.6, mean_rule(reports): 0.4}
            if median_rule(reports) != mean_rule(reports)
            else {median_rule(reports): 1.0}
        )

    types = list(range(6))
    anon = CustomMechanism(rule, distance, types, anonymous=True)
    plain = CustomMechanism(rule, distance, types)
    profile = [5, 0, 2, 2, 3]
    a, p = ex_post_audit(anon, profile, "all"), ex_post_audit(plain, profile, "all")
    # the anonymous audit keeps the first agent of each type; the plain one every agent
    np.testing.assert_allclose(a.gains, p.gains[a.agents], atol=1e-12)
    np.testing.assert_allclose(p.gains[3], p.gains[2], atol=1e-12)  # equal types, equal gains
    assert a.max_gain == pytest.approx(p.max_gain, abs=1e-12)
    assert dominant_audit(anon, 3).max_gain == pytest.approx(
        dominant_audit(plain, 3).max_gain, abs=1e-12
    )
    assert dominant_audit(plain, 3).max_gain == pytest.approx(
        brute_dominant(rule, distance, None, types, 3)
    )


def test_rule_calls_are_distinct_class_lie_pairs_plus_one():
    profile = [3, 7, 5, 1, 9, 3, 3, 7]
    anon = CustomMechanism(median_rule, distance, range(11), anonymous=True)
    ex_post_audit(anon, profile)
    classes = len(set(profile))
    assert anon.rule_calls == classes * 10 + 1
    # the anonymity check: 8 profiles and their permutations, counted apart
    assert anon.check_calls == 16
    ex_post_audit(anon, profile)
    assert anon.rule_calls == classes * 10 + 1  # all cached
    plain = CustomMechanism(median_rule, distance, range(11))
    ex_post_audit(plain, profile)
    assert plain.rule_calls == len(profile) * 10 + 1 and plain.check_calls == 0


def test_cache_bound_drops_old_laws_but_keeps_the_figures():
    small = CustomMechanism(mean_rule, distance, range(5), cache_size=3)
    big = CustomMechanism(mean_rule, distance, range(5))
    a, b = ex_post_audit(small, [4, 0, 1]), ex_post_audit(big, [4, 0, 1])
    np.testing.assert_array_equal(a.gains, b.gains)
    assert len(small._cache) <= 3
    ex_post_audit(small, [4, 0, 1])
    ex_post_audit(big, [4, 0, 1])
    assert small.rule_calls > big.rule_calls == 3 * 4 + 1


@pytest.mark.parametrize("anonymous", [True, False])
def test_dominant_enumeration_counts_and_max_gain(anonymous):
    n, types = 3, list(range(5))
    mech = CustomMechanism(mean_rule, distance, types, anonymous=anonymous)
    audit = dominant_audit(mech, n, "all")
    listed = (
        itertools.combinations_with_replacement(types, n)
        if anonymous
        else itertools.product(types, repeat=n)
    )
    count = len(list(listed))
    assert audit.profiles == count == count_profiles(mech, n)
    assert mech.rule_calls == count
    assert audit.max_gain == pytest.approx(
        brute_dominant(mean_rule, distance, None, types, n), abs=1e-12
    )
    w = audit.worst_case
    # the named worst case is a real lie of that size at that profile
    lie = list(w["profile"])
    lie[w["agent"]] = w["lie"]
    assert w["profile"][w["agent"]] == w["true_type"]
    assert distance(w["true_type"], mean_rule(tuple(lie))) - distance(
        w["true_type"], mean_rule(w["profile"])
    ) == pytest.approx(w["gain"])
    assert "exact: every one of the" in audit.describe()


def test_dominant_enumeration_with_payments_and_agent_utility_matches_brute_force():
    mech = lottery_mechanism()
    audit = dominant_audit(mech, 3, "all")
    assert audit.max_gain == pytest.approx(
        brute_dominant(lottery_rule, lottery_utility, lottery_payments, LOTTERY["types"], 3, True),
        abs=1e-12,
    )


@pytest.mark.slow
def test_random_profiles_and_search_find_a_planted_worst_profile():
    """Agent 0 gains 20 - |r1 - 7| - |r2 - 3| by reporting 9: the worst profiles are (t != 9, 7, 3),
    gain 20."""

    def rule(reports):
        return tuple(reports)

    def utility(t, outcome, agent):
        if agent != 0 or outcome[0] != 9:
            return 0.0
        return 20.0 - abs(outcome[1] - 7) - abs(outcome[2] - 3)

    mech = CustomMechanism(rule, utility, range(10))
    exact = dominant_audit(mech, 3, "all")
    assert exact.max_gain == 20.0
    search = dominant_audit(mech, 3, "search", rng=5, restarts=3)
    assert search.max_gain == 20.0
    w = search.worst_case
    assert (w["agent"], w["lie"], w["profile"][1:]) == (0, 9, (7, 3)) and w["profile"][0] != 9
    assert "not a proof" in search.describe()
    assert search.profiles < 1000  # visited far fewer than the 1,000 profiles
    again = dominant_audit(
        CustomMechanism(rule, utility, range(10)), 3, "search", rng=5, restarts=3
    )
    assert again.worst_case == w  # deterministic given the seed
    sample = dominant_audit(mech, 3, 40, rng=1)
    assert 0 < sample.max_gain <= 20.0 and sample.profiles == 40


def test_enumeration_refused_above_the_limits():
    """Above the count limit at once; above a million evaluations, after timing one chunk, when the
    estimate exceeds max_seconds (here 10 ms for 4 x 10^8 evaluations of a Python rule)."""
    huge = CustomMechanism(median_rule, distance, range(1000))
    with pytest.raises(
        ValidationError, match=r"4,000,000,000,000 profiles.*profiles=K.*profiles='search'"
    ) as info:
        dominant_audit(huge, 4, "all")
    assert info.value.field == "profiles" and count_profiles(huge, 4) * 4 > ENUMERATION_LIMIT
    mech = CustomMechanism(median_rule, distance, range(100))
    with pytest.raises(
        ValidationError,
        match=r"400,000,000 profiles, about [\d,]+ s here \(timed on 1[\d,]+\), above "
        r"max_seconds=0.01; use a batched rule",
    ) as info:
        dominant_audit(mech, 4, "all", max_seconds=0.01, chunk_size=10_000)
    assert info.value.field == "profiles"


# --- Bayesian
# ---------------------------------------------------------------------------------------------
def test_bayesian_exact_matches_brute_force_per_agent_priors():
    types = LOTTERY["types"]
    priors = [[0.1, 0.2, 0.3, 0.4], {0: 0.5, 4: 0.5}, np.array([0.25, 0.25, 0.25, 0.25])]
    audit = bayesian_audit(lottery_mechanism(), priors, 3)
    assert audit.exact and audit.worst_case["profile"] is None
    as_arrays = [[0.1, 0.2, 0.3, 0.4], [0.5, 0, 0, 0.5], [0.25] * 4]
    for i in range(3):
        expected = brute_interim(
            lottery_rule, lottery_utility, lottery_payments, types, as_arrays, i, True
        )
        np.testing.assert_allclose(audit.gains[i], expected, atol=1e-12)


def test_bayesian_multisets_agree_with_products_and_monte_carlo_covers():
    prior = {0: 0.1, 1: 0.2, 2: 0.3, 3: 0.15, 4: 0.25}
    vector = [0.1, 0.2, 0.3, 0.15, 0.25]
    anon = bayesian_audit(CustomMechanism(mean_rule, distance, range(5), anonymous=True), prior, 4)
    plain = bayesian_audit(CustomMechanism(mean_rule, distance, range(5)), prior, 4)
    assert anon.agents.tolist() == [0] and plain.agents.tolist() == [0, 1, 2, 3]
    expected = brute_interim(mean_rule, distance, None, list(range(5)), [vector] * 4, 0)
    np.testing.assert_allclose(anon.gains[0], expected, atol=1e-12)
    np.testing.assert_allclose(plain.gains[2], expected, atol=1e-12)
    mc = bayesian_audit(
        CustomMechanism(mean_rule, distance, range(5), anonymous=True),
        prior,
        4,
        samples=4000,
        rng=3,
    )
    assert not mc.exact and mc.worst_case["ci"] is not None
    off = ~np.eye(5, dtype=bool)
    inside = np.abs(mc.gains[0] - expected) <= mc.half_width[0] + 1e-12
    assert inside[off].mean() >= 0.85
    assert "Monte Carlo" in mc.describe() and "exact over" in anon.describe()


def test_bayesian_truthful_median_and_bad_priors():
    mech = CustomMechanism(median_rule, distance, range(6), anonymous=True)
    assert bayesian_audit(mech, [1 / 6] * 6, 5).is_truthful()
    for prior, text in [
        ([0.5, 0.5], "one probability per type"),
        ({0: 0.5, 1: 0.6}, "sum to"),
        ({0: 1.5, 1: -0.5}, ">= 0"),
        ({9: 1.0}, "not in types"),
        ([[1 / 6] * 6] * 2, "list of 5"),
    ]:
        with pytest.raises(ValidationError, match=text):
            bayesian_audit(mech, prior, 5)


# --- sampling-only mechanisms
# -----------------------------------------------------------------------------
NOISE = (-1, 0, 1)


def noisy(center):
    def simulator(reports, rng):
        return int(np.clip(center(reports) + NOISE[rng.integers(3)], 0, 6))

    def exact(reports):
        law = {}
        for z in NOISE:
            o = int(np.clip(center(reports) + z, 0, 6))
            law[o] = law.get(o, 0.0) + 1 / 3
        return law

    return simulator, exact


@pytest.mark.slow
@pytest.mark.parametrize("center, truthful", [(median_rule, True), (mean_rule, False)])
def test_sampled_audit_against_the_exact_law_of_the_same_simulator(center, truthful):
    simulator, exact = noisy(center)
    profile = [6, 1, 2, 4, 0]
    sampled = sampled_audit(
        CustomMechanism(simulator, distance, range(7)), profile, samples=1500, rng=11
    )
    truth = ex_post_audit(CustomMechanism(exact, distance, range(7)), profile)
    lies = np.ones_like(truth.gains, dtype=bool)
    lies[np.arange(5), profile] = False
    inside = np.abs(sampled.gains - truth.gains) <= sampled.half_width + 1e-12
    assert inside[lies].mean() >= 0.85
    assert truth.is_truthful() is truthful
    assert sampled.is_truthful() is truthful
    if not truthful:
        bad = sampled.violation()
        assert bad["ci"][0] > 0
        assert truth.gains[bad["agent"], bad["lie"]] > 0  # the flagged lie really gains
        with pytest.raises(AssertionError, match=r"95% CI .* by reporting"):
            assert_truthful(
                simulator, profile, utility=distance, types=range(7), samples=300, rng=11
            )
    else:
        assert "no lie gains more than 0 at 95% simultaneous confidence" in sampled.describe()


def test_sampled_rule_refused_by_exact_audits_and_counts_draws():
    simulator, _ = noisy(median_rule)
    mech = CustomMechanism(simulator, distance, range(7), anonymous=True)
    for kwargs in ({"n": 3, "profiles": "all"}, {"n": 3, "prior": [1 / 7] * 7}):
        with pytest.raises(ValidationError, match="sampling-only.*samples="):
            custom_truthfulness_audit(mech, **kwargs)
    with pytest.raises(ValidationError, match="sampled audit"):
        mech.law([1, 2, 3])
    audit = truthfulness_audit(mech, [1, 2, 2], samples=50)
    assert audit.draws == 50 * (1 + 2 * 6)  # the truthful draws are shared by every deviation
    with pytest.raises(ValidationError, match="own type only"):
        truthfulness_audit(mech, [1, 2, 2], true_types="all")


def test_sampled_audit_with_payments_covers_the_exact_gains():
    """A noisy posted price: an agent is served when she reports at least the noisy price and pays
    0.2 x her report in expectation; the exact law of the same simulator is the oracle."""

    def simulator(reports, rng):
        price = 2 + int(rng.integers(3))
        return tuple(r >= price for r in reports)

    def exact(reports):
        law = {}
        for price in (2, 3, 4):
            o = tuple(r >= price for r in reports)
            law[o] = law.get(o, 0.0) + 1 / 3
        return law

    def utility(t, outcome, agent):
        return float(t) * outcome[agent]

    def payments(reports):
        return [0.2 * r + 0.5 * (r >= 3) for r in reports]

    profile = [1, 4, 3, 2]
    sampled = sampled_audit(
        CustomMechanism(simulator, utility, range(6), payments=payments), profile, samples=800
    )
    truth = ex_post_audit(CustomMechanism(exact, utility, range(6), payments=payments), profile)
    expected = brute_ex_post(exact, utility, payments, list(range(6)), profile, True)
    np.testing.assert_allclose(truth.gains, [expected[i, profile[i]] for i in range(4)], atol=1e-12)
    lies = np.ones_like(truth.gains, dtype=bool)
    lies[np.arange(4), profile] = False
    inside = np.abs(sampled.gains - truth.gains) <= sampled.half_width + 1e-12
    assert inside[lies].mean() >= 0.85
    assert sampled.is_truthful() is truth.is_truthful()


# --- entry points
# -----------------------------------------------------------------------------------------
def test_worked_examples_and_failure_messages():
    mech = CustomMechanism(median_rule, distance, types=range(11), anonymous=True)
    assert_truthful(mech, [3, 7, 5, 1, 9])
    assert_truthful(mech, [3, 7, 5, 1, 9], true_types="all")
    assert_truthful(mech, n=5, profiles="all")
    assert_truthful(median_rule, [3, 7, 5, 1, 9], utility=distance, types=range(11))
    audit = truthfulness_audit(median_rule, [3, 7, 5, 1, 9], utility=distance, types=range(11))
    assert audit.max_gain <= 0
    mean = CustomMechanism(mean_rule, distance, types=range(11), anonymous=True)
    with pytest.raises(
        AssertionError,
        match=r"agent 0 \(true type 3\) gains 1 by reporting 0 at profile "
        r"\(3, 7, 5, 1, 9\)",
    ):
        assert_truthful(mean, [3, 7, 5, 1, 9])
    with pytest.raises(AssertionError, match=r"gains 2 by reporting .* at profile"):
        assert_truthful(mean, n=3, profiles="all")
    assert_truthful(mean, [3, 7, 5, 1, 9], tol=1.0)
    with pytest.raises(ValueError, match="for a CustomMechanism"):
        from dpgames.mechanisms.commitment import CommitmentMechanism
        from dpgames.mechanisms.facility_location import (
            facility_location_environment,
            line_graph,
        )

        assert_truthful(
            CommitmentMechanism(facility_location_environment(line_graph(4), k=1)), [0, 1], n=2
        )
    with pytest.raises(ValidationError, match="utility"):
        assert_truthful(median_rule, [1, 2])
    with pytest.raises(ValidationError, match="profile"):
        truthfulness_audit(mech)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(profiles(range(6), 4))
def test_profiles_strategy_median_truthful_at_every_profile(profile):
    assert len(profile) == 4 and set(profile) <= set(range(6))
    assert_truthful(
        median_rule, profile, utility=distance, types=range(6), anonymous=True, true_types="all"
    )


def test_law_forms_and_vectorized_utility_agree():
    def as_distribution(reports):
        return FiniteDistribution.from_probabilities(
            [0.2, 0.8], outcomes=[min(reports), max(reports)]
        )

    def as_dict(reports):
        law = {min(reports): 0.2}
        law[max(reports)] = law.get(max(reports), 0.0) + 0.8
        return law

    def vector_distance(types, outcomes):
        return -np.abs(np.asarray(types)[:, None] - np.asarray(outcomes)[None, :])

    profile = [2, 0, 4]
    a = ex_post_audit(CustomMechanism(as_distribution, distance, range(5)), profile, "all")
    b = ex_post_audit(CustomMechanism(as_dict, distance, range(5)), profile, "all")
    c = ex_post_audit(
        CustomMechanism(as_dict, vector_distance, range(5), vectorized=True), profile, "all"
    )
    np.testing.assert_allclose(a.gains, b.gains, atol=1e-12)
    np.testing.assert_allclose(c.gains, b.gains, atol=1e-12)
    np.testing.assert_allclose(
        b.gains, brute_ex_post(as_dict, distance, None, list(range(5)), profile), atol=1e-12
    )


# --- bad input
# --------------------------------------------------------------------------------------------
def _refused(
    rule, utility=distance, types=range(4), profile=(1, 2, 3), field="rule", text="", **kw
):
    with pytest.raises(ValidationError, match=text) as info:
        ex_post_audit(CustomMechanism(rule, utility, types, **kw), list(profile))
    assert info.value.field == field
    return info.value


def test_bad_laws_and_outcomes():
    _refused(lambda r: {0: 0.5, 1: 0.4}, text=r"summing to 0\.9.* at reports")
    _refused(lambda r: {0: 1.2, 1: -0.2}, text=r"outcome 1 the probability -0\.2")
    _refused(lambda r: {0: float("nan"), 1: 1.0}, text="probability nan")
    _refused(lambda r: [1, 2], text="non-hashable outcome")
    _refused(lambda r: (1, [2]), text=r"non-hashable outcome \(1, \[2\]\)")
    _refused(lambda r: np.zeros(2), text="non-hashable outcome")
    # an indicator utility returning bools is a utility of 0 or 1
    own = ex_post_audit(CustomMechanism(max, lambda t, o: o == t, range(4)), [1, 2, 3])
    assert own.max_gain == 0.0 and own.gains[0, 3] == 0.0
    _refused(lambda r: {}, text="empty law")
    # within the tolerance: accepted and normalised
    ex_post_audit(CustomMechanism(lambda r: {0: 0.5, 1: 0.5 + 5e-10}, distance, range(4)), [1, 2])


def test_errors_inside_the_users_functions_name_where():
    def boom(reports):
        if reports == (1, 0, 3):
            raise KeyError("no such case")
        return 0

    err = _refused(boom, text=r"raised KeyError: 'no such case' at reports \(1, 0, 3\)")
    assert isinstance(err.__cause__, KeyError)

    def picky(t, outcome):
        if outcome == 3:
            raise ValueError("outcome 3 is not allowed")
        return 0.0

    err = _refused(
        max,
        utility=picky,
        field="utility",
        text=r"ValueError: outcome 3 is not allowed at type \d, "
        r"outcome 3",
    )
    assert isinstance(err.__cause__, ValueError)
    _refused(
        max,
        utility=lambda t, o, i: math.inf if i == 2 else 0.0,
        field="utility",
        text=r"finite number, got inf at type \d, outcome \d, agent 2",
    )
    _refused(max, utility=lambda t, o: float("nan"), field="utility", text="got nan")
    _refused(max, payments=lambda r: [0, 0], field="payments", text=r"one payment per agent \(3\)")
    _refused(max, payments=lambda r: [0, math.nan, 0], field="payments", text="non-finite payment")
    err = _refused(
        max,
        payments=lambda r: 1 / 0,
        field="payments",
        text=r"ZeroDivisionError.*at reports \(1, 2, 3\)",
    )
    assert isinstance(err.__cause__, ZeroDivisionError)
    _refused(
        max, utility=lambda t, o: np.zeros((2, 2)), vectorized=True, field="utility", text="shape"
    )


def test_bad_reports_types_and_signatures():
    _refused(
        max, profile=(1, 7, 2), field="profile", text=r"agent 1 reports 7, which is not in types"
    )
    _refused(max, profile=(1, [2], 2), field="profile", text="agent 1 reports")
    for types, text in [
        ([], "at least one"),
        ([1, 1], "twice"),
        ([[1], [2]], "type_spaces="),
        ([range(3), range(2)], "type_spaces="),
        (5, "iterable"),
    ]:
        with pytest.raises(ValidationError, match=text):
            CustomMechanism(max, distance, types)
    with pytest.raises(ValidationError, match=r"\(reports\) or \(reports, rng\).*3"):
        CustomMechanism(lambda a, b, c: 0, distance, range(3))
    with pytest.raises(
        ValidationError, match=r"\(t, outcome\) or \(t, outcome, agent\).*1 required"
    ):
        CustomMechanism(max, lambda t: 0, range(3))
    with pytest.raises(
        ValidationError,
        match="anonymous is declared True, which needs a utility that ignores the agent",
    ):
        CustomMechanism(max, lambda t, o, i: 0, range(3), anonymous=True)
    with pytest.raises(ValidationError, match="not \\*args"):
        CustomMechanism(max, lambda *a: 0, range(3))


def test_false_anonymity_refused_naming_profile_and_permutation():
    with pytest.raises(
        ValidationError,
        match=r"anonymous is declared True, but the law at reports "
        r"\(1, 2, 3\) .* \(permutation \[",
    ) as info:
        ex_post_audit(
            CustomMechanism(lambda r: r[0], distance, range(4), anonymous=True), [1, 2, 3]
        )
    assert info.value.field == "anonymous"
    with pytest.raises(ValidationError, match="payments"):
        # same law, payments not permuted with the reports
        ex_post_audit(
            CustomMechanism(
                max,
                distance,
                range(4),
                anonymous=True,
                payments=lambda r: [1.0] + [0.0] * (len(r) - 1),
            ),
            [1, 2, 3],
        )


# --- hypothesis: random small rules
# ---------------------------------------------------------------------
@st.composite
def small_mechanisms(draw):
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, 3))
    types = list(range(m))
    outcomes = ["a", "b", "c"]
    table = {}
    for profile in itertools.product(types, repeat=n):
        kind = draw(st.sampled_from(["point", "law", "law", "bad"]))
        if kind == "point":
            table[profile] = draw(st.sampled_from(outcomes))
        else:
            w = draw(
                st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda v: sum(v) > 0.1)
            )
            probs = [x / sum(w) for x in w]
            if kind == "bad":
                probs[0] += draw(st.sampled_from([0.3, -2.0, 1e-3]))
            table[profile] = dict(zip(outcomes, probs))
    utils = {(t, o): draw(st.floats(-5, 5)) for t in types for o in outcomes}
    pays = draw(st.booleans())
    profile = draw(st.tuples(*[st.sampled_from(types)] * n))
    return n, types, table, utils, pays, profile


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(small_mechanisms())
def test_random_small_rules_clean_error_or_brute_force_gains(case):
    n, types, table, utils, pays, profile = case

    def rule(reports):
        return table[reports]

    def utility(t, o):
        return utils[(t, o)]

    payments = (lambda r: [0.1 * sum(r) * (i + 1) for i in range(len(r))]) if pays else None
    try:
        audit = ex_post_audit(
            CustomMechanism(rule, utility, types, payments=payments), list(profile), "all"
        )
        dom = dominant_audit(CustomMechanism(rule, utility, types, payments=payments), n, "all")
    except ValidationError as err:
        assert err.field == "rule" and ("summing to" in str(err) or "probability" in str(err))
        return
    expected = brute_ex_post(rule, utility, payments, types, profile)
    np.testing.assert_allclose(audit.gains, expected, atol=1e-9)
    if len(types) > 1:
        assert dom.max_gain == pytest.approx(
            brute_dominant(rule, utility, payments, types, n), abs=1e-9
        )
    assert np.isfinite(audit.max_gain)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(1, 3), st.data())
def test_random_priors_clean_error_or_brute_force_interim_gains(n, m, data):
    raw = [data.draw(st.lists(st.floats(-0.2, 1.0), min_size=m, max_size=m)) for _ in range(n)]
    priors = [
        [x / sum(r) for x in r] if sum(r) > 0.1 and data.draw(st.booleans()) else r for r in raw
    ]
    common = data.draw(st.booleans())
    mech = CustomMechanism(mean_rule, distance, range(m), anonymous=data.draw(st.booleans()))
    try:
        audit = bayesian_audit(mech, priors[0] if common else priors, n)
    except ValidationError as err:
        assert err.field.startswith("prior")
        return
    vectors = [priors[0]] * n if common else priors
    for k, i in enumerate(audit.agents.tolist()):
        expected = brute_interim(mean_rule, distance, None, list(range(m)), vectors, i)
        np.testing.assert_allclose(audit.gains[k], expected, atol=1e-9)


def test_vectorized_agent_utility_matches_the_scalar_one():
    def scalar(t, outcome, agent):
        return t * (outcome == agent) - 0.5 * outcome

    def vector(types, outcomes, agents):
        t = np.asarray(types, dtype=float)[None, :, None]
        o = np.asarray(outcomes, dtype=float)[None, None, :]
        a = np.asarray(agents)[:, None, None]
        return t * (o == a) - 0.5 * o

    def rule(reports):  # a lottery over the winner, tilted to the highest report
        w = np.exp(np.asarray(reports, dtype=float))
        return dict(zip(range(len(reports)), (w / w.sum()).tolist()))

    a = ex_post_audit(CustomMechanism(rule, scalar, range(4)), [3, 1, 2], "all")
    b = ex_post_audit(CustomMechanism(rule, vector, range(4), vectorized=True), [3, 1, 2], "all")
    np.testing.assert_allclose(a.gains, b.gains, atol=1e-12)
    np.testing.assert_allclose(
        a.gains, brute_ex_post(rule, scalar, None, list(range(4)), [3, 1, 2], True), atol=1e-12
    )


@pytest.mark.slow
def test_oversized_audits_are_refused_before_any_rule_call():
    mech = CustomMechanism(median_rule, distance, range(100))
    with pytest.raises(
        ValidationError, match=r"ex-post audit would call the rule about 9,900,001 times"
    ):
        ex_post_audit(mech, [k % 100 for k in range(100_000)])
    with pytest.raises(
        ValidationError, match=r"Monte Carlo Bayesian audit would call the rule about 2,000,000,000"
    ):
        bayesian_audit(mech, [0.01] * 100, 10_000, samples=2_000)
    simulator, _ = noisy(median_rule)
    with pytest.raises(
        ValidationError, match=r"sampled audit would call the rule .* fewer samples="
    ):
        sampled_audit(
            CustomMechanism(simulator, distance, range(7)), list(range(7)) * 50, samples=10_000
        )
    assert mech.rule_calls == 0


def test_the_audit_internals_are_not_public_api():
    public = {name for name in dir(CustomMechanism) if not name.startswith("_")}
    internals = {
        "indices",
        "labels",
        "key",
        "entry",
        "entries",
        "table",
        "fill",
        "value",
        "values_at",
        "values",
        "draw",
    }
    assert not public & internals
    assert {"law", "neighbouring_reports", "check_anonymity", "types", "outcomes"} <= public
