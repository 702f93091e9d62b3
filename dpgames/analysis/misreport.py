"""The exact incentive to misreport in the digital-goods auction.

For every agent ``i`` and every lie ``b'`` from a report grid,

    gain_i(b') = E[u(v_i, M(b', b_-i))] - E[u(v_i, M(b))],

where ``u(v, p, buy) = (v - p) 1{buy}`` and the agent buys iff her *report* is at least the price.

Fast path (exact): changing bid ``b`` to ``b'`` multiplies the unnormalised price law by
``exp(+-k p)`` on the prices between ``b`` and ``b'`` only (``k`` the exponential mechanism's factor).
With the law's range functionals (:meth:`dpgames.mechanisms.price_laws.PriceLaw.log_between`) the
law after the lie, and so the liar's utility, follows in O(1) per (distinct bid, lie): all ``n x L``
gains cost O(n L + m), against ``L n`` recomputations of the law by brute force.

Numerics: every mass is a logarithm and every ratio of normalisers is a difference of logarithms
of sums of positive terms, so the gains are exact to about 1e-15 in utility units (utilities lie
in [-1, 1]) for any eps a float holds: eps = 1e6, where the law is a point mass to double precision,
is as exact as eps = 1e-6.

Bounds the gain is checked against: Dwork & Roth Prop 10.1 (``2 eps`` for utilities in [0, 1]), the
exact DP bound ``(e^eps - 1) E[(v - p)+]`` (the lie moves each price's probability by a factor at most
``e^eps``), and, since the revenue score is monotone in each bid, ``(e^{eps/2} - 1) E[(v - p)+]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.digital_goods import DigitalGoodsAuction, check_bids, check_values
from dpgames.mechanisms.price_laws import GridPriceLaw, PriceLaw, log_sub

_CHUNK_ELEMENTS = 1 << 19


def _scaled_expm1(x: float, weight: np.ndarray) -> np.ndarray:
    """``expm1(x) * weight`` for ``weight >= 0``, in log space when ``e^x`` overflows: ``inf`` only where
    the true product exceeds the largest float (then the bound it states is vacuous), 0 where weight is 0."""
    weight = np.asarray(weight, dtype=float)
    if x < 700:
        return np.expm1(x) * weight
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(weight > 0, np.exp(x + np.log1p(-np.exp(-x)) + np.log(np.maximum(weight, 1e-320))), 0.0)


@dataclass(frozen=True)
class MisreportAudit:
    """Result of an exact misreport audit.

    ``best_gain[i]`` is agent ``i``'s largest gain over the lies and ``best_lie[i]`` the lie attaining
    it; ``truthful_utility[i]`` is ``E[(v_i - p) 1{p <= b_i}]``.  ``gains`` is the full agents x lies
    matrix when it was asked for.  ``epsilon`` is the price's DP guarantee (the auction's eps under
    Dwork & Roth's weights, 2 eps under McSherry & Talwar's), which the bounds are stated in.
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
        """Per agent ``(e^eps - 1) E[(v_i - p)+]`` (``inf`` only where that number exceeds float range)."""
        return _scaled_expm1(self.epsilon, np.maximum(self.truthful_utility, 0.0))

    @property
    def monotone_bound(self) -> np.ndarray:
        """Per agent ``(e^{eps/2} - 1) E[(v_i - p)+]`` (the revenue score is monotone in every bid)."""
        return _scaled_expm1(self.epsilon / 2, np.maximum(self.truthful_utility, 0.0))

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
    return _lies_for(auction.prices_for(n_bids), max_points)


def law_default_lies(law: PriceLaw, max_points: int = 1001) -> np.ndarray:
    """:func:`default_lies` for a prepared price law."""
    return _lies_for(law.prices if isinstance(law, GridPriceLaw) else None, max_points)


def _lies_for(prices: np.ndarray | None, max_points: int) -> np.ndarray:
    if prices is not None and prices.size + 1 <= max_points:
        return np.concatenate([[0.0], prices])
    return np.linspace(0.0, 1.0, 101)


def misreport_audit(auction: DigitalGoodsAuction, values: ArrayLike, bids: ArrayLike | None = None,
                    lies: ArrayLike | None = None, keep_gains: bool = False) -> MisreportAudit:
    """Exact gain of every (agent, lie) when the others report ``bids`` (default: the true values).

    Builds the price law once and calls :func:`misreport_audit_of_law`."""
    b = check_bids(values, "values") if bids is None else check_bids(bids)
    v = check_values(values, b)
    ell = None if lies is None else check_bids(lies, "lies")
    return misreport_audit_of_law(auction.price_law(b), auction.guarantee.epsilon, v, b, ell, keep_gains)


def misreport_audit_of_law(law: PriceLaw, epsilon: float, values: np.ndarray, bids: np.ndarray,
                           lies: np.ndarray | None = None, keep_gains: bool = False) -> MisreportAudit:
    """The audit on a prepared law: ``law`` must be the auction's price law on ``bids`` (checked float
    arrays, ``values`` aligned with ``bids``); ``epsilon`` is the price's DP guarantee
    (``auction.guarantee.epsilon``: eps, or 2 eps with McSherry-Talwar weights), for the bounds."""
    v, b = values, bids
    ell = law_default_lies(law) if lies is None else lies
    ell_canon = law.canonical(ell)
    at_lie = law.log_range(-1.0, ell_canon)
    best_gain, best_lie, truthful = np.empty(b.size), np.empty(b.size), np.empty(b.size)
    gains = np.empty((b.size, ell.size)) if keep_gains else None
    rows = max(1, _CHUNK_ELEMENTS // ell.size)
    for who, a, c, m0, m1, same in _by_distinct_bid(law, b, ell_canon, at_lie, rows):
        vv = v[who]
        t = vv * m0 - m1
        g = a * vv[:, None] - c - t[:, None]
        g[same] = 0.0   # the same report (up to the law): no change at all
        k = np.argmax(g, axis=1)
        truthful[who] = t
        best_gain[who] = g[np.arange(g.shape[0]), k]
        best_lie[who] = ell[k]
        if gains is not None:
            gains[who] = g
    return MisreportAudit(ell, v, truthful, best_gain, best_lie, float(epsilon), gains)


def _by_distinct_bid(law, b, ell, at_lie, rows):
    """Blocks of at most ``rows`` agents, each with the liar's utility ``a v - c`` (agents x lies), the
    truthful ``E[1; p <= b]`` and ``E[p; p <= b]``, and where the lie equals the bid.  The law after a
    lie depends on the bid only, so it is computed once per distinct bid (at most ``m + 1`` on a grid)."""
    u, inv = np.unique(law.canonical(b), return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(0, u.size + rows, rows))
    for block, first in enumerate(range(0, u.size, rows)):
        a, c, at_bid = _liar_coefficients(law, u[first:first + rows], ell, at_lie)
        agents = order[starts[block]:starts[block + 1]]
        for lo in range(0, agents.size, rows):
            who = agents[lo:lo + rows]
            j = inv[who] - first
            yield who, a[j], c[j], np.exp(at_bid[0][j]), np.exp(at_bid[1][j]), u[inv[who]][:, None] == ell[None, :]


def log_normaliser_ratio(law: PriceLaw, bids: np.ndarray, reports: np.ndarray, at_bid: np.ndarray,
                         at_report: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ln z = ln Z(b -> r) - ln Z`` for each (bid, report) (rows x columns) and the range functionals of
    ``(min, max]``.  ``at_bid`` / ``at_report``: ``law.log_range(-1, .)`` at the bids / reports.

    Raising ``b`` to ``r``: ``z = 1 + E[e^{kp} - 1; b < p <= r]``; lowering: ``z = P[p <= r] + P[p > b]
    + E[e^{-kp}; r < p <= b]``: sums of positive terms, each in log space (no cancellation)."""
    bb, rr = bids[:, None], reports[None, :]
    between = law.log_between(bids, reports)
    above_bid = law.log_range(bids, 2.0)[0][:, None]
    up = np.logaddexp(0.0, log_sub(between[2], between[0]))
    down = np.logaddexp(np.logaddexp(at_report[0][None, :], above_bid), between[4])
    return np.where(rr > bb, up, np.where(rr < bb, down, 0.0)), between


def _liar_coefficients(law, u, ell, at_lie):
    """For distinct (canonical) bids ``u``: ``(a, c)`` with the liar's utility ``a v - c`` (bids x lies)
    and the law's functionals at the bids."""
    at_bid = law.log_range(-1.0, u)
    log_z, between = log_normaliser_ratio(law, u, ell, at_bid, at_lie)
    raising = ell[None, :] > u[:, None]
    # Raising: she buys at every p <= b (weights unchanged) and at p in (b, l] (weights e^{kp}).
    # Lowering: she buys at every p <= l, whose weights are unchanged.
    log_a = np.where(raising, np.logaddexp(at_bid[0][:, None], between[2]), at_lie[0][None, :])
    log_c = np.where(raising, np.logaddexp(at_bid[1][:, None], between[3]), at_lie[1][None, :])
    return np.exp(log_a - log_z), np.exp(log_c - log_z), at_bid


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
