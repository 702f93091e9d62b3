"""Buyer counts without a sort (dpgames.mechanisms.price_laws.counts_below) and the price
distribution built on them: the same integers as a count over every (price, bid) pair, and the same
distribution, bit for bit, as the law built on the sorted bids."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames import DigitalGoodsAuction
from dpgames.mechanisms.bids import Bids
from dpgames.mechanisms.digital_goods import price_grid
from dpgames.mechanisms.price_laws import COUNT_BLOCK, GridPriceLaw, _uniform_step, counts_below
from dpgames.validation import ValidationError

#: Steps with 1/alpha an integer (prices j/m) and not (prices j * alpha, a grid ending below 1).
ALPHAS = [1.0, 0.5, 0.4, 0.3, 1 / 3, 0.1, 1 / 7, 0.013, 1 / 997, 1e-3, 1 / 12345, 4e-5]


def brute_counts(prices: np.ndarray, bids: np.ndarray) -> np.ndarray:
    """``#{i : b_i < p_j}`` by comparing every pair."""
    return (bids[None, :] < prices[:, None]).sum(axis=1)


def hard_bids(prices: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Bids on the prices, one float either side of them, ties, 0, 1 and uniform draws."""
    near = np.concatenate(
        [
            [0.0, 1.0],
            prices,
            np.nextafter(prices, 0.0),
            np.nextafter(prices, 2.0),
            prices + 0.5 * np.diff(prices, prepend=0.0),
        ]
    )
    return np.clip(np.concatenate([rng.choice(near, n), rng.random(n // 4)]), 0.0, 1.0)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_counts_on_a_grid_equal_the_pairwise_count(alpha):
    prices = price_grid(alpha)
    assert _uniform_step(prices) is not None  # the histogram path is the one tested
    rng = np.random.default_rng(len(prices))
    for n in (1, 7, 400):
        bids = hard_bids(prices, n, rng)
        got = counts_below(prices, bids)
        if prices.size * bids.size <= 5_000_000:
            assert np.array_equal(got, brute_counts(prices, bids))
        assert np.array_equal(got, np.searchsorted(np.sort(bids), prices, side="left"))


@pytest.mark.parametrize("alpha", [0.1, 1 / 7, 1e-4])
def test_counts_over_several_blocks(alpha):
    prices = price_grid(alpha)
    # 3.75 blocks, the last one partial
    bids = hard_bids(prices, 3 * COUNT_BLOCK, np.random.default_rng(11))
    assert np.array_equal(
        counts_below(prices, bids), np.searchsorted(np.sort(bids), prices, side="left")
    )


@pytest.mark.parametrize(
    "prices",
    [
        [0.25, 0.5, 0.75, 1.0],
        [0.2, 0.5, 0.9],
        [0.1, 0.2],
        [0.3, 0.6, 0.9],
        [1.0],
        [
            0.05,
            0.1,
            0.15,
            0.2,
            0.25,
            0.3,
            0.35,
            0.4,
            0.45,
            0.5,
            0.55,
            0.6,
            0.65,
            0.7,
            0.75,
            0.8,
            0.85,
            0.9,
            0.95,
            1.0,
        ],
    ],
)
def test_counts_for_explicit_lists_uniform_or_not(prices):
    prices = np.array(prices)
    bids = hard_bids(prices, 300, np.random.default_rng(3))
    assert np.array_equal(counts_below(prices, bids), brute_counts(prices, bids))
    assert np.array_equal(
        counts_below(prices, np.sort(bids), ascending=True), brute_counts(prices, bids)
    )


def test_uniform_step_only_for_grids_reaching_one():
    assert _uniform_step(np.array([0.1, 0.2])) is None  # would leave bids far above the last price
    assert _uniform_step(np.array([0.2, 0.5, 0.9])) is None  # not evenly spaced
    assert _uniform_step(np.array([0.3, 0.6, 0.9])) == pytest.approx(0.3)


def same_distribution(a, b) -> bool:
    return (
        np.array_equal(a.log_probabilities, b.log_probabilities)
        and np.array_equal(a.outcomes, b.outcomes)
        and np.array_equal(a.probabilities, b.probabilities)
    )


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 300.0])
def test_price_distribution_is_the_sorted_law_bit_for_bit(alpha, epsilon):
    auction = DigitalGoodsAuction(epsilon, alpha=alpha)
    rng = np.random.default_rng(int(epsilon * 100) + len(price_grid(alpha)))
    for bids in (
        hard_bids(price_grid(alpha), 500, rng),
        rng.random(3),
        np.array([0.0]),
        np.array([1.0, 1.0]),
    ):
        scale = auction.mechanism_for(bids.size).scale
        reference = GridPriceLaw(auction.prices_for(bids.size), np.sort(bids), scale)
        assert same_distribution(auction.price_distribution(bids), reference.distribution)
        assert same_distribution(auction.price_distribution(Bids.of(bids)), reference.distribution)
        assert same_distribution(auction.price_distribution(bids.tolist()), reference.distribution)


@pytest.mark.parametrize("prices", [[0.2, 0.5, 0.9], [0.25, 0.5, 0.75, 1.0], [0.1, 0.2]])
def test_price_distribution_for_explicit_lists(prices):
    auction = DigitalGoodsAuction(2.0, prices=prices)
    bids = hard_bids(np.array(prices), 200, np.random.default_rng(5))
    reference = GridPriceLaw(
        np.array(prices), np.sort(bids), auction.mechanism_for(bids.size).scale
    )
    assert same_distribution(auction.price_distribution(bids), reference.distribution)


def test_price_distribution_leaves_the_callers_bids_alone():
    bids = np.array([0.9, 0.1, 0.5])
    DigitalGoodsAuction(1.0, alpha=0.1).price_distribution(bids)
    assert bids.tolist() == [0.9, 0.1, 0.5]


@pytest.mark.slow
@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    alpha=st.floats(1e-4, 1.0)
    | st.sampled_from(ALPHAS)
    | st.integers(1, 5000).map(lambda m: 1 / m),
    data=st.data(),
)
def test_property_counts_equal_the_sorted_search(alpha, data):
    prices = price_grid(alpha)
    on_prices = st.integers(0, prices.size - 1).map(lambda j: float(prices[j]))
    neighbour = st.tuples(on_prices, st.sampled_from([0.0, 2.0])).map(
        lambda t: float(np.nextafter(*t))
    )
    bid = (
        st.floats(0, 1)
        | st.sampled_from([0.0, 1.0])
        | on_prices
        | neighbour.filter(lambda b: 0 <= b <= 1)
    )
    bids = np.array(data.draw(st.lists(bid, min_size=1, max_size=60)))
    assert np.array_equal(
        counts_below(prices, bids), np.searchsorted(np.sort(bids), prices, side="left")
    )


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8)
    | st.lists(st.floats(0, 1), min_size=1, max_size=30)
    | st.text(max_size=3)
    | st.none()
    | st.lists(st.lists(st.floats(0, 1), max_size=2), max_size=2)
)
def test_property_clean_error_or_the_sorted_law(x):
    auction = DigitalGoodsAuction(0.8, alpha=0.05)
    try:
        reference = Bids.of(x)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as again:
            auction.price_distribution(x)
        assert again.value.field == "bids" and str(again.value) == str(exc)  # the same message
        return
    law = GridPriceLaw(
        auction.prices_for(reference.n), reference.sorted, auction.mechanism_for(reference.n).scale
    )
    assert same_distribution(auction.price_distribution(x), law.distribution)
