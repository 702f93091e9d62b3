"""Assertions for users' own test suites: exact checks of the properties mechanisms promise.

``assert_truthful(mechanism, types, tol=0)``: no agent gains more than ``tol`` by any lie, by exact
enumeration (every agent x every lie), failing with the worst (agent, true type, lie, gain).
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from dpgames.analysis.misreport import MisreportAudit, misreport_audit
from dpgames.analysis.truthfulness import AuditableMechanism, TruthfulnessAudit, truthfulness_audit
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Profile

#: Gains up to this (times the utility scale) are floating-point rounding, not incentives.
TRUTHFUL_ROUNDING = 1e-12


def assert_truthful(mechanism: AuditableMechanism | DigitalGoodsAuction, types: ArrayLike | Profile, *,
                    lies: ArrayLike | None = None, tol: float = 0.0) -> TruthfulnessAudit | MisreportAudit:
    """Assert that truthful reporting is a ``tol``-best response for every agent at this profile.

    ``mechanism``: any mechanism on an environment (the exponential mechanism, the commitment mechanism,
    the NST mix, Huang-Kannan; ``types`` are type labels or a :class:`Profile`, and every type of the
    environment is tried as a lie), or a :class:`DigitalGoodsAuction` (``types`` are the values, ``lies``
    the reports to try, by default exhaustive on a price grid: see :func:`misreport_audit`).  Gains up
    to ``1e-12 x max(1, utility range)`` count as rounding.  Returns the audit; raises AssertionError
    naming the worst agent, her true type, the lie and the gain."""
    if not tol >= 0:
        raise ValueError(f"tol must be a number >= 0, got {tol!r}")
    if isinstance(mechanism, DigitalGoodsAuction):
        audit = misreport_audit(mechanism, types, lies=lies)
        worst = audit.worst_case
        worst = {"agent": worst["agent"], "true_type": worst["true_value"], "lie": worst["lie"], "gain": worst["gain"]}
        passed = audit.max_gain <= tol + TRUTHFUL_ROUNDING
        tried = f"{audit.values.size} agents x {audit.lies.size} reports"
    else:
        if lies is not None:
            raise ValueError("lies: on an environment every type is tried as a lie; do not pass lies")
        profile = types if isinstance(types, Profile) else mechanism.environment.profile(types)
        audit = truthfulness_audit(mechanism, profile)
        worst = audit.worst_case
        passed = audit.is_truthful(tol)
        tried = f"{profile.n} agents x {mechanism.environment.n_types} types"
    if not passed:
        raise AssertionError(
            f"not truthful within tol={tol:g}: agent {worst['agent']} (true type {worst['true_type']!r}) gains "
            f"{worst['gain']:.6g} by reporting {worst['lie']!r} (the largest gain over {tried})")
    return audit
