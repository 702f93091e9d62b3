"""The exponential mechanism (McSherry & Talwar 2007; Dwork & Roth, Thm 3.10-3.11).

Given candidates ``h`` with scores ``s(X, h)`` of sensitivity ``Delta`` (one individual's change
moves any score by at most ``Delta``), output ``h`` with probability proportional to ``exp(eps *
s(X, h) / (2 * Delta))``: this is ``eps``-DP (Thm 3.10), and with probability at least ``1 -
exp(-t)`` the output scores at least ``OPT - (2 Delta / eps) (ln |H| + t)`` (Thm 3.11).

McSherry & Talwar's original weights ``exp(eps * s)`` give ``2 * eps * Delta``-DP; they are
available as ``convention="mcsherry-talwar"`` and the stated guarantee follows the convention.

Report-noisy-max with Gumbel noise of scale ``2 Delta / eps`` samples exactly the same distribution
(the Gumbel-max trick): :meth:`ExponentialMechanism.sample_noisy_max`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.distribution import FiniteDistribution, inverse_cdf_indices
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    finite_result,
    integer,
    memory,
    non_negative,
    positive,
    positive_int,
)

Convention = Literal["dwork-roth", "mcsherry-talwar"]


class ExponentialMechanism:
    """The exponential mechanism over a finite candidate set.

    ``epsilon``-DP (Dwork & Roth Thm 3.10) for scores of sensitivity ``sensitivity``; the exact
    output distribution is :meth:`distribution`.  When the score is monotone in the data (adding or
    raising one individual's data never lowers any score) the same mechanism is in fact ``epsilon /
    2``-DP (the remark after Thm 3.10); exact audits show it.

    Parameters
    ----------
    epsilon : float
        > 0.
    sensitivity : float, default 1
        > 0: one individual moves every score by at most this.
    convention : {"dwork-roth", "mcsherry-talwar"}
        Weights ``exp(eps s / (2 Delta))`` or McSherry & Talwar's ``exp(eps s)`` (``2 eps
        Delta``-DP).

    Raises
    ------
    ValidationError
        On a bad argument, or a scale or guarantee beyond the float range.

    Examples
    --------
    >>> em = ExponentialMechanism(1.0)
    >>> em.distribution([0.0, 2.0]).probabilities.round(6).tolist()  # weights e^0 and e^1
    [0.268941, 0.731059]
    >>> em.sample_indices([1.0, 2.0, 3.0], size=5, rng=0).tolist()
    [2, 1, 0, 0, 2]
    """

    def __init__(
        self, epsilon: float, sensitivity: float = 1.0, convention: Convention = "dwork-roth"
    ):
        self.epsilon = positive("epsilon", epsilon)
        self.sensitivity = positive("sensitivity", sensitivity)
        self.convention = choice("convention", convention, ("dwork-roth", "mcsherry-talwar"))
        if not (math.isfinite(self.scale) and math.isfinite(self.guarantee_epsilon)):
            raise ValidationError(
                "epsilon",
                f"{self.epsilon:g} with sensitivity {self.sensitivity:g} gives a weight "
                "scale or a guarantee beyond the float range",
            )

    @property
    def scale(self) -> float:
        """The factor on the score in the log-weight: ``eps / (2 Delta)`` or ``eps``
        (McSherry-Talwar)."""
        return (
            self.epsilon / (2 * self.sensitivity)
            if self.convention == "dwork-roth"
            else self.epsilon
        )

    @property
    def guarantee_epsilon(self) -> float:
        """The eps of the guarantee: ``epsilon``, or ``2 epsilon Delta`` for McSherry-Talwar
        weights."""
        return (
            self.epsilon if self.convention == "dwork-roth" else 2 * self.epsilon * self.sensitivity
        )

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP (``2 epsilon Delta``-DP for McSherry-Talwar weights), Dwork & Roth Thm
        3.10."""
        relation = f"one individual's change moves every score by at most {self.sensitivity:g}"
        return PrivacyGuarantee(
            self.guarantee_epsilon, 0.0, Neighbouring.REPLACE_ONE.described(relation)
        )

    def _scores(self, scores: ArrayLike) -> np.ndarray:
        """A non-empty 1-d float array; a float64 array is used as it is (not copied: it is only
        read)."""
        if isinstance(scores, np.ndarray) and scores.dtype == np.float64 and scores.ndim == 1:
            s = scores
        else:
            s = finite_array("scores", scores, ndim=1)
        if s.size == 0:
            raise ValidationError("scores", "must be a non-empty 1-d array")
        return s

    def log_weights(self, scores: ArrayLike) -> np.ndarray:
        """``scale * (s - max s)``: the log-weights up to a constant (the law does not depend on
        it).

        Two reductions (max and min) check the scores and one subtraction and one product give the
        log-weights (a new array).  Scores whose range (or range times scale) exceeds the float
        range are computed as ``(2 scale) * (s/2 - max/2)`` instead, so that no finite scores
        overflow; a weight whose exponent is below ``-1.8e308`` reads ``-inf`` (probability 0, as it
        is in floats anyway).

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.

        Returns
        -------
        numpy.ndarray
            Largest entry 0.

        Raises
        ------
        ValidationError
            If ``scores`` is not a non-empty 1-d array of finite numbers.
        """
        s = self._scores(scores)
        top, bottom = float(np.maximum.reduce(s)), float(np.minimum.reduce(s))
        if not (math.isfinite(top) and math.isfinite(bottom)):
            raise ValidationError("scores", "must be finite (no NaN or inf)")
        if math.isfinite((top - bottom) * self.scale):
            # no overflow: the same numbers as the halved form
            out = np.subtract(s, top)
            out *= self.scale
            return out
        half = s / 2 - top / 2
        with np.errstate(over="ignore"):
            logw = (
                (2 * self.scale) * half
                if math.isfinite(2 * self.scale)
                else self.scale * (2 * half)
            )
        return np.where(half == 0, 0.0, logw)

    def distribution(
        self, scores: ArrayLike, candidates: ArrayLike | None = None
    ) -> FiniteDistribution:
        """The exact output distribution over the candidates (labelled by ``candidates``).

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.
        candidates : array_like, optional
            One label per score (default: indices).

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On bad scores or labels that do not match them.
        """
        return FiniteDistribution.from_log_weights(self.log_weights(scores), candidates, copy=False)

    def sample_indices(
        self, scores: ArrayLike, size: int | tuple[int, ...] | None = None, rng: RNGLike = None
    ) -> np.ndarray | int:
        """Candidate indices drawn by inverse CDF from the exact distribution.

        One draw costs the log-weights (:meth:`log_weights`), then ``exp`` and a cumulative sum in
        place and a binary search: the law of :meth:`distribution` without normalising it or
        labelling it. For many draws from the same scores, keep :meth:`distribution` and sample from
        it.

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.
        size : int, tuple of int or None
            ``None`` for one index (a Python int).
        rng : Generator, int or None
            See :func:`~dpgames.privacy.rng.as_generator`.

        Returns
        -------
        int or numpy.ndarray

        Raises
        ------
        ValidationError
            On bad scores, ``size`` or ``rng``.
        """
        weights = self.log_weights(scores)
        np.exp(weights, out=weights)
        return inverse_cdf_indices(np.add.accumulate(weights, out=weights), size, rng)

    def sample_noisy_max(
        self, scores: ArrayLike, size: int | None = None, rng: RNGLike = None
    ) -> np.ndarray | int:
        """Report-noisy-max with Gumbel noise: ``argmax(log-weight + Gumbel(0, 1))``.

        Same law as :meth:`sample_indices`; costs O(m) per draw (use :meth:`sample_indices` for many
        draws).

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.
        size : int, optional
        rng : Generator, int or None

        Returns
        -------
        int or numpy.ndarray

        Raises
        ------
        ValidationError
            On bad scores, ``size`` (or ``size x m`` noises beyond the memory limit) or ``rng``.
        """
        logw = self.log_weights(scores)
        gen = as_generator(rng)
        if size is not None:
            size = integer("size", size, low=0)
            memory("size", size * logw.size, what=f"{size:,} draws x {logw.size:,} Gumbel noises")
        if size is None:
            return int(np.argmax(logw + gen.gumbel(size=logw.size)))
        return np.argmax(logw[None, :] + gen.gumbel(size=(size, logw.size)), axis=1)

    def utility_loss_bound(self, n_candidates: int, t: float) -> float:
        """Thm 3.11: ``Pr[s(output) <= OPT - bound] <= exp(-t)``, bound = ``(2 Delta / eps)(ln |H| +
        t)`` (for McSherry-Talwar weights, ``(ln |H| + t) / eps``).

        Parameters
        ----------
        n_candidates : int
            ``|H| >= 1``.
        t : float
            ``>= 0``.

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On bad arguments, or a bound beyond the float range (eps near 5e-324).
        """
        n = positive_int("n_candidates", n_candidates)
        t = non_negative("t", t)
        factor = (
            2 * self.sensitivity / self.epsilon
            if self.convention == "dwork-roth"
            else 1 / self.epsilon
        )
        return finite_result(
            "utility_loss_bound", (math.log(n) + t) * factor, f"epsilon = {self.epsilon:g}"
        )
