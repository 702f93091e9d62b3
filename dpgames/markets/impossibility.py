"""Costs correlated with the data: what the surveyor's mechanisms leak through the cost reports.

Ghosh & Roth (EC 2011, abstract): "we ignore the privacy cost due to possible correlations between
an individuals private data and his valuation for privacy itself.  We then show that generically, no
individually rational mechanism can compensate individuals for the privacy loss incurred due to
their
reported valuations for privacy."  Ligett & Roth (WINE 2012, abstract) restate it: "when costs for privacy
loss may be correlated with private types, if individuals value differential privacy, no
individually rational direct revelation mechanism can compute any non-trivial estimate of the
population statistic."

:func:`correlation_sweep` shows it numerically on the family ``c | b = 0 ~ U(0, 1)``,
``Pr[c <= x | b = 1] = x^(1/(1 - rho))`` on ``[0, 1]`` (``rho = 0``: independent; as ``rho -> 1``
the agents with ``b = 1`` have costs near 1; at ``rho = 1`` every cost below 1 proves ``b = 0``).
The mechanisms protect the bits (each bought bit at its eps) but *whom they buy* is a function of
the cost reports.  Ex post, agent ``i`` is bought iff her cost is below her threshold ``theta_i``
(the others' ``m``-th smallest cost), so the selection's privacy loss about her bit is exactly

    ``L_i = | ln( F_1(theta_i) / F_0(theta_i) ) |`` if bought, ``| ln( (1 - F_1) / (1 - F_0) ) |``
    if not,

with ``F_b`` the cost CDF given the bit: a bought agent loses ``rho/(1 - rho) |ln theta_i|``,
unbounded as ``rho -> 1``.  An agent who values privacy at ``c_i`` per unit of loss would need
``c_i L_i`` to stay whole, bought or not.  Meanwhile the unbought agents are the dear ones, more
often ``b = 1``, so the realised error's deterministic part drifts to its worst case ``-u/2``.
Every figure of a row is exact given the drawn population (closed-form CDFs and the exact error
law).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dpgames.markets.agents import (
    PopulationLaw,
    PowerCosts,
    UniformCosts,
    privacy_population,
)
from dpgames.markets.surveyor import AccuracyAuction, cost_order
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, memory, positive_int, probability

__all__ = ["correlated_uniform_law", "correlation_sweep", "selection_privacy_loss"]


def correlated_uniform_law(rho: float, bit_rate: float = 0.5) -> PopulationLaw:
    """``c | b = 0 ~ U(0, 1)``; ``c | b = 1`` with CDF ``x^(1/(1 - rho))`` on ``[0, 1]``; ``rho`` in
    ``[0, 1)``.

    Raises
    ------
    ValidationError
        ``rho`` outside ``[0, 1)`` or ``bit_rate`` outside ``[0, 1]``.
    """
    rho = probability("rho", rho, allow_zero=True)
    return PopulationLaw(bit_rate, UniformCosts(0.0, 1.0), PowerCosts(1.0 / (1.0 - rho)))


def selection_privacy_loss(
    law: PopulationLaw, thresholds: ArrayLike, bought: ArrayLike
) -> np.ndarray:
    """Each agent's privacy loss about her bit from being bought or not, ex post (``inf`` when the
    event is impossible under one bit value: it proves the bit).

    Parameters
    ----------
    law : PopulationLaw
        With correlated costs (``costs_if_one``); for independent costs every loss is 0.
    thresholds : array_like
        ``theta_i``: she is bought iff her cost is below it (ties aside, a null event for continuous
        laws).
    bought : array_like of bool

    Returns
    -------
    numpy.ndarray
        ``|ln Pr[event | b = 1] - ln Pr[event | b = 0]|``; 0 where the event is certain or
        impossible for both.
    """
    theta = finite_array("thresholds", thresholds, ndim=1)
    flags = finite_array("bought", bought, ndim=1, allow_bool=True)
    if flags.shape != theta.shape or not np.isin(flags, (0.0, 1.0)).all():
        raise ValidationError("bought", f"must be {theta.size} booleans, one per threshold")
    won = flags.astype(bool)
    f0 = law.law_given(0).cdf(theta)
    f1 = law.law_given(1).cdf(theta)
    p0, p1 = np.where(won, f0, 1 - f0), np.where(won, f1, 1 - f1)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.abs(np.log(p1) - np.log(p0))
    return np.where((p0 == 0) & (p1 == 0), 0.0, loss)


def correlation_sweep(
    rhos: ArrayLike,
    n: int = 2000,
    alpha: float = 0.1,
    beta: float = 0.05,
    bit_rate: float = 0.5,
    rng: RNGLike = 0,
) -> list[dict]:
    """One row per ``rho``: the accuracy auction on a population drawn from
    :func:`correlated_uniform_law`.

    Columns: ``rho``; ``payment`` (the auction's total); ``guaranteed_within`` (``1 - beta``: the
    worst-case guarantee, unchanged); ``realised_within`` (exact ``Pr[|error| <= alpha n]`` given
    the drawn bits); ``mean_abs_error`` (exact, given the bits); ``bias`` (the deterministic part
    ``D``); ``max_selection_loss`` / ``mean_selection_loss`` over agents (``inf`` when some agent's
    event proves her bit); ``compensation_needed`` (``sum_i c_i L_i``, the payment an IR mechanism
    would owe for the cost reports' leak, ``inf`` when unbounded) and ``ratio_to_payment``.

    Every ``rho`` draws its population from one seed taken from ``rng`` (common random numbers: the
    rows differ by the law only).

    Raises
    ------
    ValidationError
        ``rhos`` outside ``[0, 1)``, or bad ``n``, ``alpha``, ``beta``, ``bit_rate`` or ``rng``.
    """
    rhos = finite_array("rhos", rhos, ndim=1, low=0)
    if (rhos >= 1).any():
        raise ValidationError("rhos", "must be correlations in [0, 1)")
    n = positive_int("n", n)
    memory("n", 3 * n, what="the population's bits and costs")
    mech = AccuracyAuction(alpha, beta)
    m, _ = mech.plan(n)
    seed = int(as_generator(rng).integers(2**63))
    rows = []
    for rho in rhos:
        law = correlated_uniform_law(float(rho), bit_rate)
        pop = privacy_population(n, law, rng=seed)
        out = mech.run(pop.costs)
        s = pop.costs[cost_order(pop.costs)]
        theta = np.where(out.bought, s[m] if m < n else math.inf, s[m - 1] if m else -math.inf)
        loss = selection_privacy_loss(law, theta, out.bought)
        err = out.error_law(pop.bits)
        with np.errstate(invalid="ignore"):
            need = float(np.sum(np.where(loss > 0, pop.costs * loss, 0.0)))
        rows.append(
            {
                "rho": float(rho),
                "payment": out.total_payment,
                "guaranteed_within": 1 - beta,
                "realised_within": err.probability_within(alpha * n),
                "mean_abs_error": err.mean_absolute_error(),
                "bias": err.mean(),
                "max_selection_loss": float(loss.max()),
                "mean_selection_loss": float(loss.mean()),
                "compensation_needed": need,
                "ratio_to_payment": need / out.total_payment if out.total_payment > 0 else math.inf,
            }
        )
    return rows
