"""Markets for privacy (Dwork & Roth 10.3; Ghosh & Roth 2011; Ligett & Roth 2012): agents who value their
privacy, the sensitive surveyor's mechanisms, their exact error laws, envy-free benchmarks and audits.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "CostLaw": "dpgames.markets.agents",
    "DiscreteCosts": "dpgames.markets.agents",
    "ExponentialCosts": "dpgames.markets.agents",
    "MixtureCosts": "dpgames.markets.agents",
    "PopulationLaw": "dpgames.markets.agents",
    "PowerCosts": "dpgames.markets.agents",
    "PrivacyPopulation": "dpgames.markets.agents",
    "UniformCosts": "dpgames.markets.agents",
    "cost_law": "dpgames.markets.agents",
    "expected_laplace_privacy_loss": "dpgames.markets.agents",
    "outcome_privacy_cost": "dpgames.markets.agents",
    "privacy_population": "dpgames.markets.agents",
    "ErrorLaw": "dpgames.markets.error_law",
    "least_epsilon": "dpgames.markets.error_law",
    "worst_case_radius": "dpgames.markets.error_law",
    "AccuracyAuction": "dpgames.markets.surveyor",
    "EnvyFreeBenchmark": "dpgames.markets.surveyor",
    "FairQuery": "dpgames.markets.surveyor",
    "SurveyOutcome": "dpgames.markets.surveyor",
    "envy_free_accuracy": "dpgames.markets.surveyor",
    "envy_free_budget": "dpgames.markets.surveyor",
    "CostAudit": "dpgames.markets.audit",
    "as_custom_mechanism": "dpgames.markets.audit",
    "cost_audit": "dpgames.markets.audit",
    "release_law": "dpgames.markets.audit",
    "correlated_uniform_law": "dpgames.markets.impossibility",
    "correlation_sweep": "dpgames.markets.impossibility",
    "selection_privacy_loss": "dpgames.markets.impossibility",
    "PrivacyAwareAudit": "dpgames.markets.privacy_aware",
    "privacy_aware_audit": "dpgames.markets.privacy_aware",
    "privacy_aware_custom_audit": "dpgames.markets.privacy_aware",
    "SurveyLaw": "dpgames.markets.take_it_or_leave_it",
    "TakeItOrLeaveIt": "dpgames.markets.take_it_or_leave_it",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
