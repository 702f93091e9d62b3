"""Non-private baselines for a :class:`~dpgames.allocation.market.Market`: the optimal allocation
(maximum-weight matching with supplies), an upper bound on it by LP duality, and the conditions of a
Walrasian (competitive) equilibrium checked by definition.

The optimum is computed exactly: by :func:`scipy.optimize.linear_sum_assignment` on the expanded
instance (one column per copy, ``min(s_j, n)`` copies of good ``j``) when it has at most
:data:`ASSIGNMENT_LIMIT` entries, else by the transportation LP (HiGHS via
:func:`scipy.optimize.linprog`; its constraint matrix is that of a bipartite b-matching, totally
unimodular, so the LP optimum is an allocation) when ``n k <= LP_LIMIT``; beyond that it is refused,
and :func:`dual_upper_bound` still bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from dpgames.allocation.market import Market
from dpgames.validation import ValidationError, finite_array, finite_result, non_negative

#: Largest expanded instance (bidders x copies) solved by linear_sum_assignment.
ASSIGNMENT_LIMIT = 4_000_000
#: Largest n * k solved by the transportation LP.
LP_LIMIT = 50_000


@dataclass(frozen=True)
class OptimalAllocation:
    """The welfare-maximising allocation.

    Attributes
    ----------
    welfare : float
    assignment : numpy.ndarray
        ``(n,)`` goods (``-1``: none).
    method : str
        ``"linear_sum_assignment"`` or ``"linprog"``.

    Examples
    --------
    >>> best = optimal_allocation(Market([[0.9, 0.5], [0.8, 0.1], [0.7, 0.6]], supply=1))
    >>> round(best.welfare, 6), best.assignment.tolist(), best.method
    (1.5, [0, -1, 1], 'linear_sum_assignment')
    """

    welfare: float
    assignment: np.ndarray
    method: str


def optimal_allocation(market: Market) -> OptimalAllocation:
    """The maximum-weight allocation of ``market`` (exact; module docstring for the method).

    Parameters
    ----------
    market : Market

    Returns
    -------
    OptimalAllocation

    Raises
    ------
    ValidationError
        If ``market`` is not a Market, or too large for both methods (use :func:`dual_upper_bound`).
    """
    if not isinstance(market, Market):
        raise ValidationError("market", f"must be a Market, got {type(market).__name__}")
    n, k = market.n, market.k
    copies = np.minimum(market.supply, n)
    if n * int(copies.sum()) <= ASSIGNMENT_LIMIT:
        columns = np.repeat(np.arange(k), copies)
        rows, cols = optimize.linear_sum_assignment(market.values[:, columns], maximize=True)
        assignment = np.full(n, -1, dtype=np.int64)
        assignment[rows] = columns[cols]
        assignment[
            (assignment >= 0) & (market.values[np.arange(n), np.maximum(assignment, 0)] <= 0)
        ] = -1
        return OptimalAllocation(market.welfare(assignment), assignment, "linear_sum_assignment")
    if n * k <= LP_LIMIT:
        return _transportation_lp(market)
    raise ValidationError(
        "market",
        f"is too large for an exact optimum ({n:,} bidders x {k} goods: "
        f"more than {LP_LIMIT:,} pairs); use dual_upper_bound for a bound",
    )


def _transportation_lp(market: Market) -> OptimalAllocation:
    n, k = market.n, market.k
    var = np.arange(n * k)  # variable i * k + j: how much of good j bidder i gets
    a = sparse.csr_matrix(
        (np.ones(2 * n * k), (np.concatenate([var // k, n + var % k]), np.tile(var, 2))),
        shape=(n + k, n * k),
    )
    b = np.concatenate([np.ones(n), market.supply.astype(float)])
    res = optimize.linprog(-market.values.ravel(), A_ub=a, b_ub=b, bounds=(0, 1), method="highs")
    if res.status != 0:  # pragma: no cover - HiGHS solves every such LP
        raise ValidationError("market", f"the transportation LP failed: {res.message}")
    x = res.x.reshape(n, k)
    assignment = np.where(x.max(axis=1) > 0.5, x.argmax(axis=1), -1).astype(np.int64)
    return OptimalAllocation(market.welfare(assignment), assignment, "linprog")


def dual_upper_bound(market: Market, prices: np.ndarray) -> float:
    """``sum_i max(0, max_j v_ij - p_j) + sum_j s_j p_j``, an upper bound on the optimal welfare for
    any prices ``p >= 0`` (weak LP duality: ``(u, p)`` with ``u_i`` the bidders' best utilities is
    feasible for the dual of the transportation LP); equal to it at Walrasian prices.

    Parameters
    ----------
    market : Market
    prices : array_like
        ``(k,)``, finite, ``>= 0``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On prices of the wrong shape, negative or not finite, or a bound beyond the float range.
    """
    p = finite_array("prices", prices, ndim=1, low=0)
    if p.shape != (market.k,):
        raise ValidationError("prices", f"must be {market.k} numbers >= 0")
    best = np.maximum((market.values - p).max(axis=1), 0.0)
    with np.errstate(over="ignore"):
        bound = float(best.sum() + np.dot(market.supply, p))
    return finite_result("dual_upper_bound", bound, "prices x supply beyond the float range")


@dataclass(frozen=True)
class EquilibriumCheck:
    """How far ``(assignment, prices)`` is from a Walrasian equilibrium, by definition.

    Attributes
    ----------
    demand_gap : float
        ``max_i [max(0, max_j v_ij - p_j) - u_i]``: 0 iff every bidder gets a demanded good (or
        nothing when nothing has positive utility).
    oversold : int
        Copies given beyond supply (0 iff feasible).
    priced_unsold : numpy.ndarray
        Goods with an unsold copy and a price above the reserve ``reserve``.

    Examples
    --------
    >>> market = Market([[0.9, 0.5], [0.8, 0.1]], supply=1)
    >>> equilibrium_violations(market, np.array([1, 0]), [0.5, 0.1]).holds()
    True
    >>> round(
    ...     equilibrium_violations(market, np.array([0, 1]), [0.3, 0.0]).demand_gap, 6
    ... )  # bidder 1 wants good 0
    0.4
    """

    demand_gap: float
    oversold: int
    priced_unsold: np.ndarray

    def holds(self, tol: float = 1e-12) -> bool:
        """Whether all three conditions of a Walrasian equilibrium hold (up to ``tol`` in utility).

        Parameters
        ----------
        tol : float, default 1e-12

        Returns
        -------
        bool
        """
        return self.demand_gap <= tol and self.oversold == 0 and self.priced_unsold.size == 0


def equilibrium_violations(
    market: Market, assignment: np.ndarray, prices: np.ndarray, reserve: float = 0.0
) -> EquilibriumCheck:
    """Check ``(assignment, prices)`` against the definition of a Walrasian equilibrium: every
    bidder gets a good in her demand at ``prices``, no good is oversold, unsold goods are at
    ``reserve``.

    Parameters
    ----------
    market : Market
    assignment : numpy.ndarray
        ``(n,)`` goods, ``-1`` for none.
    prices : array_like
        ``(k,)``, ``>= 0``.
    reserve : float, default 0

    Returns
    -------
    EquilibriumCheck

    Raises
    ------
    ValidationError
        On a bad assignment, prices or reserve.
    """
    reserve = non_negative("reserve", reserve)
    p = finite_array("prices", prices, ndim=1, low=0)
    if p.shape != (market.k,):
        raise ValidationError("prices", f"must be {market.k} numbers >= 0")
    market.welfare(assignment)  # validates the assignment
    a = np.asarray(assignment)
    held = np.flatnonzero(a >= 0)
    utility = np.zeros(market.n)
    utility[held] = market.values[held, a[held]] - p[a[held]]
    best = np.maximum((market.values - p).max(axis=1), 0.0)
    sold = market.sold(a)
    return EquilibriumCheck(
        float((best - utility).max()),
        int(np.maximum(sold - market.supply, 0).sum()),
        np.flatnonzero((sold < market.supply) & (p > reserve)),
    )
