"""A take-it-or-leave-it surveyor with doubling prices (after Ligett & Roth, WINE 2012,
arXiv:1202.4741).

Ligett & Roth (abstract): "our mechanism has the ability to randomly approach individuals from a
population and offer them a take-it-or-leave-it offer.  This is intended to model the abilities of a
surveyor who may stand on a street corner and approach passers-by."  The paper's full text (its price
schedule, stopping rule and bounds) could not be retrieved here, so this module implements
**dpgames' doubling variant** in Dwork & Roth's form, names it as such, and states and tests its own
exact figures; it makes no claim about the paper's constants.

The variant.  Round ``j = 0, 1, ...`` offers the price ``p_j = p_0 2^j`` (per unit of eps) to ``m``
fresh people drawn at random from the population (i.i.d. from a
:class:`~dpgames.markets.agents.PopulationLaw`); each accepts iff her cost ``c <= p_j`` and is paid
``p_j eps``.  The round *succeeds* when at most ``floor(alpha m)`` refuse; then the surveyor
releases ``K + R/2 + Lap(1/eps)`` for the count of ones among the ``m`` approached (``K`` ones among
the acceptors, ``R`` refusers guessed at 1/2): eps-DP in each acceptor's bit.  Everything is exact:

* acceptance ``F(p) = (1 - mu) F_0(p) + mu F_1(p)``; success at round ``j`` has probability
  ``s_j = Pr[Bin(m, 1 - F(p_j)) <= floor(alpha m)]``, so the stopping round's law is
  ``Pr[stop at j] = s_j prod_{i<j} (1 - s_i)`` and ``E[payment] = sum_j Pr[reach j] m F(p_j) p_j
  eps``;
* the error against ``m mu`` (``mu = Pr[b = 1]``) is a finite mixture of shifted Laplace laws: given
  the stopping round and ``R = r``, ``K ~ Bin(m - r, mu_j)`` with ``mu_j = Pr[b = 1 | c <= p_j]``
  (costs correlated with the bit bias the acceptors), hence
  :class:`~dpgames.markets.error_law.ErrorLaw`.

:meth:`TakeItOrLeaveIt.simulate` runs the survey once from an ``rng``; the tests check the exact
figures against it with confidence intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpgames.markets.agents import PopulationLaw, privacy_population
from dpgames.markets.error_law import ErrorLaw
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    memory,
    positive,
    positive_int,
    probability,
)

__all__ = ["SurveyLaw", "TakeItOrLeaveIt"]

#: Payments stay below 2^MAX_LOG2 (the float range ends at 2^1024; the margin keeps sums of them
#: finite).
MAX_LOG2 = 1023.0


@dataclass(frozen=True)
class SurveyLaw:
    """The exact law of one survey: ``prices[j]``, ``stop[j] = Pr[stop at round j]``, ``never`` (no
    round succeeds within ``max_rounds``), ``expected_payment``, ``error`` (the error law of the
    released count against ``m mu``, conditional on success) and ``mean_price_paid`` (``E[p_stop]``
    given success). When no round can succeed (every ``stop[j]`` is 0 in floats: the offers stay
    below almost every cost), there is no success to condition on: ``error`` and ``mean_price_paid``
    are ``None``.

    Examples
    --------
    >>> from dpgames.markets.agents import PopulationLaw, UniformCosts
    >>> law = TakeItOrLeaveIt(50, 0.2, 1.0, 0.3).law(PopulationLaw(0.5, UniformCosts(0, 1)))
    >>> law.prices[:3].tolist(), bool(law.error.probability_within(10) > 0.9)
    ([0.3, 0.6, 1.2], True)
    """

    prices: np.ndarray
    stop: np.ndarray
    never: float
    expected_payment: float
    error: ErrorLaw | None
    mean_price_paid: float | None


@dataclass(frozen=True)
class TakeItOrLeaveIt:
    """dpgames' doubling take-it-or-leave-it surveyor (see the module docstring).

    Parameters
    ----------
    sample_size : int
        ``m``: people approached per round (``>= 1``).
    alpha : float
        In ``(0, 1)``: at most ``floor(alpha m)`` refusals end the survey (their guess errs by at
        most ``alpha m / 2``).
    epsilon : float
        Privacy level of each acceptor's bit in the release, ``> 0``.
    start_price : float
        ``p_0 > 0``, the first price per unit of eps; each round doubles it.
    max_rounds : int
        Rounds before giving up (``>= 1``).

    Examples
    --------
    >>> from dpgames.markets.agents import PopulationLaw, UniformCosts
    >>> survey = TakeItOrLeaveIt(sample_size=100, alpha=0.2, epsilon=0.5, start_price=0.1)
    >>> law = survey.law(PopulationLaw(0.5, UniformCosts(0, 1)))
    >>> law.prices[:4].tolist(), round(float(law.stop.sum() + law.never), 12)
    ([0.1, 0.2, 0.4, 0.8], 1.0)
    """

    sample_size: int
    alpha: float
    epsilon: float
    start_price: float
    max_rounds: int = 40

    def __post_init__(self):
        object.__setattr__(
            self, "sample_size", positive_int("sample_size", self.sample_size, high=20_000)
        )
        object.__setattr__(self, "alpha", probability("alpha", self.alpha))
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))
        object.__setattr__(self, "start_price", positive("start_price", self.start_price))
        object.__setattr__(
            self, "max_rounds", positive_int("max_rounds", self.max_rounds, high=1000)
        )
        # Every payment is at most m eps p_0 (2^R - 1): refused up front when that leaves the float
        # range.
        last = math.log2(self.start_price) + self.max_rounds - 1
        if last >= MAX_LOG2:
            raise ValidationError(
                "start_price",
                f"too large for max_rounds = {self.max_rounds}: the last offer "
                f"p_0 2^{self.max_rounds - 1} exceeds the float range",
            )
        if last + 1 + math.log2(self.sample_size) + math.log2(self.epsilon) >= MAX_LOG2:
            raise ValidationError(
                "epsilon",
                f"too large: the survey's largest payment m eps p_0 (2^R - 1) (m = "
                f"{self.sample_size}, p_0 = {self.start_price:g}, R = {self.max_rounds} "
                f"rounds) exceeds the float range",
            )
        if not math.isfinite(1.0 / self.epsilon):
            raise ValidationError(
                "epsilon",
                f"too small: the Laplace noise's scale 1/eps = 1/{self.epsilon:g} "
                f"exceeds the float range",
            )

    @property
    def max_refusals(self) -> int:
        """The refusals a round tolerates: ``floor(alpha m)``."""
        return math.floor(self.alpha * self.sample_size)

    def prices(self) -> np.ndarray:
        """The posted prices of the rounds: ``start_price * 2^j``, ``j = 0 .. max_rounds - 1``."""
        return self.start_price * 2.0 ** np.arange(self.max_rounds)

    def _accept(self, law: PopulationLaw, prices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu = law.bit_rate
        f0, f1 = law.law_given(0).cdf(prices), law.law_given(1).cdf(prices)
        accept = (1 - mu) * f0 + mu * f1
        with np.errstate(invalid="ignore", divide="ignore"):
            mu_acc = np.where(accept > 0, mu * f1 / np.where(accept > 0, accept, 1.0), mu)
        return accept, mu_acc

    def law(self, population: PopulationLaw, tail: float = 1e-15) -> SurveyLaw:
        """The exact law of the survey on ``population``; rounds reached with probability below
        ``tail`` are dropped from the error law (their mass is reported in ``never`` when they are
        the last).

        Raises
        ------
        ValidationError
            ``population`` not a PopulationLaw, ``tail`` not in ``[0, 1)``, or an error law above
            the memory limit.
        """
        if not isinstance(population, PopulationLaw):
            raise ValidationError("population", f"must be a PopulationLaw, got {population!r}")
        tail = probability("tail", tail, allow_zero=True)
        m, rmax = self.sample_size, self.max_refusals
        memory("sample_size", (rmax + 1) * (m + 1) * 4, what="the error law's atoms")
        prices = self.prices()
        accept, mu_acc = self._accept(population, prices)
        success = stats.binom.cdf(rmax, m, 1 - accept)
        reach = np.concatenate([[1.0], np.cumprod(1 - success)[:-1]])
        stop = reach * success
        never = float(np.prod(1 - success))
        payment = float(np.sum(reach * m * accept * prices * self.epsilon))
        shifts, weights = [], []
        mu = population.bit_rate
        r = np.arange(rmax + 1)
        for j in np.nonzero(stop > tail)[0]:
            pr = stats.binom.pmf(r, m, 1 - accept[j])
            pr = pr / pr.sum()
            for rr, w in zip(r, pr):
                if w * stop[j] <= tail:
                    continue
                k = np.arange(m - rr + 1)
                pk = stats.binom.pmf(k, m - rr, mu_acc[j])
                keep = pk > 0
                shifts.append(k[keep] + rr / 2 - m * mu)
                weights.append(stop[j] * w * pk[keep])
        error = None
        if shifts:
            w = np.concatenate(weights)
            error = ErrorLaw(np.concatenate(shifts), w / w.sum(), 1.0 / self.epsilon)
        paid = float(stop @ prices / stop.sum()) if stop.sum() > 0 else None
        return SurveyLaw(prices, stop, never, payment, error, paid)

    def simulate(self, population: PopulationLaw, rng: RNGLike = None) -> dict:
        """Run the survey once (fresh random people every round).  Returns ``round``, ``price``,
        ``payment`` (all acceptors of every round), ``released`` (the noisy count of the successful
        round) and ``error`` (released minus ``m mu``); ``round``, ``price``, ``released`` and
        ``error`` are None when no round succeeded within ``max_rounds``."""
        rng = as_generator(rng)
        m, paid = self.sample_size, 0.0
        for j, price in enumerate(self.prices()):
            people = privacy_population(m, population, rng=rng)
            accepted = people.costs <= price
            paid += float(accepted.sum()) * price * self.epsilon
            refusals = m - int(accepted.sum())
            if refusals <= self.max_refusals:
                released = (
                    float(people.bits[accepted].sum())
                    + refusals / 2
                    + rng.laplace(0, 1 / self.epsilon)
                )
                return {
                    "round": j,
                    "price": float(price),
                    "payment": paid,
                    "released": released,
                    "error": released - m * population.bit_rate,
                }
        return {"round": None, "price": None, "payment": paid, "released": None, "error": None}
