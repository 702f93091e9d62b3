"""Benchmark: Borda manipulation at m = 4 candidates, n = 20 voters, dpgames against SVVAMP.

Run:  python benchmarks/bench_voting_svvamp.py          (--quick: fewer profiles; needs `pip install svvamp`,
      part of the ``bench`` extra)

On random profiles of strict rankings (seeded), each tool decides every profile; the tools are timed
alternately, ``--repeats`` times in one process (benchmarks/_timing.py: median CPU and wall time per profile,
median and range of the per-repetition ratios, CPU and wall):

1. Individual manipulation (IM): dpgames' exact ex post audit of a user-written Borda rule over rankings
   (``CustomMechanism(borda, ordinal_utility, types=rankings(range(4)), anonymous=True)``: every voter x
   every one of the 24 rankings as a lie, voters of one ranking audited once) against SVVAMP's
   ``RuleBorda().is_im_`` (a polynomial rule-specific algorithm).  The verdicts must agree (asserted).
   Twice: the rule written one profile at a time, and the same rule over an array of profiles
   (``batched=True``: the truthful profile and every voter's every lie in one call).
2. Coalitional manipulation (CM): SVVAMP's exact ``is_cm_`` (coalitions of any size) against dpgames'
   exact enumeration of coalitions of at most 2 voters (strong manipulation: every member strictly
   gains).  dpgames' enumeration of every coalition of 20 voters (24^20 joint ballots for the largest) is
   out of reach: the figure compares the work each tool does, not the same question, and says so.
"""

from __future__ import annotations

import argparse

import numpy as np
import svvamp
from _timing import interleaved, print_machine, row

from dpgames import CustomMechanism, truthfulness_audit
from dpgames.types import ordinal_utility, rankings

M, N = 4, 20


def borda(profile):
    score = [0] * M
    for ballot in profile:
        for position, c in enumerate(ballot):
            score[c] += M - 1 - position
    return max(range(M), key=lambda c: (score[c], -c))  # ties: lowest index, as SVVAMP


def borda_batched(reports):
    """The same rule over an array of profiles: ``reports`` of shape (k, n, m), one winner per profile."""
    k, n, m = reports.shape
    points = np.broadcast_to(np.arange(m - 1, -1, -1), reports.shape)
    rows = np.broadcast_to(np.arange(k)[:, None, None], reports.shape)
    scores = np.bincount((rows * m + reports).ravel(), weights=points.ravel(), minlength=k * m)
    return scores.reshape(k, m).argmax(axis=1)  # ties: lowest index, as SVVAMP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 profiles instead of 20")
    parser.add_argument(
        "--cm", action="store_true", help="also time coalitions of at most 2 voters (slow)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repetitions")
    args = parser.parse_args()
    count = 5 if args.quick else 20
    rng = np.random.default_rng(2026)
    types = rankings(range(M))
    ranks = [np.array([rng.permutation(M) for _ in range(N)]) for _ in range(count)]
    profiles = [[tuple(int(c) for c in row) for row in rk] for rk in ranks]

    def dp_im():
        return [
            not truthfulness_audit(
                CustomMechanism(borda, ordinal_utility, types=types, anonymous=True), profile
            ).is_truthful()
            for profile in profiles
        ]

    def dp_im_batched():
        return [
            not truthfulness_audit(
                CustomMechanism(
                    borda_batched, ordinal_utility, types=types, anonymous=True, batched=True
                ),
                profile,
            ).is_truthful()
            for profile in profiles
        ]

    def sv_im():
        return [bool(svvamp.RuleBorda()(svvamp.Profile(preferences_rk=rk)).is_im_) for rk in ranks]

    def sv_cm():
        return [
            svvamp.RuleBorda(cm_option="exact")(svvamp.Profile(preferences_rk=rk)).is_cm_
            for rk in ranks
        ]

    def dp_cm2():
        return [
            not truthfulness_audit(
                CustomMechanism(borda, ordinal_utility, types=types, anonymous=True),
                profile,
                coalitions=2,
                manipulation="strong",
            ).is_truthful()
            for profile in profiles
        ]

    cases = {
        "dpgames IM": dp_im,
        "dpgames IM, batched": dp_im_batched,
        "SVVAMP IM": sv_im,
        "SVVAMP CM": sv_cm,
    }
    if args.cm:
        cases["dpgames CM, coalitions <= 2"] = dp_cm2
    print_machine()
    t = interleaved(cases, args.repeats)
    agree = sum(a == b for a, b in zip(t.results["dpgames IM"], t.results["SVVAMP IM"]))
    assert agree == count, (t.results["dpgames IM"], t.results["SVVAMP IM"])
    assert t.results["dpgames IM, batched"] == t.results["dpgames IM"]
    print(
        f"Borda, m = {M} candidates, n = {N} voters, {count} random profiles (seed 2026); each case decides "
        f"every profile; times per profile"
    )
    print(f"  IM verdicts equal on {agree}/{count} profiles")
    labels = {
        "dpgames IM": "dpgames exact ex post audit (IM)",
        "dpgames IM, batched": "the same, batched numpy rule",
        "SVVAMP IM": "SVVAMP RuleBorda().is_im_",
        "SVVAMP CM": "SVVAMP RuleBorda(cm_option='exact').is_cm_",
        "dpgames CM, coalitions <= 2": "dpgames coalitions <= 2 voters (strong)",
    }
    for name in cases:
        print(
            f"  {labels[name]:<46} {t.seconds(name) / count * 1e3:9.2f} ms median CPU, "
            f"{t.seconds(name, 'wall') / count * 1e3:9.2f} ms wall"
        )
    row("IM, dpgames / SVVAMP", t, "dpgames IM", "SVVAMP IM")
    row("IM, batched dpgames / SVVAMP", t, "dpgames IM, batched", "SVVAMP IM", "goal <= 10x")
    if args.cm:
        row(
            "CM, dpgames (<= 2 voters) / SVVAMP (any)",
            t,
            "dpgames CM, coalitions <= 2",
            "SVVAMP CM",
        )
    print(
        "  CM: SVVAMP decides every coalition size; dpgames enumerates coalitions (24^20 joint ballots for all "
        "20 voters: out of reach), so its CM row (--cm) covers coalitions of at most 2 voters only"
    )
    print_machine("end")


if __name__ == "__main__":
    main()
