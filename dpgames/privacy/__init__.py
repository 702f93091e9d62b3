"""Differential-privacy building blocks and accounting.  Imports nothing else of dpgames."""

from dpgames.privacy.accounting import Accountant, BudgetExceededError, PrivacyEvent
from dpgames.privacy.audit import (
    FiniteAudit,
    StatisticalAudit,
    audit_black_box,
    audit_finite,
    hockey_stick_divergence,
    laplace_delta,
)
from dpgames.privacy.conversions import rdp_to_dp, zcdp_to_dp
from dpgames.privacy.discrete import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from dpgames.privacy.distribution import FiniteDistribution, as_generator
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.gaussian import GaussianMechanism, gaussian_delta
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.laplace import LaplaceMechanism
from dpgames.privacy.noisy_max import ReportNoisyMax, permute_and_flip
from dpgames.privacy.pmw import PMWResult, PrivateMultiplicativeWeights
from dpgames.privacy.randomized_response import KaryResponse, WarnerResponse
from dpgames.privacy.sparse_vector import AboveThreshold, SparseVector, SparseVectorHalted, SparseVectorResult
from dpgames.privacy.tree_counter import BinaryTreeCounter, OnlineTreeCounter

__all__ = [
    "AboveThreshold", "Accountant", "BinaryTreeCounter", "BudgetExceededError", "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism", "ExponentialMechanism", "FiniteAudit", "FiniteDistribution", "GaussianMechanism",
    "KaryResponse", "LaplaceMechanism", "OnlineTreeCounter", "PMWResult", "PrivacyEvent", "PrivacyGuarantee",
    "PrivateMultiplicativeWeights", "ReportNoisyMax", "SparseVector", "SparseVectorHalted", "SparseVectorResult",
    "StatisticalAudit", "WarnerResponse", "as_generator", "audit_black_box", "audit_finite", "gaussian_delta",
    "hockey_stick_divergence", "laplace_delta", "permute_and_flip", "rdp_to_dp", "sample_discrete_gaussian",
    "sample_discrete_laplace", "zcdp_to_dp",
]
