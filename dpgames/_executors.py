"""Where parallel work runs: in this process, in local worker processes, or on a Dask cluster.

Every executor is a :class:`concurrent.futures.Executor` (Dask's through ``Client.get_executor``),
so a loop over tasks is the same for all three (:func:`run_all`).  The parameter sweeps
(:mod:`dpgames.sweep`) and the exact strategic enumerations
(:mod:`dpgames.analysis.custom_enumeration`) run on them; a task's result must never depend on the
executor.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import re
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    BrokenExecutor,
    Executor,
    Future,
    ProcessPoolExecutor,
    wait,
)
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpgames.validation import ValidationError

PINNED_BY_DASK = (
    "MALLOC_TRIM_THRESHOLD_",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
)


class ExecutorError(ValidationError):
    """Bad input to parallel work (a results file, an executor's address) or a lost worker: one
    line."""

    def __init__(self, message: str, field: str = ""):
        super().__init__("", message)
        self.field = field


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


def process_context(preload: Sequence[str] = ("dpgames",)) -> multiprocessing.context.BaseContext:
    """How worker processes start: forked from a fork server that has imported the modules
    ``preload`` once (cheap to start, and safe next to threads, unlike a plain fork), else spawned
    fresh (where there is no fork).  The fork server is started once per process: the first caller's
    ``preload`` holds. Each worker still imports the main script (as ``__mp_main__``), finding the
    modules preloaded."""
    if "forkserver" not in multiprocessing.get_all_start_methods():  # pragma: no cover - Windows
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    return context


def exit_with_parent(parent: int, poll: float = 0.5) -> None:
    """Make this worker process exit as soon as process ``parent`` (the sweep) is gone, whatever
    killed it (even ``kill -9``, which runs no clean-up): a daemon thread waits on a pidfd of the
    parent (Linux >= 5.3: woken the moment it exits), else polls it every ``poll`` seconds."""
    threading.Thread(
        target=_watch, args=(parent, poll), name="dpgames-watch-parent", daemon=True
    ).start()


def _watch(parent: int, poll: float) -> None:
    try:
        fd = os.pidfd_open(parent)
    except (AttributeError, OSError):  # not Linux, an old kernel, or the parent is already gone
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os._exit(1)
    while _alive(parent):
        time.sleep(poll)
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else (the pid was reused)
        return False
    return True


@contextmanager
def local_executor(workers: int) -> Iterator[tuple[Executor, int]]:
    """``workers`` processes (see :func:`process_context`), or this process if 1; yields the
    executor and how many tasks it runs at once."""
    if workers < 1:
        raise ExecutorError(f"--workers: must be a whole number >= 1 (got {workers})")
    if workers == 1:
        yield SerialExecutor(), 1
        return
    pool = ProcessPoolExecutor(
        workers, mp_context=process_context(), initializer=exit_with_parent, initargs=(os.getpid(),)
    )
    try:
        yield pool, workers
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def dask_executor(
    address: str, workers: int, connect_timeout: float = 10.0
) -> Iterator[tuple[Executor, int]]:
    """An executor on a Dask cluster and its number of worker threads: ``"local"`` starts a
    LocalCluster (see :func:`local_cluster`); otherwise ``address`` is a running scheduler
    (tcp://HOST:PORT)."""
    with dask_client(address, workers, connect_timeout) as client:
        yield client.get_executor(), max(1, sum(client.nthreads().values()))


@contextmanager
def dask_client(address: str, workers: int, connect_timeout: float = 10.0) -> Iterator[Any]:
    """A Client of a Dask cluster, its workers checked (:func:`_connect`): ``"local"`` starts a
    LocalCluster of ``workers`` workers (see :func:`local_cluster`), closed on exit; otherwise
    ``address`` is a running scheduler (tcp://HOST:PORT)."""
    try:
        from distributed import Client
    except ImportError:
        raise ExecutorError(
            "--dask needs the distributed package: pip install 'dpgames[sweep]'"
        ) from None
    cluster = local_cluster(workers) if address == "local" else None
    try:
        client = _connect(
            Client, cluster.scheduler_address if cluster else address, connect_timeout
        )
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@contextmanager
def worker_executors(
    workers: int, dask: str | None = None, preload: Sequence[str] = ("dpgames",)
) -> Iterator[list[tuple[Executor, int]]]:
    """One executor per worker process, each with the tasks it runs at once: ``workers`` local
    processes (one single-process pool each, forked from a fork server that imported ``preload``:
    see :func:`process_context`), or every worker of a Dask cluster (``dask``: ``"local"``, a
    LocalCluster of ``workers`` workers, or a scheduler's address), its tasks bound to that worker
    (they move to another only if it leaves the cluster).

    So a caller decides which process runs which task (:func:`run_striped`): a process that keeps
    state across its tasks (the laws of an enumeration) meets the tasks that share it."""
    if dask is not None:
        with dask_client(dask, workers) as client:
            yield [
                (
                    client.get_executor(workers=[address], allow_other_workers=True, pure=False),
                    max(1, threads),
                )
                for address, threads in sorted(client.nthreads().items())
            ]
        return
    if workers < 1:
        raise ExecutorError(f"--workers: must be a whole number >= 1 (got {workers})")
    pools = [
        ProcessPoolExecutor(
            1,
            mp_context=process_context(preload),
            initializer=exit_with_parent,
            initargs=(os.getpid(),),
        )
        for _ in range(workers)
    ]
    try:
        yield [(pool, 1) for pool in pools]
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)


def run_striped(
    executors: list[tuple[Executor, int]],
    fn: Callable[..., Any],
    tasks: list[tuple],
    in_flight: int,
) -> Iterator[Any]:
    """Yield ``fn(*task)`` for every task as each finishes, each executor running a contiguous
    stripe of ``tasks``: the list is cut into one stripe per executor, each executor takes its
    stripe's tasks in order (``in_flight`` per task it runs at once), and one that runs out takes
    the second half of the longest stripe left (so the stripes stay contiguous and no executor idles
    while work remains).

    Neighbouring tasks of an enumeration share most of their laws: a worker that keeps them computes
    each about once, where tasks dealt out in turn would make every worker meet nearly all of
    them."""
    k = len(executors)
    cuts = [round(len(tasks) * w / k) for w in range(k + 1)]
    stripes = [deque(tasks[a:b]) for a, b in zip(cuts, cuts[1:])]
    running: dict[Future, tuple[int, int]] = {}  # the executor, the submission's number
    submitted = itertools.count()
    busy = [0] * k

    def feed(w: int) -> None:
        executor, slots = executors[w]
        if not stripes[w]:
            donor = max(range(k), key=lambda v: len(stripes[v]))
            half = len(stripes[donor]) // 2
            stripes[w].extend(reversed([stripes[donor].pop() for _ in range(half)]))
        while stripes[w] and busy[w] < in_flight * slots:
            try:
                running[executor.submit(fn, *stripes[w].popleft())] = (w, next(submitted))
            except BrokenExecutor as exc:
                raise _task_lost() from exc
            busy[w] += 1

    try:
        for w in range(k):
            feed(w)
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f][1]):  # in submission order
                w = running.pop(future)[0]
                busy[w] -= 1
                try:
                    result = future.result()
                except BrokenExecutor as exc:
                    raise _task_lost() from exc
                feed(w)
                yield result
    finally:
        for future in running:
            future.cancel()


def _task_lost() -> ExecutorError:
    return ExecutorError(
        "a worker process died (killed, out of memory or crashed); every finished chunk is in the "
        "checkpoint, if one was given: run the same call again to resume"
    )


def local_cluster(workers: int):
    """A Dask LocalCluster of ``workers`` single-threaded worker processes on 127.0.0.1, its HTTP
    server (and dashboard, if bokeh is installed) on a free loopback port.

    Its workers inherit this process's environment, as local worker processes do: Dask's default
    MALLOC_TRIM_THRESHOLD_=65536 costs cells that churn large numpy temporaries about 30% more CPU
    (measured on the digital-goods scenario), and the BLAS thread counts it pins could change the
    bits of a threaded BLAS reduction."""
    import dask
    from distributed import LocalCluster

    inherit = {f"distributed.nanny.pre-spawn-environ.{name}": None for name in PINNED_BY_DASK}
    with dask.config.set(inherit):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )


def _connect(client_class: type, address: str, timeout: float):
    """A Client of the scheduler at ``address``, its workers checked (:func:`_check_workers`).

    Connecting runs in a watchdog thread: a server that accepts the connection but never answers
    (not a scheduler, or a hung one) would keep ``Client`` waiting forever whatever its ``timeout``;
    after ``timeout`` plus :data:`CONNECT_GRACE` seconds the sweep stops with one line instead."""
    if not re.fullmatch(r"[a-z]+://\S+:\d+", address):
        raise ExecutorError(
            "--dask: expected a scheduler address like tcp://HOST:PORT, or 'local' (got "
            f"{address!r})"
        )
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_class(address, timeout=f"{timeout}s", set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    thread = threading.Thread(target=connect, name="dpgames-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + CONNECT_GRACE)
    if thread.is_alive():
        raise ExecutorError(
            f"--dask {address}: something there accepted the connection but did not "
            "answer as a Dask "
            f"scheduler within {timeout + CONNECT_GRACE:g} s (--dask-timeout {timeout:g} plus "
            f"{CONNECT_GRACE:g}); check the address and that the scheduler is running"
        )
    error = box.get("error")
    if isinstance(error, (OSError, ValueError, TypeError)):
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ExecutorError(
            f"--dask {address}: cannot reach a Dask scheduler there ({reason})"
        ) from None
    if error is not None:
        raise error
    client = box["client"]
    try:
        _check_workers(client, address)
    except BaseException:
        client.close()
        raise
    return client


#: Seconds a Dask connection may take beyond ``--dask-timeout`` before the watchdog gives up.
CONNECT_GRACE = 5.0


def worker_versions() -> tuple[str, str]:
    """The dpgames and numpy versions of the process that calls it (run on each Dask worker).

    Returns
    -------
    (str, str)
    """
    from dpgames import __version__

    return __version__, np.__version__


def _check_workers(client: Any, address: str) -> None:
    """Refuse a cluster without workers, or whose workers run another dpgames or numpy than this
    process: a cell's numbers are reproducible only with the same code and the same numpy."""
    try:
        seen = client.run(worker_versions)
    except Exception as exc:  # noqa: BLE001 - a worker's failure, reported in one line
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ExecutorError(
            f"--dask {address}: the workers cannot run dpgames ({type(exc).__name__}: {reason}); "
            "install the same dpgames and numpy on every worker"
        ) from None
    if not seen:
        raise ExecutorError(
            f"--dask {address}: the scheduler has no worker; start some (dask worker {address})"
        )
    mine = worker_versions()
    for worker, versions in sorted(seen.items()):
        if tuple(versions) != mine:
            raise ExecutorError(
                f"--dask {address}: worker {worker} runs dpgames {versions[0]} with numpy "
                f"{versions[1]}, "
                f"this process dpgames {mine[0]} with numpy {mine[1]}; install the same versions "
                "on every worker (cells would not be reproducible)"
            )


def run_all(
    executor: Executor, fn: Callable[..., Any], tasks: Iterable[tuple], window: int
) -> Iterator[Any]:
    """Yield ``fn(*task)`` for every task as each finishes, keeping at most ``window`` tasks in
    flight (memory stays bounded however many cells the grid has)."""
    order: dict[Future, int] = {}
    try:
        for number, task in enumerate(tasks):
            try:
                order[executor.submit(fn, *task)] = number
            except BrokenExecutor as exc:  # the pool broke between two submissions
                raise _worker_died() from exc
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
        try:
            yield future.result()
        except BrokenExecutor as exc:
            raise _worker_died() from exc


def _worker_died() -> ExecutorError:
    return ExecutorError(
        "a worker process died (killed, out of memory or crashed) and the pool stopped; "
        "every finished cell is saved: run the sweep again with --resume"
    )
