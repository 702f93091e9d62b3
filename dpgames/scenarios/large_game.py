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
#            else ../shared/data/tntp next to the repository; confined to the scenario's folder, a --data-dir
#            or that default folder), toll_weight, distance_weight, demand_scale
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

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dpgames._files import check_folder, check_regular, confine, resolved
from dpgames.games.assignment import (
    Assignment,
    Method,
    price_of_anarchy,
    system_optimum,
    user_equilibrium,
)
from dpgames.games.atomic import round_players
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.incentives import audit_incentives
from dpgames.games.mediator import (
    MAX_ROUNDS,
    Dynamics,
    Evaluation,
    MediatorOutcome,
    Noise,
    PrivateMediator,
)
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.tntp import TntpFiles, load_tntp
from dpgames.scenarios import budget
from dpgames.scenarios.invariants import (
    Invariants,
    at_least,
    at_most,
    may_be_infinite,
    number_or_nan,
    value_of,
)
from dpgames.scenarios.result import Column, Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams
from dpgames.scenarios.text import plural
from dpgames.validation import ValidationError

DESCRIPTION = "A congestion or routing game (TNTP networks): user equilibrium, system optimum and the jointly private mediator with its incentives"

MAX_TABLE_ROWS = 2000
#: Bytes a run allocates whatever its size (scipy.sparse's and numpy's caches, the result's tables):
#: 1.1 MB measured (tracemalloc) on braess.toml, 6 drivers on 5 links.
RUN_OVERHEAD = 1.5e6
#: Bytes the first Hedge mediator of a process allocates to import numba and load the compiled round
#: (:mod:`dpgames.games._rounds`, from its cache): 29.2 MB measured (tracemalloc, a fresh process,
#: as ``dpgames run``); later runs in the same process (the app, a sweep's worker) do not pay it
#: again. A road network's shortest paths are compiled too (:mod:`dpgames.games._dijkstra`,
#: ``_paths``): its baselines and mediator, under any dynamics, pay it as well (29.4 MB measured on
#: braess.toml).
COMPILED_ROUND_LOAD = 30e6
#: Paths per class the baselines' path sets are budgeted for (they grow without a cap until the gap
#: is reached): 2 to 5 on the shipped networks, 33 on a 20 x 20 grid with 60 pairs whose paths are
#: half as long as rows + cols; 96 bytes per (path, link) measured (the incidence, its copies and
#: the flows).
BASELINE_PATHS = 12


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
PLAYERS = METRICS.add(
    "players", "players: the demand rounded to whole players by largest remainder", "players"
)
CLASSES = METRICS.add("classes", "classes (player types, or OD pairs of a network)", "classes")
RESOURCES = METRICS.add("resources", "resources (links of a network)", "resources")
UE_TOTAL_COST = METRICS.add(
    "ue_total_cost", "total cost at the (non-private) user equilibrium", "cost units"
)
UE_RELATIVE_GAP = METRICS.add("ue_relative_gap", "relative gap the user equilibrium was solved to")
SO_TOTAL_COST = METRICS.add("so_total_cost", "total cost at the system optimum", "cost units")
PRICE_OF_ANARCHY = METRICS.add(
    "price_of_anarchy", "user equilibrium cost / system optimum cost (>= 1)"
)
ROUNDS = METRICS.add("rounds", "rounds of the mediator's no-regret dynamics", "rounds")
ACTIONS = METRICS.add("actions", "the mediator's actions (paths) after its warm-up", "actions")
EPSILON = METRICS.add(
    "epsilon",
    "privacy spent by the mediator: epsilon at the scenario's delta (joint DP)",
    "",
    "Kearns, Pai, Roth & Ullman 2014; zCDP conversion of Bun & Steinke 2016",
)
RHO = METRICS.add("rho", "privacy spent as zCDP rho", "", "Bun & Steinke 2016")
SIGMA = METRICS.add("sigma", "Gaussian noise sd per link and round (0: no noise)", "players")
SENSITIVITY_L2 = METRICS.add(
    "sensitivity_l2", "l2 sensitivity sqrt(2 L) of one round's loads", "players"
)
NEIGHBOURING = METRICS.add("neighbouring", "the neighbouring relation the privacy holds for")
ALPHA = METRICS.add(
    "alpha",
    "largest regret of the suggested distribution (alpha of the approximate equilibrium)",
    "cost units",
    "Kearns, Pai, Roth & Ullman 2014",
)
ALPHA_MEAN = METRICS.add("alpha_mean", "player-average regret", "cost units")
EXPECTED_TOTAL_COST = METRICS.add(
    "expected_total_cost", "expected total cost of the mediator's suggestions", "cost units"
)
COST_OVER_UE = METRICS.add("cost_over_ue", "expected total cost / user equilibrium cost")
COST_OVER_SO = METRICS.add("cost_over_so", "expected total cost / system optimum cost")
REALISED_TOTAL_COST = METRICS.add(
    "realised_total_cost", "total cost of the realised suggestions (exact, atomic)", "cost units"
)
EX_POST_MAX_GAIN = METRICS.add(
    "ex_post_max_gain",
    "largest gain of one player's deviation from her realised suggestion (exact)",
    "cost units",
)
EX_POST_MEAN_GAIN = METRICS.add(
    "ex_post_mean_gain", "player-average best deviation gain", "cost units"
)
MISREPORT_GAIN = METRICS.add(
    "misreport_gain",
    "largest gain from misreporting one's type (Monte Carlo over seeds)",
    "cost units",
)
MISREPORT_CI_HIGH = METRICS.add("misreport_ci_high", "95% CI upper end of that gain", "cost units")
IGNORE_GAIN = METRICS.add(
    "ignore_gain", "largest gain from ignoring the suggestion (= alpha of that class)", "cost units"
)
THEOREM_BOUND = METRICS.add(
    "theorem_bound",
    "alpha + (2 eps + delta) C: the incentive bound of truthful reporting and following",
    "cost units",
    "Kearns, Pai, Roth & Ullman 2014",
)


def _equilibrium_slack(metrics: Mapping[str, Any]) -> float:
    """Both equilibria are computed to a relative gap: allow 1e-3, or 100 times the reported gap."""
    gap = number_or_nan(metrics, UE_RELATIVE_GAP)
    return max(1e-3, 100.0 * gap) if math.isfinite(gap) else 1e-3


INVARIANTS = Invariants(
    rules=[
        *[
            at_least(cost, 0.0, "a cost is >= 0")
            for cost in (UE_TOTAL_COST, SO_TOTAL_COST, EXPECTED_TOTAL_COST, REALISED_TOTAL_COST)
        ],
        *[at_least(ratio, 0.0, "a cost ratio is >= 0") for ratio in (COST_OVER_UE, COST_OVER_SO)],
        at_least(
            PRICE_OF_ANARCHY,
            lambda m: 1.0 - _equilibrium_slack(m),
            "the user equilibrium costs at least the system optimum",
            rel=0.0,
            abs_=0.0,
        ),
        at_most(
            SO_TOTAL_COST,
            lambda m: number_or_nan(m, UE_TOTAL_COST) * (1.0 + _equilibrium_slack(m)),
            "the system optimum costs at most the user equilibrium",
            rel=0.0,
            abs_=1e-9,
        ),
        at_least(UE_RELATIVE_GAP, 0.0, "a relative gap is >= 0"),
        at_least(
            ALPHA, 0.0, "a largest deviation gain over actions (>= the gain of staying) is >= 0"
        ),
        at_most(ALPHA_MEAN, ALPHA, "a mean is at most the maximum"),
        at_most(EX_POST_MEAN_GAIN, EX_POST_MAX_GAIN, "a mean is at most the maximum"),
        at_least(RHO, 0.0, "zCDP rho >= 0"),
        at_least(SIGMA, 0.0, "a noise scale is >= 0"),
        at_most(MISREPORT_GAIN, MISREPORT_CI_HIGH, "an estimate lies inside its interval"),
    ],
    infinite_ok=may_be_infinite(
        EPSILON,
        RHO,
        THEOREM_BOUND,
        when=lambda m: value_of(m, SIGMA) == 0,
        statement="a mediator without noise (sigma = 0) is not private: eps = rho = "
        "inf, and the incentive theorem bounds nothing",
    ),
)


def data_roots() -> tuple[Path, ...]:
    """The folder of TNTP networks a scenario may name without a ``path``: ``$DPGAMES_TNTP_DIR``,
    else ``../shared/data/tntp`` beside the repository (see :mod:`dpgames.scenarios.kind`).

    Returns
    -------
    tuple of Path
        That one folder (which may not exist).
    """
    env = os.environ.get("DPGAMES_TNTP_DIR")
    return (
        Path(env)
        if env
        else Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tntp",
    )


@dataclass(frozen=True)
class LargeGameSpec:
    """A validated ``large_game`` scenario: parsed values only (the game's source, the baselines'
    settings, the mediator and the incentive audit's settings).

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> spec = (
    ...     Scenario.from_dict(
    ...         {
    ...             "kind": "large_game",
    ...             "game": {
    ...                 "source": "resources",
    ...                 "free": [1.0, 0.0],
    ...                 "coef": [0.0, 1.0],
    ...                 "classes": [{"players": 10, "actions": [[0], [1]]}],
    ...             },
    ...         }
    ...     )
    ...     .parse()
    ...     .spec
    ... )
    >>> type(spec.game).__name__, spec.build().num_resources, spec.mediator.rounds
    ('ResourcesGame', 2, 1000)
    """

    game: ResourcesGame | GridGame | TntpGame
    gap: float
    method: Method
    mediator: PrivateMediator
    incentives: bool
    seeds: int
    exhaustive: int
    samples: int
    size: GameSize | None = None  # the game's sizes when known before building it (for the budget)

    def build(self) -> CongestionGame | RoutingGame:
        """The game (a TNTP network is read now).

        Returns
        -------
        CongestionGame or RoutingGame
        """
        return self.game.build()


@dataclass(frozen=True)
class GameSize:
    """Sizes of a game for the budget: graph nodes (0: no graph), resources (links), classes (types
    or OD pairs), resources per action (path length) and actions per class before the mediator adds
    paths."""

    nodes: float
    resources: float
    classes: float
    path_length: float
    actions: float = 1.0
    origins: float = 0.0  # distinct origins: one shortest-path tree each per round


#: Work of a mediator round whatever the game's size (the Python and numpy calls of a round, its
#: noise and regret tracking), CPU time measured on a busy machine (whole runs over their rounds):
#: Hedge 50 to 110 us (Pigou, 2 to 2,000 players), Blum-Mansour's swap-regret dynamics 0.2 to 1 ms
#: (Pigou, Braess).
HEDGE_ROUND_OPS = 1.5e5
SWAP_ROUND_OPS = 8e5
#: Blum-Mansour's work per class and pair of paths in a round (a stochastic matrix per action).
SWAP_OPS = 200.0


def estimate(spec: LargeGameSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the network, and the mediator's
    rounds x (a round's fixed cost, :data:`HEDGE_ROUND_OPS` or :data:`SWAP_ROUND_OPS`, + resources +
    classes x paths x path length, + under Blum-Mansour classes x paths^2), once for the run and
    twice per audited (seed, pair) of the incentive audit.  Memory of the mediator stage: ten float
    arrays of resources + classes x paths x path length (incidence, its transpose, the compiled
    round's lanes, the learner and the regret tracker), the trace, three histories of rounds x
    classes x paths when audited (the truthful run's, the previous and the current misreport's are
    alive together), plus :data:`RUN_OVERHEAD` and, under Hedge or on a road network,
    :data:`COMPILED_ROUND_LOAD` (the baselines' stage too on a road network). A TNTP network's size
    comes from its net file's metadata; without it, the rounds are still counted.

    Parameters
    ----------
    spec : LargeGameSpec

    Returns
    -------
    list of Estimate
    """
    size = spec.size or GameSize(0.0, 0.0, 0.0, 0.0)
    med = spec.mediator
    rounds, paths = budget.size(med.rounds), max(budget.size(med.max_paths), size.actions)
    swap = med.dynamics == "blum-mansour"
    per_round = (
        (SWAP_ROUND_OPS if swap else HEDGE_ROUND_OPS)
        + 20 * (size.resources + size.classes * paths * max(size.path_length, 1.0))
        + size.origins * (size.nodes + size.resources) * budget.log2(size.nodes)
        + (SWAP_OPS * size.classes * paths * paths if swap else 0.0)
    )
    k = size.classes
    pairs = k * (k - 1) if k * (k - 1) <= spec.exhaustive else budget.size(spec.samples)
    runs = 1 + (budget.size(spec.seeds) * (1 + pairs) if spec.incentives else 0)
    history = budget.FLOAT * 3 * rounds * max(k, 1.0) * paths if spec.incentives else 0.0
    arrays = budget.FLOAT * 10 * (size.resources + k * paths * max(size.path_length, 1.0))
    # numba's shortest paths
    compiled_paths = COMPILED_ROUND_LOAD if not isinstance(spec.game, ResourcesGame) else 0.0
    fixed = RUN_OVERHEAD + (COMPILED_ROUND_LOAD if med.dynamics == "hedge" else compiled_paths)
    out = []
    if size.nodes:
        out.append(
            budget.Estimate(
                f"the network ({budget.fmt_count(size.nodes)} nodes, "
                f"{budget.fmt_count(size.resources)} links)",
                2000 * size.nodes + 400 * size.resources + 400 * k,
                200
                * (size.nodes + size.resources)
                * budget.log2(size.nodes)
                * max(size.origins, 1.0),
            )
        )
    solved = size.resources + size.classes * BASELINE_PATHS * max(size.path_length, 1.0)
    # about 1000 passes over the path sets (gap 1e-4)
    out.append(
        budget.Estimate(
            f"the user equilibrium and the system optimum ({spec.method})",
            budget.FLOAT * 12 * solved + RUN_OVERHEAD + compiled_paths,
            1000 * solved,
        )
    )
    out.append(
        budget.Estimate(
            f"the mediator ({budget.fmt_count(rounds)} rounds x {budget.fmt_count(runs)} "
            f"run{'s' if runs != 1 else ''}, "
            f"{budget.fmt_count(k)} class{'es' if k != 1 else ''})",
            budget.FLOAT * 16 * rounds + history + arrays + fixed,
            runs * rounds * per_round,
        )
    )
    return out


def _resources_game(game: Table) -> CongestionGame:
    free = game.numbers("free", low=0)
    coef = game.numbers("coef", low=0)
    power = game.numbers("power", [1.0] * len(free), low=0)
    if not len(free) == len(coef) == len(power):
        raise game.error("coef", f"free, coef and power need one entry per resource ({len(free)})")
    raw = game.value(
        "classes",
        lambda x: isinstance(x, list) and len(x) > 0 and all(isinstance(c, dict) for c in x),
        "a non-empty list of tables [[game.classes]]",
    )
    players, actions = [], []
    for i, entry in enumerate(raw):
        cls = Table(entry, game.source, f"{game.prefix}classes[{i}].")
        players.append(cls.integer("players", low=0))
        actions.append(
            cls.value(
                "actions",
                lambda x: (
                    isinstance(x, list)
                    and len(x) > 0
                    and all(
                        isinstance(a, list)
                        and a
                        and all(
                            isinstance(r, int) and not isinstance(r, bool) and 0 <= r < len(free)
                            for r in a
                        )
                        for a in x
                    )
                ),
                "a non-empty list of actions, each a non-empty list of resource indices "
                f"in 0..{len(free) - 1}",
            )
        )
        cls.done()
    costs = PolynomialCosts(free, coef, power)
    return CongestionGame.from_action_lists(
        costs, actions, players, [f"class {i}" for i in range(len(raw))]
    )


@dataclass(frozen=True)
class ResourcesGame:
    """An explicit congestion game, built when parsed (it is small)."""

    game: CongestionGame

    def build(self) -> CongestionGame:
        """The game."""
        return self.game


@dataclass(frozen=True)
class GridGame:
    """A synthetic ``rows x cols`` road grid with ``players`` drivers on ``pairs`` random OD pairs,
    all drawn from ``grid_seed``."""

    rows: int
    cols: int
    pairs: int
    players: int
    grid_seed: int

    def build(self) -> RoutingGame:
        """The routing game (the same for the same fields)."""
        gen = np.random.default_rng(self.grid_seed)
        network = grid_network(self.rows, self.cols, gen)
        ends = np.array(
            [gen.choice(self.rows * self.cols, size=2, replace=False) for _ in range(self.pairs)]
        )
        return RoutingGame(
            network,
            ends[:, 0],
            ends[:, 1],
            round_players(np.full(self.pairs, self.players / self.pairs)),
        )


@dataclass(frozen=True)
class TntpGame:
    """A TNTP network in a validated folder, with the weights of its generalised cost."""

    folder: Path
    toll_weight: float
    distance_weight: float
    demand_scale: float

    def build(self) -> RoutingGame:
        """The routing game read from the TNTP files."""
        return load_tntp(
            self.folder,
            toll_weight=self.toll_weight,
            distance_weight=self.distance_weight,
            demand_scale=self.demand_scale,
        )


def _grid_game(game: Table) -> GridGame:
    return GridGame(
        game.integer("rows", low=2),
        game.integer("cols", low=2),
        game.integer("pairs", low=1),
        game.integer("players", low=1),
        game.integer("grid_seed", 0, low=0),
    )


def _tntp_game(game: Table) -> tuple[TntpGame, GameSize | None]:
    name = game.string("network")
    if name in (".", "..") or any(c in name for c in "/\\:\0"):
        raise game.error(
            "network",
            f"must be the name of a folder of TNTP networks (no '/', '\\\\', ':' "
            f"or '..'), got {name!r}",
        )
    (default,) = data_roots()
    # $DPGAMES_TNTP_DIR or the default
    folder = game.path("path", None, folder=True, roots=(default,))
    toll = game.number("toll_weight", 0.0, low=0)
    distance = game.number("distance_weight", 0.0, low=0)
    scale = game.number("demand_scale", 1.0, low=0, low_open=True)
    where = tntp_folder(
        folder if folder is not None else default,
        name,
        lambda message: game.error("path" if folder is not None else "network", message),
    )
    return TntpGame(where, toll, distance, scale), _tntp_size(where, name)


def _tntp_size(folder: Path, name: str) -> GameSize | None:
    """A TNTP network's size from the metadata at the head of its net file (``<NUMBER OF ZONES>``,
    ``<NUMBER OF NODES>``, ``<NUMBER OF LINKS>``; classes at most zones x (zones - 1) OD pairs,
    paths about sqrt(nodes) links long); None when the head does not say."""
    try:
        with open(TntpFiles(folder, name).net, "rb") as net:
            head = net.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    meta = {}
    for key in ("ZONES", "NODES", "LINKS"):
        found = re.search(rf"<NUMBER OF {key}>\s*(\d{{1,15}})\s", head)
        if found is None:
            return None
        meta[key] = float(found.group(1))
    zones = meta["ZONES"]
    return GameSize(
        meta["NODES"],
        meta["LINKS"],
        zones * max(zones - 1, 1),
        math.sqrt(meta["NODES"]),
        1.0,
        zones,
    )


def tntp_folder(root: Path, name: str, error: Callable[[str], Exception]) -> Path:
    """``root/name``, a folder whose ``<name>_net.tntp`` and ``<name>_trips.tntp`` are regular files
    that, after resolving symbolic links, lie inside ``root``.  Nothing is opened.

    Parameters
    ----------
    root : Path
    name : str
    error : callable
        ``error(message)`` returns the exception to raise.

    Returns
    -------
    Path
        The resolved folder.

    Raises
    ------
    Exception
        ``error(message)`` when the folder or a file is missing or escapes ``root``.
    """
    where = root / name
    try:
        check_folder(where)
    except ValidationError:
        raise error(
            f"TNTP folder {str(where)!r} not found (set DPGAMES_TNTP_DIR or the 'path' field)"
        ) from None
    files = TntpFiles(where, name)
    try:
        for path in (files.net, files.trips):
            check_regular(confine(path, [root], str(path), str(root)))
    except ValidationError as exc:
        raise error(str(exc)) from None
    return resolved(where)


def parse(top: Table) -> LargeGameSpec:
    """Read and validate a ``large_game`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    LargeGameSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid, or a TNTP folder is missing or outside the allowed
        folders.
    """
    game = top.table("game", required=True)
    source = game.choice("source", ("resources", "grid", "tntp"))
    source_game: ResourcesGame | GridGame | TntpGame
    size: GameSize | None
    if source == "resources":
        built = _resources_game(game)
        source_game = ResourcesGame(built)
        size = GameSize(
            0.0, float(built.num_resources), float(built.num_classes), 1.0, float(built.num_actions)
        )
    elif source == "tntp":
        source_game, size = _tntp_game(game)
    else:
        grid = source_game = _grid_game(game)
        rows, cols = budget.size(grid.rows), budget.size(grid.cols)
        pairs = budget.size(grid.pairs)
        size = GameSize(rows * cols, 4 * rows * cols, pairs, rows + cols, 1.0, pairs)
    game.done()
    base = top.table("baselines")
    gap = base.number("gap", 1e-4, low=0, high=1, low_open=True, high_open=True)
    method: Method = base.choice("method", ("path-based", "frank-wolfe"), "path-based")
    base.done()
    med = top.table("mediator")
    noise: Noise = med.choice("noise", ("gaussian", "tree", "none"), "gaussian")
    # read in this order (the first bad field is the one reported), then built: the mediator's own
    # refusals (a warm-up too long for the rounds) name their field
    rounds, epsilon = (
        med.integer("rounds", 1000, low=1, high=MAX_ROUNDS),
        med.number("epsilon", 1.0, low=0, low_open=True),
    )
    delta = med.number("delta", 1e-6, low=0, high=1, low_open=True, high_open=True)
    dynamics: Dynamics = med.choice("dynamics", ("hedge", "blum-mansour"), "hedge")
    learning_rate = med.number("learning_rate", 3.0, low=0, low_open=True)
    evaluation: Evaluation = med.choice(
        "evaluation", ("auto", "exact", "mean-field", "nonatomic"), "auto"
    )
    warmup, max_paths = med.integer("warmup", None, low=0), med.integer("max_paths", 8, low=1)
    with med.field_path.fields():
        mediator = PrivateMediator(
            rounds=rounds,
            noise=noise,
            epsilon=epsilon,
            delta=delta,
            dynamics=dynamics,
            learning_rate=learning_rate,
            evaluation=evaluation,
            warmup=warmup,
            max_paths=max_paths,
        )
    med.done()
    inc = top.table("incentives")
    spec = LargeGameSpec(
        source_game,
        gap,
        method,
        mediator,
        inc.boolean("enabled", True),
        inc.integer("seeds", 2, low=1),
        inc.integer("exhaustive", 12, low=0),
        inc.integer("samples", 4, low=1),
        size,
    )
    inc.done()
    return spec


@dataclass(frozen=True)
class PlayedGame:
    """The game, its non-private baselines and the mediator's outcome, as one run computes them."""

    model: CongestionGame | RoutingGame
    players: np.ndarray
    equilibrium: Assignment
    optimum: Assignment
    outcome: MediatorOutcome


@dataclass(frozen=True)
class LargeGameRun:
    """A ``large_game`` run: the game, built (a TNTP network read), and, on first use of
    :attr:`played`, its baselines and the mediator's outcome.  The app reads the game's size before
    it solves.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> built = (
    ...     Scenario.from_dict(
    ...         {
    ...             "kind": "large_game",
    ...             "seed": 1,
    ...             "game": {
    ...                 "source": "resources",
    ...                 "free": [1.0, 0.0],
    ...                 "coef": [0.0, 0.1],
    ...                 "classes": [{"players": 10, "actions": [[0], [1]]}],
    ...             },
    ...             "mediator": {"rounds": 50},
    ...             "incentives": {"enabled": False},
    ...         }
    ...     )
    ...     .parse()
    ...     .build()
    ... )
    >>> built.model.num_classes, int(built.played.players.sum())
    (1, 10)
    """

    spec: LargeGameSpec
    seed: np.random.SeedSequence
    model: CongestionGame | RoutingGame

    @cached_property
    def played(self) -> PlayedGame:
        """The demand rounded to players, the user equilibrium, the system optimum and the private
        mediator's outcome (its noise from the seed's first child stream)."""
        spec, model = self.spec, self.model
        players = round_players(model.demand)
        if not players.any():  # e.g. a demand of 1e-300, or demand_scale = 5e-324: no one to route
            raise ValidationError(
                "demand",
                f"(the game's, {float(np.sum(model.demand)):.3g} in all) rounds to 0 "
                "whole players: nothing to play; raise the trips, the players or game.demand_scale",
            )
        baseline_model = model.with_demand(players.astype(float))
        ue = user_equilibrium(baseline_model, method=spec.method, gap=spec.gap)
        so = system_optimum(baseline_model, method=spec.method, gap=spec.gap)
        out = spec.mediator.run(
            model, players, np.random.default_rng(child_streams(self.seed, 2)[0])
        )
        return PlayedGame(model, players, ue, so, out)


def build(spec: LargeGameSpec, seed: np.random.SeedSequence) -> LargeGameRun:
    """The game of a run with root ``seed`` (see :mod:`dpgames.scenarios.kind`); it is solved on
    first use of :attr:`LargeGameRun.played`.

    Parameters
    ----------
    spec : LargeGameSpec
    seed : numpy.random.SeedSequence
        The run's root seed (its first child stream drives the mediator, its second the incentive
        audit).

    Returns
    -------
    LargeGameRun
    """
    return LargeGameRun(spec, seed, spec.build())


def run(built: LargeGameRun) -> Result:
    """The metrics of a built run (see :mod:`dpgames.scenarios.kind`): its
    :attr:`~LargeGameRun.played` game, then the incentive audit.

    Parameters
    ----------
    built : LargeGameRun

    Returns
    -------
    Result
        Metrics, and the ``trace``, ``classes`` and (audited) ``incentives`` tables.
    """
    spec, seed, played = built.spec, built.seed, built.played
    model, players, ue, so, out = (
        played.model,
        played.players,
        played.equilibrium,
        played.optimum,
        played.outcome,
    )
    m = Metrics()
    m.put(PLAYERS, int(players.sum()), "players (demand rounded by largest remainder)")
    m.put(CLASSES, int(players.size), "classes (types / OD pairs)")
    m.put(RESOURCES, out.game.num_resources, "resources (links)")
    m.put(UE_TOTAL_COST, ue.total_cost, f"user equilibrium total cost ({ue.method})")
    m.put(
        UE_RELATIVE_GAP,
        ue.relative_gap,
        f"  relative gap after {plural(ue.iterations, 'iteration')}",
    )
    m.put(SO_TOTAL_COST, so.total_cost, "system optimum total cost")
    m.put(PRICE_OF_ANARCHY, price_of_anarchy(ue, so), "price of anarchy (UE / SO)")
    m.put(
        ROUNDS,
        spec.mediator.rounds,
        f"mediator rounds ({spec.mediator.dynamics}, noise {spec.mediator.noise})",
    )
    m.put(ACTIONS, out.game.num_actions, "mediator's actions (paths) after the warm-up")
    m.put(
        EPSILON, out.privacy.epsilon, f"privacy spent: epsilon at delta = {spec.mediator.delta:g}"
    )
    m.put(RHO, out.rho, "  zCDP rho")
    m.put(SIGMA, out.sigma, "  noise sd per link and round")
    m.put(SENSITIVITY_L2, out.sensitivity_l2, "  l2 sensitivity sqrt(2L) of a round's loads")
    m.put(NEIGHBOURING, str(out.privacy.neighbouring), "  neighbouring relation")
    m.put(
        ALPHA,
        out.max_alpha,
        f"alpha: largest regret of the suggested distribution ({out.evaluation})",
    )
    m.put(ALPHA_MEAN, float(players @ out.alpha / players.sum()), "  player-average regret")
    m.put(EXPECTED_TOTAL_COST, out.total_expected_cost, "mediator's expected total cost")
    for metric, baseline, label in (
        (COST_OVER_UE, ue.total_cost, "  over the user equilibrium"),
        (COST_OVER_SO, so.total_cost, "  over the system optimum"),
    ):
        ratio = _cost_ratio(out.total_expected_cost, baseline)
        if ratio is not None:
            # left out when only the baseline costs nothing (the ratio is infinite)
            m.put(metric, ratio, label)
    m.put(
        REALISED_TOTAL_COST,
        out.realised_total_cost,
        "realised suggestions: total cost (exact, atomic)",
    )
    m.put(
        EX_POST_MAX_GAIN, out.ex_post.max_gain, "  largest gain of one player's deviation (exact)"
    )
    m.put(
        EX_POST_MEAN_GAIN,
        float(out.suggestions @ out.ex_post.gain / out.suggestions.sum()),
        "  player-average best deviation gain",
    )
    tables: dict[str, dict[str, Column]] = {"trace": {k: v for k, v in out.trace.items()}}
    keep = np.argsort(-players)[:MAX_TABLE_ROWS]
    tables["classes"] = {
        "class": [out.game.class_names[k] if out.game.class_names else str(k) for k in keep],
        "players": players[keep],
        "alpha": out.alpha[keep],
        "expected_cost": out.expected_cost[keep],
    }
    if spec.incentives:
        audit = audit_incentives(
            spec.mediator,
            model,
            players,
            seeds=spec.seeds,
            exhaustive=spec.exhaustive,
            samples=spec.samples,
            rng=np.random.default_rng(child_streams(seed, 2)[1]),
        )
        kind = (
            "all pairs"
            if audit.exhaustive
            else f"{plural(audit.true_class.size, 'sampled player')}"
        )
        if audit.misreport_gain.size:
            worst = int(np.argmax(audit.misreport_gain))
            m.put(
                MISREPORT_GAIN,
                audit.max_misreport_gain,
                f"largest gain from misreporting ({kind}, {plural(audit.seeds, 'seed')})",
            )
            if audit.has_intervals:  # one seed: no interval (dpgames.estimates), none shown
                m.put(MISREPORT_CI_HIGH, float(audit.misreport_ci[worst, 1]), "  95% CI upper end")
        m.put(
            IGNORE_GAIN,
            audit.max_ignore_gain,
            "largest gain from ignoring the suggestion (= alpha_k)",
        )
        m.put(
            THEOREM_BOUND, audit.theorem_bound, "KPRU bound alpha + (2 eps + delta) C, cost units"
        )
        columns: dict[str, Column] = {
            "true_class": audit.true_class,
            "ignore_gain": audit.ignore_gain,
        }
        if audit.misreport_gain.size:
            columns.update(lie_class=audit.lie_class, misreport_gain=audit.misreport_gain)
        tables["incentives"] = columns
    return m.result("large_game", tables, {"guarantee": str(out.privacy)})


def _cost_ratio(cost: float, baseline: float) -> float | None:
    """``cost / baseline``; 1 when both are 0; None when only the baseline is 0 (an infinite
    ratio)."""
    if baseline > 0:
        return cost / baseline
    return 1.0 if cost <= 0 else None
