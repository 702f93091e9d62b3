"""Simultaneous intervals, the lower confidence bound on the largest gain, and the sample-size
planner of the Monte Carlo truthfulness audits.

Oracles: the exact gains of the same mechanism from its exact law (normal-CDF cell probabilities,
audited by the exact ex post audit), scipy's t quantiles, and the power of the audit's verdict
measured over many seeds against a lie whose exact gain is known in closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.analysis.custom_audit import ex_post_audit
from dpgames.analysis.sampled_audit import bayesian_audit, sampled_audit, samples_for_power
from dpgames.estimates import simultaneous_t_critical
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.validation import ValidationError

TYPES = range(4)
SIGMA = 1.0


def mean_center(reports):
    return sum(reports) / len(reports)


def simulator(reports, rng):
    return int(np.clip(np.round(mean_center(reports) + SIGMA * rng.normal()), 0, 3))


def exact_law(reports):
    """The law of ``simulator``: cell o of round(c + sigma Z) is (o - 1/2, o + 1/2), the ends take
    the tails."""
    c = mean_center(reports)
    cuts = stats.norm.cdf((np.array([0.5, 1.5, 2.5]) - c) / SIGMA)
    p = np.diff(np.concatenate([[0.0], cuts, [1.0]]))
    return {o: float(q) for o, q in enumerate(p)}


def distance(t, o):
    return -abs(t - o)


PROFILE = (1, 3)
TRUE = ex_post_audit(CustomMechanism(exact_law, distance, TYPES), PROFILE)
LIES = np.ones_like(TRUE.gains, dtype=bool)
LIES[np.arange(len(PROFILE)), PROFILE] = False


def test_the_exact_oracle_has_gaining_and_losing_lies():
    assert TRUE.max_gain > 0.05 and TRUE.gains[LIES].min() < -0.05
    assert sum(exact_law((0, 2)).values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.slow
def test_simultaneous_coverage_reaches_the_nominal_level_where_the_pointwise_one_does_not():
    mech = CustomMechanism(simulator, distance, TYPES)
    runs = 400
    joint = pointwise = below = inside = 0
    true_max = float(TRUE.gains[LIES].max())
    for seed in range(runs):
        a = sampled_audit(mech, PROFILE, samples=40, rng=seed)
        assert a.family == LIES.sum() == 6
        err = np.abs(a.gains - TRUE.gains)[LIES]
        joint += bool(np.all(err <= a.joint_half_width[LIES] + 1e-12))
        pointwise += bool(np.all(err <= a.half_width[LIES] + 1e-12))
        below += a.max_gain <= true_max + 1e-12
        low, high = a.max_gain_interval
        inside += low - 1e-12 <= max(true_max, 0.0) <= high + 1e-12
    mc = 3 * math.sqrt(0.95 * 0.05 / runs)  # 3 binomial sd at the nominal level
    assert joint / runs >= 0.95 - mc
    assert below / runs >= 0.95 - mc  # max_gain is a 95% lower confidence bound on the largest gain
    assert inside / runs >= 0.95 - mc
    assert pointwise / runs < 0.95 - mc  # six 95% intervals alone do not cover all at once


def test_joint_factor_is_bonferronis_t_quantile():
    for k, family in ((5, 1), (40, 6), (1000, 18)):
        want = stats.t.ppf(1 - 0.05 / (2 * family), k - 1)
        assert simultaneous_t_critical(k, family) == pytest.approx(want, rel=1e-12)
    a = sampled_audit(CustomMechanism(simulator, distance, TYPES), PROFILE, samples=30, rng=1)
    ratio = stats.t.ppf(1 - 0.05 / 12, 29) / stats.t.ppf(0.975, 29)
    np.testing.assert_allclose(a.joint_half_width, a.half_width * ratio, rtol=1e-12)
    assert "Bonferroni" in a.describe() and "over the 6 (agent, lie) gains" in a.describe()
    assert (
        a.intervals
        == "simultaneous 95% Student-t intervals over 6 gains, Bonferroni (each at level 1 "
        "- 0.05/6)"
    )
    bad = a.violation()
    if bad is not None:  # the flagged lie's interval is the simultaneous one
        k = list(a.agents).index(bad["agent"])
        assert bad["ci"][0] == pytest.approx(
            a.gains[k, bad["lie"]] - a.joint_half_width[k, bad["lie"]]
        )


def test_bayesian_monte_carlo_audit_uses_the_same_simultaneous_bound():
    mech = CustomMechanism(lambda r: max(r), lambda t, o: -abs(t - o) + 0.5 * o, range(3))
    mc = bayesian_audit(mech, [0.2, 0.5, 0.3], 2, samples=50, rng=2)
    exact = bayesian_audit(mech, [0.2, 0.5, 0.3], 2)
    assert exact.joint_half_width is None and exact.max_gain_interval == (
        exact.max_gain,
        exact.max_gain,
    )
    assert exact.intervals == "exact: no interval" and "over 12 gains, Bonferroni" in mc.intervals
    family = 2 * 3 * 2
    ratio = stats.t.ppf(1 - 0.05 / (2 * family), 49) / stats.t.ppf(0.975, 49)
    np.testing.assert_allclose(mc.joint_half_width, mc.half_width * ratio, rtol=1e-12)
    tried = ~np.eye(3, dtype=bool)[None].repeat(2, axis=0)
    assert mc.max_gain == pytest.approx(
        max(0.0, float((mc.gains - mc.joint_half_width)[tried].max()))
    )
    assert "Bonferroni" in mc.describe()


def test_draw_s_of_every_profile_starts_from_the_seeded_generator_s():
    seen: dict[tuple, list[float]] = {}

    def recorder(reports, rng):
        seen.setdefault(tuple(reports), []).append(float(rng.random()))
        return 0

    audit = sampled_audit(CustomMechanism(recorder, distance, TYPES), (1, 2), samples=7, rng=5)
    seeds = np.random.SeedSequence(5).generate_state(7).tolist()
    want = [np.random.default_rng(s).random() for s in seeds]
    assert len(seen) == 1 + 2 * 3 and all(v == want for v in seen.values())
    assert audit.draws == 7 * 7


# --- the planner
# ---------------------------------------------------------------------------------------------
def bernoulli_lie(gain):
    """Reporting 1 serves the agent when U < 1/2 + gain, truth when U < 1/2 (U uniform, common to
    both): the coupled gain draw is Bernoulli(gain), exact gain ``gain``, sd ``sqrt(gain (1 -
    gain))``."""

    def rule(reports, rng):
        return int(rng.random() < 0.5 + gain * (reports[0] == 1))

    return CustomMechanism(rule, lambda t, o: float(o), [0, 1])


@pytest.mark.slow
def test_planned_samples_reach_the_power_by_simulation():
    gain = 0.25
    n = samples_for_power(gain, math.sqrt(gain * (1 - gain)))
    assert 15 <= n <= 40  # ((1.96 + 0.84) * 0.433 / 0.25)^2 = 23.5, plus the t correction
    mech = bernoulli_lie(gain)
    runs = 300

    def power(samples):
        return np.mean(
            [
                not sampled_audit(mech, [0], samples=samples, rng=s).is_truthful()
                for s in range(runs)
            ]
        )

    mc = 3 * math.sqrt(0.8 * 0.2 / runs)
    assert power(n) >= 0.8 - mc
    assert power(max(2, n // 3)) < 0.8 - mc  # a third of the draws falls clearly short


def test_audit_plans_from_its_own_pilot():
    pilot = sampled_audit(bernoulli_lie(0.25), [0], samples=400, rng=0)
    sd = float(pilot.half_width[0, 1]) * math.sqrt(400) / stats.t.ppf(0.975, 399)
    assert sd == pytest.approx(math.sqrt(0.25 * 0.75), rel=0.15)
    assert pilot.samples_for(0.1) == samples_for_power(0.1, sd, pairs=1)
    assert pilot.samples_for(0.1, power=0.9) > pilot.samples_for(0.1)


def test_planner_grows_with_the_family_and_shrinks_with_the_gain():
    base = samples_for_power(0.1, 0.3)
    assert samples_for_power(0.1, 0.3, pairs=18) > base > samples_for_power(0.2, 0.3)
    assert samples_for_power(0.1, 0.0) == 2  # no noise: two draws suffice
    assert samples_for_power(0.3, 0.3, tol=0.2) == samples_for_power(0.1, 0.3)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    gain=st.one_of(
        st.floats(-1, 5), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2)
    ),
    sd=st.one_of(st.floats(-1, 10), st.floats(allow_nan=True, allow_infinity=True), st.none()),
    pairs=st.one_of(st.integers(-2, 50), st.floats(0, 3), st.booleans()),
    power=st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.5, 0.8, 0.99])),
    tol=st.one_of(st.floats(-1, 1), st.just(0.0)),
)
def test_planner_clean_error_or_enough_draws_and_no_fewer(gain, sd, pairs, power, tol):
    try:
        n = samples_for_power(gain, sd, pairs=pairs, power=power, tol=tol)
    except ValidationError:
        return
    assert isinstance(n, int) and n >= 2 and gain > tol >= 0 and sd >= 0 and 0 < power < 1
    z = stats.norm.ppf(power)

    def enough(k):
        return math.sqrt(k) * (gain - tol) >= (
            stats.t.ppf(1 - 0.05 / (2 * pairs), k - 1) + z
        ) * sd * (1 - 1e-12)

    assert enough(n) and (n == 2 or not enough(n - 1))


def test_planner_refuses_what_no_audit_reaches():
    with pytest.raises(ValidationError, match="gain.*must exceed tol"):
        samples_for_power(0.1, 1.0, tol=0.1)
    with pytest.raises(ValidationError, match="gain.*out of reach"):
        samples_for_power(1e-12, 1.0)
    with pytest.raises(ValidationError, match="family"):
        simultaneous_t_critical(10, 0)


def test_the_audits_planner_refuses_a_gain_it_cannot_detect():
    pilot = sampled_audit(bernoulli_lie(0.25), [0], samples=50, rng=0)
    for bad in (-0.1, 0.0, float("nan"), "0.1"):
        with pytest.raises(ValidationError) as info:
            pilot.samples_for(bad)
        assert info.value.field == "gain"


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    k=st.one_of(st.integers(-1, 10**6), st.floats(allow_nan=True), st.booleans()),
    family=st.one_of(st.integers(-2, 10**4), st.floats(0, 5), st.none()),
    level=st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.9, 0.95])),
)
def test_simultaneous_factor_clean_error_or_bonferronis(k, family, level):
    try:
        factor = simultaneous_t_critical(k, family, level)
    except ValidationError:
        return
    assert (
        isinstance(k, int) and isinstance(family, int) and k >= 2 and family >= 1 and 0 < level < 1
    )
    want = stats.t.ppf(1 - (1 - level) / (2 * family), k - 1)
    assert factor == pytest.approx(want, rel=1e-9) or (math.isinf(factor) and math.isinf(want))
    # never narrower than one interval alone
    assert factor >= stats.t.ppf(0.5 + level / 2, k - 1) - 1e-9


def test_a_generator_rng_gives_a_root_seed_that_reproduces_the_audit():
    mech = CustomMechanism(simulator, distance, TYPES)
    first = sampled_audit(mech, PROFILE, samples=20, rng=np.random.default_rng(5))
    again = sampled_audit(mech, PROFILE, samples=20, rng=first.seed)
    np.testing.assert_array_equal(first.gains, again.gains)
    with pytest.raises(ValidationError) as err:
        sampled_audit(mech, PROFILE, samples=20, rng=-1)
    assert err.value.field == "rng"
