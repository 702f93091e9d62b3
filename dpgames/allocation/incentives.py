"""Approximate truthfulness of the ascending auction, measured exactly on the realised noise.

For a bidder ``i`` and a lie ``v'_i``, the auction is run again with ``i`` reporting ``v'_i`` and
the *same counter noise* (the same ``rng`` seed: the counters draw their noise independently of the
bids), and ``i``'s utility is scored with her true values: ``v_{i, g} - b_i`` for the good ``g`` she
is served at the price ``b_i`` she pays (her bid), 0 without a good.  The gain is the best lie's
utility minus the truthful one. This is the realised (ex-post) gain for one draw of the noise: joint
differential privacy bounds the *expected* gain (over the noise), not this one, so no bound is
asserted on it here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.allocation.auction import MAX_GOODS, AscendingAuction
from dpgames.allocation.market import Market, check_values
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, integer, memory

#: The most auctions one audit runs.
MAX_AUCTIONS = 1_000_000


def single_minded_lies(k: int, alpha: float) -> np.ndarray:
    """The lies tried by default: the empty report (all zeros) and, for every good ``j`` and every
    price ``l alpha <= 1`` (and 1), the report valuing only ``j``, at that price.

    Parameters
    ----------
    k : int
        Number of goods, ``>= 1``.
    alpha : float
        The auction's price step, in ``(0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``(1 + k m, k)`` reports in ``[0, 1]``.

    Raises
    ------
    ValidationError
        ``k`` not an integer in ``1 .. MAX_GOODS``, ``alpha`` out of range, or the ``(1 + k m) x k``
        reports above the memory limit (refused with the estimate, before any allocation).
    """
    k = integer("k", k, low=1, high=MAX_GOODS)
    levels = AscendingAuction(alpha).levels
    memory(
        "k",
        (1 + k * (levels + 2)) * k,
        what=f"up to {1 + k * (levels + 2):,} lies, each valuing {k:,} goods",
    )
    grid = np.unique(np.append(np.arange(levels + 1) * alpha, 1.0))
    lies = np.zeros((1 + k * grid.size, k))
    for j in range(k):
        lies[1 + j * grid.size : 1 + (j + 1) * grid.size, j] = grid
    return lies


@dataclass(frozen=True)
class MisreportGains:
    """Exact misreport gains of some bidders on the realised noise.

    Attributes
    ----------
    bidders : numpy.ndarray
        The bidders audited.
    truthful : numpy.ndarray
        Their utility when truthful.
    gains : numpy.ndarray
        ``max(0, best lie's utility - truthful utility)``.
    best_lie : numpy.ndarray
        Index (into ``lies``) of each bidder's best lie (``-1`` if no lie gains).
    lies : numpy.ndarray
        The reports tried.

    Examples
    --------
    >>> market = Market([[0.9, 0.5], [0.8, 0.1], [0.7, 0.6]], supply=1)
    >>> g = misreport_gains(AscendingAuction(0.05), market)
    >>> g.truthful.round(2).tolist(), g.gains.round(2).tolist(), g.lies.shape
    ([0.05, 0.0, 0.1], [0.0, 0.0, 0.0], (43, 2))
    """

    bidders: np.ndarray
    truthful: np.ndarray
    gains: np.ndarray
    best_lie: np.ndarray
    lies: np.ndarray

    @property
    def max_gain(self) -> float:
        """The largest gain found."""
        return float(self.gains.max(initial=0.0))


def misreport_gains(
    auction: AscendingAuction,
    market: Market,
    lies: ArrayLike | None = None,
    rng: RNGLike = 0,
    bidders: ArrayLike | None = None,
) -> MisreportGains:
    """Each bidder's exact gain from each lie, with the counters' noise of ``rng`` fixed (module
    docstring).

    Costs one auction per (bidder, lie).

    Parameters
    ----------
    auction : AscendingAuction
    market : Market
    lies : array_like, optional
        ``(m, k)`` reports in ``[0, 1]``; default :func:`single_minded_lies`.
    rng : Generator, int or None, default 0
        The noise (a Generator is copied, not advanced).  ``None`` is refused: the noise must be
        replayable.
    bidders : array_like of int, optional
        Whom to audit (default: everyone).

    Returns
    -------
    MisreportGains

    Raises
    ------
    ValidationError
        On bad lies, bidders, a ``None`` rng, or more than :data:`MAX_AUCTIONS` auctions.
    """
    if not isinstance(auction, AscendingAuction) or not isinstance(market, Market):
        raise ValidationError("auction", "and market must be an AscendingAuction and a Market")
    if rng is None:
        raise ValidationError(
            "rng", "must be a seed or a Generator: the noise is replayed for every lie"
        )
    noise = copy.deepcopy(as_generator(rng))
    reports = (
        single_minded_lies(market.k, auction.alpha) if lies is None else check_values(lies, "lies")
    )
    if reports.shape[1] != market.k:
        raise ValidationError(
            "lies", f"must have {market.k} columns (one per good), got {reports.shape[1]}"
        )
    who = (
        np.arange(market.n)
        if bidders is None
        else np.unique(
            np.array(
                [
                    integer("bidders", b, low=0, high=market.n - 1)
                    for b in np.asarray(bidders).ravel().tolist()
                ],
                dtype=np.int64,
            )
        )
    )
    if who.size * reports.shape[0] > MAX_AUCTIONS:
        raise ValidationError(
            "lies",
            f"x bidders would need {who.size * reports.shape[0]:,} auctions, more than "
            f"{MAX_AUCTIONS:,}: audit fewer bidders or lies",
        )

    def utility_of(i: int, report: np.ndarray | None) -> float:
        values = (
            market.values
            if report is None
            else np.vstack([market.values[:i], report, market.values[i + 1 :]])
        )
        out = auction.run(Market(values, market.supply), rng=copy.deepcopy(noise))
        g = out.served[i]
        return 0.0 if g < 0 else float(market.values[i, g] - out.paid[i])

    base = auction.run(market, rng=copy.deepcopy(noise))
    truthful = base.utilities()[who]
    best = np.full(who.size, -np.inf)
    arg = np.full(who.size, -1, dtype=np.int64)
    for row, i in enumerate(who.tolist()):
        u = np.array([utility_of(i, r) for r in reports])
        arg[row], best[row] = int(u.argmax()), float(u.max())
    gains = np.maximum(best - truthful, 0.0)
    return MisreportGains(who, truthful, gains, np.where(gains > 0, arg, -1), reports)
