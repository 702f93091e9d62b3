"""Scenario kind ``digital_goods``: the exponential-mechanism auction against its baselines.

```toml
kind = "digital_goods"
[population]            # see dpgames.scenarios.populations
[mechanism]
epsilon = 0.5           # > 0
prices = "grid"         # "grid" | "continuous" | a list of ascending prices in (0, 1]
alpha = 0.01            # grid step in (0, 1]; default 1 / ceil(eps n / 2)
convention = "dwork-roth"   # or "mcsherry-talwar" (weights exp(eps * Rev): 2 eps-DP)
[baselines]
posted_price = 0.5      # a fixed posted price in [0, 1]
rsop_samples = 2000     # Monte Carlo splits for RSOP when n > 20 (exact enumeration below)
[audit]
enabled = true          # the exact misreport audit
lies = "auto"           # "auto" | a whole number of evenly spaced reports | a list of reports in [0, 1]
beta = 0.05             # failure probability in the revenue bound of Thm 3.11
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgames.agents import Discrete
from dpgames.analysis.auction_privacy import LINEAR_MIN_SCALE, privacy_audit_of_law
from dpgames.analysis.limits import ROUNDING
from dpgames.analysis.misreport import misreport_audit_of_law
from dpgames.mechanisms.baselines import (
    OptimalFixedPrice,
    RsopRevenue,
    f2_benchmark,
    optimal_fixed_price,
    revenue_at,
    rsop_revenue,
)
from dpgames.mechanisms.bids import Bids
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.price_laws import (
    LINEAR_TILT_LIMIT,
    ContinuousPriceLaw,
    GridPriceLaw,
    PriceLaw,
)
from dpgames.privacy.exponential import Convention
from dpgames.scenarios import budget
from dpgames.scenarios.invariants import (
    Invariants,
    at_least,
    at_most,
    is_true,
    probability_column,
    rows_equal,
    within,
)
from dpgames.scenarios.populations import PopulationSpec, parse_population
from dpgames.scenarios.result import Column, Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams
from dpgames.scenarios.text import plural
from dpgames.validation import ValidationError

DESCRIPTION = "McSherry-Talwar's exponential-mechanism digital-goods auction against OPT, F2, RSOP and posted prices; exact revenue, misreport and privacy audits"

MAX_TABLE_PRICES = 2000

#: Memory of a run besides its arrays (the Result, its tables and metrics; measured 0.1-0.5 MB).
RUN_OVERHEAD = 1e6


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
N = METRICS.add("n", "agents (bidders), each with a value in [0, 1]", "agents")
EPSILON = METRICS.add(
    "epsilon", "privacy parameter: the price is eps-DP in the bids", "", "Dwork & Roth Thm 3.10"
)
PRICE_SET = METRICS.add(
    "price_set", "the prices the mechanism draws from (a count, or the continuum)"
)
ALPHA = METRICS.add("alpha", "grid step of the price set", "value units (bids in [0, 1])")
EXPECTED_REVENUE = METRICS.add(
    "expected_revenue", "the auction's expected revenue, exact", "value units"
)
OPT = METRICS.add(
    "opt", "OPT: the optimal fixed-price revenue (omniscient benchmark)", "value units"
)
OPT_PRICE = METRICS.add("opt_price", "the price attaining OPT", "value units")
F2 = METRICS.add(
    "f2", "F2 = max_{k>=2} k v_(k), the benchmark of competitive analysis", "value units"
)
RSOP_REVENUE = METRICS.add(
    "rsop_revenue", "random sampling optimal price's expected revenue (exact or MC)", "value units"
)
RSOP_CI_LOW = METRICS.add(
    "rsop_ci_low", "95% CI low end of the RSOP revenue (Monte Carlo)", "value units"
)
RSOP_CI_HIGH = METRICS.add(
    "rsop_ci_high", "95% CI high end of the RSOP revenue (Monte Carlo)", "value units"
)
POSTED_PRICE_REVENUE = METRICS.add(
    "posted_price_revenue", "revenue of the fixed posted price", "value units"
)
REVENUE_OVER_OPT = METRICS.add("revenue_over_opt", "expected revenue / OPT (1 when OPT = 0)")
REVENUE_BOUND = METRICS.add(
    "revenue_bound",
    "OPT - alpha n - (2 Delta / eps) ln(|R| / beta): revenue is above it with probability 1 - beta",
    "value units",
    "Dwork & Roth Thm 3.11",
)
PROB_BELOW_BOUND = METRICS.add(
    "prob_below_bound",
    "exact probability that the revenue falls below revenue_bound",
    "",
    "Dwork & Roth Thm 3.11 (at most beta)",
)
EXPECTED_WELFARE = METRICS.add(
    "expected_welfare", "expected total value of the buyers, exact", "value units"
)
MAX_WELFARE = METRICS.add("max_welfare", "total value when everyone buys", "value units")
SAMPLED_PRICE = METRICS.add("sampled_price", "one draw of the price", "value units")
SAMPLED_REVENUE = METRICS.add("sampled_revenue", "the revenue of that draw", "value units")
AUDIT_LIES = METRICS.add("audit_lies", "reports tried per agent by the misreport audit", "reports")
MAX_MISREPORT_GAIN = METRICS.add(
    "max_misreport_gain",
    "largest expected-utility gain of any agent from any report, exact",
    "utility (in [0, 1])",
)
WORST_AGENT = METRICS.add("worst_agent", "the agent attaining max_misreport_gain", "agent index")
WORST_TRUE_VALUE = METRICS.add("worst_true_value", "that agent's true value", "value units")
WORST_LIE = METRICS.add("worst_lie", "that agent's best report", "value units")
MAX_MISREPORT_GAIN_BY = METRICS.add(
    "max_misreport_gain_by", "why no agent attains a gain (all within rounding)"
)
BOUND_2EPS = METRICS.add(
    "bound_2eps",
    "2 eps: truthful bidding is a 2 eps-approximate dominant strategy",
    "utility",
    "Dwork & Roth Prop 10.1",
    gain_bound=True,
)
BOUND_EXACT_DP = METRICS.add(
    "bound_exact_dp",
    "min(1, (e^eps - 1) E[(v - p)+]) for one agent: the exact gain bound of an eps-DP price",
    "utility",
    "Dwork & Roth Prop 10.1, exact form",
    gain_bound=True,
)
BOUND_MONOTONE = METRICS.add(
    "bound_monotone",
    "min(1, (e^(eps/2) - 1) E[(v - p)+]): the bound of a monotone score",
    "utility",
    "Dwork & Roth Thm 3.10 with a score monotone in each bid",
    gain_bound=True,
)
GAINS_WITHIN_BOUNDS = METRICS.add(
    "gains_within_bounds", "every agent's gain is within all the bounds above"
)
MAX_PRIVACY_LOSS = METRICS.add(
    "max_privacy_loss",
    "largest log-ratio of the price law under any one bid's change, exact",
    "nats",
)
PRIVACY_LOSS_BOUND = METRICS.add(
    "privacy_loss_bound", "the guarantee epsilon", "nats", "Dwork & Roth Thm 3.10"
)

_LOSS = "a privacy loss lies in [0, the guarantee]"
_REVENUE = "a single posted price earns at most OPT"

INVARIANTS = Invariants(
    rules=[
        at_least(N, 1, "there is at least one agent"),
        at_least(EPSILON, 0.0, "epsilon > 0"),
        *within(MAX_PRIVACY_LOSS, 0.0, PRIVACY_LOSS_BOUND, _LOSS),
        at_most(
            MAX_MISREPORT_GAIN,
            BOUND_2EPS,
            "a misreport gains at most 2 eps (Dwork & Roth Prop 10.1)",
        ),
        at_most(
            MAX_MISREPORT_GAIN, BOUND_EXACT_DP, "a misreport gains at most (e^eps - 1) E[(v - p)+]"
        ),
        at_most(
            MAX_MISREPORT_GAIN,
            BOUND_MONOTONE,
            "a misreport gains at most (e^(eps/2) - 1) E[(v - p)+]",
        ),
        at_most(MAX_MISREPORT_GAIN, 1.0, "a misreport gains at most 1 (utilities lie in [0, 1])"),
        is_true(GAINS_WITHIN_BOUNDS, "every agent's gain is within the proven bounds"),
        *within(EXPECTED_REVENUE, 0.0, OPT, "the expected revenue lies in [0, OPT]"),
        at_most(POSTED_PRICE_REVENUE, OPT, _REVENUE),
        at_most(SAMPLED_REVENUE, OPT, _REVENUE),
        at_most(F2, OPT, "F2 = max_{k>=2} k v_(k) is at most OPT"),
        *within(OPT, 0.0, N, "OPT lies in [0, n] (values in [0, 1])"),
        *within(REVENUE_OVER_OPT, 0.0, 1.0, "revenue / OPT lies in [0, 1]"),
        at_most(EXPECTED_REVENUE, EXPECTED_WELFARE, "truthful buyers pay at most their values"),
        *within(
            EXPECTED_WELFARE, 0.0, MAX_WELFARE, "the expected welfare lies in [0, everyone buys]"
        ),
        *within(RSOP_REVENUE, RSOP_CI_LOW, RSOP_CI_HIGH, "an estimate lies inside its interval"),
        at_least(RSOP_REVENUE, 0.0, "a revenue is >= 0"),
        *[
            r
            for metric in (OPT_PRICE, SAMPLED_PRICE, WORST_TRUE_VALUE, WORST_LIE, ALPHA)
            for r in within(metric, 0.0, 1.0, "a price or a value lies in [0, 1]")
        ],
    ],
    tables=[probability_column("price_law", "probability", rows_equal(PRICE_SET))],
)


def data_roots() -> tuple[Path, ...]:
    """No data folder of its own: a population's CSV lies beside the scenario or in a
    ``--data-dir``."""
    return ()


@dataclass(frozen=True)
class DigitalGoodsSpec:
    """A validated ``digital_goods`` scenario: parsed values only (see the module docstring for the
    fields).  Build one from a file or a dict with
    :meth:`Scenario.parse <dpgames.scenarios.loader.Scenario.parse>`.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> spec = Scenario.from_dict({"kind": "digital_goods", "mechanism": {"epsilon": 0.5},
    ...     "population": {"distribution": "uniform", "n": 400}}).parse().spec
    >>> spec.n, spec.auction.epsilon, spec.posted_price, spec.audit
    (400, 0.5, 0.5, True)
    """

    population: PopulationSpec
    auction: DigitalGoodsAuction
    posted_price: float
    rsop_samples: int
    audit: bool
    lies: int | tuple[float, ...] | None
    beta: float

    @property
    def n(self) -> int:
        """The number of agents (bidders)."""
        return self.population.n

    @property
    def lie_count(self) -> int | None:
        """How many reports the audit tries (``None``: the law's default, ``"auto"``)."""
        return self.lies if isinstance(self.lies, int) or self.lies is None else len(self.lies)

    def lie_grid(self) -> np.ndarray | None:
        """The reports the audit tries, built now (a count is kept as a count until the run: parsing
        never allocates in proportion to it); ``None``: the law's default."""
        if self.lies is None:
            return None
        return (
            np.linspace(0, 1, self.lies)
            if isinstance(self.lies, int)
            else np.asarray(self.lies, dtype=float)
        )


def parse(top: Table) -> DigitalGoodsSpec:
    """Read and validate a ``digital_goods`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table
        The whole scenario file.

    Returns
    -------
    DigitalGoodsSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid; the error's ``field`` names it.
    """
    population = parse_population(top.table("population", required=True))
    mech = top.table("mechanism", required=True)
    epsilon = mech.number("epsilon", low=0, low_open=True)
    prices = mech.value(
        "prices",
        lambda x: x in ("grid", "continuous") or isinstance(x, list),
        "'grid', 'continuous' or a list of prices",
        "grid",
    )
    alpha = mech.number("alpha", None, low=0, high=1, low_open=True)
    convention: Convention = mech.choice(
        "convention", ("dwork-roth", "mcsherry-talwar"), "dwork-roth"
    )
    with mech.field_path.fields():
        auction = DigitalGoodsAuction(epsilon, prices, alpha, convention)
    mech.done()
    base = top.table("baselines")
    posted = base.number("posted_price", 0.5, low=0, high=1)
    rsop_samples = base.integer("rsop_samples", 2000, low=2)
    base.done()
    audit = top.table("audit")
    enabled = audit.boolean("enabled", True)
    lies = audit.value(
        "lies",
        lambda x: (
            x == "auto"
            or (isinstance(x, int) and not isinstance(x, bool) and x >= 2)
            or (
                isinstance(x, list)
                and len(x) > 0
                and all(
                    isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1
                    for e in x
                )
            )
        ),
        "'auto', a whole number >= 2 or a list of reports in [0, 1]",
        "auto",
    )
    beta = audit.number("beta", 0.05, low=0, high=1, low_open=True, high_open=True)
    audit.done()
    reports = (
        None
        if lies == "auto"
        else lies
        if isinstance(lies, int)
        else tuple(float(e) + 0.0 for e in lies)
    )
    return DigitalGoodsSpec(population, auction, posted, rsop_samples, enabled, reports, beta)


def estimate(spec: DigitalGoodsSpec) -> list[budget.Estimate]:
    """Peak memory and work of a run (see :mod:`dpgames.scenarios.budget`), stage by stage, as
    measured against the runs' traced peaks (``benchmarks/bench_check_memory.py``): the bids and
    their cumulative functionals (~16 floats per agent) and the price law (~48 floats per price: the
    law and the log-sum-exp segment trees of its range functionals; measured 31-42 here); RSOP, in
    blocks of ``min(splits, 2^22 / n)`` splits x n agents at ~32 bytes an element; the audits, ~32
    floats per agent and price plus their blocks (about 2 MB on the linear path, 32 MB in log
    space).

    Parameters
    ----------
    spec : DigitalGoodsSpec

    Returns
    -------
    list of Estimate
    """
    n, auction, count = budget.size(spec.n), spec.auction, budget.fmt_count
    explicit = auction.prices_for(1) if auction.price_set == "explicit" else None
    setting = auction.price_set if explicit is None else list(explicit)
    prices = budget.price_count(auction.epsilon, setting, auction.alpha, n)
    lies = (
        budget.size(spec.lie_count)
        if spec.lie_count is not None
        else (prices + 1 if prices + 1 <= 1001 else 101.0)
    )
    splits = 2.0**n if n <= 20 else budget.size(spec.rsop_samples)
    rows = min(splits, max(1.0, math.floor(2**22 / n)))
    # the audits' linear path (k x largest price <= LINEAR_TILT_LIMIT, k = eps / (2 Delta) or eps)
    # on a finite price set; otherwise (or when unsure) their log-space blocks
    tilt = auction.epsilon / 2 if auction.convention == "dwork-roth" else auction.epsilon
    linear = auction.price_set != "continuous" and tilt <= LINEAR_TILT_LIMIT
    law = budget.FLOAT * (16 * n + 48 * prices) + RUN_OVERHEAD  # held by every later stage
    audit_memory = (
        budget.FLOAT * (32 * (n + prices) + 16 * lies) + (2e6 if linear else 32e6)
        if spec.audit
        else 0.0
    )
    audit = _audit_work(spec, n, prices, lies, tilt) if spec.audit else 0.0
    return [
        budget.Estimate(
            f"the price law ({count(prices)} prices for {count(n)} agents)",
            law,
            20 * (n + prices) * budget.log2(n + prices),
        ),
        budget.Estimate(
            f"RSOP ({count(budget.size(spec.rsop_samples))} splits of {count(n)} agents)"
            if n > 20
            else f"RSOP (all 2^{spec.n} splits)",
            law + 32 * rows * n,
            20 * splits * n,
        ),
        budget.Estimate(
            f"the misreport and privacy audits ({count(n)} agents x {count(lies)} reports)",
            law + audit_memory,
            audit,
        ),
    ]


#: Work per (agent, report) of an audit on the linear path, and per (distinct bid, report) in log
#: space (:func:`~dpgames.analysis.misreport.log_normaliser_ratio` and the range functionals: 0.9 to
#: 1.2 us of CPU time measured per pair and audit, 20,000 bids x 101 reports at eps = 1e6).
LINEAR_PAIR_OPS = 40.0
LOG_PAIR_OPS = 3000.0


def _audit_work(spec: DigitalGoodsSpec, n: float, prices: float, lies: float, tilt: float) -> float:
    """The misreport and privacy audits' work: linear in agents x reports on the linear path (``k
    <=`` :data:`~dpgames.mechanisms.price_laws.LINEAR_TILT_LIMIT`, the largest price taken as 1; the
    privacy audit on the continuum also needs ``k >=``
    :data:`~dpgames.analysis.auction_privacy.LINEAR_MIN_SCALE`), else :data:`LOG_PAIR_OPS` per
    distinct bid and report (at most the agents, the grid's prices + 1, or a discrete population's
    values)."""
    continuous = spec.auction.price_set == "continuous"
    law = spec.population.law
    # a discrete law's values
    support = budget.size(len(law.values)) if isinstance(law, Discrete) else n
    distinct = min(n, support, n if continuous else prices + 1)
    misreport_linear = tilt <= LINEAR_TILT_LIMIT
    privacy_linear = misreport_linear and (not continuous or tilt >= LINEAR_MIN_SCALE)
    per_agent = LINEAR_PAIR_OPS * n * lies
    misreport = per_agent if misreport_linear else per_agent + LOG_PAIR_OPS * distinct * lies
    privacy = per_agent if privacy_linear else LOG_PAIR_OPS * distinct * lies
    return misreport + privacy


@dataclass(frozen=True)
class DigitalGoodsRun:
    """What a ``digital_goods`` run computes before its metrics: the true values and the bids
    (truthful: the same numbers, checked and sorted once for the law, the baselines and the audits),
    the auction's exact price law and the baselines, from the streams of one root seed.  The app and
    ``dpgames run`` both start from it, so the same settings give the same numbers everywhere.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> scenario = Scenario.from_dict(
    ...     {
    ...         "kind": "digital_goods",
    ...         "seed": 1,
    ...         "mechanism": {"epsilon": 1.0},
    ...         "population": {"distribution": "list", "values": [0.2, 0.6, 0.9]},
    ...     }
    ... )
    >>> parsed = scenario.parse()
    >>> built = parsed.build()
    >>> built.opt.revenue, built.expected_revenue == scenario.run().metrics["expected_revenue"]
    (1.2, True)
    """

    spec: DigitalGoodsSpec
    values: np.ndarray
    auction: DigitalGoodsAuction
    law: PriceLaw
    bids: Bids
    opt: OptimalFixedPrice
    f2: float
    rsop: RsopRevenue
    posted_revenue: float
    sampled_price: float

    @property
    def expected_revenue(self) -> float:
        """The auction's exact expected revenue."""
        return self.law.expected_revenue()

    def revenue_bound(self, beta: float) -> float | None:
        """Thm 3.11's bound: revenue >= ``OPT - alpha n - (2 Delta / eps) ln(|R| / beta)`` with
        probability ``1 - beta``; None on the continuum or when the bound is not finite.

        Parameters
        ----------
        beta : float
            The failure probability, in (0, 1).

        Returns
        -------
        float or None
            May be negative: the bound is then vacuous at this n and eps.
        """
        if not isinstance(self.law, GridPriceLaw):
            return None
        loss = self.auction.revenue_loss_bound(self.values.size, beta)
        return self.opt.revenue - loss if math.isfinite(loss) else None


def build(spec: DigitalGoodsSpec, seed: np.random.SeedSequence) -> DigitalGoodsRun:
    """The bids, price law and baselines of a run with root ``seed`` (see
    :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : DigitalGoodsSpec
        A parsed scenario (:meth:`Scenario.parse <dpgames.scenarios.loader.Scenario.parse>` returns
        it with the seed).
    seed : numpy.random.SeedSequence
        The run's root seed; its three child streams draw the population, the sampled price and
        RSOP's splits (the caller's object is not advanced).

    Returns
    -------
    DigitalGoodsRun
    """
    population_seed, draw_seed, rsop_seed = child_streams(seed, 3)
    values = spec.population.draw(np.random.default_rng(population_seed)).values
    # checked and sorted once, for the law, the baselines and the audits
    bids = Bids.of(values, "values")
    law = spec.auction.price_law(bids)
    # = auction.run, law built once
    return DigitalGoodsRun(
        spec,
        values,
        spec.auction,
        law,
        bids,
        optimal_fixed_price(bids),
        f2_benchmark(bids),
        rsop_revenue(bids, spec.rsop_samples, np.random.default_rng(rsop_seed)),
        revenue_at(spec.posted_price, values),
        float(law.sample_price(rng=np.random.default_rng(draw_seed))),
    )


def run(built: DigitalGoodsRun) -> Result:
    """The metrics of a built run (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    built : DigitalGoodsRun

    Returns
    -------
    Result
        The metrics of :func:`build`'s run, the audits (unless disabled) and the ``price_law`` and
        ``misreport_gain_quantiles`` tables.
    """
    spec = built.spec
    values, auction, law, opt, rsop = built.values, built.auction, built.law, built.opt, built.rsop
    n = values.size
    revenue = built.expected_revenue
    m = Metrics()
    m.put(N, n, "agents")
    m.put(EPSILON, auction.epsilon, "epsilon (price is eps-DP in the bids)")
    prices = auction.prices_for(n)
    thinned = prices is not None and prices.size > MAX_TABLE_PRICES
    m.put(
        PRICE_SET,
        "continuous [0, 1]" if prices is None else plural(prices.size, "price"),
        "price set"
        + (
            f" (table price_law: {MAX_TABLE_PRICES:,} of them, spread evenly; each row's "
            "probability "
            "is the full law's)"
            if thinned
            else ""
        ),
    )
    if prices is not None and auction.price_set == "grid":
        m.put(ALPHA, float(prices[0]), "grid step alpha")
    m.put(EXPECTED_REVENUE, revenue, "expected revenue (exact)")
    m.put(OPT, opt.revenue, "OPT (optimal fixed price revenue)")
    m.put(OPT_PRICE, opt.price, "OPT price")
    m.put(F2, built.f2, "F2 = max_{k>=2} k v_(k)")
    m.put(
        RSOP_REVENUE,
        rsop.mean,
        "RSOP revenue" + (" (exact)" if rsop.exact else f" (MC, {plural(rsop.samples, 'split')})"),
    )
    if not rsop.exact:
        m.put(RSOP_CI_LOW, rsop.ci_low, "RSOP 95% CI low")
        m.put(RSOP_CI_HIGH, rsop.ci_high, "RSOP 95% CI high")
    m.put(POSTED_PRICE_REVENUE, built.posted_revenue, f"posted price {spec.posted_price:g} revenue")
    # OPT = 0 only when every value is 0; then the revenue is 0 too and it attains OPT: ratio 1.
    m.put(REVENUE_OVER_OPT, revenue / opt.revenue if opt.revenue > 0 else 1.0, "revenue / OPT")
    bound = built.revenue_bound(spec.beta)
    # None on the continuum, or when infinite (e.g. eps = 5e-324): the bound is vacuous and is not
    # shown
    if bound is not None and isinstance(law, GridPriceLaw):
        m.put(
            REVENUE_BOUND,
            bound,
            f"Thm 3.11 bound: revenue >= this w.p. {1 - spec.beta:g}"
            + (" (negative: vacuous at this n and eps)" if bound < 0 else ""),
        )
        m.put(
            PROB_BELOW_BOUND,
            float(law.distribution.expect(law.revenue_scores < bound)),
            "exact P[revenue < bound]",
        )
    m.put(EXPECTED_WELFARE, law.expected_welfare(law.sorted_bids), "expected welfare (exact)")
    m.put(MAX_WELFARE, float(values.sum()), "largest welfare (everyone buys)")
    price = built.sampled_price
    m.put(SAMPLED_PRICE, price, "one draw: price")
    m.put(SAMPLED_REVENUE, float(price * np.count_nonzero(values >= price)), "one draw: revenue")
    tables: dict[str, Mapping[str, Column]] = {"price_law": price_table(law)}
    if spec.audit:
        _audit_metrics(built, spec.lie_grid(), m, tables)
    return m.result("digital_goods", tables, {"guarantee": str(auction.guarantee)})


def _audit_metrics(
    built: DigitalGoodsRun,
    lies: np.ndarray | None,
    m: Metrics,
    tables: dict[str, Mapping[str, Column]],
) -> None:
    auction, law, values = built.auction, built.law, built.values
    audit = misreport_audit_of_law(law, auction.guarantee.epsilon, values, built.bids, lies)
    worst = audit.worst_case
    m.put(AUDIT_LIES, audit.lies.size, "misreport audit: reports tried per agent")
    agent = audit.worst_agent
    if audit.max_gain > ROUNDING:
        # utilities lie in [0, 1]: smaller gains are floating-point rounding
        m.put(MAX_MISREPORT_GAIN, audit.max_gain, "largest gain from misreporting (exact)")
        m.put(WORST_AGENT, agent, "  attained by agent")
        m.put(WORST_TRUE_VALUE, worst["true_value"], "  with true value")
        m.put(WORST_LIE, worst["lie"], "  reporting")
        whose = "that agent"
    else:
        m.put(MAX_MISREPORT_GAIN, 0.0, "largest gain from misreporting (exact)")
        m.put(
            MAX_MISREPORT_GAIN_BY,
            f"none: no agent gains more than float rounding ({ROUNDING:g})",
            "  attained by",
        )
        agent = int(np.argmax(audit.exact_dp_bound))  # nobody gains: show the loosest agent's bound
        whose = f"agent {agent}, the largest over the agents"
    m.put(BOUND_2EPS, audit.bound_prop_10_1, "bound 2 eps (Prop 10.1)")
    # A gain is at most 1 (utilities lie in [0, 1]): the DP bounds are shown capped there, which
    # also keeps them finite when e^eps overflows (eps > ~709), where they are vacuous anyway.
    m.put(
        BOUND_EXACT_DP,
        min(1.0, float(audit.exact_dp_bound[agent])),
        f"bound min(1, (e^eps - 1) E[(v - p)+]) for {whose}",
    )
    m.put(
        BOUND_MONOTONE,
        min(1.0, float(audit.monotone_bound[agent])),
        "bound min(1, (e^(eps/2) - 1) E[(v - p)+]) (monotone score)",
    )
    m.put(GAINS_WITHIN_BOUNDS, audit.within_bounds(), "every agent's gain within all bounds")
    privacy = privacy_audit_of_law(law, auction.guarantee.epsilon, built.bids, audit.lies)
    m.put(MAX_PRIVACY_LOSS, privacy.max_loss, "largest privacy loss, any single-bid change (exact)")
    m.put(PRIVACY_LOSS_BOUND, auction.guarantee.epsilon, "  guarantee epsilon (Thm 3.10)")
    q = audit.gain_quantiles()
    # gains within float rounding are 0, as in max_misreport_gain (not +-1e-17 artefacts)
    tables["misreport_gain_quantiles"] = {
        "quantile": list(q),
        "best_gain": [0.0 if abs(g) <= ROUNDING else g for g in q.values()],
    }


def price_table(law: PriceLaw) -> dict[str, np.ndarray]:
    """The price law as the ``price_law`` table of a run's Result (the app shows the same table).

    Parameters
    ----------
    law : PriceLaw
        A price law built by :meth:`DigitalGoodsAuction.price_law`.

    Returns
    -------
    dict of str to numpy.ndarray
        On a grid: ``price``, ``probability``, ``revenue`` (at most ``MAX_TABLE_PRICES`` evenly
        spaced prices); on the continuum: ``price`` and ``density`` at 201 points of [0, 1].

    Raises
    ------
    ValidationError
        If ``law`` is neither a :class:`GridPriceLaw` nor a :class:`ContinuousPriceLaw`.
    """
    if isinstance(law, ContinuousPriceLaw):
        p = np.linspace(0.0, 1.0, 201)
        return {"price": p, "density": law.density(p)}
    if not isinstance(law, GridPriceLaw):
        raise ValidationError(
            "law", f"must be a GridPriceLaw or a ContinuousPriceLaw, got {type(law).__name__}"
        )
    if law.prices.size > MAX_TABLE_PRICES:
        keep = np.linspace(0, law.prices.size - 1, MAX_TABLE_PRICES).round().astype(int)
    else:
        keep = np.arange(law.prices.size)
    return {
        "price": law.prices[keep],
        "probability": law.distribution.probabilities[keep],
        "revenue": law.revenue_scores[keep],
    }
