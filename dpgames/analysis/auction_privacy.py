"""The exact privacy loss of the digital-goods auction's price over every single-bid change.

Changing bid ``b_i`` to ``r`` multiplies the unnormalised price law by ``exp(s k p)`` on the prices
in ``(min(b_i, r), max(b_i, r)]`` (``s = +1`` when raising, ``-1`` when lowering; ``k`` the exponential
mechanism's factor) and leaves it alone elsewhere.  With ``z`` the ratio of normalisers, the privacy loss
at price ``p`` is ``s k p - ln z`` inside the interval and ``-ln z`` outside; being linear in ``p``,
its largest absolute value sits at the ends of the interval.  So the largest privacy loss over all
``n x L`` changes follows from the law's range functionals (O(1) per distinct bid and replacement), with no law recomputed.  ``ln z`` is a log-sum-exp of positive terms (never
``log(1 - x)`` of a rounded ``x``), so the loss is exact for any eps a float holds: never negative,
never infinite, at most the guarantee up to rounding of ~1e-16 eps.

On a price grid the loss depends on a bid only through the grid prices below it, so the report set
of 0 and every grid price covers every change within [0, 1]: the audit is then exhaustive.
Theory: at most ``eps`` (Dwork & Roth Thm 3.10) and, the revenue score being monotone in each bid,
at most ``eps / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.analysis.misreport import law_default_lies, log_normaliser_ratio
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction, check_bids
from dpgames.mechanisms.price_laws import PriceLaw

_CHUNK_ELEMENTS = 1 << 19


@dataclass(frozen=True)
class PrivacyLossAudit:
    """The largest ``|ln P[p | b] - ln P[p | b']|`` over every agent, replacement bid and price."""

    max_loss: float
    agent: int
    bid: float
    replacement: float
    epsilon: float
    replacements: np.ndarray

    @property
    def worst_case(self) -> dict[str, float]:
        return {"agent": self.agent, "bid": self.bid, "replacement": self.replacement, "loss": self.max_loss}


def single_bid_privacy_audit(auction: DigitalGoodsAuction, bids: ArrayLike,
                             replacements: ArrayLike | None = None) -> PrivacyLossAudit:
    """Exact largest privacy loss of the price when one bid is replaced by any of ``replacements``
    (default: the misreport audit's report grid, exhaustive on a price grid).  Builds the law once and
    calls :func:`privacy_audit_of_law`."""
    b = check_bids(bids)
    r = None if replacements is None else check_bids(replacements, "replacements")
    return privacy_audit_of_law(auction.price_law(b), auction.guarantee.epsilon, b, r)


def privacy_audit_of_law(law: PriceLaw, epsilon: float, bids: np.ndarray,
                         replacements: np.ndarray | None = None) -> PrivacyLossAudit:
    """The audit on a prepared law (the auction's price law on the checked ``bids``); ``epsilon`` is the
    price's DP guarantee, recorded with the result.

    Exact for any eps a float holds: ``ln z`` comes from sums of positive terms in log space
    (:func:`dpgames.analysis.misreport.log_normaliser_ratio`), so the loss is never negative, never
    infinite, and at most the guarantee up to rounding (about 1e-16 eps)."""
    b = bids
    r = law_default_lies(law) if replacements is None else replacements
    r_canon = law.canonical(r)
    at_r = law.log_range(-1.0, r_canon)
    u, inv = np.unique(law.canonical(b), return_inverse=True)
    best, where = -np.inf, (0, 0)
    rows = max(1, _CHUNK_ELEMENTS // r.size)
    for first in range(0, u.size, rows):
        part = u[first:first + rows]
        loss = _loss_block(law, part, r_canon, law.log_range(-1.0, part), at_r)
        i, j = np.unravel_index(np.argmax(loss), loss.shape)
        if loss[i, j] > best:
            best, where = float(loss[i, j]), (int(np.flatnonzero(inv == first + i)[0]), int(j))
    i, j = where
    return PrivacyLossAudit(best, i, float(b[i]), float(r[j]), float(epsilon), r)


def _loss_block(law, u, r, at_u, at_r) -> np.ndarray:
    """Distinct bids x replacements: the largest ``|privacy loss|`` over the prices."""
    log_z, _ = log_normaliser_ratio(law, u, r, at_u, at_r)
    bb, rr = u[:, None], r[None, :]
    sign = np.where(rr > bb, 1.0, -1.0)
    lo, hi = np.minimum(bb, rr), np.maximum(bb, rr)
    p_low, p_high, inside, outside = law.prices_between(lo, hi)
    k = law.scale
    in_loss = np.maximum(np.abs(sign * k * p_low - log_z), np.abs(sign * k * p_high - log_z))
    return np.maximum(np.where(inside, in_loss, 0.0), np.where(outside, np.abs(log_z), 0.0))
