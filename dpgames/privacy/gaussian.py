"""The Gaussian mechanism: classic and analytic calibration, and its exact privacy curve.

Add ``N(0, sigma^2)`` noise to each coordinate of a query of l2 sensitivity ``Delta``.  With
``mu = Delta / sigma``:

* it is exactly ``(eps, delta(eps))``-DP for ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``
  and for no smaller delta (Balle & Wang 2018, Thm 8): :func:`gaussian_delta`;
* it is ``mu^2 / 2 = Delta^2 / (2 sigma^2)``-zCDP (Bun & Steinke 2016, Prop. 1.6);
* classic calibration ``sigma^2 = 2 ln(1.25/delta) Delta^2 / eps^2`` is (eps, delta)-DP for eps < 1
  (Dwork & Roth Thm A.1) and is refused for eps >= 1, where the theorem does not hold;
* analytic calibration (Balle & Wang 2018, Alg. 1) is the smallest sigma with ``delta(eps) <= delta``,
  for any eps > 0: found here by root finding on the exact ``delta(eps)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from dpgames.privacy._checks import finite_array, positive, probability
from dpgames.privacy.distribution import as_generator
from dpgames.privacy.guarantee import PrivacyGuarantee


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact smallest delta at ``epsilon`` for Gaussian noise with ``mu = Delta / sigma`` (Balle & Wang
    2018, Thm 8), the second term computed in log space so that large eps does not overflow."""
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    positive("mu", mu)
    first = special.ndtr(mu / 2 - epsilon / mu)
    second = math.exp(epsilon + special.log_ndtr(-mu / 2 - epsilon / mu))
    return float(max(first - second, 0.0))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest eps with :func:`gaussian_delta` ``(eps, mu) <= delta`` (0 if already at eps = 0)."""
    probability("delta", delta)
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(high, mu) > delta:
        high *= 2
    eps = optimize.brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, high, xtol=1e-14, rtol=1e-14)
    while gaussian_delta(eps, mu) > delta:  # land on the valid side of the root
        eps = math.nextafter(eps, math.inf) if eps == 0 else eps * (1 + 1e-14)
    return eps


def analytic_gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest ``mu = Delta / sigma`` with ``gaussian_delta(eps, mu) <= delta`` (Balle & Wang 2018)."""
    epsilon, delta = positive("epsilon", epsilon), probability("delta", delta)
    low, high = 1e-3, 1.0
    while gaussian_delta(epsilon, low) > delta:
        low /= 2
    while gaussian_delta(epsilon, high) <= delta:
        high *= 2
    mu = optimize.brentq(lambda m: gaussian_delta(epsilon, m) - delta, low, high, xtol=1e-15, rtol=1e-14)
    while gaussian_delta(epsilon, mu) > delta:
        mu *= 1 - 1e-14
    return mu


class GaussianMechanism:
    """Gaussian noise of standard deviation ``sigma`` for queries of l2 sensitivity ``sensitivity``.

    Build it with :meth:`classic` or :meth:`analytic` from a target (eps, delta), or directly from
    ``sigma``; :attr:`guarantee` states the target (if any) and ``rho = Delta^2 / (2 sigma^2)``."""

    def __init__(self, sigma: float, sensitivity: float = 1.0, *, target: tuple[float, float] | None = None):
        self.sigma = positive("sigma", sigma)
        self.sensitivity = positive("sensitivity", sensitivity)
        self.target = target

    @classmethod
    def classic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` (Dwork & Roth Thm A.1; valid for eps < 1 only)."""
        epsilon, delta = positive("epsilon", epsilon), probability("delta", delta)
        if epsilon >= 1:
            raise ValueError(f"the classic Gaussian calibration holds for epsilon < 1 only (got {epsilon}); "
                             "use GaussianMechanism.analytic")
        sensitivity = positive("sensitivity", sensitivity)
        return cls(sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon, sensitivity, target=(epsilon, delta))

    @classmethod
    def analytic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The smallest sigma that is (eps, delta)-DP, for any eps > 0 (Balle & Wang 2018)."""
        sensitivity = positive("sensitivity", sensitivity)
        return cls(sensitivity / analytic_gaussian_mu(epsilon, delta), sensitivity, target=(epsilon, delta))

    @property
    def mu(self) -> float:
        return self.sensitivity / self.sigma

    @property
    def rho(self) -> float:
        """zCDP parameter ``Delta^2 / (2 sigma^2)``."""
        return self.mu ** 2 / 2

    @property
    def variance(self) -> float:
        return self.sigma ** 2

    @property
    def guarantee(self) -> PrivacyGuarantee:
        relation = f"the query's value moves by at most {self.sensitivity:g} in l2 norm"
        if self.target is None:
            return PrivacyGuarantee.zcdp(self.rho, relation)
        return PrivacyGuarantee(self.target[0], self.target[1], relation, self.rho)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Exact smallest delta at ``epsilon`` (:func:`gaussian_delta`)."""
        return gaussian_delta(epsilon, self.mu)

    def epsilon_for_delta(self, delta: float) -> float:
        """Exact smallest eps at ``delta`` (:func:`gaussian_epsilon`)."""
        return gaussian_epsilon(delta, self.mu)

    def release(self, values: ArrayLike, rng: np.random.Generator | int | None = None) -> np.ndarray | float:
        """``values`` plus independent ``N(0, sigma^2)`` noise on every coordinate."""
        v = finite_array("values", values)
        out = v + as_generator(rng).normal(0.0, self.sigma, size=v.shape)
        return float(out) if out.ndim == 0 else out
