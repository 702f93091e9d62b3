"""Exact laws of a posted price drawn by the exponential mechanism from bids.

The score of price ``p`` on bids ``b`` is the revenue ``Rev(p, b) = p * #{i : b_i >= p}``.  The
buyer count ``c(p)`` is a step function of ``p`` that changes only at the bids, so the price's law
splits into *cells* on which the set of buyers is constant:

* a grid of prices: one cell per price (an atom of mass ``P_j ~ exp(k p_j c_j)``);
* the continuum ``[0, 1]``: one cell per gap between consecutive sorted bids, on which the density
  ``exp(k c p)`` is a single exponential, integrated and sampled in closed form (no discretisation).

Here ``k`` is the exponential mechanism's factor on the score (``eps / (2 Delta)``).

Besides sampling, revenue and welfare, a law answers the *range functionals* the exact misreport and
privacy audits need, for any price interval ``(lo, hi]``:

    E[f(p); lo < p <= hi]   for f(p) in {1, p, e^{k p}, p e^{k p}, e^{-k p}}   (see :data:`FUNCTIONALS`).

Changing one bid from ``b`` to ``b'`` multiplies the unnormalised law by ``exp(+-k p)`` exactly on
the prices between the two, so these functionals give the law after any single misreport in O(1).

For moderate ``k`` (``k * largest price <=`` :data:`LINEAR_TILT_LIMIT`) the audits use the same
functionals *up to a point* in linear space instead (:meth:`PriceLaw.linear_prefix`: ``E[f(p); p <=
x]`` for ``f`` in :data:`LINEAR_FUNCTIONALS`, two-level prefix sums of non-negative cell terms),
which makes every gain and every privacy loss rank one in a per-bid and a per-report factor.

Numerics (exact for any ``k`` a float can hold, e.g. eps up to 1e6 and beyond): every functional is
kept as a *logarithm*, so ``exp(k p)`` never overflows, however large ``k`` is.  A range is a
difference of two prefix (or two suffix) log-sums only where that cancels at most a factor 3 of
rounding; otherwise, a range holding e.g. ``1e-300`` of the mass between two heavy regions, it is a
log-sum-exp of positive terms over a segment tree of cells (at most ``2 log2 m`` nodes).  Either way
every range keeps full relative precision (up to ~1e-16 k, the rounding of a logarithm of size k).
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.display import html_table, svg_law
from dpgames.mechanisms.bids import Bids
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.rng import RNGLike, as_generator

#: The range functionals, in the order of :meth:`PriceLaw.log_range`'s rows: ``(name, tilt,
#: moment)`` for ``f(p) = p**moment * exp(tilt * k * p)``.
FUNCTIONALS = (("mass", 0, 0), ("moment", 0, 1), ("up", 1, 0), ("up_moment", 1, 1), ("down", -1, 0))


#: The functionals of :meth:`PriceLaw.linear_prefix`, in row order: ``f(p)`` in ``{1, p, e^{kp} - 1,
#: p (e^{kp} - 1), 1 - e^{-kp}}``, all ``>= 0``, so the law after any single misreport is *rank one*
#: in them: a per-bid and a per-report term combined once (see :mod:`dpgames.analysis.misreport`).
LINEAR_FUNCTIONALS = ("mass", "moment", "up_excess", "up_excess_moment", "down_deficit")

#: Largest ``k * (largest price)`` for which the audits use :meth:`PriceLaw.linear_prefix`: the tilt
#: ``e^{kp}`` stays below ``e^3 ~ 20``, so a gain (a ratio of sums of such terms, the denominator at
#: least ``e^{-k p}``) keeps ~1e-14 of absolute precision.  Above it the log-space range functionals
#: (:meth:`PriceLaw.log_between`) are used: exact at any ``k``, slower.
LINEAR_TILT_LIMIT = 3.0


def prefix_sums(terms: np.ndarray) -> np.ndarray:
    """``rows x (m + 1)``: the sums of the first ``0, 1, ..., m`` columns of non-negative ``terms``.

    Two-level: a running sum within blocks of ``~sqrt(m)`` columns plus the running sum of the block
    totals, so each prefix carries at most ``~2 sqrt(m)`` roundings (not ``m`` as a plain
    cumsum)."""
    rows, m = terms.shape
    block = max(1, math.isqrt(m))
    blocks = -(-m // block)
    padded = np.zeros((rows, blocks * block))
    padded[:, :m] = terms
    inner = np.cumsum(padded.reshape(rows, blocks, block), axis=2)
    offsets = np.zeros((rows, blocks))
    np.cumsum(inner[:, :-1, -1], axis=1, out=offsets[:, 1:])
    out = np.zeros((rows, m + 1))
    out[:, 1:] = (inner + offsets[:, :, None]).reshape(rows, blocks * block)[:, :m]
    return out


def _h(x: np.ndarray) -> np.ndarray:
    """Mean of ``exp(x y)`` on ``y in [0, 1]``: ``1/(1 - e^{-x}) - 1/x`` (1/2 at 0), stable for all
    x."""
    x = np.asarray(x, dtype=float)
    ax = np.abs(x)
    small = ax < 1e-3
    safe = np.where(small, 1.0, ax)
    big = 1.0 / -np.expm1(-safe) - 1.0 / safe
    series = 0.5 + ax / 12.0 - ax**3 / 720.0
    pos = np.where(small, series, big)
    return np.where(x >= 0, pos, 1.0 - pos)


def _log_exp_integral(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``log of integral_lo^hi exp(a p) dp`` for ``hi >= lo`` (``-inf`` for an empty interval)."""
    a, lo, hi = np.broadcast_arrays(
        np.asarray(a, float), np.asarray(lo, float), np.asarray(hi, float)
    )
    w = hi - lo
    y = np.abs(a) * w
    small = y < 1e-8
    safe_y = np.where(small, 1.0, y)
    # log((1 - e^-y) / y)
    log_g = np.where(small, -y / 2, np.log(-np.expm1(-safe_y)) - np.log(safe_y))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.maximum(a * lo, a * hi) + np.log(np.where(w > 0, w, 1.0)) + log_g
    return np.where(w > 0, out, -np.inf)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


class RangeLogSum:
    """Log-sums of positive terms over index ranges, with full relative precision.

    Built from ``log_terms`` (rows: functionals, columns: cells), it answers ``log sum_{c in [i, j)}
    exp(log_terms[:, c])`` for arrays of ranges at once: a bottom-up segment tree whose nodes hold
    the log-sum-exp of their children, so each range is a log-sum-exp of at most ``2 log2 m`` node
    values, all positive terms (no subtraction, so no cancellation).  O(m) to build, O(log m) per
    range.

    Parameters
    ----------
    log_terms : numpy.ndarray
        ``rows x m`` logarithms of the terms (``-inf`` for a zero term).

    Examples
    --------
    >>> sums = RangeLogSum(np.log([[1.0, 2.0, 3.0, 4.0]]))
    >>> np.exp(sums.query([0, 1, 2], [4, 3, 2])).round(12).tolist()   # [0, 4), [1, 3), empty
    [[10.0, 5.0, 0.0]]
    """

    def __init__(self, log_terms: np.ndarray):
        rows, m = log_terms.shape
        size = 1 << max(0, int(m - 1).bit_length())
        tree = np.full((rows, 2 * size), -np.inf)
        tree[:, size : size + m] = log_terms
        start = size
        while start > 1:
            half = start // 2
            children = tree[:, start : 2 * start]
            tree[:, half:start] = np.logaddexp(children[:, 0::2], children[:, 1::2])
            start = half
        self.size = size
        self.tree = tree

    def query(self, first: np.ndarray, end: np.ndarray) -> np.ndarray:
        """``rows x len(first)``: the log-sum over cells ``[first, end)`` (``-inf`` when empty).

        Parameters
        ----------
        first, end : array_like of int
            Range bounds, one pair per query.

        Returns
        -------
        numpy.ndarray
        """
        left = np.asarray(first, dtype=np.int64).ravel() + self.size
        right = np.maximum(np.asarray(end, dtype=np.int64).ravel() + self.size, left)
        out = np.full((self.tree.shape[0], left.size), -np.inf)
        live = np.flatnonzero(left < right)
        left, right = left[live], right[live]
        while live.size:
            take = np.flatnonzero(left & 1)
            out[:, live[take]] = np.logaddexp(out[:, live[take]], self.tree[:, left[take]])
            left[take] += 1
            take = np.flatnonzero(right & 1)
            right[take] -= 1
            out[:, live[take]] = np.logaddexp(out[:, live[take]], self.tree[:, right[take]])
            left, right = left >> 1, right >> 1
            keep = left < right
            live, left, right = live[keep], left[keep], right[keep]
        return out


def log_sub(big: np.ndarray, small: np.ndarray) -> np.ndarray:
    """``log(exp(big) - exp(small))`` for ``small <= big`` (rounding that makes ``small > big``
    gives -inf)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = big + np.log1p(-np.exp(np.minimum(small - big, 0.0)))
    return np.where((small < big) & np.isfinite(big), diff, -np.inf)


class PriceLaw:
    """The exact law of the price, cell by cell.  Subclasses set the cell arrays:

    ``cell_log_mass`` (normalised), ``cell_mean`` (mean price within the cell), ``cell_buyers_from``
    (index into the ascending sorted bids of the first buyer: every bid from there on buys), and
    ``scale`` (the factor ``k``); and ``_sums``, the :class:`RangeLogSum` of the functionals per
    cell. Built by :meth:`dpgames.mechanisms.digital_goods.DigitalGoodsAuction.price_law`.

    Examples
    --------
    >>> from dpgames import DigitalGoodsAuction
    >>> law = DigitalGoodsAuction(1.0, alpha=0.25).price_law([0.3, 0.55, 0.8, 1.0])
    >>> type(law).__name__, law.n, law.scale
    ('GridPriceLaw', 4, 0.5)
    >>> round(law.expected_revenue(), 4), round(law.expected_price(), 4)
    (1.2811, 0.625)
    >>> law.sample_price(3, rng=1).tolist()
    [0.75, 1.0, 0.25]
    >>> # E[(v - p) 1{p <= bid}] at v = bid = 0.8: P[0.25] (0.8 - 0.25) + P[0.5] (0.8 - 0.5) + P[0.75] 0.05
    >>> round(float(law.expected_utility(0.8, 0.8)), 4)
    0.2188
    """

    sorted_bids: np.ndarray
    #: The :class:`~dpgames.mechanisms.bids.Bids` the law was built on, when built by
    #: :meth:`DigitalGoodsAuction.price_law` (the audits reuse its sort order).
    bids: Bids | None = None
    cell_log_mass: np.ndarray
    cell_mean: np.ndarray
    cell_buyers_from: np.ndarray
    scale: float

    @property
    def _sums(self) -> RangeLogSum:
        """The :class:`RangeLogSum` of the functionals per cell (each subclass computes it)."""
        raise NotImplementedError

    @property
    def n(self) -> int:
        """The number of bids."""
        return self.sorted_bids.size

    @cached_property
    def cells(self) -> FiniteDistribution:
        """The law of the cell the price falls in."""
        return FiniteDistribution(self.cell_log_mass)

    @property
    def cell_buyers(self) -> np.ndarray:
        """The number of buyers at a price in each cell."""
        return self.n - self.cell_buyers_from

    def _repr_html_(self) -> str:
        """The law drawn as inline SVG (probabilities on a grid, the density on the continuum) above
        its headline figures (Jupyter)."""
        if isinstance(self, GridPriceLaw):
            shape, first, last = (
                np.exp(self.cell_log_mass),
                f"{self.prices[0]:g}",
                f"{self.prices[-1]:g}",
            )
        else:
            shape, first, last = (
                cast(ContinuousPriceLaw, self).density(np.linspace(0.0, 1.0, 201)),
                "0",
                "1",
            )
        figures = html_table(
            [
                ("bids", self.n),
                ("expected price", self.expected_price()),
                ("expected revenue", self.expected_revenue()),
            ],
            title="law of the price (exact)",
        )
        return figures + svg_law(shape, first=first, last=last)

    def expected_revenue(self) -> float:
        """``E[p * #{i : b_i >= p}]``, exactly."""
        return float(self.cells.expect(self.cell_mean * self.cell_buyers))

    def expected_price(self) -> float:
        """``E[p]``, exactly."""
        return float(self.cells.expect(self.cell_mean))

    def expected_welfare(self, values_in_bid_order: np.ndarray) -> float:
        """``E[sum of values of the buyers]`` for values listed in ascending-bid order."""
        suffix = np.concatenate([np.cumsum(values_in_bid_order[::-1])[::-1], [0.0]])
        return float(self.cells.expect(suffix[self.cell_buyers_from]))

    def sample_price(self, size: int | None = None, rng: RNGLike = None):
        """Exact draws of the price (a float, or an array of ``size`` floats): the cell by its exact
        probability, then the price within the cell by its inverse CDF."""
        gen = as_generator(rng)
        cell = np.asarray(self.cells.sample_indices(size, gen))
        draws = self._draw_within(cell, gen.random(cell.shape))
        return float(draws) if size is None else draws

    def _draw_within(self, cell: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def log_range(self, lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
        """``len(FUNCTIONALS) x size``: ``log E[f(p); lo < p <= hi]`` for each functional ``f`` of
        :data:`FUNCTIONALS` and each interval (``-inf`` for an empty one), with full relative
        precision (see the module docstring).  ``lo`` and ``hi`` broadcast together; any real values
        are allowed."""
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
        out = self._log_range(lo.ravel(), hi.ravel())
        return out.reshape((len(FUNCTIONALS),) + lo.shape)

    def _log_range(self, lo: np.ndarray, hi: np.ndarray, middle=None) -> np.ndarray:
        first, end = self._middle_bounds(lo, hi)
        inner = (self._sums.query if middle is None else middle)(first, end)
        out = np.logaddexp(self._edges(lo, hi, first, end), inner)
        return np.where((hi <= lo)[None, :], -np.inf, out)

    def log_between(self, bids: np.ndarray, reports: np.ndarray) -> np.ndarray:
        """``len(FUNCTIONALS) x bids x reports``: :meth:`log_range` of ``(min(b, r), max(b, r)]``.

        O(1) per pair: the range is a difference of two prefix sums ``(-inf, hi] - (-inf, lo]`` or
        of two suffix sums ``(lo, inf) - (hi, inf)``, whichever cancels less.  The relative error of
        ``A - B`` is ``1e-16 (A + B) / (A - B)``, at most 3e-16 when ``B <= A / 2``; pairs where
        both differences would cancel more (a light range between two heavy ones) are recomputed
        exactly by :meth:`log_range` (segment tree, positive terms only).  So every pair has full
        relative precision, and most cost a handful of vector operations."""
        bids, reports = np.asarray(bids, dtype=float), np.asarray(reports, dtype=float)
        pre_b, suf_b = self.log_range(-1.0, bids), self.log_range(bids, 2.0)
        pre_r, suf_r = self.log_range(-1.0, reports), self.log_range(reports, 2.0)
        raising = (bids[:, None] < reports[None, :])[None, :, :]
        pb, sb, pr, sr = pre_b[:, :, None], suf_b[:, :, None], pre_r[:, None, :], suf_r[:, None, :]
        with np.errstate(invalid="ignore"):
            pre_small = np.where(raising, pb - pr, pr - pb)  # ln(prefix(lo) / prefix(hi))
            suf_small = np.where(raising, sr - sb, sb - sr)  # ln(suffix(hi) / suffix(lo))
        use_prefix = ~(suf_small < pre_small)  # NaN (both -inf): either is empty
        big = np.where(use_prefix, np.where(raising, pr, pb), np.where(raising, sb, sr))
        small_log = np.where(use_prefix, pre_small, suf_small)
        out = log_sub(big, big + small_log)
        out[:, (bids[:, None] == reports[None, :])] = -np.inf
        cancels = (small_log > -np.log(2.0)).any(axis=0) & (bids[:, None] != reports[None, :])
        if cancels.any():
            i, j = np.nonzero(cancels)
            out[:, i, j] = self.log_range(
                np.minimum(bids[i], reports[j]), np.maximum(bids[i], reports[j])
            )
        return out

    def _middle_bounds(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The cells ``[first, end)`` lying wholly inside ``(lo, hi]``."""
        raise NotImplementedError

    @property
    def largest_price(self) -> float:
        """The largest possible price (the score's sensitivity): the last grid price, 1 on the
        continuum."""
        raise NotImplementedError

    def lowest_price_above(self, x: np.ndarray) -> np.ndarray:
        """The infimum of the possible prices above each ``x`` (the largest price for ``x`` at or
        above it)."""
        raise NotImplementedError

    @property
    def linear_ok(self) -> bool:
        """Whether :meth:`linear_prefix` is precise enough for the audits: ``k * largest price <=``
        :data:`LINEAR_TILT_LIMIT`."""
        return self.scale * self.largest_price <= LINEAR_TILT_LIMIT

    def linear_prefix(self, x: np.ndarray) -> np.ndarray:
        """``len(LINEAR_FUNCTIONALS) x size``: ``E[f(p); p <= x]`` for each functional ``f`` of
        :data:`LINEAR_FUNCTIONALS`, in linear space (not logarithms).

        Each cell's terms are non-negative and summed by :func:`prefix_sums`; a difference of two
        prefixes is then exact to ``~1e-16`` times the larger one (absolute).  Meant for
        ``k * largest price <=`` :data:`LINEAR_TILT_LIMIT` (:attr:`linear_ok`), where every term is
        below ``e^3``; above it use :meth:`log_range`."""
        raise NotImplementedError

    @cached_property
    def _linear_sums(self) -> np.ndarray:
        return prefix_sums(self._linear_cell_terms())

    def _linear_cell_terms(self) -> np.ndarray:
        raise NotImplementedError

    def _edges(self, lo, hi, first, end) -> np.ndarray:
        """The log functionals of the parts of ``(lo, hi]`` in cells only partly inside it."""
        raise NotImplementedError

    def expected_utility(self, value: np.ndarray, bid: np.ndarray) -> np.ndarray:
        """``E[(v - p) 1{p <= bid}]`` for each (value, bid): the quasi-linear utility of one
        agent."""
        f = self.log_range(-1.0, bid)
        return np.asarray(value) * np.exp(f[0]) - np.exp(f[1])

    def prices_between(
        self, lo: np.ndarray, hi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For price intervals ``(lo, hi]``: the infimum and maximum of the possible prices inside,
        whether any possible price lies inside, and whether any lies outside (vectorised)."""
        raise NotImplementedError

    def canonical(self, x: np.ndarray) -> np.ndarray:
        """A representative of ``x`` with the same range functionals (the grid maps a point to the
        largest price at or below it): lets audits deduplicate reports."""
        return np.asarray(x, dtype=float)


def _grid_distribution(
    prices: np.ndarray, revenue_scores: np.ndarray, scale: float
) -> FiniteDistribution:
    """The exponential mechanism's law over ``prices``: weights ``exp(k Rev(p))``, shifted by the
    largest."""
    log_w = scale * revenue_scores
    log_w -= log_w.max()
    return FiniteDistribution.from_log_weights(log_w, prices, copy=False)


#: Largest deviation of a price from ``j * step``, in steps, for :func:`counts_below` to treat the
#: prices as a uniform grid (those of :func:`~dpgames.mechanisms.digital_goods.price_grid` deviate
#: by ~1e-16 steps).
UNIFORM_TOLERANCE = 1e-6


#: ``1.5 * 2^52``: a float in ``[2^52, 2^53)``, where consecutive floats are 1 apart, and its bits
#: as an integer.
_ROUNDER = 1.5 * 2.0**52
_ROUNDER_BITS = np.array(_ROUNDER).view(np.int64)


#: Bids per block in :func:`counts_below` (at least the number of prices): its work arrays, ~0.6 MB,
#: stay in cache.
COUNT_BLOCK = 1 << 15


def _uniform_step(prices: np.ndarray) -> float | None:
    """The step ``s`` when ``prices[j - 1]`` is ``j s`` within :data:`UNIFORM_TOLERANCE` steps for
    every ``j`` and the grid reaches 1 (``(m + 1) s > 1``), else ``None``."""
    m = prices.size
    step = float(prices[-1]) / m
    if not (m + 1) * step > 1:
        return None
    deviation = np.abs(prices - np.arange(1, m + 1) * step).max()
    return step if deviation <= UNIFORM_TOLERANCE * step else None


def counts_below(prices: np.ndarray, bids: np.ndarray, ascending: bool = False) -> np.ndarray:
    """``#{i : b_i < p_j}`` for each price: ``np.searchsorted(np.sort(bids), prices, side="left")``,
    exactly.

    On a uniform grid (prices ``p_j = j s`` up to :data:`UNIFORM_TOLERANCE` steps, reaching 1, as
    :func:`~dpgames.mechanisms.digital_goods.price_grid` builds them) no sort: a histogram of the
    bids over the prices.  Each bid's count of prices at or below it, ``c_i = #{j : p_j <=
    b_i}``, is ``r - 1`` or ``r`` for ``r = round(b_i / s)`` (every other price lies about half a
    step or more from ``b_i``, far beyond the ~1e-8 steps of rounding in ``r``), and one
    comparison with ``p_r`` decides, so the counts equal the sorted search bit for bit; then
    ``#{i : b_i < p_j} = #{i : c_i <= j - 1}``, a cumulative :func:`numpy.bincount`, over blocks
    of ``max(COUNT_BLOCK, m)`` bids (:data:`COUNT_BLOCK`). O(n + m).  Other price sets sort the
    bids (a binary search of every unsorted bid among the prices costs more than 10x a sort)
    unless ``ascending`` says they already are.

    Parameters
    ----------
    prices : numpy.ndarray
        Ascending prices in (0, 1].
    bids : numpy.ndarray
        Bids in [0, 1] (checked by the caller).
    ascending : bool
        Whether ``bids`` is already sorted.

    Returns
    -------
    numpy.ndarray
        ``m`` integers, non-decreasing.

    Examples
    --------
    >>> counts_below(np.arange(1, 5) / 4, np.array([0.5, 0.1, 0.25, 1.0, 0.3])).tolist()
    [1, 3, 4, 4]
    """
    step = None if ascending else _uniform_step(prices)
    if step is None:
        return np.searchsorted(bids if ascending else np.sort(bids), prices, side="left")
    m = prices.size
    # padded[r] = p_r; -inf at 0, +inf at m + 1
    padded = np.concatenate([[-np.inf], prices, [np.inf]])
    histogram = np.zeros(m + 2, dtype=np.int64)
    chunk = max(COUNT_BLOCK, m)  # a block's bincount costs O(m): O(n + m) in all
    size = min(chunk, bids.size)
    rounded, found, above = np.empty(size), np.empty(size), np.empty(size, dtype=bool)
    for start in range(0, bids.size, chunk):  # blocks that stay in cache, buffers reused
        block = bids[start : start + chunk]
        k = block.size
        # r = round(b / s) in [0, m + 1]: adding 1.5 * 2^52 (where floats are 1 apart) rounds to an
        # integer, read from the float's bits (a float-to-int cast costs ~10x more)
        np.multiply(block, 1.0 / step, out=rounded[:k])
        rounded[:k] += _ROUNDER
        r = rounded[:k].view(np.int64)
        r -= _ROUNDER_BITS
        np.take(padded, r, out=found[:k], mode="clip")  # r is in range: clip skips the bounds check
        np.greater(found[:k], block, out=above[:k])
        r -= above[:k]  # c = r - [p_r > b]
        histogram += np.bincount(r, minlength=m + 2)
    return np.cumsum(histogram[:m])


def grid_price_distribution(
    prices: np.ndarray, bids: np.ndarray, scale: float, ascending: bool = False
) -> FiniteDistribution:
    """The exact law of the price over ``prices``: :attr:`GridPriceLaw.distribution` of the same
    bids, bit for bit, with the buyer counts from :func:`counts_below` (no sort on a uniform grid).

    Parameters
    ----------
    prices : numpy.ndarray
        Ascending prices in (0, 1].
    bids : numpy.ndarray
        Bids in [0, 1] (checked by the caller), in any order.
    scale : float
        The factor ``k`` on the revenue score.
    ascending : bool
        Whether ``bids`` is already sorted.

    Returns
    -------
    FiniteDistribution

    Examples
    --------
    >>> dist = grid_price_distribution(np.array([0.5, 1.0]), np.array([1.0, 0.4, 0.9]), 1.0)
    >>> dist.probabilities.tolist()                            # revenues 0.5 x 2 = 1.0 x 1
    [0.5, 0.5]
    """
    return _grid_distribution(
        prices, prices * (bids.size - counts_below(prices, bids, ascending)), scale
    )


class GridPriceLaw(PriceLaw):
    """Exponential mechanism over a finite, ascending price set: an atom per price.

    Parameters
    ----------
    prices : numpy.ndarray
        Ascending prices in (0, 1].
    sorted_bids : numpy.ndarray
        The bids, ascending.
    scale : float
        The factor ``k`` on the revenue score (``eps / (2 Delta)``).

    Examples
    --------
    >>> law = GridPriceLaw(np.array([0.5, 1.0]), np.array([0.4, 0.9, 1.0]), 1.0)
    >>> law.revenue_scores.tolist()                            # 0.5 x 2 buyers, 1.0 x 1 buyer
    [1.0, 1.0]
    >>> law.distribution.probabilities.tolist()
    [0.5, 0.5]
    """

    def __init__(self, prices: np.ndarray, sorted_bids: np.ndarray, scale: float):
        self.prices = prices
        self.sorted_bids = sorted_bids
        self.scale = scale
        self.cell_buyers_from = np.searchsorted(sorted_bids, prices, side="left")
        self.revenue_scores = prices * (sorted_bids.size - self.cell_buyers_from)
        #: The exact distribution of the price (labels: the prices); its weights serve the draws
        #: too.
        self.distribution = _grid_distribution(prices, self.revenue_scores, scale)
        self.cell_log_mass = self.distribution.log_probabilities
        self.cell_mean = prices

    @property
    def cells(self) -> FiniteDistribution:
        """The law of the cell the price falls in: one cell per price, :attr:`distribution`
        itself."""
        return self.distribution

    def _draw_within(self, cell: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.prices[cell]

    def prices_between(self, lo: np.ndarray, hi: np.ndarray):
        """See :meth:`PriceLaw.prices_between`."""
        first = np.searchsorted(self.prices, lo, side="right")
        end = np.searchsorted(self.prices, hi, side="right")
        any_inside = end > first
        last = np.maximum(end - 1, 0)
        return (
            self.prices[np.minimum(first, self.prices.size - 1)],
            self.prices[last],
            any_inside,
            (first > 0) | (end < self.prices.size),
        )

    @cached_property
    def _sums(self) -> RangeLogSum:
        lm, p, kp = self.cell_log_mass, self.prices, self.scale * self.prices
        logp = _log(p)
        terms = {
            (0, 0): lm,
            (0, 1): lm + logp,
            (1, 0): lm + kp,
            (1, 1): lm + kp + logp,
            (-1, 0): lm - kp,
        }
        return RangeLogSum(np.stack([terms[t, mo] for _, t, mo in FUNCTIONALS]))

    def _middle_bounds(self, lo, hi):
        return np.searchsorted(self.prices, lo, side="right"), np.searchsorted(
            self.prices, hi, side="right"
        )

    def _edges(self, lo, hi, first, end):
        return np.full((len(FUNCTIONALS), lo.size), -np.inf)

    @property
    def largest_price(self) -> float:
        """See :attr:`PriceLaw.largest_price`."""
        return float(self.prices[-1])

    def _linear_cell_terms(self) -> np.ndarray:
        mass, p, kp = np.exp(self.cell_log_mass), self.prices, self.scale * self.prices
        up = mass * np.expm1(kp)
        return np.stack([mass, mass * p, up, up * p, -mass * np.expm1(-kp)])

    def linear_prefix(self, x):
        """See :meth:`PriceLaw.linear_prefix`."""
        return self._linear_sums[:, np.searchsorted(self.prices, x, side="right")]

    def lowest_price_above(self, x):
        """See :meth:`PriceLaw.lowest_price_above`."""
        return self.prices[
            np.minimum(np.searchsorted(self.prices, x, side="right"), self.prices.size - 1)
        ]

    def canonical(self, x):
        """See :meth:`PriceLaw.canonical`."""
        idx = np.searchsorted(self.prices, x, side="right")
        return np.where(idx > 0, self.prices[np.maximum(idx - 1, 0)], 0.0)


class ContinuousPriceLaw(PriceLaw):
    """Exponential mechanism over the price continuum ``[0, 1]`` (sensitivity 1).

    Cells are ``(0, s_1], (s_1, s_2], ..., (s_n, 1]`` for the ascending bids ``s``; on cell ``j``
    the buyer count is ``n - j`` and the density is proportional to ``exp(k (n - j) p)``.

    Parameters
    ----------
    sorted_bids : numpy.ndarray
        The bids, ascending.
    scale : float
        The factor ``k`` on the revenue score.

    Examples
    --------
    >>> law = ContinuousPriceLaw(np.array([1.0]), 1.0)         # one bid at 1: density e^p / (e - 1)
    >>> round(float(law.density(0.5)), 6), round(float(np.exp(0.5) / (np.e - 1)), 6)
    (0.959517, 0.959517)
    >>> round(law.expected_price(), 6)                         # 1 / (e - 1), integrated exactly
    0.581977
    """

    def __init__(self, sorted_bids: np.ndarray, scale: float):
        n = sorted_bids.size
        self.sorted_bids = sorted_bids
        self.scale = scale
        self.lo = np.concatenate([[0.0], sorted_bids])
        self.hi = np.concatenate([sorted_bids, [1.0]])
        self.cell_buyers_from = np.arange(n + 1)
        self.rate = scale * (n - self.cell_buyers_from)
        log_mass = _log_exp_integral(self.rate, self.lo, self.hi)
        self.log_normaliser = float(logsumexp(log_mass))
        self.cell_log_mass = log_mass - self.log_normaliser
        self.cell_mean = self._mean(self.rate, self.lo, self.hi)

    @staticmethod
    def _mean(rate: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        w = hi - lo
        return lo + w * _h(rate * w)

    def density(self, p: np.ndarray) -> np.ndarray:
        """The normalised density at prices ``p`` in ``[0, 1]``."""
        p = np.asarray(p, dtype=float)
        count = self.n - np.searchsorted(self.sorted_bids, p, side="left")
        return np.exp(self.scale * count * p - self.log_normaliser)

    def _draw_within(self, cell: np.ndarray, u: np.ndarray) -> np.ndarray:
        # Inverse CDF of the density exp(a p) on [lo, hi]: p = hi + log(1 - u (1 - e^{-a w})) / a.
        a, lo, hi = self.rate[cell], self.lo[cell], self.hi[cell]
        w = hi - lo
        aw = a * w
        safe_a = np.where(a > 0, a, 1.0)
        exact = hi + np.log1p(u * np.expm1(-aw)) / safe_a
        uniform = lo + u * w
        return np.where(aw > 1e-12, np.clip(exact, lo, hi), uniform)

    def prices_between(self, lo: np.ndarray, hi: np.ndarray):
        """See :meth:`PriceLaw.prices_between`."""
        return lo, hi, hi > lo, (lo > 0) | (hi < 1)

    def _pieces(self, cell: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``len(FUNCTIONALS) x size``: the log functionals of ``(lo, hi]`` within one cell each."""
        rows = []
        for _, tilt, moment in FUNCTIONALS:
            rate = self.rate[cell] + tilt * self.scale
            log_int = _log_exp_integral(rate, lo, hi) - self.log_normaliser
            rows.append(log_int + _log(self._mean(rate, lo, hi)) if moment else log_int)
        return np.stack(rows)

    @cached_property
    def _sums(self) -> RangeLogSum:
        cells = np.arange(self.n + 1)
        return RangeLogSum(self._pieces(cells, self.lo, self.hi))

    @property
    def largest_price(self) -> float:
        """See :attr:`PriceLaw.largest_price`."""
        return 1.0

    def lowest_price_above(self, x):
        """See :meth:`PriceLaw.lowest_price_above`."""
        return np.clip(np.asarray(x, dtype=float), 0.0, 1.0)

    def _linear_cell_terms(self) -> np.ndarray:
        return self._linear_pieces(np.arange(self.n + 1), self.lo, self.hi)

    def _linear_pieces(self, cell: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """:data:`LINEAR_FUNCTIONALS` of ``(lo, hi]`` within one cell each (a tilted integral minus
        the plain one: ~1e-16 of the cell's mass absolute, below :data:`LINEAR_TILT_LIMIT`)."""
        mass, moment, up, up_moment, down = np.exp(self._pieces(cell, lo, hi))
        return np.stack(
            [
                mass,
                moment,
                np.maximum(up - mass, 0.0),
                np.maximum(up_moment - moment, 0.0),
                np.maximum(mass - down, 0.0),
            ]
        )

    def linear_prefix(self, x):
        """See :meth:`PriceLaw.linear_prefix`."""
        x = np.asarray(x, dtype=float)
        # x in (lo, hi] of this cell
        cell = np.minimum(np.searchsorted(self.hi, x, side="left"), self.n)
        edge = x >= self.hi[cell]  # at a cell's end (e.g. a bid): the whole cell, no partial piece
        out = self._linear_sums[:, cell + edge]
        inner = np.flatnonzero(~edge)
        if inner.size:
            c, lo = cell[inner], self.lo[cell[inner]]
            out[:, inner] += self._linear_pieces(c, lo, np.clip(x[inner], lo, self.hi[c]))
        return out

    def _cells_touched(self, lo, hi):
        last = self.n
        # first cell reaching above lo
        first_cell = np.minimum(np.searchsorted(self.hi, lo, side="right"), last)
        # the cell holding hi
        last_cell = np.minimum(np.searchsorted(self.hi, hi, side="left"), last)
        return first_cell, last_cell

    def _middle_bounds(self, lo, hi):
        first_cell, last_cell = self._cells_touched(lo, hi)
        return first_cell + 1, np.maximum(last_cell, first_cell + 1)

    def _edges(self, lo, hi, first, end):
        first_cell, last_cell = self._cells_touched(lo, hi)
        a_lo = np.clip(lo, self.lo[first_cell], self.hi[first_cell])
        a_hi = np.clip(hi, self.lo[first_cell], self.hi[first_cell])
        head = self._pieces(first_cell, a_lo, np.maximum(a_hi, a_lo))
        b_hi = np.clip(hi, self.lo[last_cell], self.hi[last_cell])
        tail = np.where(
            last_cell > first_cell, self._pieces(last_cell, self.lo[last_cell], b_hi), -np.inf
        )
        return np.logaddexp(head, tail)
