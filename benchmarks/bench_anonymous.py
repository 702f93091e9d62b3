"""Benchmark of the anonymous-game mediator (dpgames.games.anonymous_mediator): its cost does not
grow with the number of players.

Run:  python benchmarks/bench_anonymous.py          (add --quick for T = 200)
      python benchmarks/bench_anonymous.py --theory (alpha, eta, cross regret against n, T, eps; ~4
      min)

1. 10^6 players of 10 types x 20 actions (a crowding game), T = 1000, Hedge and Blum-Mansour,
   Gaussian noise at eps = 1: goal < 30 s.
2. The same with 10^4 .. 10^7 players: every time is printed as a ratio to a floor, the bare learner
   alone (T updates of the same Hedge / Blum-Mansour learners on fixed losses: what any mediator
   must at least do), and to the 10^4-player time; the floor and the four sizes are timed
   alternately, ``--repeats`` times in one process (benchmarks/_timing.py: median and range of the
   per-repetition ratios).
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved, print_machine

from dpgames.games.anonymous_generators import crowding_game, market_entry
from dpgames.games.anonymous_mediator import AnonymousMediator, learner_layout, misreport_gains
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate

TYPES, ACTIONS = 10, 20


def bare_learner(dynamics: str, rounds: int) -> None:
    """The floor: the learners alone, on fixed losses."""
    layout = learner_layout(TYPES, ACTIONS)
    learner = (Hedge if dynamics == "hedge" else BlumMansour)(
        layout, default_learning_rate(layout, rounds)
    )
    loss = np.random.default_rng(0).random(TYPES * ACTIONS)
    for _ in range(rounds):
        learner.update(learner.strategy(), loss)


def theory(seeds: int = 3) -> None:
    """alpha (swap regret), eta (exact misreport gain on the realised noise) and the cross regret
    that bounds E[eta] up to (e^eps - 1) + delta, means over seeds, for the market entry game
    (capacity 0.4 n)."""
    print("market entry, Blum-Mansour; means over", seeds, "seeds (exact evaluation)")
    print(
        f"{'n':>5} {'eps':>5} {'T':>5} {'alpha':>8} {'eta':>8} {'cross':>8} {'(e^eps-1)+delta':>16}"
    )
    for n in (20, 80, 320):
        for eps in (0.5, 2.0):
            for rounds in (100, 1000):
                game = market_entry([n * 5 // 8, n * 3 // 8], capacity=0.4 * n, outside=[0.5, 0.45])
                mediator = AnonymousMediator(rounds=rounds, epsilon=eps, dynamics="blum-mansour")
                rows = []
                for seed in range(seeds):
                    gains = misreport_gains(mediator, game, rng=seed)
                    rows.append(
                        (
                            mediator.run(game, rng=seed).max_alpha,
                            gains.max_eta,
                            gains.cross_regret.max(),
                        )
                    )
                alpha, eta, cross = np.mean(rows, axis=0)
                print(
                    f"{n:>5} {eps:>5} {rounds:>5} {alpha:8.4f} {eta:8.4f} {cross:8.4f} "
                    f"{gains.privacy_term:16.3f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 200 instead of 1000")
    parser.add_argument(
        "--theory", action="store_true", help="alpha and eta against n, T, eps instead"
    )
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repetitions")
    args = parser.parse_args()
    if args.theory:
        theory()
        return
    rounds = 200 if args.quick else 1000
    print_machine()
    values = np.random.default_rng(0).uniform(0.2, 1.0, size=(TYPES, ACTIONS))
    sizes = (10**4, 10**5, 10**6, 10**7)
    for dynamics in ("hedge", "blum-mansour"):
        mediator = AnonymousMediator(rounds=rounds, epsilon=1.0, dynamics=dynamics)
        games = {f"n = {n:,}": crowding_game(np.full(TYPES, n // TYPES), values) for n in sizes}
        t = interleaved(
            {"floor": lambda d=dynamics: bare_learner(d, rounds)}
            | {name: (lambda g=g: mediator.run(g, rng=1)) for name, g in games.items()},
            args.repeats,
        )
        print(
            f"\n{dynamics}: {TYPES} types x {ACTIONS} actions, T = {rounds}, eps = 1 "
            "(Gaussian noise); "
            f"{args.repeats} interleaved reps, median CPU (range of the per-repetition "
            "ratios), CPU and wall"
        )
        print(f"  floor (bare learner, T updates): {t.seconds('floor'):.3f} s")
        first = next(iter(games))
        for n, name in zip(sizes, games):
            out = t.results[name]
            goal = "  (goal < 30 s)" if n == 10**6 else ""
            print(
                f"  {name:>14}: {t.seconds(name):6.2f} s = {t.ratio(name, 'floor')} floor (wall "
                f"{t.ratio(name, 'floor', 'wall')}), {t.ratio(name, first)} the 10^4 time (wall "
                f"{t.ratio(name, first, 'wall')}); alpha {out.max_alpha:.4f} ({out.evaluation}), "
                f"eps {out.privacy.epsilon:.3f}{goal}"
            )
    print_machine("end")


if __name__ == "__main__":
    main()
