"""Benchmarks of the DP toolkit (dpgames.privacy).

Run:  python benchmarks/bench_privacy.py          (add --quick for a smaller, faster pass; --floors for only
      Laplace release against its floor; --reps N for its repetitions, default 21; the other rows
      take 5, 3 with --quick)

Every ratio compares the code with a baseline timed alternately with it, repetition by repetition,
in one process (benchmarks/_timing.py: median CPU time per call, median and range of the
per-repetition ratios in CPU and wall time; the machine and its load average printed at the start
and the end).  Each row names its ratio: ours / floor for Laplace release and the exponential
mechanism, baseline / ours (above 1: ours is faster) elsewhere.  Rows:
  0. Laplace release on 10^6 and 10^7 values against ``values + Generator.laplace`` (the floor) and
     the draw alone;
  1. Gaussian noise on 10^7 values against numpy's own sampler, ``values + Generator.normal`` (the
     floor);
  2. exact discrete Laplace / Gaussian (Canonne-Kamath-Steinke): the time per sample;
  3. sparse vector (AboveThreshold) over 10^6 queries, batch, against the textbook query-by-query
     loop (our online session);
  4. private multiplicative weights on a 10^4-element universe against the floor of its linear
     algebra (the matrix-vector products one round needs);
  5. the binary-tree counter, T = 1024 rounds of 10^4-vectors, batch and online, against the floor
     (a cumulative sum plus one noise draw of the same size);
  6. the accountant: spending 10^4 events one by one;
  7. one draw of the exponential mechanism (ExponentialMechanism.sample_indices, and
     FiniteDistribution.sample on a fresh distribution) at m = 10^3 .. 10^7 candidates, against the
     floor: bare numpy scale, shift, exp, cumsum and searchsorted on the same scores (goal <= 1.3x).
OpenDP and diffprivlib (Laplace, Gaussian, the exact integer samplers, the exponential mechanism):
benchmarks/bench_peers.py.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved, print_machine, row

from dpgames.privacy import (
    AboveThreshold,
    Accountant,
    BinaryTreeCounter,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PrivacyGuarantee,
    PrivateMultiplicativeWeights,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)


def bench_laplace_floor(n: int, reps: int) -> None:
    """LaplaceMechanism.release on n values (validation, the draw, the sum, the overflow check)
    against the floor a user would write, ``values + Generator.laplace(0, b, n)``, and against the
    draw alone (a Generator each: the timings do not depend on whose draw comes first)."""
    values = np.random.default_rng(0).uniform(-1, 1, n)
    lap = LaplaceMechanism(1.0)
    ours_gen, floor_gen = np.random.default_rng(1), np.random.default_rng(2)
    floor, draw = "values + Generator.laplace (floor)", "Generator.laplace alone (the draw)"
    t = interleaved(
        {
            "ours": lambda: lap.release(values, rng=ours_gen),
            floor: lambda: values + floor_gen.laplace(0.0, 1.0, n),
            draw: lambda: floor_gen.laplace(0.0, 1.0, n),
        },
        reps,
    )
    row(f"Laplace release, n={n:.0e}", t, "ours", floor, "goal <= 1x")
    row(f"Laplace release, n={n:.0e}", t, "ours", draw)


def bench_gaussian(n: int, repeats: int) -> None:
    gen = np.random.default_rng(0)
    values = np.zeros(n)
    gau = GaussianMechanism.analytic(1.0, 1e-6)
    floor = "values + Generator.normal (floor)"
    t = interleaved(
        {
            "ours": lambda: gau.release(values, rng=gen),
            floor: lambda: values + gen.normal(0.0, gau.sigma, n),
        },
        repeats,
    )
    row(f"Gaussian noise (analytic sigma), n={n:.0e}", t, floor, "ours")


def bench_discrete(n: int, repeats: int) -> None:
    gen = np.random.default_rng(1)
    t = interleaved(
        {
            "discrete Laplace (scale 2)": lambda: sample_discrete_laplace(2, n, gen),
            "discrete Gaussian (sigma 2)": lambda: sample_discrete_gaussian(4, n, gen),
        },
        repeats,
    )
    for name in t.names:
        print(
            f"  {'exact ' + name + f', n={n:.0e}':<40} {t.seconds(name) * 1e3:.1f} ms median CPU, "
            f"{t.seconds(name) / n * 1e6:.1f} us a sample"
        )


def bench_sparse_vector(k: int, repeats: int) -> None:
    # all far below the threshold: every query is read
    answers = np.random.default_rng(2).uniform(0, 1, k)
    at = AboveThreshold(1.0, 1000.0)

    def one_by_one():
        session = at.start(rng=3)
        for a in answers:
            if session.ask(a):
                break

    t = interleaved(
        {"batch": lambda: at.run(answers, rng=3), "query-by-query loop": one_by_one}, repeats
    )
    row(f"AboveThreshold over {k:.0e} queries", t, "query-by-query loop", "batch")


def bench_pmw(universe: int, n_queries: int, rounds: int, repeats: int) -> None:
    rng = np.random.default_rng(4)
    histogram = np.bincount(
        np.clip(rng.normal(universe * 0.3, universe * 0.05, 10**6).astype(int), 0, universe - 1),
        minlength=universe,
    )
    lo = rng.integers(0, universe, n_queries)
    hi = np.minimum(lo + rng.integers(1, universe // 3, n_queries), universe)
    u = np.arange(universe)
    queries = ((u >= lo[:, None]) & (u < hi[:, None])).astype(float)
    p = np.full(universe, 1 / universe)
    floor = f"{2 * rounds} matrix-vector products (floor)"  # the errors before and after each round
    selections = ("exponential", "sparse_vector")
    pmws = {
        s: PrivateMultiplicativeWeights(1.0, 0.1, rounds=rounds, selection=s) for s in selections
    }
    t = interleaved(
        {floor: lambda: [queries @ p for _ in range(2 * rounds)]}
        | {s: (lambda s=s: pmws[s].run(histogram, queries, rng=5)) for s in selections},
        repeats,
    )
    for selection in selections:
        result = t.results[selection]
        row(
            f"PMW ({selection}), N={universe:.0e}, {n_queries} queries, {rounds} rounds",
            t,
            floor,
            selection,
        )
        print(
            f"  {'':<40} max error {np.abs(queries @ p - result.true_answers).max():.3f} "
            "(uniform) -> "
            f"{result.max_error:.3f}; {len(result.updates)} updates; {result.guarantee}"
        )


def bench_tree_counter(horizon: int, dim: int, repeats: int) -> None:
    stream = np.random.default_rng(6).integers(0, 3, size=(horizon, dim)).astype(float)
    counter = BinaryTreeCounter(horizon, rho=0.5, sensitivity=2**0.5, relation="user")
    gen = np.random.default_rng(7)

    def online():
        c = counter.start(dim, rng=gen)
        for x in stream:
            c.update(x)

    floor = "cumsum + 2T x d normal draws (floor)"
    t = interleaved(
        {
            "batch": lambda: counter.release(stream, rng=gen),
            "online": online,
            floor: lambda: (
                np.cumsum(stream, axis=0) + gen.normal(0.0, 1.0, size=(2 * horizon, dim))[:horizon]
            ),
        },
        repeats,
    )
    for name in ("batch", "online"):
        row(f"tree counter {name}, T={horizon} x d={dim:.0e}", t, floor, name)


def bench_accountant(events: int, repeats: int) -> None:
    g = PrivacyGuarantee.from_zcdp(1e-4)

    def spend_all():
        acc = Accountant(budget=PrivacyGuarantee(10.0, 1e-6))
        for _ in range(events):
            acc = acc.spend("round", g)
        return acc

    seconds = interleaved({"spend": spend_all}, repeats).seconds("spend")
    print(
        f"  {f'accountant: {events} spends':<40} {seconds * 1e3:.1f} ms median CPU, "
        f"{seconds / events * 1e6:.0f} us a spend (each checks the budget at its delta)"
    )


def bench_exponential_draw(sizes: list[int], repeats: int) -> None:
    """One draw from fresh scores against two floors, all timed alternately: ``floor`` is bare numpy
    scale, shift, exp, cumsum and searchsorted with a fresh array per step, ``in-place floor`` the
    same steps in one array.  Times are median CPU; ratios the median (range) of the per-repetition
    ratios in CPU time, ours / floor (<= 1.3x is the goal)."""
    em = ExponentialMechanism(1.0)
    scale = em.scale
    gen = np.random.default_rng(8)

    def floor(s: np.ndarray) -> int:
        c = np.cumsum(np.exp((s - s.max()) * scale))
        return int(np.searchsorted(c, gen.random() * c[-1], side="right"))

    def in_place_floor(s: np.ndarray) -> int:
        w = np.subtract(s, s.max())
        w *= scale
        np.exp(w, out=w)
        np.cumsum(w, out=w)
        return int(np.searchsorted(w, gen.random() * w[-1], side="right"))

    print(
        f"  {'EM one draw from fresh scores':<30} {'ours':>9} {'floor':>9} "
        f"{'in-place':>9} | {'ours/floor':<22} "
        f"{'ours/in-place':<22} distribution().sample/floor"
    )
    for m in sizes:
        scores = np.random.default_rng(9).uniform(0, 100, m)
        t = interleaved(
            {
                "floor": lambda: floor(scores),
                "in-place": lambda: in_place_floor(scores),
                "ours": lambda: em.sample_indices(scores, rng=gen),
                "distribution": lambda: em.distribution(scores).sample(rng=gen),
            },
            repeats,
        )
        ms = {k: f"{t.seconds(k) * 1e3:7.3f}ms" for k in ("ours", "floor", "in-place")}
        print(
            f"  {f'm = {m:.0e}':<30} {ms['ours']} {ms['floor']} {ms['in-place']} | "
            f"{t.ratio('ours', 'floor')!s:<22} {t.ratio('ours', 'in-place')!s:<22} "
            f"{t.ratio('distribution', 'floor')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument(
        "--floors", action="store_true", help="only Laplace release against its floor, interleaved"
    )
    parser.add_argument(
        "--reps", type=int, default=21, help="interleaved repetitions per floor row (default 21)"
    )
    args = parser.parse_args()
    print_machine()
    quick = args.quick
    for n in (10**6,) if quick else (10**6, 10**7):
        bench_laplace_floor(n, args.reps)
    if not args.floors:
        repeats = 3 if quick else 5
        bench_gaussian(10**6 if quick else 10**7, repeats)
        bench_discrete(10**3 if quick else 10**4, repeats)
        bench_sparse_vector(10**5 if quick else 10**6, repeats)
        bench_pmw(10**4, 200 if quick else 1000, 20 if quick else 100, repeats)
        bench_tree_counter(256 if quick else 1024, 10**3 if quick else 10**4, repeats)
        bench_accountant(10**3 if quick else 10**4, repeats)
        bench_exponential_draw(
            [10**3, 10**4, 10**5, 10**6] if quick else [10**3, 10**4, 10**5, 10**6, 10**7], repeats
        )
    print_machine("end")


if __name__ == "__main__":
    main()
