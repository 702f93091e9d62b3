"""What a mechanism promises: its privacy parameters and the neighbouring relation they hold for."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dpgames.privacy.conversions import RDPCurve, pure_dp_rdp_curve, rdp_to_dp, zcdp_rdp_curve, zcdp_to_dp
from dpgames.validation import ValidationError, integer, non_negative, probability

#: Largest repeat count or group size accepted (counts up to it are exact in float arithmetic).
MAX_COUNT = 10 ** 15


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
        object.__setattr__(self, "epsilon", non_negative("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", probability("delta", self.delta, allow_zero=True, allow_one=True))
        if self.rho is not None:
            object.__setattr__(self, "rho", non_negative("rho", self.rho))
        if not isinstance(self.neighbouring, str):
            raise ValidationError("neighbouring", f"must be a string, got {type(self.neighbouring).__name__}")
        if self.rdp is not None and not callable(self.rdp):
            raise ValidationError("rdp", "must be a callable RDP curve (orders -> divergence bounds)")

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
        is at most ``delta``, or the conversion of its RDP / zCDP curve, whichever is smaller.  ``inf`` is
        the true answer where no bound exists at ``delta`` (e.g. ``delta = 0`` for an approximate-DP
        guarantee without a curve)."""
        delta = probability("delta", delta, allow_zero=True, allow_one=True)
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
        Prop. 1.9).  A stated RDP curve is dropped (no simple group rule).  ``k`` is at most
        :data:`MAX_COUNT`; the delta is computed in log space (it is 1 as soon as the product reaches 1),
        and a ``k eps`` or ``k^2 rho`` beyond the float range is a ValidationError."""
        k = integer("group size k", k, 1, MAX_COUNT)
        if k == 1:
            return self
        eps = k * self.epsilon
        log_delta = math.log(k) + (k - 1) * self.epsilon + math.log(self.delta) if self.delta > 0 else -math.inf
        delta = 0.0 if self.delta == 0 else 1.0 if log_delta >= 0 else math.exp(log_delta)
        rho = None if self.rho is None else k * k * self.rho
        if math.isinf(eps) and math.isfinite(self.epsilon) or rho is not None and math.isinf(rho):
            raise ValidationError("group size k", f"{k} times this guarantee exceeds the float range (eps "
                                                  f"{self.epsilon:g}, rho {self.rho}): no group guarantee can be stated")
        return PrivacyGuarantee(eps, delta, f"{k} individuals' data change (group of {self.neighbouring!r})", rho)
