import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dpgames.analysis.misreport as misreport_module
from auction_oracles import continuous_utility, grid_utility
from audit_oracle_before import misreport_before
from dpgames import DigitalGoodsAuction, misreport_audit
from dpgames.analysis.misreport import misreport_audit_brute_force
from dpgames.mechanisms.bids import Bids
from dpgames.mechanisms.price_laws import LINEAR_TILT_LIMIT


def oracle_grid_gains(values, epsilon, alpha, lies):
    m = round(1 / alpha)
    prices = [j / m for j in range(1, m + 1)]
    gains = np.empty((len(values), len(lies)))
    for i, v in enumerate(values):
        truthful = grid_utility(prices, values, epsilon, v, v)
        for c, lie in enumerate(lies):
            moved = list(values)
            moved[i] = lie
            gains[i, c] = grid_utility(prices, moved, epsilon, v, lie) - truthful
    return gains


@pytest.mark.parametrize("seed", range(4))
def test_fast_audit_equals_brute_force_on_grids(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    values = rng.uniform(size=n)
    eps = float(rng.choice([0.1, 1.0, 3.0]))
    lies = np.r_[rng.uniform(size=7), values[:2], 0.0, 1.0]
    audit = misreport_audit(DigitalGoodsAuction(eps, alpha=0.1), values, lies=lies, keep_gains=True)
    assert np.allclose(audit.gains, oracle_grid_gains(values, eps, 0.1, lies), atol=1e-12)


def test_fast_audit_equals_brute_force_on_the_continuum():
    rng = np.random.default_rng(11)
    values = rng.uniform(size=5)
    lies = np.array([0.0, 0.13, 0.5, 0.77, 1.0, values[1]])
    eps = 2.0
    audit = misreport_audit(
        DigitalGoodsAuction(eps, prices="continuous"), values, lies=lies, keep_gains=True
    )
    for i, v in enumerate(values):
        truthful = continuous_utility(values, eps, v, v)
        for c, lie in enumerate(lies):
            moved = values.copy()
            moved[i] = lie
            assert audit.gains[i, c] == pytest.approx(
                continuous_utility(moved, eps, v, lie) - truthful, abs=1e-10
            )


def test_library_brute_force_baseline_agrees():
    values = np.random.default_rng(2).uniform(size=6)
    auction = DigitalGoodsAuction(1.0, alpha=0.05)
    lies = np.linspace(0, 1, 9)
    fast = misreport_audit(auction, values, lies=lies, keep_gains=True).gains
    assert np.allclose(fast, misreport_audit_brute_force(auction, values, lies), atol=1e-13)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 2.0])
def test_gains_within_prop_10_1_and_the_exact_bound(eps):
    values = np.random.default_rng(3).beta(2, 2, size=300)
    audit = misreport_audit(DigitalGoodsAuction(eps), values)
    assert audit.max_gain <= 2 * eps
    assert (audit.best_gain <= math.expm1(eps) * audit.truthful_utility + 1e-12).all()
    assert (audit.best_gain <= math.expm1(eps / 2) * audit.truthful_utility + 1e-12).all()
    assert audit.within_bounds()
    assert audit.max_gain > 0  # lying does pay a little: the audit is not vacuous


def test_default_lies_on_a_grid_are_exhaustive():
    """On a grid, a report between two prices is worth the lower price: 0 and the prices suffice."""
    values = np.random.default_rng(4).uniform(size=40)
    auction = DigitalGoodsAuction(1.5, alpha=0.05)
    coarse = misreport_audit(auction, values)
    dense = misreport_audit(auction, values, lies=np.linspace(0, 1, 2001))
    assert coarse.lies.size == 21
    assert coarse.max_gain == pytest.approx(dense.max_gain, abs=1e-14)
    assert coarse.max_gain >= dense.max_gain - 1e-14


def test_worst_case_reports_agent_value_and_lie():
    values = np.random.default_rng(5).uniform(size=50)
    audit = misreport_audit(DigitalGoodsAuction(1.0, alpha=0.1), values, keep_gains=True)
    w = audit.worst_case
    i, c = np.unravel_index(np.argmax(audit.gains), audit.gains.shape)
    assert (w["agent"], w["lie"], w["gain"]) == (i, audit.lies[c], audit.gains[i, c])
    assert w["true_value"] == values[i]


def test_truthful_report_has_zero_gain():
    values = np.array([0.2, 0.5, 0.7])
    audit = misreport_audit(
        DigitalGoodsAuction(1.0, alpha=0.1), values, lies=values, keep_gains=True
    )
    assert np.allclose(np.diag(audit.gains), 0.0, atol=1e-15)


unit = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    values=st.lists(unit, min_size=1, max_size=6),
    lies=st.lists(unit, min_size=1, max_size=5),
    eps=st.floats(0.01, 8.0),
    steps=st.sampled_from([4, 10, 20]),
)
def test_property_fast_audit_equals_the_oracle(values, lies, eps, steps):
    """Any bids (ties, zeros, ones, bids on grid prices) and any lies: the O(1)-per-pair formula
    equals recomputing the law with plain loops."""
    values, lies = np.array(values), np.array(lies)
    audit = misreport_audit(
        DigitalGoodsAuction(eps, alpha=1 / steps), values, lies=lies, keep_gains=True
    )
    oracle = oracle_grid_gains(values, eps, 1 / steps, lies)
    assert np.allclose(audit.gains, oracle, atol=1e-12 * max(1.0, np.exp(eps / 2)))
    assert audit.max_gain <= np.expm1(eps / 2) * audit.truthful_utility.max() + 1e-12


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.sampled_from([0.0, 0.2, 0.5, 0.5, 0.77, 1.0]) | unit, min_size=1, max_size=4
    ),
    lie=unit,
    eps=st.floats(0.05, 6.0),
)
def test_property_continuum_audit_equals_numerical_integration(values, lie, eps):
    """Ties, bids at 0 and 1, any lie: the closed-form continuum audit equals quadrature of the
    density."""
    values = np.array(values)
    audit = misreport_audit(
        DigitalGoodsAuction(eps, prices="continuous"), values, lies=[lie], keep_gains=True
    )
    i = 0
    moved = values.copy()
    moved[i] = lie
    expected = continuous_utility(moved, eps, values[i], lie) - continuous_utility(
        values, eps, values[i], values[i]
    )
    assert audit.gains[i, 0] == pytest.approx(expected, abs=1e-9)


# --- the rank-one rewrite against the audit as it was (tests/audit_oracle_before.py)
# ---------------


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.sampled_from([0.0, 0.1, 0.3, 0.35, 0.5, 1.0]) | unit, min_size=1, max_size=9
    ),
    lies=st.lists(st.sampled_from([0.0, 0.3, 0.5, 1.0]) | unit, min_size=1, max_size=7),
    eps=st.sampled_from([1e-6, 0.01, 0.3, 1.0, 4.0, 5.99, 6.5, 50.0, 1e4]) | st.floats(1e-6, 8.0),
    prices=st.sampled_from(["grid", "continuous", "explicit"]),
    steps=st.sampled_from([3, 10, 40]),
    chunk=st.sampled_from([1, 5, 64, 1 << 16]),
    other_bids=st.booleans(),
)
def test_property_rank_one_audit_equals_the_audit_before(
    values, lies, eps, prices, steps, chunk, other_bids
):
    """Any values, bids and lies (ties, 0 and 1, lies on prices and between them), both sides of the
    rank-one limit, blocks as small as one row: the gains equal the log-space audit of before to
    1e-12 and every reported best lie attains its best gain."""
    values, lies = np.array(values), np.array(lies)
    bids = np.round(values[::-1], 2) if other_bids else None
    auction = {
        "grid": DigitalGoodsAuction(eps, alpha=1 / steps),
        "continuous": DigitalGoodsAuction(eps, prices="continuous"),
        "explicit": DigitalGoodsAuction(eps, prices=[0.2, 0.35, 0.9]),
    }[prices]
    saved = misreport_module._CHUNK_ELEMENTS
    misreport_module._CHUNK_ELEMENTS = chunk
    try:
        audit = misreport_audit(auction, values, bids=bids, lies=lies, keep_gains=True)
    finally:
        misreport_module._CHUNK_ELEMENTS = saved
    b = values if bids is None else bids
    gains, truthful = misreport_before(auction.price_law(b), values, b, lies)
    tol = 1e-12 * max(1.0, 1e-3 * eps)  # above the limit both are the log-space path: ~1e-16 eps
    np.testing.assert_allclose(audit.gains, gains, rtol=0, atol=tol)
    np.testing.assert_allclose(audit.truthful_utility, truthful, rtol=0, atol=tol)
    np.testing.assert_allclose(audit.best_gain, gains.max(axis=1), rtol=0, atol=tol)
    column = np.array([list(lies).index(x) for x in audit.best_lie])
    np.testing.assert_allclose(
        gains[np.arange(values.size), column], audit.best_gain, rtol=0, atol=tol
    )


def test_ties_go_to_the_lowest_lie_first_listed():
    """Lies 0.31 and 0.3 are the same report on a grid of step 0.1 (both mean the price 0.3): equal
    gains; the lowest lie up to the law wins, as first listed."""
    values = np.array([0.9, 0.8, 0.2])
    auction = DigitalGoodsAuction(2.0, alpha=0.1)
    lies = np.array([0.95, 0.31, 0.3, 0.0])
    audit = misreport_audit(auction, values, lies=lies, keep_gains=True)
    assert audit.gains[0, 1] == audit.gains[0, 2]
    for i in range(values.size):
        top = audit.gains[i].max()
        winners = [c for c in range(lies.size) if audit.gains[i, c] == top]
        lowest = min(winners, key=lambda c: (auction.price_law(values).canonical(lies[c]), c))
        assert audit.best_lie[i] == lies[lowest]


def test_both_paths_agree_at_the_limit():
    """Just below and just above LINEAR_TILT_LIMIT (rank one / log space) the gains are continuous
    in eps."""
    values = np.random.default_rng(8).uniform(size=40)
    eps = 2 * LINEAR_TILT_LIMIT
    below = misreport_audit(
        DigitalGoodsAuction(eps * (1 - 1e-12), alpha=0.05), values, keep_gains=True
    )
    above = misreport_audit(
        DigitalGoodsAuction(eps * (1 + 1e-12), alpha=0.05), values, keep_gains=True
    )
    assert DigitalGoodsAuction(eps * (1 - 1e-12), alpha=0.05).price_law(values).linear_ok
    assert not DigitalGoodsAuction(eps * (1 + 1e-12), alpha=0.05).price_law(values).linear_ok
    np.testing.assert_allclose(below.gains, above.gains, rtol=0, atol=1e-11)


def test_a_prepared_law_and_bids_give_the_same_audit_bit_for_bit():
    values = np.random.default_rng(9).beta(2, 5, size=2000)
    auction = DigitalGoodsAuction(0.2)
    bids = Bids.of(values, "values")
    law = auction.price_law(bids)
    prepared = misreport_module.misreport_audit_of_law(
        law, auction.guarantee.epsilon, bids.values, law.bids
    )
    raw = misreport_audit(auction, values)
    for field in ("truthful_utility", "best_gain", "best_lie"):
        assert np.array_equal(getattr(prepared, field), getattr(raw, field))


def test_html_shows_the_headline_figures():
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells = []

        def handle_data(self, data):
            self.cells.append(data)

    from dpgames.analysis.auction_privacy import single_bid_privacy_audit

    values = [0.3, 0.55, 0.8, 1.0]
    auction = DigitalGoodsAuction(1.0, alpha=0.25)
    audit, privacy = misreport_audit(auction, values), single_bid_privacy_audit(auction, values)
    for obj, figures in [
        (audit, [f"{audit.max_gain:.6g}", str(audit.worst_agent), "0.75", "4", "5"]),
        (privacy, [f"{privacy.max_loss:.6g}", "1", str(privacy.agent), "0.75"]),
    ]:
        parser = Cells()
        parser.feed(obj._repr_html_())
        assert all(f in parser.cells for f in figures), (figures, parser.cells)
