"""What a mechanism promises: its privacy parameters and the neighbouring relation they hold for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PrivacyGuarantee:
    """``(epsilon, delta)``-differential privacy with respect to ``neighbouring``.

    ``neighbouring`` says which inputs are neighbours, in words (e.g. "one bid changes within
    [0, 1]").  ``rho`` is set for mechanisms that are also ``rho``-zCDP.
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "one individual's data changes"
    rho: float | None = None

    def __post_init__(self) -> None:
        if not self.epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if not 0 <= self.delta <= 1:
            raise ValueError(f"delta must be in [0, 1], got {self.delta}")

    def __str__(self) -> str:
        core = f"{self.epsilon:g}-DP" if self.delta == 0 else f"({self.epsilon:g}, {self.delta:g})-DP"
        return f"{core} ({self.neighbouring})"
