"""The exact incentive to misreport in the digital-goods auction.

For every agent ``i`` and every lie ``b'`` from a report grid,

    gain_i(b') = E[u(v_i, M(b', b_-i))] - E[u(v_i, M(b))],

where ``u(v, p, buy) = (v - p) 1{buy}`` and the agent buys iff her *report* is at least the price.

Fast path (exact): changing bid ``b`` to ``b'`` multiplies the unnormalised price law by
``exp(+-k p)`` on the prices between ``b`` and ``b'`` only (``k`` the exponential mechanism's factor).
With the law's cumulative functionals (:meth:`dpgames.mechanisms.price_laws.PriceLaw.cumulative`) the
law after the lie, and so the liar's utility, follows in O(1) per (agent, lie): all ``n x L`` gains cost
O(n L + m + n log n), against ``L n`` recomputations of the law by brute force.

Bounds the gain is checked against: Dwork & Roth Prop 10.1 (``2 eps`` for utilities in [0, 1]), the
exact DP bound ``(e^eps - 1) E[(v - p)+]`` (the lie moves each price's probability by a factor at most
``e^eps``), and, since the revenue score is monotone in each bid, ``(e^{eps/2} - 1) E[(v - p)+]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.digital_goods import DigitalGoodsAuction, check_bids
_CHUNK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class MisreportAudit:
    """Result of an exact misreport audit.

    ``best_gain[i]`` is agent ``i``'s largest gain over the lies and ``best_lie[i]`` the lie attaining
    it; ``truthful_utility[i]`` is ``E[(v_i - p) 1{p <= b_i}]``.  ``gains`` is the full agents x lies
    matrix when it was asked for.
    """

    lies: np.ndarray
    values: np.ndarray
    truthful_utility: np.ndarray
    best_gain: np.ndarray
    best_lie: np.ndarray
    epsilon: float
    gains: np.ndarray | None = field(default=None, repr=False)

    @property
    def max_gain(self) -> float:
        return float(self.best_gain.max())

    @property
    def worst_agent(self) -> int:
        return int(np.argmax(self.best_gain))

    @property
    def worst_case(self) -> dict[str, float]:
        """Who gains most by lying: agent, true value, lie, gain."""
        i = self.worst_agent
        return {"agent": i, "true_value": float(self.values[i]), "lie": float(self.best_lie[i]),
                "gain": float(self.best_gain[i])}

    @property
    def bound_prop_10_1(self) -> float:
        """Dwork & Roth Prop 10.1: ``2 eps`` (utilities in [0, 1])."""
        return 2 * self.epsilon

    @property
    def exact_dp_bound(self) -> np.ndarray:
        """Per agent ``(e^eps - 1) E[(v_i - p)+]``."""
        return np.expm1(self.epsilon) * self.truthful_utility

    @property
    def monotone_bound(self) -> np.ndarray:
        """Per agent ``(e^{eps/2} - 1) E[(v_i - p)+]`` (the revenue score is monotone in every bid)."""
        return np.expm1(self.epsilon / 2) * self.truthful_utility

    def within_bounds(self, tol: float = 1e-12) -> bool:
        """Whether every agent's gain respects all three bounds."""
        return bool((self.best_gain <= self.bound_prop_10_1 + tol).all()
                    and (self.best_gain <= self.monotone_bound + tol).all())

    def gain_quantiles(self, qs: ArrayLike = (0.5, 0.9, 0.99, 1.0)) -> dict[float, float]:
        return {float(q): float(v) for q, v in zip(qs, np.quantile(self.best_gain, qs))}


def default_lies(auction: DigitalGoodsAuction, n_bids: int, max_points: int = 1001) -> np.ndarray:
    """The report grid.  On a price grid with at most ``max_points`` prices: 0 and every price, which
    is *exhaustive* (a report between two prices is worth the same as the lower one).  Otherwise 101
    evenly spaced reports in [0, 1]."""
    prices = auction.prices_for(n_bids)
    if prices is not None and prices.size + 1 <= max_points:
        return np.concatenate([[0.0], prices])
    return np.linspace(0.0, 1.0, 101)


def misreport_audit(auction: DigitalGoodsAuction, values: ArrayLike, bids: ArrayLike | None = None,
                    lies: ArrayLike | None = None, keep_gains: bool = False) -> MisreportAudit:
    """Exact gain of every (agent, lie) when the others report ``bids`` (default: the true values)."""
    v = np.asarray(values, dtype=float)
    b = check_bids(v if bids is None else bids)
    ell = default_lies(auction, b.size) if lies is None else check_bids(lies, "lies")
    if auction.epsilon > 1000:
        raise ValueError("the exact audit supports epsilon <= 1000 (exp(eps/2) must stay a float)")
    law = auction.price_law(b)
    at_lie = {s: law.cumulative(ell, s) for s in (-1, 0, 1)}
    at_bid = {s: law.cumulative(b, s) for s in (-1, 0, 1)}
    truthful = v * at_bid[0][0] - at_bid[0][1]

    best_gain = np.empty(b.size)
    best_lie = np.empty(b.size)
    gains = np.empty((b.size, ell.size)) if keep_gains else None
    rows = max(1, _CHUNK_ELEMENTS // ell.size)
    for start in range(0, b.size, rows):
        sl = slice(start, start + rows)
        g = _gains_block(v[sl], truthful[sl], {s: (m0[sl], m1[sl]) for s, (m0, m1) in at_bid.items()},
                         at_lie, b[sl], ell)
        k = np.argmax(g, axis=1)
        best_gain[sl] = g[np.arange(g.shape[0]), k]
        best_lie[sl] = ell[k]
        if gains is not None:
            gains[sl] = g
    return MisreportAudit(ell, v, truthful, best_gain, best_lie, auction.epsilon, gains)


def _gains_block(v, truthful, at_bid, at_lie, b, ell) -> np.ndarray:
    """Gains for a block of agents (rows) and all lies (columns), by the tilted cumulative functionals."""
    v, truthful, b = v[:, None], truthful[:, None], b[:, None]
    (b0, b1), (bp0, bp1), (bm0, _) = at_bid[0], at_bid[1], at_bid[-1]
    (l0, l1), (lp0, lp1), (lm0, _) = at_lie[0], at_lie[1], at_lie[-1]
    b0, b1, bp0, bp1, bm0 = b0[:, None], b1[:, None], bp0[:, None], bp1[:, None], bm0[:, None]
    raise_ = ell[None, :] > b
    # Raising the bid to l: prices in (b, l] gain weight e^{k p}; the liar buys at every p <= l.
    z_up = 1.0 + (lp0 - bp0) - (l0 - b0)
    u_up = (v * (b0 + lp0 - bp0) - (b1 + lp1 - bp1)) / z_up
    # Lowering the bid to l: prices in (l, b] lose weight e^{-k p}; the liar buys at every p <= l.
    z_down = 1.0 + (bm0 - lm0) - (b0 - l0)
    u_down = (v * l0 - l1) / z_down
    return np.where(raise_, u_up, u_down) - truthful


def misreport_audit_brute_force(auction: DigitalGoodsAuction, values: ArrayLike, lies: ArrayLike,
                                agents: ArrayLike | None = None, bids: ArrayLike | None = None) -> np.ndarray:
    """The same gains by recomputing the price law for every (agent, lie): ``len(agents) x len(lies)``.

    O(L n (n log n + m)) for all agents: a baseline for benchmarks and small cases only."""
    v = np.asarray(values, dtype=float)
    b = check_bids(v if bids is None else bids)
    ell = np.asarray(lies, dtype=float)
    who = np.arange(b.size) if agents is None else np.asarray(agents)
    out = np.empty((who.size, ell.size))
    for r, i in enumerate(who):
        base = auction.price_law(b).expected_utility(v[i], b[i])
        for c, lie in enumerate(ell):
            moved = b.copy()
            moved[i] = lie
            out[r, c] = auction.price_law(moved).expected_utility(v[i], lie) - base
    return out
