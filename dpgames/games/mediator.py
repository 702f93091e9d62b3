"""The jointly differentially private mediator (Kearns, Pai, Roth & Ullman 2014; Rogers & Roth 2014;
Dwork & Roth 2014, section 10.2.2).

Players report their types (a routing game's OD pairs: ``players[k]`` reports of class ``k``).  The
mediator runs no-regret dynamics for ``T`` rounds, one learner per class (:mod:`dpgames.games.dynamics`).
In round ``t`` every class ``k`` mixes with ``p_t,k``; the mediator publishes the *noisy* expected loads
``y~_t = sum_k n_k A_k^T p_t,k + Z_t``, and every class's next losses are its actions' costs at ``y~_t``.
At the end one round ``t*`` is drawn uniformly (independently of the reports) and each player is
suggested an action drawn from her class's ``p_t*,k``: a draw from the uniform mixture of the rounds'
profiles, the correlated distribution the dynamics computed.

**Neighbouring relation**: one player's reported type changes (all other reports fixed).
**Sensitivity**: a class-``k`` player adds ``q = A_k^T p_t,k`` to the loads, a vector in ``[0, 1]^m``
with ``||q||_1 <= L`` (``L`` = the most resources any action uses).  Her changed report replaces ``q``
by ``q'`` of the same kind, so ``||q - q'||_1 <= 2L`` and, entries of ``q - q'`` lying in [-1, 1],
``||q - q'||_2^2 <= ||q - q'||_1 <= 2L``: the l2 sensitivity of every round's loads is ``sqrt(2L)``
(for pure paths, ``sqrt(|a xor a'|) <= sqrt(2L)`` is attained).  Everybody else's strategies are
functions of the published loads and their own reports only, so they change only through what was
published (adaptive composition).
**Noise**: ``"gaussian"``: ``N(0, sigma^2)`` per coordinate and round with
``sigma = sqrt(2L) sqrt(T / (2 rho))``: each round ``rho/T``-zCDP (Bun & Steinke 2016, Prop. 1.6),
``rho``-zCDP in total (Lemma 2.3), converted to (eps, delta) by the accountant.  ``"tree"``: the
binary-tree counter of :mod:`dpgames.privacy.tree_counter` releases the running sums of the loads with
every round's vector allowed to change (``relation="user"``, Gaussian noise, ``rho``-zCDP); the
per-round loads are differences of consecutive sums.  Under this user-level relation every tree node
of ``s`` rounds moves by ``s sqrt(2L)``, so the tree needs more noise than per-round Gaussian noise: it
is offered for comparison.  ``"none"``: the non-private dynamics.
**Joint DP** (billboard lemma, Hsu et al. 2014; KPRU Lemma): player ``j``'s suggestion is a function
of the published loads, ``t*`` and her own report, so the suggestions to everybody but ``i`` are
(eps, delta)-DP in ``i``'s report.
**Incentives** (Kearns, Pai, Roth & Ullman 2014, their incentive theorem for jointly DP mediators;
Dwork & Roth 2014, section 10.2.2; cited by name, see :mod:`dpgames.games.incentives`): with costs
scaled to [0, 1], truthful reporting and following is an approximate ex-post Nash equilibrium up to
about ``alpha + 2 eps + beta + delta``
(see :mod:`dpgames.games.incentives`, which measures the gains).
"""

from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from dpgames.games.atomic import PureRegret, RegretTracker, UnilateralCosts, pure_regret
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate
from dpgames.games.game import CongestionGame
from dpgames.games.network import RoutingGame
from dpgames.privacy import Accountant, BinaryTreeCounter, PrivacyGuarantee, as_generator, zcdp_to_dp
from dpgames.validation import ValidationError, choice, integer, positive, positive_int, probability

Noise = Literal["gaussian", "tree", "none"]
Dynamics = Literal["hedge", "blum-mansour"]
Evaluation = Literal["auto", "exact", "mean-field", "nonatomic"]
EXACT_BUDGET = 5e7  # support entries x rounds up to which "auto" evaluates regrets exactly
TRACE_POINTS = 100
WARMUP_GENERATIONS = 10  # column generation steps during the warm-up


@lru_cache(maxsize=256)
def rho_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to at most ``(epsilon, delta)``-DP (bisection on
    the accountant's conversion, which increases with rho)."""
    low, high = 0.0, max(1.0, epsilon)
    while zcdp_to_dp(high, delta) < epsilon:
        high *= 2
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if zcdp_to_dp(mid, delta) <= epsilon else (low, mid)
    return low


class NonatomicCosts:
    """Action costs at the expected loads, ``A c(sum_k n_k A_k^T p_k)``: the nonatomic (Wardrop)
    evaluation, cheapest, for games too large for :class:`~dpgames.games.atomic.UnilateralCosts`."""

    def __init__(self, game: CongestionGame, players: np.ndarray):
        self.game, self._weight = game, game.spread(np.asarray(players, dtype=float))

    def __call__(self, strategy: np.ndarray) -> np.ndarray:
        return self.game.action_costs(self.game.loads(strategy * self._weight))


def evaluator(game: CongestionGame, players: np.ndarray, evaluation: Evaluation, rounds: int):
    """The cost model on which regrets are measured (see :class:`PrivateMediator`)."""
    if evaluation == "auto":
        integer = np.all(game.costs.power == np.round(game.costs.power)) and game.costs.power.max() <= 8
        evaluation = "exact" if integer and game.incidence.nnz * rounds <= EXACT_BUDGET else "nonatomic"
    if evaluation == "exact":
        return UnilateralCosts(game, players), evaluation
    if evaluation == "mean-field":
        return UnilateralCosts(game, players, order=1), evaluation
    if evaluation == "nonatomic":
        return NonatomicCosts(game, players), evaluation
    raise ValidationError("evaluation", f"must be 'auto', 'exact', 'mean-field' or 'nonatomic', got {evaluation!r}")


@dataclass(frozen=True)
class MediatorOutcome:
    """What the mediator returns and what was measured about it.

    ``suggestions[a]``: players suggested action ``a``; ``alpha`` per class: the regret (external, or
    swap under Blum-Mansour) of the suggested correlated distribution on the true game;
    ``expected_cost`` per class: a player's expected cost following; ``ex_post``: exact gains of the
    realised suggestions as a pure profile; ``privacy``: the total (eps, delta) and the parameters."""

    game: CongestionGame
    players: np.ndarray
    suggestions: np.ndarray
    suggested_round: int
    alpha: np.ndarray
    expected_cost: np.ndarray
    ex_post: PureRegret
    privacy: PrivacyGuarantee
    rho: float
    sigma: float
    sensitivity_l2: float
    evaluation: str
    cost_range: float
    trace: dict[str, np.ndarray]
    history: np.ndarray | None = field(default=None, repr=False)

    @property
    def max_alpha(self) -> float:
        live = self.players > 0
        return float(self.alpha[live].max()) if live.any() else 0.0

    @property
    def total_expected_cost(self) -> float:
        return float(self.players @ self.expected_cost)

    @property
    def realised_total_cost(self) -> float:
        return float(self.suggestions @ self.ex_post.cost)


@dataclass(frozen=True)
class PrivateMediator:
    """The private mediator.  Give the privacy target as ``epsilon`` (at ``delta``) or as ``rho``.

    ``evaluation``: how regrets are measured on the true (atomic) game: ``"exact"`` (expected costs
    of independent mixing, exact for integer cost powers), ``"mean-field"`` (loads at their means, the
    player's own share removed), ``"nonatomic"`` (costs at the expected loads), ``"auto"`` (exact when
    affordable).  ``warmup``: rounds of column generation on published costs (routing games; see
    :meth:`run`; default ``min(100, T // 10)``); ``max_links``: the public bound ``L`` on path length (default twice the longest
    free-flow shortest path); ``max_paths``: the most paths an OD pair may collect.  ``keep_history`` keeps the strategies of every round after the warm-up.
    ``learning_rate`` multiplies Hedge's default ``sqrt(8 ln N / T)`` (losses are costs over a public
    per-class scale)."""

    rounds: int = 1000
    epsilon: float | None = 1.0
    delta: float = 1e-6
    rho: float | None = None
    noise: Noise = "gaussian"
    dynamics: Dynamics = "hedge"
    learning_rate: float = 3.0
    evaluation: Evaluation = "auto"
    warmup: int | None = None
    max_links: int | None = None
    max_paths: int = 8
    keep_history: bool = False

    def __post_init__(self) -> None:
        checked = {"rounds": positive_int("rounds", self.rounds),
                   "noise": choice("noise", self.noise, ("gaussian", "tree", "none")),
                   "dynamics": choice("dynamics", self.dynamics, ("hedge", "blum-mansour")),
                   "delta": probability("delta", self.delta),
                   "learning_rate": positive("learning_rate", self.learning_rate),
                   "max_paths": positive_int("max_paths", self.max_paths),
                   "evaluation": choice("evaluation", self.evaluation, ("auto", "exact", "mean-field", "nonatomic")),
                   "keep_history": choice("keep_history", self.keep_history, (False, True))}
        rounds = checked["rounds"]
        checked["warmup"] = min(100, rounds // 10) if self.warmup is None else integer("warmup", self.warmup, 0, rounds - 1)
        if self.max_links is not None:
            checked["max_links"] = positive_int("max_links", self.max_links)
        if checked["noise"] != "none" and (self.epsilon is None) == (self.rho is None):
            raise ValidationError("epsilon", ": give exactly one of epsilon (at delta) or rho")
        for name in ("epsilon", "rho"):
            if getattr(self, name) is not None:
                checked[name] = positive(name, getattr(self, name))
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def total_rho(self) -> float:
        if self.noise == "none":
            return math.inf
        return self.rho if self.rho is not None else rho_for_epsilon(self.epsilon, self.delta)

    @staticmethod
    def relation(links: int) -> str:
        return (f"one player's reported type changes (each round's loads move by <= sqrt(2L) = "
                f"{math.sqrt(2 * links):.4g} in l2, L = {links})")

    def _publisher(self, links: int, resources: int, gen: np.random.Generator):
        """A function loads -> published loads, the noise sd per coordinate and the guarantee."""
        sens = math.sqrt(2 * links)
        relation = self.relation(links)
        if self.noise == "none":
            return (lambda y: y), 0.0, PrivacyGuarantee(math.inf, 0.0, relation)
        rho, T = self.total_rho, self.rounds
        if self.noise == "gaussian":
            sigma = sens * math.sqrt(T / (2 * rho))
            ledger = Accountant().spend("published loads, one round", PrivacyGuarantee.zcdp(rho / T, relation), T)
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
        stated = replace(tree, neighbouring=f"{relation}; for the counter: {tree.neighbouring}")
        ledger = Accountant().spend("tree counter of the loads", stated)
        return publish, counter.noise_scale, ledger.best_total(self.delta)

    def prepare(self, model: CongestionGame | RoutingGame, players: np.ndarray | None = None):
        """The starting game (reported players as its demand) and ``L``, the public bound on the
        resources of any action that the noise is calibrated to."""
        if isinstance(model, RoutingGame):
            game = model.initial_game()
            cap = self.max_links if self.max_links is not None else 2 * game.max_action_size
        else:
            game, cap = model, model.max_action_size
        reported = game.demand if players is None else np.asarray(players)
        if reported.shape != (game.num_classes,) or np.any(reported != np.round(reported)) or np.any(reported < 0):
            raise ValidationError("players", ": the mediator needs a whole number >= 0 of reported players per class "
                                             "(see dpgames.games.atomic.round_players)")
        return game.with_demand(reported), max(int(cap), game.max_action_size)

    def run(self, model: CongestionGame | RoutingGame, players: np.ndarray | None = None, rng=None) -> MediatorOutcome:
        """Run on the reports ``players[k]`` per class (default: the model's demand, whole numbers).

        A routing game starts from each OD pair's free-flow shortest path and, during the first
        ``warmup`` rounds, adds each OD pair's shortest path under the *published* link costs (column
        generation on public data: post-processing, no privacy cost; paths over ``L`` links are not
        added).  The suggestion round ``t*`` and the regrets use the rounds after the warm-up."""
        game, cap = self.prepare(model, players)
        players = game.demand
        gen = as_generator(rng)
        T, W = self.rounds, self.warmup if isinstance(model, RoutingGame) else 0
        suggested_round = W + int(gen.integers(T - W))  # independent of the reports
        publish, sigma, guarantee = self._publisher(cap, game.num_resources, gen)
        strategy, learner, scale = game.uniform_strategy(), None, None
        generate_every = max(1, W // WARMUP_GENERATIONS)
        for t in range(W):  # warm-up: dynamics and column generation on the published costs
            strategy = strategy if learner is None else learner.strategy()
            loads = game.loads(strategy * game.spread(players.astype(float)))
            link_costs = game.costs(np.maximum(publish(loads), 0.0))
            scale, learner = self._learn(game, learner, scale, strategy, game.incidence @ link_costs)
            if (t + 1) % generate_every:
                continue
            grown, position, _ = model.new_columns(game, link_costs, cap, self.max_paths)
            scale = game.class_max(scale)  # back to per class
            if grown is not game:
                game, learner = grown, (learner.grown(grown, position) if isinstance(learner, Hedge)
                                        else BlumMansour(grown, learner.learning_rate))
        evaluate, evaluation = evaluator(game, players, self.evaluation, T - W)
        tracker = RegretTracker(game, swap=self.dynamics == "blum-mansour")
        observed = RegretTracker(game, swap=True) if self.dynamics == "blum-mansour" else None
        weight = game.spread(players.astype(float))
        every = max(1, (T - W) // TRACE_POINTS)
        trace = {"round": [], "alpha": [], "observed_regret": []}
        history = np.empty((T - W, game.num_actions)) if self.keep_history else None
        cost_range, chosen = 0.0, None
        for t in range(W, T):
            if learner is not None:
                strategy = learner.strategy()
            loads = game.loads(strategy * weight)
            action_costs = game.action_costs(np.maximum(publish(loads), 0.0))
            scale, learner = self._learn(game, learner, scale, strategy, action_costs)
            if observed is not None:
                observed.add(strategy, action_costs / scale)
            unilateral = game.action_costs(loads) if isinstance(evaluate, NonatomicCosts) else evaluate(strategy)
            tracker.add(strategy, unilateral)
            cost_range = max(cost_range, float(unilateral.max()))
            if history is not None:
                history[t - W] = strategy
            if t == suggested_round:
                chosen = strategy
            if (t + 1 - W) % every == 0 or t + 1 == T:
                trace["round"].append(t + 1)
                trace["alpha"].append(float(self._regret(tracker)[players > 0].max()))
                seen = self._regret(observed) if observed is not None else learner.external_regret() / (t + 1)
                trace["observed_regret"].append(float(seen[players > 0].max()))
        suggestions = _sample_counts(game, players, chosen, gen)
        return MediatorOutcome(
            game=game, players=players, suggestions=suggestions, suggested_round=suggested_round + 1,
            alpha=self._regret(tracker), expected_cost=tracker.expected_cost(),
            ex_post=pure_regret(game, suggestions), privacy=guarantee, rho=self.total_rho, sigma=sigma,
            sensitivity_l2=math.sqrt(2 * cap), evaluation=evaluation, cost_range=cost_range,
            trace={k: np.asarray(v) for k, v in trace.items()}, history=history)

    def _learn(self, game, learner, scale, strategy, action_costs):
        """Feed one round's losses (costs over a per-class scale fixed from round 1's published costs,
        public data) to the learner, creating it on the first round."""
        if learner is None:
            scale = np.maximum(game.class_max(action_costs), 1e-12)
            rate = self.learning_rate * default_learning_rate(game, self.rounds)
            learner = (Hedge if self.dynamics == "hedge" else BlumMansour)(game, rate)
        if scale.size != game.num_actions:  # per class -> per action, once per path set
            scale = game.spread(scale)
        learner.update(strategy, action_costs / scale)
        return scale, learner

    def _regret(self, tracker: RegretTracker) -> np.ndarray:
        return tracker.swap_regret() if self.dynamics == "blum-mansour" else tracker.external_regret()


def _sample_counts(game: CongestionGame, players: np.ndarray, strategy: np.ndarray,
                   gen: np.random.Generator) -> np.ndarray:
    """Every player draws her action from her class's strategy independently: multinomial counts per
    class (classes padded to the widest action set)."""
    width = int(game.actions_per_class.max())
    offset = np.arange(game.num_actions) - game.class_start[game.action_class]
    table = np.zeros((game.num_classes, width))
    table[game.action_class, offset] = strategy
    table /= table.sum(axis=1, keepdims=True)
    counts = gen.multinomial(players.astype(np.int64), table)
    return counts[game.action_class, offset].astype(float)
