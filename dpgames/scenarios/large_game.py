"""Scenario kind ``large_game``: a congestion or routing game, its non-private baselines (user
equilibrium, system optimum, price of anarchy) and the jointly private mediator with its incentives.

```toml
kind = "large_game"
[game]
source = "resources"        # "resources" (explicit congestion game) | "grid" (synthetic) | "tntp"
# resources: free = [...], coef = [...], power = [...] (c_r(x) = free + coef x^power; x in players)
#            [[game.classes]] players = 1000, actions = [[0], [1]]   (resource indices)
# grid:      rows, cols, pairs (random OD pairs), players (total, split evenly), grid_seed
# tntp:      network = "SiouxFalls" (a folder name), path = "dir" (optional; default $DPGAMES_TNTP_DIR,
#            else ../shared/data/tntp next to the repository), toll_weight, distance_weight, demand_scale
[baselines]
gap = 1e-4                  # relative gap of the user equilibrium and system optimum
method = "path-based"       # or "frank-wolfe"
[mediator]
rounds = 1000, epsilon = 1.0, delta = 1e-6, noise = "gaussian" | "tree" | "none",
dynamics = "hedge" | "blum-mansour", learning_rate = 3.0, evaluation = "auto", warmup, max_paths = 8
[incentives]
enabled = true, seeds = 2, exhaustive = 12, samples = 4
```
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgames.games.assignment import price_of_anarchy, system_optimum, user_equilibrium
from dpgames.games.atomic import round_players
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.incentives import audit_incentives
from dpgames.games.mediator import PrivateMediator
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.tntp import load_tntp
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

MAX_TABLE_ROWS = 2000


def default_tntp_dir() -> Path:
    """``$DPGAMES_TNTP_DIR``, else ``../shared/data/tntp`` beside the repository."""
    env = os.environ.get("DPGAMES_TNTP_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tntp"


@dataclass(frozen=True)
class LargeGameSpec:
    build: object  # () -> CongestionGame | RoutingGame
    gap: float
    method: str
    mediator: PrivateMediator
    incentives: bool
    seeds: int
    exhaustive: int
    samples: int


def _resources_game(game: Table) -> CongestionGame:
    free = game.numbers("free", low=0)
    coef = game.numbers("coef", low=0)
    power = game.numbers("power", [1.0] * len(free), low=0)
    if not len(free) == len(coef) == len(power):
        raise game.error("coef", f"free, coef and power need one entry per resource ({len(free)})")
    raw = game.value("classes", lambda x: isinstance(x, list) and len(x) > 0 and all(isinstance(c, dict) for c in x),
                     "a non-empty list of tables [[game.classes]]")
    players, actions = [], []
    for i, entry in enumerate(raw):
        cls = Table(entry, game.source, f"{game.prefix}classes[{i}].")
        players.append(cls.integer("players", low=0))
        actions.append(cls.value("actions", lambda x: isinstance(x, list) and len(x) > 0 and all(
            isinstance(a, list) and a and all(isinstance(r, int) and not isinstance(r, bool)
                                              and 0 <= r < len(free) for r in a) for a in x),
            f"a non-empty list of actions, each a non-empty list of resource indices in 0..{len(free) - 1}"))
        cls.done()
    costs = PolynomialCosts(free, coef, power)
    return CongestionGame.from_action_lists(costs, actions, players, [f"class {i}" for i in range(len(raw))])


def _grid_game(game: Table):
    rows = game.integer("rows", low=2)
    cols = game.integer("cols", low=2)
    pairs = game.integer("pairs", low=1)
    total = game.integer("players", low=1)
    grid_seed = game.integer("grid_seed", 0, low=0)

    def build() -> RoutingGame:
        gen = np.random.default_rng(grid_seed)
        network = grid_network(rows, cols, gen)
        ends = np.array([gen.choice(rows * cols, size=2, replace=False) for _ in range(pairs)])
        return RoutingGame(network, ends[:, 0], ends[:, 1], round_players(np.full(pairs, total / pairs)))
    return build


def _tntp_game(game: Table):
    name = game.string("network")
    folder = game.path("path", None)
    toll = game.number("toll_weight", 0.0, low=0)
    distance = game.number("distance_weight", 0.0, low=0)
    scale = game.number("demand_scale", 1.0, low=0, low_open=True)
    where = (folder if folder is not None else default_tntp_dir()) / name
    if not where.is_dir():
        raise game.error("path" if folder is not None else "network",
                         f"TNTP folder {str(where)!r} not found (set DPGAMES_TNTP_DIR or the 'path' field)")
    return lambda: load_tntp(where, toll_weight=toll, distance_weight=distance, demand_scale=scale)


def parse(top: Table) -> LargeGameSpec:
    game = top.table("game", required=True)
    source = game.choice("source", ("resources", "grid", "tntp"))
    if source == "resources":
        built = _resources_game(game)
        build = lambda: built  # noqa: E731 - already validated and small
    else:
        build = _grid_game(game) if source == "grid" else _tntp_game(game)
    game.done()
    base = top.table("baselines")
    gap = base.number("gap", 1e-4, low=0, high=1, low_open=True, high_open=True)
    method = base.choice("method", ("path-based", "frank-wolfe"), "path-based")
    base.done()
    med = top.table("mediator")
    noise = med.choice("noise", ("gaussian", "tree", "none"), "gaussian")
    fields = dict(
        rounds=med.integer("rounds", 1000, low=1), noise=noise,
        epsilon=med.number("epsilon", 1.0, low=0, low_open=True), delta=med.number("delta", 1e-6, low=0, high=1,
                                                                                  low_open=True, high_open=True),
        dynamics=med.choice("dynamics", ("hedge", "blum-mansour"), "hedge"),
        learning_rate=med.number("learning_rate", 3.0, low=0, low_open=True),
        evaluation=med.choice("evaluation", ("auto", "exact", "mean-field", "nonatomic"), "auto"),
        warmup=med.integer("warmup", None, low=0), max_paths=med.integer("max_paths", 8, low=1))
    try:
        mediator = PrivateMediator(**fields)
    except ValueError as exc:
        raise med.error("warmup", str(exc)) from None
    med.done()
    inc = top.table("incentives")
    spec = LargeGameSpec(build, gap, method, mediator, inc.boolean("enabled", True), inc.integer("seeds", 2, low=1),
                         inc.integer("exhaustive", 12, low=0), inc.integer("samples", 4, low=1))
    inc.done()
    return spec


@dataclass(frozen=True)
class PlayedGame:
    """The game, its non-private baselines and the mediator's outcome, as one run computes them."""

    model: CongestionGame | RoutingGame
    players: np.ndarray
    equilibrium: object
    optimum: object
    outcome: object


def play(spec: LargeGameSpec, seed: np.random.SeedSequence,
         model: CongestionGame | RoutingGame | None = None) -> PlayedGame:
    """Build the game (unless ``model``, built by ``spec.build()``, is given), round the demand to
    players, solve the user equilibrium and the system optimum and run the private mediator: what
    ``dpgames run`` computes before its incentive audit."""
    model = spec.build() if model is None else model
    players = round_players(model.demand)
    baseline_model = model.with_demand(players.astype(float))
    ue = user_equilibrium(baseline_model, method=spec.method, gap=spec.gap)
    so = system_optimum(baseline_model, method=spec.method, gap=spec.gap)
    out = spec.mediator.run(model, players, np.random.default_rng(child_streams(seed, 2)[0]))
    return PlayedGame(model, players, ue, so, out)


def run(spec: LargeGameSpec, seed: np.random.SeedSequence) -> Result:
    played = play(spec, seed)
    model, players, ue, so, out = played.model, played.players, played.equilibrium, played.optimum, played.outcome
    m, labels = {}, {}

    def put(key: str, value, label: str) -> None:
        m[key], labels[key] = value, label

    put("players", int(players.sum()), "players (demand rounded by largest remainder)")
    put("classes", int(players.size), "classes (types / OD pairs)")
    put("resources", out.game.num_resources, "resources (links)")
    put("ue_total_cost", ue.total_cost, f"user equilibrium total cost ({ue.method})")
    put("ue_relative_gap", ue.relative_gap, f"  relative gap after {ue.iterations} iterations")
    put("so_total_cost", so.total_cost, "system optimum total cost")
    put("price_of_anarchy", price_of_anarchy(ue, so), "price of anarchy (UE / SO)")
    put("rounds", spec.mediator.rounds, f"mediator rounds ({spec.mediator.dynamics}, noise {spec.mediator.noise})")
    put("actions", out.game.num_actions, "mediator's actions (paths) after the warm-up")
    put("epsilon", out.privacy.epsilon, f"privacy spent: epsilon at delta = {spec.mediator.delta:g}")
    put("rho", out.rho, "  zCDP rho")
    put("sigma", out.sigma, "  noise sd per link and round")
    put("sensitivity_l2", out.sensitivity_l2, "  l2 sensitivity sqrt(2L) of a round's loads")
    put("neighbouring", out.privacy.neighbouring, "  neighbouring relation")
    put("alpha", out.max_alpha, f"alpha: largest regret of the suggested distribution ({out.evaluation})")
    put("alpha_mean", float(players @ out.alpha / players.sum()), "  player-average regret")
    put("expected_total_cost", out.total_expected_cost, "mediator's expected total cost")
    put("cost_over_ue", out.total_expected_cost / ue.total_cost, "  over the user equilibrium")
    put("cost_over_so", out.total_expected_cost / so.total_cost, "  over the system optimum")
    put("realised_total_cost", out.realised_total_cost, "realised suggestions: total cost (exact, atomic)")
    put("ex_post_max_gain", out.ex_post.max_gain, "  largest gain of one player's deviation (exact)")
    put("ex_post_mean_gain", float(out.suggestions @ out.ex_post.gain / out.suggestions.sum()),
        "  player-average best deviation gain")
    tables = {"trace": {k: v for k, v in out.trace.items()}}
    keep = np.argsort(-players)[:MAX_TABLE_ROWS]
    tables["classes"] = {"class": [out.game.class_names[k] if out.game.class_names else str(k) for k in keep],
                         "players": players[keep], "alpha": out.alpha[keep], "expected_cost": out.expected_cost[keep]}
    if spec.incentives:
        audit = audit_incentives(spec.mediator, model, players, seeds=spec.seeds, exhaustive=spec.exhaustive,
                                 samples=spec.samples, rng=np.random.default_rng(child_streams(seed, 2)[1]))
        kind = "all pairs" if audit.exhaustive else f"{audit.true_class.size} sampled players"
        if audit.misreport_gain.size:
            worst = int(np.argmax(audit.misreport_gain))
            put("misreport_gain", audit.max_misreport_gain, f"largest gain from misreporting ({kind}, {audit.seeds} seeds)")
            put("misreport_ci_high", float(audit.misreport_ci[worst, 1]), "  95% CI upper end")
        put("ignore_gain", audit.max_ignore_gain, "largest gain from ignoring the suggestion (= alpha_k)")
        put("theorem_bound", audit.theorem_bound, "KPRU bound alpha + (2 eps + delta) C, cost units")
        columns = {"true_class": audit.true_class, "ignore_gain": audit.ignore_gain}
        if audit.misreport_gain.size:
            columns.update(lie_class=audit.lie_class, misreport_gain=audit.misreport_gain)
        tables["incentives"] = columns
    return Result("large_game", "", m, labels, tables, {"guarantee": str(out.privacy)})
