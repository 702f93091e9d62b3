import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dpgames.analysis.auction_privacy as privacy_module
from auction_oracles import _integral, continuous_density
from audit_oracle_before import privacy_losses_before
from dpgames import DigitalGoodsAuction
from dpgames.analysis.auction_privacy import single_bid_privacy_audit
from dpgames.mechanisms.bids import Bids


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
    assert audit.max_loss == pytest.approx(
        brute_grid_loss(auction, bids, np.linspace(0, 1, 201)), abs=1e-12
    )
    assert audit.max_loss <= eps / 2 + 1e-12


def test_mcsherry_talwar_weights_exceed_eps_over_two():
    bids = np.array([0.2, 0.5, 0.9])
    audit = single_bid_privacy_audit(
        DigitalGoodsAuction(1.0, alpha=0.1, convention="mcsherry-talwar"), bids
    )
    assert audit.max_loss > 0.5
    assert audit.max_loss <= 1.0 + 1e-12  # exp(eps Rev) with monotone Rev: eps-DP


def test_continuous_audit_against_density_ratios():
    bids = np.array([0.1, 0.35, 0.6, 0.62, 0.85])
    eps = 3.0
    replacements = np.array([0.0, 0.3, 0.7, 1.0])
    audit = single_bid_privacy_audit(
        DigitalGoodsAuction(eps, prices="continuous"), bids, replacements
    )
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


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    bids=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=5),
    eps=st.floats(0.01, 10.0),
    steps=st.sampled_from([3, 10]),
)
def test_property_grid_audit_equals_enumeration(bids, eps, steps):
    bids = np.array(bids)
    auction = DigitalGoodsAuction(eps, alpha=1 / steps)
    audit = single_bid_privacy_audit(auction, bids)
    # the prices exactly
    replacements = np.r_[np.arange(steps + 1) / steps, np.linspace(0, 1, 4 * steps + 1)]
    assert audit.max_loss == pytest.approx(brute_grid_loss(auction, bids, replacements), abs=1e-10)
    assert audit.max_loss <= eps / 2 + 1e-10


# --- the rank-one rewrite against the audit as it was (tests/audit_oracle_before.py)
# ---------------


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    bids=st.lists(
        st.sampled_from([0.0, 0.3, 0.5, 1.0]) | st.floats(0.0, 1.0), min_size=1, max_size=8
    ),
    replacements=st.none()
    | st.lists(st.sampled_from([0.0, 0.3, 1.0]) | st.floats(0.0, 1.0), min_size=1, max_size=6),
    eps=st.sampled_from([1e-6, 1e-3, 0.5, 5.9, 7.0, 1e4]) | st.floats(1e-6, 8.0),
    prices=st.sampled_from(["grid", "continuous"]),
    chunk=st.sampled_from([1, 7, 1 << 16]),
)
def test_property_rank_one_privacy_audit_equals_the_audit_before(
    bids, replacements, eps, prices, chunk
):
    """The largest loss equals the log-space audit of before (to 1e-10 relative or 1e-15 absolute:
    at eps = 1e-6 the old log-space differences carried ~1e-16 of absolute rounding in losses of
    ~1e-7, which the rank-one form does not, see the mpmath test below), and the reported (agent,
    replacement) attains it."""
    bids = np.array(bids)
    auction = (
        DigitalGoodsAuction(eps, alpha=0.1)
        if prices == "grid"
        else DigitalGoodsAuction(eps, prices="continuous")
    )
    saved = privacy_module._CHUNK_ELEMENTS
    privacy_module._CHUNK_ELEMENTS = chunk
    try:
        audit = single_bid_privacy_audit(auction, bids, replacements)
    finally:
        privacy_module._CHUNK_ELEMENTS = saved
    law = auction.price_law(bids)
    losses, distinct = privacy_losses_before(law, bids, replacements)
    worst = losses.max()
    assert audit.max_loss == pytest.approx(worst, rel=1e-10, abs=1e-15)
    row = list(distinct).index(law.canonical(np.array([audit.bid]))[0])
    column = list(audit.replacements).index(audit.replacement)
    assert losses[row, column] == pytest.approx(audit.max_loss, rel=1e-10, abs=1e-15)
    assert bids[audit.agent] == audit.bid
    assert 0 <= audit.max_loss <= auction.guarantee.epsilon * (1 + 1e-12)


def test_prepared_bids_give_the_same_privacy_audit_bit_for_bit():
    values = np.random.default_rng(3).beta(2, 5, size=3000)
    auction = DigitalGoodsAuction(0.3, prices="continuous")
    bids = Bids.of(values)
    law = auction.price_law(bids)
    prepared = privacy_module.privacy_audit_of_law(law, auction.guarantee.epsilon, law.bids)
    raw = single_bid_privacy_audit(auction, values)
    assert (prepared.max_loss, prepared.agent, prepared.replacement) == (
        raw.max_loss,
        raw.agent,
        raw.replacement,
    )


def test_tiny_eps_loss_matches_mpmath():
    """One bid at 0 raised to 1 on the grid {0.1, ..., 1} at eps = 1e-6: the law goes from uniform
    to ``e^{kp} / z``, ``z`` the mean of ``e^{kp}``; the loss ``max_p |k p - ln z|`` at 50
    digits."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    auction = DigitalGoodsAuction(1e-6, alpha=0.1)
    k = mp.mpf(auction.price_law([0.0]).scale)
    prices = [mp.mpf(j) / 10 for j in range(1, 11)]
    log_z = mp.log(mp.fsum(mp.exp(k * p) for p in prices) / 10)
    want = max(abs(k * p - log_z) for p in prices)
    assert single_bid_privacy_audit(auction, [0.0]).max_loss == pytest.approx(
        float(want), rel=1e-14
    )
