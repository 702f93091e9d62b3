"""Run a sweep: plan the grid of a scenario file, run the unfinished cells on an executor, stream each
record to the results file as it finishes, and return the results table.

Any scenario kind can be swept: a cell is ``Scenario.with_overrides(params).run(cell_seed)``, exactly
the checks and code of ``dpgames run``; nothing here knows a kind.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgames.scenarios import Scenario, ScenarioError
from dpgames.scenarios.budget import Budget
from dpgames.scenarios.loader import versions
from dpgames.sweep.executors import dask_executor, default_workers, local_executor, run_all, run_cell
from dpgames.sweep.grid import Grid, build_grid
from dpgames.sweep.results import FORMAT, ResultsWriter, SweepError, SweepResults, load_results, read_raw

IN_FLIGHT_PER_WORKER = 4
DEFAULT_MAX_CELLS = 100_000


@dataclass(frozen=True)
class SweepPlan:
    """A scenario, its grid, its root seed (None: from the results file when resuming, else fresh)
    and the metrics its summary shows."""

    scenario: Scenario
    grid: Grid
    root: int | None
    summary: list[str] | None

    @property
    def base_sha256(self) -> str:
        """Hash of the scenario's fields outside ``[sweep]``: a resumed sweep must have the same."""
        base = {k: v for k, v in self.scenario.data.items() if k != "sweep"}
        return hashlib.sha256(json.dumps(base, sort_keys=True, default=str).encode()).hexdigest()

    def header(self, root: int) -> dict[str, Any]:
        data = self.scenario.data
        return {"format": FORMAT, "scenario": self.scenario.source, "scenario_sha256": self.base_sha256,
                "kind": self.scenario.kind, "title": data.get("title", self.scenario.kind),
                "root_seed": root, "parameters": self.grid.parameters, "seeds": self.grid.seeds,
                "summary": self.summary, "versions": versions()}


def plan_sweep(scenario: str | Path | Scenario, sets: Sequence[str] = (), seeds: int | None = None,
               seed: int | None = None, summary: Sequence[str] | None = None,
               max_cells: int = DEFAULT_MAX_CELLS) -> SweepPlan:
    """Validate a sweep of a scenario file: its ``[sweep]`` table overridden by ``--set NAME=VALUES``
    and ``--seeds``; the root seed is ``seed``, else the file's ``seed``.  A grid of more than
    ``max_cells`` cells (``--max-cells``) is refused before anything runs."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario.from_file(scenario)
    scenario.kind  # noqa: B018 - an unknown kind is an error now, not in every cell
    grid, table = build_grid(scenario.data, scenario.source, sets, seeds)
    check_cells(grid, max_cells)
    file_seed = scenario.data.get("seed")
    if file_seed is not None and (not isinstance(file_seed, int) or isinstance(file_seed, bool) or file_seed < 0):
        raise ScenarioError(f"{scenario.source}: field 'seed': must be a whole number >= 0 (got {file_seed!r})")
    if seed is not None and seed < 0:
        raise ScenarioError(f"--seed: must be a whole number >= 0 (got {seed})")
    root = seed if seed is not None else file_seed
    return SweepPlan(scenario, grid, root, list(summary) if summary else table.summary)


def check_cells(grid: Grid, max_cells: int) -> None:
    """Refuse a grid of more than ``max_cells`` cells, with its count and the option that raises it."""
    if isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 1:
        raise SweepError(f"--max-cells: must be a whole number >= 1 (got {max_cells!r})")
    cells = grid.count
    if cells > max_cells:
        combos = cells // grid.seeds
        raise SweepError(f"the sweep has {_count(cells)} cells ({_count(combos)} parameter combinations x "
                         f"{_count(grid.seeds)} seeds), "
                         f"more than --max-cells {max_cells:,}: use fewer values or seeds, or raise the limit "
                         f"with --max-cells")


def _count(n: int) -> str:
    if n < 10 ** 15:
        return f"{n:,}"
    return f"{float(n):.3g}" if n < 10 ** 300 else "more than 1e300"


@dataclass(frozen=True)
class SweepRun:
    """What a sweep did: cells run now (``retried`` of them had failed in the file before), cells
    already in the file, and the whole results table."""

    ran: int
    skipped: int
    results: SweepResults
    retried: int = 0


def _root_seed(plan: SweepPlan, out: Path, resume: bool) -> int:
    if plan.root is not None:
        return plan.root
    if resume and out.exists():
        header = read_raw(out).header
        if header is not None:
            return header["root_seed"]   # checked by read_raw
    return int(np.random.SeedSequence().entropy)


def run_sweep(plan: SweepPlan, out: str | Path, *, workers: int | None = None, dask: str | None = None,
              resume: bool = False, progress: bool = True, dask_timeout: float = 10.0,
              budget: Budget | None = None) -> SweepRun:
    """Run every cell of ``plan`` not yet in ``out`` and append each record to ``out`` as it finishes.

    Resuming skips the cells recorded ``ok`` and runs again the cells recorded with an error (their new
    record is appended; a reader keeps a cell's last record).  Every cell's run is checked against
    ``budget`` first (see :mod:`dpgames.scenarios.budget`): a cell over it is recorded as failed.

    Executors: ``dask=None`` runs on ``workers`` local processes (default: every core; 1 runs in this
    process); ``dask="local"`` on a Dask LocalCluster of ``workers`` processes; ``dask="tcp://HOST:PORT"``
    on an existing cluster.  The records do not depend on the executor (see :mod:`dpgames.sweep.grid`)."""
    out = Path(out)
    workers = default_workers() if workers is None else workers
    root = _root_seed(plan, out, resume)
    with ResultsWriter(out, plan.header(root), resume) as writer:
        skipped = plan.grid.count_cells(writer.finished)
        retried = plan.grid.count_cells(writer.failed)
        to_run = plan.grid.count - skipped
        ran = 0
        if to_run:   # cells are generated as they are submitted: memory does not grow with the grid
            todo = (cell for cell in plan.grid.cells() if cell.key not in writer.finished)
            executor = local_executor(workers) if dask is None else dask_executor(dask, workers, dask_timeout)
            with executor as (pool, slots), _progress_bar(to_run, progress) as bar:
                tasks = ((plan.scenario, cell, root, budget) for cell in todo)
                failed = 0
                for record in run_all(pool, run_cell, tasks, window=IN_FLIGHT_PER_WORKER * slots):
                    writer.append(record)
                    ran += 1
                    failed += record["status"] != "ok"
                    bar.update()
                    if failed:
                        bar.set_postfix(failed=failed, refresh=False)
    return SweepRun(ran, skipped, load_results(out), retried)


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="cell", file=sys.stderr, disable=None if enabled else True,
                dynamic_ncols=True)
