"""Run a sweep: plan the grid of a scenario file, run the unfinished cells on an executor, stream
each record to the results file as it finishes, and return the results table.

Any scenario kind can be swept: a cell is ``Scenario.with_overrides(params).run(cell_seed)``,
exactly the checks and code of ``dpgames run``; nothing here knows a kind.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgames._executors import ExecutorError
from dpgames.scenarios import Scenario, ScenarioError
from dpgames.scenarios.budget import Budget
from dpgames.scenarios.loader import default_title, file_seed, versions
from dpgames.sweep.executors import (
    dask_executor,
    default_workers,
    local_executor,
    run_all,
    run_cell,
)
from dpgames.sweep.grid import Grid, build_grid
from dpgames.sweep.results import (
    FORMAT,
    ResultsWriter,
    SweepError,
    SweepResults,
    labels_path,
    load_results,
    read_raw,
    write_labels,
)

IN_FLIGHT_PER_WORKER = 4
DEFAULT_MAX_CELLS = 100_000
#: A swept value that fails with the file's other fields is refused up front only if it fails in
#: every combination of the other swept fields, checked when they are at most this many.
MAX_CHECKED_COMBINATIONS = 64
#: The first this many distinct values of each swept field are checked before the sweep (one parse
#: each).
MAX_CHECKED_VALUES = 100


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
        """The results file's first line for the root seed ``root``."""
        data = self.scenario.data
        return {
            "format": FORMAT,
            "scenario": self.scenario.source,
            "scenario_sha256": self.base_sha256,
            "kind": self.scenario.kind,
            "title": data.get("title", default_title(self.scenario.kind)),
            "root_seed": root,
            "parameters": self.grid.parameters,
            "seeds": self.grid.seeds,
            "summary": self.summary,
            "versions": versions(),
        }


def plan_sweep(
    scenario: str | Path | Scenario,
    sets: Sequence[str] = (),
    seeds: int | None = None,
    seed: int | None = None,
    summary: Sequence[str] | None = None,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> SweepPlan:
    """Validate a sweep of a scenario file: its ``[sweep]`` table overridden by ``--set
    NAME=VALUES`` and ``--seeds``.  A grid of more than ``max_cells`` cells (``--max-cells``) is
    refused before anything runs.

    Parameters
    ----------
    scenario : str, Path or Scenario
    sets : sequence of str
        ``"NAME=VALUES"`` texts, as ``--set`` (``epsilon=0.1,0.5``,
        ``population.n=range:100:500:100``).
    seeds : int, optional
        Seeds per parameter combination (default: the ``[sweep]`` table's).
    seed : int, optional
        The root seed (default: the file's ``seed``; fresh entropy, recorded, if neither).
    summary : sequence of str, optional
        The metrics the printed summary shows.
    max_cells : int

    Returns
    -------
    SweepPlan

    Raises
    ------
    ScenarioError
        An invalid scenario, ``[sweep]`` table or ``--set``, or too many cells
        (:class:`~dpgames.sweep.results.SweepError`).
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.from_file(scenario)
    scenario.kind  # noqa: B018 - an unknown kind is an error now, not in every cell
    grid, table = build_grid(scenario.data, scenario.source, sets, seeds)
    check_cells(grid, max_cells)
    check_values_parse(scenario, grid)
    seed_in_file = file_seed(scenario.data, scenario.source)
    if seed is not None and seed < 0:
        raise ScenarioError(f"--seed: must be a whole number >= 0 (got {seed})")
    root = seed if seed is not None else seed_in_file
    return SweepPlan(scenario, grid, root, list(summary) if summary else table.summary)


def check_values_parse(
    scenario: Scenario, grid: Grid, max_combinations: int = MAX_CHECKED_COMBINATIONS
) -> None:
    """Refuse, before any cell runs, a swept value that makes the scenario invalid in every
    parameter combination it appears in (``--set epsilon=abc``), naming the field and the value.

    Each distinct value of each swept field (the first ``MAX_CHECKED_VALUES``) is first parsed with
    the file's other fields; only a value that fails there, with an error naming its field, is
    parsed with every combination of the other swept fields (at most ``max_combinations`` of them,
    else it is left to the cells), and refused only if all of them fail: a value invalid in just
    some combinations still runs, its failing cells recorded as failures.

    Parameters
    ----------
    scenario : Scenario
    grid : Grid
    max_combinations : int

    Raises
    ------
    SweepError
        ``field = value`` and the scenario's own message for it.
    """
    for name, values in grid.parameters.items():
        others = {k: v for k, v in grid.parameters.items() if k != name}
        for value in _distinct(values)[:MAX_CHECKED_VALUES]:
            error = _parse_error(scenario, {name: value})
            if error is None or name not in error:  # valid, or an error about another field
                continue
            combos = [
                dict(zip(others, c))
                for c in itertools.islice(itertools.product(*others.values()), max_combinations + 1)
            ]
            if len(combos) > max_combinations:
                continue
            if all(_parse_error(scenario, {**c, name: value}) is not None for c in combos):
                raise SweepError(f"swept value {name} = {value!r} is invalid: {error}", name)


def _distinct(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(type(v) is type(u) and v == u for u in out):
            out.append(v)
    return out


def _parse_error(scenario: Scenario, overrides: dict[str, Any]) -> str | None:
    try:
        scenario.with_overrides(overrides).parse(seed=0)
    except ScenarioError as exc:
        return str(exc)
    return None


def check_cells(grid: Grid, max_cells: int) -> None:
    """Refuse a grid of more than ``max_cells`` cells, with its count and the option that raises it.

    Parameters
    ----------
    grid : Grid
    max_cells : int

    Raises
    ------
    SweepError
    """
    if isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 1:
        raise SweepError(f"--max-cells: must be a whole number >= 1 (got {max_cells!r})")
    cells = grid.count
    if cells > max_cells:
        combos = cells // grid.seeds
        raise SweepError(
            f"the sweep has {_count(cells)} cells ({_count(combos)} parameter combinations x "
            f"{_count(grid.seeds)} seeds), "
            f"more than --max-cells {max_cells:,}: use fewer values or seeds, or raise the limit "
            f"with --max-cells"
        )


def _count(n: int) -> str:
    if n < 10**15:
        return f"{n:,}"
    return f"{float(n):.3g}" if n < 10**300 else "more than 1e300"


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
            return header["root_seed"]  # checked by read_raw
    return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # drawn from the OS: an int


def run_sweep(
    plan: SweepPlan,
    out: str | Path,
    *,
    workers: int | None = None,
    dask: str | None = None,
    resume: bool = False,
    progress: bool = True,
    dask_timeout: float = 10.0,
    budget: Budget | None = None,
) -> SweepRun:
    """Run every cell of ``plan`` not yet in ``out`` and append each record to ``out`` as it
    finishes.

    Resuming skips the cells recorded ``ok`` and runs again the cells recorded with an error (their
    new record is appended; a reader keeps a cell's last record).  Every cell's run is checked
    against ``budget`` first (see :mod:`dpgames.scenarios.budget`): a cell over it is recorded as
    failed. The metrics' labels go to the labels file beside ``out``
    (:func:`~dpgames.sweep.results.labels_path`).

    Parameters
    ----------
    plan : SweepPlan
    out : str or Path
        The results file (JSON Lines).
    workers : int, optional
        ``dask=None``: local processes (default: every core; 1 runs in this process);
        ``dask="local"``: the size of a Dask LocalCluster.
    dask : str, optional
        ``"local"`` or ``"tcp://HOST:PORT"`` of an existing cluster.  The records do not depend on
        the executor (see :mod:`dpgames.sweep.grid`).
    resume : bool
        Continue ``out`` (else an existing ``out`` is refused).
    progress : bool
        A progress bar on stderr.
    dask_timeout : float
        Seconds to try reaching the Dask scheduler.
    budget : Budget, optional
        Limits each cell's estimated memory and work.

    Returns
    -------
    SweepRun

    Raises
    ------
    SweepError
        ``out`` cannot be written, or cannot be resumed by this plan; the scheduler is unreachable.
    """
    out = Path(out)
    workers = default_workers() if workers is None else workers
    root = _root_seed(plan, out, resume)
    labels: dict[str, str] = {}  # the metrics' labels, kept once beside the results (for plots)
    with ResultsWriter(out, plan.header(root), resume) as writer, _saving_labels(out, labels):
        skipped = plan.grid.count_cells(writer.finished)
        retried = plan.grid.count_cells(writer.failed)
        to_run = plan.grid.count - skipped
        ran = 0
        if to_run:  # cells are generated as they are submitted: memory does not grow with the grid
            todo = (cell for cell in plan.grid.cells() if cell.key not in writer.finished)
            executor = (
                local_executor(workers)
                if dask is None
                else dask_executor(dask, workers, dask_timeout)
            )
            with (
                _as_sweep_error(),
                executor as (pool, slots),
                _progress_bar(to_run, progress) as bar,
            ):
                tasks = ((plan.scenario, cell, root, budget) for cell in todo)
                failed = 0
                for record in run_all(pool, run_cell, tasks, window=IN_FLIGHT_PER_WORKER * slots):
                    for metric, label in record.pop("labels", {}).items():
                        labels.setdefault(metric, label)
                    writer.append(record)
                    ran += 1
                    failed += record["status"] != "ok"
                    bar.update()
                    if failed:
                        bar.set_postfix(failed=failed, refresh=False)
    return SweepRun(ran, skipped, load_results(out), retried)


@contextlib.contextmanager
def _as_sweep_error():
    """The executors' errors (a bad address, a dead worker) as the sweep's own."""
    try:
        yield
    except SweepError:
        raise
    except ExecutorError as exc:
        raise SweepError(str(exc), exc.field) from None


@contextlib.contextmanager
def _saving_labels(out: Path, labels: dict[str, str]):
    """Write the labels gathered so far to the labels file when the sweep ends, even interrupted."""
    try:
        yield
    finally:
        if labels:
            write_labels(labels_path(out), labels)


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="cell",
        file=sys.stderr,
        disable=None if enabled else True,
        dynamic_ncols=True,
    )
