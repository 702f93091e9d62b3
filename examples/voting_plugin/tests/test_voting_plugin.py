"""The voting plugin's tests, as a plugin author writes them: dpgames' own assertions on the
mechanism (``assert_truthful``, ``assert_private``), and the scenario kind against oracles written
plainly here (the law and every voter's every lie, by loops over the profile)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from dpgames_voting import (
    least_dictator_weight,
    misreport_gains,
    vote_law,
    voting_mechanism,
)
from hypothesis import given, settings, strategies as st

from dpgames import FiniteDistribution, Scenario, ScenarioError, run_scenario
from dpgames.testing import assert_private, assert_truthful

SCENARIO = Path(__file__).resolve().parents[1] / "dpgames_voting" / "scenarios" / "median_vote.toml"


# ---------------------------------------------------------------- plain oracles


def u(t: int, o: int, m: int) -> float:
    return 1 - abs(t - o) / (m - 1)


def law_by_loops(peaks: list[int], m: int, eps: float, q: float) -> list[float]:
    """P[outcome = o]: exp(eps W(o) / 2) normalised, mixed with the reported peak of a random
    voter."""
    welfare = [sum(u(t, o, m) for t in peaks) for o in range(m)]
    top = max(welfare)
    weights = [math.exp(eps * (w - top) / 2) for w in welfare]
    return [
        (1 - q) * w / sum(weights) + q * peaks.count(o) / len(peaks) for o, w in enumerate(weights)
    ]


def expected_utility(t: int, peaks: list[int], m: int, eps: float, q: float) -> float:
    return sum(p * u(t, o, m) for o, p in enumerate(law_by_loops(peaks, m, eps, q)))


def gains_by_loops(peaks: list[int], m: int, eps: float, q: float) -> list[float]:
    """Every voter's every lie: her expected utility reporting the lie minus reporting her peak."""
    out = []
    for i, t in enumerate(peaks):
        truthful = expected_utility(t, peaks, m, eps, q)
        for lie in range(m):
            if lie != t:
                out.append(
                    expected_utility(t, peaks[:i] + [lie] + peaks[i + 1 :], m, eps, q) - truthful
                )
    return out


PROFILES = [
    ([0, 1, 1, 3, 4, 4, 4], 5, 0.7),
    ([2, 2, 2], 3, 2.0),
    ([0, 5, 9, 9, 1, 3], 10, 0.3),
    ([1], 2, 1.0),
]


# ---------------------------------------------------------------- the mechanism


@pytest.mark.parametrize("peaks, m, eps", PROFILES)
@pytest.mark.parametrize("q", [0.0, 0.3, 1.0])
def test_the_law_is_the_exponential_mechanism_mixed_with_a_random_dictator(peaks, m, eps, q):
    counts = np.bincount(peaks, minlength=m)
    np.testing.assert_allclose(
        vote_law(counts, eps, q), law_by_loops(peaks, m, eps, q), rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("peaks, m, eps", PROFILES)
def test_misreport_gains_are_every_voters_every_lie(peaks, m, eps):
    em, dictator = misreport_gains(np.array(peaks), m, eps)
    for q, gains in ((0.0, em), (1.0, dictator)):
        expected = gains_by_loops(peaks, m, eps, q)
        found = [gains[t, lie] for t in peaks for lie in range(m) if lie != t]
        np.testing.assert_allclose(found, expected, atol=1e-12)


@pytest.mark.parametrize("peaks, m, eps", PROFILES)
def test_the_least_dictator_weight_is_where_lying_stops_paying(peaks, m, eps):
    """dpgames' generic audit (every voter x every lie of the CustomMechanism) is the oracle."""
    q = least_dictator_weight(np.array(peaks), m, eps)
    assert_truthful(voting_mechanism(m, eps, q), peaks)
    if q > 0:
        with pytest.raises(AssertionError, match="not truthful"):
            assert_truthful(voting_mechanism(m, eps, q * (1 - 1e-6)), peaks)
    else:
        assert max(gains_by_loops(peaks, m, eps, 0.0), default=0.0) <= 1e-12


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_the_exponential_vote_is_within_its_dp_bound_at_every_profile_but_not_truthful(eps):
    """Dwork & Roth Prop 10.1 (exact form): an eps-DP mechanism with utilities in [0, 1] lets no
    voter gain more than e^eps - 1, at any profile (dominant strategy, every profile of 4
    voters)."""
    mech = voting_mechanism(4, eps)
    assert_truthful(mech, n=4, profiles="all", tol=math.expm1(eps))
    with pytest.raises(AssertionError, match="not truthful"):
        assert_truthful(voting_mechanism(4, eps), n=4, profiles="all")


def test_the_random_dictator_alone_is_truthful_at_every_profile():
    assert_truthful(voting_mechanism(5, 1.0, 1.0), n=4, profiles="all")


def neighbours(n: int, m: int):
    """Every pair of count vectors (n voters, m peaks) that one voter's change of report
    connects."""
    for profile in itertools.combinations_with_replacement(range(m), n):
        counts = np.bincount(profile, minlength=m)
        for t in set(profile):
            for lie in range(m):
                if lie != t:
                    other = counts.copy()
                    other[t] -= 1
                    other[lie] += 1
                    yield tuple(counts), tuple(other)


@pytest.mark.parametrize("eps", [0.2, 1.5])
def test_the_exponential_vote_is_eps_dp_and_the_dictator_breaks_it(eps):
    pairs = list(neighbours(4, 4))
    assert_private(
        lambda c: FiniteDistribution.from_probabilities(vote_law(np.array(c), eps, 0.0)), pairs, eps
    )
    with pytest.raises(AssertionError, match="not"):
        assert_private(
            lambda c: FiniteDistribution.from_probabilities(vote_law(np.array(c), eps, 0.2)),
            pairs,
            eps,
        )


# ---------------------------------------------------------------- the scenario kind


def small(peaks: list[int], m: int, eps: float, q: float) -> Scenario:
    return Scenario(
        {
            "kind": "voting",
            "election": {"alternatives": m},
            "population": {"peaks": peaks},
            "mechanism": {"epsilon": eps, "dictator": q},
        },
        "<vote>",
        "0" * 64,
    )


@pytest.mark.parametrize("peaks, m, eps", PROFILES)
@pytest.mark.parametrize("q", [0.0, 0.05])
def test_the_kinds_metrics_match_the_loops(peaks, m, eps, q):
    metrics = small(peaks, m, eps, q).run(seed=0).metrics
    law = law_by_loops(peaks, m, eps, q)
    welfare = [sum(u(t, o, m) for t in peaks) for o in range(m)]
    assert metrics["expected_welfare"] == pytest.approx(
        sum(p * w for p, w in zip(law, welfare)), rel=1e-12
    )
    assert metrics["optimal_welfare"] == pytest.approx(max(welfare), rel=1e-12)
    assert metrics["median_peak"] == sorted(peaks)[(len(peaks) - 1) // 2]
    # the median maximises welfare
    assert welfare[metrics["median_peak"]] == pytest.approx(max(welfare))
    gains = gains_by_loops(peaks, m, eps, q)
    assert metrics["max_misreport_gain"] == pytest.approx(max(max(gains), 0.0), abs=1e-12)
    assert metrics["misreport_margin"] == pytest.approx(-max(gains), abs=1e-12)
    assert (
        metrics["max_misreport_gain"]
        <= metrics["gain_bound"]
        == pytest.approx(min(1.0, (1 - q) * math.expm1(eps)))
    )
    assert metrics["truthful"] == (max(gains) <= 1e-12)
    losses = [
        abs(math.log(a) - math.log(b))
        for i, t in enumerate(peaks)
        for lie in range(m)
        if lie != t
        for a, b in zip(law, law_by_loops(peaks[:i] + [lie] + peaks[i + 1 :], m, eps, q))
    ]
    assert metrics["max_privacy_loss"] == pytest.approx(max(losses), rel=1e-9)
    if q == 0:
        assert metrics["max_privacy_loss"] <= eps + 1e-12


def test_the_example_scenario_sweeps_epsilon_and_the_dictator_weight():
    result = run_scenario(SCENARIO)
    assert (
        result.kind == "voting"
        and result.metrics["n"] == 101
        and result.metrics["gains_within_bound"]
    )
    assert Scenario.from_file(SCENARIO).data["sweep"]["dictator"] == [0.0, 0.05]


ANY_VALUE = st.one_of(
    st.integers(-3, 60),
    st.floats(-1, 3),
    st.booleans(),
    st.text(max_size=3),
    st.lists(st.integers(-1, 12), max_size=6),
    st.none(),
)


def mostly(valid):
    """Valid values three times out of four (so that runs, not only errors, are checked), else
    anything."""
    return st.integers(0, 3).flatmap(lambda k: valid if k else ANY_VALUE)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    m=mostly(st.integers(2, 12)),
    peaks=mostly(st.lists(st.integers(0, 1), min_size=1, max_size=8)),
    eps=mostly(st.floats(1e-3, 5)),
    q=mostly(st.floats(0, 1)),
    seed=st.integers(0, 2**32),
)
def test_any_field_values_give_a_clean_error_or_a_result_within_its_invariants(
    m, peaks, eps, q, seed
):
    data = {
        "kind": "voting",
        "election": {"alternatives": m},
        "population": {"peaks": peaks},
        "mechanism": {"epsilon": eps, "dictator": q},
    }
    for table, key, value in (
        ("election", "alternatives", m),
        ("population", "peaks", peaks),
        ("mechanism", "epsilon", eps),
        ("mechanism", "dictator", q),
    ):
        if value is None:
            del data[table][key]
    try:
        metrics = Scenario(data, "<vote>", "0" * 64).run(seed=seed).metrics
    except ScenarioError as exc:
        assert str(exc).startswith("<vote>: field '")
        return
    assert 0 < metrics["welfare_ratio"] <= 1 + 1e-12
    assert metrics["max_misreport_gain"] <= metrics["gain_bound"] + 1e-12
    assert 0 <= metrics["least_dictator_weight"] <= 1
    assert 0 <= metrics["sampled_outcome"] < metrics["alternatives"]
