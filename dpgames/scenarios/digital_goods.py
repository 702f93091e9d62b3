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
from dataclasses import dataclass

import numpy as np

from dpgames.analysis.auction_privacy import privacy_audit_of_law
from dpgames.analysis.misreport import misreport_audit_of_law
from dpgames.mechanisms.baselines import f2_benchmark, optimal_fixed_price, revenue_at, rsop_revenue
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.price_laws import ContinuousPriceLaw, GridPriceLaw
from dpgames.scenarios import budget
from dpgames.scenarios.populations import PopulationFactory, parse_population
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

DESCRIPTION = "McSherry-Talwar's exponential-mechanism digital-goods auction against OPT, F2, RSOP and posted prices; exact revenue, misreport and privacy audits"

MAX_TABLE_PRICES = 2000


@dataclass(frozen=True)
class DigitalGoodsSpec:
    population: PopulationFactory
    auction: DigitalGoodsAuction
    posted_price: float
    rsop_samples: int
    audit: bool
    lies: np.ndarray | None
    beta: float
    n: int = 0     # agents (for the size estimate)


def parse(top: Table) -> DigitalGoodsSpec:
    population_table = top.table("population", required=True)
    population = parse_population(population_table)
    mech = top.table("mechanism", required=True)
    epsilon = mech.number("epsilon", low=0, low_open=True)
    prices = mech.value("prices", lambda x: x in ("grid", "continuous") or isinstance(x, list),
                        "'grid', 'continuous' or a list of prices", "grid")
    alpha = mech.number("alpha", None, low=0, high=1, low_open=True)
    convention = mech.choice("convention", ("dwork-roth", "mcsherry-talwar"), "dwork-roth")
    try:
        auction = DigitalGoodsAuction(epsilon, prices, alpha, convention)
    except ValueError as exc:
        field = getattr(exc, "field", "")
        raise mech.error(field if field in ("epsilon", "alpha", "prices", "convention") else
                         "alpha" if alpha is not None else "prices", str(exc)) from None
    mech.done()
    base = top.table("baselines")
    posted = base.number("posted_price", 0.5, low=0, high=1)
    rsop_samples = base.integer("rsop_samples", 2000, low=2)
    base.done()
    audit = top.table("audit")
    enabled = audit.boolean("enabled", True)
    lies = audit.value("lies", lambda x: x == "auto" or (isinstance(x, int) and not isinstance(x, bool) and x >= 2)
                       or (isinstance(x, list) and len(x) > 0 and all(
                           isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1 for e in x)),
                       "'auto', a whole number >= 2 or a list of reports in [0, 1]", "auto")
    beta = audit.number("beta", 0.05, low=0, high=1, low_open=True, high_open=True)
    audit.done()
    lie_grid = None if lies == "auto" else (np.linspace(0, 1, lies) if isinstance(lies, int)
                                            else np.asarray(lies, dtype=float))
    return DigitalGoodsSpec(population, auction, posted, rsop_samples, enabled, lie_grid, beta,
                            budget.population_size(population_table.data, population))


def estimate(spec: DigitalGoodsSpec) -> list[budget.Estimate]:
    """Peak memory and work of a run (see :mod:`dpgames.scenarios.budget`): the bids and their
    cumulative functionals (~16 floats per agent), the price law (~48 floats per price: the law and the
    log-sum-exp segment trees of its range functionals; measured 31-42 here), the audits
    (agents x reports, in blocks) and RSOP (splits x agents)."""
    n, auction, count = budget.size(spec.n), spec.auction, budget.fmt_count
    setting = list(auction.prices_for(1)) if auction.price_set == "explicit" else auction.price_set
    prices = budget.price_count(auction.epsilon, setting, auction.alpha, n)
    lies = float(spec.lies.size) if spec.lies is not None else (prices + 1 if prices + 1 <= 1001 else 101.0)
    rsop = 2.0 ** n * n if n <= 20 else budget.size(spec.rsop_samples) * n
    block = 2 ** 22 * budget.FLOAT * 4
    audit = 2 * n * lies * 40 if spec.audit else 0.0
    return [budget.Estimate(f"the price law ({count(prices)} prices for {count(n)} agents)",
                            budget.FLOAT * (16 * n + 48 * prices) + block, 20 * (n + prices) * budget.log2(n + prices)),
            budget.Estimate(f"RSOP ({count(budget.size(spec.rsop_samples))} splits of {count(n)} agents)" if n > 20
                            else f"RSOP (all 2^{spec.n} splits)", block, 20 * rsop),
            budget.Estimate(f"the misreport and privacy audits ({count(n)} agents x {count(lies)} reports)",
                            block, audit)]


def population_values(spec: DigitalGoodsSpec, seed: np.random.SeedSequence) -> np.ndarray:
    """The true values a run with root ``seed`` draws (its first stream)."""
    return spec.population(np.random.default_rng(child_streams(seed, 3)[0])).values


def run(spec: DigitalGoodsSpec, seed: np.random.SeedSequence) -> Result:
    _, draw_seed, rsop_seed = child_streams(seed, 3)
    values = population_values(spec, seed)
    n = values.size
    auction = spec.auction
    law = auction.price_law(values)
    revenue = law.expected_revenue()
    opt = optimal_fixed_price(values)
    rsop = rsop_revenue(values, spec.rsop_samples, np.random.default_rng(rsop_seed))
    welfare = law.expected_welfare(np.sort(values))
    price = law.sample(rng=np.random.default_rng(draw_seed))   # = auction.run, on the law built once

    m, labels = {}, {}

    def put(key: str, value, label: str) -> None:
        m[key], labels[key] = value, label

    put("n", n, "agents")
    put("epsilon", auction.epsilon, "epsilon (price is eps-DP in the bids)")
    prices = auction.prices_for(n)
    put("price_set", "continuous [0, 1]" if prices is None else f"{prices.size} prices", "price set")
    if prices is not None and auction.price_set == "grid":
        put("alpha", float(prices[0]), "grid step alpha")
    put("expected_revenue", revenue, "expected revenue (exact)")
    put("opt", opt.revenue, "OPT (optimal fixed price revenue)")
    put("opt_price", opt.price, "OPT price")
    put("f2", f2_benchmark(values), "F2 = max_{k>=2} k v_(k)")
    put("rsop_revenue", rsop.mean, "RSOP revenue" + (" (exact)" if rsop.exact else f" (MC, {rsop.samples} splits)"))
    if not rsop.exact:
        put("rsop_ci_low", rsop.ci_low, "RSOP 95% CI low")
        put("rsop_ci_high", rsop.ci_high, "RSOP 95% CI high")
    put("posted_price_revenue", revenue_at(spec.posted_price, values), f"posted price {spec.posted_price:g} revenue")
    # OPT = 0 only when every value is 0; then the revenue is 0 too and it attains OPT: ratio 1.
    put("revenue_over_opt", revenue / opt.revenue if opt.revenue > 0 else 1.0, "revenue / OPT")
    loss = auction.revenue_loss_bound(n, spec.beta) if isinstance(law, GridPriceLaw) else math.inf
    if math.isfinite(loss):   # inf (e.g. eps = 5e-324): the bound is vacuous and is not shown
        put("revenue_bound", opt.revenue - loss, f"Thm 3.11 bound: revenue >= this w.p. {1 - spec.beta:g}")
        put("prob_below_bound", float(law.distribution.expect(law.revenue_scores < opt.revenue - loss)),
            "exact P[revenue < bound]")
    put("expected_welfare", welfare, "expected welfare (exact)")
    put("max_welfare", float(values.sum()), "largest welfare (everyone buys)")
    put("sampled_price", float(price), "one draw: price")
    put("sampled_revenue", float(price * np.count_nonzero(values >= price)), "one draw: revenue")
    tables = {"price_law": _price_table(law)}
    if spec.audit:
        _audit_metrics(auction, law, values, spec.lies, put, tables)
    return Result("digital_goods", "", m, labels, tables, {"guarantee": str(auction.guarantee)})


def _audit_metrics(auction, law, values, lies, put, tables) -> None:
    audit = misreport_audit_of_law(law, auction.guarantee.epsilon, values, values, lies)
    worst = audit.worst_case
    put("audit_lies", audit.lies.size, "misreport audit: reports tried per agent")
    put("max_misreport_gain", audit.max_gain, "largest gain from misreporting (exact)")
    put("worst_agent", worst["agent"], "  attained by agent")
    put("worst_true_value", worst["true_value"], "  with true value")
    put("worst_lie", worst["lie"], "  reporting")
    put("bound_2eps", audit.bound_prop_10_1, "bound 2 eps (Prop 10.1)")
    # A gain is at most 1 (utilities lie in [0, 1]): the DP bounds are shown capped there, which also
    # keeps them finite when e^eps overflows (eps > ~709), where they are vacuous anyway.
    put("bound_exact_dp", min(1.0, float(audit.exact_dp_bound[worst["agent"]])),
        "bound min(1, (e^eps - 1) E[(v - p)+]) for that agent")
    put("bound_monotone", min(1.0, float(audit.monotone_bound[worst["agent"]])),
        "bound min(1, (e^(eps/2) - 1) E[(v - p)+]) (monotone score)")
    put("gains_within_bounds", audit.within_bounds(), "every agent's gain within all bounds")
    privacy = privacy_audit_of_law(law, auction.guarantee.epsilon, values, audit.lies)
    put("max_privacy_loss", privacy.max_loss, "largest privacy loss, any single-bid change (exact)")
    put("privacy_loss_bound", auction.guarantee.epsilon, "  guarantee epsilon (Thm 3.10)")
    q = audit.gain_quantiles()
    tables["misreport_gain_quantiles"] = {"quantile": list(q), "best_gain": list(q.values())}


def _price_table(law) -> dict[str, list]:
    """The price law for display: the distribution on a grid, the density on 201 points otherwise."""
    if isinstance(law, ContinuousPriceLaw):
        p = np.linspace(0.0, 1.0, 201)
        return {"price": p, "density": law.density(p)}
    if law.prices.size > MAX_TABLE_PRICES:
        keep = np.linspace(0, law.prices.size - 1, MAX_TABLE_PRICES).round().astype(int)
    else:
        keep = np.arange(law.prices.size)
    return {"price": law.prices[keep], "probability": law.distribution.probabilities[keep],
            "revenue": law.revenue_scores[keep]}
