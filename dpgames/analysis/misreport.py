"""The exact incentive to misreport in the digital-goods auction.

For every agent ``i`` and every lie ``b'`` from a report grid,

    gain_i(b') = E[u(v_i, M(b', b_-i))] - E[u(v_i, M(b))],

where ``u(v, p, buy) = (v - p) 1{buy}`` and the agent buys iff her *report* is at least the price.

Fast path (exact): changing bid ``b`` to ``b'`` multiplies the unnormalised price law by
``exp(+-k p)`` on the prices between ``b`` and ``b'`` only (``k`` the exponential mechanism's
factor). So the law after the lie, and the liar's utility, follow from the truthful law's
functionals up to ``b`` and up to ``b'``: all ``n x L`` gains cost O(n L + m), against ``L n``
recomputations of the law by brute force.

* ``k * largest price <= 3`` (:data:`~dpgames.mechanisms.price_laws.LINEAR_TILT_LIMIT`; eps up to 6
  with Dwork & Roth's weights): the gains are *rank one* in the linear prefix functionals
  (:meth:`~dpgames.mechanisms.price_laws.PriceLaw.linear_prefix`), a per-agent and a per-lie factor
  combined once per pair, in row blocks of bounded memory (:func:`_rank_one_gains`); every term is
  below ``e^3``, so the gains keep ~1e-14 of absolute precision (utilities lie in [-1, 1]).
* above it: every mass is a logarithm and every ratio of normalisers a log-sum-exp of positive terms
  (:meth:`~dpgames.mechanisms.price_laws.PriceLaw.log_between`), exact to about 1e-15 in utility
  units for any eps a float holds: eps = 1e6, where the law is a point mass to double precision, is
  as exact as eps = 1e-6.

Bounds the gain is checked against: Dwork & Roth Prop 10.1 (``2 eps`` for utilities in [0, 1]), the
exact DP bound ``(e^eps - 1) E[(v - p)+]`` (the lie moves each price's probability by a factor at
most ``e^eps``), and, since the revenue score is monotone in each bid, ``(e^{eps/2} - 1) E[(v -
p)+]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpgames.display import html_table, text_rows
from dpgames.mechanisms.bids import Bids, check_bids, check_values
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.price_laws import GridPriceLaw, PriceLaw, log_sub
from dpgames.validation import ValidationError, positive

#: Pairs per block of the rank-one path (two buffers of this many floats, reused: ~1 MB).
_CHUNK_ELEMENTS = 1 << 16
#: Pairs per block of the log-space path (each holds ~20 temporaries of this size).
_LOG_CHUNK_ELEMENTS = 1 << 19


def _scaled_expm1(x: float, weight: np.ndarray) -> np.ndarray:
    """``expm1(x) * weight`` for ``weight >= 0``, in log space when ``e^x`` overflows: ``inf`` only
    where the true product exceeds the largest float (then the bound it states is vacuous), 0 where
    weight is 0."""
    weight = np.asarray(weight, dtype=float)
    if x < 700:
        return np.expm1(x) * weight
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(
            weight > 0, np.exp(x + np.log1p(-np.exp(-x)) + np.log(np.maximum(weight, 1e-320))), 0.0
        )


@dataclass(frozen=True)
class MisreportAudit:
    """Result of an exact misreport audit (:func:`misreport_audit`).

    Parameters
    ----------
    lies : numpy.ndarray
        The reports tried for every agent.
    values : numpy.ndarray
        The agents' true values.
    truthful_utility : numpy.ndarray
        ``E[(v_i - p) 1{p <= b_i}]`` per agent.
    best_gain : numpy.ndarray
        Agent ``i``'s largest gain over the lies (0 when a lie equals her bid up to the law).
    best_lie : numpy.ndarray
        The lie attaining it (ties: the lowest up to the law, as first listed).
    epsilon : float
        The price's DP guarantee (the auction's eps under Dwork & Roth's weights, 2 eps under
        McSherry & Talwar's), which the bounds are stated in.
    gains : numpy.ndarray, optional
        The full agents x lies matrix, when it was asked for.

    Examples
    --------
    >>> from dpgames import DigitalGoodsAuction
    >>> audit = misreport_audit(DigitalGoodsAuction(1.0, alpha=0.25), [0.3, 0.55, 0.8, 1.0])
    >>> audit.lies.tolist()                     # 0 and every price: exhaustive on a grid
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> audit.worst_case["agent"], audit.worst_case["lie"]   # the top bidder shades her bid
    (3, 0.75)
    >>> round(audit.max_gain, 4), audit.max_gain <= audit.bound_prop_10_1, audit.within_bounds()
    (0.0353, True, True)
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
        """The largest gain of any agent from any lie."""
        return float(self.best_gain.max())

    @property
    def worst_agent(self) -> int:
        """The agent with the largest gain (the first on ties)."""
        return int(np.argmax(self.best_gain))

    @property
    def worst_case(self) -> dict[str, float]:
        """Who gains most by lying: agent, true value, lie, gain."""
        i = self.worst_agent
        return {
            "agent": i,
            "true_value": float(self.values[i]),
            "lie": float(self.best_lie[i]),
            "gain": float(self.best_gain[i]),
        }

    @property
    def bound_prop_10_1(self) -> float:
        """Dwork & Roth Prop 10.1: ``2 eps`` (utilities in [0, 1])."""
        return 2 * self.epsilon

    @property
    def exact_dp_bound(self) -> np.ndarray:
        """Per agent ``(e^eps - 1) E[(v_i - p)+]`` (``inf`` only where that number exceeds float
        range)."""
        return _scaled_expm1(self.epsilon, np.maximum(self.truthful_utility, 0.0))

    @property
    def monotone_bound(self) -> np.ndarray:
        """Per agent ``(e^{eps/2} - 1) E[(v_i - p)+]`` (the revenue score is monotone in every
        bid)."""
        return _scaled_expm1(self.epsilon / 2, np.maximum(self.truthful_utility, 0.0))

    def within_bounds(self, tol: float = 1e-12) -> bool:
        """Whether every agent's gain respects all three bounds."""
        return bool(
            (self.best_gain <= self.bound_prop_10_1 + tol).all()
            and (self.best_gain <= self.monotone_bound + tol).all()
        )

    def __repr__(self) -> str:
        """One line: sizes and the worst lie (the arrays are in the fields; :meth:`describe` has the
        rest)."""
        w = self.worst_case
        return (
            f"MisreportAudit({self.values.size:,} agents x {self.lies.size:,} lies, "
            f"max_gain={self.max_gain:.6g} "
            f"(agent {w['agent']}, value {w['true_value']:.6g}, lie {w['lie']:.6g}), "
            f"epsilon={self.epsilon:g})"
        )

    def _rows(self) -> list[tuple[str, object]]:
        worst = self.worst_case
        return [
            ("agents", self.values.size),
            ("lies tried per agent", self.lies.size),
            ("largest gain from a lie", self.max_gain),
            ("  agent", worst["agent"]),
            ("  true value", worst["true_value"]),
            ("  lie", worst["lie"]),
            ("bound 2 eps (Prop 10.1)", self.bound_prop_10_1),
            ("every gain within the bounds", self.within_bounds()),
        ]

    def describe(self) -> str:
        """The headline figures, one per line.

        Returns
        -------
        str
        """
        return text_rows(self._rows())

    def _repr_html_(self) -> str:
        """The headline figures as an HTML table (Jupyter)."""
        return html_table(self._rows(), title="misreport audit (exact)")

    def gain_quantiles(self, qs: ArrayLike = (0.5, 0.9, 0.99, 1.0)) -> dict[float, float]:
        """Quantiles of the agents' best gains, ``{q: value}``."""
        levels = np.asarray(qs)
        return {float(q): float(v) for q, v in zip(levels, np.quantile(self.best_gain, levels))}


def default_lies(auction: DigitalGoodsAuction, n_bids: int, max_points: int = 1001) -> np.ndarray:
    """The report grid.  On a price grid with at most ``max_points`` prices: 0 and every price,
    which is *exhaustive* (a report between two prices is worth the same as the lower one).
    Otherwise 101 evenly spaced reports in [0, 1].

    Parameters
    ----------
    auction : DigitalGoodsAuction
    n_bids : int
        The number of bids (the default grid step depends on it).
    max_points : int
        Largest exhaustive grid.

    Returns
    -------
    numpy.ndarray
    """
    return _lies_for(auction.prices_for(n_bids), max_points)


def check_law(law: object) -> PriceLaw:
    """``law`` itself when it is a price law, else a :class:`ValidationError` naming the argument.

    Raises
    ------
    ValidationError
        When ``law`` is not a :class:`~dpgames.mechanisms.price_laws.PriceLaw`.
    """
    if not isinstance(law, PriceLaw):
        raise ValidationError(
            "law",
            f"must be a price law (DigitalGoodsAuction.price_law(bids)), got {type(law).__name__}",
        )
    return law


def law_default_lies(law: PriceLaw, max_points: int = 1001) -> np.ndarray:
    """:func:`default_lies` for a prepared price law."""
    return _lies_for(law.prices if isinstance(law, GridPriceLaw) else None, max_points)


def _lies_for(prices: np.ndarray | None, max_points: int) -> np.ndarray:
    if prices is not None and prices.size + 1 <= max_points:
        return np.concatenate([[0.0], prices])
    return np.linspace(0.0, 1.0, 101)


def misreport_audit(
    auction: DigitalGoodsAuction,
    values: ArrayLike | Bids,
    bids: ArrayLike | Bids | None = None,
    lies: ArrayLike | None = None,
    keep_gains: bool = False,
) -> MisreportAudit:
    """Exact gain of every (agent, lie) when the others report ``bids`` (default: the true values).

    Builds the price law once and calls :func:`misreport_audit_of_law`.

    Parameters
    ----------
    auction : DigitalGoodsAuction
    values : array_like or Bids
        The agents' true values in ``[0, 1]``.
    bids : array_like or Bids, optional
        What the agents report (default: their values).
    lies : array_like, optional
        The reports tried for each agent (default: :func:`default_lies`, exhaustive on a grid of at
        most 1,000 prices).
    keep_gains : bool
        Keep the full agents x lies matrix (``n * L`` floats).

    Returns
    -------
    MisreportAudit

    Raises
    ------
    ValidationError
        For values, bids or lies outside ``[0, 1]``, or values and bids of different lengths.
    """
    b = Bids.of(values, "values") if bids is None else Bids.of(bids)
    v = (
        b.values
        if bids is None
        else check_values(values.values if isinstance(values, Bids) else values, b.values)
    )
    ell = None if lies is None else check_bids(lies, "lies")
    return misreport_audit_of_law(
        auction.price_law(b), auction.guarantee.epsilon, v, b, ell, keep_gains
    )


def misreport_audit_of_law(
    law: PriceLaw,
    epsilon: float,
    values: np.ndarray,
    bids: np.ndarray | Bids,
    lies: np.ndarray | None = None,
    keep_gains: bool = False,
) -> MisreportAudit:
    """The audit on a prepared law.

    Parameters
    ----------
    law : PriceLaw
        The auction's price law on ``bids`` (``auction.price_law(bids)``).
    epsilon : float
        The price's DP guarantee (``auction.guarantee.epsilon``: eps, or 2 eps with McSherry-Talwar
        weights), which the bounds are stated in.
    values : numpy.ndarray
        Checked true values, aligned with the bids.
    bids : numpy.ndarray or Bids
        Checked bids; a :class:`~dpgames.mechanisms.bids.Bids` (e.g. ``law.bids``) saves a sort.
    lies : numpy.ndarray, optional
        Checked reports (default: :func:`law_default_lies`).
    keep_gains : bool
        Keep the full agents x lies matrix.

    Raises
    ------
    ValidationError
        For a ``law`` that is not a price law, ``epsilon <= 0``, or values, bids or reports outside
        [0, 1] (values and bids of different lengths).

    Returns
    -------
    MisreportAudit
        ``best_lie[i]`` attains ``best_gain[i]``; among lies with equal gains, the lowest (up to the
        law: on a grid a report means the largest price at or below it) as first listed in ``lies``.

    Notes
    -----
    When ``k * largest price <=`` :data:`~dpgames.mechanisms.price_laws.LINEAR_TILT_LIMIT` (eps up
    to 6 with Dwork & Roth's weights) the gains are rank one in the law's linear prefix functionals
    (:func:`_rank_one_gains`): O(n L) in row blocks of bounded memory, ~1e-14 absolute.  Above it
    they come from the exact log-space range functionals (:func:`_log_space_gains`), at any eps.
    """
    law = check_law(law)
    epsilon = positive("epsilon", epsilon)
    b = Bids.of(bids)
    raw = values.values if isinstance(values, Bids) else values
    # the bids' own checked array: as it is
    v = raw if raw is b.values else check_values(raw, b.values)
    ell = law_default_lies(law) if lies is None else check_bids(lies, "lies")
    if law.linear_ok:
        truthful, best_gain, best_col, gains = _rank_one_gains(law, v, b, ell, keep_gains)
    else:
        truthful, best_gain, best_col, gains = _log_space_gains(law, v, b.values, ell, keep_gains)
    return MisreportAudit(ell, v, truthful, best_gain, ell[best_col], float(epsilon), gains)


def _rank_one_gains(law: PriceLaw, v: np.ndarray, bids: Bids, ell: np.ndarray, keep_gains: bool):
    """Truthful utility, best gain, its column in ``ell`` and (optionally) all gains, by rank-one
    blocks.

    With ``F, G, U, V, W`` the law's :data:`~dpgames.mechanisms.price_laws.LINEAR_FUNCTIONALS` up to
    a point (``E[f(p); p <= x]`` for ``f = 1, p, e^{kp} - 1, p (e^{kp} - 1), 1 - e^{-kp}``), an
    agent of value ``v`` and bid ``b`` who reports ``l`` gets (her report buys at every price ``<=
    l``):

    * raising (``l > b``, weights times ``e^{kp}`` on ``(b, l]``):
      ``(v (F_l + U_l) - (G_l + V_l) - (v U_b - V_b)) / ((1 - U_b) + U_l)``;
    * lowering (``l < b``, weights times ``e^{-kp}`` on ``(l, b]``): ``(v F_l - G_l) / ((1 - W_b) +
      W_l)``;

    so numerator and denominator are each a product of a per-agent row and a per-lie column matrix
    (inner dimension 2 or 3: one small matrix product writes each block, the only full passes are
    that, the division and the row argmax).  Agents are sorted by bid, so in a block of rows the
    lies below the first row's bid lower for every row, those above the last row's bid raise for
    every row, and only the few between are computed both ways and picked per row.  Blocks hold at
    most ``_CHUNK_ELEMENTS`` pairs, in reused buffers: memory O(block), whatever n and L."""
    order = bids.order
    cb = law.canonical(bids.sorted)  # ascending: canonical is monotone
    vs = v[order]
    lies_c, first, col_of = np.unique(law.canonical(ell), return_index=True, return_inverse=True)
    F, G, U, V, W = law.linear_prefix(lies_c)
    Fb, Gb, Ub, Vb, Wb = law.linear_prefix(cb)
    t = vs * Fb - Gb
    # One agent-row matrix each for the numerator and the denominator, whichever way she lies; the
    # lie columns of the lowering and the raising form (a zero row drops the other form's agent
    # term).
    num_rows, den_rows = np.empty((cb.size, 3)), np.empty((cb.size, 3))
    num_rows[:, 0], num_rows[:, 1], den_rows[:, 2] = vs, -1.0, 1.0
    np.multiply(vs, Ub, out=num_rows[:, 2])
    np.subtract(Vb, num_rows[:, 2], out=num_rows[:, 2])
    np.subtract(1.0, Wb, out=den_rows[:, 0])
    np.subtract(1.0, Ub, out=den_rows[:, 1])
    zeros, ones = np.zeros(lies_c.size), np.ones(lies_c.size)
    down = np.stack([np.stack([F, G, zeros]), np.stack([ones, zeros, W])])
    up = np.stack([np.stack([F + U, G + V, ones]), np.stack([zeros, ones, U])])
    # a block's columns: lowering below its bids, raising above
    block_cols = np.empty((2, 3, lies_c.size))
    lo_cols = np.searchsorted(lies_c, cb, side="left")  # lies below the bid: lowering
    # from here on: raising
    hi_cols = lo_cols + (lies_c[np.minimum(lo_cols, lies_c.size - 1)] == cb)
    n, m = cb.size, lies_c.size
    best = np.empty(n)
    best_col = np.empty(n, dtype=np.int64)
    gains = np.empty((n, m)) if keep_gains else None
    rows = max(1, _CHUNK_ELEMENTS // m)
    buffers = [np.empty(rows * m) for _ in range(4)]
    row_index, col_index = np.arange(rows), np.arange(m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # in the spare block's discarded entries
        for r0 in range(0, n, rows):
            r = slice(r0, min(r0 + rows, n))
            size = r.stop - r.start
            lo, hi = int(lo_cols[r0]), int(hi_cols[r.stop - 1])
            g, den = (buffer[: size * m].reshape(size, m) for buffer in buffers[:2])
            block_cols[:, :, :hi], block_cols[:, :, hi:] = down[:, :, :hi], up[:, :, hi:]
            np.matmul(num_rows[r], block_cols[0], out=g)
            np.matmul(den_rows[r], block_cols[1], out=den)
            g /= den
            if hi > lo:  # between this block's bids: per row
                spare, spare_den = (
                    buffer[: size * (hi - lo)].reshape(size, hi - lo) for buffer in buffers[2:]
                )
                np.matmul(num_rows[r], up[0][:, lo:hi], out=spare)
                np.matmul(den_rows[r], up[1][:, lo:hi], out=spare_den)
                spare /= spare_den  # kept only where the lie raises
                col = col_index[None, lo:hi]
                np.copyto(g[:, lo:hi], spare, where=col >= hi_cols[r, None])
                np.copyto(
                    g[:, lo:hi],
                    t[r, None],
                    where=(col >= lo_cols[r, None]) & (col < hi_cols[r, None]),
                )
            k = np.argmax(g, axis=1)  # ties: the lower column
            np.subtract(g[row_index[:size], k], t[r], out=best[r])
            best_col[r] = k
            if gains is not None:
                np.subtract(g, t[r, None], out=gains[r])
    truthful, best_gain, best_lie_col = np.empty(n), np.empty(n), np.empty(n, dtype=np.int64)
    truthful[order], best_gain[order], best_lie_col[order] = t, best, first[best_col]
    if gains is not None:
        unsorted = np.empty_like(gains)
        unsorted[order] = gains
        gains = unsorted[:, col_of]
    return truthful, best_gain, best_lie_col, gains


def _log_space_gains(
    law: PriceLaw, v: np.ndarray, b: np.ndarray, ell: np.ndarray, keep_gains: bool
):
    """The same figures from the exact log-space range functionals (any eps): blocks of distinct
    bids x lies, each ratio of normalisers a log-sum-exp of positive terms."""
    ell_canon = law.canonical(ell)
    at_lie = law.log_range(-1.0, ell_canon)
    best_gain, best_col, truthful = (
        np.empty(b.size),
        np.empty(b.size, dtype=np.int64),
        np.empty(b.size),
    )
    gains = np.empty((b.size, ell.size)) if keep_gains else None
    rows = max(1, _LOG_CHUNK_ELEMENTS // ell.size)
    for who, a, c, m0, m1, same in _by_distinct_bid(law, b, ell_canon, at_lie, rows):
        vv = v[who]
        t = vv * m0 - m1
        g = a * vv[:, None] - c - t[:, None]
        g[same] = 0.0  # the same report (up to the law): no change at all
        k = _first_of_lowest(g, ell_canon)
        truthful[who] = t
        best_gain[who] = g[np.arange(g.shape[0]), k]
        best_col[who] = k
        if gains is not None:
            gains[who] = g
    return truthful, best_gain, best_col, gains


def _first_of_lowest(g: np.ndarray, ell_canon: np.ndarray) -> np.ndarray:
    """Per row, the column of the largest entry: the lowest canonical lie among ties, first
    listed."""
    rank = np.lexsort((np.arange(ell_canon.size), ell_canon))
    return rank[np.argmax(g[:, rank], axis=1)]


def _by_distinct_bid(law, b, ell, at_lie, rows):
    """Blocks of at most ``rows`` agents, each with the liar's utility ``a v - c`` (agents x lies),
    the truthful ``E[1; p <= b]`` and ``E[p; p <= b]``, and where the lie equals the bid.  The law
    after a lie depends on the bid only, so it is computed once per distinct bid (at most ``m + 1``
    on a grid)."""
    u, inv = np.unique(law.canonical(b), return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(0, u.size + rows, rows))
    for block, first in enumerate(range(0, u.size, rows)):
        a, c, at_bid = _liar_coefficients(law, u[first : first + rows], ell, at_lie)
        agents = order[starts[block] : starts[block + 1]]
        for lo in range(0, agents.size, rows):
            who = agents[lo : lo + rows]
            j = inv[who] - first
            yield (
                who,
                a[j],
                c[j],
                np.exp(at_bid[0][j]),
                np.exp(at_bid[1][j]),
                u[inv[who]][:, None] == ell[None, :],
            )


def log_normaliser_ratio(
    law: PriceLaw, bids: np.ndarray, reports: np.ndarray, at_bid: np.ndarray, at_report: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``ln z = ln Z(b -> r) - ln Z`` for each (bid, report), in log space (exact at any eps).

    Parameters
    ----------
    law : PriceLaw
    bids, reports : numpy.ndarray
        Canonical bids (rows) and reports (columns).
    at_bid, at_report : numpy.ndarray
        ``law.log_range(-1, .)`` at the bids / reports.

    Returns
    -------
    tuple of numpy.ndarray
        ``ln z`` (bids x reports) and :meth:`PriceLaw.log_between` of the pairs.

    Raising ``b`` to ``r``: ``z = 1 + E[e^{kp} - 1; b < p <= r]``; lowering: ``z = P[p <= r] + P[p >
    b]
    + E[e^{-kp}; r < p <= b]``: sums of positive terms, each in log space (no cancellation)."""
    bb, rr = bids[:, None], reports[None, :]
    between = law.log_between(bids, reports)
    above_bid = law.log_range(bids, 2.0)[0][:, None]
    up = np.logaddexp(0.0, log_sub(between[2], between[0]))
    down = np.logaddexp(np.logaddexp(at_report[0][None, :], above_bid), between[4])
    return np.where(rr > bb, up, np.where(rr < bb, down, 0.0)), between


def _liar_coefficients(law, u, ell, at_lie):
    """For distinct (canonical) bids ``u``: ``(a, c)`` with the liar's utility ``a v - c`` (bids x
    lies) and the law's functionals at the bids."""
    at_bid = law.log_range(-1.0, u)
    log_z, between = log_normaliser_ratio(law, u, ell, at_bid, at_lie)
    raising = ell[None, :] > u[:, None]
    # Raising: she buys at every p <= b (weights unchanged) and at p in (b, l] (weights e^{kp}).
    # Lowering: she buys at every p <= l, whose weights are unchanged.
    log_a = np.where(raising, np.logaddexp(at_bid[0][:, None], between[2]), at_lie[0][None, :])
    log_c = np.where(raising, np.logaddexp(at_bid[1][:, None], between[3]), at_lie[1][None, :])
    return np.exp(log_a - log_z), np.exp(log_c - log_z), at_bid


def misreport_audit_brute_force(
    auction: DigitalGoodsAuction,
    values: ArrayLike,
    lies: ArrayLike,
    agents: ArrayLike | None = None,
    bids: ArrayLike | None = None,
) -> np.ndarray:
    """The same gains by recomputing the price law for every (agent, lie): ``len(agents) x
    len(lies)``.

    O(L n (n log n + m)) for all agents: a baseline for benchmarks and small cases only.

    Parameters
    ----------
    auction : DigitalGoodsAuction
    values : array_like
        True values in ``[0, 1]``.
    lies : array_like
        Reports to try.
    agents : array_like of int, optional
        Which agents (default: all).
    bids : array_like, optional
        The reports of everybody (default: the values).

    Returns
    -------
    numpy.ndarray
        ``len(agents) x len(lies)`` gains.

    Raises
    ------
    ValidationError
        For bids outside ``[0, 1]``.
    """
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
