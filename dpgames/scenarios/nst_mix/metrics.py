"""The ``nst_mix`` kind's metrics: each declared once with its meaning, the invariants a Result must
satisfy, and :func:`run`, which measures a built run (see :mod:`dpgames.scenarios.kind`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpgames.analysis.nst import DOMINANT_LIMIT, NSTReport, nst_report
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.deviations import TYPE_SPACE_LIMIT
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import loss_bound_per_agent
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.scenarios.invariants import (
    Invariants,
    at_least,
    at_most,
    is_true,
    number_or_nan,
    probability_column,
    rows_equal,
    value_of,
    within,
)
from dpgames.scenarios.nst_mix.build import NSTRun, commitment, facility_environment, mechanisms
from dpgames.scenarios.nst_mix.spec import NSTSpec
from dpgames.scenarios.result import Column, Metrics, MetricSet, Result
from dpgames.scenarios.streams import child_streams

MAX_TABLE_ROWS = 2000
_NST = "Nissim, Smorodinsky & Tennenholtz 2012; Dwork & Roth 10.2.3"

METRICS = MetricSet()
ENVIRONMENT = METRICS.add(
    "environment", "the environment (pricing, or facility location on a graph)"
)
N = METRICS.add("n", "agents", "agents")
TYPES = METRICS.add("types", "types: the type space, every type tried as a lie", "types")
CLASSES = METRICS.add("classes", "distinct types among the agents (rows of the audits)", "types")
OUTCOMES = METRICS.add("outcomes", "outcomes |O|", "outcomes")
PUNISHING = METRICS.add(
    "punishing", "punishing outcomes |P| of the commitment mechanism M^P", "outcomes"
)
LARGEST_MOVE_TO_TYPE_GRID = METRICS.add(
    "largest_move_to_type_grid", "largest move of a value onto the type grid", "value units"
)
EPSILON = METRICS.add(
    "epsilon", "epsilon: the outcome is eps-DP in the reports", "", "McSherry & Talwar 2007"
)
REACTIONS = METRICS.add("reactions", "reactions under the exponential mechanism (forced or free)")
SENSITIVITY = METRICS.add(
    "sensitivity", "sensitivity Delta of the objective score (exact)", "objective units"
)
LARGEST_DISTANCE = METRICS.add(
    "largest_distance",
    "largest distance from a location to a facility (<= the diameter)",
    "graph distance",
)
UTILITY_RANGE = METRICS.add("utility_range", "U_max: the range of one agent's utility", "utility")
GAMMA = METRICS.add(
    "gamma",
    "the gap gamma of M^P: the least loss of a lie at its worst outcome (exact)",
    "utility",
    _NST,
)
GAMMA_PAIR = METRICS.add("gamma_pair", "the type and the lie attaining gamma")
GAMMA_DIAGNOSIS = METRICS.add("gamma_diagnosis", "why gamma is 0, when it is")
Q_THEOREM_DWORK_ROTH = METRICS.add(
    "q_theorem_dwork_roth",
    "the mixing q of the theorem with G = 2 eps U_max (valid for eps <= 1.256)",
    "probability",
    _NST,
)
Q_THEOREM_EXACT = METRICS.add(
    "q_theorem_exact", "the mixing q of the theorem with G = (e^eps - 1) U_max", "probability", _NST
)
Q_EXACT = METRICS.add(
    "q_exact",
    "the least q making the mix truthful at this profile (every agent x every lie, exact)",
    "probability",
)
Q_EXACT_ATTAINED_BY = METRICS.add("q_exact_attained_by", "the agent and lie attaining q_exact")
Q_EXACT_EM_GAIN = METRICS.add(
    "q_exact_em_gain", "that lie's gain G under the exponential mechanism", "utility"
)
Q_EXACT_COMMITMENT_LOSS = METRICS.add(
    "q_exact_commitment_loss", "that lie's loss L under M^P", "utility"
)
Q_EXACT_DIAGNOSIS = METRICS.add(
    "q_exact_diagnosis", "why no q makes the mix truthful, when none does"
)
Q_EXACT_ALL_TYPES = METRICS.add(
    "q_exact_all_types",
    "the least q over every agent, true type and lie (exact; >= q_exact)",
    "probability",
)
Q_EXACT_ALL_TYPES_ATTAINED_BY = METRICS.add(
    "q_exact_all_types_attained_by", "the agent and lie attaining it"
)
MIX_TRUTHFUL_ALL_TYPES = METRICS.add(
    "mix_truthful_all_types", "the mix at that q is truthful for every true type"
)
Q_EXACT_DOMINANT = METRICS.add(
    "q_exact_dominant",
    "the least q over every profile: dominant-strategy truthfulness "
    "(exact; q_exact <= it <= q_theorem_exact)",
    "probability",
    _NST,
)
Q_EXACT_DOMINANT_ATTAINED_BY = METRICS.add(
    "q_exact_dominant_attained_by", "the agent and lie attaining it"
)
MAX_GAIN_EXPONENTIAL = METRICS.add(
    "max_gain_exponential",
    "largest gain from lying under the exponential mechanism alone (exact)",
    "utility",
)
MAX_GAIN_EXPONENTIAL_BY = METRICS.add(
    "max_gain_exponential_by", "the agent, type and lie attaining it"
)
GAIN_BOUND_EXACT = METRICS.add(
    "gain_bound_exact",
    "(e^eps - 1) U_max: the gain bound of an eps-DP outcome",
    "utility",
    "Dwork & Roth Prop 10.1, exact form",
)
MAX_GAIN_MIX = METRICS.add(
    "max_gain_mix", "largest gain from lying under the mix at q_exact (<= 0)", "utility", _NST
)
MIX_TRUTHFUL = METRICS.add("mix_truthful", "the mix at q_exact is exactly truthful", "", _NST)
OPTIMUM = METRICS.add("optimum", "the optimal objective over the outcomes", "objective units")
EXPONENTIAL_OBJECTIVE = METRICS.add(
    "exponential_objective", "expected objective, exponential mechanism alone", "objective units"
)
COMMITMENT_OBJECTIVE = METRICS.add(
    "commitment_objective", "expected objective, M^P alone", "objective units"
)
MIX_OBJECTIVE = METRICS.add(
    "mix_objective", "expected objective, the mix at q_exact", "objective units"
)
LOSS_PER_AGENT_EXPONENTIAL = METRICS.add(
    "loss_per_agent_exponential",
    "objective loss per agent, exponential mechanism",
    "objective units per agent",
)
LOSS_PER_AGENT_COMMITMENT = METRICS.add(
    "loss_per_agent_commitment", "objective loss per agent, M^P", "objective units per agent"
)
LOSS_PER_AGENT_MIX = METRICS.add(
    "loss_per_agent_mix", "objective loss per agent, the mix", "objective units per agent"
)


def _dwork_roth_q_if_valid(metrics: Mapping[str, Any]) -> Any:
    """Dwork & Roth's q, where its gain bound 2 eps U_max holds (e^eps - 1 <= 2 eps, eps <=
    ~1.256)."""
    eps = number_or_nan(metrics, EPSILON)
    if not eps <= 1.25 or math.expm1(eps) > 2 * eps:
        return None
    return value_of(metrics, Q_THEOREM_DWORK_ROTH)


INVARIANTS = Invariants(
    rules=[
        at_least(EPSILON, 0.0, "epsilon > 0"),
        at_least(GAMMA, 0.0, "the commitment gap gamma is >= 0"),
        at_most(GAMMA, UTILITY_RANGE, "gamma is at most the utility range"),
        *[
            r
            for q in (Q_THEOREM_DWORK_ROTH, Q_THEOREM_EXACT, Q_EXACT, Q_EXACT_ALL_TYPES)
            for r in within(q, 0.0, 1.0, "a mixing probability q lies in [0, 1]")
        ],
        at_most(
            Q_THEOREM_EXACT,
            _dwork_roth_q_if_valid,
            "the exact-gain q is at most Dwork & Roth's (where 2 eps bounds e^eps - 1)",
        ),
        at_most(Q_EXACT, Q_THEOREM_EXACT, "the least q is at most the theorem's q"),
        at_most(
            Q_EXACT, Q_EXACT_ALL_TYPES, "lies of every true type need at least the q of own types"
        ),
        at_most(
            MAX_GAIN_EXPONENTIAL,
            GAIN_BOUND_EXACT,
            "the exponential mechanism's gain is within (e^eps - 1) U_max",
        ),
        at_most(
            MAX_GAIN_MIX,
            lambda m: 1e-9 * (1 + abs(number_or_nan(m, UTILITY_RANGE))),
            "the mix at the exact q is truthful",
            rel=0.0,
            abs_=0.0,
        ),
        *[
            at_most(objective, OPTIMUM, "no law beats the optimum")
            for objective in (EXPONENTIAL_OBJECTIVE, COMMITMENT_OBJECTIVE, MIX_OBJECTIVE)
        ],
        *[
            at_least(loss, 0.0, "a loss against the optimum is >= 0", abs_=1e-9)
            for loss in (LOSS_PER_AGENT_EXPONENTIAL, LOSS_PER_AGENT_COMMITMENT, LOSS_PER_AGENT_MIX)
        ],
        is_true(MIX_TRUTHFUL, "the mix at the exact q is truthful"),
        is_true(MIX_TRUTHFUL_ALL_TYPES, "the mix at the exact q is truthful for every true type"),
    ],
    tables=[
        probability_column("outcome_law", name, rows_equal(OUTCOMES))
        for name in ("exponential", "commitment", "mix")
    ],
)


def run(built: NSTRun) -> Result:
    """The metrics of a built run (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    built : NSTRun

    Returns
    -------
    Result
        The metrics of the run's report, the ``outcome_law`` table and, with ``[scaling]``, the
        ``scaling`` table.
    """
    em, cm, profile, report = built.exponential, built.commitment, built.profile, built.report
    env = em.environment
    m = Metrics()
    _describe(m, env, em, cm, profile, built.moved)
    _report_metrics(m, env, profile, report)
    tables: dict[str, Mapping[str, Column]] = {
        "outcome_law": _law_table(env, em, cm, profile, report)
    }
    if built.spec.scaling:
        tables["scaling"] = _scaling_table(built.spec, child_streams(built.seed, 2)[1])
    return m.result("nst_mix", tables, {"guarantee": str(em.guarantee)})


def _describe(
    m: Metrics,
    env: Environment,
    em: ObjectiveExponentialMechanism,
    cm: CommitmentMechanism,
    profile: Profile,
    moved: float,
) -> None:
    m.put(ENVIRONMENT, env.name, "environment")
    m.put(N, profile.n, "agents")
    m.put(TYPES, env.n_types, "types (the type space; every type is tried as a lie)")
    m.put(CLASSES, profile.classes.size, "distinct types among the agents (audit rows)")
    m.put(OUTCOMES, env.n_outcomes, "outcomes |O|")
    m.put(PUNISHING, cm.n_punishing, "punishing outcomes |P| of M^P")
    if moved > 0:
        m.put(LARGEST_MOVE_TO_TYPE_GRID, moved, "largest move of a value onto the type grid")
    m.put(EPSILON, em.epsilon, "epsilon (the outcome is eps-DP in the reports)")
    m.put(REACTIONS, em.reactions, "reactions under the exponential mechanism")
    m.put(SENSITIVITY, em.mechanism.sensitivity, "sensitivity Delta of the objective score (exact)")
    if env.name.startswith("facility"):
        m.put(
            LARGEST_DISTANCE,
            float(-env.utility.min()),
            "largest distance location -> facility (<= diameter)",
        )
    m.put(UTILITY_RANGE, env.utility_range, "U_max (range of one agent's utility)")


def _report_metrics(m: Metrics, env: Environment, profile: Profile, r: NSTReport) -> None:
    m.put(GAMMA, r.gap.gamma, "gap gamma of M^P (exact)")
    m.put(
        GAMMA_PAIR,
        f"{r.gap.true_label!r} reporting {r.gap.lie_label!r}",
        "  attained by type / lie",
    )
    if r.gap.diagnosis:
        m.put(GAMMA_DIAGNOSIS, r.gap.diagnosis, "  diagnosis")
    none = "none (gamma = 0)"
    m.put(
        Q_THEOREM_DWORK_ROTH,
        none if r.theorem.q_dwork_roth is None else r.theorem.q_dwork_roth,
        "q from the theorem, G = 2 eps U_max"
        + ("" if r.theorem.dwork_roth_valid else " (NOT valid: eps > 1.256)"),
    )
    m.put(
        Q_THEOREM_EXACT,
        none if r.theorem.q_exact_form is None else r.theorem.q_exact_form,
        "q from the theorem, G = (e^eps - 1) U_max",
    )
    least = r.least
    m.put(
        Q_EXACT,
        "none" if least.q is None else least.q,
        "exact least q at this profile (every agent x every lie)",
    )
    if least.agent is not None:
        m.put(Q_EXACT_ATTAINED_BY, f"{least.who} reporting {least.lie!r}", "  attained by")
        m.put(
            Q_EXACT_EM_GAIN, least.exponential_gain, "  its gain G under the exponential mechanism"
        )
        m.put(Q_EXACT_COMMITMENT_LOSS, least.commitment_loss, "  its loss L under M^P")
    if least.diagnosis:
        m.put(Q_EXACT_DIAGNOSIS, least.diagnosis, "  diagnosis")
    _type_space_metrics(m, r)
    _dominant_metrics(m, r)
    worst = r.exponential_audit.worst_case
    m.put(
        MAX_GAIN_EXPONENTIAL,
        worst["gain"],
        "largest gain from lying, exponential mechanism alone (exact)",
    )
    attained = r.exponential_audit.max_gain > r.exponential_audit.rounding_slack
    m.put(
        MAX_GAIN_EXPONENTIAL_BY,
        f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
        "  attained by" if attained else "  the least costly lie",
    )
    m.put(GAIN_BOUND_EXACT, r.theorem.gain_exact, "  bound (e^eps - 1) U_max")
    if r.mix_audit is not None:
        m.put(
            MAX_GAIN_MIX,
            r.mix_audit.max_gain,
            "largest gain from lying, the mix at the exact q (<= 0)",
        )
        m.put(MIX_TRUTHFUL, r.mix_audit.is_truthful(), "the mix at the exact q is exactly truthful")
    name = env.objective_name
    n = profile.n
    m.put(
        OPTIMUM, r.optimum, f"optimal {name} (best outcome: {env.outcome_label(r.optimal_outcome)})"
    )
    m.put(EXPONENTIAL_OBJECTIVE, r.exponential_objective, f"E[{name}], exponential mechanism alone")
    m.put(COMMITMENT_OBJECTIVE, r.commitment_objective, f"E[{name}], M^P alone")
    if r.mix_objective is not None:
        m.put(MIX_OBJECTIVE, r.mix_objective, f"E[{name}], the mix at the exact q")
    m.put(
        LOSS_PER_AGENT_EXPONENTIAL,
        (r.optimum - r.exponential_objective) / n,
        f"{name} loss per agent, exponential mechanism",
    )
    m.put(
        LOSS_PER_AGENT_COMMITMENT,
        (r.optimum - r.commitment_objective) / n,
        f"{name} loss per agent, M^P",
    )
    if r.mix_objective is not None:
        m.put(
            LOSS_PER_AGENT_MIX, (r.optimum - r.mix_objective) / n, f"{name} loss per agent, the mix"
        )


def _type_space_metrics(m: Metrics, r: NSTReport) -> None:
    """The least ``q`` over every hypothetical true type, and the mix's audit at it (when
    affordable)."""
    every = r.type_space_least
    if every is None:
        m.put(
            Q_EXACT_ALL_TYPES,
            f"not computed (classes x types^2 x outcomes > {TYPE_SPACE_LIMIT:,.0f})",
            "exact least q over every agent, true type and lie",
        )
        return
    m.put(
        Q_EXACT_ALL_TYPES,
        "none" if every.q is None else every.q,
        "exact least q over every agent, true type and lie (>= q_exact)",
    )
    if every.agent is not None:
        m.put(
            Q_EXACT_ALL_TYPES_ATTAINED_BY, f"{every.who} reporting {every.lie!r}", "  attained by"
        )
    if r.type_space_mix_audit is not None:
        m.put(
            MIX_TRUTHFUL_ALL_TYPES,
            r.type_space_mix_audit.is_truthful(),
            "  the mix at that q is truthful for every true type",
        )


def _dominant_metrics(m: Metrics, r: NSTReport) -> None:
    """The least ``q`` over every profile of n agents (dominant-strategy truthfulness), when
    affordable."""
    dom = r.dominant_least
    if dom is None:
        m.put(
            Q_EXACT_DOMINANT,
            f"not computed (profiles of the others x types^2 x outcomes > {DOMINANT_LIMIT:,.0f})",
            "exact least q over every profile (dominant strategies)",
        )
        return
    m.put(
        Q_EXACT_DOMINANT,
        "none" if dom.q is None else dom.q,
        "exact least q over every profile (dominant strategies; q_exact <= it <= q_theorem_exact)",
    )
    if dom.profile is not None:
        m.put(Q_EXACT_DOMINANT_ATTAINED_BY, f"{dom.who} reporting {dom.lie!r}", "  attained by")


def _law_table(
    env: Environment,
    em: ObjectiveExponentialMechanism,
    cm: CommitmentMechanism,
    profile: Profile,
    r: NSTReport,
) -> dict[str, Column]:
    """The outcome law of each mechanism, on the most likely outcomes under the exponential
    mechanism."""
    p_em = em.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p_em, kind="stable")[:MAX_TABLE_ROWS])
    p_cm = cm.distribution().probabilities
    table: dict[str, Column] = {
        "outcome": [env.outcome_label(int(s)) for s in keep],
        "exponential": p_em[keep],
        "commitment": p_cm[keep],
    }
    if r.least.q is not None:
        table["mix"] = (1 - r.least.q) * p_em[keep] + r.least.q * p_cm[keep]
    table[env.objective_name] = env.objective_values(profile)[keep]
    return table


#: A q column's cell where no mixing probability exists (a missing figure elsewhere is None, shown
#: "-").
NO_Q = "none"


def _scaling_table(
    spec: NSTSpec, seed: np.random.SeedSequence
) -> dict[str, list[float | str | None]]:
    """The analysis again at each n: how the per-agent loss of the mix shrinks, against
    ``sqrt(|O| ln|O| / (gamma n))`` (the NST rate's shape) and the bound of
    :func:`loss_bound_per_agent`.

    Two kinds of empty cell, told apart: ``"none"`` in a q column says no mixing probability exists
    at that n (gamma = 0, or no q makes the mix truthful), as the ``q_*`` metrics say; ``None``
    (shown ``-``) in a figure computed from a q or from gamma says it was not computed because that
    q or gamma is missing (``loss_per_agent_mix``, ``loss_bound_per_agent``,
    ``sqrt_O_lnO_over_gamma_n``)."""
    rows: dict[str, list[float | str | None]] = {
        k: []
        for k in (
            "n",
            "epsilon",
            "gamma",
            "q_theorem_exact",
            "q_exact",
            "max_gain_exponential",
            "loss_per_agent_exponential",
            "loss_per_agent_mix",
            "loss_bound_per_agent",
            "sqrt_O_lnO_over_gamma_n",
        )
    }
    env = facility_environment(spec)
    epsilon = None if spec.scaling_balanced else spec.epsilon
    for n, child in zip(spec.scaling, seed.spawn(len(spec.scaling))):
        em, profile, _ = mechanisms(spec, env, n, child, epsilon)
        r = nst_report(em, commitment(spec, em.environment), profile)
        q = r.least.q
        size = em.environment.n_outcomes
        rows["n"].append(n)
        rows["epsilon"].append(em.epsilon)
        rows["gamma"].append(r.gap.gamma)
        rows["q_theorem_exact"].append(
            NO_Q if r.theorem.q_exact_form is None else r.theorem.q_exact_form
        )
        rows["q_exact"].append(NO_Q if q is None else q)
        rows["max_gain_exponential"].append(r.exponential_audit.max_gain)
        rows["loss_per_agent_exponential"].append((r.optimum - r.exponential_objective) / n)
        # the mix's objective is known exactly when q is (None together)
        rows["loss_per_agent_mix"].append(
            None if r.mix_objective is None else (r.optimum - r.mix_objective) / n
        )
        rows["loss_bound_per_agent"].append(
            None
            if r.theorem.q_exact_form is None
            else loss_bound_per_agent(
                em.epsilon,
                n,
                size,
                r.theorem.q_exact_form,
                em.mechanism.sensitivity,
                em.environment.objective_range,
                em.environment.offset_range,
            )
        )
        rows["sqrt_O_lnO_over_gamma_n"].append(
            None if r.gap.gamma <= 0 else math.sqrt(size * math.log(size) / (r.gap.gamma * n))
        )
    return rows
