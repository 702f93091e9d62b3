"""Large games: each figure against a baseline measured in the same run.

    DPGAMES_TNTP_DIR=../shared/data/tntp python benchmarks/bench_games.py [--skip-chicago] [--compare-old] [--breakdown]

Prints:

* **User equilibrium** on Sioux Falls to relative gap 1e-4 (both solvers), and **Frank-Wolfe per
  iteration** against a textbook link-based Frank-Wolfe written plainly below (Dijkstra from every
  origin, all-or-nothing loading of the link flows, bisection line search on the Beckmann potential;
  no path set): the same number of iterations of each, on Sioux Falls and Anaheim.
* **The private mediator** (T = 1000) on Sioux Falls and Chicago Sketch (all routed trips); on Chicago
  Sketch (nonatomic regrets) against its **floor**: the two sparse products every round needs, ``A^T f``
  (the loads) and ``A c`` (the action costs), timed on the mediator's final game right after the run
  (median of 15) and multiplied by ``T``.  Times are CPU seconds of this process (the wall clock is
  printed too): on a shared machine other processes stretch the wall time of both unevenly.  Shortest
  paths, column generation and the mediator's round under Hedge are compiled by numba: the first call in
  a process (importing numba, compiling the kernels or loading them from numba's cache) is timed first
  and printed on its own, and not counted anywhere below.  ``--compare-old`` also times the plain numpy reference implementation (kept as the
  test oracle ``tests/mediator_oracle.py``) on the same instance and seed and checks the outcomes: the
  same draws, and numbers within 1e-12 (the largest relative difference is printed).  ``--breakdown``
  then runs the Chicago Sketch mediator once more with a CPU timer around each compiled kernel, numpy's
  ``exp``, column generation and the lanes, and prints where the time goes, scipy's two products on the
  final game, and numpy's ``exp`` on arguments in three ranges (it slows down where it underflows).
* **Column generation** on Chicago Sketch (``RoutingGame.new_columns``, as the mediator's warm-up calls
  it: 10 generations, at most 3 paths per OD pair, links costed at the loads of each class's uniform mix
  over its paths): CPU ms per call now (compiled: :mod:`dpgames.games._dijkstra`, ``_paths``) against
  the plain reference implementation (SciPy's Dijkstra and numpy, kept as the test oracle
  ``tests/columns_oracle.py``), on the same inputs, checking the grown games are identical; and the
  Dijkstra part alone against SciPy's (the same trees).
* The ratio of the aggregate mediator to a straightforward per-player implementation (one Hedge learner
  per player, loops over players) on a small instance.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from dpgames.games.assignment import user_equilibrium
from dpgames.games.atomic import round_players
from dpgames.games.mediator import PrivateMediator
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.tntp import load_tntp

ROOT = Path(__file__).resolve().parents[1]
TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


# --- the textbook Frank-Wolfe (link flows only) --------------------------------------------------------
def textbook_frank_wolfe(model: RoutingGame, iterations: int) -> tuple[np.ndarray, float]:
    """Link-based Frank-Wolfe (LeBlanc, Morlok & Pierskalla 1975; Sheffi 1985, ch. 5), ``iterations``
    iterations from the free-flow all-or-nothing flow.  Returns the link flows and the last relative gap."""
    net = model.network
    tail = np.array([net.node(x) for x in net.tail.tolist()])
    head = np.array([net.sink(x) for x in net.head.tolist()])  # links into a zone end at its sink copy
    nodes = int(max(tail.max(), head.max())) + 1
    assert np.unique(tail * nodes + head).size == tail.size, "the textbook version assumes no parallel links"
    edge = np.full((nodes, nodes), -1)
    edge[tail, head] = np.arange(tail.size)
    origins = np.array([net.node(x) for x in np.asarray(model.origins).tolist()])
    sinks = np.array([net.sink(x) for x in np.asarray(model.destinations).tolist()])
    sources, row = np.unique(origins, return_inverse=True)
    demand = model.demand

    def all_or_nothing(link_costs):
        graph = sp.csr_matrix((link_costs, (tail, head)), shape=(nodes, nodes))
        dist, pred = dijkstra(graph, indices=sources, return_predecessors=True)
        flow, current = np.zeros(tail.size), sinks.copy()
        active = np.flatnonzero(current != origins)
        while active.size:  # walk back every OD pair's path one link at a time, loading its demand
            before = pred[row[active], current[active]]
            flow += np.bincount(edge[before, current[active]], weights=demand[active], minlength=tail.size)
            current[active] = before
            active = active[before != origins[active]]
        return flow, float(demand @ dist[row, sinks])

    costs = net.costs
    x, _ = all_or_nothing(costs(np.zeros(tail.size)))
    gap = 1.0
    for _ in range(iterations):
        c = costs(x)
        y, shortest = all_or_nothing(c)
        gap = 1 - shortest / float(x @ c)
        d = y - x
        low, high = 0.0, 1.0
        for _ in range(48):  # bisection on the derivative of the potential along d
            mid = 0.5 * (low + high)
            low, high = (mid, high) if float(d @ costs(x + mid * d)) < 0 else (low, mid)
        x = x + 0.5 * (low + high) * d
    return x, gap


def frank_wolfe_rows(names: list[str], iterations: int) -> None:
    for name in names:
        model = load_tntp(TNTP / name)
        ours, ours_s = timed(lambda m=model: user_equilibrium(m, method="frank-wolfe", gap=0.0, max_iterations=iterations))
        (flows, gap), book_s = timed(lambda m=model: textbook_frank_wolfe(m, iterations))
        potential = float(model.network.costs.integral(flows).sum())
        print(f"  {name:<13} Frank-Wolfe, {iterations} iterations: dpgames {1e3 * ours_s / iterations:6.2f} ms/it, "
              f"textbook {1e3 * book_s / iterations:6.2f} ms/it: ratio {ours_s / book_s:.2f} (goal <= 1); "
              f"Beckmann {ours.game.potential(ours.flow):.6e} vs {potential:.6e}, gap {ours.relative_gap:.1e} vs {gap:.1e}")


# --- the mediator against its floor ---------------------------------------------------------------------
def cpu_timed(fn):
    """The result, the CPU seconds of this process and the wall seconds of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def product_median(fn, repeats: int = 15) -> float:
    """Median CPU seconds of ``fn()``."""
    return float(np.median([cpu_timed(fn)[1] for _ in range(repeats)]))


def product_seconds(game, repeats: int = 15) -> float:
    """Median CPU seconds of the two sparse products of one round, ``A^T f`` and ``A c``, on ``game``."""
    gen = np.random.default_rng(0)
    f, c = gen.uniform(size=game.num_actions), gen.uniform(size=game.num_resources)
    return product_median(lambda: (game.incidence.T @ f, game.incidence @ c), repeats)


def mediator_row(label: str, model, players, mediator: PrivateMediator, compare_old: bool, floor: bool) -> None:
    """Time the mediator (CPU and wall); against its floor (nonatomic evaluation: the two products are
    the whole of a round's necessary work) and, with ``compare_old``, against the old implementation."""
    if compare_old:
        sys.path.insert(0, str(ROOT / "tests"))
        from mediator_oracle import oracle_run
        old, old_cpu, old_wall = cpu_timed(lambda: oracle_run(mediator, model, players, 1))
    out, cpu, wall = cpu_timed(lambda: mediator.run(model, players, 1))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    line = f"  {label}: {cpu:6.2f} CPU-s ({wall:.2f} s wall)"
    if floor:
        bound = mediator.rounds * product_seconds(out.game)
        line += (f", floor {bound:6.2f} CPU-s (T x the two products on the final game's {out.game.num_actions} paths, "
                 f"{out.game.incidence.nnz} entries): ratio {cpu / bound:.2f} (goal <= 1.5)")
    print(line + f"; peak memory {peak:.2f} GB")
    print(f"      {int(players.sum())} players on {players.size} OD pairs, alpha {out.max_alpha:.3g} "
          f"({out.evaluation}), eps {out.privacy.epsilon:g} at delta {out.privacy.delta:g}")
    if compare_old:
        same = np.array_equal(old.suggestions, out.suggestions) and old.suggested_round == out.suggested_round
        scale = old.cost_range  # a regret's rounding is relative to the costs it is a difference of
        deviation = max(float(np.max(np.abs(getattr(out, name) - getattr(old, name)) / np.maximum(
            np.abs(getattr(old, name)), scale if name == "alpha" else np.finfo(float).tiny), initial=0.0))
            for name in ("alpha", "expected_cost", "cost_range"))
        verdict = ("same draws, numbers within 1e-12" if same and deviation <= 1e-12 else "DIFFERENT")
        versus = f" (ratio {old_cpu / bound:.2f} to the floor)" if floor else ""
        print(f"      reference: {old_cpu:6.2f} CPU-s ({old_wall:.2f} s wall){versus}: {old_cpu / cpu:.2f}x the "
              f"CPU time of now; outcomes: {verdict} (largest relative difference {deviation:.1e})")


def column_generation_row(model: RoutingGame, players: np.ndarray, generations: int = 10) -> None:
    """Time ``new_columns`` (and its Dijkstra) now and in the reference implementation on the same generations; check the
    grown games are the same, array for array."""
    sys.path.insert(0, str(ROOT / "tests"))
    from columns_oracle import oracle_graph, oracle_new_columns
    mediator = PrivateMediator(rounds=1000, epsilon=1.0, max_paths=3)
    model.shortest_paths(model.network.costs(np.zeros(model.network.num_links)))   # compiles or loads the kernels
    game, cap = mediator.prepare(model, players)
    now, before, trees, scipy_trees, same = [], [], [], [], True
    for _ in range(generations):
        strategy = game.uniform_strategy()
        link_costs = game.costs(game.loads(strategy * game.spread(game.demand)))
        old, old_cpu, _ = cpu_timed(lambda: oracle_new_columns(model, game, link_costs, cap, mediator.max_paths))
        new, new_cpu, _ = cpu_timed(lambda: model.new_columns(game, link_costs, cap, mediator.max_paths))
        _, tree_cpu, _ = cpu_timed(lambda: model.shortest_path_trees(link_costs))
        graph = oracle_graph(model.network, link_costs)[0]
        _, scipy_cpu, _ = cpu_timed(lambda: dijkstra(graph, indices=np.unique(model._o), return_predecessors=True))
        a, b = new[0].incidence, old[0].incidence
        same &= all(np.array_equal(getattr(a, name), getattr(b, name)) and getattr(a, name).dtype == getattr(b, name).dtype
                    for name in ("indptr", "indices", "data")) and all(
            np.array_equal(x, y) for x, y in ((new[0].action_class, old[0].action_class), (new[1], old[1]), (new[2], old[2])))
        now.append(new_cpu)
        before.append(old_cpu)
        trees.append(tree_cpu)
        scipy_trees.append(scipy_cpu)
        game = new[0]
    ms = {name: 1e3 * float(np.mean(v)) for name, v in
          (("now", now), ("before", before), ("trees", trees), ("scipy", scipy_trees))}
    print(f"  Chicago Sketch column generation ({generations} generations, {game.num_actions} paths at the end): "
          f"new_columns {ms['now']:.1f} CPU-ms per call vs {ms['before']:.1f} in the reference: {ms['before'] / ms['now']:.1f}x "
          f"(goal <= 35 ms); grown games {'identical' if same else 'DIFFERENT'}")
    print(f"      of which Dijkstra's trees {ms['trees']:.1f} ms (compiled, in SciPy's order; each search stops at its "
          f"last destination) vs SciPy's dijkstra {ms['scipy']:.1f} ms (the same trees)")


def breakdown(model: RoutingGame, players: np.ndarray, mediator: PrivateMediator) -> None:
    """Where one mediator run's CPU time goes: the compiled kernels, the exponentials, column generation and
    the lanes, each wrapped by a CPU timer (the rest: Python, the publisher, the trace); then numpy's ``exp``
    on arguments of three ranges (why the kernels put the underflowing ones aside)."""
    import collections

    from dpgames.games import mediator as module, network
    kernels, spent, calls = module._kernels(), collections.Counter(), collections.Counter()
    wrapped = [(kernels, name, name) for name in ("charge", "renew", "underflows", "log_scores", "largest_regret")]
    wrapped += [(module._Rounds, "_exp", "numpy exp (put-aside included)"),
                (network.RoutingGame, "new_columns", "column generation"),
                (kernels, "Lanes", "the lanes of each grown game")]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in wrapped]
    for owner, name, label in wrapped:
        def timed_call(*args, _run=getattr(owner, name), _label=label, **kwargs):  # noqa: B008 - bound per loop
            start = time.process_time()
            try:
                return _run(*args, **kwargs)
            finally:
                spent[_label] += time.process_time() - start
                calls[_label] += 1
        setattr(owner, name, timed_call)
    try:
        out, cpu, _ = cpu_timed(lambda: mediator.run(model, players, 1))
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    print(f"  where the CPU time goes ({cpu:.2f} CPU-s in this run, timers included):")
    for label, seconds in spent.most_common():
        print(f"      {label:<32} {seconds:6.2f} CPU-s in {calls[label]:5d} calls ({1e3 * seconds / calls[label]:6.2f} ms each)")
    print(f"      {'Python and the rest':<32} {cpu - sum(spent.values()):6.2f} CPU-s")
    a = out.game.incidence
    gen = np.random.default_rng(0)
    f, c = gen.uniform(size=a.shape[0]), gen.uniform(size=a.shape[1])
    print(f"      against scipy on the final game: A c {1e3 * product_median(lambda: a @ c):.2f} ms, "
          f"A^T f {1e3 * product_median(lambda: a.T @ f):.2f} ms (median of 15)")
    out_ = np.empty(a.shape[0])
    for low, high in ((-700.0, 0.0), (-800.0, -746.0), (-745.0, -708.0)):
        x = gen.uniform(low, high, a.shape[0])
        print(f"      numpy exp of {a.shape[0]:,} arguments in [{low:g}, {high:g}]: "
              f"{1e3 * product_median(lambda x=x: np.exp(x, out=out_)):.2f} ms (median of 15)")


def first_call() -> None:
    """Time the first compiled call of the process, a mediator run on a tiny routing game (before anything
    else: importing numba and compiling the kernels, or loading them from numba's cache: shortest paths,
    column generation, the mediator's round), excluded from every figure below."""
    from dpgames.games import _dijkstra, _paths, _rounds
    gen = np.random.default_rng(0)
    tiny = RoutingGame(grid_network(3, 3, gen), np.array([0]), np.array([8]), np.array([10.0]))
    _, cpu, wall = cpu_timed(lambda: PrivateMediator(rounds=20, epsilon=1.0).run(tiny, rng=0))
    kernels = [value for module in (_dijkstra, _paths, _rounds) for value in vars(module).values()
               if hasattr(value, "stats") and hasattr(value.stats, "cache_misses")]
    compiled = sum(len(kernel.stats.cache_misses) for kernel in kernels)
    how = f"compiled {compiled} kernel(s)" if compiled else "loaded the kernels from numba's cache"
    print(f"First compiled call of the process (import numba, {how}): {cpu:.2f} CPU-s ({wall:.2f} s wall), "
          f"not counted below")


def per_player_mediator(game, players: np.ndarray, rounds: int, sigma: float, rate: float, gen) -> np.ndarray:
    """The straightforward implementation: every player keeps her own Hedge weights over her class's
    actions and adds her own path's links to the loads, one player at a time (same noise, same losses)."""
    owner = np.repeat(np.arange(players.size), players)
    actions = [np.arange(game.class_start[k], game.class_start[k + 1]) for k in range(players.size)]
    rows = [game.incidence[a].toarray() for a in actions]
    weights = [np.ones(a.size) / a.size for a in (actions[k] for k in owner)]
    scale = None
    for _ in range(rounds):
        loads = np.zeros(game.num_resources)
        for i, k in enumerate(owner):
            loads += weights[i] @ rows[k]
        costs = game.costs(np.maximum(loads + gen.normal(0, sigma, loads.shape), 0))
        if scale is None:
            scale = [max(rows[k] @ costs) for k in range(players.size)]
        for i, k in enumerate(owner):
            w = weights[i] * np.exp(-rate * (rows[k] @ costs) / scale[k])
            weights[i] = w / w.sum()
    return loads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-chicago", action="store_true")
    parser.add_argument("--chicago-paths", type=int, default=3, help="paths per OD pair on Chicago Sketch (max_paths)")
    parser.add_argument("--fw-iterations", type=int, default=200)
    parser.add_argument("--breakdown", action="store_true",
                        help="also print where the Chicago Sketch mediator's CPU time goes (kernels wrapped by timers)")
    parser.add_argument("--compare-old", action="store_true",
                        help="also time the plain numpy reference mediator (tests/mediator_oracle.py)")
    args = parser.parse_args()
    print(f"TNTP folder: {TNTP}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    first_call()

    sioux = load_tntp(TNTP / "SiouxFalls")
    for method in ("path-based", "frank-wolfe"):
        ue, seconds = timed(lambda m=method: user_equilibrium(sioux, method=m, gap=1e-4))
        print(f"Sioux Falls UE ({method:11s}): gap {ue.relative_gap:.2e} in {ue.iterations:5d} iterations, "
              f"{seconds:6.2f} s (target < 5 s); Beckmann {ue.game.potential(ue.flow):.6e} (published 4.231335e6)")
    print("Frank-Wolfe per iteration against a textbook link-based Frank-Wolfe (same run):")
    frank_wolfe_rows(["SiouxFalls", "Anaheim"], args.fw_iterations)

    print("Private mediator, T = 1000, against its floor (the two sparse products of a round, x T; CPU time of this "
          "process, which a shared machine disturbs less than the wall clock):")
    players = round_players(sioux.demand)
    mediator_row("Sioux Falls (exact regrets: their expected costs, not the products, dominate)", sioux, players,
                 PrivateMediator(rounds=1000, epsilon=1.0), args.compare_old, floor=False)
    if not args.skip_chicago:
        chicago = load_tntp(TNTP / "ChicagoSketch")
        mediator_row(f"Chicago Sketch (max_paths={args.chicago_paths})", chicago, round_players(chicago.demand),
                     PrivateMediator(rounds=1000, epsilon=1.0, max_paths=args.chicago_paths), args.compare_old, floor=True)
        if args.breakdown:
            breakdown(chicago, round_players(chicago.demand), PrivateMediator(rounds=1000, epsilon=1.0,
                                                                              max_paths=args.chicago_paths))
        column_generation_row(chicago, round_players(chicago.demand))

    gen = np.random.default_rng(0)
    small = RoutingGame(grid_network(4, 4, gen), np.array([0, 3, 12]), np.array([15, 12, 3]), np.array([300, 300, 300.0]))
    reported = round_players(small.demand)
    mediator = PrivateMediator(rounds=200, epsilon=1.0, warmup=0, evaluation="nonatomic")
    game = small.public_paths(4).with_demand(reported)
    aggregate, agg_s = timed(lambda: mediator.run(game, rng=2))
    rate = float(mediator.learning_rate * np.sqrt(8 * np.log(4) / 200))
    _, naive_s = timed(lambda: per_player_mediator(game, reported, 200, aggregate.sigma, rate, np.random.default_rng(2)))
    print(f"per-player baseline ({int(reported.sum())} players, 200 rounds): {naive_s:.2f} s vs aggregate "
          f"{agg_s:.3f} s: ratio {naive_s / agg_s:.0f}x")


if __name__ == "__main__":
    main()
