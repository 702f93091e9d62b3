"""Benchmark of exact dominant-strategy audits at scale: batched rules, the audit's cost per rule
call, local processes and a Dask cluster.

Run:  python benchmarks/bench_strategic_scale.py          (add --quick for a smaller, faster pass)

Every row gives the wall-clock and the CPU time of this process (the machine may be shared: CPU time
is the steadier figure; worker processes' CPU is not in it, but in section 4).  Each comparison
times its cases interleaved, repetition by repetition, in this process (``benchmarks/_timing.py``,
``--repeats`` times): medians, and the median and range of the per-repetition ratios; the machine
and its load are printed at both ends.

1. The audit's own cost per call of an unbatched rule: every profile of a trivial rule (a constant),
   the audit's CPU time per rule call against a loop calling the same rule on as many report tuples.
2. Deferred acceptance (Gale & Shapley 1962), 4 students x 4 schools, students report rankings
   (331,776 profiles): the plain Python rule against the same rule written in numpy
   (``batched=True``), and both sides reporting, 3 x 3 (46,656 profiles, per-role type spaces).
   Same verdict asserted.
3. Borda with 4 alternatives and ``n`` anonymous voters (multisets of rankings: 2,035,800 at n = 7),
   batched.
4. Throughput on 1 and 2 workers: a fixed slice (the first ``--chunks`` chunks of 131,072 profile
   evaluations) of the audit of Borda with 4 alternatives and 10 anonymous voters (92,561,040
   multisets, about 10^8), in this process, on 2 local processes, on Dask LocalClusters of 1 and 2
   single-threaded workers (started and warmed beforehand, not timed); CPU of every process
   involved; the same answer asserted; the hours the whole 10^8-profile audit would take at each
   rate.  ``--only-parallel`` runs it alone.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from _timing import Timings, TreeCpu, interleaved, print_machine, row  # noqa: E402

from dpgames import CustomMechanism  # noqa: E402
from dpgames._executors import local_cluster  # noqa: E402
from dpgames.analysis.custom_audit import dominant_audit  # noqa: E402
from dpgames.analysis.custom_enumeration import CHUNK, plan, run_tasks  # noqa: E402
from dpgames.analysis.lies import Lies  # noqa: E402
from dpgames.analysis.limits import count_profiles  # noqa: E402
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
        f"   {n} agents x {m} types, {calls:,} rule calls: audit "
        f"{t.seconds('audit') / calls * 1e6:.2f} us CPU "
        f"per call, direct loop {t.seconds('direct loop') / calls * 1e6:.2f} us; the "
        "audit's own cost "
        f"{np.median(own):.2f} us per call (range {own.min():.2f}-{own.max():.2f} over "
        f"{repeats} interleaved reps)"
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


def sliced(
    mech: CustomMechanism,
    n: int,
    chunk: int,
    count: int,
    processes: int = 1,
    dask: str | None = None,
) -> tuple:
    """The first ``count`` chunks of the exhaustive audit of ``n`` agents (chunks of ``chunk``
    profile evaluations), run by :func:`run_tasks` as the audit runs them: (best lie, evaluations,
    rule calls)."""
    chunks = plan(mech, n, Lies(mech, None), chunk)
    best, evaluations, calls = None, 0, 0
    tasks = list(itertools.islice(chunks.tasks(), count))
    for _, _, found, used, _, size in run_tasks(mech, chunks, tasks, processes, dask):
        best = found if found is not None and found.better(best) else best
        evaluations, calls = evaluations + size, calls + used
    return best, evaluations, calls


def parallel(repeats: int, n: int, count: int) -> None:
    """A slice of Borda with ``n`` anonymous voters (the first ``count`` chunks of 131,072
    evaluations) in this process, on 2 local processes (their start timed; the fork server, started
    once per process, not) and on Dask LocalClusters of 1 and 2 single-threaded workers (started and
    warmed beforehand, not timed), interleaved.  CPU counts every process of the run (this one, the
    pool's, the clusters' workers): :class:`_timing.TreeCpu`."""
    mech = CustomMechanism(borda_batch, rank_utility, types=R4, anonymous=True, batched=True)
    mech.check_n(n)
    total = count_profiles(mech, n)
    everything = plan(mech, n, Lies(mech, None), CHUNK).evaluations(mech)
    clusters = [local_cluster(workers) for workers in (1, 2)]
    try:
        cases = {
            "this process": lambda: sliced(mech, n, CHUNK, count),
            "2 local processes": lambda: sliced(mech, n, CHUNK, count, processes=2),
        }
        for workers, cluster in zip((1, 2), clusters):
            cases[f"Dask, {workers} worker(s)"] = lambda a=cluster.scheduler_address: sliced(
                mech, n, CHUNK, count, dask=a
            )
        # warm-up, not timed: the workers import dpgames, the fork server starts (once per process)
        sliced(mech, n, CHUNK, 2, processes=2)
        for cluster in clusters:
            sliced(mech, n, CHUNK, 2, dask=cluster.scheduler_address)
        t = interleaved(cases, repeats, warmup=False, meter=TreeCpu)
    finally:
        for cluster in clusters:
            cluster.close()
    best, evaluations, _ = t.results["this process"]
    print(
        f"   Borda, 4 alternatives, {n} anonymous voters: {total:,} multisets, "
        f"{everything:,} profile "
        f"evaluations in all; the slice: its first {count} chunks, {evaluations:,} evaluations"
    )
    print(
        f"   {'':<20}{'wall s':>8}{'CPU s':>8}{'rule calls':>12}{'evaluations/s':>15}"
        f"{'per CPU s':>11}{'hours per 10^8':>16}   wall / this process's (median, range)"
    )
    for name in t.names:
        found, size, calls = t.results[name]
        assert found == best and size == evaluations  # the same answer, to the bit
        wall, cpu = t.seconds(name, "wall"), t.seconds(name)
        rate = evaluations / wall
        print(
            "   "
            f"{name:<20}{wall:>8.1f}{cpu:>8.1f}{calls:>12,}{rate:>15,.0f}{evaluations / cpu:>11,.0f}"
            f"{everything / total * 1e8 / rate / 3600:>16.2f}   "
            f"{t.ratio(name, 'this process', 'wall')}"
        )
    print(
        f"   (hours per 10^8: the whole audit of 10^8 multisets of this kind, "
        f"{everything / total:.2f} evaluations per multiset, at the slice's rate)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--chunks", type=int, default=60, help="section 4: chunks in the slice (default 60)"
    )
    parser.add_argument(
        "--only-parallel", action="store_true", help="run section 4 only (with the machine's load)"
    )
    args = parser.parse_args()
    repeats = args.repeats or (2 if args.quick else 3)
    print_machine()
    if args.only_parallel:
        print("4. a slice of a 10^8-profile enumeration on 1 and 2 workers")
        parallel(repeats, 10, args.chunks)
        print_machine("end")
        return
    print("1. the audit's own cost per unbatched rule call (every profile of a constant rule)")
    overhead(repeats, 4 if args.quick else 5, 10)
    print("\n2. deferred acceptance, every profile, plain Python rule vs batched numpy rule")
    matching(repeats)
    print("\n3. Borda, 4 alternatives, anonymous voters, batched rule")
    voting(repeats, [5] if args.quick else [5, 6, 7])
    print("\n4. a slice of a 10^8-profile enumeration on 1 and 2 workers")
    parallel(repeats, 10, 4 if args.quick else args.chunks)
    print_machine("end")


if __name__ == "__main__":
    main()
