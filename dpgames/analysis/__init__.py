"""Measurements: revenue, welfare, the incentive to misreport, privacy audits.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.analysis.auction_privacy import (
        PrivacyLossAudit as PrivacyLossAudit,
        privacy_audit_of_law as privacy_audit_of_law,
        single_bid_privacy_audit as single_bid_privacy_audit,
    )
    from dpgames.analysis.coalition_audit import CoalitionAudit as CoalitionAudit
    from dpgames.analysis.curves import (
        GainCurve as GainCurve,
        gain_curve as gain_curve,
        gain_curve_figure as gain_curve_figure,
    )
    from dpgames.analysis.custom_audit import (
        CustomAudit as CustomAudit,
        DominantAudit as DominantAudit,
        ExPostAudit as ExPostAudit,
    )
    from dpgames.analysis.misreport import (
        MisreportAudit as MisreportAudit,
        misreport_audit as misreport_audit,
        misreport_audit_of_law as misreport_audit_of_law,
    )
    from dpgames.analysis.nst import (
        DominantLeastQ as DominantLeastQ,
        dominant_affordable as dominant_affordable,
        dominant_least_q as dominant_least_q,
        dominant_profile_count as dominant_profile_count,
        least_q as least_q,
        nst_report as nst_report,
    )
    from dpgames.analysis.ordinal_audit import OrdinalAudit as OrdinalAudit
    from dpgames.analysis.sampled_audit import (
        BayesianAudit as BayesianAudit,
        SampledAudit as SampledAudit,
        samples_for_power as samples_for_power,
    )
    from dpgames.analysis.truthfulness import (
        TruthfulnessAudit as TruthfulnessAudit,
        TruthfulnessVerdict as TruthfulnessVerdict,
        TypeSpaceAudit as TypeSpaceAudit,
        truthfulness_audit as truthfulness_audit,
    )

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
