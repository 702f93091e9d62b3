import math

import numpy as np
import pytest
from scipy import stats

from auction_oracles import (
    continuous_cdf,
    continuous_expected_revenue,
    grid_price_probabilities,
    grid_utility,
)
from dpgames import DigitalGoodsAuction
from dpgames.mechanisms.digital_goods import balanced_alpha, price_grid


def test_grid_distribution_matches_plain_computation():
    rng = np.random.default_rng(0)
    bids = rng.uniform(size=25)
    auction = DigitalGoodsAuction(0.9, alpha=0.05)
    d = auction.price_distribution(bids)
    prices = [j / 20 for j in range(1, 21)]
    assert np.allclose(d.outcomes, prices)
    assert np.allclose(d.probabilities, grid_price_probabilities(prices, bids, 0.9), rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_price_distribution_matches_the_loops_with_ties_and_bids_on_prices(seed):
    rng = np.random.default_rng(seed)
    prices = [j / 8 for j in range(1, 9)]
    # ties, bids on prices
    bids = np.concatenate([rng.choice([0.0, *prices], size=12), rng.uniform(size=6)])
    for auction in (DigitalGoodsAuction(1.3, alpha=0.125), DigitalGoodsAuction(1.3, prices=prices)):
        d = auction.price_distribution(bids)
        assert np.allclose(
            d.probabilities, grid_price_probabilities(prices, bids, 1.3), rtol=1e-12, atol=0
        )
        assert np.allclose(np.exp(d.log_probabilities), d.probabilities, rtol=1e-12)
        law = auction.price_law(bids.tolist())
        # from a list, via Bids: the same
        assert np.array_equal(law.distribution.probabilities, d.probabilities)
        assert np.array_equal(law.cell_log_mass, d.log_probabilities)


def test_explicit_prices_and_sensitivity_is_the_largest_price():
    bids = [0.1, 0.35, 0.35, 0.6]
    prices = [0.1, 0.35, 0.5]
    d = DigitalGoodsAuction(2.0, prices=prices).price_distribution(bids)
    assert np.allclose(
        d.probabilities, grid_price_probabilities(prices, bids, 2.0, sensitivity=0.5), rtol=1e-12
    )


def test_a_bid_equal_to_a_grid_price_buys():
    # 3/10 computed as j/m equals the literal 0.3: the bidder of 0.3 counts at price 0.3.
    law = DigitalGoodsAuction(1.0, alpha=0.1).price_law([0.3])
    assert law.cell_buyers[np.flatnonzero(np.isclose(law.prices, 0.3))[0]] == 1


def test_default_alpha_balances_losses():
    assert balanced_alpha(0.5, 1000) == pytest.approx(1 / 250)
    assert balanced_alpha(0.1, 5) == 1.0
    assert price_grid(0.25).tolist() == [0.25, 0.5, 0.75, 1.0]
    assert np.allclose(price_grid(0.3), [0.3, 0.6, 0.9])


def test_expected_revenue_and_welfare_against_plain_sums():
    rng = np.random.default_rng(3)
    values = rng.uniform(size=30)
    bids = np.clip(values + rng.normal(0, 0.1, size=30), 0, 1)
    auction = DigitalGoodsAuction(1.3, alpha=0.02)
    prices = [j / 50 for j in range(1, 51)]
    probs = grid_price_probabilities(prices, bids, 1.3)
    revenue = sum(q * p * sum(b >= p for b in bids) for q, p in zip(probs, prices))
    welfare = sum(q * sum(v for v, b in zip(values, bids) if b >= p) for q, p in zip(probs, prices))
    assert auction.expected_revenue(bids) == pytest.approx(revenue, rel=1e-12)
    assert auction.expected_welfare(values, bids) == pytest.approx(welfare, rel=1e-12)


def test_expected_utilities_against_plain_sums():
    rng = np.random.default_rng(6)
    values = rng.uniform(size=12)
    bids = np.clip(values + rng.normal(0, 0.2, size=12), 0, 1)
    auction = DigitalGoodsAuction(2.0, alpha=0.05)
    prices = [j / 20 for j in range(1, 21)]
    expected = [grid_utility(prices, bids, 2.0, v, b) for v, b in zip(values, bids)]
    assert np.allclose(auction.expected_utilities(values, bids), expected, rtol=1e-12, atol=1e-15)


def test_run_sells_to_every_bid_at_least_the_price():
    bids = np.random.default_rng(1).uniform(size=200)
    out = DigitalGoodsAuction(1.0).run(bids, rng=4)
    assert np.array_equal(out.buyers, bids >= out.price)
    assert out.revenue == pytest.approx(out.price * (bids >= out.price).sum())
    assert DigitalGoodsAuction(1.0).run(bids, rng=4).price == out.price


def worst_single_bid_change(auction, bids):
    base = auction.price_distribution(bids)
    worst = 0.0
    for i in range(bids.size):
        for b in np.linspace(0, 1, 41):
            moved = bids.copy()
            moved[i] = b
            worst = max(worst, base.max_privacy_loss(auction.price_distribution(moved)))
    return worst


def test_grid_privacy_loss_over_every_single_bid_change():
    """Exact enumeration: every bidder, every replacement bid on a fine grid."""
    bids = np.array([0.15, 0.4, 0.4, 0.55, 0.8, 0.95])
    eps = 1.0
    # The revenue score is monotone in each bid, so the loss is at most eps/2 (hence at most eps).
    assert worst_single_bid_change(DigitalGoodsAuction(eps, alpha=0.1), bids) <= eps / 2 + 1e-12
    # McSherry & Talwar's weights exp(eps * Rev) double the loss: the enumeration sees it.
    mt = DigitalGoodsAuction(eps, alpha=0.1, convention="mcsherry-talwar")
    assert worst_single_bid_change(mt, bids) > eps / 2


def test_revenue_bound_of_thm_3_11_holds_with_promised_probability():
    rng = np.random.default_rng(9)
    for n, eps in ((50, 0.5), (500, 0.2), (2000, 1.0)):
        values = rng.beta(2, 3, size=n)
        auction = DigitalGoodsAuction(eps)
        law = auction.price_law(values)
        opt = max(v * (values >= v).sum() for v in values)
        alpha = law.prices[0]
        for beta in (0.01, 0.1):
            bound = opt - alpha * n - 2 * law.prices[-1] / eps * math.log(law.prices.size / beta)
            assert opt - auction.revenue_loss_bound(n, beta) == pytest.approx(bound, rel=1e-12)
            assert law.distribution.expect(law.revenue_scores < bound) <= beta
        # and by sampling: the frequency of the bad event stays below beta
        draws = law.sample_price(5000, rng=rng)
        freq = np.mean(
            draws * (np.sort(values)[None, :] >= draws[:, None]).sum(axis=1)
            < opt - alpha * n - 2 / eps * math.log(law.prices.size / 0.1)
        )
        assert freq <= 0.1


@pytest.mark.slow
def test_continuous_sampler_matches_numerical_integration():
    bids = np.array([0.05, 0.2, 0.2, 0.45, 0.6, 0.61, 0.9])
    auction = DigitalGoodsAuction(4.0, prices="continuous")
    draws = auction.price_law(bids).sample_price(20_000, rng=2)
    assert ((draws >= 0) & (draws <= 1)).all()
    cdf = continuous_cdf(bids, 4.0)
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    assert auction.expected_revenue(bids) == pytest.approx(
        continuous_expected_revenue(bids, 4.0), rel=1e-9
    )


def test_continuous_law_is_stable_for_large_and_tiny_epsilon():
    bids = np.random.default_rng(0).uniform(size=1000)
    for eps in (1e-9, 50.0):
        law = DigitalGoodsAuction(eps, prices="continuous").price_law(bids)
        assert np.isfinite(law.cell_log_mass[law.cell_log_mass > -np.inf]).all()
        assert law.cells.probabilities.sum() == pytest.approx(1.0)
        draws = law.sample_price(1000, rng=1)
        assert np.isfinite(draws).all() and ((draws >= 0) & (draws <= 1)).all()
    tiny = DigitalGoodsAuction(1e-9, prices="continuous").price_law(bids)
    assert tiny.expected_price() == pytest.approx(0.5, abs=1e-6)  # almost uniform


@pytest.mark.parametrize("bids", [[], [0.5, 1.2], [-0.1], [np.nan]])
def test_bad_bids(bids):
    with pytest.raises(ValueError, match="bid|numbers"):
        DigitalGoodsAuction(1.0).expected_revenue(bids)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0},
        {"epsilon": 1, "alpha": 0},
        {"epsilon": 1, "alpha": 1.5},
        {"epsilon": 1, "prices": "fancy"},
        {"epsilon": 1, "prices": [0.5, 0.2]},
        {"epsilon": 1, "prices": "continuous", "alpha": 0.1},
    ],
)
def test_bad_auction_parameters(kwargs):
    with pytest.raises(ValueError):
        DigitalGoodsAuction(**kwargs)


def test_price_law_html_shows_its_figures_and_a_drawing():
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells, self.tags = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            self.cells.append(data)

    for auction in (
        DigitalGoodsAuction(1.0, alpha=0.25),
        DigitalGoodsAuction(1.0, prices="continuous"),
    ):
        law = auction.price_law([0.3, 0.55, 0.8, 1.0])
        parser = Cells()
        parser.feed(law._repr_html_())
        assert "svg" in parser.tags and "4" in parser.cells
        assert (
            f"{law.expected_revenue():.6g}" in parser.cells
            and f"{law.expected_price():.6g}" in parser.cells
        )
