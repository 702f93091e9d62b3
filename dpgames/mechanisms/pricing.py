"""Digital-goods pricing as an NST environment, with the McSherry-Talwar auction as its exponential
mechanism.

Outcome: a price ``s`` from the auction's finite price set.  Type: a value ``t`` in [0, 1] from a
finite grid.  Reactions: ``"buy"`` (utility ``t - s``, the seller earns ``s``) or ``"pass"`` (0, 0);
an agent buys iff ``t >= s`` ("buy" is listed first, so a value equal to the price buys, as in the
auction).  The designer's objective is revenue, ``s * #{i : t_i >= s}``: exactly the auction's
score. Under commitment the reaction is forced: the agent buys iff her *reported* value is at least
the price.

Types on the price grid itself cannot be told apart: a value equal to a price is indifferent at that
price, so ``t = p_j`` and ``t' = p_j - alpha`` react differently only where neither cares (gap 0).
The default type grid is therefore the midpoints ``(p_{j-1} + p_j) / 2`` (``p_0 = 0``): one type
between consecutive prices, gap ``alpha / 2`` on a uniform grid.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism, Reactions
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.validation import ValidationError, finite_array

REACTIONS = ("buy", "pass")


def midpoint_types(prices: ArrayLike) -> np.ndarray:
    """``(p_{j-1} + p_j) / 2`` for ``j = 1..K`` with ``p_0 = 0``: one value strictly between
    consecutive prices (rounded to 12 decimals, so that 0.6499999999999999 reads 0.65).

    Examples
    --------
    >>> midpoint_types([0.25, 0.5, 0.75, 1.0]).tolist()
    [0.125, 0.375, 0.625, 0.875]
    """
    p = np.asarray(prices, dtype=float)
    return np.round((np.concatenate([[0.0], p[:-1]]) + p) / 2, 12)


def pricing_environment(prices: ArrayLike, types: ArrayLike | None = None) -> Environment:
    """The pricing environment over ``prices`` (ascending, in (0, 1]) and a value grid ``types``
    (default :func:`midpoint_types`).

    Outcomes are the prices, reactions ``("buy", "pass")``, utility ``v - p`` for a buyer, objective
    the revenue (the price a buyer pays).

    Parameters
    ----------
    prices : array_like
        Strictly ascending prices in ``(0, 1]``.
    types : array_like, optional
        Distinct values in ``[0, 1]`` (sorted here); default one value between consecutive prices.

    Returns
    -------
    Environment

    Raises
    ------
    ValidationError
        If the prices are empty, not ascending or outside ``(0, 1]``, or the types repeat or leave
        ``[0, 1]``.

    Examples
    --------
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.5, 1.0])
    >>> env.types.tolist(), env.reactions, env.objective_name
    ([0.25, 0.75], ('buy', 'pass'), 'revenue')
    """
    p = finite_array("prices", prices)
    if (
        p.ndim != 1
        or p.size == 0
        or not np.isfinite(p).all()
        or p.min() <= 0
        or p.max() > 1
        or (np.diff(p) <= 0).any()
    ):
        raise ValidationError("prices", ": need a non-empty ascending list in (0, 1]")
    t = midpoint_types(p) if types is None else finite_array("types", types)
    if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all() or t.min() < 0 or t.max() > 1:
        raise ValidationError("types", ": need a non-empty list of values in [0, 1]")
    t = np.sort(t)
    if np.unique(t).size != t.size:
        raise ValidationError("types", ": values must be distinct")
    utility = np.zeros((t.size, p.size, 2))
    utility[:, :, 0] = t[:, None] - p[None, :]
    objective = np.zeros_like(utility)
    objective[:, :, 0] = p[None, :]
    return Environment(
        t, p, REACTIONS, utility, objective, objective_name="revenue", name="pricing"
    )


class AuctionPricing(ObjectiveExponentialMechanism):
    """The digital-goods auction for ``n_bids`` bidders as the exponential mechanism of the pricing
    environment: the law of the price is the auction's own
    (:meth:`DigitalGoodsAuction.price_distribution`), ``eps``-DP in the bids; the environment
    supplies types, reactions and the commitment mechanism.

    ``reactions="forced"`` (default) is the auction itself: it sells to every bid at least the
    price, so a liar is bound by her bid (the gains are exactly :func:`dpgames.misreport_audit`'s).
    ``"free"`` is NST's posted price: the price is drawn from the bids, then everyone buys iff her
    value is at least it.

    Parameters
    ----------
    auction : DigitalGoodsAuction
        With a finite price set (not ``prices="continuous"``).
    n_bids : int
        Number of bidders (the price grid may depend on it).
    types : array_like, optional
        The value grid (default :func:`midpoint_types` of the prices).
    reactions : {"forced", "free"}, default "forced"

    Raises
    ------
    ValidationError
        If the auction's price set is continuous, or (from :meth:`distribution`) a profile has
        another number of bidders.

    Examples
    --------
    >>> from dpgames import DigitalGoodsAuction
    >>> from dpgames.mechanisms import AuctionPricing
    >>> auction = DigitalGoodsAuction(1.0, alpha=0.25)
    >>> pricing = AuctionPricing(auction, n_bids=3)
    >>> profile = pricing.environment.profile([0.875, 0.625, 0.125])
    >>> pricing.distribution(profile).probabilities.round(3).tolist()  # the auction's own price law
    [0.238, 0.306, 0.27, 0.186]
    >>> auction.price_distribution([0.875, 0.625, 0.125]).probabilities.round(3).tolist()
    [0.238, 0.306, 0.27, 0.186]
    """

    def __init__(
        self,
        auction: DigitalGoodsAuction,
        n_bids: int,
        types: ArrayLike | None = None,
        reactions: Reactions = "forced",
    ):
        prices = auction.prices_for(n_bids)
        if prices is None:
            raise ValidationError(
                "prices", ": the commitment mix needs a finite price set, not 'continuous'"
            )
        mechanism = auction.mechanism_for(n_bids)
        super().__init__(
            pricing_environment(prices, types),
            mechanism.epsilon,
            mechanism.convention,
            sensitivity=mechanism.sensitivity,
            reactions=reactions,
        )
        self.auction = auction
        self.n_bids = n_bids

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The auction's exact price law on the reported values (labels: price indices)."""
        if profile.n != self.n_bids:
            raise ValidationError(
                "profile",
                f": this pricing mechanism was built for {self.n_bids} bidders, got {profile.n}",
            )
        law = self.auction.price_distribution(self.environment.types[profile.type_indices])
        return FiniteDistribution(law.log_probabilities)
