"""What a mechanism promises: its privacy parameters and the neighbouring relation they hold for."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dpgames.privacy._checks import positive_int
from dpgames.privacy.conversions import RDPCurve, pure_dp_rdp_curve, rdp_to_dp, zcdp_rdp_curve, zcdp_to_dp


@dataclass(frozen=True)
class PrivacyGuarantee:
    """``(epsilon, delta)``-differential privacy with respect to ``neighbouring``.

    ``neighbouring`` says which inputs are neighbours, in words (e.g. "one bid changes within
    [0, 1]").  ``rho`` is set for mechanisms that are also ``rho``-zCDP, ``rdp`` (a Renyi-DP curve,
    orders -> divergence bounds) for mechanisms with a known RDP curve tighter than ``alpha rho``.
    A mechanism known only as ``rho``-zCDP states ``epsilon = inf`` (true but empty) and ``rho``: see
    :meth:`zcdp`; :meth:`at_delta` converts it to (eps, delta).
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "one individual's data changes"
    rho: float | None = None
    rdp: RDPCurve | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if not 0 <= self.delta <= 1:
            raise ValueError(f"delta must be in [0, 1], got {self.delta}")
        if self.rho is not None and not (self.rho >= 0 and math.isfinite(self.rho)):
            raise ValueError(f"rho must be a finite number >= 0, got {self.rho}")

    @classmethod
    def zcdp(cls, rho: float, neighbouring: str = "one individual's data changes") -> PrivacyGuarantee:
        """``rho``-zCDP only (Bun & Steinke 2016); ``epsilon`` is ``inf`` until :meth:`at_delta`."""
        return cls(math.inf, 0.0, neighbouring, rho)

    def __str__(self) -> str:
        if math.isinf(self.epsilon) and self.rho is not None:
            return f"{self.rho:g}-zCDP ({self.neighbouring})"
        core = f"{self.epsilon:g}-DP" if self.delta == 0 else f"({self.epsilon:g}, {self.delta:g})-DP"
        extra = f", {self.rho:g}-zCDP" if self.rho is not None else ""
        return f"{core}{extra} ({self.neighbouring})"

    def rdp_curve(self) -> RDPCurve | None:
        """The tightest Renyi-DP curve this guarantee implies: the stated one, else ``alpha rho`` from
        zCDP, else ``min(eps, alpha eps^2/2)`` from pure DP; ``None`` for approximate DP alone."""
        if self.rdp is not None:
            return self.rdp
        if self.rho is not None:
            return zcdp_rdp_curve(self.rho)
        if self.delta == 0 and math.isfinite(self.epsilon):
            return pure_dp_rdp_curve(self.epsilon)
        return None

    def at_delta(self, delta: float) -> PrivacyGuarantee:
        """The smallest eps this guarantee certifies at ``delta``: the stated (eps, delta) when its delta
        is at most ``delta``, or the conversion of its RDP / zCDP curve, whichever is smaller."""
        candidates = [self.epsilon if self.delta <= delta else math.inf]
        if delta > 0 and self.rho is not None:
            candidates.append(zcdp_to_dp(self.rho, delta))
        curve = self.rdp_curve()
        if delta > 0 and curve is not None:
            candidates.append(rdp_to_dp(curve, delta))
        return PrivacyGuarantee(min(candidates), delta, self.neighbouring, self.rho, self.rdp)

    def for_group(self, k: int) -> PrivacyGuarantee:
        """Group privacy for inputs differing in ``k`` individuals: ``(k eps, k e^{(k-1) eps} delta)``
        (Dwork & Roth Thm 2.2 and its approximate-DP form) and ``k^2 rho``-zCDP (Bun & Steinke,
        Prop. 1.9).  A stated RDP curve is dropped (no simple group rule)."""
        k = positive_int("group size k", k)
        if k == 1:
            return self
        eps = k * self.epsilon
        delta = 0.0 if self.delta == 0 else min(1.0, k * math.exp((k - 1) * self.epsilon) * self.delta)
        rho = None if self.rho is None else k * k * self.rho
        return PrivacyGuarantee(eps, delta, f"{k} individuals' data change (group of {self.neighbouring!r})", rho)
