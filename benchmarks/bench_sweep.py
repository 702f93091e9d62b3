"""Sweep throughput: a CPU-bound sweep of 200 cells on 2 local worker processes against 1 (goal >=
1.8x), on a Dask LocalCluster, and Dask's overhead per cell.

    python benchmarks/bench_sweep.py [--seeds 20] [--repeats 2] [--no-dask]    # minutes, even on 2 idle cores

Cells: the digital-goods scenario (scenarios/digital_goods.toml: n = 1000 bidders, exact misreport
audit, RSOP with 2000 splits), epsilon over 10 values x 20 seeds.  The baseline is ``--workers 1``
(cells run in this process, no pool).  Worker processes fork from a fork server that imports dpgames
once (about 1 CPU-second) when a Python process first needs workers: a first 2-worker sweep, timed
alone (cold), pays it; the interleaved ones do not (warm: the app, a notebook, repeated sweeps).
"cores obtained" is the CPU time of this process and all its descendants (read from /proc) over the
wall time: on a machine shared with other work it bounds the speed-up, so the CPU-seconds ratio
(baseline / 2 workers) is printed too: twice it is the speed-up that 2 free cores would give.  The
baseline, the 2-worker sweep, the Dask sweep and the spin below are timed alternately, ``--repeats``
times in one process (benchmarks/_timing.py): every ratio is the median (range) of the
per-repetition ratios.  Dask's overhead per cell is measured on tiny cells (n = 30, no audit)
against the same cells run in this process, on an already running 1-worker LocalCluster: (T_dask -
T_serial) / cells.  Every run's records are checked equal to the baseline's, byte for byte.

**Available parallelism, measured in the same run.**  On a shared machine "1.8x on 2 workers" means
little by itself: a trivially parallel baseline (a pure-Python CPU spin, the same work twice: in
this process one after the other, then in 2 already-started worker processes at once) is timed in
every repetition beside the sweeps, and the sweep's speed-up is printed as a fraction of the spin's,
per repetition: 100% means the sweep used all the parallelism the machine gave at that moment.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from _timing import Spread, interleaved, print_machine

from dpgames.sweep import plan_sweep, run_sweep
from dpgames.sweep.executors import local_cluster

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "digital_goods.toml"
EPSILONS = "epsilon=" + ",".join(f"{0.1 * k:.1f}" for k in range(1, 11))
TINY = ["n=30", "audit.enabled=false", "rsop_samples=20"]


class CpuMeter:
    """CPU seconds used by this process and all its descendants while in the ``with`` block.

    Worker processes forked by a fork server are not our children (getrusage never sees them), so a
    thread reads every descendant's utime + stime from /proc every 50 ms and keeps the last value
    (the last 50 ms of a process that ends are missed)."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> CpuMeter:
        self.seen: dict[int, float] = {}
        self.start = self._own()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.seconds = self._own() - self.start + sum(self.seen.values())

    @staticmethod
    def _own() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return own.ru_utime + own.ru_stime

    def _watch(self) -> None:
        baseline = self._descendants()
        while not self._stop.wait(0.05):
            for pid, cpu in self._descendants().items():
                self.seen[pid] = cpu - baseline.get(pid, 0.0)

    def _descendants(self) -> dict[int, float]:
        stats = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            stats[int(entry.name)] = (
                int(fields[1]),
                (int(fields[11]) + int(fields[12])) / self.TICK,
            )
        parent = {pid: ppid for pid, (ppid, _) in stats.items()}
        ours = {os.getpid()}
        for pid in sorted(parent):
            chain, node = [], pid
            while node in parent and node not in ours and node > 1:
                chain.append(node)
                node = parent[node]
            if node in ours:
                ours.update(chain)
        return {pid: stats[pid][1] for pid in ours - {os.getpid()}}


class Sweeps:
    """Runs sweeps into fresh files of one folder (a sweep resumes from an existing file) and keeps
    each plan's first records: every later run of the plan must give the same, byte for byte."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.count, self.base = folder, 0, {}

    def __call__(self, plan, what: str, **executor) -> None:
        self.count += 1
        out = self.folder / f"sweep{self.count}.jsonl"
        run_sweep(plan, out, progress=False, **executor)
        lines = sorted(out.read_bytes().split(b"\n")[1:-1])
        check_same(lines, self.base.setdefault(id(plan), lines), what)


def check_same(lines: list[bytes], base: list[bytes], what: str) -> None:
    """Records must not depend on the executor: report the first differing record if they do."""
    for a, b in zip(lines, base):
        if a != b:
            raise AssertionError(f"{what} gave different records:\n  {a[:300]!r}\n  {b[:300]!r}")
    assert len(lines) == len(base), f"{what} gave {len(lines)} records, not {len(base)}"


SPIN_STEPS = 15_000_000  # about a second of pure-Python work per task on an idle core


def spin(steps: int) -> int:
    """Pure CPU work that shares nothing: the trivially parallel baseline."""
    total = 0
    for i in range(steps):
        total += i & 7
    return total


def row(t, name: str, note: str) -> None:
    wall, cores = t.seconds(name, "wall"), t.seconds(name) / t.seconds(name, "wall")
    print(f"  {name:<32} {wall:6.2f} s   cores obtained {cores:4.2f}   {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=int, default=20, help="seeds per epsilon (10 epsilons): 20 -> 200 cells"
    )
    parser.add_argument("--repeats", type=int, default=2, help="interleaved repetitions")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()

    heavy = plan_sweep(SCENARIO, [EPSILONS], args.seeds)
    cells = len(heavy.grid)
    print_machine()
    print(
        f"CPU-bound sweep: {cells} cells of {SCENARIO.name} (n = 1000, audit on); wall "
        "seconds, CPU seconds of this "
        f"process and its descendants; {args.repeats} interleaved reps, medians (range of "
        "the per-repetition ratios)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sweeps = Sweeps(Path(tmp))
        pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
        list(pool.map(spin, [1, 1]))  # start both spin workers before anything is timed
        start = time.perf_counter()
        sweeps(heavy, "2 workers (cold)", workers=2)
        print(
            f"  {'2 local worker processes, cold':<32} {time.perf_counter() - start:6.2f} "
            "s   (the fork server "
            "starts; timed alone, once)"
        )
        cases = {
            "1 worker (this process)": lambda: sweeps(heavy, "1 worker", workers=1),
            "2 local worker processes": lambda: sweeps(heavy, "2 workers", workers=2),
            "spin, serial": lambda: (spin(SPIN_STEPS), spin(SPIN_STEPS)),
            "spin, 2 processes": lambda: list(pool.map(spin, [SPIN_STEPS, SPIN_STEPS])),
        }
        if not args.no_dask:
            cases["Dask LocalCluster, 2 workers"] = lambda: sweeps(
                heavy, "Dask", workers=2, dask="local"
            )
        t = interleaved(cases, args.repeats, warmup=False, meter=CpuMeter)
        pool.shutdown()
        base = "1 worker (this process)"
        row(t, base, f"{1e3 * t.seconds(base, 'wall') / cells:.1f} ms/cell (baseline)")
        available = t.ratios("spin, serial", "spin, 2 processes", "wall")
        for name in [n for n in t.names if n not in (base, "spin, serial", "spin, 2 processes")]:
            efficiency = t.ratio(base, name)
            row(
                t,
                name,
                f"speed-up {t.ratio(base, name, 'wall')} (goal >= 1.8x); CPU-seconds "
                f"ratio {efficiency}: "
                f"{2 * efficiency.median:.2f}x on 2 free cores",
            )
            share = Spread.of(t.ratios(base, name, "wall") / available)
            print(
                f"  {'':<32} available parallelism (2-process spin) "
                f"{Spread.of(available)}: the sweep got "
                f"{share.median:.0%} of it ({share.low:.0%}-{share.high:.0%})"
            )
        if args.no_dask:
            print_machine("end")
            return

        tiny = plan_sweep(SCENARIO, [EPSILONS, *TINY], args.seeds)
        with local_cluster(1) as cluster:  # as --dask local starts it
            t = interleaved(
                {
                    "in process": lambda: sweeps(tiny, "tiny cells", workers=1),
                    "Dask": lambda: sweeps(
                        tiny, "Dask (tiny cells)", dask=cluster.scheduler_address
                    ),
                },
                args.repeats,
                warmup=False,
                meter=CpuMeter,
            )
        ts, tdask = t.seconds("in process", "wall"), t.seconds("Dask", "wall")
        print(
            f"Dask overhead on {cells} tiny cells: in process {1e3 * ts / cells:.2f} "
            "ms/cell, on a running "
            f"1-worker LocalCluster {1e3 * tdask / cells:.2f} ms/cell -> "
            f"{1e3 * (tdask - ts) / cells:.2f} ms "
            f"per cell (client connection included; medians of wall time)"
        )
    print_machine("end")


if __name__ == "__main__":
    main()
