"""Benchmarks of the foundation: the exact price law, the misreport audit, exponential-mechanism selection.

Run:  python benchmarks/bench_auction.py          (add --quick for a smaller, faster pass)

Every figure is a ratio against a baseline measured in the same run, on the same machine:
  1. the exact price distribution, n = 10^6 bids on a 10^4-price grid, against one np.sort of the bids;
  2. the exact misreport audit, 10^5 bidders x 100 lies, against its floor: a numpy streaming pass that
     subtracts and takes each row's max and argmax over the n x L pairs in blocks (every audit must touch
     every pair once), and against brute force (the law recomputed for every (agent, lie)) on a
     subsample, scaled to all pairs; the continuum misreport and privacy audits (10^5 distinct bids x
     101 reports) against the same floor;
  3. one run of scenarios/large_n.toml (10^5 bidders: law, OPT, F2, RSOP, both audits) against one sort
     of as many bids;
  4. exponential-mechanism selection at m = 10^3 and 10^5 candidates against a numpy Gumbel-max
     baseline and, when installed (pip install -e ".[bench]"), OpenDP's make_noisy_max under zCDP
     (Gumbel noise: the same law) and diffprivlib's Exponential; and 10^4 draws from one distribution
     against 10^4 OpenDP calls.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from dpgames import DigitalGoodsAuction, ExponentialMechanism
from dpgames.analysis.auction_privacy import single_bid_privacy_audit
from dpgames.analysis.misreport import (
    misreport_audit,
    misreport_audit_brute_force,
    misreport_audit_of_law,
)
from dpgames.mechanisms.bids import Bids


def best_time(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def row(name: str, seconds: float, baseline: str, base_seconds: float, goal: str) -> None:
    print(f"{name:<48} {seconds * 1e3:10.2f} ms   {baseline:<34} {base_seconds * 1e3:10.2f} ms"
          f"   ratio {base_seconds / seconds:9.2f}x   goal {goal}")


def bench_price_law(n: int, m: int) -> None:
    bids = np.random.default_rng(0).uniform(size=n)
    auction = DigitalGoodsAuction(1.0, alpha=1.0 / m)
    ours = best_time(lambda: auction.price_distribution(bids))
    sort = best_time(lambda: np.sort(bids))
    print(f"{f'exact price distribution, n={n:.0e}, m={m}':<48} {ours * 1e3:10.2f} ms   "
          f"{'one np.sort of the bids':<34} {sort * 1e3:10.2f} ms   ours / sort {ours / sort:6.2f}x   goal <= 2x")


def streaming_floor(x: np.ndarray, y: np.ndarray, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """The floor of an n x L audit in numpy: ``x_i - y_l`` for every pair, in row blocks of ``chunk``
    pairs, and each row's max and argmax (what any audit must at least do: touch every pair once)."""
    rows = max(1, chunk // y.size)
    buf = np.empty(rows * y.size)
    best, where = np.empty(x.size), np.empty(x.size, dtype=np.int64)
    for r0 in range(0, x.size, rows):
        xs = x[r0:r0 + rows]
        g = buf[:xs.size * y.size].reshape(xs.size, y.size)
        np.subtract(xs[:, None], y[None, :], out=g)
        k = np.argmax(g, axis=1)
        best[r0:r0 + rows], where[r0:r0 + rows] = g[np.arange(k.size), k], k
    return best, where


def floor_row(name: str, seconds: float, floor: float, goal: str) -> None:
    print(f"{name:<48} {seconds * 1e3:10.2f} ms   {'numpy streaming pass (max/argmax)':<34} {floor * 1e3:10.2f} ms"
          f"   ours / floor {seconds / floor:6.2f}x   goal {goal}")


def bench_audit(n: int, lies: int, sample: int) -> None:
    values = np.random.default_rng(1).uniform(size=n)
    auction = DigitalGoodsAuction(0.5, alpha=1e-3)
    lie_grid = np.linspace(0, 1, lies)
    floor = best_time(lambda: streaming_floor(values, lie_grid))
    fast = best_time(lambda: misreport_audit(auction, values, lies=lie_grid))
    bids = Bids.of(values)
    law = auction.price_law(bids)
    prepared = best_time(lambda: misreport_audit_of_law(law, 0.5, values, bids, lie_grid))
    agents = np.random.default_rng(2).choice(n, size=sample, replace=False)
    brute_sample = best_time(lambda: misreport_audit_brute_force(auction, values, lie_grid[:10], agents), repeat=1)
    brute_all = brute_sample * (n / sample) * (lies / 10)
    floor_row(f"misreport audit, n={n:.0e} x {lies} lies (grid)", fast, floor, "<= 6x")
    floor_row("  the same on a prepared law and Bids", prepared, floor, "<= 6x")
    row(f"misreport audit, n={n:.0e} x {lies} lies", fast, f"brute force ({sample}x10 pairs, scaled)",
        brute_all, ">= 1000x")
    continuum = DigitalGoodsAuction(0.1, prices="continuous")
    beta = np.random.default_rng(0).beta(2, 5, size=n)
    lie_101 = np.linspace(0, 1, 101)
    floor_101 = best_time(lambda: streaming_floor(beta, lie_101))
    cont = best_time(lambda: misreport_audit(continuum, beta, lies=lie_101), repeat=3)
    floor_row(f"misreport audit, continuum, n={n:.0e} x 101", cont, floor_101, "<= 10x (all n cells distinct)")
    priv = best_time(lambda: single_bid_privacy_audit(continuum, beta, lie_101), repeat=3)
    floor_row(f"privacy audit, continuum, n={n:.0e} x 101", priv, floor_101, "<= 10x")
    grid = DigitalGoodsAuction(0.1)
    priv_grid = best_time(lambda: single_bid_privacy_audit(grid, beta, lie_101), repeat=3)
    floor_row(f"privacy audit, grid (distinct bids), n={n:.0e} x 101", priv_grid, floor_101, "<= 6x")


def bench_scenario(path: str) -> None:
    """One run of a digital-goods scenario file (law, baselines, both audits) in sorts of its bids."""
    from dpgames.scenarios.loader import Scenario

    scenario = Scenario.from_file(path)
    values = np.random.default_rng(0).uniform(size=int(scenario.data["population"]["n"]))
    run = best_time(lambda: scenario.run(), repeat=3)
    sort = best_time(lambda: np.sort(values))
    print(f"{'dpgames run ' + path:<48} {run * 1e3:10.2f} ms   {'one np.sort of as many bids':<34} {sort * 1e3:10.2f} ms"
          f"   ours / sort {run / sort:6.1f}x")


def bench_selection(m: int, opendp, diffprivlib) -> None:
    scores = np.random.default_rng(3).uniform(0, 100, size=m)
    eps = 1.0
    em = ExponentialMechanism(eps, 1.0)
    gen = np.random.default_rng(4)
    ours = best_time(lambda: em.sample_indices(scores, rng=gen))
    gumbel = best_time(lambda: int(np.argmax(scores * (eps / 2) + gen.gumbel(size=m))))
    row(f"EM one draw, m={m:.0e} (inverse CDF)", ours, "numpy Gumbel-max", gumbel, "~1x")
    if opendp is not None:
        space = opendp.vector_domain(opendp.atom_domain(T=float, nan=False)), opendp.linf_distance(T=float)
        measurement = opendp.m.make_noisy_max(*space, opendp.zero_concentrated_divergence(), scale=2.0 / eps)
        as_list = scores.tolist()
        theirs = best_time(lambda: measurement(as_list), repeat=3)
        row(f"EM one draw, m={m:.0e}", ours, "OpenDP make_noisy_max (zCDP)", theirs, ">= 15x at 1e5")
    if diffprivlib is not None:
        fresh = best_time(lambda: diffprivlib.mechanisms.Exponential(epsilon=eps, sensitivity=1.0,
                                                                     utility=scores.tolist()).randomise(), repeat=3)
        row(f"EM one draw, m={m:.0e}", ours, "diffprivlib Exponential (build+draw)", fresh, ">= 70x at 1e5")
        mech = diffprivlib.mechanisms.Exponential(epsilon=eps, sensitivity=1.0, utility=scores.tolist())
        prepared = em.distribution(scores)
        ours_prepared = best_time(lambda: prepared.sample_indices(rng=gen))
        theirs = best_time(lambda: mech.randomise(), repeat=3)
        row(f"EM one draw from a prepared mechanism, m={m:.0e}", ours_prepared, "diffprivlib randomise()",
            theirs, "")


def bench_many_draws(m: int, draws: int, opendp) -> None:
    scores = np.random.default_rng(5).uniform(0, 100, size=m)
    em = ExponentialMechanism(1.0, 1.0)
    gen = np.random.default_rng(6)
    ours = best_time(lambda: em.distribution(scores).sample_indices(draws, gen))
    if m <= 10**3:
        gumbel = best_time(lambda: np.argmax(scores[None, :] / 2 + gen.gumbel(size=(draws, m)), axis=1), repeat=1)
        row(f"EM {draws} draws, m={m:.0e} (one distribution)", ours, f"numpy Gumbel-max x {draws}", gumbel, "")
    if opendp is not None:
        space = opendp.vector_domain(opendp.atom_domain(T=float, nan=False)), opendp.linf_distance(T=float)
        measurement = opendp.m.make_noisy_max(*space, opendp.zero_concentrated_divergence(), scale=2.0)
        as_list = scores.tolist()
        k = max(5, 10**5 // m)
        per_call = best_time(lambda: [measurement(as_list) for _ in range(k)], repeat=1) / k
        row(f"EM {draws} draws, m={m:.0e} (one distribution)", ours, f"OpenDP x {draws} calls (from {k})",
            per_call * draws, ">= 1000x")


def optional(name: str):
    try:
        if name == "opendp":
            import opendp.prelude as dp
            dp.enable_features("contrib")
            return dp
        import diffprivlib
        import diffprivlib.mechanisms
        return diffprivlib
    except Exception as exc:  # not installed, or an incompatible scikit-learn
        print(f"({name} not available: {type(exc).__name__}: {exc}; install with pip install -e '.[bench]')")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    opendp, diffprivlib = optional("opendp"), optional("diffprivlib")
    big = 10**5 if args.quick else 10**6
    bench_price_law(big, 10**4)
    bench_audit(10**4 if args.quick else 10**5, 100, 10 if args.quick else 20)
    if not args.quick:
        bench_scenario("scenarios/large_n.toml")
    for m in (10**3, 10**5):
        bench_selection(m, opendp, diffprivlib)
    for m in (10**3, 10**5):
        bench_many_draws(m, 10**4, opendp)


if __name__ == "__main__":
    main()
