"""dpgames: mechanism design with differential privacy, simulated and measured exactly.

The names below are the entry points a user starts from: type distributions and populations, the
mechanisms, the audits, the privacy accountant, the private mediator, scenarios, the validation error and
the assertions of :mod:`dpgames.testing`.  The rest of the public API lives in the subpackages'
``__all__`` (``dpgames.privacy``, ``dpgames.mechanisms``, ``dpgames.games``, ``dpgames.analysis``,
``dpgames.markets``, ``dpgames.scenarios``, ``dpgames.sweep``) and in :mod:`dpgames.agents`, :mod:`dpgames.estimates`,
:mod:`dpgames.testing` and :mod:`dpgames.validation`; everything else may change.  Names are imported on
first use (PEP 562), so ``import dpgames`` stays cheap.

Examples
--------
>>> import dpgames
>>> "DigitalGoodsAuction" in dpgames.__all__, "line_graph" in dpgames.__all__
(True, False)
>>> from dpgames.mechanisms import line_graph  # everything else: from its subpackage
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from dpgames._lazy import attach

try:  # the version lives in pyproject.toml only
    __version__ = version("dpgames")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

_EXPORTS: dict[str, str] = {
    # agents: private types and populations
    "Beta": "dpgames.agents",
    "Discrete": "dpgames.agents",
    "Population": "dpgames.agents",
    "Uniform": "dpgames.agents",
    # mechanisms
    "CommitmentMechanism": "dpgames.mechanisms",
    "CustomMechanism": "dpgames.mechanisms",
    "DigitalGoodsAuction": "dpgames.mechanisms",
    "Environment": "dpgames.mechanisms",
    "HuangKannan": "dpgames.mechanisms",
    "NSTMix": "dpgames.mechanisms",
    "ObjectiveExponentialMechanism": "dpgames.mechanisms",
    # audits
    "misreport_audit": "dpgames.analysis",
    "nst_report": "dpgames.analysis",
    "truthfulness_audit": "dpgames.analysis",
    "audit_black_box": "dpgames.privacy",
    "audit_finite": "dpgames.privacy",
    "assert_private": "dpgames.testing",
    "assert_truthful": "dpgames.testing",
    # privacy building blocks
    "Accountant": "dpgames.privacy",
    "ExponentialMechanism": "dpgames.privacy",
    "FiniteDistribution": "dpgames.privacy",
    # large games
    "PrivateMediator": "dpgames.games",
    "load_tntp": "dpgames.games",
    # scenarios
    "Scenario": "dpgames.scenarios",
    "ScenarioError": "dpgames.scenarios",
    "run_scenario": "dpgames.scenarios",
    # bad input, everywhere
    "ValidationError": "dpgames.validation",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
