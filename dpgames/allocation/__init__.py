"""Private allocation: markets of unit-demand bidders and goods in supply, cleared by ascending-price
auctions whose demand counters are differentially private (Hsu, Huang, Roth, Roughgarden & Wu 2014,
"Private matchings and allocations", arXiv 1311.2828), with the non-private baselines and exact
measures of welfare, over-demand and incentives.

Layer: beside :mod:`dpgames.mechanisms` and :mod:`dpgames.games`; imports only :mod:`dpgames.privacy`,
:mod:`dpgames.validation` and :mod:`dpgames.estimates`.  Names are imported on first use (PEP 562).
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "Market": "dpgames.allocation.market",
    "AscendingAuction": "dpgames.allocation.auction",
    "AllocationOutcome": "dpgames.allocation.auction",
    "OptimalAllocation": "dpgames.allocation.baselines",
    "optimal_allocation": "dpgames.allocation.baselines",
    "dual_upper_bound": "dpgames.allocation.baselines",
    "EquilibriumCheck": "dpgames.allocation.baselines",
    "equilibrium_violations": "dpgames.allocation.baselines",
    "MisreportGains": "dpgames.allocation.incentives",
    "misreport_gains": "dpgames.allocation.incentives",
    "single_minded_lies": "dpgames.allocation.incentives",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
