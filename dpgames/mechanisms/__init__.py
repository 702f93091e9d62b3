"""Mechanism design: environments, auctions, the commitment / punishing mixes, users' own
mechanisms.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.mechanisms.baselines import (
        f2_benchmark as f2_benchmark,
        optimal_fixed_price as optimal_fixed_price,
        rsop_revenue as rsop_revenue,
    )
    from dpgames.mechanisms.bids import Bids as Bids
    from dpgames.mechanisms.commitment import CommitmentMechanism as CommitmentMechanism
    from dpgames.mechanisms.custom import CustomMechanism as CustomMechanism
    from dpgames.mechanisms.digital_goods import (
        AuctionOutcome as AuctionOutcome,
        DigitalGoodsAuction as DigitalGoodsAuction,
    )
    from dpgames.mechanisms.environment import Environment as Environment, Profile as Profile
    from dpgames.mechanisms.facility_location import (
        facility_location_environment as facility_location_environment,
        grid_graph as grid_graph,
        line_graph as line_graph,
    )
    from dpgames.mechanisms.huang_kannan import HuangKannan as HuangKannan
    from dpgames.mechanisms.nst_mix import NSTMix as NSTMix, theorem_q as theorem_q
    from dpgames.mechanisms.objective_em import (
        ObjectiveExponentialMechanism as ObjectiveExponentialMechanism,
    )
    from dpgames.mechanisms.pricing import (
        AuctionPricing as AuctionPricing,
        pricing_environment as pricing_environment,
    )
    from dpgames.mechanisms.protocol import EnvironmentMechanism as EnvironmentMechanism
    from dpgames.mechanisms.public_project import (
        public_project_environment as public_project_environment,
    )

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
