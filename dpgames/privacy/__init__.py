"""Differential-privacy building blocks and accounting.  Imports nothing else of dpgames."""

from dpgames.privacy.distribution import FiniteDistribution, as_generator
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee

__all__ = ["ExponentialMechanism", "FiniteDistribution", "PrivacyGuarantee", "as_generator"]
