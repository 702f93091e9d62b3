"""Benchmark of the exact dominant-strategy least q of the NST mix: the fast method (exact gains at
the extreme profiles, (type, lie) pairs pruned by their bound over every law, then one softmax per
block of the others' multisets for the pairs left) against the enumeration (the per-profile least q
at every profile of n agents), timed alternately in one process (median and range of the
per-repetition ratios, CPU and wall time: benchmarks/_timing.py); both must give the same q.

Run:  python benchmarks/bench_nst_dominant.py          (add --quick for a smaller, faster pass)

Instances: the pricing environment on a uniform price grid (types: the midpoints), eps = 0.5, free
reactions (NST's posted price); and facility location on a 6-node line with two facilities.
"""

from __future__ import annotations

import argparse

from _timing import interleaved, print_machine

from dpgames.analysis.nst import dominant_least_q, dominant_profile_count
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import facility_location_environment, line_graph
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import pricing_environment


def bench(name: str, env, n: int, repeats: int, eps: float = 0.5) -> None:
    em, cm = ObjectiveExponentialMechanism(env, eps), CommitmentMechanism(env)
    t = interleaved(
        {
            "fast": lambda: dominant_least_q(em, cm, n, "fast"),
            "enumeration": lambda: dominant_least_q(em, cm, n, "enumerate"),
        },
        repeats,
    )
    fast, slow = t.results["fast"], t.results["enumeration"]
    assert (fast.q is None) == (slow.q is None) and (
        fast.q is None or abs(fast.q - slow.q) <= 1e-9
    ), (fast, slow)
    # profiles of n agents the enumeration visits
    profiles = dominant_profile_count(n + 1, env.n_types)
    print(
        f"{name:32s} n={n:3d} types={env.n_types:3d} profiles={profiles:>9,d}  q={fast.q:.6f}  "
        f"{t.line('enumeration', 'fast')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller instances")
    parser.add_argument(
        "--repeats", type=int, default=5, help="interleaved repetitions (fast, enumeration)"
    )
    args = parser.parse_args()
    quick, repeats = args.quick, args.repeats
    print_machine()
    pricing = {k: pricing_environment([j / k for j in range(1, k + 1)]) for k in (4, 10)}
    bench("pricing, 4 prices (the guide's)", pricing[4], 3, repeats)
    bench("pricing, 4 prices", pricing[4], 12 if quick else 30, repeats)
    bench("pricing, 10 prices", pricing[10], 5 if quick else 8, repeats)
    bench(
        "facility, line of 6, k = 2",
        facility_location_environment(line_graph(6), k=2),
        4 if quick else 7,
        repeats,
    )
    print_machine("end")


if __name__ == "__main__":
    main()
