"""The black-box privacy audit on the DP testers' benchmark suite (dpgames.privacy.TESTBED).

Run:  python benchmarks/bench_privacy_audit.py [--quick | --dpsniper] [--only NAME[,NAME...]]

For every mechanism of the suite the audit is given only what a user has: the sampler, the claimed
eps and ``neighbouring_inputs(...)`` for the mechanism's relation (StatDP's candidate patterns plus
random pairs; patterns only for mechanisms of whole-number inputs, a category or a count): no pair,
no event.  It runs

    audit_privacy(sampler, neighbours, samples=N, confidence=c, epsilon=0.1, rng=seed, processes=P)

and prints, per mechanism: the certification samples per input (the audit's search and screening
samples come on top), wall and CPU seconds (this process and its worker processes), the certified
lower bound on eps, whether ``assert_private`` flags the mechanism (its black-box rule: certified
bound > claimed eps), whether that verdict is the right one, the true eps where derived in closed
form (dpgames/privacy/testbed.py; the supremum over the relation, which the candidate pairs need not
reach) and the lower bound of DP-Sniper's published runs (Bichsel et al. 2021, reference results).

Modes:
  --quick      N = 10^5 at 95%: a smoke run (minutes for the whole suite);
  (default)    N = 10^7 at 95%: the target is every violation flagged and no false alarm;
  --dpsniper   N = 2 * 10^8 at 90%, DP-Sniper's final-estimate budget and confidence: the target is a
               certified bound at least DP-Sniper's on every violation.
"""

from __future__ import annotations

import argparse
import math
import os
import time

from dpgames.privacy import (
    TESTBED,
    BenchmarkMechanism,
    audit_privacy,
    benchmark_mechanism,
    neighbouring_inputs,
)

MODES = {"quick": (10**5, 0.95), "default": (10**7, 0.95), "dpsniper": (2 * 10**8, 0.90)}
RANDOM_PAIRS = 10


def cpu_seconds() -> float:
    """User + system seconds of this process and all its descendants, living or finished.

    The audit's worker processes are started by a forkserver (a child of this process that outlives
    them), so they are reaped by it, not by this process: ``os.times()``'s children fields miss
    them. With psutil, the forkserver's own children fields are added; without it, only this process
    and the children it reaped are counted.
    """
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    try:
        import psutil
    except ImportError:
        return total
    for child in psutil.Process().children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:  # ended meanwhile: counted by its parent if reaped there
            continue
        total += c.user + c.system + c.children_user + c.children_system
    return total


def shown(value: float | None) -> str:
    if value is None:
        return "-"
    return "inf" if math.isinf(value) else f"{value:.4f}"


def run(
    entry: BenchmarkMechanism, samples: int, confidence: float, seed: int, processes: int
) -> dict:
    neighbours = neighbouring_inputs(
        entry.length,
        entry.relation,
        low=entry.low,
        high=entry.high,
        random=0 if entry.integer_inputs else RANDOM_PAIRS,
        levels="all" if entry.integer_inputs else "one",
        rng=seed,
    )
    wall, cpu = time.perf_counter(), cpu_seconds()
    audit = audit_privacy(
        entry.sampler,
        neighbours,
        samples=samples,
        confidence=confidence,
        epsilon=entry.epsilon,
        rng=seed,
        processes=processes,
    )
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    flagged = audit.epsilon > entry.epsilon
    return {
        "audit": audit,
        "wall": wall,
        "cpu": cpu,
        "flagged": flagged,
        "right": flagged == entry.violation,
        "pairs": len(neighbours),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="N = 1e5 at 95%% (smoke run)")
    mode.add_argument(
        "--dpsniper", action="store_true", help="N = 2e8 at 90%% (DP-Sniper's budget)"
    )
    parser.add_argument(
        "--only", default="", help="comma-separated mechanism names (default: the whole suite)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--describe", action="store_true", help="print each audit's describe()")
    args = parser.parse_args()
    samples, confidence = MODES[
        "quick" if args.quick else "dpsniper" if args.dpsniper else "default"
    ]
    entries = [benchmark_mechanism(name) for name in args.only.split(",") if name] or list(TESTBED)

    print(
        f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in os.getloadavg())}; "
        f"{os.cpu_count()} cores; processes={args.processes}"
    )
    print(
        f"samples per input N = {samples:.0e} (certification), confidence "
        f"{confidence:.0%}, seed {args.seed}, "
        f"claimed eps = 0.1, {RANDOM_PAIRS} random pairs besides StatDP's patterns "
        "(whole-number inputs: "
        "patterns only)\n"
    )
    header = (
        f"{'mechanism':<28} {'claim':<9} {'relation':<11} {'pairs':>5} {'N/input':>8} "
        f"{'wall s':>8} "
        f"{'cpu s':>8} {'bound':>8} {'flagged':>7} {'right':>5} {'true eps':>8} {'DP-Sniper':>9}"
    )
    print(header)
    print("-" * len(header))
    results = []
    for entry in entries:
        r = run(entry, samples, confidence, args.seed, args.processes)
        results.append((entry, r))
        print(
            f"{entry.name:<28} {'private' if entry.private else 'violated':<9} "
            f"{entry.relation:<11} "
            f"{r['pairs']:>5} {samples:>8.0e} {r['wall']:>8.1f} {r['cpu']:>8.1f} "
            f"{shown(r['audit'].epsilon):>8} "
            f"{'yes' if r['flagged'] else 'no':>7} {'ok' if r['right'] else 'WRONG':>5} "
            f"{shown(entry.true_epsilon):>8} {shown(entry.published_lower_bound):>9}",
            flush=True,
        )
        if args.describe:
            print(r["audit"].describe(), "\n")

    violations = [(e, r) for e, r in results if e.violation]
    correct = [(e, r) for e, r in results if not e.violation]
    compared = [(e, r) for e, r in violations if e.published_lower_bound is not None]
    print(
        f"\nviolations flagged: {sum(r['flagged'] for _, r in violations)} / {len(violations)}; "
        f"false alarms: {sum(r['flagged'] for _, r in correct)} / {len(correct)}; "
        "bound >= DP-Sniper's on "
        f"{sum(r['audit'].epsilon >= e.published_lower_bound for e, r in compared)} / "
        f"{len(compared)} violations; above a derived true eps (a bound valid at confidence c does so "
        "with probability at most 1 - c per mechanism): "
        f"{[e.name for e, r in results if e.true_epsilon is not None and r['audit'].epsilon > e.true_epsilon]}"
    )
    print(
        f"total wall {sum(r['wall'] for _, r in results):.0f} s, cpu "
        f"{sum(r['cpu'] for _, r in results):.0f} s"
    )


if __name__ == "__main__":
    main()
