"""The digital-goods auction by the exponential mechanism (McSherry & Talwar 2007; Dwork & Roth
10.2.1).

Unlimited supply; bids ``b_i`` in ``[0, 1]``.  A price ``p`` is drawn by the exponential mechanism
with score ``Rev(p, b) = p * #{i : b_i >= p}`` (sensitivity: the largest price, at most 1), and
every bidder with ``b_i >= p`` buys at ``p``.

Guarantees (Dwork & Roth Thm 3.10-3.11 and Prop 10.1):

* the price is ``eps``-DP in the bids (and ``eps/2``-DP, since the revenue score is monotone in
  every bid), with an exact distribution (:meth:`DigitalGoodsAuction.price_law`);
* on a grid ``R`` of step ``alpha``: ``Rev >= OPT - alpha n - (2 Delta / eps) ln(|R| / beta)`` with
  probability at least ``1 - beta``; ``alpha ~ 2 / (eps n)`` balances the two losses;
* truthful bidding is a ``2 eps``-approximate dominant strategy for utilities in [0, 1]; exactly,
  the gain from any misreport is at most ``(e^eps - 1) E[(v - p)+]`` (see
  :mod:`dpgames.analysis.misreport`).

Cost: O(n log n + m) for ``n`` bids and ``m`` prices (one sort, one ``searchsorted``); never an n x
m array. The price distribution on a uniform grid needs no sort: O(n + m) (a histogram of the bids
over the prices).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.bids import Bids, check_bids, check_values
from dpgames.mechanisms.price_laws import (
    ContinuousPriceLaw,
    GridPriceLaw,
    PriceLaw,
    grid_price_distribution,
)
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.exponential import Convention, ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, integer, positive, probability

PriceSet = Literal["grid", "continuous"]


@dataclass(frozen=True)
class AuctionOutcome:
    """One run: the posted price, who buys (a mask over bidders) and the revenue.

    Parameters
    ----------
    price : float
        The posted price.
    buyers : numpy.ndarray
        ``buyers[i]``: whether bidder ``i`` buys (her bid is at least the price).

    Examples
    --------
    >>> outcome = AuctionOutcome(0.5, np.array([True, False, True]))
    >>> outcome.revenue
    1.0
    """

    price: float
    buyers: np.ndarray

    @property
    def revenue(self) -> float:
        """``price * (number of buyers)``."""
        return float(self.price * np.count_nonzero(self.buyers))


def balanced_alpha(epsilon: float, n: int) -> float:
    """The grid step ``1 / ceil(eps n / 2)``: at most ``2 / (eps n)``, dividing 1 exactly, so that
    the discretisation loss ``alpha n`` and the mechanism's loss ``(2 / eps) ln |R|`` balance.

    Parameters
    ----------
    epsilon : float
    n : int
        The number of bids.

    Returns
    -------
    float
    """
    return 1.0 / max(1, math.ceil(epsilon * n / 2))


#: Most prices a grid may hold: the price law keeps about a dozen floats per price (~1 GB here).
MAX_GRID_PRICES = 10_000_000


def price_grid(alpha: float) -> np.ndarray:
    """``{alpha, 2 alpha, ..., floor(1/alpha) alpha}``; when ``1/alpha`` is an integer ``m`` the
    prices are computed as ``j / m`` so that a bid such as 0.3 equals the price 3/10 exactly.

    Raises :class:`ValidationError` for alpha outside (0, 1] and, before allocating anything, for a
    grid of more than :data:`MAX_GRID_PRICES` prices (the message gives the count and the
    memory)."""
    if not (
        isinstance(alpha, (int, float, np.integer, np.floating))
        and not isinstance(alpha, bool)
        and 0 < alpha <= 1
    ):
        raise ValidationError("alpha", f"must be a number in (0, 1], got {alpha!r}")
    m_real = 1.0 / float(alpha)
    if not m_real <= MAX_GRID_PRICES:
        count = "more than 1e308" if math.isinf(m_real) else f"{math.floor(m_real):,}"
        gigabytes = (
            ""
            if math.isinf(m_real)
            else f" (about {m_real * 12 * 8 / 1e9:,.0f} GB for the price law)"
        )
        raise ValidationError(
            "alpha",
            f"= {alpha:g} gives {count} prices{gigabytes}; at most "
            f"{MAX_GRID_PRICES:,} are allowed: use a larger alpha (or a larger "
            "grid step through a smaller epsilon x n), or prices = 'continuous'",
        )
    m = round(m_real)
    if abs(m_real - m) <= 1e-9 * m_real:
        return np.arange(1, m + 1) / m
    return np.arange(1, math.floor(m_real) + 1) * alpha


class DigitalGoodsAuction:
    """McSherry & Talwar's digital-goods auction: an ``eps``-DP posted price, exact in distribution.

    The price is drawn by the exponential mechanism with score ``Rev(p, b) = p #{i : b_i >= p}``
    (Dwork & Roth Thm 3.10: ``eps``-DP, ``eps/2``-DP as the score is monotone in every bid); every
    bidder with ``b_i >= p`` buys at ``p``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter, ``> 0``.
    prices : {"grid", "continuous"} or array_like
        ``"grid"`` (step ``alpha``), ``"continuous"`` (the interval [0, 1], sampled exactly) or an
        explicit ascending list of prices in (0, 1].
    alpha : float, optional
        The grid step in (0, 1] (default :func:`balanced_alpha` for the number of bids).
    convention : {"dwork-roth", "mcsherry-talwar"}
        Weights ``exp(eps Rev / (2 Delta))`` (eps-DP) or ``exp(eps Rev / Delta)`` (2 eps-DP).

    Raises
    ------
    ValidationError
        Naming the argument: epsilon not a number > 0, alpha outside (0, 1] or given with continuous
        or explicit prices, a bad price list, an unknown convention.

    Examples
    --------
    >>> auction = DigitalGoodsAuction(1.0, alpha=0.25)
    >>> bids = [0.3, 0.55, 0.8, 1.0]
    >>> auction.prices_for(len(bids)).tolist()
    [0.25, 0.5, 0.75, 1.0]
    >>> # revenues 1.0, 1.5, 1.5, 1.0: weights exp(eps Rev / 2) = e^0.5, e^0.75, e^0.75, e^0.5
    >>> [round(p, 4) for p in auction.price_distribution(bids).probabilities.tolist()]
    [0.2189, 0.2811, 0.2811, 0.2189]
    >>> round(auction.expected_revenue(bids), 4)
    1.2811
    >>> outcome = auction.run(bids, rng=7)
    >>> (
    ...     outcome.price in (0.25, 0.5, 0.75, 1.0),
    ...     outcome.buyers.tolist() == [b >= outcome.price for b in bids],
    ... )
    (True, True)
    """

    def __init__(
        self,
        epsilon: float,
        prices: PriceSet | ArrayLike = "grid",
        alpha: float | None = None,
        convention: Convention = "dwork-roth",
    ):
        epsilon = positive("epsilon", epsilon)
        if alpha is not None:
            alpha = probability("alpha", alpha, allow_one=True)
        if convention not in ("dwork-roth", "mcsherry-talwar"):
            raise ValidationError(
                "convention", f"must be 'dwork-roth' or 'mcsherry-talwar', got {convention!r}"
            )
        self.epsilon = epsilon
        self.alpha = alpha
        self.convention = convention
        self._grid: tuple[float | None, np.ndarray | None] = (None, None)
        if isinstance(prices, str):
            if prices not in ("grid", "continuous"):
                raise ValidationError(
                    "prices", f"must be 'grid', 'continuous' or a list of prices, got {prices!r}"
                )
            if prices == "continuous" and alpha is not None:
                raise ValidationError(
                    "alpha", "is the grid step: it does not apply to continuous prices"
                )
            self.price_set, self._explicit = prices, None
        else:
            try:
                p = np.asarray(prices, dtype=float)
            except (TypeError, ValueError, OverflowError):
                raise ValidationError(
                    "prices", "must be 'grid', 'continuous' or a list of prices in (0, 1]"
                ) from None
            if (
                p.ndim != 1
                or p.size == 0
                or not np.isfinite(p).all()
                or p.min() <= 0
                or p.max() > 1
                or (np.diff(p) <= 0).any()
            ):
                raise ValidationError(
                    "prices",
                    "as an explicit price set must be a non-empty ascending list in (0, 1]",
                )
            if alpha is not None:
                raise ValidationError(
                    "alpha", "is the grid step: give either alpha or an explicit price list"
                )
            self.price_set, self._explicit = "explicit", p

    def prices_for(self, n_bids: int) -> np.ndarray | None:
        """The finite price set used for ``n_bids`` bids (``None`` for the continuum);
        ValidationError unless ``n_bids`` is an integer ``>= 0``."""
        n_bids = integer("n_bids", n_bids, low=0, high=2**63 - 1)
        if self.price_set == "continuous":
            return None
        if self._explicit is not None:
            return self._explicit
        alpha = self.alpha if self.alpha is not None else balanced_alpha(self.epsilon, n_bids)
        if self._grid[0] != alpha:
            # built once per step: price_law, the sensitivity and the bound share it
            self._grid = (alpha, price_grid(alpha))
            self._grid[1].flags.writeable = False
        return self._grid[1]

    def sensitivity_for(self, n_bids: int) -> float:
        """The score's sensitivity for ``n_bids`` bids: the largest price (1 on the continuum)."""
        prices = self.prices_for(n_bids)
        return 1.0 if prices is None else float(prices[-1])

    def mechanism_for(self, n_bids: int) -> ExponentialMechanism:
        """The exponential mechanism that draws the price for ``n_bids`` bids."""
        return ExponentialMechanism(self.epsilon, self.sensitivity_for(n_bids), self.convention)

    def revenue_loss_bound(self, n_bids: int, beta: float) -> float:
        """With probability at least ``1 - beta`` the revenue is at least ``OPT - `` this bound,
        where ``OPT`` is the best fixed price in [0, 1] with hindsight: ``alpha n`` for restricting
        prices to the price set (``alpha`` its widest gap in [0, 1]) plus Thm 3.11's ``(2 Delta /
        eps) ln(|R| / beta)`` (``ln(|R| / beta) / eps`` with McSherry-Talwar weights).  Finite price
        sets only.

        ``inf`` is the true answer (a vacuous bound, documented) when it exceeds the float range,
        e.g. ``eps = 5e-324``; never a ZeroDivisionError."""
        prices = self.prices_for(n_bids)
        if prices is None:
            raise ValidationError(
                "prices",
                ": the revenue bound of Thm 3.11 needs a finite price set (a grid or a list)",
            )
        beta = probability("beta", beta)
        alpha = float(np.max(np.diff(np.concatenate([[0.0], prices, [1.0]]))))
        # Thm 3.11's term (ln |R| + ln(1/beta)) * 2 Delta / eps (Delta / eps with McSherry-Talwar
        # weights), divided last: a subnormal eps gives inf, never an error.
        weight = 1.0 if self.convention == "mcsherry-talwar" else 2.0
        return (
            alpha * n_bids
            + (math.log(prices.size) - math.log(beta)) * weight * float(prices[-1]) / self.epsilon
        )

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The price's DP guarantee: eps-DP (2 eps with McSherry-Talwar weights), one bid
        changing."""
        eps = (
            self.mechanism_for(1).guarantee.epsilon
            if self.convention == "mcsherry-talwar"
            else self.epsilon
        )
        return PrivacyGuarantee(
            eps,
            0.0,
            Neighbouring.REPLACE_ONE.described(
                "one bid changes within [0, 1]; the price is the output"
            ),
        )

    def price_law(self, bids: ArrayLike | Bids) -> PriceLaw:
        """The exact law of the price on these bids (grid or continuum).

        Parameters
        ----------
        bids : array_like or Bids
            Numbers in ``[0, 1]``; a :class:`~dpgames.mechanisms.bids.Bids` is used as it is (not
            checked or sorted again).

        Returns
        -------
        PriceLaw
            A :class:`~dpgames.mechanisms.price_laws.GridPriceLaw` on a finite price set, a
            :class:`~dpgames.mechanisms.price_laws.ContinuousPriceLaw` on the continuum; its
            ``bids`` attribute is the :class:`Bids` it was built on.

        Raises
        ------
        ValidationError
            For bids that are not numbers in ``[0, 1]``.
        """
        b = Bids.of(bids)
        scale = self.mechanism_for(b.n).scale
        prices = self.prices_for(b.n)
        law = (
            ContinuousPriceLaw(b.sorted, scale)
            if prices is None
            else GridPriceLaw(prices, b.sorted, scale)
        )
        law.bids = b
        return law

    def price_distribution(self, bids: ArrayLike | Bids) -> FiniteDistribution:
        """The exact distribution of the price over a finite price set (labels: the prices).

        Raises
        ------
        ValidationError
            On the continuum (it has a density: use :meth:`price_law`), or for bad bids.
        """
        if self.price_set == "continuous":
            raise ValidationError(
                "prices",
                "are continuous: they have a density, not a finite distribution (use price_law())",
            )
        # the buyer counts only: a Bids' sorted array, or the caller's bids checked (no copy) and,
        # on a uniform grid, counted by a histogram without a sort (see counts_below)
        ascending = isinstance(bids, Bids)
        b = bids.sorted if isinstance(bids, Bids) else check_bids(bids)
        prices = cast(np.ndarray, self.prices_for(b.size))
        return grid_price_distribution(prices, b, self.mechanism_for(b.size).scale, ascending)

    def run(self, bids: ArrayLike | Bids, rng: RNGLike = None) -> AuctionOutcome:
        """Draw a price and sell to every bidder whose bid is at least the price.

        Parameters
        ----------
        bids : array_like or Bids
            Bids in ``[0, 1]``.
        rng : numpy.random.Generator or int, optional
            The draw's randomness (same seed, same outcome).

        Returns
        -------
        AuctionOutcome

        Raises
        ------
        ValidationError
            For bids that are not numbers in ``[0, 1]``.
        """
        b = Bids.of(bids)
        price = self.price_law(b).sample_price(rng=as_generator(rng))
        return AuctionOutcome(float(price), b.values >= price)

    def expected_revenue(self, bids: ArrayLike | Bids) -> float:
        """``E[p * #{i : b_i >= p}]``, exactly (raises :class:`ValidationError` for bad bids)."""
        return self.price_law(bids).expected_revenue()

    def expected_welfare(self, values: ArrayLike, bids: ArrayLike | Bids | None = None) -> float:
        """``E[sum of true values of the buyers]`` when the agents bid ``bids`` (default:
        truthfully).

        Raises
        ------
        ValidationError
            For values or bids outside ``[0, 1]``, or of different lengths.
        """
        b = Bids.of(values, "values") if bids is None else Bids.of(bids)
        v = b.values if bids is None else check_values(values, b.values)
        return self.price_law(b).expected_welfare(v[b.order])

    def expected_utilities(
        self, values: ArrayLike, bids: ArrayLike | Bids | None = None
    ) -> np.ndarray:
        """Each agent's ``E[(v_i - p) 1{p <= b_i}]``: finite, in [-1, 1] (values and bids in [0,
        1]).

        Raises
        ------
        ValidationError
            For values or bids outside ``[0, 1]``, or of different lengths.
        """
        b = Bids.of(values, "values") if bids is None else Bids.of(bids)
        v = b.values if bids is None else check_values(values, b.values)
        return self.price_law(b).expected_utility(v, b.values)
