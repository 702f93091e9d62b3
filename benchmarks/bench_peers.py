"""dpgames against what a user would pick instead, timed alternately in one process
(benchmarks/_timing.py).

    pip install -e ".[bench]"        # OpenDP and diffprivlib (a peer not installed is skipped, and said so)
    DPGAMES_TNTP_DIR=/work/shared/data/tntp python benchmarks/bench_peers.py [--repeats 5] [--only
    em,laplace,...]

Every ratio is peer / dpgames per repetition (above 1: dpgames faster), median and range over the
interleaved repetitions, CPU time of this process and wall time; the machine and its load average
are printed at the start and the end.

* ``em``: one exponential-mechanism draw from fresh scores (m candidates, eps = 1, sensitivity 1):
  ``ExponentialMechanism.sample_indices`` against OpenDP's ``make_noisy_max`` under zCDP (Gumbel
  noise: the same law; under pure DP it runs permute-and-flip, another law) and diffprivlib's
  ``Exponential`` (its constructor computes the probabilities: construction + one ``randomise()``);
  then one draw from a prepared mechanism
  (``ExponentialMechanism.distribution(scores).sample_indices``, the distribution built once)
  against diffprivlib's ``randomise()`` on its built ``Exponential`` and OpenDP's
  ``make_noisy_max``, which has no prepared form (a call per draw).
* ``laplace``: Laplace noise on n values (eps = 0.5): ``LaplaceMechanism.release`` against OpenDP's
  ``make_laplace`` on a vector (exact sampling, slow: n = 10^3 only) and diffprivlib's ``Laplace``,
  whose ``randomise`` takes one number (a loop over the values).
* ``gaussian``: Gaussian noise on n values (eps = 1, delta = 1e-6, the analytic sigma):
  ``GaussianMechanism.analytic(...).release`` against OpenDP's ``make_gaussian`` on a vector with
  that sigma (exact sampling: n = 10^3 only) and diffprivlib's ``GaussianAnalytic`` (a loop over the
  values).
* ``discrete``: the exact discrete Laplace (scale 2) and Gaussian (sigma 2) samplers of Canonne,
  Kamath & Steinke (``sample_discrete_laplace`` / ``sample_discrete_gaussian``, n = 10^4 draws)
  against OpenDP's ``make_laplace`` / ``make_gaussian`` on a vector of integers (exact too).
* ``allocation``: the optimum by scipy's ``linear_sum_assignment`` on the expanded instance (one
  column per copy) against dpgames' ascending-price auction (non-private, price step alpha): time
  ratio and welfare ratio (auction / optimum, at most 1; the auction's theorem bounds the loss by
  alpha x copies sold).
* ``frank-wolfe``: ``user_equilibrium(method="frank-wolfe")`` against a textbook link-based
  Frank-Wolfe written plainly below (Dijkstra from every origin, all-or-nothing loading of the link
  flows, bisection line search on the Beckmann potential; no path set), the same number of
  iterations, on Sioux Falls and Anaheim (TNTP files; skipped without them).
* ``hedge``: the private mediator's aggregate no-regret dynamics against one Hedge learner per
  player (loops over players: what a straightforward implementation does), same noise scale and
  learning rate.
* SVVAMP (voting manipulation): ``benchmarks/bench_voting_svvamp.py``, a script of its own.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _timing import interleaved, print_machine
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import dijkstra

from dpgames import ExponentialMechanism
from dpgames.allocation import AscendingAuction, Market
from dpgames.games.assignment import user_equilibrium
from dpgames.games.atomic import round_players
from dpgames.games.mediator import PrivateMediator
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.tntp import load_tntp
from dpgames.privacy import (
    GaussianMechanism,
    LaplaceMechanism,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

ROOT = Path(__file__).resolve().parents[1]
TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))
SECTIONS = ("em", "laplace", "gaussian", "discrete", "allocation", "frank-wolfe", "hedge")


def peer(name: str):
    """The peer library's module, or None (printed: not installed, or failing to import)."""
    try:
        if name == "opendp":
            import opendp.prelude as dp

            dp.enable_features("contrib")
            return dp
        import diffprivlib.mechanisms

        return diffprivlib.mechanisms
    except Exception as exc:  # not installed, or an incompatible scikit-learn
        print(f"  ({name} skipped: {type(exc).__name__}: {exc}; pip install -e '.[bench]')")
        return None


def report(label: str, t, ours: str) -> None:
    """One line per peer: its time against dpgames'."""
    for name in t.names:
        if name != ours:
            print(f"  {label}: {t.line(name, ours)}")


# --- privacy primitives
# -------------------------------------------------------------------------------------
def bench_em(repeats: int, opendp, diffprivlib) -> None:
    print("== exponential mechanism, one draw from fresh scores (eps = 1, sensitivity 1)")
    for m in (10**3, 10**5):
        scores = np.random.default_rng(3).uniform(0, 100, size=m)
        as_list = scores.tolist()
        em, gen = ExponentialMechanism(1.0, 1.0), np.random.default_rng(4)
        cases = {"dpgames": lambda: em.sample_indices(scores, rng=gen)}
        if opendp is not None:
            space = (
                opendp.vector_domain(opendp.atom_domain(T=float, nan=False)),
                opendp.linf_distance(T=float),
            )
            noisy_max = opendp.m.make_noisy_max(
                *space, opendp.zero_concentrated_divergence(), scale=2.0
            )
            cases["OpenDP make_noisy_max (zCDP)"] = lambda: noisy_max(as_list)
        if diffprivlib is not None:
            cases["diffprivlib Exponential (build + draw)"] = lambda: diffprivlib.Exponential(
                epsilon=1.0, sensitivity=1.0, utility=as_list
            ).randomise()
        report(f"m = {m:.0e}", interleaved(cases, repeats), "dpgames")
    print(
        "== exponential mechanism, one draw from a prepared mechanism (the same scores, "
        "drawn again)"
    )
    for m in (10**3, 10**5):
        scores = np.random.default_rng(3).uniform(0, 100, size=m)
        as_list = scores.tolist()
        prepared, gen = (
            ExponentialMechanism(1.0, 1.0).distribution(scores),
            np.random.default_rng(4),
        )
        cases = {"dpgames": lambda: prepared.sample_indices(rng=gen)}
        if opendp is not None:
            space = (
                opendp.vector_domain(opendp.atom_domain(T=float, nan=False)),
                opendp.linf_distance(T=float),
            )
            noisy_max = opendp.m.make_noisy_max(
                *space, opendp.zero_concentrated_divergence(), scale=2.0
            )
            cases["OpenDP make_noisy_max (no prepared form)"] = lambda: noisy_max(as_list)
        if diffprivlib is not None:
            built = diffprivlib.Exponential(epsilon=1.0, sensitivity=1.0, utility=as_list)
            cases["diffprivlib Exponential.randomise (built)"] = built.randomise
        report(f"m = {m:.0e}", interleaved(cases, repeats), "dpgames")


def bench_laplace(repeats: int, opendp, diffprivlib) -> None:
    print("== Laplace noise on n values (eps = 0.5, sensitivity 1)")
    for n in (10**3, 10**4):
        values = np.random.default_rng(5).uniform(size=n)
        as_list = values.tolist()
        mech, gen = LaplaceMechanism(0.5), np.random.default_rng(6)
        cases = {"dpgames": lambda: mech.release(values, gen)}
        if opendp is not None and n <= 10**3:
            space = (
                opendp.vector_domain(opendp.atom_domain(T=float, nan=False)),
                opendp.l1_distance(T=float),
            )
            laplace = opendp.m.make_laplace(*space, scale=2.0)
            cases["OpenDP make_laplace"] = lambda: laplace(as_list)
        if diffprivlib is not None:
            one = diffprivlib.Laplace(epsilon=0.5, sensitivity=1.0)
            cases["diffprivlib Laplace (loop)"] = lambda: [one.randomise(v) for v in as_list]
        report(f"n = {n:.0e}", interleaved(cases, repeats), "dpgames")


def bench_gaussian(repeats: int, opendp, diffprivlib) -> None:
    mech = GaussianMechanism.analytic(1.0, 1e-6)
    print(
        "== Gaussian noise on n values (eps = 1, delta = 1e-6, sensitivity 1: analytic "
        f"sigma {mech.sigma:.3f})"
    )
    for n in (10**3, 10**4):
        values = np.random.default_rng(5).uniform(size=n)
        as_list = values.tolist()
        gen = np.random.default_rng(6)
        cases = {"dpgames": lambda: mech.release(values, gen)}
        if opendp is not None and n <= 10**3:
            space = (
                opendp.vector_domain(opendp.atom_domain(T=float, nan=False)),
                opendp.l2_distance(T=float),
            )
            gaussian = opendp.m.make_gaussian(*space, scale=mech.sigma)
            cases["OpenDP make_gaussian"] = lambda: gaussian(as_list)
        if diffprivlib is not None:
            one = diffprivlib.GaussianAnalytic(epsilon=1.0, delta=1e-6, sensitivity=1.0)
            cases["diffprivlib GaussianAnalytic (loop)"] = lambda: [
                one.randomise(v) for v in as_list
            ]
        report(f"n = {n:.0e}", interleaved(cases, repeats), "dpgames")


def bench_discrete(repeats: int, opendp) -> None:
    n = 10**4
    print(f"== exact discrete Laplace (scale 2) and Gaussian (sigma 2), {n:.0e} draws")
    if opendp is None:
        print("  (nothing to compare with: OpenDP skipped)")
        return
    ints = [0] * n
    space = opendp.vector_domain(opendp.atom_domain(T=int)), opendp.l1_distance(T=int)
    laplace = opendp.m.make_laplace(*space, scale=2.0)
    gaussian = opendp.m.make_gaussian(space[0], opendp.l2_distance(T=int), scale=2.0)
    gen = np.random.default_rng(7)
    report(
        "discrete Laplace",
        interleaved(
            {
                "dpgames": lambda: sample_discrete_laplace(2, n, gen),
                "OpenDP make_laplace (integers)": lambda: laplace(ints),
            },
            repeats,
        ),
        "dpgames",
    )
    report(
        "discrete Gaussian",
        interleaved(
            {
                "dpgames": lambda: sample_discrete_gaussian(4, n, gen),
                "OpenDP make_gaussian (integers)": lambda: gaussian(ints),
            },
            repeats,
        ),
        "dpgames",
    )


# --- allocation
# ----------------------------------------------------------------------------------------------
def assignment_optimum(market: Market) -> float:
    """The optimal welfare by ``linear_sum_assignment`` on the expanded instance (one column per
    copy)."""
    columns = np.repeat(np.arange(market.k), np.minimum(market.supply, market.n))
    rows, cols = linear_sum_assignment(market.values[:, columns], maximize=True)
    gains = market.values[rows, columns[cols]]
    return float(gains[gains > 0].sum())


def bench_allocation(repeats: int) -> None:
    print(
        "== allocation: scipy linear_sum_assignment (the optimum) vs dpgames' ascending "
        "auction (non-private)"
    )
    for n, k, supply, alpha in ((1_000, 10, 50, 0.01), (4_000, 20, 100, 0.01)):
        market = Market.random(n, k, supply, rng=0)
        auction = AscendingAuction(alpha)
        t = interleaved(
            {
                "ascending auction": lambda: auction.run(market, rng=2),
                "linear_sum_assignment": lambda: assignment_optimum(market),
            },
            repeats,
        )
        out, optimum = t.results["ascending auction"], t.results["linear_sum_assignment"]
        print(
            f"  {n:,} bidders x {k} goods x {supply} copies, alpha {alpha}: welfare "
            f"{out.welfare:,.2f} / "
            f"optimum {optimum:,.2f} = {out.welfare / optimum:.4f}; "
            f"{t.line('ascending auction', 'linear_sum_assignment')}"
        )


# --- routing: a textbook Frank-Wolfe
# -------------------------------------------------------------------------
def textbook_frank_wolfe(model: RoutingGame, iterations: int) -> tuple[np.ndarray, float]:
    """Link-based Frank-Wolfe (LeBlanc, Morlok & Pierskalla 1975; Sheffi 1985, ch. 5),
    ``iterations`` iterations from the free-flow all-or-nothing flow.  Returns the link flows and
    the last relative gap."""
    net = model.network
    tail = np.array([net.node(x) for x in net.tail.tolist()])
    # links into a zone end at its sink copy
    head = np.array([net.sink(x) for x in net.head.tolist()])
    nodes = int(max(tail.max(), head.max())) + 1
    assert np.unique(tail * nodes + head).size == tail.size, (
        "the textbook version assumes no parallel links"
    )
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
            flow += np.bincount(
                edge[before, current[active]], weights=demand[active], minlength=tail.size
            )
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


def bench_frank_wolfe(repeats: int, iterations: int) -> None:
    print(
        f"== Frank-Wolfe, {iterations} iterations: dpgames (path flows kept) vs a "
        "textbook link-based one"
    )
    for name in ("SiouxFalls", "Anaheim"):
        if not (TNTP / name).is_dir():
            print(f"  {name} skipped: no TNTP files in {TNTP} (set DPGAMES_TNTP_DIR)")
            continue
        model = load_tntp(TNTP / name)
        t = interleaved(
            {
                "dpgames": lambda m=model: user_equilibrium(
                    m, method="frank-wolfe", gap=0.0, max_iterations=iterations
                ),
                "textbook": lambda m=model: textbook_frank_wolfe(m, iterations),
            },
            repeats,
        )
        ours, (flows, gap) = t.results["dpgames"], t.results["textbook"]
        print(
            f"  {name}: {t.line('dpgames', 'textbook')}; Beckmann "
            f"{ours.game.potential(ours.flow):.6e} vs "
            f"{float(model.network.costs.integral(flows).sum()):.6e}, gap "
            f"{ours.relative_gap:.1e} vs {gap:.1e}"
        )


# --- no-regret dynamics: one Hedge learner per player
# ---------------------------------------------------------
def per_player_hedge(
    game, players: np.ndarray, rounds: int, sigma: float, rate: float, gen
) -> np.ndarray:
    """The straightforward implementation: every player keeps her own Hedge weights over her class's
    actions and adds her own path's links to the loads, one player at a time (same noise, same
    losses)."""
    owner = np.repeat(np.arange(players.size), players)
    actions = [np.arange(game.class_start[k], game.class_start[k + 1]) for k in range(players.size)]
    rows = [game.incidence[a].toarray() for a in actions]
    weights = [np.ones(a.size) / a.size for a in (actions[k] for k in owner)]
    scale = None
    loads = np.zeros(game.num_resources)
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


def bench_hedge(repeats: int) -> None:
    gen = np.random.default_rng(0)
    small = RoutingGame(
        grid_network(4, 4, gen),
        np.array([0, 3, 12]),
        np.array([15, 12, 3]),
        np.array([300, 300, 300.0]),
    )
    reported = round_players(small.demand)
    rounds = 200
    mediator = PrivateMediator(rounds=rounds, epsilon=1.0, warmup=0, evaluation="nonatomic")
    game = small.public_paths(4).with_demand(reported)
    sigma = mediator.run(game, rng=2).sigma
    rate = float(mediator.learning_rate * np.sqrt(8 * np.log(4) / rounds))
    print(
        f"== no-regret dynamics: the mediator's aggregate Hedge vs one Hedge learner per player "
        f"({int(reported.sum())} players, {rounds} rounds, 4 paths per OD pair)"
    )
    t = interleaved(
        {
            "mediator": lambda: mediator.run(game, rng=2),
            "per-player Hedge": lambda: per_player_hedge(
                game, reported, rounds, sigma, rate, np.random.default_rng(2)
            ),
        },
        repeats,
    )
    report("grid 4 x 4", t, "mediator")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repetitions")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--fw-iterations", type=int, default=200)
    args = parser.parse_args()
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        parser.error(
            f"--only: unknown {sorted(only - set(SECTIONS))}; choose among {', '.join(SECTIONS)}"
        )
    print_machine()
    if only & {"em", "laplace", "gaussian", "discrete"}:
        opendp, diffprivlib = peer("opendp"), peer("diffprivlib")
        if "em" in only:
            bench_em(args.repeats, opendp, diffprivlib)
        if "laplace" in only:
            bench_laplace(args.repeats, opendp, diffprivlib)
        if "gaussian" in only:
            bench_gaussian(args.repeats, opendp, diffprivlib)
        if "discrete" in only:
            bench_discrete(args.repeats, opendp)
    if "allocation" in only:
        bench_allocation(args.repeats)
    if "frank-wolfe" in only:
        bench_frank_wolfe(args.repeats, args.fw_iterations)
    if "hedge" in only:
        bench_hedge(args.repeats)
    svvamp = Path(__file__).with_name("bench_voting_svvamp.py")
    print(
        f"== SVVAMP (voting manipulation): python benchmarks/{svvamp.name}"
        + ("" if svvamp.exists() else " (not in this tree yet)")
    )
    print_machine("end")


if __name__ == "__main__":
    main()
