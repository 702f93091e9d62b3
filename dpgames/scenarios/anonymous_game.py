"""Scenario kind ``anonymous_game``: a general large (anonymous) game and its jointly private
mediator (Kearns, Pai, Roth & Ullman 2014; see :mod:`dpgames.games.anonymous` and
:mod:`dpgames.games.anonymous_mediator`).

```toml
kind = "anonymous_game"
[game]
type = "crowding"           # crowding | market_entry | el_farol | minority | public_goods
players = [4000, 6000]      # players of each type
values = [[0.9, 0.6, 0.3], [0.3, 0.6, 0.9]]   # crowding: type x restaurant values in [0, 1]
# capacity = 40             # market_entry: entrants the market holds; outside = 0.5 (or one per type)
# capacity_fraction = 0.6   # el_farol
# threshold = 20            # public_goods: the ramp b(m) = clip((m - threshold) / width, 0, 1) ...
# width = 10                # ... and each type's cost of contributing: cost = 0.1 (or one per type)
[mechanism]
rounds = 500
epsilon = 1.0               # or rho = ... (zCDP); with noise = "none": no privacy
delta = 1e-6
noise = "gaussian"          # gaussian | tree | none
dynamics = "hedge"          # hedge (coarse correlated eq.) | blum-mansour (correlated eq.)
evaluation = "auto"         # auto | exact | mean-field
[audit]
misreport = false           # eta: rerun the mediator for every (true type, lie): small games only
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dpgames.games.anonymous import STEP_BLOCK, AnonymousGame
from dpgames.games.anonymous_generators import (
    crowding_game,
    el_farol,
    market_entry,
    minority_game,
    threshold_public_goods,
)
from dpgames.games.anonymous_mediator import (
    AnonymousMediator,
    AnonymousOutcome,
    Noise,
    misreport_gains,
)
from dpgames.scenarios import budget as budget_estimates
from dpgames.scenarios.invariants import Invariants, at_least, at_most
from dpgames.scenarios.result import Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams

DESCRIPTION = (
    "General large games (market entry, El Farol, minority, crowding, threshold public goods) "
    "and the jointly private mediator: alpha, eta, privacy"
)


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
GAME = METRICS.add(
    "game", "the game's type (crowding, market entry, El Farol, minority, public goods)"
)
N = METRICS.add("n", "players", "players")
TYPES = METRICS.add("types", "player types", "types")
ACTIONS = METRICS.add("actions", "actions", "actions")
LARGENESS = METRICS.add(
    "largeness",
    "Delta: the most one player's switch moves another's payoff",
    "payoff (in [0, 1])",
    "Kearns, Pai, Roth & Ullman 2014 (Delta-large games)",
)
DYNAMICS = METRICS.add(
    "dynamics", "the no-regret dynamics (Hedge, or Blum-Mansour's swap-regret reduction)"
)
EVALUATION = METRICS.add("evaluation", "how expected payoffs on the true game are computed")
ALPHA = METRICS.add(
    "alpha",
    "largest regret of the suggested distribution (swap regret under Blum-Mansour)",
    "payoff",
    "Kearns, Pai, Roth & Ullman 2014",
)
EXTERNAL_REGRET = METRICS.add("external_regret", "largest external regret", "payoff")
SWAP_REGRET = METRICS.add("swap_regret", "largest swap regret", "payoff")
CROSS_REGRET = METRICS.add(
    "cross_regret", "largest gain from acting on another type's suggestion", "payoff"
)
OBSERVED_REGRET = METRICS.add(
    "observed_regret", "the learners' regret on the payoffs they were fed", "payoff"
)
REGRET_BOUND = METRICS.add(
    "regret_bound",
    "Hedge's regret bound per round (x A under Blum-Mansour)",
    "payoff",
    "Freund & Schapire 1997; Blum & Mansour 2007",
)
FEED_ERROR = METRICS.add("feed_error", "mean gap between the fed and the true payoffs", "payoff")
ALPHA_DECOMPOSITION_BOUND = METRICS.add(
    "alpha_decomposition_bound", "regret bound + 2 feed error (>= alpha)", "payoff"
)
NOISE_INF = METRICS.add("noise_inf", "mean sup norm of the published histogram's noise", "players")
WELFARE_PER_PLAYER = METRICS.add(
    "welfare_per_player", "expected payoff per player following the suggestions", "payoff"
)
PRIVACY = METRICS.add("privacy", "why no privacy is reported (no noise)")
EPSILON = METRICS.add(
    "epsilon",
    "epsilon of the billboard: the suggestions are jointly eps-DP",
    "",
    "Kearns, Pai, Roth & Ullman 2014 (billboard lemma)",
)
EPSILON_TARGET = METRICS.add("epsilon_target", "the epsilon asked for")
DELTA = METRICS.add("delta", "delta of the billboard")
SIGMA = METRICS.add("sigma", "noise scale of the published histogram", "players")
ETA = METRICS.add(
    "eta", "largest gain from misreporting then best-responding (exact, realised noise)", "payoff"
)
ETA_MINUS_CROSS_REGRET = METRICS.add(
    "eta_minus_cross_regret", "largest eta - cross regret of the same pair", "payoff"
)
ETA_POST_PROCESSING_BOUND = METRICS.add(
    "eta_post_processing_bound",
    "min(1, (e^eps - 1) + delta): bound on E[eta - cross regret]",
    "payoff",
    "post-processing of (eps, delta)-DP",
)

INVARIANTS = Invariants(
    rules=[
        at_least(ALPHA, 0.0, "a regret is >= 0"),
        at_most(
            OBSERVED_REGRET, REGRET_BOUND, "Hedge / Blum-Mansour regret bound on the fed payoffs"
        ),
        at_most(ALPHA, ALPHA_DECOMPOSITION_BOUND, "alpha <= learners' bound + 2 feed error"),
        at_most(EPSILON, EPSILON_TARGET, "the billboard spends at most the budget", rel=1e-9),
    ]
)


def data_roots() -> tuple[Path, ...]:
    """No data of its own: the game is given in the file."""
    return ()


GAME_TYPES = ("crowding", "market_entry", "el_farol", "minority", "public_goods")
MAX_PLAYERS = 10**9
AUDIT_PLAYERS = 200  # the eta audit reruns the mediator per pair with exact evaluation
#: Bytes a run allocates whatever its size (the result's tables, scipy.stats' and numpy's caches):
#: 0.33 MB measured (tracemalloc, a fresh process) on 200 market-entry firms with the eta audit.
RUN_OVERHEAD = 0.5e6


CONSTRUCTORS: dict[str, Callable[..., AnonymousGame]] = {
    "crowding": crowding_game,
    "market_entry": market_entry,
    "el_farol": el_farol,
    "minority": minority_game,
    "public_goods": threshold_public_goods,
}


@dataclass(frozen=True)
class GameSettings:
    """A game as data: its type and the validated arguments of its constructor (the built game holds
    a payoff function, so a spec keeps these and builds the game when it runs)."""

    game_type: str
    arguments: dict[str, Any]

    @cached_property
    def game(self) -> AnonymousGame:
        """The game, ``CONSTRUCTORS[game_type](**arguments)``, built once (not pickled: rebuilt on
        use)."""
        return CONSTRUCTORS[self.game_type](**self.arguments)

    def __getstate__(self) -> dict[str, Any]:
        return {"game_type": self.game_type, "arguments": self.arguments}


@dataclass(frozen=True)
class AnonymousGameSpec:
    """A validated ``anonymous_game`` scenario: the game's settings, the mediator and whether to
    audit eta."""

    game: GameSettings
    mediator: AnonymousMediator
    misreport: bool

    @property
    def game_type(self) -> str:
        return self.game.game_type


def _per_type(game: Table, key: str, default: float, types: int) -> float | list[float]:
    def number(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    raw = game.value(
        key,
        lambda x: number(x) or (isinstance(x, list) and all(number(e) for e in x)),
        "a number in [0, 1] or a list of numbers, one per type",
        default=default,
    )
    return raw if not isinstance(raw, list) else [float(x) for x in raw]


def _arguments(table: Table, kind: str, players: list[int]) -> dict[str, Any]:
    """The constructor's arguments for a game of type ``kind``, read from the ``[game]`` table."""
    if kind == "crowding":
        return {
            "players": players,
            "values": table.value(
                "values",
                lambda x: isinstance(x, list) and all(isinstance(r, list) for r in x),
                "a list of lists: one row of restaurant values per type",
            ),
        }
    if kind == "market_entry":
        return {
            "players": players,
            "capacity": table.number("capacity", low=0),
            "outside": _per_type(table, "outside", 0.5, len(players)),
        }
    if kind == "el_farol":
        return {
            "players": players,
            "capacity_fraction": table.number("capacity_fraction", 0.6, low=0, high=1),
        }
    if kind == "minority":
        return {"players": players}
    return {
        "players": players,
        "threshold": table.number("threshold", low=0),
        "width": table.number("width", low=0, low_open=True),
        "cost": _per_type(table, "cost", 0.1, len(players)),
    }


def _game(table: Table) -> tuple[GameSettings, AnonymousGame]:
    """The game's settings, and the game built once from them (so that a bad value is refused
    here)."""
    kind = table.choice("type", GAME_TYPES)
    players = [int(x) for x in table.numbers("players", low=0)]
    if any(p != x for p, x in zip(players, table.data["players"])) or sum(players) > MAX_PLAYERS:
        raise table.error(
            "players", f"must be whole numbers >= 0, at most {MAX_PLAYERS:.0e} in all"
        )
    settings = GameSettings(kind, _arguments(table, kind, players))
    with table.field_path.fields():
        return settings, settings.game


def parse(top: Table) -> AnonymousGameSpec:
    """Read and validate an ``anonymous_game`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    AnonymousGameSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid (naming it).
    """
    table = top.table("game", required=True)
    settings, game = _game(table)
    table.done()
    mech = top.table("mechanism")
    noise: Noise = mech.choice("noise", ("gaussian", "tree", "none"), "gaussian")
    rho = mech.number("rho", low=0, low_open=True) if "rho" in mech.data else None
    epsilon = (
        None
        if rho is not None or noise == "none"
        else mech.number("epsilon", 1.0, low=0, low_open=True)
    )
    with mech.field_path.fields():
        mediator = AnonymousMediator(
            rounds=mech.integer("rounds", 500, low=1, high=100_000),
            epsilon=epsilon,
            delta=mech.number("delta", 1e-6, low=0, high=1, low_open=True, high_open=True),
            rho=rho,
            noise=noise,
            dynamics=mech.choice("dynamics", ("hedge", "blum-mansour"), "hedge"),
            learning_rate=mech.number("learning_rate", 1.0, low=0, low_open=True),
            evaluation=mech.choice("evaluation", ("auto", "exact", "mean-field"), "auto"),
        )
        game.evaluation_method(mediator.evaluation, calls=mediator.rounds)
    mech.done()
    audit = top.table("audit")
    misreport = audit.boolean("misreport", False)
    audit.done()
    if misreport and game.num_players > AUDIT_PLAYERS:
        raise audit.error(
            "misreport",
            f"needs at most {AUDIT_PLAYERS} players (one rerun per type pair), "
            f"the game has {game.num_players}",
        )
    return AnonymousGameSpec(settings, mediator, misreport)


#: A mediator round's work whatever the game's size: 0.3 to 0.4 ms of CPU time measured under Hedge
#: (market entry, 40 players, mean-field), 0.8 to 1 ms under Blum-Mansour; an exact evaluation adds
#: about 0.5 ms.
HEDGE_ROUND_OPS = 5e5
SWAP_ROUND_OPS = 1.2e6
EXACT_CALL_OPS = 6e5


def estimate(spec: AnonymousGameSpec) -> list[budget_estimates.Estimate]:
    """Peak memory and work (elementary operations, calibrated on benchmarks/bench_anonymous.py and
    the CPU time of runs of 1,000 rounds): per round :data:`HEDGE_ROUND_OPS` (Blum-Mansour:
    :data:`SWAP_ROUND_OPS`) ``+ 30 K^2 A^2`` (the learners and the regret sums), plus, when the
    evaluation is exact, :data:`EXACT_CALL_OPS` and ``25`` per operation of it; the eta audit reruns
    the mediator once per (type, lie) pair.  Memory: the own-count payoff table when the evaluation
    is exact (4 copies of ``K A n``; a mean-field run never builds it) or else the blocks its
    largeness is read in (4 arrays of :data:`STEP_BLOCK` payoffs), ``4 K^2 A^2`` regret sums, the
    trace of ``T K A`` and :data:`RUN_OVERHEAD`.

    Parameters
    ----------
    spec : AnonymousGameSpec

    Returns
    -------
    list of Estimate
    """
    g, T = spec.game.game, spec.mediator.rounds
    K, A = g.num_types, g.num_actions
    exact = g.evaluation_method(spec.mediator.evaluation, calls=T) == "exact"
    base = SWAP_ROUND_OPS if spec.mediator.dynamics == "blum-mansour" else HEDGE_ROUND_OPS
    per_run = T * (
        base + 30.0 * K * K * A * A + (EXACT_CALL_OPS + 25.0 * g.exact_cost() if exact else 0.0)
    )
    runs = 1 + (K * (K - 1) if spec.misreport else 0)
    # built by exact evaluation only
    table = 8.0 * 4 * K * A * g.num_players if exact and g.has_table else 0.0
    # the largeness check of an own-count game reads the payoffs in blocks of STEP_BLOCK (counts,
    # payoffs, steps)
    blocks = 8.0 * 4 * min(STEP_BLOCK, K * A * g.num_players) if g.has_table else 0.0
    memory = max(table, blocks) + 8.0 * (4 * K * K * A * A + T * K * A) + RUN_OVERHEAD
    return [budget_estimates.Estimate("mediator", memory, per_run * runs)]


@dataclass(frozen=True)
class AnonymousGameRun:
    """An ``anonymous_game`` run: the spec, the mediator's outcome (its noise from the seed's first
    child stream) and the second child stream, the eta audit's."""

    spec: AnonymousGameSpec
    outcome: AnonymousOutcome
    audit_seed: np.random.SeedSequence


def build(spec: AnonymousGameSpec, seed: np.random.SeedSequence) -> AnonymousGameRun:
    """Run the mediator on the game (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : AnonymousGameSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    AnonymousGameRun
    """
    mediator_seed, audit_seed = child_streams(seed, 2)
    return AnonymousGameRun(
        spec,
        spec.mediator.run(spec.game.game, rng=np.random.default_rng(mediator_seed)),
        audit_seed,
    )


def run(built: AnonymousGameRun) -> Result:
    """Measure alpha, the bound terms, the privacy spent and (optionally) eta.

    Parameters
    ----------
    built : AnonymousGameRun

    Returns
    -------
    Result
        Metrics; tables ``suggestions`` (type x action counts) and ``trace`` (alpha over rounds).
    """
    spec, out, audit_seed = built.spec, built.outcome, built.audit_seed
    game, mediator = spec.game.game, spec.mediator
    m = Metrics()
    m.put(GAME, spec.game_type, "game")
    m.put(N, game.num_players, "players")
    m.put(TYPES, game.num_types, "types")
    m.put(ACTIONS, game.num_actions, "actions")
    m.put(
        LARGENESS,
        game.largeness,
        f"Delta: the most one switch moves a payoff; {game.largeness_method}",
    )
    m.put(DYNAMICS, mediator.dynamics, "no-regret dynamics")
    m.put(EVALUATION, out.evaluation, "how expected payoffs on the true game are computed")
    m.put(
        ALPHA,
        out.max_alpha,
        "alpha: largest regret of the suggested distribution (swap under Blum-Mansour)",
    )
    m.put(EXTERNAL_REGRET, float(out.external_regret.max()), "largest external regret")
    m.put(SWAP_REGRET, float(out.swap_regret.max()), "largest swap regret")
    m.put(
        CROSS_REGRET,
        float(out.cross_regret.max()),
        "largest gain from acting on another type's suggestion",
    )
    m.put(
        OBSERVED_REGRET,
        float(out.observed_regret.max()),
        "learners' regret on the payoffs they were fed",
    )
    m.put(REGRET_BOUND, out.regret_bound, "Hedge's bound (x A under Blum-Mansour), per round")
    m.put(FEED_ERROR, float(out.feed_error.max()), "mean gap between fed and true payoffs")
    m.put(
        ALPHA_DECOMPOSITION_BOUND,
        out.regret_bound + 2 * float(out.feed_error.max()),
        "regret bound + 2 feed error (>= alpha)",
    )
    m.put(NOISE_INF, out.noise_inf, "mean ||Z_t||_inf of the published histogram")
    m.put(
        WELFARE_PER_PLAYER, out.welfare / game.num_players, "expected payoff per player following"
    )
    if mediator.noise == "none":
        m.put(PRIVACY, "none (no noise: the non-private dynamics)", "privacy")
    else:
        m.put(EPSILON, out.privacy.epsilon, "epsilon of the billboard (jointly DP suggestions)")
        m.put(
            EPSILON_TARGET,
            mediator.epsilon if mediator.epsilon is not None else out.privacy.epsilon,
            "epsilon asked for",
        )
        m.put(DELTA, out.privacy.delta, "delta")
        m.put(SIGMA, out.sigma, "noise scale")
    if spec.misreport and mediator.noise != "none":
        gains = misreport_gains(mediator, game, rng=np.random.default_rng(audit_seed))
        worst = int(np.argmax(gains.eta - gains.cross_regret))
        m.put(
            ETA,
            gains.max_eta,
            "eta: largest gain from misreporting then best-responding (exact, realised noise)",
        )
        # payoffs in [0, 1]: 1e-12 is rounding
        excess = float(gains.eta[worst] - gains.cross_regret[worst])
        m.put(
            ETA_MINUS_CROSS_REGRET,
            excess if abs(excess) > 1e-12 else 0.0,
            "largest eta - cross regret of the same pair",
        )
        m.put(
            ETA_POST_PROCESSING_BOUND,
            gains.privacy_term,
            "min(1, (e^eps - 1) + delta): bound on E[eta - cross regret]",
        )
    K, A = game.num_types, game.num_actions
    suggestions = {
        "type": np.repeat(np.arange(K), A).tolist(),
        "action": np.tile(np.arange(A), K).tolist(),
        "players": out.suggestions.ravel().tolist(),
    }
    return m.result(
        "anonymous_game",
        {
            "suggestions": suggestions,
            "trace": {"round": out.trace["round"].tolist(), "alpha": out.trace["alpha"].tolist()},
        },
    )
