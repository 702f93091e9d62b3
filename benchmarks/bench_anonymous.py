"""Benchmark of the anonymous-game mediator (dpgames.games.anonymous_mediator): its cost does not grow with
the number of players.

Run:  python benchmarks/bench_anonymous.py          (add --quick for T = 200)
      python benchmarks/bench_anonymous.py --theory (alpha, eta, cross regret against n, T, eps; ~4 min)

1. 10^6 players of 10 types x 20 actions (a crowding game), T = 1000, Hedge and Blum-Mansour, Gaussian
   noise at eps = 1: goal < 30 s.
2. The same with 10^4 .. 10^7 players: every time is printed as a ratio to a floor measured in the same
   run, the bare learner alone (T updates of the same Hedge / Blum-Mansour learners on fixed losses: what
   any mediator must at least do), and to the 10^4-player time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from dpgames.games.anonymous_generators import crowding_game, market_entry
from dpgames.games.anonymous_mediator import AnonymousMediator, learner_layout, misreport_gains
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate

TYPES, ACTIONS = 10, 20


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bare_learner(dynamics: str, rounds: int) -> None:
    """The floor: the learners alone, on fixed losses."""
    layout = learner_layout(TYPES, ACTIONS)
    learner = (Hedge if dynamics == "hedge" else BlumMansour)(layout, default_learning_rate(layout, rounds))
    loss = np.random.default_rng(0).random(TYPES * ACTIONS)
    for _ in range(rounds):
        learner.update(learner.strategy(), loss)


def theory(seeds: int = 3) -> None:
    """alpha (swap regret), eta (exact misreport gain on the realised noise) and the cross regret that bounds
    E[eta] up to (e^eps - 1) + delta, means over seeds, for the market entry game (capacity 0.4 n)."""
    print("market entry, Blum-Mansour; means over", seeds, "seeds (exact evaluation)")
    print(f"{'n':>5} {'eps':>5} {'T':>5} {'alpha':>8} {'eta':>8} {'cross':>8} {'(e^eps-1)+delta':>16}")
    for n in (20, 80, 320):
        for eps in (0.5, 2.0):
            for rounds in (100, 1000):
                game = market_entry([n * 5 // 8, n * 3 // 8], capacity=0.4 * n, outside=[0.5, 0.45])
                mediator = AnonymousMediator(rounds=rounds, epsilon=eps, dynamics="blum-mansour")
                rows = []
                for seed in range(seeds):
                    gains = misreport_gains(mediator, game, rng=seed)
                    rows.append((mediator.run(game, rng=seed).max_alpha, gains.max_eta, gains.cross_regret.max()))
                alpha, eta, cross = np.mean(rows, axis=0)
                print(f"{n:>5} {eps:>5} {rounds:>5} {alpha:8.4f} {eta:8.4f} {cross:8.4f} {gains.privacy_term:16.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 200 instead of 1000")
    parser.add_argument("--theory", action="store_true", help="alpha and eta against n, T, eps instead")
    args = parser.parse_args()
    if args.theory:
        theory()
        return
    rounds = 200 if args.quick else 1000
    values = np.random.default_rng(0).uniform(0.2, 1.0, size=(TYPES, ACTIONS))
    for dynamics in ("hedge", "blum-mansour"):
        floor = best_time(lambda: bare_learner(dynamics, rounds))
        mediator = AnonymousMediator(rounds=rounds, epsilon=1.0, dynamics=dynamics)
        print(f"\n{dynamics}: {TYPES} types x {ACTIONS} actions, T = {rounds}, eps = 1 (Gaussian noise)")
        print(f"  floor (bare learner, T updates): {floor:.3f} s")
        first = None
        for n in (10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7):
            game = crowding_game(np.full(TYPES, n // TYPES), values)
            out = mediator.run(game, rng=1)
            seconds = best_time(lambda: mediator.run(game, rng=1), repeat=2)
            first = first or seconds
            goal = "  (goal < 30 s)" if n == 10 ** 6 else ""
            print(f"  n = {n:>10,}: {seconds:6.2f} s = {seconds / floor:5.1f} x floor, {seconds / first:4.2f} x the "
                  f"10^4 time; alpha {out.max_alpha:.4f} ({out.evaluation}), eps {out.privacy.epsilon:.3f}{goal}")


if __name__ == "__main__":
    main()
