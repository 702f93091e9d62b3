"""dpgames: mechanism design with differential privacy, simulated and measured exactly.

The names below are the entry points a user starts from: type distributions and populations, the
mechanisms, the audits, the privacy accountant, the private mediator, scenarios, the validation
error and the assertions of :mod:`dpgames.testing`.  The rest of the public API lives in the
subpackages' ``__all__`` (``dpgames.privacy``, ``dpgames.mechanisms``, ``dpgames.games``,
``dpgames.analysis``, ``dpgames.markets``, ``dpgames.scenarios``, ``dpgames.sweep``) and in
:mod:`dpgames.agents`, :mod:`dpgames.estimates`, :mod:`dpgames.testing` and
:mod:`dpgames.validation`; everything else may change.  Names are imported on first use (PEP 562),
so ``import dpgames`` stays cheap.

Examples
--------
>>> import dpgames
>>> "DigitalGoodsAuction" in dpgames.__all__, "line_graph" in dpgames.__all__
(True, False)
>>> from dpgames.mechanisms import line_graph  # everything else: from its subpackage
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

try:  # the version lives in pyproject.toml only
    __version__ = version("dpgames")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.agents import (
        Beta as Beta,
        Discrete as Discrete,
        Population as Population,
        Uniform as Uniform,
    )
    from dpgames.analysis import (
        misreport_audit as misreport_audit,
        nst_report as nst_report,
        truthfulness_audit as truthfulness_audit,
    )
    from dpgames.games import PrivateMediator as PrivateMediator, load_tntp as load_tntp
    from dpgames.mechanisms import (
        CommitmentMechanism as CommitmentMechanism,
        CustomMechanism as CustomMechanism,
        DigitalGoodsAuction as DigitalGoodsAuction,
        Environment as Environment,
        HuangKannan as HuangKannan,
        NSTMix as NSTMix,
        ObjectiveExponentialMechanism as ObjectiveExponentialMechanism,
    )
    from dpgames.privacy import (
        Accountant as Accountant,
        ExponentialMechanism as ExponentialMechanism,
        FiniteDistribution as FiniteDistribution,
        audit_black_box as audit_black_box,
        audit_finite as audit_finite,
        audit_privacy as audit_privacy,
        neighbouring_inputs as neighbouring_inputs,
    )
    from dpgames.scenarios import (
        Scenario as Scenario,
        ScenarioError as ScenarioError,
        run_scenario as run_scenario,
    )
    from dpgames.testing import assert_private as assert_private, assert_truthful as assert_truthful
    from dpgames.validation import ValidationError as ValidationError

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
