"""Bids validated and sorted once (dpgames.mechanisms.bids.Bids): the same results as raw arrays, bit
for bit, wherever they are accepted; a clean error or an exact sort on any input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames import DigitalGoodsAuction
from dpgames.mechanisms.baselines import f2_benchmark, optimal_fixed_price, rsop_revenue
from dpgames.mechanisms.bids import Bids


def test_every_consumer_gives_the_same_figures_for_bids_and_arrays():
    values = np.random.default_rng(0).beta(2, 5, size=5000)
    bids = Bids.of(values, "values")
    assert optimal_fixed_price(bids) == optimal_fixed_price(values)
    assert f2_benchmark(bids) == f2_benchmark(values)
    assert rsop_revenue(bids, 50, rng=1) == rsop_revenue(values, 50, rng=1)
    assert rsop_revenue(Bids.of(values[:12]), rng=1) == rsop_revenue(values[:12], rng=1)
    for auction in (DigitalGoodsAuction(0.3), DigitalGoodsAuction(0.3, prices="continuous")):
        assert auction.expected_revenue(bids) == auction.expected_revenue(values)
        assert auction.expected_welfare(bids) == auction.expected_welfare(values)
        assert np.array_equal(auction.expected_utilities(bids), auction.expected_utilities(values))
        assert auction.run(bids, rng=4).price == auction.run(values, rng=4).price
        law = auction.price_law(bids)
        assert law.bids is bids and np.array_equal(law.sorted_bids, np.sort(values))


def test_bids_are_read_only_copies():
    raw = np.array([0.4, 0.1, 0.7])
    bids = Bids.of(raw)
    raw[0] = 0.9                                    # the caller's array stays theirs
    assert bids.values.tolist() == [0.4, 0.1, 0.7]
    with pytest.raises(ValueError):
        bids.sorted[0] = 0.5


@settings(max_examples=50, deadline=None, derandomize=True)
@given(x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8)
       | st.lists(st.floats(0, 1), min_size=1, max_size=30) | st.text(max_size=3) | st.none() | st.integers()
       | st.lists(st.lists(st.floats(0, 1), max_size=2), max_size=2))
def test_property_clean_error_or_an_exact_sort(x):
    try:
        bids = Bids.of(x, "values")
    except ValueError as exc:
        assert getattr(exc, "field", None) == "values" and str(exc)
        return
    plain = sorted(x)
    assert bids.sorted.tolist() == plain and bids.values.tolist() == list(x)
    assert [x[i] for i in bids.order] == plain
    for p in (0.0, 0.5, 1.0):
        assert bids.count_at_least([p])[0] == sum(1 for b in x if b >= p)
