"""Randomized response: Warner's (1965) two-coin survey procedure and k-ary randomized response.

Each respondent randomises her own answer, so the released answers are eps-DP in each respondent's
true answer whatever the others do (local DP; Dwork & Roth Sec. 3.2).

* Warner's procedure: flip a coin that lands heads with probability ``p_truth``; on heads answer
  truthfully; on tails flip a second coin (heads with probability ``p_yes``) and answer "yes" on
  heads, "no" on tails.  With fair coins, a true "yes" is reported "yes" with probability 3/4 and
  a true "no" with probability 1/4: ``eps = ln 3``.  In general ``Pr[yes | yes] = a = p_truth +
  (1 - p_truth) p_yes`` and ``Pr[yes | no] = c = (1 - p_truth) p_yes``, and ``eps = max(ln(a /
  c), ln((1 - c) / (1 - a)))``. Unbiased estimator of the true number of "yes" among ``N``:
  ``(n_yes - N c) / p_truth`` (fair coins: ``2 n_yes - N / 2``), variance ``(n a (1 - a) + (N -
  n) c (1 - c)) / p_truth^2``.
* k-ary randomized response: report the true value with probability ``e^eps / (e^eps + k - 1)``,
  each other value with probability ``1 / (e^eps + k - 1)``: eps-DP; unbiased count estimator
  ``(n_obs - N q) / (p - q)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    integer,
    memory,
    positive,
    positive_int,
    probability,
)

#: Largest number of respondents (float arithmetic on counts stays exact below 2^53).
MAX_RESPONDENTS = 2**53

_RELATION = Neighbouring.REPLACE_ONE.described(
    "one respondent's true answer changes (local DP: each report depends on one answer)"
)


class _ReportChannel:
    """A randomised-response channel: ``matrix[true, reported]`` probabilities over ``k`` values.

    Shared machinery: exact distributions, eps from the matrix, sampling, unbiased count
    estimation."""

    matrix: np.ndarray

    @property
    def k(self) -> int:
        """The number of values."""
        return self.matrix.shape[0]

    @property
    def epsilon(self) -> float:
        """The exact eps: the largest log-ratio of two rows' probabilities of one report."""
        with np.errstate(divide="ignore"):
            logm = np.log(self.matrix)
        return float(np.max(logm.max(axis=0) - logm.min(axis=0)))

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP (the channel's exact eps) under replace-one neighbours: one respondent's
        true answer changes (local DP: each report depends on one answer; Dwork & Roth Sec. 3.2).
        """
        return PrivacyGuarantee(self.epsilon, 0.0, _RELATION)

    def output_distribution(self, answer: int) -> FiniteDistribution:
        """The exact distribution of one respondent's report given her true answer.

        Parameters
        ----------
        answer : int
            ``0 .. k-1``.

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On an answer that is not an integer in range.
        """
        return FiniteDistribution.from_probabilities(self.matrix[self._value(answer)])

    def _value(self, answer: int) -> int:
        if (
            isinstance(answer, bool)
            or not isinstance(answer, (int, np.integer))
            or not 0 <= answer < self.k
        ):
            raise ValidationError(
                "answer", f"must be an integer in 0..{self.k - 1}, got {answer!r}"
            )
        return int(answer)

    def _answers(self, answers: ArrayLike) -> np.ndarray:
        a = np.asarray(answers)
        if a.dtype == bool:
            a = a.astype(np.int64)
        if not np.issubdtype(a.dtype, np.integer) or (
            a.size and (a.min() < 0 or a.max() >= self.k)
        ):
            raise ValidationError("answers", f"must be integers in 0..{self.k - 1}")
        return a

    def respond(self, answers: ArrayLike, rng: RNGLike = None) -> np.ndarray:
        """Every respondent's randomised report (vectorised: one uniform draw per respondent).

        Parameters
        ----------
        answers : array_like of int
            True answers in ``0 .. k-1`` (any shape).
        rng : Generator, int or None

        Returns
        -------
        numpy.ndarray of int64
            Same shape.

        Raises
        ------
        ValidationError
            On answers that are not integers in range, or a bad ``rng``.
        """
        a = self._answers(answers)
        cdf = np.cumsum(self.matrix, axis=1)
        u = as_generator(rng).random(a.shape)
        reports = (u[..., None] >= cdf[a][..., :-1]).sum(axis=-1)
        return reports.astype(np.int64)

    def estimate_counts(self, reports: ArrayLike) -> np.ndarray:
        """Unbiased estimates of how many respondents truly hold each value (``matrix^{-T}`` applied
        to the observed counts).

        Parameters
        ----------
        reports : array_like of int
            Reports in ``0 .. k-1``.

        Returns
        -------
        numpy.ndarray
            One estimate per value.

        Raises
        ------
        ValidationError
            On reports that are not integers in range.
        """
        r = self._answers(reports).ravel()
        observed = np.bincount(r, minlength=self.k).astype(float)
        return np.linalg.solve(self.matrix.T, observed)


class WarnerResponse(_ReportChannel):
    """Warner's two-coin randomized response for a yes (1) / no (0) question.

    eps-DP with ``eps`` from the coins (``ln 3`` for fair coins); exact distributions; the unbiased
    estimator ``(n_yes - N c) / p_truth`` of the number of true "yes" and its variance.

    Parameters
    ----------
    p_truth : float, default 0.5
        In ``(0, 1)``: the first coin's chance of heads (answer truthfully).
    p_yes : float, default 0.5
        In ``(0, 1)``: the second coin's chance of heads (answer "yes").

    Raises
    ------
    ValidationError
        On a probability outside ``(0, 1)``.

    Examples
    --------
    >>> rr = WarnerResponse()
    >>> round(rr.epsilon, 6), rr.p_yes_given_yes, rr.p_yes_given_no
    (1.098612, 0.75, 0.25)
    >>> rr.respond([1, 0, 1, 1], rng=0).tolist(), rr.estimate_yes(30, 100)
    ([1, 0, 0, 0], 10.0)
    """

    def __init__(self, p_truth: float = 0.5, p_yes: float = 0.5):
        self.p_truth = probability("p_truth", p_truth)
        self.p_yes = probability("p_yes", p_yes)
        a, c = self.p_truth + (1 - self.p_truth) * self.p_yes, (1 - self.p_truth) * self.p_yes
        # rows: true no, true yes; columns: report no, yes
        self.matrix = np.array([[1 - c, c], [1 - a, a]])

    @property
    def p_yes_given_yes(self) -> float:
        """``Pr[report yes | true yes] = p_truth + (1 - p_truth) p_yes``."""
        return float(self.matrix[1, 1])

    @property
    def p_yes_given_no(self) -> float:
        """``Pr[report yes | true no] = (1 - p_truth) p_yes``."""
        return float(self.matrix[0, 1])

    def estimate_yes(self, n_yes: ArrayLike, n: int) -> np.ndarray | float:
        """Unbiased estimate of the true number of "yes" from ``n_yes`` reported "yes" out of ``n``.

        Parameters
        ----------
        n_yes : array_like
            Counts in ``[0, n]``.
        n : int
            Respondents (at most :data:`MAX_RESPONDENTS`).

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        ValidationError
            On counts out of range, or an estimate beyond the float range (``p_truth`` near 1e-308).
        """
        n = positive_int("n", n, high=MAX_RESPONDENTS)
        counts = finite_array("n_yes", n_yes, low=0, high=n)
        with np.errstate(over="ignore"):
            estimate = (counts - n * self.p_yes_given_no) / self.p_truth
        finite_result("estimate_yes", estimate, f"p_truth = {self.p_truth:g}")
        return float(estimate) if estimate.ndim == 0 else estimate

    def estimator_variance(self, true_yes: int, n: int) -> float:
        """Exact variance of :meth:`estimate_yes` when ``true_yes`` of ``n`` respondents hold "yes".

        Parameters
        ----------
        true_yes : int
            ``0 .. n``.
        n : int

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On counts out of range, or a variance beyond the float range.
        """
        n = positive_int("n", n, high=MAX_RESPONDENTS)
        true_yes = integer("true_yes", true_yes, 0, n)
        a, c = self.p_yes_given_yes, self.p_yes_given_no
        variance = (
            (true_yes * a * (1 - a) + (n - true_yes) * c * (1 - c)) / self.p_truth / self.p_truth
        )
        return finite_result("estimator_variance", variance, f"p_truth = {self.p_truth:g}")

    def count_distribution(self, true_yes: int, n: int) -> FiniteDistribution:
        """The exact law of the number of "yes" reports (0..n): Binomial(true_yes, a) + Binomial(n -
        true_yes, c), by convolution.  Adjacent ``true_yes`` are neighbouring surveys.

        Parameters
        ----------
        true_yes : int
            ``0 .. n``.
        n : int

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On counts out of range, or a law too large for memory.
        """
        n = positive_int("n", n)
        memory("n", 4 * (n + 1), what=f"the law of {n:,} reports (convolution of two binomials)")
        true_yes = integer("true_yes", true_yes, 0, n)
        yes = stats.binom.pmf(np.arange(true_yes + 1), true_yes, self.p_yes_given_yes)
        no = stats.binom.pmf(np.arange(n - true_yes + 1), n - true_yes, self.p_yes_given_no)
        return FiniteDistribution.from_probabilities(np.convolve(yes, no))


class KaryResponse(_ReportChannel):
    """k-ary randomized response: eps-DP; keep the true value with probability ``e^eps/(e^eps + k -
    1)``, report each other value with probability ``1/(e^eps + k - 1)``.

    Parameters
    ----------
    k : int
        ``>= 2`` values.
    epsilon : float
        ``> 0``.

    Raises
    ------
    ValidationError
        On bad arguments or a ``k x k`` channel too large for memory.

    Examples
    --------
    >>> rr = KaryResponse(3, 1.0)
    >>> round(rr.p_keep, 6), rr.respond([0, 1, 2], rng=1).tolist()
    (0.576117, [0, 2, 0])
    >>> rr.estimate_counts([0, 0, 1, 2]).round(3).tolist()
    [3.164, 0.418, 0.418]
    """

    def __init__(self, k: int, epsilon: float):
        k = integer("k", k, low=2)
        memory("k", k * k, what=f"a {k:,} x {k:,} channel matrix")
        eps = positive("epsilon", epsilon)
        denominator = math.exp(eps) + k - 1 if eps < 700 else math.inf
        q = 1.0 / denominator
        self.matrix = np.full((k, k), q)
        np.fill_diagonal(self.matrix, 1.0 - (k - 1) * q)
        self._epsilon = eps

    @property
    def epsilon(self) -> float:
        """The eps asked for (the matrix's exact log-ratio equals it up to rounding)."""
        return self._epsilon

    @property
    def p_keep(self) -> float:
        """``e^eps / (e^eps + k - 1)``: the chance of reporting the true value."""
        return float(self.matrix[0, 0])

    @property
    def p_other(self) -> float:
        """``1 / (e^eps + k - 1)``: the chance of reporting one given other value."""
        return float(self.matrix[0, 1])

    def estimator_variance(self, true_counts: ArrayLike) -> np.ndarray:
        """Exact variance of :meth:`estimate_counts` per value, given the true counts of each value.

        Parameters
        ----------
        true_counts : array_like
            ``k`` counts ``>= 0``.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValidationError
            On counts of the wrong shape or sign, or a variance beyond the float range.
        """
        counts = finite_array("true_counts", true_counts, low=0)
        if counts.shape != (self.k,):
            raise ValidationError("true_counts", f"must be {self.k} counts >= 0, one per value")
        n, p, q = counts.sum(), self.p_keep, self.p_other
        with np.errstate(over="ignore"):
            variance = (counts * p * (1 - p) + (n - counts) * q * (1 - q)) / (p - q) / (p - q)
        return finite_result(
            "estimator_variance", variance, f"k = {self.k}, epsilon = {self.epsilon:g}"
        )
