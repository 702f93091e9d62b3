"""Benchmark of exact dominant-strategy audits at scale: batched rules, the audit's cost per rule call,
local processes and a Dask cluster.

Run:  python benchmarks/bench_strategic_scale.py          (add --quick for a smaller, faster pass)

Every row gives the wall-clock and the CPU time of this process (the machine may be shared: CPU time is
the steadier figure; worker processes' CPU is not in it).  Each comparison alternates its two sides in
the same process, ``--repeats`` times, and prints the best of each.

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

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


def timed(fn):
    """``(result, wall seconds, CPU seconds of this process)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def alternate(repeats: int, **sides):
    """Each side run ``repeats`` times, alternately: ``{name: (result, best wall, best CPU)}``."""
    best: dict = {}
    for _ in range(repeats):
        for name, fn in sides.items():
            out, wall, cpu = timed(fn)
            _, w, c = best.get(name, (None, float("inf"), float("inf")))
            best[name] = (out, min(w, wall), min(c, cpu))
    return best


def overhead(repeats: int, n: int, m: int) -> None:
    calls = m ** n
    tuples = list(itertools.product(range(m), repeat=n))

    def audit():
        mech = CustomMechanism(constant, distance, types=range(m))
        dominant_audit(mech, n)
        return mech.rule_calls

    def direct():
        for p in tuples:
            constant(p)
        return len(tuples)

    best = alternate(repeats, audit=audit, direct=direct)
    assert best["audit"][0] == calls
    a, d = best["audit"][2] / calls * 1e6, best["direct"][2] / calls * 1e6
    print(f"   {n} agents x {m} types, {calls:,} rule calls: audit {a:.2f} us CPU per call, direct loop "
          f"{d:.2f} us: the audit's own cost {a - d:.2f} us per call")


def row(name: str, result, wall: float, cpu: float) -> None:
    print(f"   {name:<34}{result.profiles:>11,}{result.laws:>12,}{wall:>9.2f}{cpu:>9.2f}{result.max_gain:>9.3g}")


def header() -> None:
    print(f"   {'':<34}{'profiles':>11}{'rule calls':>12}{'wall s':>9}{'CPU s':>9}{'max gain':>9}")


def matching(repeats: int) -> None:
    header()
    plain = CustomMechanism(students_da, partner_utility, types=R4, name="DA 4x4 plain")
    batched = CustomMechanism(students_da_batch, partner_utility, types=R4, batched=True, name="DA 4x4 batched")
    best = alternate(repeats, plain=lambda: dominant_audit(plain, 4), batched=lambda: dominant_audit(batched, 4))
    assert best["plain"][0].worst_case == best["batched"][0].worst_case
    for name in ("plain", "batched"):
        row(f"DA 4x4, students report, {name}", *best[name])
    roles = {"roles": {"student": R3, "school": R3}, "agent_roles": ["student"] * 3 + ["school"] * 3}
    plain2 = CustomMechanism(two_sided_da, partner_utility, **roles)
    batched2 = CustomMechanism(two_sided_da_batch, partner_utility, batched=True, **roles)
    best = alternate(repeats, plain=lambda: dominant_audit(plain2, 6), batched=lambda: dominant_audit(batched2, 6))
    assert best["plain"][0].worst_case == best["batched"][0].worst_case
    for name in ("plain", "batched"):
        row(f"DA 3x3, both sides report, {name}", *best[name])


def voting(voters: list[int]) -> None:
    header()
    for n in voters:
        mech = CustomMechanism(borda_batch, rank_utility, types=R4, anonymous=True, batched=True)
        row(f"Borda, 4 alternatives, {n} voters", *timed(lambda: dominant_audit(mech, n, progress=False)))


def parallel(repeats: int, n: int) -> None:
    """Chunks of Borda (n voters) on 1 and 2 workers: Dask LocalClusters started beforehand, and local processes."""
    mech = CustomMechanism(borda_batch, rank_utility, types=R4, anonymous=True, batched=True)
    chunk = 20_000
    serial = dominant_audit(mech, n, chunk_size=chunk)
    print(f"   Borda, 4 alternatives, {n} voters: {serial.profiles:,} multisets, chunks of {chunk:,} profiles")
    print(f"   {'':<24}{'wall s':>9}{'profiles/s':>12}")
    for workers in (1, 2):
        cluster = local_cluster(workers)
        try:
            address = cluster.scheduler_address
            best = alternate(repeats, run=lambda: dominant_audit(mech, n, chunk_size=chunk, dask=address))
        finally:
            cluster.close()
        assert best["run"][0].worst_case == serial.worst_case
        print(f"   {f'Dask, {workers} worker(s)':<24}{best['run'][1]:>9.2f}{serial.profiles / best['run'][1]:>12,.0f}")
    for workers in (1, 2):
        best = alternate(repeats, run=lambda: dominant_audit(mech, n, chunk_size=chunk, processes=workers))
        assert best["run"][0].worst_case == serial.worst_case
        kind = "this process" if workers == 1 else f"{workers} local processes"
        print(f"   {kind:<24}{best['run'][1]:>9.2f}{serial.profiles / best['run'][1]:>12,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    print("1. the audit's own cost per unbatched rule call (every profile of a constant rule)")
    overhead(repeats, 4 if args.quick else 5, 10)
    print("\n2. deferred acceptance, every profile, plain Python rule vs batched numpy rule")
    matching(repeats)
    print("\n3. Borda, 4 alternatives, anonymous voters, batched rule")
    voting([5] if args.quick else [5, 6, 7])
    print("\n4. the same chunks on 1 and 2 workers")
    parallel(repeats, 4 if args.quick else 6)


if __name__ == "__main__":
    main()
