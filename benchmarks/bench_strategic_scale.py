"""Benchmark of exact dominant-strategy audits at scale: batched rules, the audit's cost per rule call,
local processes and a Dask cluster.

Run:  python benchmarks/bench_strategic_scale.py          (add --quick for a smaller, faster pass)

Every row gives the wall-clock and the CPU time of this process (the machine may be shared: CPU time is
the steadier figure; worker processes' CPU is not in it).  Each comparison times its cases interleaved,
repetition by repetition, in this process (``benchmarks/_timing.py``, ``--repeats`` times): medians, and
the median and range of the per-repetition ratios; the machine and its load are printed at both ends.

1. The audit's own cost per call of an unbatched rule: every profile of a trivial rule (a constant), the
   audit's CPU time per rule call against a loop calling the same rule on as many report tuples.
2. Deferred acceptance (Gale & Shapley 1962), 4 students x 4 schools, students report rankings
   (331,776 profiles): the plain Python rule against the same rule written in numpy (``batched=True``),
   and both sides reporting, 3 x 3 (46,656 profiles, per-role type spaces).  Same verdict asserted.
3. Borda with 4 alternatives and ``n`` anonymous voters (multisets of rankings: 2,035,800 at n = 7),
   batched.
4. Throughput of the chunks on a Dask LocalCluster of 2 workers against 1 (cluster started beforehand,
   not timed), and on 2 local processes against this process (the pool's start timed).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from _timing import Timings, interleaved, print_machine, row  # noqa: E402

from dpgames import CustomMechanism  # noqa: E402
from dpgames._executors import local_cluster  # noqa: E402
from dpgames.analysis.custom_audit import dominant_audit  # noqa: E402
from dpgames.types import rankings  # noqa: E402
from strategic_rules import (  # noqa: E402 - after the path to the tests' example rules
    borda_batch,
    partner_utility,
    rank_utility,
    students_da,
    students_da_batch,
    two_sided_da,
    two_sided_da_batch,
)

R3, R4 = rankings(range(3)), rankings(range(4))


def constant(reports):
    return 0


def distance(t, outcome):
    return -abs(t - outcome)


def overhead(repeats: int, n: int, m: int) -> None:
    calls = m**n
    tuples = list(itertools.product(range(m), repeat=n))

    def audit():
        mech = CustomMechanism(constant, distance, types=range(m))
        dominant_audit(mech, n)
        return mech.rule_calls

    def direct():
        for p in tuples:
            constant(p)
        return len(tuples)

    t = interleaved({"audit": audit, "direct loop": direct}, repeats)
    assert t.results["audit"] == calls
    own = (t.ratios("audit", "direct loop") - 1) * t.seconds("direct loop") / calls * 1e6
    print(
        f"   {n} agents x {m} types, {calls:,} rule calls: audit {t.seconds('audit') / calls * 1e6:.2f} us CPU "
        f"per call, direct loop {t.seconds('direct loop') / calls * 1e6:.2f} us; the audit's own cost "
        f"{np.median(own):.2f} us per call (range {own.min():.2f}-{own.max():.2f} over {repeats} interleaved reps)"
    )


def table(t: Timings) -> None:
    """One line per case: profiles, rule calls, median wall and CPU seconds, the best lie's gain."""
    print(f"   {'':<34}{'profiles':>11}{'rule calls':>12}{'wall s':>9}{'CPU s':>9}{'max gain':>9}")
    for name in t.names:
        result = t.results[name]
        print(
            f"   {name:<34}{result.profiles:>11,}{result.laws:>12,}{t.seconds(name, 'wall'):>9.2f}"
            f"{t.seconds(name):>9.2f}{result.max_gain:>9.3g}"
        )


def matching(repeats: int) -> None:
    plain = CustomMechanism(students_da, partner_utility, types=R4, name="DA 4x4 plain")
    batched = CustomMechanism(
        students_da_batch, partner_utility, types=R4, batched=True, name="DA 4x4 batched"
    )
    roles = {
        "roles": {"student": R3, "school": R3},
        "agent_roles": ["student"] * 3 + ["school"] * 3,
    }
    plain2 = CustomMechanism(two_sided_da, partner_utility, **roles)
    batched2 = CustomMechanism(two_sided_da_batch, partner_utility, batched=True, **roles)
    t = interleaved(
        {
            "DA 4x4, students report, plain": lambda: dominant_audit(plain, 4),
            "DA 4x4, students report, batched": lambda: dominant_audit(batched, 4),
            "DA 3x3, both sides report, plain": lambda: dominant_audit(plain2, 6),
            "DA 3x3, both sides report, batched": lambda: dominant_audit(batched2, 6),
        },
        repeats,
    )
    for size in ("DA 4x4, students report", "DA 3x3, both sides report"):
        assert t.results[f"{size}, plain"].worst_case == t.results[f"{size}, batched"].worst_case
    table(t)
    for size in ("DA 4x4, students report", "DA 3x3, both sides report"):
        row(size, t, f"{size}, plain", f"{size}, batched")


def voting(repeats: int, voters: list[int]) -> None:
    mech = CustomMechanism(borda_batch, rank_utility, types=R4, anonymous=True, batched=True)
    table(
        interleaved(
            {
                f"Borda, 4 alternatives, {n} voters": (
                    lambda n=n: dominant_audit(mech, n, progress=False)
                )
                for n in voters
            },
            repeats,
            warmup=False,
        )
    )


def parallel(repeats: int, n: int) -> None:
    """Chunks of Borda (n voters) on 1 and 2 workers (Dask LocalClusters started beforehand, and local
    processes) against this process, interleaved; wall time (the work runs in other processes)."""
    mech = CustomMechanism(borda_batch, rank_utility, types=R4, anonymous=True, batched=True)
    chunk = 20_000
    serial = dominant_audit(mech, n, chunk_size=chunk)
    print(
        f"   Borda, 4 alternatives, {n} voters: {serial.profiles:,} multisets, chunks of {chunk:,} profiles"
    )
    clusters = [local_cluster(workers) for workers in (1, 2)]
    try:
        cases = {"this process": lambda: dominant_audit(mech, n, chunk_size=chunk)}
        for workers, cluster in zip((1, 2), clusters):
            cases[f"Dask, {workers} worker(s)"] = lambda a=cluster.scheduler_address: (
                dominant_audit(mech, n, chunk_size=chunk, dask=a)
            )
        cases["2 local processes"] = lambda: dominant_audit(mech, n, chunk_size=chunk, processes=2)
        t = interleaved(cases, repeats, warmup=False)
    finally:
        for cluster in clusters:
            cluster.close()
    print(f"   {'':<24}{'wall s':>9}{'profiles/s':>12}   wall time / this process's")
    for name in t.names:
        assert t.results[name].worst_case == serial.worst_case
        wall = t.seconds(name, "wall")
        print(
            f"   {name:<24}{wall:>9.2f}{serial.profiles / wall:>12,.0f}   {t.ratio(name, 'this process', 'wall')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    repeats = args.repeats or (2 if args.quick else 3)
    print_machine()
    print("1. the audit's own cost per unbatched rule call (every profile of a constant rule)")
    overhead(repeats, 4 if args.quick else 5, 10)
    print("\n2. deferred acceptance, every profile, plain Python rule vs batched numpy rule")
    matching(repeats)
    print("\n3. Borda, 4 alternatives, anonymous voters, batched rule")
    voting(repeats, [5] if args.quick else [5, 6, 7])
    print("\n4. the same chunks on 1 and 2 workers")
    parallel(repeats, 4 if args.quick else 6)
    print_machine("end")


if __name__ == "__main__":
    main()
