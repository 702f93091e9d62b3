"""Independent oracles for the NST model and Huang-Kannan, written plainly (Python loops, math.exp,
networkx's own shortest paths), on purpose unlike the library's class-based, matrix-product code.

An instance here is plain data: ``utility[t][s][r]`` and ``objective[t][s][r]`` as nested lists (or
numpy arrays read element by element), a list of agents' type indices, and the mechanisms'
parameters.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx


def best_reaction(utility, t, s):
    """The first reaction with the largest utility."""
    row = [float(x) for x in utility[t][s]]
    return row.index(max(row))


def sensitivity(objective, utility):
    n_types, n_outcomes = len(utility), len(utility[0])
    spread = 0.0
    for s in range(n_outcomes):
        vals = [float(objective[t][s][best_reaction(utility, t, s)]) for t in range(n_types)]
        spread = max(spread, max(vals) - min(vals))
    return spread


def em_law(utility, objective, reports, epsilon, delta):
    """P[s] proportional to exp(eps * sum_i objective(t'_i, s, r(t'_i, s)) / (2 delta)), by
    loops."""
    n_outcomes = len(utility[0])
    scores = [
        sum(float(objective[t][s][best_reaction(utility, t, s)]) for t in reports)
        for s in range(n_outcomes)
    ]
    top = max(scores)
    weights = [math.exp(epsilon * (x - top) / (2 * delta)) for x in scores]
    total = sum(weights)
    return [w / total for w in weights]


def em_utility(utility, objective, reports, epsilon, delta, true_type, reacts_as=None):
    """E[u(t, s, r(t'', s))] under the EM law on ``reports``: the agent reacts for her true type, or
    for type ``reacts_as`` when the reaction is forced to her report."""
    law = em_law(utility, objective, reports, epsilon, delta)
    r_type = true_type if reacts_as is None else reacts_as
    return sum(
        p * float(utility[true_type][s][best_reaction(utility, r_type, s)])
        for s, p in enumerate(law)
    )


def commitment_utility(utility, true_type, report, punishing=None):
    """Mean over punishing outcomes of u(t, s, r(t', s))."""
    outcomes = range(len(utility[0])) if punishing is None else punishing
    vals = [float(utility[true_type][s][best_reaction(utility, report, s)]) for s in outcomes]
    return sum(vals) / len(vals)


def gap(utility, punishing=None):
    """min over t != t' of max over s of u(t, s, r(t, s)) - u(t, s, r(t', s))."""
    n_types = len(utility)
    outcomes = list(range(len(utility[0]))) if punishing is None else list(punishing)
    best = math.inf
    for t in range(n_types):
        for x in range(n_types):
            if t == x:
                continue
            worst = max(
                float(utility[t][s][best_reaction(utility, t, s)])
                - float(utility[t][s][best_reaction(utility, x, s)])
                for s in outcomes
            )
            best = min(best, worst)
    return best


def mix_gains(utility, objective, agents, epsilon, delta, q, punishing=None, forced=False):
    """gains[i][x]: agent i's gain from reporting type x under (1 - q) EM + q M^P, by recomputation
    (``forced``: the EM branch too imposes the reported type's reaction)."""
    n_types = len(utility)
    out = []
    for i, t in enumerate(agents):

        def value(x):
            reports = list(agents)
            reports[i] = x
            em = em_utility(utility, objective, reports, epsilon, delta, t, x if forced else None)
            cm = commitment_utility(utility, t, x, punishing)
            return (1 - q) * em + q * cm

        truthful = value(t)
        out.append([value(x) - truthful for x in range(n_types)])
    return out


def facility_welfare_optimum(graph, agent_nodes, candidates, k):
    """max over k-subsets of -(total distance to the nearest open facility), networkx's shortest
    paths."""
    dist = {c: nx.single_source_dijkstra_path_length(graph, c) for c in candidates}
    best = -math.inf
    for subset in itertools.combinations(candidates, k):
        welfare = -sum(min(dist[c][a] for c in subset) for a in agent_nodes)
        best = max(best, welfare)
    return best


def hk_outcome_law(valuations, beta, offset=None):
    """P[o] proportional to exp(beta * (sum_i v_i(o) + offset(o))), by loops."""
    n_outcomes = len(valuations[0])
    off = [0.0] * n_outcomes if offset is None else list(offset)
    totals = [sum(v[o] for v in valuations) + off[o] for o in range(n_outcomes)]
    top = max(totals)
    w = [math.exp(beta * (x - top)) for x in totals]
    z = sum(w)
    return [x / z for x in w], math.log(z) + beta * top


def hk_utility(true_valuation, reports, agent, beta, offset=None):
    """Agent's quasi-linear utility E[v_i] - p_i when everyone reports ``reports``; payment by the
    Huang-Kannan formula with Z and Z_{-i} summed explicitly."""
    law, log_z = hk_outcome_law(reports, beta, offset)
    others = [v for j, v in enumerate(reports) if j != agent]
    if others:
        _, log_z_without = hk_outcome_law(others, beta, offset)
    else:
        off = [0.0] * len(law) if offset is None else list(offset)
        log_z_without = math.log(sum(math.exp(beta * x) for x in off))
    payment = sum(p * reports[agent][o] for o, p in enumerate(law)) - (log_z - log_z_without) / beta
    return sum(p * true_valuation[o] for o, p in enumerate(law)) - payment, payment


def type_space_gains(agents, n_types, utility_of):
    """gains[i][t][x]: agent i, given the hypothetical true type t (the others truthful), reporting
    x instead of t; ``utility_of(reports, i, t)`` is agent i's expected utility when everyone
    reports ``reports`` and her true type is t.  Every (agent, true type, lie) recomputes the whole
    law."""
    out = []
    for i in range(len(agents)):
        rows = []
        for t in range(n_types):

            def value(x):
                reports = list(agents)
                reports[i] = x
                return utility_of(reports, i, t)

            truthful = value(t)
            rows.append([value(x) - truthful for x in range(n_types)])
        out.append(rows)
    return out


def brute_mix(env, agents, epsilon, q, forced):
    """Per agent: gains[t][x] of the mix (1 - q) EM + q M^P on ``env``'s tables, by
    recomputation."""
    delta = sensitivity(env.objective, env.utility)

    def utility_of(reports, i, t):
        em = em_utility(
            env.utility, env.objective, reports, epsilon, delta, t, reports[i] if forced else None
        )
        return (1 - q) * em + q * commitment_utility(env.utility, t, reports[i])

    return type_space_gains(agents, env.n_types, utility_of)


def brute_hk(hk, agents, offset=None):
    """Per agent: gains[t][x] under Huang-Kannan (its valuations and beta), by recomputation."""
    v = hk.valuations.tolist()

    def utility_of(reports, i, t):
        return hk_utility(v[t], [v[x] for x in reports], i, hk.beta, offset)[0]

    return type_space_gains(agents, len(v), utility_of)
