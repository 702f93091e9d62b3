"""The exact privacy loss of the digital-goods auction's price over every single-bid change.

Changing bid ``b_i`` to ``r`` multiplies the unnormalised price law by ``exp(s k p)`` on the prices
in ``(min(b_i, r), max(b_i, r)]`` (``s = +1`` when raising, ``-1`` when lowering; ``k`` the
exponential mechanism's factor) and leaves it alone elsewhere.  With ``z`` the ratio of normalisers,
the privacy loss at price ``p`` is ``s k p - ln z`` inside the interval and ``-ln z`` outside; being
linear in ``p``, its largest absolute value sits at the ends of the interval.  So the largest
privacy loss over all ``n x L`` changes follows from the law's functionals up to the bid and up to
the replacement (O(1) per distinct bid and replacement), with no law recomputed: ``ln z`` is
``log1p`` of a difference of linear prefix functionals (rank one) below
:data:`~dpgames.mechanisms.price_laws.LINEAR_TILT_LIMIT`, a log-sum-exp of positive terms above it
(never ``log(1 - x)`` of a rounded ``x``), so the loss is exact for any eps a float holds: never
negative, never infinite, at most the guarantee up to rounding of ~1e-16 eps.

On a price grid the loss depends on a bid only through the grid prices below it, so the report set
of 0 and every grid price covers every change within [0, 1]: the audit is then exhaustive.
Theory: at most ``eps`` (Dwork & Roth Thm 3.10) and, the revenue score being monotone in each bid,
at most ``eps / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpgames.analysis.misreport import check_law, law_default_lies, log_normaliser_ratio
from dpgames.display import html_table
from dpgames.mechanisms.bids import Bids, check_bids
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.price_laws import GridPriceLaw, PriceLaw
from dpgames.validation import positive

#: Pairs per block of the rank-one path.
_CHUNK_ELEMENTS = 1 << 16
#: Pairs per block of the log-space path.
_LOG_CHUNK_ELEMENTS = 1 << 19
#: Smallest ``k`` for the rank-one path on the continuum: a cell's tilted integral minus its plain
#: one carries ~1e-16 of the cell's mass, i.e. ~1e-16 / k of a loss of size ~k (1e-13 relative at
#: 1e-3).
LINEAR_MIN_SCALE = 1e-3


@dataclass(frozen=True)
class PrivacyLossAudit:
    """The largest ``|ln P[p | b] - ln P[p | b']|`` over every agent, replacement bid and price.

    Parameters
    ----------
    max_loss : float
        The largest privacy loss (at most the guarantee: Dwork & Roth Thm 3.10).
    agent : int
        An agent whose bid change attains it.
    bid, replacement : float
        Her bid and the replacement attaining it.
    epsilon : float
        The price's DP guarantee.
    replacements : numpy.ndarray
        The replacement bids tried.

    Examples
    --------
    >>> from dpgames import DigitalGoodsAuction
    >>> audit = single_bid_privacy_audit(
    ...     DigitalGoodsAuction(1.0, alpha=0.25), [0.3, 0.55, 0.8, 1.0]
    ... )
    >>> (
    ...     round(audit.max_loss, 4),
    ...     audit.max_loss <= audit.epsilon / 2,
    ... )  # eps/2: the score is monotone
    (0.4099, True)
    >>> audit.worst_case["agent"], audit.worst_case["replacement"]
    (3, 0.75)
    """

    max_loss: float
    agent: int
    bid: float
    replacement: float
    epsilon: float
    replacements: np.ndarray

    def _repr_html_(self) -> str:
        """The headline figures as an HTML table (Jupyter)."""
        return html_table(
            [
                ("largest privacy loss", self.max_loss),
                ("guarantee epsilon", self.epsilon),
                ("  agent", self.agent),
                ("  bid", self.bid),
                ("  replaced by", self.replacement),
                ("replacements tried per agent", self.replacements.size),
            ],
            title="privacy loss of the price, any single-bid change (exact)",
        )

    @property
    def worst_case(self) -> dict[str, float]:
        """Who, from which bid to which replacement, and the loss."""
        return {
            "agent": self.agent,
            "bid": self.bid,
            "replacement": self.replacement,
            "loss": self.max_loss,
        }


def single_bid_privacy_audit(
    auction: DigitalGoodsAuction, bids: ArrayLike | Bids, replacements: ArrayLike | None = None
) -> PrivacyLossAudit:
    """Exact largest privacy loss of the price when one bid is replaced by any of ``replacements``.

    Builds the law once and calls :func:`privacy_audit_of_law`.

    Parameters
    ----------
    auction : DigitalGoodsAuction
    bids : array_like or Bids
        The bids in ``[0, 1]``.
    replacements : array_like, optional
        The replacement bids tried for every agent (default: the misreport audit's report grid,
        exhaustive on a price grid of at most 1,000 prices).

    Returns
    -------
    PrivacyLossAudit

    Raises
    ------
    ValidationError
        For bids or replacements outside ``[0, 1]``.
    """
    b = Bids.of(bids)
    r = None if replacements is None else check_bids(replacements, "replacements")
    return privacy_audit_of_law(auction.price_law(b), auction.guarantee.epsilon, b, r)


def privacy_audit_of_law(
    law: PriceLaw, epsilon: float, bids: np.ndarray | Bids, replacements: np.ndarray | None = None
) -> PrivacyLossAudit:
    """The audit on a prepared law.

    Parameters
    ----------
    law : PriceLaw
        The auction's price law on ``bids``.
    epsilon : float
        The price's DP guarantee, recorded with the result.
    bids : numpy.ndarray or Bids
        The checked bids (a :class:`~dpgames.mechanisms.bids.Bids`, e.g. ``law.bids``, saves a
        sort).
    replacements : numpy.ndarray, optional
        Checked replacement bids (default: :func:`~dpgames.analysis.misreport.law_default_lies`).

    Raises
    ------
    ValidationError
        For a ``law`` that is not a price law, ``epsilon <= 0``, or values, bids or reports outside
        [0, 1] (values and bids of different lengths).

    Returns
    -------
    PrivacyLossAudit
        With an (agent, replacement) attaining the largest loss (among equal losses, one with a low
        bid, the first listed agent with it).

    Notes
    -----
    Exact for any eps a float holds.  Below :data:`~dpgames.mechanisms.price_laws.LINEAR_TILT_LIMIT`
    (and, on the continuum, for ``k >=`` :data:`LINEAR_MIN_SCALE`) ``ln z`` is ``log1p`` of a
    difference of the law's linear prefix functionals (rank one: a per-bid and a per-replacement
    term, ~1e-16 absolute); otherwise it is a log-sum-exp of positive terms from the log-space range
    functionals (:func:`dpgames.analysis.misreport.log_normaliser_ratio`).  Either way the loss is
    never negative, never infinite, and at most the guarantee up to rounding (about 1e-16 eps)."""
    law = check_law(law)
    epsilon = positive("epsilon", epsilon)
    b = Bids.of(bids)
    r = law_default_lies(law) if replacements is None else check_bids(replacements, "replacements")
    r_canon = law.canonical(r)
    u_all = law.canonical(b.sorted)  # ascending
    starts = np.flatnonzero(np.r_[True, u_all[1:] != u_all[:-1]])
    u = u_all[starts]
    # the first listed agent of each distinct bid
    first_agent = np.minimum.reduceat(b.order, starts)
    if law.linear_ok and (isinstance(law, GridPriceLaw) or law.scale >= LINEAR_MIN_SCALE):
        best, (i, j) = _rank_one_largest_loss(law, u, r_canon)
    else:
        best, (i, j) = _log_space_largest_loss(law, u, r_canon)
    agent = int(first_agent[i])
    return PrivacyLossAudit(best, agent, float(b.values[agent]), float(r[j]), float(epsilon), r)


def _rank_one_largest_loss(
    law: PriceLaw, u: np.ndarray, r: np.ndarray
) -> tuple[float, tuple[int, int]]:
    """Largest loss over distinct bids ``u`` (ascending) x replacements ``r`` and where (row, column
    of ``r``).

    Raising ``b -> x`` (``x > b``): ``ln z = log1p(U_x - U_b)``; lowering: ``ln z = log1p(W_x -
    W_b)`` (``U, W``: the prefix functionals of ``e^{kp} - 1`` and ``1 - e^{-kp}``).  The loss is
    linear in the price on the interval between ``b`` and ``x``, so with ``y = |ln z|`` and ``x1 <=
    x2`` ``k`` times the interval's lowest and highest possible prices it is ``max(x2 - y, y -
    x1)``, or ``max(x2 - y, y)`` when some price lies outside the interval (its loss is ``|ln z|``).
    A price lies outside every interval except ``(0, top]``: those (at most two) pairs are patched.
    As in the misreport audit, the columns below a block's first bid lower and those above its last
    bid raise for every row of the block; only the few between are computed per entry."""
    cols, first, _ = np.unique(r, return_index=True, return_inverse=True)
    _, _, Ur, _, Wr = law.linear_prefix(cols)
    _, _, Ub, _, Wb = law.linear_prefix(u)
    k, top = law.scale, law.largest_price
    kr, kb = k * cols, k * u
    kr_next, kb_next = k * law.lowest_price_above(cols), k * law.lowest_price_above(u)
    lo_cols, hi_cols = np.searchsorted(cols, u, side="left"), np.searchsorted(cols, u, side="right")
    m = cols.size
    # ln z's argument, x - b of the tilted prefix, as one small matrix product: (-F_b, 1) @ (1, F_x)
    down_rows, down_cols = np.column_stack([-Wb, np.ones(u.size)]), np.stack([np.ones(m), Wr])
    up_rows, up_cols = np.column_stack([-Ub, np.ones(u.size)]), np.stack([np.ones(m), Ur])
    best, where = -np.inf, (0, 0)
    rows = max(1, _CHUNK_ELEMENTS // m)
    log_buf, loss_buf = np.empty(rows * m), np.empty(rows * m)

    def consider(loss, r0, offset):
        nonlocal best, where
        if loss.size and loss.max() > best:
            i, j = np.unravel_index(np.argmax(loss), loss.shape)
            best, where = float(loss[i, j]), (r0 + int(i), int(first[offset + j]))

    for r0 in range(0, u.size, rows):
        s = slice(r0, min(r0 + rows, u.size))
        size = s.stop - s.start
        lo, hi = int(lo_cols[r0]), int(hi_cols[s.stop - 1])
        if lo > 0:  # every row lowers: ln z <= 0, x2 = k b
            ln_z = np.matmul(
                down_rows[s], down_cols[:, :lo], out=log_buf[: size * lo].reshape(size, lo)
            )
            np.log1p(ln_z, out=ln_z)
            # k b - |ln z|
            loss = np.add(ln_z, kb[s, None], out=loss_buf[: size * lo].reshape(size, lo))
            y = np.negative(ln_z, out=ln_z)
            np.maximum(loss, y, out=loss)
            if u[s.stop - 1] >= top and cols[0] == 0:  # (0, top]: no price outside
                loss[-1, 0] = max(kb[s.stop - 1] - y[-1, 0], y[-1, 0] - kr_next[0])
            consider(loss, r0, 0)
        if hi > lo:  # per entry
            b, x = u[s, None], cols[None, lo:hi]
            raising = x > b
            ln_z = np.log1p(
                np.where(raising, Ur[None, lo:hi] - Ub[s, None], Wr[None, lo:hi] - Wb[s, None])
            )
            y = np.abs(ln_z)
            x1 = np.where(raising, kb_next[s, None], kr_next[None, lo:hi])
            x2 = np.where(raising, kr[None, lo:hi], kb[s, None])
            outside = np.where(raising, (b > 0) | (x < top), (x > 0) | (b < top))
            loss = np.maximum(x2 - y, np.where(outside, y, y - x1))
            loss[x == b] = 0.0  # the same bid (up to the law): no change
            consider(loss, r0, lo)
        if hi < m:  # every row raises: ln z >= 0, x2 = k x
            w = m - hi
            y = np.matmul(up_rows[s], up_cols[:, hi:], out=log_buf[: size * w].reshape(size, w))
            np.log1p(y, out=y)
            loss = np.subtract(kr[None, hi:], y, out=loss_buf[: size * w].reshape(size, w))
            np.maximum(loss, y, out=loss)
            if u[r0] == 0 and cols[-1] >= top:
                loss[0, -1] = max(kr[-1] - y[0, -1], y[0, -1] - kb_next[r0])
            consider(loss, r0, hi)
    return max(best, 0.0), where


def _log_space_largest_loss(
    law: PriceLaw, u: np.ndarray, r: np.ndarray
) -> tuple[float, tuple[int, int]]:
    """The same from the exact log-space range functionals (any eps), in blocks of distinct bids."""
    order = np.lexsort((np.arange(r.size), r))  # ties: the lowest replacement, first listed
    r_sorted = r[order]
    at_r = law.log_range(-1.0, r_sorted)
    best, where = -np.inf, (0, 0)
    rows = max(1, _LOG_CHUNK_ELEMENTS // r.size)
    for first_row in range(0, u.size, rows):
        part = u[first_row : first_row + rows]
        loss = _loss_block(law, part, r_sorted, law.log_range(-1.0, part), at_r)
        i, j = np.unravel_index(np.argmax(loss), loss.shape)
        if loss[i, j] > best:
            best, where = float(loss[i, j]), (first_row + int(i), int(order[j]))
    return best, where


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
