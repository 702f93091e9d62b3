"""Scenario files (TOML) -> validated objects -> run -> :class:`Result`."""

from dpgames.scenarios.loader import Scenario, run_scenario
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import ScenarioError, Table

__all__ = ["Result", "Scenario", "ScenarioError", "Table", "run_scenario"]
