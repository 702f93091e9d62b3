"""Large games: each figure against a baseline timed alternately with it in the same process.

    DPGAMES_TNTP_DIR=../shared/data/tntp python benchmarks/bench_games.py [--skip-chicago]
    [--compare-old] [--breakdown]
                                                                         [--repeats 3]

Prints:

* **User equilibrium** on Sioux Falls to relative gap 1e-4 (both solvers).  Frank-Wolfe against a
  textbook one and the mediator against per-player Hedge learners are in ``bench_peers.py``.
* **The private mediator** (T = 1000) on Sioux Falls and Chicago Sketch (all routed trips); on
  Chicago Sketch (nonatomic regrets) against its **floor**: the two sparse products every round
  needs, ``A^T f`` (the loads) and ``A c`` (the action costs), ``T`` times on the mediator's final
  game.  The run and its floor (and, with ``--compare-old``, the reference) are timed alternately,
  ``--repeats`` times in this process (benchmarks/_timing.py): the ratio is the median (range) of
  the per-repetition ratios, of CPU seconds of this process and of wall seconds.  Shortest paths,
  column generation and the mediator's round under Hedge are compiled by numba: the first call in a
  process (importing numba, compiling the kernels or loading them from numba's cache) is timed first
  and printed on its own, and not counted anywhere below.  ``--compare-old`` also times the plain
  numpy reference implementation (kept as the test oracle ``tests/mediator_oracle.py``) on the same
  instance and seed, interleaved with the run, and checks the outcomes: the same draws, and numbers
  within 1e-12 (the largest relative difference is printed).  ``--breakdown`` then runs the Chicago
  Sketch mediator once more with a CPU timer around each compiled kernel, numpy's ``exp``, column
  generation and the lanes, and prints where the time goes, scipy's two products on the final game,
  and numpy's ``exp`` on arguments in three ranges (it slows down where it underflows).
* **Column generation** on Chicago Sketch (``RoutingGame.new_columns``, as the mediator's warm-up
  calls it: 10 generations, at most 3 paths per OD pair, links costed at the loads of each class's
  uniform mix over its paths): the grown games checked identical to the plain reference
  implementation's (SciPy's Dijkstra and numpy, kept as the test oracle ``tests/columns_oracle.py``)
  at every generation, then one call on the last generation's inputs timed interleaved against the
  reference, and the Dijkstra part alone against SciPy's (the same trees).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
from _timing import interleaved, print_machine
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


# --- the mediator against its floor
# ---------------------------------------------------------------------
def cpu_timed(fn):
    """The result, the CPU seconds of this process and the wall seconds of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def mediator_row(
    label: str,
    model,
    players,
    mediator: PrivateMediator,
    compare_old: bool,
    floor: bool,
    repeats: int,
) -> None:
    """Time the mediator against its floor (nonatomic evaluation: the two products are the whole of
    a round's necessary work) and, with ``compare_old``, against the reference implementation,
    alternately."""
    out = mediator.run(model, players, 1)  # the final game, for the floor
    cases = {"now": lambda: mediator.run(model, players, 1)}
    if floor:
        gen = np.random.default_rng(0)
        a = out.game.incidence
        f, c = gen.uniform(size=a.shape[0]), gen.uniform(size=a.shape[1])

        def products() -> None:
            for _ in range(mediator.rounds):
                a.T @ f, a @ c

        cases["floor"] = products
    if compare_old:
        sys.path.insert(0, str(ROOT / "tests"))
        from mediator_oracle import oracle_run

        cases["reference"] = lambda: oracle_run(mediator, model, players, 1)
    t = interleaved(cases, repeats, warmup=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(
        f"  {label}: {t.seconds('now'):6.2f} CPU-s ({t.seconds('now', 'wall'):.2f} s "
        "wall, medians); "
        f"peak memory {peak:.2f} GB"
    )
    if floor:
        print(
            f"      floor: T x the two products on the final game's {a.shape[0]} paths "
            f"({a.nnz} entries); "
            f"{t.line('now', 'floor')} (goal <= 1.5)"
        )
    print(
        f"      {int(players.sum())} players on {players.size} OD pairs, alpha {out.max_alpha:.3g} "
        f"({out.evaluation}), eps {out.privacy.epsilon:g} at delta {out.privacy.delta:g}"
    )
    if compare_old:
        old, out = t.results["reference"], t.results["now"]
        same = (
            np.array_equal(old.suggestions, out.suggestions)
            and old.suggested_round == out.suggested_round
        )
        scale = old.cost_range  # a regret's rounding is relative to the costs it is a difference of
        deviation = max(
            float(
                np.max(
                    np.abs(getattr(out, name) - getattr(old, name))
                    / np.maximum(
                        np.abs(getattr(old, name)),
                        scale if name == "alpha" else np.finfo(float).tiny,
                    ),
                    initial=0.0,
                )
            )
            for name in ("alpha", "expected_cost", "cost_range")
        )
        verdict = "same draws, numbers within 1e-12" if same and deviation <= 1e-12 else "DIFFERENT"
        print(
            f"      {t.line('reference', 'now')}; outcomes: {verdict} (largest relative "
            f"difference {deviation:.1e})"
        )
        if floor:
            print(f"      {t.line('reference', 'floor')}")


def column_generation_row(
    model: RoutingGame, players: np.ndarray, repeats: int, generations: int = 10
) -> None:
    """Check ``new_columns`` grows the same games as the reference implementation over
    ``generations``; then time one call on the last generation's inputs against the reference, and
    its Dijkstra against SciPy's."""
    sys.path.insert(0, str(ROOT / "tests"))
    from columns_oracle import oracle_graph, oracle_new_columns

    mediator = PrivateMediator(rounds=1000, epsilon=1.0, max_paths=3)
    # compiles or loads the kernels
    model.shortest_paths(model.network.costs(np.zeros(model.network.num_links)))
    game, cap = mediator.prepare(model, players)
    same = True
    for _ in range(generations):
        last = game
        strategy = game.uniform_strategy()
        link_costs = game.costs(game.loads(strategy * game.spread(game.demand)))
        old = oracle_new_columns(model, game, link_costs, cap, mediator.max_paths)
        new = model.new_columns(game, link_costs, cap, mediator.max_paths)
        a, b = new[0].incidence, old[0].incidence
        same &= all(
            np.array_equal(getattr(a, name), getattr(b, name))
            and getattr(a, name).dtype == getattr(b, name).dtype
            for name in ("indptr", "indices", "data")
        ) and all(
            np.array_equal(x, y)
            for x, y in (
                (new[0].action_class, old[0].action_class),
                (new[1], old[1]),
                (new[2], old[2]),
            )
        )
        game = new[0]
    graph = oracle_graph(model.network, link_costs)[0]
    origins = np.unique(model._o)
    t = interleaved(
        {
            "new_columns": lambda: model.new_columns(last, link_costs, cap, mediator.max_paths),
            "reference": lambda: oracle_new_columns(
                model, last, link_costs, cap, mediator.max_paths
            ),
            "trees": lambda: model.shortest_path_trees(link_costs),
            "SciPy dijkstra": lambda: dijkstra(graph, indices=origins, return_predecessors=True),
        },
        repeats,
    )
    print(
        f"  Chicago Sketch column generation ({generations} generations, "
        f"{game.num_actions} paths at the end; grown "
        f"games {'identical' if same else 'DIFFERENT'}); the last call: "
        f"{t.line('reference', 'new_columns')} "
        f"(goal: new_columns <= 35 ms)"
    )
    print(
        "      Dijkstra's trees (compiled, in SciPy's order; each search stops at its "
        "last destination) vs SciPy "
        f"(the same trees): {t.line('SciPy dijkstra', 'trees')}"
    )


def breakdown(model: RoutingGame, players: np.ndarray, mediator: PrivateMediator) -> None:
    """Where one mediator run's CPU time goes: the compiled kernels, the exponentials, column
    generation and the lanes, each wrapped by a CPU timer (the rest: Python, the publisher, the
    trace); then numpy's ``exp`` on arguments of three ranges (why the kernels put the underflowing
    ones aside)."""
    import collections

    from dpgames.games import mediator as module, network

    kernels, spent, calls = module._kernels(), collections.Counter(), collections.Counter()
    wrapped = [
        (kernels, name, name)
        for name in ("charge", "renew", "underflows", "log_scores", "largest_regret")
    ]
    wrapped += [
        (module._Rounds, "_exp", "numpy exp (put-aside included)"),
        (network.RoutingGame, "new_columns", "column generation"),
        (kernels, "Lanes", "the lanes of each grown game"),
    ]
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
        print(
            f"      {label:<32} {seconds:6.2f} CPU-s in {calls[label]:5d} calls "
            f"({1e3 * seconds / calls[label]:6.2f} ms each)"
        )
    print(f"      {'Python and the rest':<32} {cpu - sum(spent.values()):6.2f} CPU-s")
    a = out.game.incidence
    gen = np.random.default_rng(0)
    f, c = gen.uniform(size=a.shape[0]), gen.uniform(size=a.shape[1])
    out_ = np.empty(a.shape[0])
    ranges = {
        f"[{low:g}, {high:g}]": gen.uniform(low, high, a.shape[0])
        for low, high in ((-700.0, 0.0), (-800.0, -746.0), (-745.0, -708.0))
    }
    t = interleaved(
        {"A c": lambda: a @ c, "A^T f": lambda: a.T @ f}
        | {name: (lambda x=x: np.exp(x, out=out_)) for name, x in ranges.items()},
        15,
    )
    print(
        f"      against scipy on the final game: A c {1e3 * t.seconds('A c'):.2f} ms, "
        f"A^T f {1e3 * t.seconds('A^T f'):.2f} ms (median CPU of 15 interleaved reps)"
    )
    for name in ranges:
        print(
            f"      numpy exp of {a.shape[0]:,} arguments in {name}: "
            f"{1e3 * t.seconds(name):.2f} ms; "
            f"/ the first range {t.ratio(name, next(iter(ranges)))} CPU"
        )


def first_call() -> None:
    """Time the first compiled call of the process, a mediator run on a tiny routing game (before
    anything else: importing numba and compiling the kernels, or loading them from numba's cache:
    shortest paths, column generation, the mediator's round), excluded from every figure below."""
    from dpgames.games import _dijkstra, _paths, _rounds

    gen = np.random.default_rng(0)
    tiny = RoutingGame(grid_network(3, 3, gen), np.array([0]), np.array([8]), np.array([10.0]))
    _, cpu, wall = cpu_timed(lambda: PrivateMediator(rounds=20, epsilon=1.0).run(tiny, rng=0))
    kernels = [
        value
        for module in (_dijkstra, _paths, _rounds)
        for value in vars(module).values()
        if hasattr(value, "stats") and hasattr(value.stats, "cache_misses")
    ]
    compiled = sum(len(kernel.stats.cache_misses) for kernel in kernels)
    how = f"compiled {compiled} kernel(s)" if compiled else "loaded the kernels from numba's cache"
    print(
        f"First compiled call of the process (import numba, {how}): {cpu:.2f} CPU-s "
        f"({wall:.2f} s wall), "
        f"not counted below"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-chicago", action="store_true")
    parser.add_argument(
        "--chicago-paths",
        type=int,
        default=3,
        help="paths per OD pair on Chicago Sketch (max_paths)",
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="interleaved repetitions of each timed comparison"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also print where the Chicago Sketch mediator's CPU time goes (kernels wrapped "
        "by timers)",
    )
    parser.add_argument(
        "--compare-old",
        action="store_true",
        help="also time the plain numpy reference mediator (tests/mediator_oracle.py)",
    )
    args = parser.parse_args()
    print_machine()
    print(f"TNTP folder: {TNTP}")
    first_call()

    sioux = load_tntp(TNTP / "SiouxFalls")
    for method in ("path-based", "frank-wolfe"):
        ue, seconds = timed(lambda m=method: user_equilibrium(sioux, method=m, gap=1e-4))
        print(
            f"Sioux Falls UE ({method:11s}): gap {ue.relative_gap:.2e} in "
            f"{ue.iterations:5d} iterations, "
            f"{seconds:6.2f} s (target < 5 s); Beckmann {ue.game.potential(ue.flow):.6e} "
            "(published 4.231335e6)"
        )
    print(
        "Private mediator, T = 1000, against its floor (the two sparse products of a "
        "round, x T), timed alternately:"
    )
    players = round_players(sioux.demand)
    mediator_row(
        "Sioux Falls (exact regrets: their expected costs, not the products, dominate)",
        sioux,
        players,
        PrivateMediator(rounds=1000, epsilon=1.0),
        args.compare_old,
        False,
        args.repeats,
    )
    if not args.skip_chicago:
        chicago = load_tntp(TNTP / "ChicagoSketch")
        mediator_row(
            f"Chicago Sketch (max_paths={args.chicago_paths})",
            chicago,
            round_players(chicago.demand),
            PrivateMediator(rounds=1000, epsilon=1.0, max_paths=args.chicago_paths),
            args.compare_old,
            True,
            args.repeats,
        )
        if args.breakdown:
            breakdown(
                chicago,
                round_players(chicago.demand),
                PrivateMediator(rounds=1000, epsilon=1.0, max_paths=args.chicago_paths),
            )
        column_generation_row(chicago, round_players(chicago.demand), args.repeats)

    print_machine("end")


if __name__ == "__main__":
    main()
