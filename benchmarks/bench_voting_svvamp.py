"""Benchmark: Borda manipulation at m = 4 candidates, n = 20 voters, dpgames against SVVAMP.

Run:  python benchmarks/bench_voting_svvamp.py          (--quick: fewer profiles; needs `pip install svvamp`,
      part of the ``bench`` extra)

On random profiles of strict rankings (seeded), each tool decides every profile; the tools are timed
alternately, ``--repeats`` times in one process (benchmarks/_timing.py: median CPU and wall time per
profile, median and range of the per-repetition ratios, CPU and wall):

1. Individual manipulation (IM): dpgames' exact ex post audit of a user-written Borda rule over
   rankings (``CustomMechanism(borda, ordinal_utility, types=rankings(range(4)), anonymous=True)``:
   every voter x every one of the 24 rankings as a lie, voters of one ranking audited once) against
   SVVAMP's ``RuleBorda().is_im_`` (a polynomial rule-specific algorithm).  The verdicts must agree
   (asserted). Twice: the rule written one profile at a time, and the same rule over an array of
   profiles (``batched=True``: the truthful profile and every voter's every lie in one call).
2. Coalitional manipulation (CM, ``--cm``): SVVAMP's exact ``is_cm_`` (for each candidate c, can the
   voters preferring c to the winner elect c; coalitions of any size) against dpgames' exact audit
   of the same question (``coalitions=coalitions_preferring(profile, winner)``,
   ``manipulation="strong"``, a batched rule, each coalition's joint ballots enumerated as
   multisets) at n = 10, where its coalitions fit the limit of 5 million joint lies; the verdicts
   must agree (asserted).  At n = 20 the script counts the joint lies each profile would take.

3. Neutrality (``--neutral``): the exhaustive dominant-strategy audit of 5 anonymous voters (Borda
   with ties broken uniformly at random, a neutral rule) with and without ``neutral=True``; the
   answers must be equal (asserted).

The audit's own cost per call of the plain rule is measured apart: the ex-post audits' CPU time less
that of calling the rule directly on the same report tuples, per call.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import svvamp
from _timing import interleaved, print_machine, row

from dpgames import CustomMechanism, truthfulness_audit
from dpgames.analysis.coalition_audit import joint_count
from dpgames.analysis.limits import CALL_LIMIT
from dpgames.types import coalitions_preferring, ordinal_utility, rankings

M, N, N_CM, N_NEUTRAL = 4, 20, 10, 5


def borda(profile):
    score = [0] * M
    for ballot in profile:
        for position, c in enumerate(ballot):
            score[c] += M - 1 - position
    return max(range(M), key=lambda c: (score[c], -c))  # ties: lowest index, as SVVAMP


def borda_batched(reports):
    """The same rule over an array of profiles: ``reports`` of shape (k, n, m), one winner per
    profile."""
    k, n, m = reports.shape
    points = np.broadcast_to(np.arange(m - 1, -1, -1), reports.shape)
    rows = np.broadcast_to(np.arange(k)[:, None, None], reports.shape)
    scores = np.bincount((rows * m + reports).ravel(), weights=points.ravel(), minlength=k * m)
    return scores.reshape(k, m).argmax(axis=1)  # ties: lowest index, as SVVAMP


def borda_fair(profile):
    """Borda with ties broken uniformly at random: a neutral rule (lowest-index tie-breaking is
    not)."""
    score = [0] * M
    for ballot in profile:
        for position, c in enumerate(ballot):
            score[c] += M - 1 - position
    top = [c for c in range(M) if score[c] == max(score)]
    return {c: 1 / len(top) for c in top}


def neutrality(repeats: int) -> None:
    """The exhaustive dominant-strategy audit of :func:`borda_fair` with and without
    ``neutral=True``."""
    types = rankings(range(M))
    found = {}

    def audit(neutral: bool):
        def run():
            mech = CustomMechanism(
                borda_fair, ordinal_utility, types=types, anonymous=True, neutral=neutral
            )
            result = truthfulness_audit(mech, n=N_NEUTRAL, profiles="all")
            found[neutral] = (result.max_gain, result.margin, result.profiles, mech.rule_calls)
            return result.max_gain

        return run

    t = interleaved({"declared": audit(True), "undeclared": audit(False)}, repeats)
    assert found[True][:3] == found[False][:3], found
    print(
        f"Neutrality: every profile of {N_NEUTRAL} anonymous voters over {M} alternatives "
        f"({found[False][2]:,} multisets), Borda with uniform tie-breaking, dominant strategies; "
        f"max_gain {found[True][0]:g} and margin {found[True][1]:g} both ways"
    )
    print(
        f"  rule calls: {found[False][3]:,} undeclared, {found[True][3]:,} with neutral=True "
        "(the others' profiles one per orbit under relabelling the alternatives)"
    )
    row("neutral=True / undeclared", t, "declared", "undeclared")


def random_profiles(n: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(2026)
    return [np.array([rng.permutation(M) for _ in range(n)]) for _ in range(count)]


def as_tuples(rk: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in row) for row in rk]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 profiles instead of 20")
    parser.add_argument(
        "--cm",
        action="store_true",
        help=f"also time SVVAMP's CM question at n = {N_CM} (every coalition size) and count the "
        f"joint lies it takes at n = {N}",
    )
    parser.add_argument(
        "--neutral",
        action="store_true",
        help=f"also time the exhaustive audit of {N_NEUTRAL} voters with and without neutral=True",
    )
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repetitions")
    args = parser.parse_args()
    count = 5 if args.quick else 20
    types = rankings(range(M))
    ranks = random_profiles(N, count)
    profiles = [as_tuples(rk) for rk in ranks]
    plain = CustomMechanism(borda, ordinal_utility, types=types, anonymous=True)
    batched = CustomMechanism(
        borda_batched, ordinal_utility, types=types, anonymous=True, batched=True
    )

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

    def sv_cm(at=ranks):
        return [
            bool(svvamp.RuleBorda(cm_option="exact")(svvamp.Profile(preferences_rk=rk)).is_cm_)
            for rk in at
        ]

    cases = {
        "dpgames IM": dp_im,
        "dpgames IM, batched": dp_im_batched,
        "SVVAMP IM": sv_im,
        "SVVAMP CM": sv_cm,
    }
    print_machine()
    t = interleaved(cases, args.repeats)
    agree = sum(a == b for a, b in zip(t.results["dpgames IM"], t.results["SVVAMP IM"]))
    assert agree == count, (t.results["dpgames IM"], t.results["SVVAMP IM"])
    assert t.results["dpgames IM, batched"] == t.results["dpgames IM"]
    print(
        f"Borda, m = {M} candidates, n = {N} voters, {count} random profiles (seed 2026); "
        "each case "
        f"decides every profile (a new mechanism each); times per profile"
    )
    print(f"  IM verdicts equal on {agree}/{count} profiles (plain and batched rule)")
    labels = {
        "dpgames IM": "dpgames exact ex post audit (IM)",
        "dpgames IM, batched": "the same, batched numpy rule",
        "SVVAMP IM": "SVVAMP RuleBorda().is_im_",
        "SVVAMP CM": "SVVAMP RuleBorda(cm_option='exact').is_cm_",
        "dpgames CM": f"dpgames CM, n = {N_CM}, batched rule",
        "SVVAMP CM, n = 10": f"SVVAMP CM, n = {N_CM}",
    }

    def times(t, cases, count):
        for name in cases:
            print(
                f"  {labels[name]:<46} {t.seconds(name) / count * 1e3:9.2f} ms median CPU, "
                f"{t.seconds(name, 'wall') / count * 1e3:9.2f} ms wall"
            )

    times(t, cases, count)
    row("IM, dpgames / SVVAMP", t, "dpgames IM", "SVVAMP IM")
    row("IM, batched dpgames / SVVAMP", t, "dpgames IM, batched", "SVVAMP IM", "goal <= 10x")
    print(
        f"  the audit's own cost per call of the plain rule: "
        f"{audit_overhead(plain, profiles) * 1e6:.1f} us CPU (its time less the rule's, per call)"
    )
    if args.cm:
        # SVVAMP's CM question exactly: the coalitions of the voters preferring each c to the winner
        ranks_cm = random_profiles(N_CM, count)
        small = [as_tuples(rk) for rk in ranks_cm]

        def dp_cm():
            found = []
            for profile in small:
                winner = batched.law(profile)[0][0]
                audit = truthfulness_audit(
                    batched,
                    profile,
                    coalitions=coalitions_preferring(profile, winner),
                    manipulation="strong",
                )
                found.append(not audit.is_truthful())
            return found

        cm = {"dpgames CM": dp_cm, "SVVAMP CM, n = 10": lambda: sv_cm(ranks_cm)}
        u = interleaved(cm, args.repeats)
        assert u.results["dpgames CM"] == u.results["SVVAMP CM, n = 10"]
        print(
            "CM (every coalition size: for each candidate c, the voters preferring c to "
            "the winner) "
            f"at n = {N_CM}, {count} random profiles; verdicts equal on {count}/{count} "
            f"({sum(u.results['dpgames CM'])} manipulable)"
        )
        times(u, cm, count)
        row(f"CM at n = {N_CM}, dpgames / SVVAMP", u, "dpgames CM", "SVVAMP CM, n = 10")
        needs = [
            sum(
                joint_count(batched, group, True) - 1
                for group in coalitions_preferring(p, borda(p))
            )
            for p in profiles
        ]
        fits = sum(x <= CALL_LIMIT for x in needs)
        print(
            f"  at n = {N}: the coalitions take {min(needs):,} to {max(needs):,} joint "
            "lies (multisets "
            f"of ballots); {fits}/{count} profiles within the limit of {CALL_LIMIT:,}"
        )
    if args.neutral:
        neutrality(min(args.repeats, 3))
    print_machine("end")


def audit_overhead(mech: CustomMechanism, profiles: list) -> float:
    """CPU seconds per rule call that the unbatched ex-post audit adds to the rule's own time: the
    audit of every profile less the rule called directly on the same reports (a fresh mechanism each
    time)."""
    audited, direct, calls = 0.0, 0.0, 0
    for profile in profiles:
        fresh = CustomMechanism(mech.rule, ordinal_utility, types=mech.types, anonymous=True)
        fresh.check_anonymity(len(profile))
        fresh.check_calls = 0
        start = time.process_time()
        audit = truthfulness_audit(fresh, profile)
        audited += time.process_time() - start
        idx = [fresh.types.index(r) for r in profile]
        reports = [profile]
        for i in audit.agents.tolist():
            for x in range(fresh.n_types):
                if x != idx[i]:
                    reports.append(profile[:i] + [fresh.types[x]] + profile[i + 1 :])
        reports = reports[: audit.laws]
        start = time.process_time()
        for r in reports:
            mech.rule(r)
        direct += time.process_time() - start
        calls += audit.laws
    return (audited - direct) / calls


if __name__ == "__main__":
    main()
