"""The sparse vector technique: AboveThreshold and Sparse (Dwork & Roth, Alg. 1 and 2).

Queries ``f_1, f_2, ...`` of sensitivity ``Delta`` arrive one at a time; the mechanism answers
"above" or "below" a public threshold ``T`` and stops after ``c`` answers "above".

* Sparse with ``delta = 0``: ``sigma = 2 c Delta / eps``; with ``delta > 0``:
  ``sigma = sqrt(32 c ln(1/delta)) Delta / eps``.  The noisy threshold is ``T + Lap(sigma)``,
  redrawn after every "above"; each query gets ``Lap(2 sigma)``; answer "above" when ``f_i + nu_i
  >=`` the noisy threshold.  (eps, delta)-DP however many queries are asked (Dwork & Roth Thm 3.25).
  With ``delta > 0`` the proof runs ``c`` AboveThreshold instances of ``eps' = eps / sqrt(8 c
  ln(1/delta))`` each and composes them by advanced composition (Thm 3.20), whose total ``eps/2 + c
  eps' (e^eps' - 1)`` is at most eps only while ``c eps' (e^eps' - 1) <= eps/2`` (about ``eps <= 4
  ln(1/delta)``).  Beyond that the guarantee states the accountant's best bound for the ``c``
  instances instead of eps.
* AboveThreshold is the case ``c = 1``, ``delta = 0``: threshold noise ``Lap(2 Delta / eps)``, query
  noise ``Lap(4 Delta / eps)``; eps-DP (Thm 3.23); (alpha, beta)-accurate for ``k`` queries with
  ``alpha = 8 Delta (ln k + ln(2/beta)) / eps`` (Thm 3.24).

The stop is explicit: :meth:`SparseVector.run` returns a :class:`SparseVectorResult` saying which
queries were "above", how many were answered and whether the mechanism halted; an online
:class:`SparseVectorSession` raises :class:`SparseVectorHalted` if asked after it halted.  Nothing
returns a silent index.  :meth:`AboveThreshold.output_distribution` gives the exact law of the
halting query (numerical integration over the threshold noise) for exact audits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from dpgames.privacy.accounting import Accountant
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.laplace import laplace_log_cdf
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    positive,
    positive_int,
    probability,
)


class SparseVectorHalted(RuntimeError):
    """A query was asked after the mechanism stopped (its budget of positives is spent).

    Examples
    --------
    >>> session = AboveThreshold(1.0, 0.5).start(rng=2)
    >>> session.ask(0.0), session.ask(5.0)
    (False, True)
    >>> try:
    ...     session.ask(0.0)
    ... except SparseVectorHalted:
    ...     print("halted")
    halted
    """


@dataclass(frozen=True)
class SparseVectorResult:
    """The outcome of a batch run: indices answered "above" (in order), how many queries were
    answered (the rest were not looked at), and whether it halted after ``c`` positives (``False``:
    the queries ran out first).

    Examples
    --------
    >>> result = SparseVector(1.0, 0.5, max_positives=2).run([0.0, 1.0, 0.0, 3.0, 0.0, 2.0], rng=0)
    >>> result.above.tolist(), result.answered, result.halted
    ([0, 4], 5, True)
    """

    above: np.ndarray
    answered: int
    halted: bool


class SparseVector:
    """Dwork & Roth's Sparse (Alg. 2): at most ``max_positives`` "above" answers, then a stop.

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    threshold : float
        The public threshold ``T``.
    max_positives : int, default 1
        ``c``.
    delta : float, default 0
        0 (pure DP, Thm 3.23) or in ``(0, 1)`` (Thm 3.25).
    sensitivity : float, default 1

    Raises
    ------
    ValidationError
        On bad arguments or a noise scale beyond the float range.

    Examples
    --------
    >>> sv = SparseVector(1.0, 0.5, max_positives=2)
    >>> sv.threshold_scale, sv.query_scale
    (4.0, 8.0)
    >>> print(sv.guarantee)
    1-DP (replace one individual: one individual's change moves every query answer by at most 1)
    """

    def __init__(
        self,
        epsilon: float,
        threshold: float,
        max_positives: int = 1,
        delta: float = 0.0,
        sensitivity: float = 1.0,
    ):
        self.epsilon = positive("epsilon", epsilon)
        self.threshold = float(finite_array("threshold", threshold, ndim=0))
        # exact as a float
        self.max_positives = positive_int("max_positives", max_positives, high=2**53)
        self.delta = (
            0.0 if isinstance(delta, (int, float)) and delta == 0 else probability("delta", delta)
        )
        self.sensitivity = positive("sensitivity", sensitivity)
        if not math.isfinite(self.query_scale):
            raise ValidationError(
                "epsilon",
                f"{self.epsilon:g} with sensitivity {self.sensitivity:g} gives a noise "
                "scale beyond the float range",
            )

    @property
    def threshold_scale(self) -> float:
        """``sigma``: the Laplace scale of the threshold noise (the query noise has twice it)."""
        c = self.max_positives
        base = 2 * c if self.delta == 0 else math.sqrt(-32 * c * math.log(self.delta))
        return base * self.sensitivity / self.epsilon

    @property
    def query_scale(self) -> float:
        """The Laplace scale of each query's noise: ``2 sigma``."""
        return 2 * self.threshold_scale

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``(eps, delta)``-DP (Dwork & Roth Thm 3.23 / 3.25) where the theorem's proof reaches; for
        ``delta > 0`` and eps beyond it, the accountant's best bound on the ``c`` AboveThreshold
        instances the proof composes (see the module docstring)."""
        relation = Neighbouring.REPLACE_ONE.described(
            f"one individual's change moves every query answer by at most {self.sensitivity:g}"
        )
        eps = self.epsilon
        if self.delta > 0:
            c = self.max_positives
            # each instance's eps'
            per_run = self.epsilon / math.sqrt(-8 * c * math.log(self.delta))
            ledger = Accountant().spend(
                "AboveThreshold instance of Sparse", PrivacyGuarantee(per_run), c
            )
            if ledger.advanced_total(self.delta).epsilon > self.epsilon * (1 + 1e-12):
                # Thm 3.25's proof fails
                eps = ledger.best_total(self.delta).epsilon
        return PrivacyGuarantee(eps, self.delta, relation)

    def accuracy(self, n_queries: int, beta: float) -> float:
        """``alpha`` of Dwork & Roth Thm 3.24 / 3.26: with probability ``>= 1 - beta`` every "above"
        has ``f_i >= T - alpha`` and every "below" has ``f_i <= T + alpha``.

        Parameters
        ----------
        n_queries : int
            ``k >= 1``.
        beta : float
            In ``(0, 1)``.

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On bad arguments or a bound beyond the float range.
        """
        k, beta, c = (
            positive_int("n_queries", n_queries),
            probability("beta", beta),
            self.max_positives,
        )
        log_term = math.log(k) + math.log(2 * c) - math.log(beta)
        factor = 8 * c if self.delta == 0 else math.sqrt(-512 * c * math.log(self.delta))
        return finite_result(
            "accuracy",
            factor * log_term * self.sensitivity / self.epsilon,
            f"epsilon = {self.epsilon:g}, sensitivity = {self.sensitivity:g}",
        )

    def run(self, answers: ArrayLike, rng: RNGLike = None) -> SparseVectorResult:
        """Process the (non-adaptive) query answers in order; vectorised, O(number answered).

        Parameters
        ----------
        answers : array_like
            1-d, finite: the queries' true answers ``f_i(x)``.
        rng : Generator, int or None

        Returns
        -------
        SparseVectorResult

        Raises
        ------
        ValidationError
            On bad answers or ``rng``.
        """
        a = finite_array("answers", answers, ndim=1)
        gen = as_generator(rng)
        noisy = a + gen.laplace(0.0, self.query_scale, size=a.size)
        above: list[int] = []
        position = 0
        while len(above) < self.max_positives:
            level = self.threshold + gen.laplace(0.0, self.threshold_scale)
            hit = first_above(lambda lo, hi: noisy[lo:hi], a.size, position, level)
            if hit is None:
                return SparseVectorResult(np.array(above, dtype=np.int64), a.size, False)
            above.append(hit)
            position = hit + 1
        return SparseVectorResult(np.array(above, dtype=np.int64), position, True)

    def start(self, rng: RNGLike = None) -> SparseVectorSession:
        """An online session for adaptively chosen queries.

        Parameters
        ----------
        rng : Generator, int or None

        Returns
        -------
        SparseVectorSession

        Raises
        ------
        ValidationError
            On a bad ``rng``.
        """
        return SparseVectorSession(self, as_generator(rng))


def first_above(
    block: Callable[[int, int], np.ndarray], size: int, start: int, level: float
) -> int | None:
    """The first index ``i >= start`` (below ``size``) whose noisy value is ``>= level``.  Scans
    chunks of doubling size, so the cost is proportional to the distance to the hit (and answers can
    be computed lazily, e.g. against a state that changes after each hit).

    Parameters
    ----------
    block : callable
        ``block(lo, hi)`` returns the noisy values of indices ``lo .. hi-1``.
    size : int
    start : int
    level : float

    Returns
    -------
    int or None
        ``None`` if no index reaches the level.
    """
    chunk = 1024
    while start < size:
        hits = np.flatnonzero(block(start, min(start + chunk, size)) >= level)
        if hits.size:
            return start + int(hits[0])
        start += chunk
        chunk *= 2
    return None


class SparseVectorSession:
    """Sparse, one query at a time: :meth:`ask` returns ``True`` for "above"; raises
    :class:`SparseVectorHalted` once ``max_positives`` answers were "above".  Made by
    :meth:`SparseVector.start`.

    Examples
    --------
    >>> session = SparseVector(1.0, 0.5).start(rng=2)
    >>> [session.ask(a) for a in (0.0, 5.0)], session.halted, session.answered
    ([False, True], True, 2)
    """

    def __init__(self, mechanism: SparseVector, gen: np.random.Generator):
        self.mechanism, self._gen = mechanism, gen
        self.answered, self.positives = 0, 0
        self._level = self._new_level()

    def _new_level(self) -> float:
        return self.mechanism.threshold + self._gen.laplace(0.0, self.mechanism.threshold_scale)

    @property
    def halted(self) -> bool:
        """Whether ``max_positives`` answers were "above" (no more queries are taken)."""
        return self.positives >= self.mechanism.max_positives

    def ask(self, answer: float) -> bool:
        """Answer one query: ``True`` for "above" the noisy threshold.

        Parameters
        ----------
        answer : float
            The query's true answer (finite).

        Returns
        -------
        bool

        Raises
        ------
        SparseVectorHalted
            If the session halted already.
        ValidationError
            On a non-finite answer.
        """
        if self.halted:
            raise SparseVectorHalted(
                f"the sparse vector halted after {self.positives} positives "
                f"({self.answered} queries answered); start a new one with a new budget"
            )
        value = float(finite_array("answer", answer, ndim=0))
        self.answered += 1
        if value + self._gen.laplace(0.0, self.mechanism.query_scale) >= self._level:
            self.positives += 1
            self._level = self._new_level()
            return True
        return False


class AboveThreshold(SparseVector):
    """Dwork & Roth Alg. 1: eps-DP (Thm 3.23); halts at the first query answered "above".

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    threshold : float
    sensitivity : float, default 1

    Raises
    ------
    ValidationError
        On bad arguments.

    Examples
    --------
    >>> at = AboveThreshold(1.0, 0.5)
    >>> at.run([0.0, 3.0, 0.0], rng=1).above.tolist()
    [1]
    >>> at.output_distribution([0.0, 3.0]).probabilities.round(
    ...     4
    ... ).tolist()  # halts at 0, at 1, never
    [0.4585, 0.34, 0.2015]
    """

    def __init__(self, epsilon: float, threshold: float, sensitivity: float = 1.0):
        super().__init__(epsilon, threshold, 1, 0.0, sensitivity)

    def output_distribution(self, answers: ArrayLike) -> FiniteDistribution:
        """The law of the halting index over outcomes ``0 .. k-1`` and ``-1`` (never halted):
        ``Pr[i] = int g(r) prod_{j<i} F(T + r - f_j) (1 - F(T + r - f_i)) dr`` with ``g`` the
        threshold noise density and ``F`` the query noise CDF, by numerical integration (error about
        1e-12).

        Parameters
        ----------
        answers : array_like
            1-d, finite.

        Returns
        -------
        FiniteDistribution
            Labelled ``0 .. k-1, -1``.

        Raises
        ------
        ValidationError
            On bad answers.
        """
        a = finite_array("answers", answers, ndim=1)
        b_t, b_q, t = self.threshold_scale, self.query_scale, self.threshold

        def integrand(r: float) -> np.ndarray:
            z = (t + r - a) / b_q
            log_below = laplace_log_cdf(z)  # query j answered "below"
            log_above = laplace_log_cdf(-z)  # query j answered "above"
            before = np.concatenate([[0.0], np.cumsum(log_below)])
            log_g = -abs(r) / b_t - math.log(2 * b_t)
            return np.exp(log_g + np.append(before[:-1] + log_above, before[-1]))

        reach = 60 * max(b_t, b_q)
        edges = np.unique(np.concatenate([[-reach], np.clip(a - t, -reach, reach), [0.0, reach]]))
        total = sum(
            integrate.quad_vec(integrand, lo, hi, epsabs=1e-14, epsrel=1e-12)[0]
            for lo, hi in zip(edges[:-1], edges[1:])
        )
        return FiniteDistribution.from_probabilities(
            np.clip(total, 0.0, None), np.append(np.arange(a.size), -1)
        )
