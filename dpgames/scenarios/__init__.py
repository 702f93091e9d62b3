"""Scenario files (TOML) -> validated objects -> run -> :class:`Result`.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "Budget": "dpgames.scenarios.budget",
    "BudgetError": "dpgames.scenarios.budget",
    "InvariantError": "dpgames.scenarios.invariants",
    "check_result": "dpgames.scenarios.invariants",
    "ScenarioKind": "dpgames.scenarios.kind",
    "ParsedScenario": "dpgames.scenarios.loader",
    "Scenario": "dpgames.scenarios.loader",
    "run_scenario": "dpgames.scenarios.loader",
    "KindError": "dpgames.scenarios.registry",
    "Metrics": "dpgames.scenarios.result",
    "Result": "dpgames.scenarios.result",
    "FieldPath": "dpgames.scenarios.spec",
    "ScenarioError": "dpgames.scenarios.spec",
    "Table": "dpgames.scenarios.spec",
    "TomlWriteError": "dpgames.scenarios.toml_writer",
    "to_toml": "dpgames.scenarios.toml_writer",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
