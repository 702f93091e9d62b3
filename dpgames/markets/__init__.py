"""Markets for privacy (Dwork & Roth 10.3; Ghosh & Roth 2011; Ligett & Roth 2012): agents who value
their privacy, the sensitive surveyor's mechanisms, their exact error laws, envy-free benchmarks and
audits.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.markets.agents import (
        CostLaw as CostLaw,
        DiscreteCosts as DiscreteCosts,
        ExponentialCosts as ExponentialCosts,
        MixtureCosts as MixtureCosts,
        PopulationLaw as PopulationLaw,
        PowerCosts as PowerCosts,
        PrivacyPopulation as PrivacyPopulation,
        UniformCosts as UniformCosts,
        cost_law as cost_law,
        expected_laplace_privacy_loss as expected_laplace_privacy_loss,
        outcome_privacy_cost as outcome_privacy_cost,
        privacy_population as privacy_population,
    )
    from dpgames.markets.audit import (
        CostAudit as CostAudit,
        as_custom_mechanism as as_custom_mechanism,
        cost_audit as cost_audit,
        release_law as release_law,
    )
    from dpgames.markets.error_law import (
        ErrorLaw as ErrorLaw,
        least_epsilon as least_epsilon,
        worst_case_radius as worst_case_radius,
    )
    from dpgames.markets.impossibility import (
        correlated_uniform_law as correlated_uniform_law,
        correlation_sweep as correlation_sweep,
        selection_privacy_loss as selection_privacy_loss,
    )
    from dpgames.markets.privacy_aware import (
        PrivacyAwareAudit as PrivacyAwareAudit,
        privacy_aware_audit as privacy_aware_audit,
        privacy_aware_custom_audit as privacy_aware_custom_audit,
    )
    from dpgames.markets.surveyor import (
        AccuracyAuction as AccuracyAuction,
        EnvyFreeBenchmark as EnvyFreeBenchmark,
        FairQuery as FairQuery,
        SurveyOutcome as SurveyOutcome,
        envy_free_accuracy as envy_free_accuracy,
        envy_free_budget as envy_free_budget,
    )
    from dpgames.markets.take_it_or_leave_it import (
        SurveyLaw as SurveyLaw,
        TakeItOrLeaveIt as TakeItOrLeaveIt,
    )

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
