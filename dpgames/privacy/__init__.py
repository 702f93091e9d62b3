"""Differential-privacy building blocks and accounting.  Imports nothing else of dpgames."""

from dpgames.privacy.accounting import Accountant, BudgetExceededError, PrivacyEvent
from dpgames.privacy.conversions import rdp_to_dp, zcdp_to_dp
from dpgames.privacy.distribution import FiniteDistribution, as_generator
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.tree_counter import BinaryTreeCounter, OnlineTreeCounter

__all__ = [
    "Accountant", "BinaryTreeCounter", "BudgetExceededError", "ExponentialMechanism", "FiniteDistribution",
    "OnlineTreeCounter", "PrivacyEvent", "PrivacyGuarantee", "as_generator", "rdp_to_dp", "zcdp_to_dp",
]
