"""Scenario files (TOML) -> validated objects -> run -> :class:`Result`.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.scenarios.budget import Budget as Budget, BudgetError as BudgetError
    from dpgames.scenarios.invariants import (
        InternalError as InternalError,
        InvariantError as InvariantError,
        Invariants as Invariants,
        check_result as check_result,
    )
    from dpgames.scenarios.kind import ScenarioKind as ScenarioKind
    from dpgames.scenarios.loader import (
        ParsedScenario as ParsedScenario,
        Scenario as Scenario,
        run_scenario as run_scenario,
    )
    from dpgames.scenarios.registry import KindError as KindError
    from dpgames.scenarios.result import (
        Metric as Metric,
        Metrics as Metrics,
        MetricSet as MetricSet,
        Result as Result,
    )
    from dpgames.scenarios.spec import (
        FieldPath as FieldPath,
        ScenarioError as ScenarioError,
        Table as Table,
    )
    from dpgames.scenarios.toml_writer import TomlWriteError as TomlWriteError, to_toml as to_toml

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
