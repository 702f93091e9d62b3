import numpy as np
import pytest

from auction_oracles import continuous_density, _integral
from dpgames import DigitalGoodsAuction
from dpgames.analysis.auction_privacy import single_bid_privacy_audit


def brute_grid_loss(auction, bids, replacements):
    base = auction.price_distribution(bids)
    worst = 0.0
    for i in range(bids.size):
        for x in replacements:
            moved = bids.copy()
            moved[i] = x
            worst = max(worst, base.max_privacy_loss(auction.price_distribution(moved)))
    return worst


@pytest.mark.parametrize("seed", range(3))
def test_grid_audit_equals_enumeration_of_every_change(seed):
    rng = np.random.default_rng(seed)
    bids = rng.uniform(size=int(rng.integers(2, 8)))
    eps = float(rng.choice([0.2, 1.0, 5.0]))
    auction = DigitalGoodsAuction(eps, alpha=0.1)
    audit = single_bid_privacy_audit(auction, bids)  # default: 0 and each grid price
    # Replacements on a grid 20 times finer than the prices: the default set is exhaustive.
    assert audit.max_loss == pytest.approx(brute_grid_loss(auction, bids, np.linspace(0, 1, 201)), abs=1e-12)
    assert audit.max_loss <= eps / 2 + 1e-12


def test_mcsherry_talwar_weights_exceed_eps_over_two():
    bids = np.array([0.2, 0.5, 0.9])
    audit = single_bid_privacy_audit(DigitalGoodsAuction(1.0, alpha=0.1, convention="mcsherry-talwar"), bids)
    assert audit.max_loss > 0.5
    assert audit.max_loss <= 1.0 + 1e-12  # exp(eps Rev) with monotone Rev: eps-DP


def test_continuous_audit_against_density_ratios():
    bids = np.array([0.1, 0.35, 0.6, 0.62, 0.85])
    eps = 3.0
    replacements = np.array([0.0, 0.3, 0.7, 1.0])
    audit = single_bid_privacy_audit(DigitalGoodsAuction(eps, prices="continuous"), bids, replacements)
    grid = np.linspace(0, 1, 4001)[1:]

    def log_density(b):
        f, points = continuous_density(b, eps)
        z = _integral(f, points)
        return np.log([f(p) for p in grid]) - np.log(z)

    base = log_density(bids)
    worst = 0.0
    for i in range(bids.size):
        for x in replacements:
            moved = bids.copy()
            moved[i] = x
            worst = max(worst, np.max(np.abs(base - log_density(moved))))
    # the supremum sits at an end of an interval: a fine price grid approaches it from below
    assert worst <= audit.max_loss + 1e-9
    assert audit.max_loss - worst < eps / 2 * 1e-3 + 1e-9
    assert audit.max_loss <= eps / 2


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None, derandomize=True)
@given(bids=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=5), eps=st.floats(0.01, 10.0),
       steps=st.sampled_from([3, 10]))
def test_property_grid_audit_equals_enumeration(bids, eps, steps):
    bids = np.array(bids)
    auction = DigitalGoodsAuction(eps, alpha=1 / steps)
    audit = single_bid_privacy_audit(auction, bids)
    replacements = np.r_[np.arange(steps + 1) / steps, np.linspace(0, 1, 4 * steps + 1)]  # the prices exactly
    assert audit.max_loss == pytest.approx(brute_grid_loss(auction, bids, replacements), abs=1e-10)
    assert audit.max_loss <= eps / 2 + 1e-10
