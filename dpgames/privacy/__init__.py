"""Differential-privacy building blocks and accounting.  Imports nothing else of dpgames but the
package-neutral leaf modules ``dpgames.validation`` (checks and errors), ``dpgames._lazy`` and, when an
object is shown in Jupyter, ``dpgames.display``.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "Accountant": "dpgames.privacy.accounting",
    "BudgetExceededError": "dpgames.privacy.accounting",
    "PrivacyEvent": "dpgames.privacy.accounting",
    "FiniteAudit": "dpgames.privacy.audit",
    "StatisticalAudit": "dpgames.privacy.audit",
    "audit_black_box": "dpgames.privacy.audit",
    "audit_finite": "dpgames.privacy.audit",
    "hockey_stick_divergence": "dpgames.privacy.audit",
    "laplace_delta": "dpgames.privacy.audit",
    "RDPCurve": "dpgames.privacy.conversions",
    "rdp_to_dp": "dpgames.privacy.conversions",
    "zcdp_to_dp": "dpgames.privacy.conversions",
    "DiscreteGaussianMechanism": "dpgames.privacy.discrete",
    "DiscreteLaplaceMechanism": "dpgames.privacy.discrete",
    "sample_discrete_gaussian": "dpgames.privacy.discrete",
    "sample_discrete_laplace": "dpgames.privacy.discrete",
    "FiniteDistribution": "dpgames.privacy.distribution",
    "ExponentialMechanism": "dpgames.privacy.exponential",
    "GaussianMechanism": "dpgames.privacy.gaussian",
    "gaussian_delta": "dpgames.privacy.gaussian",
    "PrivacyGuarantee": "dpgames.privacy.guarantee",
    "LaplaceMechanism": "dpgames.privacy.laplace",
    "Neighbouring": "dpgames.privacy.neighbouring",
    "ReportNoisyMax": "dpgames.privacy.noisy_max",
    "permute_and_flip": "dpgames.privacy.noisy_max",
    "PMWResult": "dpgames.privacy.pmw",
    "PrivateMultiplicativeWeights": "dpgames.privacy.pmw",
    "KaryResponse": "dpgames.privacy.randomized_response",
    "WarnerResponse": "dpgames.privacy.randomized_response",
    "as_generator": "dpgames.privacy.rng",
    "AboveThreshold": "dpgames.privacy.sparse_vector",
    "SparseVector": "dpgames.privacy.sparse_vector",
    "SparseVectorHalted": "dpgames.privacy.sparse_vector",
    "SparseVectorResult": "dpgames.privacy.sparse_vector",
    "BinaryTreeCounter": "dpgames.privacy.tree_counter",
    "OnlineTreeCounter": "dpgames.privacy.tree_counter",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
