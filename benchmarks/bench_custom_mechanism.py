"""Benchmark of the audits of a user's own mechanism (:class:`dpgames.CustomMechanism`).

Run:  python benchmarks/bench_custom_mechanism.py          (add --quick for a smaller, faster pass)

1. Ex post, 1,000 agents, 100 types, anonymous: the rule is called exactly once per distinct
   (class, lie) pair plus once for the truthful profile (asserted), and the audit's time per rule
   call is compared with calling the same rule directly on the same report tuples, in the same run
   (the goal: less than 20% overhead).  The direct loop builds each report tuple as it goes (the
   profile with one agent moved), as any caller must: 9,901 tuples of 1,000 reports built in advance
   would not fit in the CPU caches and would slow the baseline down.  Two rules: the median (a sort
   of 1,000 reports) and a cheap one (the rounded mean), where the fixed cost per call weighs most;
   that fixed cost is also measured alone, with a rule returning a constant.  Audit and direct loop
   are timed alternately, several times in one process (benchmarks/_timing.py): the overhead is the
   median of the per-repetition ratios (range beside it), CPU time; the times per call are the
   medians.
2. Dominant-strategy enumeration: every profile (multisets when anonymous) of the median and the
   rounded mean, profiles audited per CPU second (each profile: every agent x every lie), wall time
   beside.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import interleaved, print_machine

from dpgames.analysis.custom_audit import dominant_audit, ex_post_audit
from dpgames.mechanisms.custom import CustomMechanism


def median_rule(reports):
    return sorted(reports)[len(reports) // 2]


def mean_rule(reports):
    return round(sum(reports) / len(reports))


def constant_rule(reports):
    return 0


def distance(t, outcome):
    return -abs(t - outcome)


def ex_post_row(rule, n: int, m: int, repeats: int) -> tuple:
    profile = np.random.default_rng(1).integers(m, size=n).tolist()
    classes = sorted(set(profile))
    # the report tuples the audit evaluates: the profile, and each class's first agent moved to
    # every other type
    moves = [(profile.index(a), x) for a in classes for x in range(m) if x != a]

    def direct():
        rule(tuple(profile))
        reports = list(profile)
        for i, x in moves:
            reports[i] = x
            rule(tuple(reports))
            reports[i] = profile[i]

    def audit():
        mech = CustomMechanism(rule, distance, types=range(m), anonymous=True)
        return mech, ex_post_audit(mech, profile)

    t = interleaved({"audit": audit, "direct": direct}, repeats)
    mech, result = t.results["audit"]
    calls = len(moves) + 1
    expected = len(classes) * (m - 1) + 1
    assert mech.rule_calls == expected == calls, (mech.rule_calls, expected)
    return (
        rule.__name__,
        n,
        m,
        len(classes),
        mech.rule_calls,
        t.seconds("direct") / calls,
        t.seconds("audit") / calls,
        t.ratio("audit", "direct"),
        result.max_gain,
    )


def enumeration_row(rule, n: int, m: int, anonymous: bool) -> tuple:
    mech = CustomMechanism(rule, distance, types=range(m), anonymous=anonymous)
    start, cpu = time.perf_counter(), time.process_time()
    result = dominant_audit(mech, n, "all")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return (
        rule.__name__,
        n,
        m,
        anonymous,
        result.profiles,
        seconds,
        cpu,
        result.profiles / cpu,
        result.max_gain,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 2 if args.quick else 7
    n_agents = 300 if args.quick else 1000
    print_machine()
    print(
        "1. ex post audit, anonymous: rule calls and overhead per call over calling the "
        "rule directly"
    )
    print(
        f"{'rule':<14}{'agents':>7}{'types':>6}{'classes':>8}{'calls':>7}{'direct/call':>13}"
        f"{'audit/call':>12}{'max gain':>10}   audit / direct ({repeats} interleaved reps, CPU)"
    )
    for rule in (median_rule, mean_rule, constant_rule):
        name, n, m, d, calls, direct, audited, ratio, gain = ex_post_row(
            rule, n_agents, 100, repeats
        )
        print(
            f"{name:<14}{n:>7}{m:>6}{d:>8}{calls:>7}{direct * 1e6:>11.1f}us{audited * 1e6:>10.1f}us{gain:>10.3g}   "
            + (
                str(ratio)
                if rule is not constant_rule
                else f"fixed cost {(audited - direct) * 1e6:.1f}us per call"
            )
        )
    print(
        "   calls == distinct (class, lie) pairs + 1: asserted; constant_rule: the "
        "audit's fixed cost per call"
    )
    print()
    print("2. dominant strategy, every profile: enumeration rate")
    print(
        f"{'rule':<12}{'agents':>7}{'types':>6}{'anonymous':>10}{'profiles':>10}{'wall s':>9}{'CPU s':>9}"
        f"{'profiles/CPU-s':>16}{'max gain':>10}"
    )
    cases = [
        (median_rule, 5, 11, True),
        (mean_rule, 5, 11, True),
        (median_rule, 4, 11, False),
        (mean_rule, 4, 11, False),
    ]
    if not args.quick:
        cases += [(median_rule, 8, 11, True), (median_rule, 5, 11, False)]
    for rule, n, m, anonymous in cases:
        name, n, m, anon, count, seconds, cpu, rate, gain = enumeration_row(rule, n, m, anonymous)
        print(
            f"{name:<12}{n:>7}{m:>6}{anon!s:>10}{count:>10,}{seconds:>9.2f}{cpu:>9.2f}{rate:>16,.0f}{gain:>10.3g}"
        )
    print_machine("end")


if __name__ == "__main__":
    main()
