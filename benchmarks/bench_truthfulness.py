"""Benchmarks of exact truthfulness: facility location with 10^4 agents, the gap, the exact least q
and the full audit (every true location x every lie), and Huang-Kannan's audit; the audit over every
hypothetical true type where it is affordable (at the shipped scenarios' sizes).

Run:  python benchmarks/bench_truthfulness.py          (add --quick for a smaller, faster pass)

Instances (seeded): a connected small-world graph (Watts-Strogatz, 1,000 nodes, k = 1: 1,000
outcomes) and a 10 x 20 street grid (200 nodes, k = 2: 19,900 outcomes), 10^4 agents at uniformly
random nodes. Agents at the same node form one class, so the audit costs D x m x K (distinct
locations x lies x outcomes), whatever the number of agents.  The baseline, measured in the same
run, recomputes the exponential mechanism's law from scratch for each (agent, lie) on a sample of
pairs, scaled to all n x m pairs (what an audit without classes and without the rank-one tilt would
cost); the floor is one matrix product of the audit's shape (classes x outcomes by outcomes x
types), which the exact audit by tilted laws cannot avoid.  Audits, baselines and floors are timed
alternately, ``--repeats`` times in one process (benchmarks/_timing.py: median CPU time, median and
range of the per-repetition ratios).
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
from _timing import interleaved, print_machine

from dpgames.analysis.nst import least_q, nst_report
from dpgames.analysis.truthfulness import truthfulness_audit, type_space_affordable
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import (
    facility_location_environment,
    grid_graph,
)
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def matmul(rows: int, inner: int, cols: int):
    """One ``rows x inner`` by ``inner x cols`` float matrix product, as a callable: the floor of an
    exact audit by tilted laws, which needs at least one such product (classes x outcomes x
    lies)."""
    gen = np.random.default_rng(0)
    left, right = gen.random((rows, inner)), gen.random((inner, cols))
    return lambda: left @ right


def brute_force(em, profile, pairs: int, rng):
    """A callable recomputing the law from the moved profile for ``pairs`` sampled (agent, lie)
    pairs."""
    env = em.environment
    agents = rng.integers(profile.n, size=pairs)
    lies = rng.integers(env.n_types, size=pairs)

    def run():
        for i, x in zip(agents, lies):
            counts = profile.counts.copy()
            counts[profile.type_indices[i]] -= 1
            counts[x] += 1
            law = em.mechanism.distribution(counts @ env.score + env.offset)
            law.expect(env.best_utility[profile.type_indices[i]])

    return run


def bench_facility(
    name: str, graph: nx.Graph, k: int, n_agents: int, epsilon: float, sample: int, repeats: int
) -> None:
    rng = np.random.default_rng(1)
    env, t_env = timed(lambda: facility_location_environment(graph, k=k))
    profile = env.profile(env.types[rng.integers(env.n_types, size=n_agents)])
    em = ObjectiveExponentialMechanism(env, epsilon)
    cm = CommitmentMechanism(env)
    report, t_report = timed(lambda: nst_report(em, cm, profile))
    cases = {
        "audit": lambda: truthfulness_audit(em, profile),
        "floor": matmul(profile.classes.size, env.n_outcomes, env.n_types),
        "brute force": brute_force(em, profile, sample, rng),
    }
    affordable = type_space_affordable(env, profile)
    if affordable:
        cases |= {
            "every type": lambda: truthfulness_audit(em, profile, "all"),
            "floor, every type": matmul(
                profile.classes.size * env.n_types, env.n_outcomes, env.n_types
            ),
        }
    t = interleaved(cases, repeats)
    size = f"{profile.classes.size} x {env.n_types} x {env.n_types} x {env.n_outcomes:,}"
    if affordable:
        type_space = (
            f"{t.seconds('every type'):8.2f} s; / the realised-type audit "
            f"{t.ratio('every type', 'audit')}, "
            f"/ one (classes x types) x outcomes x types matrix product "
            f"{t.ratio('every type', 'floor, every type')}"
        )
    else:
        type_space = "refused (above TYPE_SPACE_LIMIT; not in the NST report)"
    all_pairs = profile.n * env.n_types
    per_pair = t.seconds("brute force") / sample
    print(
        f"\n== {name}: {graph.number_of_nodes()} nodes, k = {k}, |O| = {env.n_outcomes:,}, "
        f"{profile.n:,} agents in {profile.classes.size} classes, eps = {epsilon:g}; "
        f"{repeats} interleaved reps, "
        f"median CPU (range of the per-repetition ratios)"
    )
    print(
        f"  environment (shortest paths from {graph.number_of_nodes()} candidates, "
        f"utilities) {t_env:8.2f} s"
    )
    print(
        "  full NST report (gap, theorem q, exact q, EM and mix audits, welfare)   "
        f"{t_report:8.2f} s"
    )
    print(
        f"  exponential-mechanism audit alone: {profile.classes.size} x {env.n_types} "
        "(class, lie) pairs"
        f"             {t.seconds('audit'):8.2f} s; / its floor, one classes x outcomes x types "
        f"matrix product ({t.seconds('floor') * 1e3:.1f} ms) {t.ratio('audit', 'floor')}"
    )
    print(f"  audit over every true type ({size}): {type_space}")
    print(
        f"  brute force: {per_pair * 1e3:.2f} ms per (agent, lie) x {all_pairs:.1e} pairs = "
        f"{per_pair * all_pairs / 3600:8.1f} h; / the audit "
        f"{t.ratio('brute force', 'audit') / (sample / all_pairs)}"
    )
    g, least = report.gap, report.least
    print(
        f"  gamma = {g.gamma:g} ({g.true_label!r} vs {g.lie_label!r})"
        + (
            f"; theorem q = {report.theorem.q_exact_form:.6f}"
            if g.gamma > 0
            else "; no theorem q (gamma = 0)"
        )
    )
    if least.q is None:
        print(f"  exact q: none below 1 ({least.diagnosis})")
    elif least.agent is None:
        print("  exact q = 0: no lie gains under the exponential mechanism at this profile")
    else:
        print(
            f"  exact q = {least.q:.6g} (agent {least.agent}, {least.true_type!r} -> "
            f"{least.lie!r}); "
            f"mix's largest gain at it {report.mix_audit.max_gain:.2e}"
        )
    print(f"  largest gain, exponential mechanism alone: {report.exponential_audit.max_gain:.3e}")
    mix = "" if report.mix_objective is None else f", mix {report.mix_objective:,.1f}"
    print(
        f"  welfare: optimum {report.optimum:,.1f}, exponential "
        f"{report.exponential_objective:,.1f}, "
        f"M^P {report.commitment_objective:,.1f}{mix}"
    )
    hk = HuangKannan(env, 0.5)
    audit, t_hk = timed(lambda: truthfulness_audit(hk, profile))
    print(
        f"  Huang-Kannan (beta = 0.5) full audit {t_hk:6.2f} s: largest gain {audit.max_gain:.2e}, "
        f"smallest utility {audit.truthful_utility.min():.3f}"
    )


def bench_type_space(
    name: str, graph: nx.Graph, k: int, n_agents: int, epsilon: float, repeats: int
) -> None:
    """The least q over the realised types and over every true type, at a shipped scenario's
    size."""
    env = facility_location_environment(graph, k=k)
    profile = env.profile(env.types[np.random.default_rng(1).integers(env.n_types, size=n_agents)])
    em, cm = ObjectiveExponentialMechanism(env, epsilon), CommitmentMechanism(env)
    hk = HuangKannan(env, 0.5)
    t = interleaved(
        {
            "least q": lambda: least_q(em, cm, profile),
            "least q, every type": lambda: least_q(em, cm, profile, true_types="all"),
            "floor": matmul(profile.classes.size * env.n_types, env.n_outcomes, env.n_types),
            "HK": lambda: truthfulness_audit(hk, profile),
            "HK, every type": lambda: truthfulness_audit(hk, profile, "all"),
        },
        repeats,
    )
    print(
        f"\n== every true type, {name}: {env.n_types} types, |O| = {env.n_outcomes}, "
        f"{profile.n} agents in "
        f"{profile.classes.size} classes; {repeats} interleaved reps"
    )
    print(
        f"  least q: realised types {t.results['least q'].q} in "
        f"{t.seconds('least q') * 1e3:.1f} ms; every true "
        f"type {t.results['least q, every type'].q} in "
        f"{t.seconds('least q, every type') * 1e3:.1f} ms "
        f"({t.ratio('least q, every type', 'least q')}; "
        f"{t.ratio('least q, every type', 'floor')} its floor, one "
        f"(classes x types) x outcomes x types matrix product, {t.seconds('floor') * 1e3:.2f} ms)"
    )
    print(
        f"  Huang-Kannan audit: realised {t.seconds('HK') * 1e3:.1f} ms; every true type "
        f"{t.seconds('HK, every type') * 1e3:.1f} ms ({t.ratio('HK, every type', 'HK')})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller graphs (a pass in a few seconds)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repetitions")
    args = parser.parse_args()
    r = args.repeats
    print_machine()
    bench_type_space("6 x 6 grid, k = 2 (nst_facility_k2.toml)", grid_graph(6, 6), 2, 400, 1.0, r)
    bench_type_space("8 x 8 grid, k = 1 (nst_facility_k1.toml)", grid_graph(8, 8), 1, 500, 1.0, r)
    if args.quick:
        bench_facility(
            "small-world",
            nx.connected_watts_strogatz_graph(200, 6, 0.1, seed=0),
            1,
            2000,
            0.02,
            50,
            r,
        )
        bench_facility("street grid", grid_graph(5, 10), 2, 2000, 0.1, 20, r)
    else:  # eps small enough that the law is not a point mass on the optimum with 10^4 agents
        bench_facility(
            "small-world",
            nx.connected_watts_strogatz_graph(1000, 6, 0.1, seed=0),
            1,
            10_000,
            0.02,
            200,
            r,
        )
        bench_facility("street grid", grid_graph(10, 20), 2, 10_000, 0.1, 40, r)
    print_machine("end")


if __name__ == "__main__":
    main()
