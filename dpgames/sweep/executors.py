"""What a sweep cell runs, and where: the executors of :mod:`dpgames._executors` (this process,
local worker processes or a Dask cluster; the sweep loop is the same for all three).  A cell's
result depends only on the scenario, its parameters, the root seed and its seed index (see
:mod:`dpgames.sweep.grid`), never on the executor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpgames._executors import (  # the executors, shared with the strategic enumerations
    CONNECT_GRACE as CONNECT_GRACE,
    PINNED_BY_DASK as PINNED_BY_DASK,
    SerialExecutor as SerialExecutor,
    _check_workers as _check_workers,
    dask_executor as dask_executor,
    default_workers as default_workers,
    exit_with_parent as exit_with_parent,
    local_cluster as local_cluster,
    local_executor as local_executor,
    process_context as process_context,
    run_all as run_all,
    worker_versions as worker_versions,
)
from dpgames.scenarios import Scenario, ScenarioError
from dpgames.scenarios.budget import Budget
from dpgames.sweep.grid import Cell, cell_seed
from dpgames.validation import ValidationError


def run_cell(
    scenario: Scenario, cell: Cell, root: int, budget: Budget | None = None
) -> dict[str, Any]:
    """Run one cell and return its record; an error is recorded in it, never raised (the sweep goes
    on).

    Parameters
    ----------
    scenario : Scenario
        The base scenario (the cell's parameters override its fields).
    cell : Cell
    root : int
        The sweep's root seed (the cell's seed is :func:`~dpgames.sweep.grid.cell_seed`).
    budget : Budget, optional

    Returns
    -------
    dict
        ``{"params", "seed", "status": "ok", "metrics", "labels"}`` or ``{..., "status": "error",
        "error"}``; the runner keeps ``labels`` out of the results file (see
        :func:`~dpgames.sweep.run_sweep`).
    """
    record: dict[str, Any] = {"params": cell.params, "seed": cell.seed_index}
    try:
        result = scenario.with_overrides(cell.params).run(cell_seed(root, cell.seed_index), budget)
    except (ScenarioError, ValidationError) as exc:
        return {**record, "status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - any failure of one cell is recorded with its cause
        return {**record, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return {
        **record,
        "status": "ok",
        "metrics": {str(k): json_value(v) for k, v in result.metrics.items()},
        "labels": {str(k): str(v) for k, v in result.labels.items()},
    }


def json_value(value: Any) -> Any:
    """A metric as strict JSON: numpy scalars as Python numbers, a non-finite float as the text
    ``"nan"``, ``"inf"`` or ``"-inf"`` (summaries read any text as not a number), lists and tables
    element by element, anything else as its text."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return str(value)
