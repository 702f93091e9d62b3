"""The Gaussian mechanism: classic and analytic calibration, and its exact privacy curve.

Add ``N(0, sigma^2)`` noise to each coordinate of a query of l2 sensitivity ``Delta``.  With
``mu = Delta / sigma``:

* it is exactly ``(eps, delta(eps))``-DP for ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 -
  eps/mu)`` and for no smaller delta (Balle & Wang 2018, Thm 8): :func:`gaussian_delta`;
* it is ``mu^2 / 2 = Delta^2 / (2 sigma^2)``-zCDP (Bun & Steinke 2016, Prop. 1.6);
* classic calibration ``sigma^2 = 2 ln(1.25/delta) Delta^2 / eps^2`` is (eps, delta)-DP for eps < 1
  (Dwork & Roth Thm A.1) and is refused for eps >= 1, where the theorem does not hold;
* analytic calibration (Balle & Wang 2018, Alg. 1) is the smallest sigma with ``delta(eps) <=
  delta``, for any eps > 0: found here by root finding on the exact ``delta(eps)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    non_negative,
    positive,
    probability,
)


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact smallest delta at ``epsilon`` for Gaussian noise with ``mu = Delta / sigma`` (Balle &
    Wang 2018, Thm 8), the second term computed in log space so that large eps does not overflow
    (``eps = inf`` gives 0).

    Parameters
    ----------
    epsilon : float
        ``>= 0``, ``inf`` allowed.
    mu : float
        ``Delta / sigma > 0``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On a negative epsilon or a mu that is not > 0.
    """
    first, second = _delta_terms(
        non_negative("epsilon", epsilon, allow_inf=True), positive("mu", mu)
    )
    return max(first - second, 0.0)


#: Bound on the rounding error of ``first - second`` in :func:`gaussian_delta`, relative to
#: ``first + second`` (64 ulps: ``ndtr``, ``log_ndtr`` and ``exp`` are each accurate to a few ulps).
_DELTA_ROUNDING = 64 * 2.0**-53


def _delta_terms(epsilon: float, mu: float) -> tuple[float, float]:
    """``Phi(mu/2 - eps/mu)`` and ``e^eps Phi(-mu/2 - eps/mu)`` (both 0 for ``eps = inf``)."""
    if math.isinf(epsilon):
        return 0.0, 0.0
    first = float(special.ndtr(mu / 2 - epsilon / mu))
    second = math.exp(epsilon + special.log_ndtr(-mu / 2 - epsilon / mu))
    return first, second


def _ratio(sensitivity: float, sigma: float) -> float:
    """``Delta / sigma``, refused where it underflows to 0 (sigma beyond the float range's
    reach)."""
    mu = sensitivity / sigma
    if not mu > 0:
        raise ValidationError(
            "delta", "needs a noise scale sigma / sensitivity beyond the float range"
        )
    return mu


def _certainly_within(epsilon: float, mu: float, delta: float) -> bool:
    """Whether the exact ``delta(eps)`` at ``mu`` is at most ``delta`` even after the worst rounding
    of its floating-point evaluation (the difference of two terms can lose ~1e-12 relative at small
    delta)."""
    first, second = _delta_terms(epsilon, mu)
    return first - second + _DELTA_ROUNDING * (first + second) <= delta


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest eps with :func:`gaussian_delta` ``(eps, mu) <= delta`` (0 if already at eps =
    0), by root finding, landed on the valid side of the root.

    Parameters
    ----------
    delta : float
        In ``(0, 1)``.
    mu : float
        ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On a bad delta or mu, or an eps beyond the float range.
    """
    delta = probability("delta", delta)
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(high, mu) > delta:
        high *= 2
        if math.isinf(high):
            raise ValidationError(
                "mu", f"{mu:g} needs an eps beyond the float range at delta = {delta:g}"
            )
    eps = optimize.brentq(
        lambda e: gaussian_delta(e, mu) - delta, 0.0, high, xtol=1e-14, rtol=1e-14
    )
    while gaussian_delta(eps, mu) > delta:  # land on the valid side of the root
        eps = math.nextafter(eps, math.inf) if eps == 0 else eps * (1 + 1e-14)
    return eps


def analytic_gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest ``mu = Delta / sigma`` with ``gaussian_delta(eps, mu) <= delta`` (Balle & Wang
    2018).

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On bad arguments, or a noise scale beyond the float range.
    """
    epsilon, delta = positive("epsilon", epsilon), probability("delta", delta)
    low, high = 1e-3, 1.0
    while gaussian_delta(epsilon, low) > delta:
        low /= 2
        if low == 0:
            raise ValidationError(
                "delta",
                f"{delta:g} at epsilon = {epsilon:g} needs a noise scale beyond the float range",
            )
    while gaussian_delta(epsilon, high) <= delta:
        high *= 2
        if math.isinf(high):
            raise ValidationError(
                "epsilon",
                f"{epsilon:g} at delta = {delta:g} needs a noise scale below the float range",
            )
    mu = optimize.brentq(
        lambda m: gaussian_delta(epsilon, m) - delta, low, high, xtol=1e-15, rtol=1e-14
    )
    while gaussian_delta(epsilon, mu) > delta:
        mu *= 1 - 1e-14
    return mu


class GaussianMechanism:
    """Gaussian noise of standard deviation ``sigma`` for queries of l2 sensitivity ``sensitivity``.

    Build it with :meth:`classic` or :meth:`analytic` from a target (eps, delta), or directly from
    ``sigma``; :attr:`guarantee` states the target (if any) and ``rho = Delta^2 / (2 sigma^2)``.

    Parameters
    ----------
    sigma : float
        ``> 0``.
    sensitivity : float, default 1
        ``> 0``.
    target : (float, float), optional
        The (eps, delta) the noise was calibrated for.

    Raises
    ------
    ValidationError
        On bad arguments or ``Delta / sigma`` (or its square) beyond the float range.

    Examples
    --------
    >>> mech = GaussianMechanism.analytic(1.0, 1e-6)
    >>> round(mech.sigma, 4), mech.delta_for_epsilon(1.0) <= 1e-6
    (4.2247, True)
    >>> print(GaussianMechanism(2.0).guarantee)
    0.125-zCDP (replace one individual: the query's value moves by at most 1 in l2 norm)
    """

    def __init__(
        self, sigma: float, sensitivity: float = 1.0, *, target: tuple[float, float] | None = None
    ):
        self.sigma = positive("sigma", sigma)
        self.sensitivity = positive("sensitivity", sensitivity)
        if not (math.isfinite(self.mu) and self.mu > 0 and math.isfinite(self.rho)):
            raise ValidationError(
                "sigma",
                f"{self.sigma:g} with sensitivity {self.sensitivity:g} gives a ratio "
                "Delta / sigma (or its square) beyond the float range",
            )
        if target is not None:
            if not (isinstance(target, tuple) and len(target) == 2):
                raise ValidationError("target", f"must be a pair (epsilon, delta), got {target!r}")
            target = (
                positive("target epsilon", target[0]),
                probability("target delta", target[1], allow_zero=True),
            )
        self.target = target

    @classmethod
    def classic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` (Dwork & Roth Thm A.1; valid for eps < 1
        only).

        Parameters
        ----------
        epsilon : float
            ``> 0`` and < 1.
        delta : float
            In ``(0, 1)``.
        sensitivity : float, default 1

        Returns
        -------
        GaussianMechanism

        Raises
        ------
        ValidationError
            On bad arguments, eps >= 1 (use analytic) or a sigma beyond the float range.
        """
        epsilon, delta = positive("epsilon", epsilon), probability("delta", delta)
        if epsilon >= 1:
            raise ValidationError(
                "epsilon",
                f": the classic Gaussian calibration holds for epsilon < 1 only "
                f"(got {epsilon}); use GaussianMechanism.analytic",
            )
        sensitivity = positive("sensitivity", sensitivity)
        sigma = sensitivity * math.sqrt(2 * (math.log(1.25) - math.log(delta))) / epsilon
        return cls(
            finite_result("sigma", sigma, "sensitivity / epsilon"),
            sensitivity,
            target=(epsilon, delta),
        )

    @classmethod
    def analytic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The smallest sigma that is (eps, delta)-DP, for any eps > 0 (Balle & Wang 2018),
        rounded up: sigma grows (by steps of 1 ulp, doubling) until the exact ``delta(eps)`` at
        the very ``Delta / sigma`` the mechanism uses is at most ``delta`` even allowing for the
        rounding error of its evaluation (without it, sigma undershot the target by ~1e-12
        relative at delta = 1e-12).

        Parameters
        ----------
        epsilon : float
            ``> 0``.
        delta : float
            In ``(0, 1)``.
        sensitivity : float, default 1

        Returns
        -------
        GaussianMechanism

        Raises
        ------
        ValidationError
            On bad arguments or a sigma beyond the float range.
        """
        sensitivity = positive("sensitivity", sensitivity)
        sigma = finite_result(
            "sigma", sensitivity / analytic_gaussian_mu(epsilon, delta), "sensitivity / mu"
        )
        step = math.ulp(sigma)
        while not _certainly_within(epsilon, _ratio(sensitivity, sigma), delta):
            sigma, step = sigma + step, 2 * step
        return cls(sigma, sensitivity, target=(epsilon, delta))

    @property
    def mu(self) -> float:
        """``Delta / sigma``, the one parameter of the mechanism's privacy curve."""
        return self.sensitivity / self.sigma

    @property
    def rho(self) -> float:
        """zCDP parameter ``Delta^2 / (2 sigma^2)``."""
        return self.mu * self.mu / 2

    @property
    def variance(self) -> float:
        """``sigma^2`` (a ValidationError beyond the float range)."""
        return finite_result("variance", self.sigma * self.sigma, f"sigma {self.sigma:g}")

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The target (eps, delta) with ``rho = Delta^2 / (2 sigma^2)``; without a target,
        ``rho``-zCDP only (stated as ``epsilon = inf``: Gaussian noise is never pure DP;
        :meth:`PrivacyGuarantee.at_delta` converts it)."""
        relation = Neighbouring.REPLACE_ONE.described(
            f"the query's value moves by at most {self.sensitivity:g} in l2 norm"
        )
        if self.target is None:
            return PrivacyGuarantee.from_zcdp(self.rho, relation)
        return PrivacyGuarantee(self.target[0], self.target[1], relation, self.rho)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Exact smallest delta at ``epsilon`` (:func:`gaussian_delta`).

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On a negative epsilon.
        """
        return gaussian_delta(epsilon, self.mu)

    def epsilon_for_delta(self, delta: float) -> float:
        """Exact smallest eps at ``delta`` (:func:`gaussian_epsilon`).

        Parameters
        ----------
        delta : float

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On a bad delta.
        """
        return gaussian_epsilon(delta, self.mu)

    def release(self, values: ArrayLike, rng: RNGLike = None) -> np.ndarray | float:
        """``values`` plus independent ``N(0, sigma^2)`` noise on every coordinate.

        Parameters
        ----------
        values : array_like
            Finite.
        rng : Generator, int or None

        Returns
        -------
        float or numpy.ndarray
            Same shape (a float for a scalar).

        Raises
        ------
        ValidationError
            On non-finite values, or a noisy value beyond the float range.
        """
        v = finite_array("values", values)
        with np.errstate(over="ignore"):
            out = v + as_generator(rng).normal(0.0, self.sigma, size=v.shape)
        finite_result("release", out, "a value plus its noise exceeds the float range")
        return float(out) if out.ndim == 0 else out
