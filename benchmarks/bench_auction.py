"""Benchmarks of the foundation: the exact price law, the misreport audit, exponential-mechanism
selection.

Run:  python benchmarks/bench_auction.py          (add --quick for a smaller, faster pass; --floors for
      only the rows of 1 and 2, against their floors; --reps N for their repetitions, default 21;
      the other rows take 5, 3 with --quick)

Every figure is a ratio against a baseline timed alternately with the code, repetition by
repetition, in one process (benchmarks/_timing.py: median CPU time per call, median and range of the
per-repetition ratios in CPU and wall time; the machine and its load average printed at the start
and the end):
  1. the exact price distribution, n = 10^4, 10^5 and 10^6 bids on a 10^4-price grid, against one
     np.sort of the bids;
  2. the exact misreport audit, 10^5 bidders x 100 lies, interleaved with its floor, the per-pair
     work of a rank-one audit with its factors given (``rank_one_floor``), and with a numpy
     streaming pass that subtracts and takes each row's max and argmax over the n x L pairs in
     blocks; against brute force (the law recomputed for every (agent, lie)) on a subsample, scaled
     to all pairs; the continuum misreport and privacy audits and the grid privacy audit (10^5
     distinct bids x 101 reports) against the subtracting pass;
  3. one run of scenarios/large_n.toml (10^5 bidders: law, OPT, F2, RSOP, both audits) against one
     sort of as many bids;
  4. exponential-mechanism selection at m = 10^3 and 10^5 candidates against a numpy Gumbel-max
     baseline, and 10^4 draws from one distribution at m = 10^3 against 10^4 Gumbel-max draws.
OpenDP and diffprivlib on the exponential mechanism: benchmarks/bench_peers.py.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved, print_machine, row

from dpgames import DigitalGoodsAuction, ExponentialMechanism
from dpgames.analysis.auction_privacy import single_bid_privacy_audit
from dpgames.analysis.misreport import (
    misreport_audit,
    misreport_audit_brute_force,
    misreport_audit_of_law,
)
from dpgames.mechanisms.bids import Bids


def bench_price_law(n: int, m: int, reps: int) -> None:
    """The exact price law from raw bids (validation, sort, counts, normalisation) against one
    np.sort of the same bids."""
    bids = np.random.default_rng(0).uniform(size=n)
    auction = DigitalGoodsAuction(1.0, alpha=1.0 / m)
    t = interleaved(
        {
            "ours": lambda: auction.price_distribution(bids),
            "one np.sort of the bids": lambda: np.sort(bids),
        },
        reps,
    )
    row(
        f"exact price law, n={n:.0e}, m={m}",
        t,
        "ours",
        "one np.sort of the bids",
        "goal <= 1.3x at n >= 1e5",
    )


def streaming_floor(
    x: np.ndarray, y: np.ndarray, chunk: int = 1 << 16
) -> tuple[np.ndarray, np.ndarray]:
    """The floor of an n x L audit in numpy: ``x_i - y_l`` for every pair, in row blocks of
    ``chunk`` pairs, and each row's max and argmax (what any audit must at least do: touch every
    pair once)."""
    rows = max(1, chunk // y.size)
    buf = np.empty(rows * y.size)
    best, where = np.empty(x.size), np.empty(x.size, dtype=np.int64)
    for r0 in range(0, x.size, rows):
        xs = x[r0 : r0 + rows]
        g = buf[: xs.size * y.size].reshape(xs.size, y.size)
        np.subtract(xs[:, None], y[None, :], out=g)
        k = np.argmax(g, axis=1)
        best[r0 : r0 + rows], where[r0 : r0 + rows] = g[np.arange(k.size), k], k
    return best, where


def rank_one_floor(
    rows_num: np.ndarray,
    cols_num: np.ndarray,
    rows_den: np.ndarray,
    cols_den: np.ndarray,
    chunk: int = 1 << 16,
) -> tuple[np.ndarray, np.ndarray]:
    """The per-pair work of an exact rank-one audit, in numpy: for every (agent, lie) a numerator
    and a denominator (one matrix product each of a per-agent row and a per-lie column factor), one
    division, and each row's max and argmax, in row blocks of ``chunk`` pairs in two reused buffers.
    It computes one closed form for every pair, where the audit picks one of two per pair (lowering
    or raising), so it is a lower bound of the audit's work, not the audit."""
    n, m = rows_num.shape[0], cols_num.shape[1]
    rows = max(1, chunk // m)
    num, den, index = np.empty(rows * m), np.empty(rows * m), np.arange(rows)
    best, where = np.empty(n), np.empty(n, dtype=np.int64)
    for r0 in range(0, n, rows):
        r = slice(r0, min(r0 + rows, n))
        size = r.stop - r.start
        g, d = num[: size * m].reshape(size, m), den[: size * m].reshape(size, m)
        np.matmul(rows_num[r], cols_num, out=g)
        np.matmul(rows_den[r], cols_den, out=d)
        g /= d
        k = np.argmax(g, axis=1)
        best[r], where[r] = g[index[:size], k], k
    return best, where


def raising_factors(law, values: np.ndarray, lies: np.ndarray) -> tuple[np.ndarray, ...]:
    """The raising closed form's per-agent and per-lie factors on a real law (the floor's
    inputs)."""
    F, G, U, V, _ = law.linear_prefix(law.canonical(lies))
    Fb, _, Ub, Vb, _ = law.linear_prefix(law.canonical(values))
    ones = np.ones(values.size)
    return (
        np.column_stack([values, -ones, Vb - values * Ub]),
        np.stack([F + U, G + V, np.ones(lies.size)]),
        np.column_stack([1.0 - Ub, ones]),
        np.stack([np.ones(lies.size), U]),
    )


def bench_audit_floor(n: int, lies: int, reps: int) -> None:
    """The exact misreport audit from raw values against the rank-one floor (its factors given) and
    the subtract-and-argmax pass, and the audit on a prepared law against the rank-one floor."""
    values = np.random.default_rng(1).uniform(size=n)
    auction = DigitalGoodsAuction(0.5, alpha=1e-3)
    lie_grid = np.linspace(0, 1, lies)
    factors = raising_factors(auction.price_law(values), values, lie_grid)
    bids = Bids.of(values)
    law = auction.price_law(bids)
    t = interleaved(
        {
            "ours": lambda: misreport_audit(auction, values, lies=lie_grid),
            "on a prepared law": lambda: misreport_audit_of_law(law, 0.5, values, bids, lie_grid),
            "rank-one pass": lambda: rank_one_floor(*factors),
            "subtract + max/argmax pass": lambda: streaming_floor(values, lie_grid),
        },
        reps,
    )
    row(f"misreport audit, n={n:.0e} x {lies} lies", t, "ours", "rank-one pass", "goal <= 2x")
    row("  the same", t, "ours", "subtract + max/argmax pass")
    row("  on a prepared law and Bids", t, "on a prepared law", "rank-one pass")


def bench_audit(n: int, lies: int, sample: int, repeats: int) -> None:
    """The misreport audit against brute force on a sample of pairs, scaled to all; the continuum
    audits and the grid privacy audit against the subtract-and-argmax pass."""
    values = np.random.default_rng(1).uniform(size=n)
    auction = DigitalGoodsAuction(0.5, alpha=1e-3)
    lie_grid = np.linspace(0, 1, lies)
    agents = np.random.default_rng(2).choice(n, size=sample, replace=False)
    t = interleaved(
        {
            "ours": lambda: misreport_audit(auction, values, lies=lie_grid),
            "brute force": lambda: misreport_audit_brute_force(
                auction, values, lie_grid[:10], agents
            ),
        },
        repeats,
    )
    row(
        f"misreport audit, n={n:.0e} x {lies} lies",
        t,
        "brute force",
        "ours",
        f"brute force on {sample} agents x 10 lies",
    )
    print(
        f"  {'':<40} brute force scaled to all {n * lies:.0e} pairs / ours "
        f"{t.ratio('brute force', 'ours') / (sample * 10 / (n * lies))} CPU  goal >= 1000x"
    )
    continuum, grid = DigitalGoodsAuction(0.1, prices="continuous"), DigitalGoodsAuction(0.1)
    beta = np.random.default_rng(0).beta(2, 5, size=n)
    lie_101 = np.linspace(0, 1, 101)
    floor = "subtract + max/argmax pass"
    t = interleaved(
        {
            floor: lambda: streaming_floor(beta, lie_101),
            "misreport, continuum": lambda: misreport_audit(continuum, beta, lies=lie_101),
            "privacy, continuum": lambda: single_bid_privacy_audit(continuum, beta, lie_101),
            "privacy, grid": lambda: single_bid_privacy_audit(grid, beta, lie_101),
        },
        repeats,
    )
    row(
        f"misreport audit, continuum, n={n:.0e} x 101",
        t,
        "misreport, continuum",
        floor,
        "goal <= 10x (all n cells distinct)",
    )
    row(f"privacy audit, continuum, n={n:.0e} x 101", t, "privacy, continuum", floor, "goal <= 10x")
    row(
        f"privacy audit, grid (distinct bids), n={n:.0e} x 101",
        t,
        "privacy, grid",
        floor,
        "goal <= 6x",
    )


def bench_scenario(path: str, repeats: int) -> None:
    """One run of a digital-goods scenario file (law, baselines, both audits) against one sort of
    its bids."""
    from dpgames.scenarios.loader import Scenario

    scenario = Scenario.from_file(path)
    values = np.random.default_rng(0).uniform(size=int(scenario.data["population"]["n"]))
    t = interleaved(
        {"dpgames run": scenario.run, "np.sort of as many bids": lambda: np.sort(values)}, repeats
    )
    row(f"dpgames run {path}", t, "dpgames run", "np.sort of as many bids")


def bench_selection(m: int, repeats: int) -> None:
    """One exponential-mechanism draw from fresh scores against numpy's Gumbel-max trick (the same
    law)."""
    scores = np.random.default_rng(3).uniform(0, 100, size=m)
    eps = 1.0
    em = ExponentialMechanism(eps, 1.0)
    gen = np.random.default_rng(4)
    t = interleaved(
        {
            "inverse CDF": lambda: em.sample_indices(scores, rng=gen),
            "numpy Gumbel-max": lambda: int(np.argmax(scores * (eps / 2) + gen.gumbel(size=m))),
        },
        repeats,
    )
    row(f"EM one draw, m={m:.0e}", t, "numpy Gumbel-max", "inverse CDF", "goal ~1x")


def bench_many_draws(m: int, draws: int, repeats: int) -> None:
    """``draws`` draws from one distribution against as many Gumbel-max draws (one m x draws
    matrix)."""
    scores = np.random.default_rng(5).uniform(0, 100, size=m)
    em = ExponentialMechanism(1.0, 1.0)
    gen = np.random.default_rng(6)
    t = interleaved(
        {
            "one distribution": lambda: em.distribution(scores).sample_indices(draws, gen),
            f"numpy Gumbel-max x {draws}": lambda: np.argmax(
                scores[None, :] / 2 + gen.gumbel(size=(draws, m)), axis=1
            ),
        },
        repeats,
    )
    row(f"EM {draws} draws, m={m:.0e}", t, f"numpy Gumbel-max x {draws}", "one distribution")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument(
        "--floors",
        action="store_true",
        help="only the price law and the misreport audit against their floors, interleaved",
    )
    parser.add_argument(
        "--reps", type=int, default=21, help="interleaved repetitions per floor row (default 21)"
    )
    args = parser.parse_args()
    print_machine()
    big = 10**5 if args.quick else 10**6
    for n in (10**4, 10**5, big) if not args.quick else (10**4, big):
        bench_price_law(n, 10**4, args.reps)
    bench_audit_floor(10**4 if args.quick else 10**5, 100, args.reps)
    if not args.floors:
        repeats = 3 if args.quick else 5
        bench_audit(10**4 if args.quick else 10**5, 100, 10 if args.quick else 20, repeats)
        if not args.quick:
            bench_scenario("scenarios/large_n.toml", repeats)
        for m in (10**3, 10**5):
            bench_selection(m, repeats)
        bench_many_draws(10**3, 10**4, repeats)
    print_machine("end")


if __name__ == "__main__":
    main()
