"""Benchmark of private allocation (dpgames.allocation): the ascending-price auction with private
demand counters on 10^5 unit-demand bidders x 50 goods, against a floor measured in the same run.

Run:  python benchmarks/bench_allocation.py          (add --quick for 10x fewer bidders)

Floor: one demand pass, every bidder's favourite good at given prices (``(values -
p).argmax(axis=1)`` over the n x k values), scaled by the bids the auction made (total bids / n
passes): any ascending auction must at least evaluate each bid.  The auction and one pass are timed
alternately, ``--repeats`` times in one process (benchmarks/_timing.py: median and range of the
per-repetition ratios, CPU and wall). Printed: time, floor, ratio; welfare against two exact upper
bounds on OPT (the exact optimum at this size is beyond the transportation LP here): LP duality at
the non-private asks, and the run's own certificate (OPT <= welfare + certificate <= welfare + alpha
x copies sold, the theorem of dpgames/allocation/auction.py); the private counters' margin E against
the supply. Both value laws: "uniform" and "common" (every bidder ranks the goods alike).  Goal: <
30 s.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved, print_machine

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
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repetitions")
    args = parser.parse_args()
    n = 100_000 // (10 if args.quick else 1)
    print_machine()
    for law in ("uniform", "common"):
        many_goods(n, law, args.repeats)
    few_goods(n // 10, args.repeats)
    print_machine("end")


def many_goods(n: int, law: str, repeats: int) -> None:
    """10^5 bidders x 50 goods: time against the floor, welfare against the bounds."""
    k, alpha, supply, eps = 50, 0.05, 2_000, 1.0
    market = Market.random(n, k, supply, rng=0, law=law)
    prices = np.random.default_rng(1).random(k) * 0.5
    print(
        f"== ascending auction, {n:,} bidders x {k} goods, {supply:,} copies each, alpha "
        f"= {alpha}, law {law!r}"
    )
    exact_run = None
    for name, auction in (
        ("non-private", AscendingAuction(alpha)),
        (f"private, eps = {eps:g}", AscendingAuction(alpha, eps)),
    ):
        t = interleaved(
            {
                "auction": lambda a=auction: a.run(market, rng=2),
                "pass": lambda: demand_pass(market.values, prices),
            },
            repeats,
        )
        out = t.results["auction"]
        bids = int(out.bids_per_bidder.sum())
        passes = bids / n
        exact_run = exact_run or out
        upper = dual_upper_bound(market, exact_run.prices)
        print(
            f"  {name:<22} {t.seconds('auction'):8.3f} CPU-s ({out.rounds:,} rounds, "
            f"{bids:,} bids = {passes:.1f} "
            f"passes); one demand pass {1e3 * t.seconds('pass'):.2f} ms; auction / "
            f"({passes:.1f} passes) "
            f"{t.ratio('auction', 'pass') / passes} CPU, "
            f"{t.ratio('auction', 'pass', 'wall') / passes} wall, "
            f"{repeats} interleaved reps; goal < 30 s"
        )
        certified = out.welfare + out.welfare_certificate
        print(
            f"      welfare {out.welfare:,.1f} >= {out.welfare / upper:.4f} x OPT (OPT <= "
            f"{upper:,.1f}, LP duality) "
            f">= {out.welfare / certified:.4f} x OPT (OPT <= welfare + certificate = "
            f"{certified:,.1f}); "
            f"copies sold {(out.served >= 0).sum():,} of {k * supply:,}; oversold "
            f"{int(out.oversold.sum())}"
        )
        if out.guarantee is not None:
            print(
                f"      joint privacy spent: {out.accountant.best_total()}; margin E = "
                f"{out.margin:,.0f} copies "
                f"(bid bound B = {out.bid_bound:,}): with E above the supply every price "
                "climbs to its cap, "
                f"so at this k and alpha the counters need far more copies per good"
            )


def few_goods(n: int, repeats: int) -> None:
    """Where the private counters pay: few goods, many copies (E well below the supply)."""
    k, alpha, supply, eps = 2, 0.25, 2 * n // 5, 1.0
    market = Market.random(n, k, supply, rng=0)
    auctions = {
        "non-private": AscendingAuction(alpha),
        f"private, eps = {eps:g}": AscendingAuction(alpha, eps),
    }
    t = interleaved(
        {"exact OPT": lambda: optimal_allocation(market)}
        | {name: (lambda a=a: a.run(market, rng=2)) for name, a in auctions.items()},
        repeats,
    )
    opt = t.results["exact OPT"]
    print(
        f"== {n:,} bidders x {k} goods, {supply:,} copies each, alpha = {alpha}: exact "
        f"OPT {opt.welfare:,.1f} "
        f"({opt.method}, {t.seconds('exact OPT'):.2f} CPU-s)"
    )
    for name in auctions:
        out = t.results[name]
        print(
            f"  {name:<22} welfare / OPT {out.welfare / opt.welfare:.4f}   margin E "
            f"{out.margin:,.0f}   oversold "
            f"{int(out.oversold.sum())}   prices {out.prices.tolist()}; {t.line(name, 'exact OPT')}"
        )


if __name__ == "__main__":
    main()
