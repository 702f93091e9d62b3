"""Benchmarks for the digital-goods auction, on the same bids.

* the omniscient optimal fixed price: ``OPT = max_p p * #{i : v_i >= p}`` (attained at a bid);
* ``F2 = max_{k >= 2} k v_(k)`` (``v_(k)`` the k-th largest value), the benchmark of competitive
  analysis (Goldberg, Hartline, Karlin, Saks & Wright 2006);
* RSOP, the random sampling optimal price auction (same paper): split the bidders by fair coins into
  A and B, offer B the optimal fixed price of A and A the optimal fixed price of B.  Ties between
  optimal prices go to the *lowest* such price; an empty half (or one whose bids are all 0) yields no
  price, and the other half buys nothing.  Its expected revenue is exact by enumerating all ``2^n``
  splits for ``n <= 20``, and a Monte Carlo estimate with a 95% confidence interval above;
* a fixed posted price.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.digital_goods import check_bids
from dpgames.privacy.distribution import as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory

EXACT_RSOP_MAX_N = 20
_SPLITS_PER_BLOCK_ELEMENTS = 1 << 22


def revenue_at(price: float, bids: ArrayLike) -> float:
    """``p * #{i : b_i >= p}``: the revenue of a posted price."""
    b = finite_array("bids", bids)
    return float(price * np.count_nonzero(b >= price))


@dataclass(frozen=True)
class OptimalFixedPrice:
    price: float
    revenue: float


def optimal_fixed_price(values: ArrayLike) -> OptimalFixedPrice:
    """``OPT``: the best single price with hindsight (the lowest optimal price on ties)."""
    desc = np.sort(check_bids(values, "values"))[::-1]
    revenue = desc * np.arange(1, desc.size + 1)
    k = desc.size - 1 - int(np.argmax(revenue[::-1]))  # last maximiser in descending order = lowest price
    return OptimalFixedPrice(float(desc[k]), float(revenue[k]))


def f2_benchmark(values: ArrayLike) -> float:
    """``F2 = max_{k >= 2} k v_(k)`` (0 with fewer than two bidders)."""
    desc = np.sort(check_bids(values, "values"))[::-1]
    if desc.size < 2:
        return 0.0
    return float(np.max(desc[1:] * np.arange(2, desc.size + 1)))


@dataclass(frozen=True)
class RsopRevenue:
    """Expected RSOP revenue; ``exact`` when all splits were enumerated, else a Monte Carlo mean over
    ``samples`` splits with its 95% confidence interval ``(ci_low, ci_high)``."""

    mean: float
    exact: bool
    samples: int
    ci_low: float
    ci_high: float


def rsop_revenue(values: ArrayLike, samples: int = 2000, rng: np.random.Generator | int | None = None,
                 exact_max_n: int = EXACT_RSOP_MAX_N) -> RsopRevenue:
    """RSOP's expected revenue: exact for ``n <= exact_max_n``, otherwise Monte Carlo over ``samples``."""
    exact_max_n = integer("exact_max_n", exact_max_n, 0, 30)  # 2^n splits are enumerated
    samples = integer("samples", samples, low=0)
    memory("samples", samples, what=f"{samples:,} random splits")
    v = check_bids(values, "values")
    desc = np.sort(v)[::-1]
    if desc.size <= exact_max_n:
        total = 0.0
        n_splits = 1 << desc.size
        block = max(1, _SPLITS_PER_BLOCK_ELEMENTS // desc.size)
        for start in range(0, n_splits, block):
            codes = np.arange(start, min(n_splits, start + block), dtype=np.int64)
            masks = ((codes[:, None] >> np.arange(desc.size)) & 1).astype(bool)
            total += _rsop_revenues(desc, masks).sum()
        mean = total / n_splits
        mean = float(mean)
        return RsopRevenue(mean, True, n_splits, mean, mean)
    if samples < 2:
        raise ValidationError("samples", f": RSOP Monte Carlo needs at least 2 samples, got {samples}")
    gen = as_generator(rng)
    block = max(1, _SPLITS_PER_BLOCK_ELEMENTS // desc.size)
    draws = np.concatenate([_rsop_revenues(desc, gen.random((min(block, samples - s), desc.size)) < 0.5)
                            for s in range(0, samples, block)])
    mean = float(draws.mean())
    half = 1.959963984540054 * float(draws.std(ddof=1)) / np.sqrt(samples)
    return RsopRevenue(mean, False, samples, mean - half, mean + half)


def _rsop_revenues(desc: np.ndarray, in_a: np.ndarray) -> np.ndarray:
    """RSOP revenue of each split (rows of ``in_a``: membership of half A, columns in descending-value
    order): A's optimal price sold to B plus B's optimal price sold to A."""
    # last_tied[j]: the last position whose value is >= desc[j] (handles ties in the counts).
    last_tied = np.searchsorted(-desc, -desc, side="right") - 1
    return _offer(desc, in_a, ~in_a, last_tied) + _offer(desc, ~in_a, in_a, last_tied)


def _offer(desc: np.ndarray, sample: np.ndarray, market: np.ndarray, last_tied: np.ndarray) -> np.ndarray:
    """Revenue from ``market`` at the optimal price of ``sample`` (lowest optimal price on ties)."""
    in_sample = np.cumsum(sample, axis=1, dtype=np.int32)[:, last_tied]
    revenue = np.where(sample, desc * in_sample, -1.0)
    best = desc.size - 1 - np.argmax(revenue[:, ::-1], axis=1)  # lowest price among maximisers
    rows = np.arange(sample.shape[0])
    has_price = revenue[rows, best] > 0
    price = desc[best]
    buyers = np.cumsum(market, axis=1, dtype=np.int32)[rows, last_tied[best]]
    return np.where(has_price, price * buyers, 0.0)
