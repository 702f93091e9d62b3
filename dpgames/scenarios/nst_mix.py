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
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpgames.analysis.nst import _BLOCK_ELEMENTS as _NST_BLOCK, DOMINANT_LIMIT, PRUNE_LIMIT, NSTReport, nst_report
from dpgames.mechanisms.commitment import _BLOCK_ELEMENTS as _GAP_BLOCK, CommitmentMechanism
from dpgames.mechanisms.deviations import TYPE_SPACE_LIMIT
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import balanced_epsilon, loss_bound_per_agent
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism, Reactions
from dpgames.mechanisms.pricing import AuctionPricing
from dpgames.scenarios import budget
from dpgames.scenarios.environments import (
    FacilitySpec,
    LocatedPopulationSpec,
    parse_facility,
    parse_located_population,
)
from dpgames.scenarios.populations import PopulationSpec, parse_population
from dpgames.scenarios.result import Column, Metrics, Result
from dpgames.scenarios.spec import FieldPath, Table
from dpgames.scenarios.streams import child_streams
from dpgames.validation import ValidationError

DESCRIPTION = "Exact truthfulness by mixing the exponential and commitment mechanisms (Nissim-Smorodinsky-Tennenholtz): gap, theorem q, exact least q"

MAX_TABLE_ROWS = 2000


@dataclass(frozen=True)
class PricingSetting:
    """The pricing environment of an ``nst_mix`` scenario (parsed values): bidders' values, the type
    grid (None: the midpoints between prices), the price set and the reactions."""

    population: PopulationSpec
    types: np.ndarray | None
    prices: str | list[float]
    alpha: float | None
    reactions: Reactions
    where: FieldPath          # the [environment] table (its ``types`` field)

    def size(self, epsilon: float | None, n: float) -> budget.EnvironmentSize:
        """Types x outcomes x reactions at ``n`` agents (``epsilon`` None: balanced), for the budget."""
        count = budget.price_count(epsilon, self.prices, self.alpha, n)
        return budget.EnvironmentSize(count if self.types is None else float(self.types.size), count, 2.0)


@dataclass(frozen=True)
class FacilitySetting:
    """The facility-location environment of an ``nst_mix`` scenario (parsed values)."""

    facility: FacilitySpec
    population: LocatedPopulationSpec
    reactions: Reactions

    def size(self, epsilon: float | None, n: float) -> budget.EnvironmentSize:
        """Types x outcomes x reactions (independent of eps and n), for the budget."""
        return self.facility.size()


@dataclass(frozen=True)
class NSTSpec:
    """A validated ``nst_mix`` scenario: parsed values only (see the module docstring for the fields).
    ``epsilon`` is None for ``"balanced"``; ``punishing`` None for ``"all"``.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> spec = Scenario.from_dict({"kind": "nst_mix", "mechanism": {"epsilon": "balanced", "alpha": 0.25},
    ...     "environment": {"type": "pricing"}, "population": {"distribution": "uniform", "n": 50}}).parse().spec
    >>> spec.balanced, spec.agents, spec.environment.prices
    (True, 50, 'grid')
    """

    environment: PricingSetting | FacilitySetting
    epsilon: float | None
    punishing: list[int] | None
    scaling: list[int]
    scaling_balanced: bool
    mechanism: FieldPath      # the [mechanism] table, for errors found when the mechanisms are built

    @property
    def balanced(self) -> bool:
        """Whether eps is ``"balanced"`` (fixed from the environment's gap)."""
        return self.epsilon is None

    @property
    def agents(self) -> int:
        """The population's size."""
        return self.environment.population.n


def estimate(spec: NSTSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment, the audits, the
    commitment gap and the dominant-strategy least q (when affordable) at the population's size and again at
    each size of ``[scaling]``.

    Parameters
    ----------
    spec : NSTSpec

    Returns
    -------
    list of Estimate
    """
    setting = spec.environment
    pricing = isinstance(setting, PricingSetting)
    out = []
    for n, times in Counter([spec.agents, *spec.scaling]).items():   # a size listed twice is run twice
        size = setting.size(spec.epsilon, budget.size(n))
        label = f"n = {budget.fmt_count(budget.size(n))}"
        terms = size.reactions if setting.reactions == "forced" else 1.0
        if isinstance(setting, FacilitySetting):
            who = setting.population
            fewest, most = budget.class_range(who.distribution, budget.size(n), size.types, who.values, who.weights)
        else:   # values uniform on [0, 1] put at least 1 / types on each midpoint, as uniform draws would
            uniform = setting.population.distribution == "uniform" and setting.types is None
            fewest, most = budget.class_range("uniform" if uniform else "", budget.size(n), size.types)
        stages = budget.environment_estimates(size, [n], label, terms, (PRICING_BYTES_PER_AGENT if pricing
                                                                        else budget.FLOAT * 8), fewest=fewest, most=most)
        out += budget.repeated(stages + _mix_estimates(size, budget.size(n), label), times)
    return out


#: Bytes per bidder of a pricing run: the values drawn (and, at a [scaling] size, redrawn, joined and
#: permuted), their nearest grid types, the bids' sorted law and the profile.
PRICING_BYTES_PER_AGENT = 16 * budget.FLOAT
#: Work of the dominant-strategy least q's pruning per (true type, lie) pair and pair of outcomes (its bound
#: over every law, a closed form on outcomes x outcomes arrays: 0.3 to 0.6 ms of CPU time measured per type
#: pair at 64 outcomes), when ``types^2 x outcomes^2 <=`` :data:`~dpgames.analysis.nst.PRUNE_LIMIT`.
PRUNE_OPS = 200.0
#: Rows of the others' multisets the dominant-strategy least q takes at once (dpgames.analysis.nst._multisets).
MULTISET_BLOCK = 4096.0
#: Floats per block of the dominant-strategy scan (dpgames.analysis.nst) and of the commitment gap with
#: more than two reactions (dpgames.mechanisms.commitment).
DOMINANT_BLOCK = float(_NST_BLOCK)
GAP_BLOCK = float(_GAP_BLOCK)


def _mix_estimates(size: budget.EnvironmentSize, n: float, label: str) -> list[budget.Estimate]:
    """The stages only the mix has, the utility tables held: the commitment gap (more than 2 reactions:
    blocks of types x types x outcomes floats, up to ``GAP_BLOCK``) and the dominant-strategy least ``q``
    when affordable (:data:`~dpgames.analysis.nst.DOMINANT_LIMIT`): four arrays of ``MULTISET_BLOCK``
    multisets of the others x types x outcomes, up to a quarter of its block (the laws after the reports
    and their rows for the pairs still live, taken as one per true type: the bound of every law prunes
    most), and the multisets themselves as Python tuples."""
    t, o, r = size.types, size.outcomes, size.reactions
    held = 6 * budget.FLOAT * t * o * r + budget.ENVIRONMENT_RUN_OVERHEAD
    out = []
    if r > 2:
        out.append(budget.Estimate(f"{label}: the commitment gap", held + budget.FLOAT * min(t * t * o, max(
            GAP_BLOCK, t * o)), t * t * o * r))
    profiles = budget.combinations(n - 1 + t - 1, t - 1)
    if profiles * t * t * o <= DOMINANT_LIMIT:
        rows = min(profiles, MULTISET_BLOCK)
        pruning = PRUNE_OPS * t * t * o * o if t * t * o * o <= PRUNE_LIMIT else 0.0
        out.append(budget.Estimate(f"{label}: the dominant-strategy least q ({budget.fmt_count(profiles)} profiles "
                                   "of the others)", held + 4 * budget.FLOAT * min(rows * t * o, DOMINANT_BLOCK / 4)
                                   + rows * (100 + 40 * t), 10 * profiles * t * o + pruning))
    return out


def parse(top: Table) -> NSTSpec:
    """Read and validate an ``nst_mix`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    NSTSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid.
    """
    env_table = top.table("environment", required=True)
    kind = env_table.choice("type", ("pricing", "facility_location"))
    mech = top.table("mechanism", required=True)
    eps = mech.value("epsilon", lambda x: x == "balanced" or (isinstance(x, (int, float)) and not isinstance(x, bool)
                                                              and math.isfinite(x) and x > 0),
                     "a number > 0 or 'balanced'")
    punishing = mech.value("punishing", lambda x: x == "all" or (isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in x)),
        "'all' or a non-empty list of outcome indices (whole numbers >= 0)", "all")
    population = top.table("population", required=True)
    setting: PricingSetting | FacilitySetting
    if kind == "pricing":
        setting = _parse_pricing(env_table, population, mech, eps)
    else:
        setting = FacilitySetting(parse_facility(env_table), parse_located_population(population),
                                  mech.choice("reactions", ("free", "forced"), "free"))
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
    return NSTSpec(setting, None if eps == "balanced" else float(eps), None if punishing == "all" else punishing,
                   scaling, eps == "balanced" or scaling_eps == "balanced", mech.field_path)


def _parse_pricing(env_table: Table, population: Table, mech: Table, eps) -> PricingSetting:
    types = env_table.value("types", lambda x: x == "midpoints" or (isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1 for e in x)),
        "'midpoints' or a non-empty list of values in [0, 1]", "midpoints")
    prices = mech.value("prices", lambda x: x == "grid" or isinstance(x, list),
                        "'grid' or a list of prices (the mix needs a finite price set)", "grid")
    alpha = mech.number("alpha", None, low=0, high=1, low_open=True)
    reactions: Reactions = mech.choice("reactions", ("forced", "free"), "forced")
    if eps == "balanced" and prices == "grid" and alpha is None:
        raise mech.error("epsilon", "'balanced' needs a price set that does not depend on eps: set alpha or prices")
    grid = None if types == "midpoints" else np.asarray(types, dtype=float)
    return PricingSetting(parse_population(population), grid, prices, alpha, reactions, env_table.field_path)


def _nearest(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the nearest grid value (the lower one on ties) for each value."""
    if grid.size == 1:
        return np.zeros(values.size, dtype=np.intp)
    hi = np.clip(np.searchsorted(grid, values), 1, grid.size - 1)
    lo = hi - 1
    return np.where(np.abs(values - grid[lo]) <= np.abs(grid[hi] - values), lo, hi)


def _pricing(spec: NSTSpec, setting: PricingSetting, n: int | None, rng: np.random.Generator,
             epsilon: float) -> tuple[ObjectiveExponentialMechanism, Profile, float]:
    values = setting.population.draw(rng).values
    if n is not None:   # drawn again at size n (a fixed list is repeated), in random order
        copies = [values] + [setting.population.draw(rng).values for _ in range(-(-n // values.size) - 1)]
        values = rng.permutation(np.concatenate(copies))[:n]
    try:
        auction = DigitalGoodsAuction(epsilon, setting.prices, setting.alpha)
        em = AuctionPricing(auction, values.size, setting.types, setting.reactions)
    except ValueError as exc:
        field = getattr(exc, "field", "")
        if isinstance(exc, ValidationError) and field == "types":
            raise setting.where.error("types", exc.reason) from None
        raise spec.mechanism.error(field if field in ("epsilon", "alpha") else "prices", str(exc)) from None
    env = em.environment
    nearest = _nearest(env.types, values)
    return em, Profile(nearest, env.n_types), float(np.max(np.abs(env.types[nearest] - values)))


def _exponential(spec: NSTSpec, env: Environment | None, n: int | None, rng: np.random.Generator,
                 epsilon: float) -> tuple[ObjectiveExponentialMechanism, Profile, float]:
    """The exponential mechanism at ``epsilon``, the profile drawn from ``rng`` (``n`` agents, or the
    population's own size) and the largest move of a value onto the type grid.  ``env``: the facility
    environment, built once per run (None for pricing, whose environment depends on n; built here when
    None for a facility)."""
    setting = spec.environment
    if isinstance(setting, PricingSetting):
        return _pricing(spec, setting, n, rng, epsilon)
    if env is None:
        env = setting.facility.build()
    labels = setting.population.draw(env, rng, n)
    try:
        em = ObjectiveExponentialMechanism(env, epsilon, reactions=setting.reactions)
    except ValueError as exc:
        raise spec.mechanism.error("epsilon", str(exc)) from None
    return em, env.profile(labels), 0.0


def population_rng(seed: np.random.SeedSequence) -> np.random.Generator:
    """The generator a run with root ``seed`` draws its population from (its first stream).

    Parameters
    ----------
    seed : numpy.random.SeedSequence

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng(child_streams(seed, 2)[0])


@dataclass(frozen=True)
class NSTRun:
    """What an ``nst_mix`` run computes before its metrics: the exponential and commitment mechanisms,
    the agents' profile, the largest move of a value onto the type grid, and the exact NST report.
    The app and ``dpgames run`` both start from it.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> parsed = Scenario.from_dict({"kind": "nst_mix", "seed": 1, "mechanism": {"epsilon": 1.0},
    ...     "environment": {"type": "facility_location", "graph": "line", "nodes": 4, "k": 2},
    ...     "population": {"distribution": "uniform", "n": 6}}).parse()
    >>> built = build(parsed.spec, parsed.seed)
    >>> built.profile.n, built.report.gap.gamma, built.report.least.q
    (6, 1.0, 0.0)
    """

    exponential: ObjectiveExponentialMechanism
    commitment: CommitmentMechanism
    profile: Profile
    moved: float
    report: NSTReport


def build(spec: NSTSpec, seed: np.random.SeedSequence) -> NSTRun:
    """The mechanisms, profile and NST report of a run with root ``seed``, exactly as :func:`run` has them.

    Parameters
    ----------
    spec : NSTSpec
        A parsed scenario (:meth:`Scenario.parse <dpgames.scenarios.loader.Scenario.parse>`).
    seed : numpy.random.SeedSequence
        The run's root seed (not advanced).

    Returns
    -------
    NSTRun

    Raises
    ------
    ScenarioError
        The environment or the mechanisms cannot be built from the spec (e.g. ``"balanced"`` eps with
        gamma = 0), naming the field.
    """
    env = _facility_environment(spec)
    em, profile, moved = _setup(spec, env, None, population_rng(seed), spec.epsilon)
    cm = _commitment(spec, em.environment)
    return NSTRun(em, cm, profile, moved, nst_report(em, cm, profile))


def _facility_environment(spec: NSTSpec) -> Environment | None:
    setting = spec.environment
    return setting.facility.build() if isinstance(setting, FacilitySetting) else None


def run(spec: NSTSpec, seed: np.random.SeedSequence) -> Result:
    """Run the scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : NSTSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    Result
        The metrics of :func:`build`'s report, the ``outcome_law`` table and, with ``[scaling]``, the
        ``scaling`` table.
    """
    built = build(spec, seed)
    em, cm, profile, report = built.exponential, built.commitment, built.profile, built.report
    env = em.environment
    m = Metrics()
    _describe(m, env, em, cm, profile, built.moved)
    _report_metrics(m, env, profile, report)
    tables: dict[str, Mapping[str, Column]] = {"outcome_law": _law_table(env, em, cm, profile, report)}
    if spec.scaling:
        tables["scaling"] = _scaling_table(spec, child_streams(seed, 2)[1])
    return m.result("nst_mix", tables, {"guarantee": str(em.guarantee)})


def _setup(spec: NSTSpec, env: Environment | None, n: int | None, rng: np.random.Generator,
           epsilon: float | None) -> tuple[ObjectiveExponentialMechanism, Profile, float]:
    """The mechanism and profile at ``epsilon``; None ('balanced'): eps is fixed from the environment's gap."""
    if epsilon is not None:
        return _exponential(spec, env, n, rng, epsilon)
    state = rng.bit_generator.state
    probe, profile, _ = _exponential(spec, env, n, rng, 1.0)
    probe_env = probe.environment
    gap = _commitment(spec, probe_env).gap()
    if gap.gamma <= 0:
        raise spec.mechanism.error("epsilon", f"'balanced' needs gamma > 0; {gap.diagnosis}")
    eps = balanced_epsilon(profile.n, probe_env.n_outcomes, gap, probe.mechanism.sensitivity, probe_env.utility_range,
                           probe_env.objective_range)
    rng.bit_generator.state = state   # the same population again, now with the balanced eps
    return _exponential(spec, env, n, rng, eps)


def _commitment(spec: NSTSpec, env: Environment) -> CommitmentMechanism:
    try:
        return CommitmentMechanism(env, None if spec.punishing is None else np.asarray(spec.punishing, dtype=np.intp))
    except ValueError as exc:
        reason = exc.reason if isinstance(exc, ValidationError) and exc.field == "punishing" else str(exc)
        raise spec.mechanism.error("punishing", reason) from None


def _describe(m: Metrics, env: Environment, em: ObjectiveExponentialMechanism, cm: CommitmentMechanism,
              profile: Profile, moved: float) -> None:
    m.put("environment", env.name, "environment")
    m.put("n", profile.n, "agents")
    m.put("types", env.n_types, "types (the type space; every type is tried as a lie)")
    m.put("classes", profile.classes.size, "distinct types among the agents (audit rows)")
    m.put("outcomes", env.n_outcomes, "outcomes |O|")
    m.put("punishing", cm.n_punishing, "punishing outcomes |P| of M^P")
    if moved > 0:
        m.put("largest_move_to_type_grid", moved, "largest move of a value onto the type grid")
    m.put("epsilon", em.epsilon, "epsilon (the outcome is eps-DP in the reports)")
    m.put("reactions", em.reactions, "reactions under the exponential mechanism")
    m.put("sensitivity", em.mechanism.sensitivity, "sensitivity Delta of the objective score (exact)")
    if env.name.startswith("facility"):
        m.put("largest_distance", float(-env.utility.min()), "largest distance location -> facility (<= diameter)")
    m.put("utility_range", env.utility_range, "U_max (range of one agent's utility)")


def _report_metrics(m: Metrics, env: Environment, profile: Profile, r: NSTReport) -> None:
    m.put("gamma", r.gap.gamma, "gap gamma of M^P (exact)")
    m.put("gamma_pair", f"{r.gap.true_label!r} reporting {r.gap.lie_label!r}", "  attained by type / lie")
    if r.gap.diagnosis:
        m.put("gamma_diagnosis", r.gap.diagnosis, "  diagnosis")
    none = "none (gamma = 0)"
    m.put("q_theorem_dwork_roth", none if r.theorem.q_dwork_roth is None else r.theorem.q_dwork_roth,
        "q from the theorem, G = 2 eps U_max" + ("" if r.theorem.dwork_roth_valid else " (NOT valid: eps > 1.256)"))
    m.put("q_theorem_exact", none if r.theorem.q_exact_form is None else r.theorem.q_exact_form,
        "q from the theorem, G = (e^eps - 1) U_max")
    least = r.least
    m.put("q_exact", "none" if least.q is None else least.q, "exact least q at this profile (every agent x every lie)")
    if least.agent is not None:
        m.put("q_exact_attained_by", f"{least.who} reporting {least.lie!r}", "  attained by")
        m.put("q_exact_em_gain", least.exponential_gain, "  its gain G under the exponential mechanism")
        m.put("q_exact_commitment_loss", least.commitment_loss, "  its loss L under M^P")
    if least.diagnosis:
        m.put("q_exact_diagnosis", least.diagnosis, "  diagnosis")
    _type_space_metrics(m, r)
    _dominant_metrics(m, r)
    worst = r.exponential_audit.worst_case
    m.put("max_gain_exponential", worst["gain"], "largest gain from lying, exponential mechanism alone (exact)")
    attained = r.exponential_audit.max_gain > r.exponential_audit.rounding_slack
    m.put("max_gain_exponential_by", f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
        "  attained by" if attained else "  the least costly lie")
    m.put("gain_bound_exact", r.theorem.gain_exact, "  bound (e^eps - 1) U_max")
    if r.mix_audit is not None:
        m.put("max_gain_mix", r.mix_audit.max_gain, "largest gain from lying, the mix at the exact q (<= 0)")
        m.put("mix_truthful", r.mix_audit.is_truthful(), "the mix at the exact q is exactly truthful")
    name = env.objective_name
    n = profile.n
    m.put("optimum", r.optimum, f"optimal {name} (best outcome: {env.outcome_label(r.optimal_outcome)})")
    m.put("exponential_objective", r.exponential_objective, f"E[{name}], exponential mechanism alone")
    m.put("commitment_objective", r.commitment_objective, f"E[{name}], M^P alone")
    if r.mix_objective is not None:
        m.put("mix_objective", r.mix_objective, f"E[{name}], the mix at the exact q")
    m.put("loss_per_agent_exponential", (r.optimum - r.exponential_objective) / n,
        f"{name} loss per agent, exponential mechanism")
    m.put("loss_per_agent_commitment", (r.optimum - r.commitment_objective) / n, f"{name} loss per agent, M^P")
    if r.mix_objective is not None:
        m.put("loss_per_agent_mix", (r.optimum - r.mix_objective) / n, f"{name} loss per agent, the mix")


def _type_space_metrics(m: Metrics, r: NSTReport) -> None:
    """The least ``q`` over every hypothetical true type, and the mix's audit at it (when affordable)."""
    every = r.type_space_least
    if every is None:
        m.put("q_exact_all_types", f"not computed (classes x types^2 x outcomes > {TYPE_SPACE_LIMIT:,.0f})",
            "exact least q over every agent, true type and lie")
        return
    m.put("q_exact_all_types", "none" if every.q is None else every.q,
        "exact least q over every agent, true type and lie (>= q_exact)")
    if every.agent is not None:
        m.put("q_exact_all_types_attained_by", f"{every.who} reporting {every.lie!r}", "  attained by")
    if r.type_space_mix_audit is not None:
        m.put("mix_truthful_all_types", r.type_space_mix_audit.is_truthful(),
            "  the mix at that q is truthful for every true type")


def _dominant_metrics(m: Metrics, r: NSTReport) -> None:
    """The least ``q`` over every profile of n agents (dominant-strategy truthfulness), when affordable."""
    dom = r.dominant_least
    if dom is None:
        m.put("q_exact_dominant", f"not computed (profiles of the others x types^2 x outcomes > {DOMINANT_LIMIT:,.0f})",
              "exact least q over every profile (dominant strategies)")
        return
    m.put("q_exact_dominant", "none" if dom.q is None else dom.q,
          "exact least q over every profile (dominant strategies; q_exact <= it <= q_theorem_exact)")
    if dom.profile is not None:
        m.put("q_exact_dominant_attained_by", f"{dom.who} reporting {dom.lie!r}", "  attained by")


def _law_table(env: Environment, em: ObjectiveExponentialMechanism, cm: CommitmentMechanism, profile: Profile,
               r: NSTReport) -> dict[str, Column]:
    """The outcome law of each mechanism, on the most likely outcomes under the exponential mechanism."""
    p_em = em.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p_em, kind="stable")[:MAX_TABLE_ROWS])
    p_cm = cm.distribution().probabilities
    table: dict[str, Column] = {"outcome": [env.outcome_label(int(s)) for s in keep], "exponential": p_em[keep],
                                "commitment": p_cm[keep]}
    if r.least.q is not None:
        table["mix"] = (1 - r.least.q) * p_em[keep] + r.least.q * p_cm[keep]
    table[env.objective_name] = env.objective_values(profile)[keep]
    return table


#: A q column's cell where no mixing probability exists (a missing figure elsewhere is None, shown "-").
NO_Q = "none"


def _scaling_table(spec: NSTSpec, seed: np.random.SeedSequence) -> dict[str, list[float | str | None]]:
    """The analysis again at each n: how the per-agent loss of the mix shrinks, against
    ``sqrt(|O| ln|O| / (gamma n))`` (the NST rate's shape) and the bound of :func:`loss_bound_per_agent`.

    Two kinds of empty cell, told apart: ``"none"`` in a q column says no mixing probability exists at
    that n (gamma = 0, or no q makes the mix truthful), as the ``q_*`` metrics say; ``None`` (shown ``-``)
    in a figure computed from a q or from gamma says it was not computed because that q or gamma is
    missing (``loss_per_agent_mix``, ``loss_bound_per_agent``, ``sqrt_O_lnO_over_gamma_n``)."""
    rows: dict[str, list[float | str | None]] = {
        k: [] for k in ("n", "epsilon", "gamma", "q_theorem_exact", "q_exact", "max_gain_exponential",
                        "loss_per_agent_exponential", "loss_per_agent_mix", "loss_bound_per_agent",
                        "sqrt_O_lnO_over_gamma_n")}
    env = _facility_environment(spec)
    epsilon = None if spec.scaling_balanced else spec.epsilon
    for n, child in zip(spec.scaling, seed.spawn(len(spec.scaling))):
        em, profile, _ = _setup(spec, env, n, np.random.default_rng(child), epsilon)
        r = nst_report(em, _commitment(spec, em.environment), profile)
        q = r.least.q
        size = em.environment.n_outcomes
        rows["n"].append(n)
        rows["epsilon"].append(em.epsilon)
        rows["gamma"].append(r.gap.gamma)
        rows["q_theorem_exact"].append(NO_Q if r.theorem.q_exact_form is None else r.theorem.q_exact_form)
        rows["q_exact"].append(NO_Q if q is None else q)
        rows["max_gain_exponential"].append(r.exponential_audit.max_gain)
        rows["loss_per_agent_exponential"].append((r.optimum - r.exponential_objective) / n)
        # the mix's objective is known exactly when q is (None together)
        rows["loss_per_agent_mix"].append(None if r.mix_objective is None else (r.optimum - r.mix_objective) / n)
        rows["loss_bound_per_agent"].append(None if r.theorem.q_exact_form is None else loss_bound_per_agent(
            em.epsilon, n, size, r.theorem.q_exact_form, em.mechanism.sensitivity, em.environment.objective_range,
            em.environment.offset_range))
        rows["sqrt_O_lnO_over_gamma_n"].append(
            None if r.gap.gamma <= 0 else math.sqrt(size * math.log(size) / (r.gap.gamma * n)))
    return rows

