"""dpgames: mechanism design with differential privacy, simulated and measured exactly.

The public API is the names below and those of the subpackages' ``__all__`` (``dpgames.privacy``,
``dpgames.mechanisms``, ``dpgames.games``, ``dpgames.analysis``, ``dpgames.scenarios``, ``dpgames.sweep``)
plus :mod:`dpgames.testing` and :mod:`dpgames.validation`; everything else may change.  Names are
imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Beta": "dpgames.agents",
    "Discrete": "dpgames.agents",
    "Population": "dpgames.agents",
    "Uniform": "dpgames.agents",
    "MisreportAudit": "dpgames.analysis.misreport",
    "misreport_audit": "dpgames.analysis.misreport",
    "least_q": "dpgames.analysis.nst",
    "nst_report": "dpgames.analysis.nst",
    "truthfulness_audit": "dpgames.analysis.truthfulness",
    "f2_benchmark": "dpgames.mechanisms.baselines",
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
    "public_project_environment": "dpgames.mechanisms.public_project",
    "AboveThreshold": "dpgames.privacy",
    "Accountant": "dpgames.privacy",
    "BinaryTreeCounter": "dpgames.privacy",
    "BudgetExceededError": "dpgames.privacy",
    "DiscreteGaussianMechanism": "dpgames.privacy",
    "DiscreteLaplaceMechanism": "dpgames.privacy",
    "GaussianMechanism": "dpgames.privacy",
    "KaryResponse": "dpgames.privacy",
    "LaplaceMechanism": "dpgames.privacy",
    "PrivateMultiplicativeWeights": "dpgames.privacy",
    "ReportNoisyMax": "dpgames.privacy",
    "SparseVector": "dpgames.privacy",
    "WarnerResponse": "dpgames.privacy",
    "audit_black_box": "dpgames.privacy",
    "audit_finite": "dpgames.privacy",
    "FiniteDistribution": "dpgames.privacy.distribution",
    "ExponentialMechanism": "dpgames.privacy.exponential",
    "PrivacyGuarantee": "dpgames.privacy.guarantee",
    "CongestionGame": "dpgames.games",
    "PrivateMediator": "dpgames.games",
    "RoutingGame": "dpgames.games",
    "load_tntp": "dpgames.games",
    "system_optimum": "dpgames.games",
    "user_equilibrium": "dpgames.games",
    "Result": "dpgames.scenarios",
    "Scenario": "dpgames.scenarios",
    "ScenarioError": "dpgames.scenarios",
    "run_scenario": "dpgames.scenarios",
    "ValidationError": "dpgames.validation",
    "load_results": "dpgames.sweep",
    "plan_sweep": "dpgames.sweep",
    "run_sweep": "dpgames.sweep",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
