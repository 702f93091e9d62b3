"""Scenario kind ``allocation``: a market of unit-demand bidders and goods in supply cleared by the
ascending-price auction with private demand counters (joint DP; see :mod:`dpgames.allocation`), next
to the non-private ascending auction and the optimal allocation.

```toml
kind = "allocation"
[market]
bidders = 20000            # n unit-demand bidders, values drawn from the seed
goods = 2                  # k kinds of goods
supply = 5000              # copies of each good: one number, or one per good
law = "uniform"            # "uniform" (v_ij uniform on [0, 1]) or "common" (v_ij = q_j u_ij)
[auction]
alpha = 0.25               # price increment, in [0.0001, 1]
epsilon = 5.0              # counters' privacy (joint eps-DP); omit for the non-private auction only
margin = "auto"            # the private auction's fix: thresholds lowered by E ("auto": from the counters) or a number
beta = 0.05                # the fix's failure probability
[audit]
bidders = 0                # exact misreport gains of the first this-many bidders (one auction per lie)
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgames.allocation.auction import MIN_ALPHA, AllocationOutcome, AscendingAuction
from dpgames.allocation.baselines import (
    ASSIGNMENT_LIMIT,
    LP_LIMIT,
    OptimalAllocation,
    dual_upper_bound,
    equilibrium_violations,
    optimal_allocation,
)
from dpgames.allocation.incentives import misreport_gains
from dpgames.allocation.market import LAWS, Market
from dpgames.scenarios import budget as budget_estimates
from dpgames.scenarios.invariants import Invariants, at_least, at_most, is_true
from dpgames.scenarios.result import Metric, Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

DESCRIPTION = (
    "Private allocation: unit-demand bidders, goods in supply, the ascending-price auction with "
    "private counters (joint DP), against the non-private auction and the optimum"
)


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
N_BIDDERS = METRICS.add("n_bidders", "unit-demand bidders", "bidders")
N_GOODS = METRICS.add("n_goods", "kinds of goods", "goods")
SUPPLY_TOTAL = METRICS.add("supply_total", "copies of all goods", "copies")
ALPHA = METRICS.add("alpha", "price increment of the ascending auction", "value units")
OPT = METRICS.add(
    "opt", "the optimal welfare (exact: assignment or transportation LP)", "value units"
)
OPT_UPPER_BOUND = METRICS.add(
    "opt_upper_bound",
    "upper bound on the optimal welfare by LP duality at the non-private prices",
    "value units",
    "weak LP duality",
)


@dataclass(frozen=True)
class OutcomeMetrics:
    """The metrics of one auction's outcome (the private one, or the non-private one with
    ``_nonprivate``)."""

    welfare: Metric
    sold: Metric
    rounds: Metric
    revenue: Metric
    certificate: Metric
    welfare_ratio: Metric


def _outcome_metrics(suffix: str, auction: str) -> OutcomeMetrics:
    return OutcomeMetrics(
        METRICS.add(f"welfare{suffix}", f"welfare of the {auction}", "value units"),
        METRICS.add(f"sold{suffix}", f"copies the {auction} sells", "copies"),
        METRICS.add(f"rounds{suffix}", f"rounds the {auction} runs", "rounds"),
        METRICS.add(f"revenue{suffix}", f"revenue of the {auction}", "value units"),
        METRICS.add(
            f"certificate{suffix}",
            f"the {auction}'s certificate: welfare >= OPT - this (exact)",
            "value units",
            "dpgames' welfare certificate (dpgames.allocation.auction)",
        ),
        METRICS.add(f"welfare_ratio{suffix}", f"welfare of the {auction} / OPT"),
    )


NONPRIVATE = _outcome_metrics("_nonprivate", "non-private ascending auction")
_THEOREM = "the non-private auction's theorem (dpgames.allocation.auction; after Demange, Gale & Sotomayor 1986)"
NONPRIVATE_WALRASIAN = METRICS.add(
    "nonprivate_walrasian",
    "the non-private auction ends in a Walrasian equilibrium up to alpha",
    "",
    _THEOREM,
)
OPT_MINUS_ALPHA_SOLD = METRICS.add(
    "opt_minus_alpha_sold",
    "OPT - alpha x copies sold: the theorem's lower bound on the non-private welfare",
    "value units",
    _THEOREM,
)
EPSILON = METRICS.add(
    "epsilon",
    "epsilon of the counters: joint eps-DP in one bidder's values",
    "",
    "Hsu, Huang, Roth, Roughgarden & Wu 2014",
)
PRIVACY_SPENT_EPSILON = METRICS.add(
    "privacy_spent_epsilon", "joint privacy spent, epsilon (the accountant's)"
)
PRIVACY_SPENT_DELTA = METRICS.add(
    "privacy_spent_delta", "joint privacy spent, delta (the accountant's)"
)
BID_BOUND = METRICS.add("bid_bound", "most bids of one bidder, B = k (L + 1)", "bids")
MARGIN = METRICS.add(
    "margin", "the fix: thresholds lowered by E, the counters' error bound at beta", "bids"
)
PRIVATE = _outcome_metrics("", "private auction")
CERTIFICATE_HOLDS = METRICS.add(
    "certificate_holds", "welfare >= OPT - certificate holds for the private auction"
)
OVERSOLD_COPIES = METRICS.add(
    "oversold_copies", "copies over-demanded at the end (with the fix)", "copies"
)
OVERSOLD_WITHOUT_FIX = METRICS.add(
    "oversold_without_fix",
    "copies over-demanded at the end without the fix (margin 0, the same noise)",
    "copies",
)
OVERSOLD_GOODS_WITHOUT_FIX = METRICS.add(
    "oversold_goods_without_fix", "goods oversold without the fix", "goods"
)
AUDIT_BIDDERS = METRICS.add(
    "audit_bidders", "bidders whose misreports are audited (exact)", "bidders"
)
AUDIT_LIES = METRICS.add("audit_lies", "lies tried by each audited bidder", "lies")
MAX_MISREPORT_GAIN = METRICS.add(
    "max_misreport_gain", "largest gain from a lie (exact, on the realised noise)", "value units"
)
MEAN_MISREPORT_GAIN = METRICS.add(
    "mean_misreport_gain", "mean best gain of the audited bidders", "value units"
)

INVARIANTS = Invariants(
    rules=[
        at_most(
            PRIVATE.welfare, OPT_UPPER_BOUND, "welfare is at most the optimum (LP duality bound)"
        ),
        at_most(
            NONPRIVATE.welfare, OPT_UPPER_BOUND, "welfare is at most the optimum (LP duality bound)"
        ),
        at_most(OPT, OPT_UPPER_BOUND, "weak LP duality"),
        at_most(PRIVATE.welfare, OPT, "welfare is at most the optimum"),
        at_most(NONPRIVATE.welfare, OPT, "welfare is at most the optimum"),
        is_true(CERTIFICATE_HOLDS, "welfare >= OPT - certificate (exact certificate of the run)"),
        is_true(
            NONPRIVATE_WALRASIAN,
            "the non-private auction is a Walrasian equilibrium up to alpha (theorem)",
        ),
        at_least(
            NONPRIVATE.welfare,
            OPT_MINUS_ALPHA_SOLD,
            "non-private welfare >= OPT - alpha x copies sold (theorem)",
        ),
        at_least(MAX_MISREPORT_GAIN, 0.0, "a gain is >= 0"),
        at_least(OVERSOLD_WITHOUT_FIX, OVERSOLD_COPIES, "the fix only lowers the over-demand"),
    ]
)


def data_roots() -> tuple[Path, ...]:
    """No data of its own: the market is drawn from the seed."""
    return ()


MAX_CELLS = 50_000_000
#: Bytes a run allocates whatever its size (the result's tables, numpy's and scipy's caches): 0.2 MB
#: measured (tracemalloc, a fresh process) on allocation_small.toml, 12 bidders and 3 goods.
RUN_OVERHEAD = 0.5e6


@dataclass(frozen=True)
class AllocationSpec:
    """A validated ``allocation`` scenario."""

    bidders: int
    goods: int
    supply: tuple[int, ...] | int
    law: str
    alpha: float
    epsilon: float | None
    margin: float | str
    beta: float
    audit_bidders: int

    def auction(self, epsilon: float | None, margin: float | str | None = None) -> AscendingAuction:
        """The auction of this spec with the given privacy (``None``: the exact, non-private
        auction, whose thresholds the margin, a fix for the counters' noise, leaves alone) and
        margin."""
        if margin is None:
            margin = self.margin if epsilon is not None else 0.0
        return AscendingAuction(self.alpha, epsilon, margin=margin, beta=self.beta)


def parse(top: Table) -> AllocationSpec:
    """Read and validate an ``allocation`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    AllocationSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid.
    """
    market = top.table("market", required=True)
    bidders = market.integer("bidders", low=1, high=10**7)
    goods = market.integer("goods", low=1, high=10_000)
    raw = market.value(
        "supply",
        lambda x: (
            (isinstance(x, int) and not isinstance(x, bool) and x >= 1)
            or (
                isinstance(x, list)
                and len(x) == goods
                and all(isinstance(y, int) and not isinstance(y, bool) and y >= 1 for y in x)
            )
        ),
        f"an integer >= 1 or a list of {goods} integers >= 1 (one per good)",
    )
    supply = raw if isinstance(raw, int) else tuple(raw)
    law = market.choice("law", LAWS, "uniform")
    market.done()
    if bidders * goods > MAX_CELLS:
        raise market.error(
            "bidders", f"x goods must be at most {MAX_CELLS:,} values, got {bidders * goods:,}"
        )
    auction = top.table("auction", required=True)
    alpha = auction.number("alpha", low=MIN_ALPHA, high=1)
    epsilon = auction.number("epsilon", None, low=0, low_open=True)
    margin = auction.value(
        "margin",
        lambda x: (
            x == "auto"
            or (isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < float("inf"))
        ),
        '"auto" or a number >= 0',
        "auto",
    )
    beta = auction.number("beta", 0.05, low=0, high=1, low_open=True, high_open=True)
    auction.done()
    audit = top.table("audit")
    audit_bidders = audit.integer("bidders", 0, low=0, high=min(bidders, 200))
    audit.done()
    return AllocationSpec(
        bidders,
        goods,
        supply,
        law,
        alpha,
        epsilon,
        margin if margin == "auto" else float(margin),
        beta,
        audit_bidders,
    )


def _copies(spec: AllocationSpec) -> int:
    s = np.broadcast_to(np.asarray(spec.supply), (spec.goods,))
    return int(np.minimum(s, spec.bidders).sum())


def _exact_optimum(spec: AllocationSpec) -> bool:
    return spec.bidders * _copies(spec) <= ASSIGNMENT_LIMIT or spec.bidders * spec.goods <= LP_LIMIT


#: Work of one auction round whatever the market's size: the Python and numpy calls of a round, 25
#: to 39 us of CPU time measured for the exact auction, 47 to 53 us for the private one (12 to 400
#: bidders, a busy machine).
ROUND_OPS = 4e4
PRIVATE_ROUND_OPS = 6e4
#: Per good and round: the counters, levels, history and price path (about 15 passes over the
#: goods).
GOOD_OPS = 30.0
#: Per bidder and round of the private auction: her coin and the scan of the holders (about 40 ns
#: measured).
PRIVATE_BIDDER_OPS = 60.0
#: Per waiting bidder of a round: her utilities at the asks (``BID_OPS`` per good) and her bid.
BID_OPS = 30.0
WAIT_OPS = 100.0
#: Per good bid on (or risen) in a round of the exact auction: its queue's Python step (about 1.5
#: us).
QUEUE_OPS = 2000.0


def auction_rounds(spec: AllocationSpec, private: bool) -> float:
    """The most rounds one auction of ``spec`` runs.  Private: its horizon ``T``.  Non-private
    (dpgames' proof): a round is followed by another only if it displaced a holder, which needs a
    good bid on or risen in it; a good rises at most ``L + 1`` times, and at each level ``l >= 1``
    it is bid on without rising in at most ``min(s_j, n)`` rounds (each adds a bid to its level
    count, which rises past ``s_j``; at level 0 nobody holds below the ask), so at most ``1 + sum_j
    (L + 1 + L min(s_j, n))`` rounds; and at most ``1 + n (B + 1)`` (each round after the first has
    a bidder who bids or leaves).

    Parameters
    ----------
    spec : AllocationSpec
    private : bool

    Returns
    -------
    float
    """
    auction = spec.auction(spec.epsilon if private else None)
    if private:
        return float(auction.horizon(spec.goods))
    supply = np.minimum(
        np.broadcast_to(np.asarray(spec.supply, dtype=float), (spec.goods,)), spec.bidders
    )
    levels = float(auction.levels)
    by_goods = 1 + float(np.sum(levels + 1 + levels * supply))
    return min(by_goods, 1 + float(spec.bidders) * (auction.bid_bound(spec.goods) + 1))


def auction_work(spec: AllocationSpec, private: bool) -> tuple[float, float]:
    """Work and memory (bytes) of one auction of ``spec``, from :func:`auction_rounds` ``R``: per
    round :data:`ROUND_OPS` (private: ``PRIVATE_ROUND_OPS``, and ``PRIVATE_BIDDER_OPS`` per bidder)
    and ``GOOD_OPS`` per good; per waiting bidder ``BID_OPS`` per good and ``WAIT_OPS`` (every
    waiting bidder bids or leaves: at most ``n (B + 1)`` in all, and ``n`` a round); non-private,
    ``QUEUE_OPS`` per good bid on in a round. Memory: per round the price path, bids, counts and
    history rows (six floats per good and 400 bytes), and the exact auction's queues (a bidder
    number per bid)."""
    rounds = auction_rounds(spec, private)
    n, k = float(spec.bidders), float(spec.goods)
    waiting = min(n * (spec.auction(None).bid_bound(spec.goods) + 1), rounds * n)
    per_round = (
        PRIVATE_ROUND_OPS + PRIVATE_BIDDER_OPS * n if private else ROUND_OPS
    ) + GOOD_OPS * k
    work = rounds * per_round + waiting * (BID_OPS * k + WAIT_OPS)
    work += 0.0 if private else QUEUE_OPS * min(rounds * k, waiting)
    memory = rounds * (400 + 6 * budget_estimates.FLOAT * k) + (
        0.0 if private else budget_estimates.FLOAT * waiting
    )
    return work, memory


def estimate(spec: AllocationSpec) -> list[budget_estimates.Estimate]:
    """Peak memory and work: the auctions from their loop counts (:func:`auction_work`); the run
    holds three (non-private, private, private without the fix); the optimum by assignment (copies^2
    x bidders / 10) or the transportation LP (superlinear in its n k variables); the audit reruns
    one auction per lie and bidder.  Memory (measured with tracemalloc): 128 bytes per value while
    auctions run (the values, two finished outcomes and the running auction's demand passes, about
    75 bytes), the auctions' rounds and :data:`RUN_OVERHEAD`, held by every stage; the assignment
    adds its dense cost matrix and a copy (16 bytes per bidder x copy), the LP 400 bytes per value.

    Parameters
    ----------
    spec : AllocationSpec

    Returns
    -------
    list of Estimate
    """
    cells = float(spec.bidders) * spec.goods
    exact, exact_memory = auction_work(spec, private=False)
    private, private_memory = (
        auction_work(spec, private=True) if spec.epsilon is not None else (0.0, 0.0)
    )
    held = 128 * cells + exact_memory + 2 * private_memory + RUN_OVERHEAD
    stages = [budget_estimates.Estimate("market and auctions", held, exact + 2 * private)]
    if _exact_optimum(spec):
        columns = float(_copies(spec))
        if spec.bidders * columns <= ASSIGNMENT_LIMIT:
            stages.append(
                budget_estimates.Estimate(
                    "optimum (assignment)",
                    held + 2 * budget_estimates.FLOAT * spec.bidders * columns,
                    spec.bidders * columns * min(spec.bidders, columns) / 10,
                )
            )
        else:
            stages.append(
                budget_estimates.Estimate(
                    "optimum (LP)", held + 400 * cells, 3e4 * cells * max(1.0, cells / 2e4)
                )
            )
    if spec.audit_bidders:
        audited, audited_memory = (
            (private, private_memory) if spec.epsilon is not None else (exact, exact_memory)
        )
        # single_minded_lies, counted: 0, and per good each l alpha and 1
        levels = spec.auction(None).levels
        lies = 1 + spec.goods * (levels + 1 + int(levels * spec.alpha != 1.0))
        stages.append(
            budget_estimates.Estimate(
                f"misreport audit ({spec.audit_bidders} "
                f"bidder{'s' if spec.audit_bidders != 1 else ''} x {lies:,} lies, "
                "one auction each)",
                held + audited_memory,
                (spec.audit_bidders * lies + 1) * audited,
            )
        )
    return stages


@dataclass(frozen=True)
class AllocationRun:
    """An ``allocation`` run: the market drawn from the seed's first child stream, and the second,
    from which every auction's counters draw the same noise."""

    spec: AllocationSpec
    market: Market
    noise_seed: np.random.SeedSequence


def build(spec: AllocationSpec, seed: np.random.SeedSequence) -> AllocationRun:
    """Draw the market (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : AllocationSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    AllocationRun
    """
    market_seed, noise_seed = child_streams(seed, 2)
    market = Market.random(
        spec.bidders, spec.goods, spec.supply, np.random.default_rng(market_seed), spec.law
    )
    return AllocationRun(spec, market, noise_seed)


def run(built: AllocationRun) -> Result:
    """Run the private and non-private auctions on the market, the optimum and the audit.

    Parameters
    ----------
    built : AllocationRun

    Returns
    -------
    Result
        Metrics; tables ``goods`` (per good: supply, prices, copies sold) and ``prices`` (the public
        price path of the private auction, or the non-private one without ``epsilon``).
    """
    spec, market, noise_seed = built.spec, built.market, built.noise_seed
    m = Metrics()
    m.put(N_BIDDERS, market.n, "bidders")
    m.put(N_GOODS, market.k, "kinds of goods")
    m.put(SUPPLY_TOTAL, int(market.supply.sum()), "copies in all")
    m.put(ALPHA, spec.alpha, "price increment alpha")
    exact = spec.auction(None).run(market)
    upper = dual_upper_bound(market, exact.prices)
    opt = optimal_allocation(market) if _exact_optimum(spec) else None
    if opt is not None:
        m.put(OPT, opt.welfare, f"optimal welfare (exact, {opt.method})")
    m.put(
        OPT_UPPER_BOUND,
        upper,
        "upper bound on the optimal welfare (exact; LP duality at the non-private prices)",
    )
    _put_outcome(m, exact, NONPRIVATE, "non-private ascending auction", opt)
    check = equilibrium_violations(market, exact.served, exact.prices)
    m.put(
        NONPRIVATE_WALRASIAN,
        bool(
            check.demand_gap <= spec.alpha + 1e-12
            and check.oversold == 0
            and check.priced_unsold.size == 0
        ),
        "non-private: every bidder in demand up to alpha at the final asks, nothing "
        "oversold, unsold goods at 0",
    )
    if opt is not None:
        m.put(
            OPT_MINUS_ALPHA_SOLD,
            opt.welfare - spec.alpha * int((exact.served >= 0).sum()) - 1e-9,
            "OPT - alpha x copies sold (non-private), the theorem's lower bound on its welfare",
        )
    shown = exact
    if spec.epsilon is not None:
        private_auction = spec.auction(spec.epsilon)
        # the same noise for both: a fresh generator from the same stream each time
        private = private_auction.run(market, rng=np.random.default_rng(noise_seed))
        raw = spec.auction(spec.epsilon, margin=0.0).run(
            market, rng=np.random.default_rng(noise_seed)
        )
        m.put(
            EPSILON, spec.epsilon, "epsilon of the counters (joint eps-DP in one bidder's values)"
        )
        if private.accountant is not None:  # a private auction's outcome always has one
            m.put(
                PRIVACY_SPENT_EPSILON,
                private.accountant.best_total().epsilon,
                "joint privacy spent (accountant): epsilon",
            )
            m.put(
                PRIVACY_SPENT_DELTA,
                private.accountant.best_total().delta,
                "joint privacy spent: delta",
            )
        m.put(BID_BOUND, private.bid_bound, "most bids of one bidder, B = k (L + 1)")
        m.put(
            MARGIN, private.margin, "the fix: thresholds lowered by E (counter error bound at beta)"
        )
        _put_outcome(m, private, PRIVATE, "private auction", opt)
        m.put(
            OVERSOLD_COPIES,
            int(private.oversold.sum()),
            "copies over-demanded at the end (with the fix)",
        )
        m.put(
            OVERSOLD_WITHOUT_FIX,
            int(raw.oversold.sum()),
            "copies over-demanded at the end without the fix (margin 0, same noise)",
        )
        m.put(
            OVERSOLD_GOODS_WITHOUT_FIX,
            int((raw.oversold > 0).sum()),
            "goods oversold without the fix",
        )
        shown = private
    if spec.audit_bidders:
        audited = spec.auction(spec.epsilon)
        gains = misreport_gains(
            audited,
            market,
            rng=np.random.default_rng(noise_seed),
            bidders=np.arange(spec.audit_bidders),
        )
        where = (
            "on the realised noise" if spec.epsilon is not None else "in the non-private auction"
        )
        m.put(AUDIT_BIDDERS, int(gains.bidders.size), f"bidders audited (exact, {where})")
        m.put(
            AUDIT_LIES, int(gains.lies.shape[0]), "lies tried by each (single-minded reports and 0)"
        )
        m.put(MAX_MISREPORT_GAIN, gains.max_gain, f"largest gain from a lie {where} (exact)")
        m.put(
            MEAN_MISREPORT_GAIN, float(gains.gains.mean()), "mean best gain of the audited bidders"
        )
    tables = {
        "goods": {
            "good": list(range(market.k)),
            "supply": market.supply.tolist(),
            "price": shown.prices.tolist(),
            "sold": market.sold(shown.served).tolist(),
            "price_nonprivate": exact.prices.tolist(),
            "sold_nonprivate": market.sold(exact.served).tolist(),
        },
        "prices": {
            "round": list(range(shown.price_path.shape[0])),
            **{f"good_{j}": shown.price_path[:, j].tolist() for j in range(market.k)},
        },
    }
    if opt is not None:
        tables["goods"]["sold_optimal"] = market.sold(opt.assignment).tolist()
    provenance = {
        "guarantee": str(shown.guarantee) if shown.guarantee is not None else "non-private"
    }
    return m.result("allocation", tables, provenance)


def _put_outcome(
    m: Metrics,
    out: AllocationOutcome,
    metrics: OutcomeMetrics,
    name: str,
    opt: OptimalAllocation | None,
) -> None:
    m.put(metrics.welfare, out.welfare, f"{name}: welfare")
    m.put(metrics.sold, int((out.served >= 0).sum()), f"{name}: copies sold")
    m.put(metrics.rounds, out.rounds, f"{name}: rounds")
    m.put(metrics.revenue, out.revenue, f"{name}: revenue")
    m.put(
        metrics.certificate,
        out.welfare_certificate,
        f"{name}: certificate, welfare >= OPT - this (exact)",
    )
    if opt is not None:
        m.put(
            metrics.welfare_ratio,
            out.welfare / opt.welfare if opt.welfare > 0 else 1.0,
            f"{name}: welfare / OPT",
        )
        if metrics is PRIVATE:
            m.put(
                CERTIFICATE_HOLDS,
                bool(out.welfare >= opt.welfare - out.welfare_certificate - 1e-9),
                "welfare >= OPT - certificate",
            )
