"""Scenario kind ``nst_mix``: exact truthfulness by mixing the exponential and the commitment mechanisms.

```toml
kind = "nst_mix"
[environment]
type = "pricing"            # or "facility_location" (see dpgames.scenarios.environments)
types = "midpoints"         # pricing: the value grid, "midpoints" between prices or a list in [0, 1]
[population]                # pricing: as for digital_goods (values are moved to the nearest type);
                            # facility location: see dpgames.scenarios.environments
[mechanism]
epsilon = 0.5               # > 0, or "balanced": the eps balancing the two losses (needs gamma > 0)
prices = "grid"             # pricing only, as for digital_goods ("continuous" is refused: |O| must be finite)
alpha = 0.05                # pricing only
reactions = "forced"        # "forced" (default for pricing: the auction sells by the bids) | "free" (NST)
punishing = "all"           # or a list of outcome indices for M^P
[scaling]                   # optional: the whole analysis again at several population sizes
n = [100, 1000, 10000]
epsilon = "same"            # "same" as [mechanism] or "balanced" at each n (the sqrt(1/n) regime)
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpgames.analysis.nst import NSTReport, nst_report
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.deviations import TYPE_SPACE_LIMIT
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import balanced_epsilon, loss_bound_per_agent
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing
from dpgames.scenarios import budget
from dpgames.scenarios.environments import FacilitySpec, parse_facility, parse_located_population
from dpgames.scenarios.populations import parse_population
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

DESCRIPTION = "Exact truthfulness by mixing the exponential and commitment mechanisms (Nissim-Smorodinsky-Tennenholtz): gap, theorem q, exact least q"

MAX_TABLE_ROWS = 2000

#: (n agents, generator) -> (exponential mechanism, profile, largest move onto the type grid)
Setup = Callable[[int | None, np.random.Generator, float | None], tuple[ObjectiveExponentialMechanism, Profile, float]]


@dataclass(frozen=True)
class NSTSpec:
    setup: Setup
    balanced: bool
    punishing: list[int] | None
    scaling: list[int]
    scaling_balanced: bool
    mechanism_table: Table
    agents: int = 0                                   # the population's size (for the budget)
    size: Callable[[float], budget.EnvironmentSize] | None = None   # environment sizes at n agents


def estimate(spec: NSTSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment and the audits at
    the population's size and again at each size of ``[scaling]``."""
    if spec.size is None:
        return []
    out = []
    for n in dict.fromkeys([spec.agents, *spec.scaling]):
        out += budget.environment_estimates(spec.size(budget.size(n)), [n], f"n = {budget.fmt_count(budget.size(n))}")
    return out


def parse(top: Table) -> NSTSpec:
    env_table = top.table("environment", required=True)
    kind = env_table.choice("type", ("pricing", "facility_location"))
    mech = top.table("mechanism", required=True)
    eps = mech.value("epsilon", lambda x: x == "balanced" or (isinstance(x, (int, float)) and not isinstance(x, bool)
                                                              and math.isfinite(x) and x > 0),
                     "a number > 0 or 'balanced'")
    punishing = mech.value("punishing", lambda x: x == "all" or (isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in x)),
        "'all' or a non-empty list of outcome indices (whole numbers >= 0)", "all")
    if kind == "pricing":
        setup, size, agents = _parse_pricing(env_table, top.table("population", required=True), mech, eps)
    else:
        facility = parse_facility(env_table)
        setup, agents = _parse_facility(facility, top.table("population", required=True), mech, eps)
        size = lambda n: facility.size()  # noqa: E731 - the facility environment does not depend on n
    env_table.done()
    mech.done()
    scaling_table = top.table("scaling")
    scaling = scaling_table.value("n", lambda x: isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, int) and not isinstance(e, bool) and e >= 1 for e in x), "a non-empty list of whole numbers >= 1",
        [])
    scaling_eps = scaling_table.choice("epsilon", ("same", "balanced"), "same")
    scaling_table.done()
    if scaling_eps == "balanced" and kind == "pricing" and mech.data.get("alpha") is None \
            and mech.data.get("prices", "grid") == "grid":
        raise scaling_table.error("epsilon", "'balanced' needs a price set that does not depend on eps: "
                                  "set mechanism.alpha or mechanism.prices")
    return NSTSpec(setup, eps == "balanced", None if punishing == "all" else punishing, scaling,
                   eps == "balanced" or scaling_eps == "balanced", mech, agents, size)


def _parse_pricing(env_table: Table, population: Table, mech: Table, eps) -> tuple[Setup, Callable, int]:
    types = env_table.value("types", lambda x: x == "midpoints" or (isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1 for e in x)),
        "'midpoints' or a non-empty list of values in [0, 1]", "midpoints")
    prices = mech.value("prices", lambda x: x == "grid" or isinstance(x, list),
                        "'grid' or a list of prices (the mix needs a finite price set)", "grid")
    alpha = mech.number("alpha", None, low=0, high=1, low_open=True)
    reactions = mech.choice("reactions", ("forced", "free"), "forced")
    if eps == "balanced" and prices == "grid" and alpha is None:
        raise mech.error("epsilon", "'balanced' needs a price set that does not depend on eps: set alpha or prices")
    draw_values = parse_population(population)
    grid = None if types == "midpoints" else np.asarray(types, dtype=float)

    def setup(n, rng, epsilon):
        values = draw_values(rng).values
        if n is not None:   # drawn again at size n (a fixed list is repeated), in random order
            copies = [values] + [draw_values(rng).values for _ in range(-(-n // values.size) - 1)]
            values = rng.permutation(np.concatenate(copies))[:n]
        try:
            auction = DigitalGoodsAuction(epsilon if epsilon is not None else eps, prices, alpha)
            em = AuctionPricing(auction, values.size, grid, reactions)
        except ValueError as exc:
            field = getattr(exc, "field", "")
            if field == "types":
                raise env_table.error("types", exc.reason) from None
            raise mech.error(field if field in ("epsilon", "alpha") else "prices", str(exc)) from None
        env = em.environment
        nearest = _nearest(env.types, values)
        return em, Profile(nearest, env.n_types), float(np.max(np.abs(env.types[nearest] - values)))

    def size(n: float) -> budget.EnvironmentSize:
        count = budget.price_count(None if eps == "balanced" else eps, prices, alpha, n)
        return budget.EnvironmentSize(count if grid is None else float(grid.size), count, 2.0)
    return setup, size, budget.population_size(population.data, draw_values)


def _nearest(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the nearest grid value (the lower one on ties) for each value."""
    if grid.size == 1:
        return np.zeros(values.size, dtype=np.intp)
    hi = np.clip(np.searchsorted(grid, values), 1, grid.size - 1)
    lo = hi - 1
    return np.where(np.abs(values - grid[lo]) <= np.abs(grid[hi] - values), lo, hi)


def _parse_facility(spec: FacilitySpec, population: Table, mech: Table, eps) -> tuple[Setup, int]:
    reactions = mech.choice("reactions", ("free", "forced"), "free")
    draw, agents = parse_located_population(population)
    built: list[Environment] = []

    def setup(n, rng, epsilon):
        if not built:
            built.append(spec.build())
        env = built[0]
        labels = draw(env, rng, n)
        try:
            em = ObjectiveExponentialMechanism(env, epsilon if epsilon is not None else eps, reactions=reactions)
        except ValueError as exc:
            raise mech.error("epsilon", str(exc)) from None
        return em, env.profile(labels), 0.0
    return setup, agents


def population_rng(seed: np.random.SeedSequence) -> np.random.Generator:
    """The generator a run with root ``seed`` draws its population from (its first stream)."""
    return np.random.default_rng(child_streams(seed, 2)[0])


def run(spec: NSTSpec, seed: np.random.SeedSequence) -> Result:
    scaling_seed = child_streams(seed, 2)[1]
    rng = population_rng(seed)
    em, profile, moved = _setup(spec, None, rng, spec.balanced)
    env = em.environment
    cm = _commitment(spec, env)
    report = nst_report(em, cm, profile)
    m, labels = {}, {}

    def put(key, value, label):
        m[key], labels[key] = value, label

    _describe(put, env, em, cm, profile, moved)
    _report_metrics(put, env, profile, report)
    tables = {"outcome_law": _law_table(env, em, cm, profile, report)}
    if spec.scaling:
        tables["scaling"] = _scaling_table(spec, scaling_seed)
    return Result("nst_mix", "", m, labels, tables, {"guarantee": str(em.guarantee)})


def _setup(spec: NSTSpec, n: int | None, rng: np.random.Generator, balanced: bool):
    """The mechanism and profile; with eps = 'balanced', eps is fixed from the environment's gap."""
    if not balanced:
        return spec.setup(n, rng, None)
    state = rng.bit_generator.state
    probe, profile, _ = spec.setup(n, rng, 1.0)
    env = probe.environment
    gap = _commitment(spec, env).gap()
    if gap.gamma <= 0:
        raise spec.mechanism_table.error("epsilon", f"'balanced' needs gamma > 0; {gap.diagnosis}")
    eps = balanced_epsilon(profile.n, env.n_outcomes, gap, probe.mechanism.sensitivity, env.utility_range,
                           env.objective_range)
    rng.bit_generator.state = state   # the same population again, now with the balanced eps
    return spec.setup(n, rng, eps)


def _commitment(spec: NSTSpec, env: Environment) -> CommitmentMechanism:
    try:
        return CommitmentMechanism(env, None if spec.punishing is None else np.asarray(spec.punishing, dtype=np.intp))
    except ValueError as exc:
        reason = exc.reason if getattr(exc, "field", "") == "punishing" else str(exc)
        raise spec.mechanism_table.error("punishing", reason) from None


def _describe(put, env, em, cm, profile, moved) -> None:
    put("environment", env.name, "environment")
    put("n", profile.n, "agents")
    put("types", env.n_types, "types (the type space; every type is tried as a lie)")
    put("classes", profile.classes.size, "distinct types among the agents (audit rows)")
    put("outcomes", env.n_outcomes, "outcomes |O|")
    put("punishing", cm.n_punishing, "punishing outcomes |P| of M^P")
    if moved > 0:
        put("largest_move_to_type_grid", moved, "largest move of a value onto the type grid")
    put("epsilon", em.epsilon, "epsilon (the outcome is eps-DP in the reports)")
    put("reactions", em.reactions, "reactions under the exponential mechanism")
    put("sensitivity", em.mechanism.sensitivity, "sensitivity Delta of the objective score (exact)")
    if env.name.startswith("facility"):
        put("largest_distance", float(-env.utility.min()), "largest distance location -> facility (<= diameter)")
    put("utility_range", env.utility_range, "U_max (range of one agent's utility)")


def _report_metrics(put, env, profile: Profile, r: NSTReport) -> None:
    put("gamma", r.gap.gamma, "gap gamma of M^P (exact)")
    put("gamma_pair", f"{r.gap.true_label!r} reporting {r.gap.lie_label!r}", "  attained by type / lie")
    if r.gap.diagnosis:
        put("gamma_diagnosis", r.gap.diagnosis, "  diagnosis")
    none = "none (gamma = 0)"
    put("q_theorem_dwork_roth", none if r.theorem.q_dwork_roth is None else r.theorem.q_dwork_roth,
        "q from the theorem, G = 2 eps U_max" + ("" if r.theorem.dwork_roth_valid else " (NOT valid: eps > 1.256)"))
    put("q_theorem_exact", none if r.theorem.q_exact_form is None else r.theorem.q_exact_form,
        "q from the theorem, G = (e^eps - 1) U_max")
    least = r.least
    put("q_exact", "none" if least.q is None else least.q, "exact least q at this profile (every agent x every lie)")
    if least.agent is not None:
        put("q_exact_attained_by", f"{least.who} reporting {least.lie!r}", "  attained by")
        put("q_exact_em_gain", least.exponential_gain, "  its gain G under the exponential mechanism")
        put("q_exact_commitment_loss", least.commitment_loss, "  its loss L under M^P")
    if least.diagnosis:
        put("q_exact_diagnosis", least.diagnosis, "  diagnosis")
    _type_space_metrics(put, r)
    worst = r.exponential_audit.worst_case
    put("max_gain_exponential", worst["gain"], "largest gain from lying, exponential mechanism alone (exact)")
    put("max_gain_exponential_by", f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
        "  attained by" if worst["gain"] > 0 else "  the least costly lie")
    put("gain_bound_exact", r.theorem.gain_exact, "  bound (e^eps - 1) U_max")
    if r.mix_audit is not None:
        put("max_gain_mix", r.mix_audit.max_gain, "largest gain from lying, the mix at the exact q (<= 0)")
        put("mix_truthful", r.mix_audit.is_truthful(), "the mix at the exact q is exactly truthful")
    name = env.objective_name
    n = profile.n
    put("optimum", r.optimum, f"optimal {name} (best outcome: {env.outcome_label(r.optimal_outcome)})")
    put("exponential_objective", r.exponential_objective, f"E[{name}], exponential mechanism alone")
    put("commitment_objective", r.commitment_objective, f"E[{name}], M^P alone")
    if r.mix_objective is not None:
        put("mix_objective", r.mix_objective, f"E[{name}], the mix at the exact q")
    put("loss_per_agent_exponential", (r.optimum - r.exponential_objective) / n,
        f"{name} loss per agent, exponential mechanism")
    put("loss_per_agent_commitment", (r.optimum - r.commitment_objective) / n, f"{name} loss per agent, M^P")
    if r.mix_objective is not None:
        put("loss_per_agent_mix", (r.optimum - r.mix_objective) / n, f"{name} loss per agent, the mix")


def _type_space_metrics(put, r: NSTReport) -> None:
    """The least ``q`` over every hypothetical true type, and the mix's audit at it (when affordable)."""
    every = r.type_space_least
    if every is None:
        put("q_exact_all_types", f"not computed (classes x types^2 x outcomes > {TYPE_SPACE_LIMIT:.0e})",
            "exact least q over every agent, true type and lie")
        return
    put("q_exact_all_types", "none" if every.q is None else every.q,
        "exact least q over every agent, true type and lie (>= q_exact)")
    if every.agent is not None:
        put("q_exact_all_types_attained_by", f"{every.who} reporting {every.lie!r}", "  attained by")
    if r.type_space_mix_audit is not None:
        put("mix_truthful_all_types", r.type_space_mix_audit.is_truthful(),
            "  the mix at that q is truthful for every true type")


def _law_table(env, em, cm, profile, r: NSTReport) -> dict[str, list]:
    """The outcome law of each mechanism, on the most likely outcomes under the exponential mechanism."""
    p_em = em.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p_em, kind="stable")[:MAX_TABLE_ROWS])
    p_cm = cm.distribution().probabilities
    table = {"outcome": [env.outcome_label(int(s)) for s in keep], "exponential": p_em[keep], "commitment": p_cm[keep]}
    if r.least.q is not None:
        table["mix"] = (1 - r.least.q) * p_em[keep] + r.least.q * p_cm[keep]
    table[env.objective_name] = env.objective_values(profile)[keep]
    return table


def _scaling_table(spec: NSTSpec, seed: np.random.SeedSequence) -> dict[str, list]:
    """The analysis again at each n: how the per-agent loss of the mix shrinks, against
    ``sqrt(|O| ln|O| / (gamma n))`` (the NST rate's shape) and the bound of :func:`loss_bound_per_agent`."""
    rows = {k: [] for k in ("n", "epsilon", "gamma", "q_theorem_exact", "q_exact", "max_gain_exponential",
                            "loss_per_agent_exponential", "loss_per_agent_mix", "loss_bound_per_agent",
                            "sqrt_O_lnO_over_gamma_n")}
    for n, child in zip(spec.scaling, seed.spawn(len(spec.scaling))):
        em, profile, _ = _setup(spec, n, np.random.default_rng(child), spec.scaling_balanced)
        env = em.environment
        r = nst_report(em, _commitment(spec, env), profile)
        q = r.least.q
        size = env.n_outcomes
        rows["n"].append(n)
        rows["epsilon"].append(em.epsilon)
        rows["gamma"].append(r.gap.gamma)
        rows["q_theorem_exact"].append(r.theorem.q_exact_form)
        rows["q_exact"].append(q)
        rows["max_gain_exponential"].append(r.exponential_audit.max_gain)
        rows["loss_per_agent_exponential"].append((r.optimum - r.exponential_objective) / n)
        rows["loss_per_agent_mix"].append(None if q is None else (r.optimum - r.mix_objective) / n)
        rows["loss_bound_per_agent"].append(None if r.theorem.q_exact_form is None else loss_bound_per_agent(
            em.epsilon, n, size, r.theorem.q_exact_form, em.mechanism.sensitivity, env.objective_range,
            env.offset_range))
        rows["sqrt_O_lnO_over_gamma_n"].append(
            None if r.gap.gamma <= 0 else math.sqrt(size * math.log(size) / (r.gap.gamma * n)))
    return rows

