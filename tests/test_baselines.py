import itertools

import numpy as np
import pytest

from dpgames.mechanisms import f2_benchmark, optimal_fixed_price, rsop_revenue


def plain_opt_price(bids):
    """Lowest price among the best fixed prices of a set (None if empty or no positive revenue)."""
    if not bids:
        return None
    revenue = {p: p * sum(b >= p for b in bids) for p in bids}
    best = max(revenue.values())
    return None if best <= 0 else min(p for p, r in revenue.items() if r == best)


def plain_rsop(values):
    total = 0.0
    for mask in itertools.product((0, 1), repeat=len(values)):
        a = [v for v, m in zip(values, mask) if m]
        b = [v for v, m in zip(values, mask) if not m]
        for sample, market in ((a, b), (b, a)):
            p = plain_opt_price(sample)
            if p is not None:
                total += p * sum(v >= p for v in market)
    return total / 2 ** len(values)


def test_opt_and_f2_against_enumeration():
    values = [0.9, 0.5, 0.5, 0.2, 0.7, 0.1]
    opt = optimal_fixed_price(values)
    assert (opt.price, opt.revenue) == (0.5, 2.0)
    assert f2_benchmark(values) == 2.0
    assert f2_benchmark([1.0, 0.1]) == pytest.approx(0.2)  # OPT = 1 from one bidder, F2 excludes it
    assert optimal_fixed_price([1.0, 0.1]).revenue == 1.0


@pytest.mark.parametrize(
    "values",
    [
        [0.9, 0.5, 0.5, 0.2, 0.7, 0.1],
        [0.3, 0.3, 0.3],
        [0.0, 0.0, 0.8],
        list(np.random.default_rng(1).uniform(size=9).round(2)),
    ],
)
def test_exact_rsop_against_enumeration(values):
    r = rsop_revenue(values)
    assert r.exact and r.samples == 2 ** len(values)
    assert r.mean == pytest.approx(plain_rsop(values), rel=1e-12)


def test_monte_carlo_rsop_interval_covers_the_exact_value():
    values = np.random.default_rng(2).uniform(size=14)
    exact = rsop_revenue(values).mean
    covered = 0
    for seed in range(20):
        mc = rsop_revenue(values, samples=3000, rng=seed, exact_max_n=0)
        assert not mc.exact
        covered += mc.ci_low <= exact <= mc.ci_high
    assert covered >= 16  # 95% intervals: P[fewer than 16 of 20 cover] < 0.002


def test_rsop_is_seeded():
    values = np.random.default_rng(3).uniform(size=40)
    assert rsop_revenue(values, 500, rng=1) == rsop_revenue(values, 500, rng=1)
