"""Scenario kind ``privacy_market``: a sensitive surveyor buys privacy from agents who value it
(Dwork & Roth 10.3; Ghosh & Roth 2011; see :mod:`dpgames.markets`).

```toml
kind = "privacy_market"
[population]
n = 10000
bit_rate = 0.3                                   # Pr[b = 1]
costs = { law = "uniform", low = 0, high = 1 }   # or exponential (mean), discrete (values, probabilities)
# costs_if_one = { ... }                         # optional: the cost law of agents with b = 1 (correlated)
[mechanism]
type = "accuracy"          # "accuracy" (Vickrey, least payment), "budget" (FairQuery) or "take_it_or_leave_it"
alpha = 0.05               # accuracy: within alpha n ...
beta = 0.05                # ... with probability >= 1 - beta, whatever the unbought bits
# unbought_share = 0.5     # accuracy: share of the radius spent on unbought agents
# budget = 10              # budget: B > 0 ...
# epsilon = 0.002          # ... at this eps (budget, take_it_or_leave_it)
# sample_size = 500        # take_it_or_leave_it: people approached per round
# start_price = 0.01       # take_it_or_leave_it: first price, doubled each round
[audit]
lies = 100                 # every agent x this many lies (0: no audit)
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import cast

import numpy as np
from scipy import stats

from dpgames.markets.agents import (
    CostLaw,
    PopulationLaw,
    PrivacyPopulation,
    cost_law,
    privacy_population,
)
from dpgames.markets.audit import BLOCK as AUDIT_BLOCK, cost_audit
from dpgames.markets.surveyor import (
    AccuracyAuction,
    FairQuery,
    envy_free_accuracy,
    envy_free_budget,
)
from dpgames.markets.take_it_or_leave_it import TakeItOrLeaveIt
from dpgames.scenarios import budget as budget_estimates
from dpgames.scenarios.invariants import Invariants, at_least, at_most, is_true
from dpgames.scenarios.result import Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

DESCRIPTION = (
    "Markets for privacy: the sensitive surveyor (Vickrey accuracy auction, FairQuery budget, "
    "take-it-or-leave-it) with exact error laws, envy-free benchmarks and cost audits"
)


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
MECHANISM = METRICS.add("mechanism", "the surveyor's mechanism")
N = METRICS.add("n", "agents", "agents")
COUNT = METRICS.add("count", "the true count s = sum of the bits", "agents")
N_BOUGHT = METRICS.add("n_bought", "agents whose bit is bought", "agents")
EPSILON = METRICS.add(
    "epsilon",
    "eps of each bought agent's bit: the release is eps-DP in it",
    "",
    "Ghosh & Roth 2011",
)
PRICE = METRICS.add("price", "price per unit of eps paid to each winner", "money per unit of eps")
TOTAL_PAYMENT = METRICS.add("total_payment", "total payment", "money")
ALPHA_N = METRICS.add("alpha_n", "the accuracy target alpha n", "agents")
GUARANTEED_RADIUS = METRICS.add(
    "guaranteed_radius",
    "worst-case error radius at probability 1 - beta over every bit vector (exact)",
    "agents",
    "Ghosh & Roth 2011",
)
GOAL_MET = METRICS.add(
    "goal_met", "the accuracy goal holds for every bit vector", "", "Ghosh & Roth 2011"
)
ENVY_FREE_PAYMENT = METRICS.add(
    "envy_free_payment",
    "the optimal fixed-price payment for the goal (true costs)",
    "money",
    "Ghosh & Roth 2011 (envy-free benchmark)",
)
PAYMENT_RATIO_TO_ENVY_FREE = METRICS.add(
    "payment_ratio_to_envy_free", "payment / envy-free payment (>= 1)"
)
BUDGET = METRICS.add("budget", "the budget B", "money")
ENVY_FREE_RADIUS = METRICS.add(
    "envy_free_radius",
    "the optimal fixed-price radius for the budget (true costs)",
    "agents",
    "Ghosh & Roth 2011 (envy-free benchmark)",
)
RADIUS_RATIO_TO_ENVY_FREE = METRICS.add(
    "radius_ratio_to_envy_free", "radius / envy-free radius (>= 1)"
)
PROBABILITY_WITHIN_TARGET = METRICS.add(
    "probability_within_target", "probability that the error is within the target (exact)"
)
MEAN_ABS_ERROR = METRICS.add("mean_abs_error", "expected absolute error (exact)", "agents")
BIAS = METRICS.add("bias", "the error's mean (unbought agents; correlated costs)", "agents")
MIN_UTILITY = METRICS.add(
    "min_utility", "smallest truthful utility (>= 0: individually rational)", "money"
)
AUDIT_LIES = METRICS.add("audit_lies", "lies tried by every agent", "lies")
AUDIT_MAX_GAIN = METRICS.add(
    "audit_max_gain", "largest gain from misreporting a cost (exact; <= 0: truthful)", "money"
)
TRUTHFUL = METRICS.add("truthful", "truthful on the grid of lies")
SAMPLE_SIZE = METRICS.add("sample_size", "people approached per round", "agents")
STOP_PROBABILITY = METRICS.add("stop_probability", "probability that some round succeeds (exact)")
EXPECTED_PAYMENT = METRICS.add("expected_payment", "expected total payment (exact)", "money")
OUTCOME = METRICS.add("outcome", "why no figure given success is reported (no round can succeed)")
MEAN_PRICE = METRICS.add("mean_price", "expected final price given success (exact)", "money")

INVARIANTS = Invariants(
    rules=[
        at_least(
            PAYMENT_RATIO_TO_ENVY_FREE,
            1.0,
            "the envy-free benchmark pays least for the accuracy goal",
        ),
        at_least(
            RADIUS_RATIO_TO_ENVY_FREE,
            1.0,
            "the envy-free benchmark is the most accurate for the budget",
        ),
        at_most(TOTAL_PAYMENT, BUDGET, "FairQuery never pays more than the budget", rel=1e-12),
        at_most(AUDIT_MAX_GAIN, 0.0, "no lie on the grid pays (truthful)"),
        at_least(MIN_UTILITY, 0.0, "individually rational"),
        is_true(GOAL_MET, "the accuracy goal holds for every bit vector"),
    ]
)


def data_roots() -> tuple[Path, ...]:
    """No data of its own: the population is drawn from the seed."""
    return ()


MAX_AGENTS = 10_000_000
TABLE_POINTS = 41


@dataclass(frozen=True)
class PrivacyMarketSpec:
    """A validated ``privacy_market`` scenario: the population law and size, the mechanism and the
    audit."""

    n: int
    law: PopulationLaw
    mechanism: AccuracyAuction | FairQuery | TakeItOrLeaveIt
    lies: int


def _law(population: Table) -> PopulationLaw:
    def read_cost(key: str, required: bool) -> CostLaw | None:
        optional = {} if required else {"default": None}
        raw = population.value(
            key,
            lambda x: isinstance(x, dict),
            'a table such as {law = "uniform", low = 0, high = 1}',
            **optional,
        )
        if raw is None:
            return None
        if not isinstance(raw.get("law"), str):
            # a table or a list is no law's name (and is unhashable)
            raise population.error(
                f"{key}.law",
                f'must be the name of a law ("uniform", "exponential" or '
                f'"discrete"), got {raw.get("law")!r}',
            )
        with population.field_path.fields():
            return cost_law(dict(raw), key)

    rate = population.number("bit_rate", low=0, high=1)
    costs = cast(CostLaw, read_cost("costs", True))  # required: never None
    return PopulationLaw(rate, costs, read_cost("costs_if_one", False))


def _mechanism(mech: Table) -> AccuracyAuction | FairQuery | TakeItOrLeaveIt:
    kind = mech.choice("type", ("accuracy", "budget", "take_it_or_leave_it"))
    build: Callable[[], AccuracyAuction | FairQuery | TakeItOrLeaveIt]
    if kind == "accuracy":
        build = partial(
            AccuracyAuction,
            mech.number("alpha", low=0, high=1, low_open=True, high_open=True),
            mech.number("beta", 0.05, low=0, high=0.5, low_open=True),
            mech.number("unbought_share", 0.5, low=0, high=1, low_open=True, high_open=True),
        )
    elif kind == "budget":
        build = partial(
            FairQuery,
            mech.number("budget", low=0, low_open=True),
            mech.number("epsilon", low=0, low_open=True),
        )
    else:
        build = partial(
            TakeItOrLeaveIt,
            mech.integer("sample_size", low=1, high=20_000),
            mech.number("alpha", low=0, high=1, low_open=True, high_open=True),
            mech.number("epsilon", low=0, low_open=True),
            mech.number("start_price", low=0, low_open=True),
            mech.integer("max_rounds", 40, low=1, high=1000),
        )
    with mech.field_path.fields():
        # fields that leave the float range together (a survey's payments, its noise)
        return build()


def parse(top: Table) -> PrivacyMarketSpec:
    """Read and validate a ``privacy_market`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    PrivacyMarketSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid (a cost law that is not a distribution names its
        key).
    """
    population = top.table("population", required=True)
    n = population.integer("n", low=1, high=MAX_AGENTS)
    law = _law(population)
    population.done()
    mech_table = top.table("mechanism", required=True)
    mechanism = _mechanism(mech_table)
    mech_table.done()
    audit = top.table("audit")
    lies = audit.integer("lies", 100, low=0, high=1000)
    audit.done()
    if isinstance(mechanism, AccuracyAuction) and mechanism.alpha * n <= 0.5:
        raise mech_table.error("alpha", f"too small for n = {n}: alpha n must exceed 1/2")
    if isinstance(mechanism, FairQuery) and "beta" in mech_table.data:
        raise mech_table.error(
            "beta", "is not used by the budget mechanism (its radius is reported at 0.05)"
        )
    return PrivacyMarketSpec(n, law, mechanism, lies)


#: Bytes per agent of an auction run: costs, bits, their order and ranks, the winners, payments and
#: utilities, the unbought agents' error law (measured 83 at 10^6 agents).
BYTES_PER_AGENT = 16 * budget_estimates.FLOAT
#: Arrays of one block of agents x lies the cost audit holds at once (FairQuery's thresholds; about
#: 9 measured).
AUDIT_BLOCK_COPIES = 16
#: Bytes a market run allocates whatever its size (Python objects, metrics and tables).
MARKET_RUN_OVERHEAD = 256e3


def estimate(spec: PrivacyMarketSpec) -> list[budget_estimates.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`).

    An auction: :data:`BYTES_PER_AGENT` per agent, then the cost audit's blocks of agents x lies
    (:data:`AUDIT_BLOCK_COPIES` arrays of :data:`dpgames.markets.audit.BLOCK` elements, or of one
    agent's lies when there are more).  The take-it-or-leave-it survey: its error law's atoms
    (counted from the stopping rounds' refusal laws, see :func:`survey_atoms`), evaluated at the
    table's :data:`TABLE_POINTS` points (six arrays of points x atoms; five measured).

    Parameters
    ----------
    spec : PrivacyMarketSpec

    Returns
    -------
    list of Estimate
    """
    mech, fmt = spec.mechanism, budget_estimates.fmt_count
    if isinstance(mech, TakeItOrLeaveIt):
        atoms = survey_atoms(mech, spec.law)
        return [
            budget_estimates.Estimate(
                f"the survey's error law ({fmt(atoms)} atoms)",
                MARKET_RUN_OVERHEAD + budget_estimates.FLOAT * atoms * (8 + 6 * TABLE_POINTS),
                0.5 * mech.sample_size**2,
            )
        ]
    n = float(spec.n)
    held = MARKET_RUN_OVERHEAD + BYTES_PER_AGENT * n
    out = [budget_estimates.Estimate(f"population and mechanism ({fmt(n)} agents)", held, 0.5 * n)]
    if spec.lies:
        lies = 2.0 * spec.lies  # the grid, and the true costs when there are as few
        block = min(n * lies, max(float(AUDIT_BLOCK), lies))
        out.append(
            budget_estimates.Estimate(
                f"cost audit ({fmt(n)} agents x {fmt(lies)} lies)",
                held + budget_estimates.FLOAT * AUDIT_BLOCK_COPIES * block,
                0.05 * n * spec.lies,
            )
        )
    return out


def survey_atoms(mech: TakeItOrLeaveIt, law: PopulationLaw, tail: float = 1e-15) -> float:
    """How many atoms the survey's error law keeps, at most: for each round stopping with
    probability above ``tail`` and each number of refusals ``r`` kept there (its weight above
    ``tail``), ``m - r + 1`` counts of ones, as :meth:`TakeItOrLeaveIt.law` builds them (it also
    drops the counts whose probability is 0 in floats).  O(rounds x refusals), no law built.

    Parameters
    ----------
    mech : TakeItOrLeaveIt
    law : PopulationLaw
    tail : float
        The law's cut-off.

    Returns
    -------
    float
    """
    m, rmax = mech.sample_size, mech.max_refusals
    accept, _ = mech._accept(law, mech.prices())
    success = stats.binom.cdf(rmax, m, 1 - accept)
    stop = np.concatenate([[1.0], np.cumprod(1 - success)[:-1]]) * success
    r = np.arange(rmax + 1)
    atoms = 0.0
    for j in np.flatnonzero(stop > tail):
        pr = stats.binom.pmf(r, m, 1 - accept[j])
        kept = r[pr / pr.sum() * stop[j] > tail]
        atoms += float(np.sum(m - kept + 1))
    return atoms


@dataclass(frozen=True)
class PrivacyMarketRun:
    """A ``privacy_market`` run: the spec and, for an auction, the population drawn from the seed's
    first child stream (the take-it-or-leave-it survey is measured on its law alone: None)."""

    spec: PrivacyMarketSpec
    population: PrivacyPopulation | None


def build(spec: PrivacyMarketSpec, seed: np.random.SeedSequence) -> PrivacyMarketRun:
    """Draw the population an auction runs on (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : PrivacyMarketSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    PrivacyMarketRun
    """
    if isinstance(spec.mechanism, TakeItOrLeaveIt):
        return PrivacyMarketRun(spec, None)
    (population_seed,) = child_streams(seed, 1)
    return PrivacyMarketRun(
        spec, privacy_population(spec.n, spec.law, rng=np.random.default_rng(population_seed))
    )


def run(built: PrivacyMarketRun) -> Result:
    """Run the mechanism and measure it exactly.

    Parameters
    ----------
    built : PrivacyMarketRun

    Returns
    -------
    Result
        Metrics; tables ``error_law`` (the exact CDF of the error) and, for the auctions, ``bought``
        (counts of bought agents by cost decile).
    """
    spec = built.spec
    m = Metrics()
    mech = spec.mechanism
    if isinstance(mech, TakeItOrLeaveIt):
        m.put(MECHANISM, "take-it-or-leave-it (doubling)", "mechanism")
        return _run_survey(spec, mech, m)
    m.put(MECHANISM, mech.name, "mechanism")
    pop = cast(PrivacyPopulation, built.population)  # build draws one for every auction
    out = mech.run(pop.costs)
    law = out.error_law(pop.bits)
    m.put(N, pop.n, "agents")
    m.put(COUNT, pop.count, "true count s = sum b_i")
    m.put(N_BOUGHT, out.n_bought, "agents bought")
    m.put(EPSILON, out.epsilon, "eps of each bought agent's bit (the release is eps-DP in it)")
    m.put(PRICE, out.price if out.n_bought else 0.0, "price per unit of eps paid to each winner")
    m.put(TOTAL_PAYMENT, out.total_payment, "total payment")
    if isinstance(mech, AccuracyAuction):
        target = mech.alpha * pop.n
        ef = envy_free_accuracy(pop.costs, mech.alpha, mech.beta)
        m.put(ALPHA_N, target, "accuracy target alpha n")
        m.put(
            GUARANTEED_RADIUS,
            out.guaranteed_radius(mech.beta),
            f"worst-case radius at 1 - beta = {1 - mech.beta:g} (exact)",
        )
        m.put(
            GOAL_MET,
            bool(out.guaranteed_radius(mech.beta) <= target * (1 + 1e-12)),
            "goal met for every bit vector",
        )
        m.put(
            ENVY_FREE_PAYMENT,
            ef.payment,
            "optimal fixed-price payment for the goal (exact, true costs)",
        )
        m.put(
            PAYMENT_RATIO_TO_ENVY_FREE,
            out.total_payment / ef.payment if ef.payment > 0 else 1.0,
            "payment / envy-free payment (>= 1)",
        )
        beta = mech.beta
    else:
        beta = 0.05
        target = out.guaranteed_radius(beta)
        ef = envy_free_budget(pop.costs, mech.budget, beta)
        m.put(BUDGET, mech.budget, "budget B")
        m.put(GUARANTEED_RADIUS, target, "worst-case radius at 95% (exact)")
        m.put(
            ENVY_FREE_RADIUS,
            ef.radius,
            "optimal fixed-price radius for the budget (exact, true costs)",
        )
        if ef.radius > 0 or target == 0:
            # a benchmark of radius 0 (costs of ~0: every bit bought) has no ratio
            m.put(
                RADIUS_RATIO_TO_ENVY_FREE,
                target / ef.radius if ef.radius > 0 else 1.0,
                "radius / envy-free radius (>= 1)",
            )
    m.put(
        PROBABILITY_WITHIN_TARGET,
        law.probability_within(target),
        "Pr[|error| <= target] given the drawn bits (exact)",
    )
    m.put(MEAN_ABS_ERROR, law.mean_absolute_error(), "E|error| given the drawn bits (exact)")
    m.put(BIAS, law.mean(), "deterministic part of the error (unbought agents)")
    m.put(
        MIN_UTILITY, float(out.utilities(pop.costs).min()), "smallest truthful utility (>= 0: IR)"
    )
    if spec.lies:
        audit = cost_audit(mech, pop.costs, grid=spec.lies)
        m.put(AUDIT_LIES, int(audit.lies.size), "lies tried by every agent")
        m.put(
            AUDIT_MAX_GAIN,
            audit.max_gain,
            "largest gain from misreporting a cost (exact; <= 0: truthful)",
        )
        m.put(TRUTHFUL, audit.truthful, "truthful on the grid")
    tables = {
        "error_law": _law_table(law, max(target, 1.0)),
        "bought": _bought_table(pop.costs, out.bought),
    }
    return m.result("privacy_market", tables)


def _run_survey(spec: PrivacyMarketSpec, mech: TakeItOrLeaveIt, m: Metrics) -> Result:
    law = mech.law(spec.law)
    target = mech.alpha * mech.sample_size
    m.put(SAMPLE_SIZE, mech.sample_size, "people approached per round")
    m.put(STOP_PROBABILITY, 1 - law.never, "probability that some round succeeds (exact)")
    m.put(EXPECTED_PAYMENT, law.expected_payment, "expected total payment (exact)")
    if law.mean_price_paid is None:  # no round can succeed: nothing to condition on
        m.put(
            OUTCOME,
            f"no round succeeds within max_rounds = {mech.max_rounds}",
            "the survey (exact: every round's success has probability 0 in floats)",
        )
    else:
        m.put(MEAN_PRICE, law.mean_price_paid, "expected final price (exact, given success)")
    if law.error is not None:
        m.put(
            PROBABILITY_WITHIN_TARGET,
            law.error.probability_within(target),
            "Pr[|released - m mu| <= alpha m] (exact, given success)",
        )
        m.put(
            MEAN_ABS_ERROR,
            law.error.mean_absolute_error(),
            "E|released - m mu| (exact, given success)",
        )
        # 0 for independent costs; within 1e-12 of the target it is rounding
        bias = law.error.mean()
        m.put(
            BIAS,
            bias if abs(bias) > 1e-12 * max(target, 1.0) else 0.0,
            "E[released - m mu] (exact; correlated costs bias it)",
        )
    # the rounds the survey can reach: after the last round that may stop it, only if it may never
    # stop
    stops = np.flatnonzero(law.stop > 0)
    reach = law.stop.size if law.never > 0 or not stops.size else int(stops[-1]) + 1
    tables = {
        "rounds": {
            "price": law.prices[:reach].tolist(),
            "stop_probability": law.stop[:reach].tolist(),
        }
    }
    if law.error is not None:
        tables["error_law"] = _law_table(law.error, max(target, 1.0))
    return m.result("privacy_market", tables)


def _law_table(law, target: float) -> dict[str, list]:
    x = np.linspace(-3 * target, 3 * target, TABLE_POINTS)
    return {"error": x.tolist(), "cdf": law.cdf(x).tolist()}


def _bought_table(costs: np.ndarray, bought: np.ndarray) -> dict[str, list]:
    edges = np.quantile(costs, np.linspace(0, 1, 11))
    which = np.clip(np.searchsorted(edges, costs, side="right") - 1, 0, 9)
    return {
        "cost_from": edges[:-1].tolist(),
        "cost_to": edges[1:].tolist(),
        "agents": np.bincount(which, minlength=10).tolist(),
        "bought": np.bincount(which, weights=bought, minlength=10).astype(int).tolist(),
    }
