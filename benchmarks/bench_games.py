"""Large games: timings and memory against the targets of issue 5, and a per-player baseline.

    DPGAMES_TNTP_DIR=../shared/data/tntp python benchmarks/bench_games.py [--skip-chicago]

Prints: the user equilibrium on Sioux Falls to relative gap 1e-4 (both solvers); the private mediator
(T = 1000) on Sioux Falls and on Chicago Sketch (all routed trips; peak memory of this process); and
the ratio of the aggregate mediator to a straightforward per-player implementation (one Hedge learner
per player, loops over players) on a small instance, both measured here in the same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import numpy as np

from dpgames.games.assignment import user_equilibrium
from dpgames.games.atomic import round_players
from dpgames.games.mediator import PrivateMediator
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.tntp import load_tntp

TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "tntp"))


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


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
    args = parser.parse_args()
    print(f"TNTP folder: {TNTP}")

    sioux = load_tntp(TNTP / "SiouxFalls")
    for method in ("path-based", "frank-wolfe"):
        ue, seconds = timed(lambda: user_equilibrium(sioux, method=method, gap=1e-4))
        print(f"Sioux Falls UE ({method:11s}): gap {ue.relative_gap:.2e} in {ue.iterations:5d} iterations, "
              f"{seconds:6.2f} s (target < 5 s); Beckmann {ue.game.potential(ue.flow):.6e} (published 4.231335e6)")

    players = round_players(sioux.demand)
    out, seconds = timed(lambda: PrivateMediator(rounds=1000, epsilon=1.0).run(sioux, players, 1))
    ue = user_equilibrium(sioux.with_demand(players.astype(float)), gap=1e-5)
    print(f"Sioux Falls mediator T=1000: {seconds:6.2f} s (target < 5 s); {int(players.sum())} players, "
          f"{out.game.num_actions} paths, alpha {out.max_alpha:.3g} ({out.evaluation}), cost / UE "
          f"{out.total_expected_cost / ue.total_cost:.4f}, eps {out.privacy.epsilon:g} at delta {out.privacy.delta:g}")

    if not args.skip_chicago:
        chicago, load_s = timed(lambda: load_tntp(TNTP / "ChicagoSketch"))
        players = round_players(chicago.demand)
        out, seconds = timed(lambda: PrivateMediator(rounds=1000, epsilon=1.0, max_paths=args.chicago_paths).run(chicago, players, 1))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        print(f"Chicago Sketch mediator T=1000, max_paths={args.chicago_paths}: {seconds:6.2f} s (target < 60 s; load {load_s:.2f} s), peak "
              f"memory {peak:.2f} GB (target < 4 GB); {int(players.sum())} routed players on {players.size} OD "
              f"pairs, {out.game.num_actions} paths, alpha {out.max_alpha:.3g} / player-average "
              f"{players @ out.alpha / players.sum():.3g} ({out.evaluation})")

    gen = np.random.default_rng(0)
    small = RoutingGame(grid_network(4, 4, gen), np.array([0, 3, 12]), np.array([15, 12, 3]), np.array([300, 300, 300.0]))
    reported = round_players(small.demand)
    mediator = PrivateMediator(rounds=200, epsilon=1.0, warmup=0, evaluation="nonatomic")
    game, _ = mediator.prepare(small, reported)
    game = small.public_paths(4).with_demand(reported)
    aggregate, agg_s = timed(lambda: mediator.run(game, rng=2))
    rate = float(mediator.learning_rate * np.sqrt(8 * np.log(4) / 200))
    _, naive_s = timed(lambda: per_player_mediator(game, reported, 200, aggregate.sigma, rate, np.random.default_rng(2)))
    print(f"per-player baseline ({int(reported.sum())} players, 200 rounds): {naive_s:.2f} s vs aggregate "
          f"{agg_s:.3f} s: ratio {naive_s / agg_s:.0f}x")


if __name__ == "__main__":
    main()
