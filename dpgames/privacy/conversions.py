"""Conversions between privacy definitions: pure DP, zCDP, Renyi DP and (eps, delta)-DP.

* eps-DP implies (eps^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4), and its Renyi divergence of every
  order alpha is at most ``min(eps, alpha eps^2 / 2)``.
* rho-zCDP implies (eps, delta)-DP with ``eps = rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke,
  Prop. 1.3).  rho-zCDP is RDP with curve ``alpha -> alpha rho``.
* (alpha, tau)-RDP implies (eps, delta)-DP with ``eps = tau + ln(1/delta) / (alpha - 1)`` (Mironov 2017,
  Prop. 3) and with the tighter ``eps = tau + ln((alpha-1)/alpha) - (ln delta + ln alpha) / (alpha - 1)``
  (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21).  Every order alpha gives a
  valid bound; we take the best over a fixed grid (:data:`ALPHAS`), so the result is valid and, on the
  grid's resolution, tight.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpgames.validation import ValidationError, finite_array, non_negative, probability

RDPCurve = Callable[[np.ndarray], np.ndarray]
"""A Renyi-DP curve: orders ``alpha > 1`` (array) -> Renyi divergence bounds (array, may be inf)."""

ALPHAS: np.ndarray = 1.0 + np.geomspace(1e-4, 1e6, 1200)
"""Grid of Renyi orders over which conversions to (eps, delta) are optimised."""


def pure_dp_rdp_curve(epsilon: float) -> RDPCurve:
    """The RDP curve implied by eps-DP: ``min(eps, alpha eps^2 / 2)`` (Bun & Steinke, Prop. 1.4)."""
    half_square = epsilon * epsilon / 2  # inf beyond 1.3e154: the curve is then eps itself

    def curve(alphas: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.minimum(epsilon, np.asarray(alphas, dtype=float) * half_square)

    return curve


def zcdp_rdp_curve(rho: float) -> RDPCurve:
    """The RDP curve of rho-zCDP: ``alpha rho`` (the definition of zCDP)."""
    return lambda alphas: np.asarray(alphas, dtype=float) * rho


def zcdp_to_dp_bun_steinke(rho: float, delta: float) -> float:
    """Bun & Steinke (2016) Prop. 1.3: rho-zCDP gives (rho + 2 sqrt(rho ln(1/delta)), delta)-DP."""
    probability("delta", delta)
    return rho + 2 * math.sqrt(rho * -math.log(delta))


def rdp_values_to_dp(values: np.ndarray, delta: float, alphas: np.ndarray = ALPHAS) -> float:
    """The smallest eps over the grid such that RDP values ``values`` (at ``alphas``) give (eps, delta)-DP.

    Uses the better of Mironov's and Canonne-Kamath-Steinke's conversions at every order."""
    probability("delta", delta)
    if alphas is not ALPHAS:
        alphas = finite_array("alphas", alphas, ndim=1)
        if alphas.size == 0 or not (alphas > 1).all():
            raise ValidationError("alphas", "must be a non-empty list of Renyi orders > 1")
    try:
        tau = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError("values", "must be numbers (RDP values, one per order)") from None
    if tau.shape != alphas.shape:
        raise ValidationError("values", f"must hold one RDP value per order ({alphas.size}), got shape {tau.shape}")
    log_delta = math.log(delta)
    with np.errstate(invalid="ignore", over="ignore"):
        mironov = tau - log_delta / (alphas - 1)
        cks = tau + np.log1p(-1 / alphas) - (log_delta + np.log(alphas)) / (alphas - 1)
        eps = np.fmin(mironov, cks)
    eps = eps[~np.isnan(eps)]
    return max(float(eps.min()), 0.0) if eps.size else math.inf


def rdp_to_dp(curve: RDPCurve, delta: float, alphas: np.ndarray = ALPHAS) -> float:
    """(eps, delta)-DP from an RDP curve, optimised over the orders ``alphas``."""
    if not callable(curve):
        raise ValidationError("curve", "must be a callable RDP curve (orders -> divergence bounds)")
    if alphas is not ALPHAS:
        alphas = finite_array("alphas", alphas, ndim=1)
        if alphas.size == 0 or not (alphas > 1).all():
            raise ValidationError("alphas", "must be a non-empty list of Renyi orders > 1")
    return rdp_values_to_dp(curve(alphas), delta, alphas)


def zcdp_to_dp(rho: float, delta: float) -> float:
    """The smallest eps we can certify for rho-zCDP at ``delta``: the best of Bun-Steinke's closed form
    and the RDP conversions over the grid of orders.  A result beyond the float range (rho near 1e308)
    is a ValidationError."""
    rho = non_negative("rho", rho)
    if rho == 0:
        return 0.0
    with np.errstate(over="ignore"):
        eps = min(zcdp_to_dp_bun_steinke(rho, delta), rdp_values_to_dp(ALPHAS * rho, delta))
    if not math.isfinite(eps):
        raise ValidationError("rho", f"{rho:g}-zCDP converts to an eps beyond the float range")
    return eps
