"""The Monte Carlo audits' 95% intervals are Student-t intervals (as ``dpgames.estimates.mean_ci``).

Oracles: ``scipy.stats.t.interval`` on the very draws the audit used (recorded by the rule itself,
or the others' reports redrawn as documented), a textbook t-table value, and the coverage of a known
gain over many seeds (a normal-quantile interval with 5 draws covers about 88%, the t interval 95%).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.analysis.sampled_audit import bayesian_audit, sampled_audit
from dpgames.estimates import mean_ci, t_critical
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.validation import ValidationError


def scipy_interval(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = stats.t.interval(0.95, draws.size - 1, loc=draws.mean(), scale=stats.sem(draws))
    return float(lo), float(hi)


def test_t_critical_is_the_table_value_and_refuses_one_draw():
    assert t_critical(5) == pytest.approx(2.776445, abs=1e-6)  # t_{0.975, 4}, any t table
    assert t_critical(31, level=0.9) == pytest.approx(1.697261, abs=1e-6)  # t_{0.95, 30}
    est = mean_ci([0.0, 1.0, 3.0])
    assert est.high - est.mean == pytest.approx(
        t_critical(3) * np.std([0.0, 1.0, 3.0], ddof=1) / np.sqrt(3)
    )
    for bad in (1, 0, 2.5, True):
        with pytest.raises(ValidationError, match="k"):
            t_critical(bad)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    k=st.one_of(
        st.integers(-3, 10**9),
        st.floats(allow_nan=True),
        st.none(),
        st.booleans(),
        st.text(max_size=2),
    ),
    level=st.one_of(
        st.floats(-1, 2), st.floats(allow_nan=True), st.none(), st.sampled_from([0.5, 0.95, 0.999])
    ),
)
def test_t_critical_clean_error_or_a_factor_above_the_normal_one(k, level):
    try:
        factor = t_critical(k, level)
    except ValidationError:
        return
    assert isinstance(k, int) and k >= 2 and 0 < level < 1
    # inf only within rounding of 1
    assert not math.isnan(factor) and (math.isfinite(factor) or level > 1 - 1e-12)
    assert factor >= stats.norm.ppf(0.5 + level / 2) - 1e-9  # t quantiles exceed the normal one
    assert factor >= t_critical(k + 1, level) - 1e-12  # and shrink as the draws grow


@pytest.mark.parametrize("samples", [3, 5, 40])
def test_sampled_audit_interval_is_scipy_t_interval_of_its_draws(samples):
    log: dict[tuple, list[int]] = {}

    def simulator(reports, rng):
        out = int(np.clip(round(sum(reports) / len(reports) + 1.5 * rng.normal()), 0, 4))
        log.setdefault(tuple(reports), []).append(out)
        return out

    profile = (1, 3, 4)
    audit = sampled_audit(
        CustomMechanism(simulator, lambda t, o: -abs(t - o), range(5)),
        profile,
        samples=samples,
        rng=3,
    )
    truth = np.array(log[profile][-samples:])
    checked = 0
    for k, agent in enumerate(audit.agents.tolist()):
        t = profile[agent]
        for x in range(5):
            if x == t:
                continue
            lied = profile[:agent] + (x,) + profile[agent + 1 :]
            diffs = -np.abs(t - np.array(log[lied][-samples:])) + np.abs(t - truth)
            g, h = audit.gains[k, x], audit.half_width[k, x]
            assert g == pytest.approx(diffs.mean(), abs=1e-12)
            if diffs.std() == 0:
                assert h == 0.0
            else:
                checked += 1
                assert (g - h, g + h) == pytest.approx(scipy_interval(diffs), rel=1e-12, abs=1e-12)
    assert checked >= 4


@pytest.mark.slow
def test_sampled_audit_intervals_cover_a_known_gain_95_percent_of_the_time():
    # Reporting 1 moves the outcome from round(20 a) to round(20 (0.3 + b)), a, b independent N(0,
    # 1): by symmetry about the integers 0 and 6, the exact gain of utility o / 20 is 0.3.
    def simulator(reports, rng):
        a, b = rng.normal(size=2)
        return int(np.round(20 * (a if reports[0] == 0 else 0.3 + b)))

    mech = CustomMechanism(simulator, lambda t, o: o / 20, [0, 1])
    runs, covered = 800, 0
    for seed in range(runs):
        low, high = sampled_audit(mech, [0], samples=5, rng=seed).worst_case["ci"]
        covered += low <= 0.3 <= high
    # 95% +- 3.5 binomial sd (0.0077); a 1.96-quantile interval with 5 draws covers P(|T_4| < 1.96)
    # = 0.878
    assert 0.923 <= covered / runs <= 0.977


def test_bayesian_monte_carlo_interval_is_scipy_t_interval_of_the_draws():
    types, prior, samples, seed = range(3), [0.2, 0.5, 0.3], 6, 4

    def rule(reports):
        return max(reports)

    def utility(t, o):
        return -abs(t - o) + 0.5 * o

    audit = bayesian_audit(
        CustomMechanism(rule, utility, types), prior, 2, samples=samples, rng=seed
    )
    assert not audit.exact
    # the audit's documented draws: the other agent's reports, per agent
    rng = np.random.default_rng(seed)
    checked = 0
    for k in range(2):
        others = rng.choice(3, size=samples, p=prior)
        for t in types:
            for x in types:
                if x == t:
                    continue
                pair = (lambda r, o: (r, o)) if k == 0 else (lambda r, o: (o, r))
                diffs = np.array(
                    [utility(t, rule(pair(x, o))) - utility(t, rule(pair(t, o))) for o in others]
                )
                g, h = audit.gains[k, t, x], audit.half_width[k, t, x]
                assert g == pytest.approx(diffs.mean(), abs=1e-12)
                if diffs.std() == 0:
                    assert h == pytest.approx(0.0, abs=1e-12)
                else:
                    checked += 1
                    assert (g - h, g + h) == pytest.approx(
                        scipy_interval(diffs), rel=1e-9, abs=1e-12
                    )
    assert checked >= 4
