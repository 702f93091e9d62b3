"""Benchmark: Borda manipulation at m = 4 candidates, n = 20 voters, dpgames against SVVAMP.

Run:  python benchmarks/bench_voting_svvamp.py          (--quick: fewer profiles; needs `pip install svvamp`,
      part of the ``bench`` extra)

On random profiles of strict rankings (seeded), each profile is decided by both tools back to back
(interleaved, so that both see the same load on a shared machine), wall-clock and CPU time side by side:

1. Individual manipulation (IM): dpgames' exact ex post audit of a user-written Borda rule over rankings
   (``CustomMechanism(borda, ordinal_utility, types=rankings(range(4)), anonymous=True)``: every voter x
   every one of the 24 rankings as a lie, voters of one ranking audited once) against SVVAMP's
   ``RuleBorda().is_im_`` (a polynomial rule-specific algorithm).  The verdicts must agree (asserted).
2. Coalitional manipulation (CM): SVVAMP's exact ``is_cm_`` (coalitions of any size) against dpgames'
   exact enumeration of coalitions of at most 2 voters (strong manipulation: every member strictly
   gains).  dpgames' enumeration of every coalition of 20 voters (24^20 joint ballots for the largest) is
   out of reach: the figure compares the work each tool does, not the same question, and says so.

The printed ratios are medians over profiles of the per-profile ratios (robust to load spikes).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import svvamp

from dpgames import CustomMechanism, truthfulness_audit
from dpgames.types import ordinal_utility, rankings

M, N = 4, 20


def borda(profile):
    score = [0] * M
    for ballot in profile:
        for position, c in enumerate(ballot):
            score[c] += M - 1 - position
    return max(range(M), key=lambda c: (score[c], -c))   # ties: lowest index, as SVVAMP


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 profiles instead of 20")
    parser.add_argument("--cm", action="store_true", help="also time coalitions of at most 2 voters (slow)")
    args = parser.parse_args()
    count = 5 if args.quick else 20
    rng = np.random.default_rng(2026)
    types = rankings(range(M))
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in ("dp_im", "sv_im", "sv_cm", "dp_cm2")}
    agree = 0
    for _ in range(count):
        rk = np.array([rng.permutation(M) for _ in range(N)])
        profile = [tuple(int(c) for c in row) for row in rk]

        def dp_im():
            mech = CustomMechanism(borda, ordinal_utility, types=types, anonymous=True)
            return not truthfulness_audit(mech, profile).is_truthful()

        def sv_im():
            return bool(svvamp.RuleBorda()(svvamp.Profile(preferences_rk=rk)).is_im_)

        def sv_cm():
            return svvamp.RuleBorda(cm_option="exact")(svvamp.Profile(preferences_rk=rk)).is_cm_

        def dp_cm2():
            mech = CustomMechanism(borda, ordinal_utility, types=types, anonymous=True)
            return not truthfulness_audit(mech, profile, coalitions=2, manipulation="strong").is_truthful()

        ours, *t_dp = timed(dp_im)
        theirs, *t_sv = timed(sv_im)
        assert ours == theirs, (profile, ours, theirs)
        agree += 1
        rows["dp_im"].append(tuple(t_dp))
        rows["sv_im"].append(tuple(t_sv))
        rows["sv_cm"].append(timed(sv_cm)[1:])
        if args.cm:
            rows["dp_cm2"].append(timed(dp_cm2)[1:])

    def median(key, k):
        return float(np.median([r[k] for r in rows[key]])) * 1e3

    def ratio(a, b, k):
        return float(np.median([x[k] / y[k] for x, y in zip(rows[a], rows[b]) if y[k] > 0] or [np.nan]))

    print(f"Borda, m = {M} candidates, n = {N} voters, {count} random profiles (seed 2026), interleaved; "
          f"medians per profile")
    print(f"  IM verdicts equal on {agree}/{count} profiles")
    for label, key in (("dpgames exact ex post audit (IM)", "dp_im"), ("SVVAMP RuleBorda().is_im_", "sv_im"),
                       ("SVVAMP RuleBorda(cm_option='exact').is_cm_", "sv_cm"),
                       ("dpgames coalitions <= 2 voters (strong)", "dp_cm2")):
        if rows[key]:
            print(f"  {label:<46} wall {median(key, 0):9.2f} ms   cpu {median(key, 1):9.2f} ms")
    print(f"  IM ratio dpgames / SVVAMP: wall {ratio('dp_im', 'sv_im', 0):.2f}x, cpu {ratio('dp_im', 'sv_im', 1):.2f}x")
    print("  CM: SVVAMP decides every coalition size; dpgames enumerates coalitions (24^20 joint ballots for all "
          "20 voters: out of reach), so its CM row (--cm) covers coalitions of at most 2 voters only")


if __name__ == "__main__":
    main()
