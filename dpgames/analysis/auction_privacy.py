"""The exact privacy loss of the digital-goods auction's price over every single-bid change.

Changing bid ``b_i`` to ``r`` multiplies the unnormalised price law by ``exp(s k p)`` on the prices
in ``(min(b_i, r), max(b_i, r)]`` (``s = +1`` when raising, ``-1`` when lowering; ``k`` the exponential
mechanism's factor) and leaves it alone elsewhere.  With ``z`` the ratio of normalisers, the privacy loss
at price ``p`` is ``s k p - ln z`` inside the interval and ``-ln z`` outside; being linear in ``p``,
its largest absolute value sits at the ends of the interval.  So the largest privacy loss over all
``n x L`` changes costs O(nL + m) from the law's cumulative functionals, with no law recomputed.

On a price grid the loss depends on a bid only through the grid prices below it, so the report set
of 0 and every grid price covers every change within [0, 1]: the audit is then exhaustive.
Theory: at most ``eps`` (Dwork & Roth Thm 3.10) and, the revenue score being monotone in each bid,
at most ``eps / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.analysis.misreport import default_lies
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction, check_bids

_CHUNK_ELEMENTS = 1 << 21


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
    (default: the misreport audit's report grid, exhaustive on a price grid)."""
    b = check_bids(bids)
    r = default_lies(auction, b.size) if replacements is None else check_bids(replacements, "replacements")
    law = auction.price_law(b)
    at_r = {s: law.cumulative(r, s)[0] for s in (-1, 0, 1)}
    at_b = {s: law.cumulative(b, s)[0] for s in (-1, 0, 1)}
    best, where = -1.0, (0, 0)
    rows = max(1, _CHUNK_ELEMENTS // r.size)
    for start in range(0, b.size, rows):
        sl = slice(start, start + rows)
        loss = _loss_block(law, b[sl], r, {s: m[sl] for s, m in at_b.items()}, at_r)
        i, j = np.unravel_index(np.argmax(loss), loss.shape)
        if loss[i, j] > best:
            best, where = float(loss[i, j]), (start + int(i), int(j))
    i, j = where
    return PrivacyLossAudit(best, i, float(b[i]), float(r[j]), auction.epsilon, r)


def _loss_block(law, b, r, at_b, at_r) -> np.ndarray:
    bb, rr = b[:, None], r[None, :]
    raising = rr > bb
    sign = np.where(raising, 1.0, -1.0)
    tilted_r = np.where(raising, at_r[1][None, :], at_r[-1][None, :])
    tilted_b = np.where(raising, at_b[1][:, None], at_b[-1][:, None])
    # z = Z'/Z = 1 + (tilted mass - plain mass) over the prices between the two bids.
    log_z = np.log1p(sign * ((tilted_r - tilted_b) - (at_r[0][None, :] - at_b[0][:, None])))
    lo, hi = np.minimum(bb, rr), np.maximum(bb, rr)
    p_low, p_high, inside, outside = law.prices_between(lo, hi)
    k = law.scale
    in_loss = np.maximum(np.abs(sign * k * p_low - log_z), np.abs(sign * k * p_high - log_z))
    return np.maximum(np.where(inside, in_loss, 0.0), np.where(outside, np.abs(log_z), 0.0))
