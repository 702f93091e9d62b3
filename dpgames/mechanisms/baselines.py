"""Benchmarks for the digital-goods auction, on the same bids.

* the omniscient optimal fixed price: ``OPT = max_p p * #{i : v_i >= p}`` (attained at a bid);
* ``F2 = max_{k >= 2} k v_(k)`` (``v_(k)`` the k-th largest value), the benchmark of competitive
  analysis (Goldberg, Hartline, Karlin, Saks & Wright 2006);
* RSOP, the random sampling optimal price auction (same paper): split the bidders by fair coins into
  A and B, offer B the optimal fixed price of A and A the optimal fixed price of B.  Ties between
  optimal prices go to the *lowest* such price; an empty half (or one whose bids are all 0) yields
  no price, and the other half buys nothing.  Its expected revenue is exact by enumerating all
  ``2^n`` splits for ``n <= 20``, and a Monte Carlo estimate with a 95% confidence interval above;
* a fixed posted price.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.bids import Bids
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory

EXACT_RSOP_MAX_N = 20
_SPLITS_PER_BLOCK_ELEMENTS = 1 << 22


def revenue_at(price: float, bids: ArrayLike) -> float:
    """``p * #{i : b_i >= p}``: the revenue of a posted price.

    Raises
    ------
    ValidationError
        For bids that are not finite numbers.
    """
    b = finite_array("bids", bids)
    return float(price * np.count_nonzero(b >= price))


@dataclass(frozen=True)
class OptimalFixedPrice:
    """The best single price with hindsight and its revenue (:func:`optimal_fixed_price`).

    Parameters
    ----------
    price : float
        The lowest optimal price (always one of the values).
    revenue : float
        ``price * #{i : v_i >= price}``.

    Examples
    --------
    >>> opt = optimal_fixed_price(
    ...     [0.3, 0.55, 0.8, 1.0]
    ... )  # 0.3 x 4 = 1.2 < 0.55 x 3 = 1.65 > 0.8 x 2
    >>> opt.price, round(opt.revenue, 12)
    (0.55, 1.65)
    """

    price: float
    revenue: float


def optimal_fixed_price(values: ArrayLike | Bids) -> OptimalFixedPrice:
    """``OPT``: the best single price with hindsight (the lowest optimal price on ties).

    Parameters
    ----------
    values : array_like or Bids
        Values in ``[0, 1]`` (a :class:`~dpgames.mechanisms.bids.Bids` is not checked or sorted
        again).

    Returns
    -------
    OptimalFixedPrice

    Raises
    ------
    ValidationError
        For values that are not numbers in ``[0, 1]``.
    """
    desc = Bids.of(values, "values").sorted[::-1]
    revenue = desc * np.arange(1, desc.size + 1)
    # last maximiser in descending order = lowest price
    k = desc.size - 1 - int(np.argmax(revenue[::-1]))
    return OptimalFixedPrice(float(desc[k]), float(revenue[k]))


def f2_benchmark(values: ArrayLike | Bids) -> float:
    """``F2 = max_{k >= 2} k v_(k)`` (0 with fewer than two bidders).

    Parameters
    ----------
    values : array_like or Bids
        Values in ``[0, 1]``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        For values that are not numbers in ``[0, 1]``.
    """
    desc = Bids.of(values, "values").sorted[::-1]
    if desc.size < 2:
        return 0.0
    return float(np.max(desc[1:] * np.arange(2, desc.size + 1)))


@dataclass(frozen=True)
class RsopRevenue:
    """Expected RSOP revenue; ``exact`` when all splits were enumerated, else a Monte Carlo mean
    over ``samples`` splits with its 95% confidence interval ``(ci_low, ci_high)``.

    Parameters
    ----------
    mean : float
        The expected revenue (exact or estimated).
    exact : bool
        Whether every split was enumerated.
    samples : int
        Splits used (``2^n`` when exact).
    ci_low, ci_high : float
        The 95% confidence interval (both equal to ``mean`` when exact).

    Examples
    --------
    >>> exact = rsop_revenue([0.3, 0.55, 0.8, 1.0])            # 2^4 splits enumerated
    >>> exact.exact, exact.samples, round(exact.mean, 12)
    (True, 16, 0.8)
    >>> estimate = rsop_revenue([0.3, 0.55, 0.8, 1.0], samples=400, rng=1, exact_max_n=0)
    >>> estimate.exact, bool(estimate.ci_low <= 0.8 <= estimate.ci_high)
    (False, True)
    """

    mean: float
    exact: bool
    samples: int
    ci_low: float
    ci_high: float


def rsop_revenue(
    values: ArrayLike | Bids,
    samples: int = 2000,
    rng: RNGLike = None,
    exact_max_n: int = EXACT_RSOP_MAX_N,
) -> RsopRevenue:
    """RSOP's expected revenue: exact for ``n <= exact_max_n``, otherwise Monte Carlo over
    ``samples``.

    Parameters
    ----------
    values : array_like or Bids
        Values in ``[0, 1]``.
    samples : int
        Random splits for the Monte Carlo estimate (at least 2 when it is used).
    rng : numpy.random.Generator or int, optional
        The splits' randomness (same seed, same estimate).
    exact_max_n : int
        Enumerate all ``2^n`` splits up to this many bidders (at most 30).

    Returns
    -------
    RsopRevenue

    Raises
    ------
    ValidationError
        For bad values, ``samples`` or ``exact_max_n``, or a Monte Carlo run that would not fit in
        memory.
    """
    exact_max_n = integer("exact_max_n", exact_max_n, 0, 30)  # 2^n splits are enumerated
    samples = integer("samples", samples, low=0)
    memory("samples", samples, what=f"{samples:,} random splits")
    desc = Bids.of(values, "values").sorted[::-1]
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
        raise ValidationError(
            "samples", f": RSOP Monte Carlo needs at least 2 samples, got {samples}"
        )
    gen = as_generator(rng)
    block = max(1, _SPLITS_PER_BLOCK_ELEMENTS // desc.size)
    draws = np.concatenate(
        [
            _rsop_revenues(desc, gen.random((min(block, samples - s), desc.size)) < 0.5)
            for s in range(0, samples, block)
        ]
    )
    mean = float(draws.mean())
    half = 1.959963984540054 * float(draws.std(ddof=1)) / np.sqrt(samples)
    return RsopRevenue(mean, False, samples, mean - half, mean + half)


def _rsop_revenues(desc: np.ndarray, in_a: np.ndarray) -> np.ndarray:
    """RSOP revenue of each split (rows of ``in_a``: membership of half A, columns in
    descending-value order): A's optimal price sold to B plus B's optimal price sold to A.

    One running count serves both halves: among the bidders with a value at least ``desc[j]`` (the
    first ``last_tied[j] + 1``, ties included), A holds ``count_a`` and B the rest."""
    last_tied = np.searchsorted(-desc, -desc, side="right") - 1
    count_a = np.cumsum(in_a, axis=1, dtype=np.int32)
    if (last_tied != np.arange(desc.size)).any():  # ties: count every bidder of an equal value
        count_a = count_a[:, last_tied]
    count_b = (last_tied + 1).astype(np.int32) - count_a
    return _offer(desc, in_a, count_a, count_b) + _offer(desc, ~in_a, count_b, count_a)


def _offer(
    desc: np.ndarray, sample: np.ndarray, in_sample: np.ndarray, in_market: np.ndarray
) -> np.ndarray:
    """Revenue from the market at the optimal price of ``sample`` (lowest optimal price on ties);
    ``in_sample`` / ``in_market``: how many of each hold a value at least each ``desc[j]``.

    A price outside the sample scores 0: it can never be the argmax of a positive revenue, and a
    sample whose best revenue is 0 yields no price either way."""
    revenue = np.multiply(desc, in_sample)
    revenue *= sample
    best = desc.size - 1 - np.argmax(revenue[:, ::-1], axis=1)  # lowest price among maximisers
    rows = np.arange(sample.shape[0])
    has_price = revenue[rows, best] > 0
    return np.where(has_price, desc[best] * in_market[rows, best], 0.0)
