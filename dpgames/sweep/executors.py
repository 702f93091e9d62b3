"""Where sweep cells run: in this process, in local worker processes, or on a Dask cluster.

Every executor is a :class:`concurrent.futures.Executor` (Dask's through ``Client.get_executor``), so
the sweep loop is the same for all three.  A cell's result depends only on the scenario, its
parameters, the root seed and its seed index (see :mod:`dpgames.sweep.grid`), never on the executor.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from dpgames.scenarios import Scenario, ScenarioError
from dpgames.sweep.grid import Cell, cell_seed
from dpgames.sweep.results import SweepError

PINNED_BY_DASK = ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def run_cell(scenario: Scenario, cell: Cell, root: int) -> dict[str, Any]:
    """Run one cell and return its record; an error is recorded in it, never raised (the sweep goes on)."""
    record: dict[str, Any] = {"params": cell.params, "seed": cell.seed_index}
    try:
        result = scenario.with_overrides(cell.params).run(cell_seed(root, cell.seed_index))
    except ScenarioError as exc:
        return {**record, "status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - any failure of one cell is recorded with its cause
        return {**record, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return {**record, "status": "ok", "metrics": result.metrics}


class SerialExecutor(Executor):
    """Runs each task when it is submitted, in this process (``--workers 1``)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - delivered through the future, as other executors do
            future.set_exception(exc)
        return future


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


@contextmanager
def local_executor(workers: int) -> Iterator[tuple[Executor, int]]:
    """``workers`` processes (started fresh with "spawn": safe next to threads), or this process if 1;
    yields the executor and how many tasks it runs at once."""
    if workers < 1:
        raise SweepError(f"--workers: must be a whole number >= 1 (got {workers})")
    if workers == 1:
        yield SerialExecutor(), 1
        return
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool, workers
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def dask_executor(address: str, workers: int, connect_timeout: float = 10.0) -> Iterator[tuple[Executor, int]]:
    """An executor on a Dask cluster and its number of worker threads: ``"local"`` starts a LocalCluster
    of ``workers`` single-threaded worker processes on the loopback interface; otherwise ``address`` is
    a running scheduler (tcp://HOST:PORT)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SweepError("--dask needs the distributed package: pip install 'dpgames[sweep]'") from None
    cluster = None
    if address == "local":
        # Workers inherit this process's environment, as local worker processes do: Dask's default
        # MALLOC_TRIM_THRESHOLD_=65536 costs cells that churn large numpy temporaries about 30% more CPU,
        # and the BLAS thread counts it pins could change the bits of a threaded BLAS reduction.
        inherit = {f"distributed.nanny.pre-spawn-environ.{name}": None for name in PINNED_BY_DASK}
        with dask.config.set(inherit):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, silence_logs=logging.ERROR)
        address = cluster.scheduler_address
    try:
        client = _connect(Client, address, connect_timeout)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    try:
        yield client.get_executor(), max(1, sum(client.nthreads().values()))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _connect(client_class: type, address: str, timeout: float):
    try:
        return client_class(address, timeout=f"{timeout}s", set_as_default=False)
    except (OSError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SweepError(f"--dask {address}: cannot reach a Dask scheduler there ({reason})") from None


def run_all(executor: Executor, fn: Callable[..., Any], tasks: Iterable[tuple], window: int) -> Iterator[Any]:
    """Yield ``fn(*task)`` for every task as each finishes, keeping at most ``window`` tasks in flight
    (memory stays bounded however many cells the grid has)."""
    order: dict[Future, int] = {}
    try:
        for number, task in enumerate(tasks):
            order[executor.submit(fn, *task)] = number
            if len(order) >= window:
                yield from _finished(order)
        while order:
            yield from _finished(order)
    finally:
        for future in order:
            future.cancel()


def _finished(order: dict[Future, int]) -> Iterator[Any]:
    """Wait for at least one future; yield the results of the finished ones in submission order."""
    done, _ = wait(order, return_when=FIRST_COMPLETED)
    for future in sorted(done, key=order.__getitem__):
        del order[future]
        yield future.result()
