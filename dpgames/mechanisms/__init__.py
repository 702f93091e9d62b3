"""Mechanism design: environments, auctions, the commitment / punishing mixes, users' own mechanisms.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "f2_benchmark": "dpgames.mechanisms.baselines",
    "Bids": "dpgames.mechanisms.bids",
    "optimal_fixed_price": "dpgames.mechanisms.baselines",
    "rsop_revenue": "dpgames.mechanisms.baselines",
    "CommitmentMechanism": "dpgames.mechanisms.commitment",
    "CustomMechanism": "dpgames.mechanisms.custom",
    "AuctionOutcome": "dpgames.mechanisms.digital_goods",
    "DigitalGoodsAuction": "dpgames.mechanisms.digital_goods",
    "Environment": "dpgames.mechanisms.environment",
    "Profile": "dpgames.mechanisms.environment",
    "facility_location_environment": "dpgames.mechanisms.facility_location",
    "grid_graph": "dpgames.mechanisms.facility_location",
    "line_graph": "dpgames.mechanisms.facility_location",
    "HuangKannan": "dpgames.mechanisms.huang_kannan",
    "NSTMix": "dpgames.mechanisms.nst_mix",
    "theorem_q": "dpgames.mechanisms.nst_mix",
    "ObjectiveExponentialMechanism": "dpgames.mechanisms.objective_em",
    "AuctionPricing": "dpgames.mechanisms.pricing",
    "pricing_environment": "dpgames.mechanisms.pricing",
    "EnvironmentMechanism": "dpgames.mechanisms.protocol",
    "public_project_environment": "dpgames.mechanisms.public_project",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
