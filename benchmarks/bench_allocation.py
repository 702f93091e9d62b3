"""Benchmark of private allocation (dpgames.allocation): the ascending-price auction with private demand
counters on 10^5 unit-demand bidders x 50 goods, against a floor measured in the same run.

Run:  python benchmarks/bench_allocation.py          (add --quick for 10x fewer bidders)

Floor: one demand pass, every bidder's favourite good at given prices (``(values - p).argmax(axis=1)``
over the n x k values), scaled by the bids the auction made (total bids / n passes): any ascending
auction must at least evaluate each bid.  Printed: time, floor, ratio; welfare against two exact upper
bounds on OPT (the exact optimum at this size is beyond the transportation LP here): LP duality at the
non-private asks, and the run's own certificate (OPT <= welfare + certificate <= welfare + alpha x copies
sold, the theorem of dpgames/allocation/auction.py); the private counters' margin E against the supply.
Both value laws: "uniform" and "common" (every bidder ranks the goods alike).  Goal: < 30 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpgames.allocation import (
    AscendingAuction,
    Market,
    dual_upper_bound,
    optimal_allocation,
)


def demand_pass(values: np.ndarray, prices: np.ndarray) -> np.ndarray:
    return (values - prices).argmax(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer bidders")
    args = parser.parse_args()
    n = 100_000 // (10 if args.quick else 1)
    for law in ("uniform", "common"):
        many_goods(n, law)
    few_goods(n // 10)


def many_goods(n: int, law: str) -> None:
    """10^5 bidders x 50 goods: time against the floor, welfare against the bounds."""
    k, alpha, supply, eps = 50, 0.05, 2_000, 1.0
    market = Market.random(n, k, supply, rng=0, law=law)
    prices = np.random.default_rng(1).random(k) * 0.5
    passes = []
    for _ in range(5):
        start = time.perf_counter()
        demand_pass(market.values, prices)
        passes.append(time.perf_counter() - start)
    one_pass = min(passes)
    print(f"== ascending auction, {n:,} bidders x {k} goods, {supply:,} copies each, alpha = {alpha}, law {law!r}")
    print(f"  one demand pass (n x k argmax)                 {one_pass * 1e3:8.2f} ms")
    exact_run = None
    for name, auction in (("non-private", AscendingAuction(alpha)), (f"private, eps = {eps:g}",
                                                                      AscendingAuction(alpha, eps))):
        start = time.perf_counter()
        out = auction.run(market, rng=2)
        seconds = time.perf_counter() - start
        bids = int(out.bids_per_bidder.sum())
        floor = one_pass * bids / n
        exact_run = exact_run or out
        upper = dual_upper_bound(market, exact_run.prices)
        print(f"  {name:<22} {seconds:8.3f} s  ({out.rounds:,} rounds, {bids:,} bids = {bids / n:.1f} passes)   "
              f"floor {floor:7.3f} s   ratio {seconds / floor:6.2f}x   goal < 30 s")
        certified = out.welfare + out.welfare_certificate
        print(f"      welfare {out.welfare:,.1f} >= {out.welfare / upper:.4f} x OPT (OPT <= {upper:,.1f}, LP duality) "
              f">= {out.welfare / certified:.4f} x OPT (OPT <= welfare + certificate = {certified:,.1f}); "
              f"copies sold {(out.served >= 0).sum():,} of {k * supply:,}; oversold {int(out.oversold.sum())}")
        if out.guarantee is not None:
            print(f"      joint privacy spent: {out.accountant.best_total()}; margin E = {out.margin:,.0f} copies "
                  f"(bid bound B = {out.bid_bound:,}): with E above the supply every price climbs to its cap, "
                  f"so at this k and alpha the counters need far more copies per good")


def few_goods(n: int) -> None:
    """Where the private counters pay: few goods, many copies (E well below the supply)."""
    k, alpha, supply, eps = 2, 0.25, 2 * n // 5, 1.0
    market = Market.random(n, k, supply, rng=0)
    start = time.perf_counter()
    opt = optimal_allocation(market)
    opt_seconds = time.perf_counter() - start
    print(f"== {n:,} bidders x {k} goods, {supply:,} copies each, alpha = {alpha}: exact OPT {opt.welfare:,.1f} "
          f"({opt.method}, {opt_seconds:.2f} s)")
    for name, auction in (("non-private", AscendingAuction(alpha)), (f"private, eps = {eps:g}",
                                                                      AscendingAuction(alpha, eps))):
        start = time.perf_counter()
        out = auction.run(market, rng=2)
        seconds = time.perf_counter() - start
        print(f"  {name:<22} {seconds:8.3f} s   welfare / OPT {out.welfare / opt.welfare:.4f}   margin E "
              f"{out.margin:,.0f}   oversold {int(out.oversold.sum())}   prices {out.prices.tolist()}")


if __name__ == "__main__":
    main()
