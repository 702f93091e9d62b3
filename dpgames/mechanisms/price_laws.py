"""Exact laws of a posted price drawn by the exponential mechanism from bids.

The score of price ``p`` on bids ``b`` is the revenue ``Rev(p, b) = p * #{i : b_i >= p}``.  The
buyer count ``c(p)`` is a step function of ``p`` that changes only at the bids, so the price's law
splits into *cells* on which the set of buyers is constant:

* a grid of prices: one cell per price (an atom of mass ``P_j ~ exp(k p_j c_j)``);
* the continuum ``[0, 1]``: one cell per gap between consecutive sorted bids, on which the density
  ``exp(k c p)`` is a single exponential, integrated and sampled in closed form (no discretisation).

Here ``k`` is the exponential mechanism's factor on the score (``eps / (2 Delta)``).

Besides sampling, revenue and welfare, a law answers the *cumulative functionals* the exact misreport
audit needs at any point ``x``, for a tilt ``s`` in {-1, 0, 1}:

    M0_s(x) = E[exp(s k p); p <= x],   M1_s(x) = E[p exp(s k p); p <= x].

Changing one bid from ``b`` to ``b'`` multiplies the unnormalised law by ``exp(+-k p)`` exactly on the
prices between the two, so these functionals give the law after any single misreport in O(1).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.special import logsumexp

from dpgames.privacy.distribution import FiniteDistribution, as_generator

TILTS = (-1, 0, 1)


def _h(x: np.ndarray) -> np.ndarray:
    """Mean of ``exp(x y)`` on ``y in [0, 1]``: ``1/(1 - e^{-x}) - 1/x`` (1/2 at 0), stable for all x."""
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
    a, lo, hi = np.broadcast_arrays(np.asarray(a, float), np.asarray(lo, float), np.asarray(hi, float))
    w = hi - lo
    y = np.abs(a) * w
    small = y < 1e-8
    safe_y = np.where(small, 1.0, y)
    log_g = np.where(small, -y / 2, np.log(-np.expm1(-safe_y)) - np.log(safe_y))  # log((1 - e^-y) / y)
    with np.errstate(divide="ignore"):
        out = np.maximum(a * lo, a * hi) + np.log(w) + log_g
    return np.where(w > 0, out, -np.inf)


class PriceLaw:
    """The exact law of the price, cell by cell.  Subclasses set the cell arrays:

    ``cell_log_mass`` (normalised), ``cell_mean`` (mean price within the cell), ``cell_buyers_from``
    (index into the ascending sorted bids of the first buyer: every bid from there on buys), and
    ``scale`` (the factor ``k``).
    """

    sorted_bids: np.ndarray
    order: np.ndarray | None
    cell_log_mass: np.ndarray
    cell_mean: np.ndarray
    cell_buyers_from: np.ndarray
    scale: float

    @property
    def n(self) -> int:
        return self.sorted_bids.size

    @cached_property
    def cells(self) -> FiniteDistribution:
        return FiniteDistribution(self.cell_log_mass)

    @property
    def cell_buyers(self) -> np.ndarray:
        return self.n - self.cell_buyers_from

    def expected_revenue(self) -> float:
        """``E[p * #{i : b_i >= p}]``, exactly."""
        return float(self.cells.expect(self.cell_mean * self.cell_buyers))

    def expected_price(self) -> float:
        return float(self.cells.expect(self.cell_mean))

    def expected_welfare(self, values_in_bid_order: np.ndarray) -> float:
        """``E[sum of values of the buyers]`` for values listed in ascending-bid order."""
        suffix = np.concatenate([np.cumsum(values_in_bid_order[::-1])[::-1], [0.0]])
        return float(self.cells.expect(suffix[self.cell_buyers_from]))

    def sample(self, size: int | None = None, rng: np.random.Generator | int | None = None):
        """Exact draws of the price."""
        gen = as_generator(rng)
        cell = np.asarray(self.cells.sample_indices(size, gen))
        draws = self._draw_within(cell, gen.random(cell.shape))
        return float(draws) if size is None else draws

    def _draw_within(self, cell: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def cumulative(self, x: np.ndarray, tilt: int) -> tuple[np.ndarray, np.ndarray]:
        """``(M0_s(x), M1_s(x))`` for tilt ``s`` (see the module docstring), vectorised over ``x``."""
        mass, moment = self._tilted_prefix[tilt]
        idx = self._cell_of(np.asarray(x, dtype=float))
        part_mass, part_moment = self._partial(idx, np.asarray(x, dtype=float), tilt)
        return mass[idx] + part_mass, moment[idx] + part_moment

    def expected_utility(self, value: np.ndarray, bid: np.ndarray) -> np.ndarray:
        """``E[(v - p) 1{p <= bid}]`` for each (value, bid): the quasi-linear utility of one agent."""
        m0, m1 = self.cumulative(bid, 0)
        return np.asarray(value) * m0 - m1

    @cached_property
    def _tilted_prefix(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        out = {}
        for s in TILTS:
            log_mass, mean = self._tilted_cells(s)
            mass = np.exp(log_mass)
            out[s] = (np.concatenate([[0.0], np.cumsum(mass)]),
                      np.concatenate([[0.0], np.cumsum(mass * mean)]))
        return out

    def _tilted_cells(self, tilt: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def prices_between(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For price intervals ``(lo, hi]``: the infimum and maximum of the possible prices inside, whether
        any possible price lies inside, and whether any lies outside (vectorised)."""
        raise NotImplementedError

    def _cell_of(self, x: np.ndarray) -> np.ndarray:
        """The number of cells lying wholly at or below ``x``."""
        raise NotImplementedError

    def _partial(self, idx: np.ndarray, x: np.ndarray, tilt: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class GridPriceLaw(PriceLaw):
    """Exponential mechanism over a finite, ascending price set: an atom per price."""

    def __init__(self, prices: np.ndarray, sorted_bids: np.ndarray, scale: float):
        self.prices = prices
        self.sorted_bids = sorted_bids
        self.scale = scale
        self.cell_buyers_from = np.searchsorted(sorted_bids, prices, side="left")
        self.revenue_scores = prices * (sorted_bids.size - self.cell_buyers_from)
        log_w = scale * self.revenue_scores
        self.cell_log_mass = log_w - logsumexp(log_w)
        self.cell_mean = prices

    @property
    def distribution(self) -> FiniteDistribution:
        return FiniteDistribution(self.cell_log_mass, self.prices)

    def _draw_within(self, cell: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.prices[cell]

    def prices_between(self, lo: np.ndarray, hi: np.ndarray):
        first = np.searchsorted(self.prices, lo, side="right")
        end = np.searchsorted(self.prices, hi, side="right")
        any_inside = end > first
        last = np.maximum(end - 1, 0)
        return (self.prices[np.minimum(first, self.prices.size - 1)], self.prices[last], any_inside,
                (first > 0) | (end < self.prices.size))

    def _tilted_cells(self, tilt: int) -> tuple[np.ndarray, np.ndarray]:
        return self.cell_log_mass + tilt * self.scale * self.prices, self.prices

    def _cell_of(self, x: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.prices, x, side="right")

    def _partial(self, idx, x, tilt):
        return 0.0, 0.0


class ContinuousPriceLaw(PriceLaw):
    """Exponential mechanism over the price continuum ``[0, 1]`` (sensitivity 1).

    Cells are ``(0, s_1], (s_1, s_2], ..., (s_n, 1]`` for the ascending bids ``s``; on cell ``j`` the
    buyer count is ``n - j`` and the density is proportional to ``exp(k (n - j) p)``."""

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
        return lo, hi, hi > lo, (lo > 0) | (hi < 1)

    def _tilted_cells(self, tilt: int) -> tuple[np.ndarray, np.ndarray]:
        rate = self.rate + tilt * self.scale
        return (_log_exp_integral(rate, self.lo, self.hi) - self.log_normaliser,
                self._mean(rate, self.lo, self.hi))

    def _cell_of(self, x: np.ndarray) -> np.ndarray:
        # Cell j = (lo_j, hi_j] lies wholly at or below x when hi_j <= x.
        return np.searchsorted(self.hi, x, side="right")

    def _partial(self, idx, x, tilt):
        inside = idx <= self.n  # x falls inside cell idx (the last cell ends at 1)
        j = np.minimum(idx, self.n)
        lo = self.lo[j]
        top = np.clip(x, lo, self.hi[j])
        rate = self.rate[j] + tilt * self.scale
        mass = np.where(inside, np.exp(_log_exp_integral(rate, lo, top) - self.log_normaliser), 0.0)
        return mass, mass * self._mean(rate, lo, top)
