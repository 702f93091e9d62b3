"""Differential-privacy building blocks and accounting.  Imports nothing else of dpgames but the
package-neutral leaf modules ``dpgames.validation`` (checks and errors), ``dpgames._lazy`` and, when
an object is shown in Jupyter, ``dpgames.display``.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.privacy.accounting import (
        Accountant as Accountant,
        BudgetExceededError as BudgetExceededError,
        PrivacyEvent as PrivacyEvent,
    )
    from dpgames.privacy.audit import (
        DeclaresNeighbours as DeclaresNeighbours,
        HasOutputLaw as HasOutputLaw,
        audit_finite as audit_finite,
        audit_privacy as audit_privacy,
        hockey_stick_divergence as hockey_stick_divergence,
        laplace_delta as laplace_delta,
    )
    from dpgames.privacy.audit_result import PrivacyAudit as PrivacyAudit
    from dpgames.privacy.black_box import (
        audit_black_box as audit_black_box,
        clopper_pearson as clopper_pearson,
    )
    from dpgames.privacy.conversions import (
        RDPCurve as RDPCurve,
        rdp_to_dp as rdp_to_dp,
        zcdp_to_dp as zcdp_to_dp,
    )
    from dpgames.privacy.discrete import (
        DiscreteGaussianMechanism as DiscreteGaussianMechanism,
        DiscreteLaplaceMechanism as DiscreteLaplaceMechanism,
        sample_discrete_gaussian as sample_discrete_gaussian,
        sample_discrete_laplace as sample_discrete_laplace,
    )
    from dpgames.privacy.distribution import FiniteDistribution as FiniteDistribution
    from dpgames.privacy.exact_laws import (
        binned as binned,
        noisy_max_law as noisy_max_law,
        sparse_vector_law as sparse_vector_law,
    )
    from dpgames.privacy.exponential import ExponentialMechanism as ExponentialMechanism
    from dpgames.privacy.gaussian import (
        GaussianMechanism as GaussianMechanism,
        gaussian_delta as gaussian_delta,
    )
    from dpgames.privacy.guarantee import PrivacyGuarantee as PrivacyGuarantee
    from dpgames.privacy.laplace import LaplaceMechanism as LaplaceMechanism
    from dpgames.privacy.neighbour_inputs import (
        Neighbours as Neighbours,
        neighbouring_inputs as neighbouring_inputs,
    )
    from dpgames.privacy.neighbouring import Neighbouring as Neighbouring
    from dpgames.privacy.noisy_max import (
        ReportNoisyMax as ReportNoisyMax,
        permute_and_flip as permute_and_flip,
    )
    from dpgames.privacy.pmw import (
        PMWResult as PMWResult,
        PrivateMultiplicativeWeights as PrivateMultiplicativeWeights,
    )
    from dpgames.privacy.randomized_response import (
        KaryResponse as KaryResponse,
        WarnerResponse as WarnerResponse,
    )
    from dpgames.privacy.rng import as_generator as as_generator
    from dpgames.privacy.sparse_vector import (
        AboveThreshold as AboveThreshold,
        SparseVector as SparseVector,
        SparseVectorHalted as SparseVectorHalted,
        SparseVectorResult as SparseVectorResult,
    )
    from dpgames.privacy.testbed import (
        TESTBED as TESTBED,
        BenchmarkMechanism as BenchmarkMechanism,
        benchmark_mechanism as benchmark_mechanism,
    )
    from dpgames.privacy.tree_counter import (
        BinaryTreeCounter as BinaryTreeCounter,
        OnlineTreeCounter as OnlineTreeCounter,
    )

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
