"""The private mediator in plain numpy (the reference of the compiled one): ``PrivateMediator.run``
in one piece, with its own copy of that day's Hedge.  Kept verbatim (only made free-standing:
``self`` is the new :class:`~dpgames.games.mediator.PrivateMediator`, read for its parameters only)
as the oracle the split, fused mediator is compared with: same seed, same outcome (bit for bit where
the order of operations is unchanged, to 1e-12 where sums are regrouped).  Not part of the
library."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dpgames.games.atomic import UnilateralCosts, pure_regret
from dpgames.games.dynamics import BlumMansour, _rates, default_learning_rate
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import MediatorOutcome
from dpgames.games.network import RoutingGame
from dpgames.privacy import (
    Accountant,
    BinaryTreeCounter,
    Neighbouring,
    PrivacyGuarantee,
    as_generator,
)

EXACT_BUDGET = 5e7
TRACE_POINTS = 100
WARMUP_GENERATIONS = 10


class NonatomicCosts:
    def __init__(self, game: CongestionGame, players: np.ndarray):
        self.game, self._weight = game, _spread(game, np.asarray(players, dtype=float))

    def __call__(self, strategy: np.ndarray) -> np.ndarray:
        return self.game.action_costs(self.game.loads(strategy * self._weight))


def evaluator(game: CongestionGame, players: np.ndarray, evaluation: str, rounds: int):
    if evaluation == "auto":
        integer = (
            np.all(game.costs.power == np.round(game.costs.power)) and game.costs.power.max() <= 8
        )
        evaluation = (
            "exact" if integer and game.incidence.nnz * rounds <= EXACT_BUDGET else "nonatomic"
        )
    if evaluation == "exact":
        return UnilateralCosts(game, players), evaluation
    if evaluation == "mean-field":
        return UnilateralCosts(game, players, order=1), evaluation
    return NonatomicCosts(game, players), evaluation


def _sum(game: CongestionGame, values: np.ndarray) -> np.ndarray:
    return np.add.reduceat(values, game.class_start[:-1], axis=-1)


def _min(game: CongestionGame, values: np.ndarray) -> np.ndarray:
    return np.minimum.reduceat(values, game.class_start[:-1], axis=-1)


def _max(game: CongestionGame, values: np.ndarray) -> np.ndarray:
    return np.maximum.reduceat(values, game.class_start[:-1], axis=-1)


def _spread(game: CongestionGame, per_class: np.ndarray) -> np.ndarray:
    return per_class[..., game.action_class]


@dataclass
class OldTracker:
    """``RegretTracker`` as it was (external and swap regrets of the mixture of the rounds'
    profiles)."""

    game: CongestionGame
    swap: bool = False
    rounds: int = 0

    def __post_init__(self) -> None:
        self.follow = np.zeros(self.game.num_classes)
        self.deviate = np.zeros(self.game.num_actions)
        if self.swap:
            self._first, self._second = self.game.class_pairs()
            self.pair_cost = np.zeros(self._first.size)

    def add(self, strategy: np.ndarray, unilateral: np.ndarray) -> None:
        self.rounds += 1
        self.follow += _sum(self.game, strategy * unilateral)
        self.deviate += unilateral
        if self.swap:
            self.pair_cost += strategy[self._first] * unilateral[self._second]

    def external_regret(self) -> np.ndarray:
        return (self.follow - _min(self.game, self.deviate)) / max(self.rounds, 1)

    def swap_regret(self) -> np.ndarray:
        own = self.pair_cost[self._first == self._second]
        saving = own[self._first] - self.pair_cost
        best = np.maximum.reduceat(saving, np.r_[0, np.flatnonzero(np.diff(self._first)) + 1])
        return _sum(self.game, np.maximum(best, 0.0)) / max(self.rounds, 1)

    def expected_cost(self) -> np.ndarray:
        return self.follow / max(self.rounds, 1)


def _class_softmax(game: CongestionGame, scores: np.ndarray) -> np.ndarray:
    shifted = scores - _spread(game, _max(game, scores))
    w = np.exp(shifted)
    return w / _spread(game, _sum(game, w))


@dataclass
class OldHedge:
    """Hedge as it was (``class_min`` / ``class_sum`` by ``reduceat``, as ``CongestionGame`` had
    them)."""

    game: CongestionGame
    learning_rate: object
    cumulative: np.ndarray = field(init=False)
    expected_loss: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        eta = _rates(self.learning_rate, self.game)
        self._eta = _spread(self.game, eta)
        self.cumulative = np.zeros(self.game.num_actions)
        self.expected_loss = np.zeros(self.game.num_classes)
        self._p = self.game.uniform_strategy()

    def strategy(self) -> np.ndarray:
        return self._p

    def update(self, strategy: np.ndarray, loss: np.ndarray) -> None:
        self.expected_loss += _sum(self.game, strategy * loss)
        self.cumulative += loss
        step = self._eta * loss
        w = self._p * np.exp(_spread(self.game, _min(self.game, step)) - step)
        total = _sum(self.game, w)
        if np.all(total > 0):
            self._p = w / _spread(self.game, total)
        else:
            self._p = _class_softmax(self.game, -self._eta * self.cumulative)

    def grown(self, game: CongestionGame, position: np.ndarray) -> OldHedge:
        learner = OldHedge(game, self.learning_rate)
        fresh = np.ones(game.num_actions, dtype=bool)
        fresh[position] = False
        learner.cumulative[position] = self.cumulative
        learner.cumulative[fresh] = _spread(
            game, _min(game, np.where(fresh, np.inf, learner.cumulative))
        )[fresh]
        learner.expected_loss = self.expected_loss.copy()
        learner._p = _class_softmax(game, -learner._eta * learner.cumulative)
        return learner

    def external_regret(self) -> np.ndarray:
        return self.expected_loss - _min(self.game, self.cumulative)


def _publisher(self, links: int, resources: int, gen: np.random.Generator):
    sens = math.sqrt(2 * links)
    text = (
        f"one player's reported type changes (each round's loads move by <= sqrt(2L) = "
        f"{math.sqrt(2 * links):.4g} in l2, L = {links})"
    )
    relation = Neighbouring.REPLACE_ONE.described(text)
    if self.noise == "none":
        return (lambda y: y), 0.0, PrivacyGuarantee(math.inf, 0.0, relation)
    rho, T = self.total_rho, self.rounds
    if self.noise == "gaussian":
        sigma = sens * math.sqrt(T / (2 * rho))
        ledger = Accountant().spend(
            "published loads, one round", PrivacyGuarantee.from_zcdp(rho / T, relation), T
        )
        return (lambda y: y + gen.normal(0.0, sigma, y.shape)), sigma, ledger.best_total(self.delta)
    counter = BinaryTreeCounter(T, rho=rho, sensitivity=sens, relation="user")
    online = counter.start(resources, gen)
    last = np.zeros(resources)

    def publish(y: np.ndarray) -> np.ndarray:
        nonlocal last
        total = online.update(y)
        step, last = total - last, total
        return step

    tree = counter.guarantee
    stated = replace(
        tree,
        neighbouring=Neighbouring.REPLACE_ONE.described(
            f"{text}; for the counter: {tree.neighbouring}"
        ),
    )
    ledger = Accountant().spend("tree counter of the loads", stated)
    return publish, counter.noise_scale, ledger.best_total(self.delta)


def _learn(self, game, learner, scale, strategy, action_costs):
    if learner is None:
        scale = np.maximum(_max(game, action_costs), 1e-12)
        rate = self.learning_rate * default_learning_rate(game, self.rounds)
        learner = (OldHedge if self.dynamics == "hedge" else BlumMansour)(game, rate)
    if scale.size != game.num_actions:
        scale = _spread(game, scale)
    learner.update(strategy, action_costs / scale)
    return scale, learner


def _regret(self, tracker: OldTracker) -> np.ndarray:
    return tracker.swap_regret() if self.dynamics == "blum-mansour" else tracker.external_regret()


def _sample_counts(
    game: CongestionGame, players: np.ndarray, strategy: np.ndarray, gen: np.random.Generator
) -> np.ndarray:
    width = int(game.actions_per_class.max())
    offset = np.arange(game.num_actions) - game.class_start[game.action_class]
    table = np.zeros((game.num_classes, width))
    table[game.action_class, offset] = strategy
    table /= table.sum(axis=1, keepdims=True)
    counts = gen.multinomial(players.astype(np.int64), table)
    return counts[game.action_class, offset].astype(float)


def oracle_run(self, model, players=None, rng=None) -> MediatorOutcome:
    """``PrivateMediator.run`` as it was (``self``: the mediator whose parameters are used)."""
    game, cap = self.prepare(model, players)
    players = game.demand
    gen = as_generator(rng)
    T, W = self.rounds, self.warmup if isinstance(model, RoutingGame) else 0
    suggested_round = W + int(gen.integers(T - W))
    publish, sigma, guarantee = _publisher(self, cap, game.num_resources, gen)
    strategy, learner, scale = game.uniform_strategy(), None, None
    generate_every = max(1, W // WARMUP_GENERATIONS)
    for t in range(W):
        strategy = strategy if learner is None else learner.strategy()
        loads = game.loads(strategy * _spread(game, players.astype(float)))
        link_costs = game.costs(np.maximum(publish(loads), 0.0))
        scale, learner = _learn(self, game, learner, scale, strategy, game.incidence @ link_costs)
        if (t + 1) % generate_every:
            continue
        grown, position, _ = model.new_columns(game, link_costs, cap, self.max_paths)
        scale = _max(game, scale)
        if grown is not game:
            game, learner = (
                grown,
                (
                    learner.grown(grown, position)
                    if isinstance(learner, OldHedge)
                    else BlumMansour(grown, learner.learning_rate)
                ),
            )
    evaluate, evaluation = evaluator(game, players, self.evaluation, T - W)
    tracker = OldTracker(game, swap=self.dynamics == "blum-mansour")
    observed = OldTracker(game, swap=True) if self.dynamics == "blum-mansour" else None
    weight = _spread(game, players.astype(float))
    every = max(1, (T - W) // TRACE_POINTS)
    trace = {"round": [], "alpha": [], "observed_regret": []}
    history = np.empty((T - W, game.num_actions)) if self.keep_history else None
    cost_range, chosen = 0.0, None
    for t in range(W, T):
        if learner is not None:
            strategy = learner.strategy()
        loads = game.loads(strategy * weight)
        action_costs = game.action_costs(np.maximum(publish(loads), 0.0))
        scale, learner = _learn(self, game, learner, scale, strategy, action_costs)
        if observed is not None:
            observed.add(strategy, action_costs / scale)
        unilateral = (
            game.action_costs(loads) if isinstance(evaluate, NonatomicCosts) else evaluate(strategy)
        )
        tracker.add(strategy, unilateral)
        cost_range = max(cost_range, float(unilateral.max()))
        if history is not None:
            history[t - W] = strategy
        if t == suggested_round:
            chosen = strategy
        if (t + 1 - W) % every == 0 or t + 1 == T:
            trace["round"].append(t + 1)
            trace["alpha"].append(float(_regret(self, tracker)[players > 0].max()))
            seen = (
                _regret(self, observed)
                if observed is not None
                else learner.external_regret() / (t + 1)
            )
            trace["observed_regret"].append(float(seen[players > 0].max()))
    suggestions = _sample_counts(game, players, chosen, gen)
    return MediatorOutcome(
        game=game,
        players=players,
        suggestions=suggestions,
        suggested_round=suggested_round + 1,
        alpha=_regret(self, tracker),
        expected_cost=tracker.expected_cost(),
        ex_post=pure_regret(game, suggestions),
        privacy=guarantee,
        rho=self.total_rho,
        sigma=sigma,
        sensitivity_l2=math.sqrt(2 * cap),
        evaluation=evaluation,
        cost_range=cost_range,
        trace={k: np.asarray(v) for k, v in trace.items()},
        history=history,
    )
