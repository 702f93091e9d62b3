"""Private allocation: markets of unit-demand bidders and goods in supply, cleared by
ascending-price auctions whose demand counters are differentially private (Hsu, Huang, Roth,
Roughgarden & Wu 2014, "Private matchings and allocations", arXiv 1311.2828), with the non-private
baselines and exact measures of welfare, over-demand and incentives.

Layer: beside :mod:`dpgames.mechanisms` and :mod:`dpgames.games`; imports only
:mod:`dpgames.privacy`, :mod:`dpgames.validation` and :mod:`dpgames.estimates`.  Names are imported
on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.allocation.auction import (
        AllocationOutcome as AllocationOutcome,
        AscendingAuction as AscendingAuction,
    )
    from dpgames.allocation.baselines import (
        EquilibriumCheck as EquilibriumCheck,
        OptimalAllocation as OptimalAllocation,
        dual_upper_bound as dual_upper_bound,
        equilibrium_violations as equilibrium_violations,
        optimal_allocation as optimal_allocation,
    )
    from dpgames.allocation.incentives import (
        MisreportGains as MisreportGains,
        misreport_gains as misreport_gains,
        single_minded_lies as single_minded_lies,
    )
    from dpgames.allocation.market import Market as Market

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
