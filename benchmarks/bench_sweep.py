"""Sweep throughput: a CPU-bound sweep of 200 cells on 2 local worker processes against 1 (goal >= 1.8x),
on a Dask LocalCluster, and Dask's overhead per cell.

    python benchmarks/bench_sweep.py            # about 1.5 minutes on 2 idle cores

Cells: the digital-goods scenario (scenarios/digital_goods.toml: n = 1000 bidders, exact misreport audit,
RSOP with 2000 splits), epsilon over 10 values x 20 seeds.  The baseline is ``--workers 1`` (cells run
in this process, no pool).  The 2-worker wall time includes starting the worker processes (each imports
dpgames: about 1 CPU-second), as a user pays it; the start-up is also timed alone, to give the speed-up
of the sweep proper.  "cores obtained" is the CPU time the run used (this process and its children,
from getrusage) over its wall time: on a machine shared with other work it bounds the speed-up.
Dask's overhead per cell is measured on tiny cells (n = 30, no audit) against the same cells run in
this process, on an already running 1-worker LocalCluster: (T_dask - T_serial) / cells.  Every run's
records are checked equal to the baseline's, byte for byte.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from dpgames.sweep import plan_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "digital_goods.toml"
EPSILONS = "epsilon=" + ",".join(f"{0.1 * k:.1f}" for k in range(1, 11))
TINY = ["n=30", "audit.enabled=false", "rsop_samples=20"]


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_sweep(plan, out: Path, **executor) -> tuple[float, float, list[bytes]]:
    """Wall time, cores obtained (CPU / wall) and the sorted record lines of one sweep into ``out``."""
    cpu, start = cpu_seconds(), time.perf_counter()
    run_sweep(plan, out, progress=False, **executor)
    wall = time.perf_counter() - start
    return wall, (cpu_seconds() - cpu) / wall, sorted(out.read_bytes().split(b"\n")[1:-1])


def check_same(lines: list[bytes], base: list[bytes], what: str) -> None:
    """Records must not depend on the executor: report the first differing record if they do."""
    for a, b in zip(lines, base):
        if a != b:
            raise AssertionError(f"{what} gave different records:\n  {a[:300]!r}\n  {b[:300]!r}")
    assert len(lines) == len(base), f"{what} gave {len(lines)} records, not {len(base)}"


def _import_dpgames(_: int) -> None:
    import dpgames.scenarios.digital_goods  # noqa: F401 - what a worker imports before its first cell


def pool_start_seconds(workers: int) -> float:
    """Wall time to start ``workers`` spawned processes that have imported dpgames."""
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_import_dpgames, range(workers)))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per epsilon (10 epsilons): 20 -> 200 cells")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()

    heavy = plan_sweep(SCENARIO, [EPSILONS], args.seeds)
    cells = len(heavy.grid)
    print(f"CPU-bound sweep: {cells} cells of {SCENARIO.name} (n = 1000, audit on); {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t1, c1, base = timed_sweep(heavy, folder / "w1.jsonl", workers=1)
        print(f"  1 worker (this process)       {t1:6.2f} s  {1e3 * t1 / cells:5.1f} ms/cell"
              f"                           cores obtained {c1:.2f}  (baseline)")
        t2, c2, lines = timed_sweep(heavy, folder / "w2.jsonl", workers=2)
        check_same(lines, base, "2 workers")
        boot = pool_start_seconds(2)
        print(f"  2 local worker processes      {t2:6.2f} s  speed-up {t1 / t2:.2f}x (goal >= 1.8x)"
              f"           cores obtained {c2:.2f}")
        print(f"      of which starting 2 workers {boot:4.2f} s; the sweep proper: speed-up {t1 / (t2 - boot):.2f}x")
        if args.no_dask:
            return
        from distributed import LocalCluster
        td, cd, lines = timed_sweep(heavy, folder / "dask.jsonl", workers=2, dask="local")
        check_same(lines, base, "Dask")
        print(f"  Dask LocalCluster, 2 workers  {td:6.2f} s  speed-up {t1 / td:.2f}x (cluster start included)"
              f"  cores obtained {cd:.2f}")

        tiny = plan_sweep(SCENARIO, [EPSILONS, *TINY], args.seeds)
        ts, _, base = timed_sweep(tiny, folder / "tiny1.jsonl", workers=1)
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster:
            tdask, _, lines = timed_sweep(tiny, folder / "tinydask.jsonl", dask=cluster.scheduler_address)
        check_same(lines, base, "Dask (tiny cells)")
        print(f"Dask overhead on {cells} tiny cells: in process {1e3 * ts / cells:.2f} ms/cell, on a running "
              f"1-worker LocalCluster {1e3 * tdask / cells:.2f} ms/cell -> {1e3 * (tdask - ts) / cells:.2f} ms "
              "per cell (client connection included)")


if __name__ == "__main__":
    main()
