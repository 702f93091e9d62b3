"""Measurements: revenue, welfare, the incentive to misreport, privacy audits.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "PrivacyLossAudit": "dpgames.analysis.auction_privacy",
    "privacy_audit_of_law": "dpgames.analysis.auction_privacy",
    "single_bid_privacy_audit": "dpgames.analysis.auction_privacy",
    "DominantAudit": "dpgames.analysis.custom_audit",
    "ExPostAudit": "dpgames.analysis.custom_audit",
    "MisreportAudit": "dpgames.analysis.misreport",
    "misreport_audit": "dpgames.analysis.misreport",
    "misreport_audit_of_law": "dpgames.analysis.misreport",
    "DominantLeastQ": "dpgames.analysis.nst",
    "dominant_affordable": "dpgames.analysis.nst",
    "dominant_least_q": "dpgames.analysis.nst",
    "dominant_profile_count": "dpgames.analysis.nst",
    "least_q": "dpgames.analysis.nst",
    "nst_report": "dpgames.analysis.nst",
    "BayesianAudit": "dpgames.analysis.sampled_audit",
    "SampledAudit": "dpgames.analysis.sampled_audit",
    "TruthfulnessAudit": "dpgames.analysis.truthfulness",
    "TypeSpaceAudit": "dpgames.analysis.truthfulness",
    "truthfulness_audit": "dpgames.analysis.truthfulness",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
