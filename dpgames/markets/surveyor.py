"""The sensitive surveyor's mechanisms (Ghosh & Roth, "Selling Privacy at Auction", EC 2011,
arXiv:1011.1375; Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", section 10.3).

An analyst wants ``s = sum_i b_i``.  Agents report privacy costs ``c_i`` (linear model: cost ``c_i
eps``). The mechanism chooses whom to buy at which ``eps``, pays each, and releases ``s_hat = sum_{i
bought} b_i + u/2 + Lap(1/eps)`` (``u`` agents unbought, their bits guessed as 1/2).  The count of
the bought agents changes by at most 1 when one bought agent's bit changes, so the release is
``eps``-DP for each bought agent's bit (Laplace mechanism, Dwork & Roth Thm 3.6) and does not depend
on an unbought agent's bit at all.

Ghosh & Roth's abstract (the statements we implement; the paper's full text and constants could not
be retrieved here, so the mechanisms below are dpgames' variants in Dwork & Roth's form, named as
such, and every property they claim is tested numerically):

    "Our main result is that such auctions can naturally be viewed and optimally solved as variants
    of multi-unit procurement auctions ... In the setting in which the data analyst has a fixed
    accuracy goal, we show that an application of the classic Vickrey auction achieves the analyst's
    accuracy goal while minimizing his total payment ... In the setting in which the data analyst
    has a fixed budget, we give a mechanism which maximizes the accuracy of the resulting estimate
    while guaranteeing that the resulting sum payments do not exceed the analysts budget.  In both
    cases, our comparison class is the set of envy-free mechanisms, which correspond to the natural
    class of fixed-price mechanisms in our setting."

* :class:`AccuracyAuction` (accuracy goal, least payment): the number ``m`` of units to buy and
  their ``eps`` are fixed from ``(n, alpha, beta)`` before any report is seen, so that the release
  is within ``alpha n`` with probability ``>= 1 - beta`` *whatever the unbought agents' bits*; then
  a Vickrey ``(m+1)``-th price procurement auction buys the ``m`` cheapest reports and pays each
  ``eps * c_(m+1)``.  Truthful (threshold payments of a monotone rule) and individually rational.
* :class:`FairQuery` (budget ``B``, best accuracy; dpgames' proportional-share variant at a fixed
  ``eps``): buy the largest ``k`` with ``k eps c_(k) <= B``, pay each ``min(B/k, eps c_(k+1))``.
  The payment is the winner's threshold (derived in the docstring), so the mechanism is truthful,
  individually rational and pays at most ``k * B/k = B``.
* :func:`envy_free_accuracy`, :func:`envy_free_budget`: the optimal *fixed-price* mechanism for each
  goal, computed exactly from the true costs over every number of sellers and every ``eps``.

Ties between equal costs are broken by agent index (the lower index is cheaper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpgames.markets.agents import check_costs
from dpgames.markets.error_law import ErrorLaw, least_epsilon, radius_unchecked, worst_case_radius
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, positive, positive_int, probability

__all__ = [
    "AccuracyAuction",
    "EnvyFreeBenchmark",
    "FairQuery",
    "SurveyOutcome",
    "cost_order",
    "envy_free_accuracy",
    "envy_free_budget",
]


def _beta(beta: float) -> float:
    beta = probability("beta", beta)
    if beta > 0.5:
        raise ValidationError("beta", f"must be in (0, 1/2] (a failure probability), got {beta:g}")
    return beta


def cost_order(costs: np.ndarray) -> np.ndarray:
    """Agents from cheapest to dearest, ties by index (a stable sort)."""
    return np.argsort(costs, kind="stable")


@dataclass(frozen=True)
class SurveyOutcome:
    """What a surveyor's mechanism decided: who is bought (``bought``), at which ``epsilon`` (0 if
    nobody), the payments (one per agent, 0 for the unbought) and the per-unit-of-eps ``price`` paid
    to each winner (``None`` if nobody is bought: there is no winner to pay).

    Examples
    --------
    >>> out = AccuracyAuction(alpha=0.3, beta=0.1, unbought_share=0.9).run(
    ...     [0.5, 0.1, 0.9, 0.3, 0.7]
    ... )
    >>> out.bought.tolist(), out.n_bought
    ([True, True, False, True, False], 3)
    >>> bool(out.price == 0.7)                         # the fourth-lowest cost: the Vickrey price
    True
    """

    mechanism: str
    bought: np.ndarray
    epsilon: float
    payments: np.ndarray
    price: float | None
    details: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """The number of agents."""
        return int(self.bought.size)

    @property
    def n_bought(self) -> int:
        """The number of agents whose reports were bought."""
        return int(self.bought.sum())

    @property
    def unbought(self) -> int:
        """The number of agents not bought."""
        return self.n - self.n_bought

    @property
    def total_payment(self) -> float:
        """The sum of the payments."""
        return float(self.payments.sum())

    @property
    def noise_scale(self) -> float | None:
        """The Laplace scale ``1/eps`` of the release (None when nobody is bought: no noise)."""
        return 1.0 / self.epsilon if self.n_bought else None

    def utilities(self, costs: ArrayLike) -> np.ndarray:
        """Each agent's payment minus her privacy cost ``c_i eps`` if bought (linear model)."""
        c = check_costs(costs)
        if c.size != self.n:
            raise ValidationError(
                "costs", f"must have one entry per agent ({self.n}), got {c.size}"
            )
        with np.errstate(over="ignore"):
            # an unbought agent's product is discarded; a bought one's is finite
            return self.payments - np.where(self.bought, c * self.epsilon, 0.0)

    def guaranteed_radius(self, beta: float) -> float:
        """The error radius met with probability ``>= 1 - beta`` whatever the unbought bits are."""
        if not self.n_bought:
            return self.n / 2
        return float(worst_case_radius(self.unbought, self.epsilon, _beta(beta)))

    def _bits(self, bits: ArrayLike) -> np.ndarray:
        b = finite_array("bits", bits, ndim=1, allow_bool=True)
        if b.size != self.n or not np.isin(b, (0.0, 1.0)).all():
            raise ValidationError("bits", f"must be {self.n} values in {{0, 1}}")
        return b

    def error_law(self, bits: ArrayLike) -> ErrorLaw:
        """The exact law of ``s_hat - s`` given every agent's bit: ``D = sum_{unbought} (1/2 -
        b_i)`` plus ``Lap(1/eps)``."""
        b = self._bits(bits)
        shift = float(np.sum(0.5 - b[~self.bought]))
        return ErrorLaw.point(shift, self.noise_scale)

    def error_law_given(self, probabilities_one: ArrayLike) -> ErrorLaw:
        """The exact law of the error when each agent's bit is an independent
        Bernoulli(``probabilities_one[i]``) (e.g. the population's posterior given the costs): only
        the unbought agents' enter."""
        q = finite_array("probabilities_one", probabilities_one, ndim=1)
        if q.size != self.n:
            raise ValidationError("probabilities_one", f"must have one entry per agent ({self.n})")
        return ErrorLaw.from_unbought(q[~self.bought], self.noise_scale)

    def release(self, bits: ArrayLike, rng: RNGLike = None) -> float:
        """One draw of the estimate ``s_hat`` (eps-DP in each bought agent's bit)."""
        b = self._bits(bits)
        value = float(b[self.bought].sum()) + self.unbought / 2
        if self.n_bought:
            value += float(as_generator(rng).laplace(0.0, 1.0 / self.epsilon))
        return value


@dataclass(frozen=True)
class AccuracyAuction:
    """Accuracy goal with least payment: a Vickrey ``(m+1)``-th price procurement of ``m`` units at
    a fixed eps.

    Plan (before any report, from ``n``, ``alpha``, ``beta`` and ``unbought_share``): leave
    ``u = max(1, floor(2 * unbought_share * alpha * n))`` agents unbought (at most ``n``), so that
    their worst-case error ``u/2`` uses that share of the radius ``alpha n``, and buy ``m = n - u``
    agents at the least ``eps`` with ``Pr[|s_hat - s| > alpha n] <= beta`` for *every* bit vector
    (exact, from the closed form :func:`~dpgames.markets.error_law.worst_case_radius`).  Run: buy
    the ``m`` cheapest reports, pay each ``eps * c_(m+1)``: the largest report at which she would
    still be among the ``m`` cheapest.  A monotone allocation with threshold payments: truthful and
    individually rational (Myerson; the Vickrey multi-unit auction of Ghosh & Roth's abstract).

    Parameters
    ----------
    alpha : float
        Accuracy as a fraction of ``n``, in ``(0, 1)``.
    beta : float
        Failure probability in ``(0, 1/2]``.
    unbought_share : float
        In ``(0, 1)``: the share of the radius spent on the unbought agents (1/2: Dwork & Roth's
        even split).

    Examples
    --------
    >>> mech = AccuracyAuction(alpha=0.1, beta=0.05)
    >>> m, eps = mech.plan(1000)
    >>> m, round(eps, 4)
    (900, 0.0462)
    """

    alpha: float
    beta: float = 0.05
    unbought_share: float = 0.5
    name: str = "accuracy auction (Vickrey)"

    def __post_init__(self):
        object.__setattr__(self, "alpha", probability("alpha", self.alpha))
        object.__setattr__(self, "beta", _beta(self.beta))
        object.__setattr__(
            self, "unbought_share", probability("unbought_share", self.unbought_share)
        )

    def plan(self, n: int) -> tuple[int, float]:
        """``(m, eps)``: units bought and their privacy level, a function of ``n`` only (never of
        the reports).

        Raises
        ------
        ValidationError
            ``alpha n <= 1/2``: even one unbought agent may err by 1/2 >= alpha n (``alpha`` is
            named), so the Vickrey price (the ``(m+1)``-th cost) would not exist.
        """
        n = positive_int("n", n)
        radius = self.alpha * n
        u = min(n, max(1, math.floor(2 * self.unbought_share * radius)))
        if u / 2 >= radius:
            raise ValidationError(
                "alpha",
                f"too small for n = {n}: alpha n = {radius:g} must exceed 1/2 so "
                "that one agent may stay unbought (the Vickrey price is her cost)",
            )
        if u == n:
            return 0, 0.0
        return n - u, float(least_epsilon(n, np.array(float(u)), radius, self.beta))

    def run(self, costs: ArrayLike) -> SurveyOutcome:
        """Buy the ``m`` cheapest reported costs at ``eps``, each paid ``eps * c_(m+1)``.

        Raises
        ------
        ValidationError
            Negative, NaN or infinite costs (``costs``), or ``alpha`` too small for ``n``.
        """
        c = check_costs(costs)
        n = c.size
        m, eps = self.plan(n)
        bought = np.zeros(n, dtype=bool)
        if m == 0:
            return SurveyOutcome(self.name, bought, 0.0, np.zeros(n), None, {"m": 0})
        order = cost_order(c)
        bought[order[:m]] = True
        price = float(c[order[m]])
        if not math.isfinite(eps * price):
            raise ValidationError(
                "costs",
                f"too large: the payment eps * c_(m+1) = {eps:g} * {price:g} exceeds "
                "the float range",
            )
        payments = np.where(bought, eps * price, 0.0)
        return SurveyOutcome(
            self.name,
            bought,
            eps,
            payments,
            price,
            {"m": m, "alpha": self.alpha, "beta": self.beta},
        )


@dataclass(frozen=True)
class FairQuery:
    """Budget ``B``, best accuracy: dpgames' proportional-share variant of FairQuery at a fixed
    ``eps``.

    Sort the reports ``c_(1) <= ... <= c_(n)``; buy the ``k`` cheapest, ``k`` the largest with
    ``k eps c_(k) <= B`` (0 if none); pay each ``min(B/k, eps c_(k+1))`` (``c_(n+1) = inf``).

    *Why truthful.*  Lowering a report lowers every order statistic, so ``k`` can only grow and the
    agent's rank only fall: the rule is monotone.  Her threshold, with the others' sorted costs
    ``d``, is ``max_j min(B/(j eps), d_(j))`` over ``j`` with ``j eps d_(j-1) <= B``; for ``j > k``
    that condition fails (it would contradict the maximality of ``k``) and for ``j < k`` the term is
    at most ``d_(k-1) <= min(B/(k eps), c_(k+1))``, the ``j = k`` term.  So the payment is ``eps``
    times her threshold: truthful and individually rational, and the total is at most ``k * B/k =
    B``.

    Parameters
    ----------
    budget : float
        ``B > 0``.
    epsilon : float
        The privacy level bought from each seller, ``> 0``, fixed before any report.

    Examples
    --------
    >>> out = FairQuery(budget=1.0, epsilon=1.0).run([0.1, 0.2, 0.3, 0.9])
    >>> out.n_bought, round(out.price, 6), round(out.total_payment, 6)   # 3 * 0.3 <= 1 < 4 * 0.9
    (3, 0.333333, 1.0)
    """

    budget: float
    epsilon: float
    name: str = "FairQuery (proportional share)"

    def __post_init__(self):
        object.__setattr__(self, "budget", positive("budget", self.budget))
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))

    def affordable(self, j: np.ndarray, value: np.ndarray | float) -> np.ndarray:
        """``eps value <= B / j``: can ``j`` sellers be paid ``value`` per unit?  One expression,
        shared with the audit so both round alike, and written so that in floating point too every
        winner's payment ``min(B/k, eps c_(k+1)) >= eps c_(k) >= eps c_i``: individual rationality
        holds exactly."""
        with np.errstate(over="ignore"):  # eps * value = inf is simply not affordable
            return self.epsilon * value <= self.budget / j

    def run(self, costs: ArrayLike) -> SurveyOutcome:
        """Buy the ``k`` cheapest affordable reports at ``eps``, each paid ``min(B/k, eps
        c_(k+1))``.

        Raises
        ------
        ValidationError
            Negative, NaN or infinite costs (``costs``).
        """
        c = check_costs(costs)
        n = c.size
        order = cost_order(c)
        sorted_c = c[order]
        # a prefix: j eps c_(j) is increasing
        k = int(self.affordable(np.arange(1, n + 1), sorted_c).sum())
        bought = np.zeros(n, dtype=bool)
        if k == 0:
            return SurveyOutcome(
                self.name, bought, 0.0, np.zeros(n), None, {"k": 0, "budget": self.budget}
            )
        bought[order[:k]] = True
        next_cost = sorted_c[k] if k < n else math.inf
        pay = min(self.budget / k, self.epsilon * next_cost)
        payments = np.where(bought, pay, 0.0)
        return SurveyOutcome(
            self.name,
            bought,
            self.epsilon,
            payments,
            pay / self.epsilon,
            {"k": k, "budget": self.budget},
        )


@dataclass(frozen=True)
class EnvyFreeBenchmark:
    """The optimal fixed-price mechanism for one goal, from the true costs: it buys the ``sellers``
    cheapest at ``epsilon``, paying each ``price * epsilon`` (``price = c_(sellers)``: every cheaper
    agent sells, so nobody envies), with worst-case error ``radius`` at confidence ``1 - beta`` and
    total ``payment``.

    Examples
    --------
    >>> ef = envy_free_budget([0.1, 0.2, 0.3, 0.9], budget=1.0, beta=0.1)
    >>> (
    ...     ef.sellers,
    ...     round(ef.price, 6),
    ...     round(ef.payment, 6),
    ... )  # 2 sellers at eps 2.5 beat 3 at eps 1.11
    (2, 0.2, 1.0)
    """

    sellers: int
    epsilon: float
    price: float
    payment: float
    radius: float


def envy_free_accuracy(costs: ArrayLike, alpha: float, beta: float = 0.05) -> EnvyFreeBenchmark:
    """The cheapest fixed-price mechanism that is ``alpha n``-accurate with probability ``1 - beta``
    for every bit vector.

    With ``m`` sellers it must post a price ``>= c_(m)`` and use ``eps >= eps(n - m)`` (the least
    eps for ``u = n - m`` unbought agents), so its least payment is ``m * eps(n - m) * c_(m)``; the
    minimum over every feasible ``m`` (``(n - m)/2 < alpha n``; ``m = 0`` when ``n/2 <= alpha n``)
    is exact.

    Parameters
    ----------
    costs : array_like
        True costs, finite and ``>= 0``.
    alpha : float
        In ``(0, 1)``.
    beta : float
        In ``(0, 1/2]``.

    Returns
    -------
    EnvyFreeBenchmark

    Raises
    ------
    ValidationError
        Bad ``costs``, ``alpha`` or ``beta``.
    """
    c = np.sort(check_costs(costs))
    alpha, beta = probability("alpha", alpha), _beta(beta)
    n = c.size
    radius = alpha * n
    if n / 2 <= radius:
        return EnvyFreeBenchmark(0, 0.0, 0.0, 0.0, n / 2)
    m = np.arange(1, n + 1)
    u = (n - m).astype(float)
    ok = u / 2 < radius
    m, u = m[ok], u[ok]
    eps = least_epsilon(n, u, radius, beta)
    pay = m * eps * c[m - 1]
    best = int(np.argmin(pay))
    return EnvyFreeBenchmark(
        int(m[best]),
        float(eps[best]),
        float(c[m[best] - 1]),
        float(pay[best]),
        float(worst_case_radius(u[best], eps[best], beta)),
    )


def envy_free_budget(costs: ArrayLike, budget: float, beta: float = 0.05) -> EnvyFreeBenchmark:
    """The most accurate fixed-price mechanism paying at most ``budget``.

    With ``m`` sellers at price ``c_(m)`` the largest affordable eps is ``B / (m c_(m))`` (any
    eps if ``c_(m) = 0``: the error is then ``u/2`` plus an arbitrarily small noise, reported
    with ``eps = inf``); its worst-case radius at ``1 - beta`` is
    :func:`~dpgames.markets.error_law.worst_case_radius`, and the minimum over ``m = 0 .. n``
    (``m = 0``: no noise, radius ``n/2``) is exact.

    Parameters
    ----------
    costs : array_like
        True costs, finite and ``>= 0``.
    budget : float
        ``B > 0``.
    beta : float
        In ``(0, 1/2]``.

    Returns
    -------
    EnvyFreeBenchmark

    Raises
    ------
    ValidationError
        Bad ``costs``, ``budget`` or ``beta``, or a best benchmark whose eps exceeds the float range
        (a positive cost so small that ``B / (m c)`` overflows).
    """
    c = np.sort(check_costs(costs))
    budget, beta = positive("budget", budget), _beta(beta)
    n = c.size
    m = np.arange(1, n + 1)
    with np.errstate(divide="ignore", over="ignore"):
        eps = np.where(c > 0, budget / (m * np.where(c > 0, c, 1.0)), np.inf)
    # inf where eps underflows: never the best
    radius = radius_unchecked((n - m).astype(float), eps, beta)
    best = int(np.argmin(radius))
    if radius[best] >= n / 2:
        return EnvyFreeBenchmark(0, 0.0, 0.0, 0.0, n / 2)
    mb = int(m[best])
    if c[mb - 1] > 0 and not np.isfinite(eps[best]):
        raise ValidationError(
            "costs",
            f"the best benchmark pays {mb} sellers of cost {c[mb - 1]:g}: its eps = "
            f"B / (m c) exceeds the float range",
        )
    pay = 0.0 if not np.isfinite(eps[best]) else float(mb * eps[best] * c[mb - 1])
    return EnvyFreeBenchmark(mb, float(eps[best]), float(c[mb - 1]), pay, float(radius[best]))
