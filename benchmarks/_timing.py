"""Interleaved timing, shared by every benchmark script: ratios that reproduce on a shared machine.

A ratio of two timings taken minutes apart measures the load as much as the code: another job may
start between them.  Here every repetition times each case once, back to back (the order rotated
from one repetition to the next, so no case is always first), and a ratio is computed per
repetition, from two timings taken under the same load; the median of those per-repetition ratios
and their range are reported, for CPU time (this process, every thread) and wall time.  Load raises
both timings of a repetition and leaves their ratio; the range says how far it did not.

    from _timing import interleaved, print_machine, row

    print_machine()
    t = interleaved({"ours": lambda: f(x), "floor": lambda: np.sort(x)}, repeats=7)
    print(t.line("ours", "floor"))   # ours 9.1 ms, floor 6.4 ms (median CPU); ours / floor 1.42x (1.38-1.51) CPU, ...
    row("f, n = 10^6", t, "ours", "floor", "goal <= 1.5x")   # the same line, labelled, with its goal

Scripts import it as ``_timing`` (``python benchmarks/bench_x.py`` puts ``benchmarks/`` on the
path).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class Meter(Protocol):
    """A context manager whose ``seconds`` holds the CPU seconds spent inside its ``with`` block."""

    seconds: float

    def __enter__(self) -> Meter: ...

    def __exit__(self, *exc: object) -> None: ...


class ProcessCpu:
    """CPU seconds of this process (all its threads) inside the ``with`` block."""

    seconds = 0.0

    def __enter__(self) -> ProcessCpu:
        self._start = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.process_time() - self._start


class TreeCpu:
    """CPU seconds of this process and all its descendants, living or finished, inside the ``with``
    block: worker processes of a pool (started by a fork server, a child of this process that reaps
    them) and of a Dask LocalCluster (children of its nannies).  Needs psutil (a dependency of
    Dask); without it, this process and the children it reaped."""

    seconds = 0.0

    def __enter__(self) -> TreeCpu:
        self._start = tree_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = tree_cpu() - self._start


def tree_cpu() -> float:
    """User + system seconds of this process and its descendants (each one's reaped children
    included)."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    try:
        import psutil
    except ImportError:
        return total
    for child in psutil.Process().children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:  # ended meanwhile: counted by its parent once reaped
            continue
        total += c.user + c.system + c.children_user + c.children_system
    return total


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, as ``lscpu`` prints it), else the platform's."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line: CPU model, cores, and the load average now (1, 5, 15 min)."""
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"CPU {cpu_model()!r}, {os.cpu_count()} cores; load average {load} (1, 5, 15 min)"


def print_machine(when: str = "start") -> None:
    """Print :func:`machine` with the UTC time: call it at the start and at the end of a run."""
    print(f"[{when} {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}] {machine()}", flush=True)


@dataclass(frozen=True)
class Spread:
    """Median and range of per-repetition values."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: np.ndarray) -> Spread:
        return cls(float(np.median(values)), float(np.min(values)), float(np.max(values)))

    def __truediv__(self, c: float) -> Spread:
        return Spread(self.median / c, self.low / c, self.high / c)

    def __str__(self) -> str:
        return f"{_num(self.median)}x ({_num(self.low)}-{_num(self.high)})"


def _num(x: float) -> str:
    return f"{x:.3g}" if x < 10 else f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


@dataclass(frozen=True)
class Timings:
    """Seconds per call of each case at each repetition (``wall`` and ``cpu``: repetitions x cases),
    the calls per repetition, and each case's last return value (``results``)."""

    names: tuple[str, ...]
    wall: np.ndarray
    cpu: np.ndarray
    calls: tuple[int, ...]
    results: dict[str, object]

    def _column(self, name: str, clock: str) -> np.ndarray:
        return (self.cpu if clock == "cpu" else self.wall)[:, self.names.index(name)]

    def seconds(self, name: str, clock: str = "cpu") -> float:
        """Median seconds per call of ``name``."""
        return float(np.median(self._column(name, clock)))

    def ratios(self, name: str, base: str, clock: str = "cpu") -> np.ndarray:
        """``name``'s time over ``base``'s at each repetition."""
        return self._column(name, clock) / self._column(base, clock)

    def ratio(self, name: str, base: str, clock: str = "cpu") -> Spread:
        """``name``'s time over ``base``'s, per repetition: median and range."""
        return Spread.of(self.ratios(name, base, clock))

    def line(self, name: str, base: str) -> str:
        """Median CPU time per call of ``name`` and ``base``, and ``name / base`` per repetition
        (CPU, wall)."""
        return (
            f"{name} {_duration(self.seconds(name))}, {base} "
            f"{_duration(self.seconds(base))} (median CPU); "
            f"{name} / {base} {self.ratio(name, base)} CPU, {self.ratio(name, base, 'wall')} wall, "
            f"median (range) of {self.cpu.shape[0]} interleaved reps"
        )


def row(label: str, t: Timings, name: str, base: str, goal: str = "") -> None:
    """Print one ratio row: ``label`` (padded to 40 characters), :meth:`Timings.line` of ``name``
    against ``base``, and ``goal`` if given."""
    print(f"  {label:<40} {t.line(name, base)}  {goal}".rstrip(), flush=True)


def interleaved(
    cases: Mapping[str, Callable[[], object]],
    repeats: int = 5,
    *,
    min_seconds: float = 0.05,
    warmup: bool = True,
    meter: Callable[[], Meter] = ProcessCpu,
) -> Timings:
    """Time every case once per repetition, back to back, ``repeats`` times.

    Parameters
    ----------
    cases : mapping of name -> zero-argument callable
    repeats : int
        Repetitions; each yields one timing of every case (and so one ratio of any two).
    min_seconds : float
        A case faster than this is called ``ceil(min_seconds / t)`` times per repetition (``t`` from
        the warm-up) and timed per call, so that neither the clocks' resolution nor the scheduler's
        time slice matters: on a loaded machine a call shorter than a slice often runs unpreempted,
        and its wall time would look shorter than a longer call's in proportion.
    warmup : bool
        Call each case once before timing (first calls import, compile and fill caches).  Without it
        each case is called once per repetition.
    meter : callable returning a :class:`Meter`
        The CPU clock; :class:`ProcessCpu` by default.  A script whose work runs in other processes
        passes a meter that counts them.

    Returns
    -------
    Timings
    """
    names = tuple(cases)
    calls, results = [], {}
    for name in names:
        if warmup:
            start = time.perf_counter()
            results[name] = cases[name]()
            once = time.perf_counter() - start
            if once < min_seconds:
                # a first call pays imports and caches: calibrate on a second one
                start = time.perf_counter()
                results[name] = cases[name]()
                once = time.perf_counter() - start
            calls.append(max(1, int(np.ceil(min_seconds / max(once, 1e-9)))))
        else:
            calls.append(1)
    wall, cpu = np.empty((repeats, len(names))), np.empty((repeats, len(names)))
    for rep in range(repeats):
        for j in np.roll(np.arange(len(names)), -rep):
            fn, number = cases[names[j]], calls[j]
            with meter() as clock:
                start = time.perf_counter()
                for _ in range(number):
                    results[names[j]] = fn()
                wall[rep, j] = (time.perf_counter() - start) / number
            cpu[rep, j] = clock.seconds / number
    return Timings(names, wall, cpu, tuple(calls), results)
