"""Bids validated and sorted once (dpgames.mechanisms.bids.Bids): the same results as raw arrays,
bit for bit, wherever they are accepted; a clean error or an exact sort on any input."""

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
    raw[0] = 0.9  # the caller's array stays theirs
    assert bids.values.tolist() == [0.4, 0.1, 0.7]
    with pytest.raises(ValueError):
        bids.sorted[0] = 0.5


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8)
    | st.lists(st.floats(0, 1), min_size=1, max_size=30)
    | st.text(max_size=3)
    | st.none()
    | st.integers()
    | st.lists(st.lists(st.floats(0, 1), max_size=2), max_size=2)
)
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


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    x=st.lists(
        st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1), min_size=1, max_size=60
    )
)
def test_order_is_the_stable_argsort_with_ties(x):
    # oracle: Python's sort is stable; -0.0 and 0.0 compare equal, so they keep their index order
    # too
    assert Bids.of(x).order.tolist() == sorted(range(len(x)), key=x.__getitem__)


@pytest.mark.parametrize(
    "bad, entry",
    [
        ([0.2, np.nan, 0.5], "finite"),
        ([0.2, -0.1], "entry 1"),
        ([1.5, 0.2], "entry 0"),
        ([0.3, np.inf], "finite"),
        ([-np.inf], "finite"),
    ],
)
def test_bad_bids_are_named_after_the_sort_as_before(bad, entry):
    with pytest.raises(ValueError, match=entry):
        Bids.of(bad, "values")
    with pytest.raises(ValueError, match=entry):
        DigitalGoodsAuction(0.5).price_distribution(np.array(bad))


def test_a_float_array_is_copied_and_a_converted_one_is_not_copied_again():
    raw = np.array([0.4, 0.1])
    assert not np.shares_memory(Bids.of(raw).values, raw)
    ints = np.array([1, 0])
    bids = Bids.of(ints)
    assert bids.values.tolist() == [1.0, 0.0] and not bids.values.flags.writeable
