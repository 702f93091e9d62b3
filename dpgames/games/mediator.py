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
**Noise** (:mod:`dpgames.games.publisher`): ``"gaussian"``: ``N(0, sigma^2)`` per coordinate and round with
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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, cast

import numpy as np

from dpgames.games.atomic import PureRegret, RegretTracker, UnilateralCosts, pure_regret
from dpgames.games.classwise import group_by_size
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate
from dpgames.games.game import CongestionGame
from dpgames.games.network import RoutingGame
from dpgames.games.publisher import Publisher, load_relation, make_publisher
from dpgames.privacy import PrivacyGuarantee, as_generator, zcdp_to_dp
from dpgames.validation import (
    ValidationError,
    choice,
    integer,
    positive,
    positive_int,
    probability,
)

Noise = Literal["gaussian", "tree", "none"]
Dynamics = Literal["hedge", "blum-mansour"]
Evaluation = Literal["auto", "exact", "mean-field", "nonatomic"]
EXACT_BUDGET = 5e7  # support entries x rounds up to which "auto" evaluates regrets exactly
TRACE_POINTS = 100
WARMUP_GENERATIONS = 10  # column generation steps during the warm-up


@lru_cache(maxsize=256)
def rho_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to at most ``(epsilon, delta)``-DP.

    Bisection on the accountant's conversion (:func:`dpgames.privacy.zcdp_to_dp`, increasing in rho).

    Parameters
    ----------
    epsilon : float
        The target epsilon (> 0).
    delta : float
        The delta of the conversion, in (0, 1).

    Returns
    -------
    float
        ``rho`` with ``zcdp_to_dp(rho, delta) <= epsilon``, within 2^-100 of the largest such.
    """
    low, high = 0.0, max(1.0, epsilon)
    while zcdp_to_dp(high, delta) < epsilon:
        high *= 2
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if zcdp_to_dp(mid, delta) <= epsilon else (low, mid)
    return low


def checked_budget(noise: str, epsilon: float | None, rho: float | None) -> dict[str, float]:
    """A mediator's privacy budget, checked: exactly one of ``epsilon`` (at the mediator's delta) and
    ``rho`` unless ``noise == "none"``; each given one ``> 0``.

    Raises
    ------
    ValidationError
        Both or neither given with noise, or a value that is not a number ``> 0``.
    """
    if noise != "none" and (epsilon is None) == (rho is None):
        raise ValidationError("epsilon", ": give exactly one of epsilon (at delta) or rho")
    return {name: positive(name, value) for name, value in (("epsilon", epsilon), ("rho", rho)) if value is not None}


def budget_rho(noise: str, epsilon: float | None, rho: float | None, delta: float) -> float:
    """The zCDP budget of a mediator's publications: ``rho``, or the largest rho meeting ``(epsilon,
    delta)`` (:func:`rho_for_epsilon`); ``inf`` without noise."""
    if noise == "none":
        return math.inf
    return rho if rho is not None else rho_for_epsilon(cast(float, epsilon), delta)


class NonatomicCosts:
    """Action costs at the expected loads, ``A c(sum_k n_k A_k^T p_k)``: the nonatomic (Wardrop)
    evaluation, cheapest, for games too large for :class:`~dpgames.games.atomic.UnilateralCosts`.

    Parameters
    ----------
    game : CongestionGame
        The game whose costs are evaluated.
    players : numpy.ndarray
        Players per class.

    Examples
    --------
    >>> import numpy as np
    >>> from dpgames.games.costs import PolynomialCosts
    >>> game = CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.0], [0.0, 0.1]), [[[0], [1]]], [10])
    >>> NonatomicCosts(game, np.array([10]))(np.array([0.5, 0.5])).tolist()  # 5 players on the variable road
    [1.0, 0.5]
    """

    def __init__(self, game: CongestionGame, players: np.ndarray):
        self.game, self._weight = game, game.spread(np.asarray(players, dtype=float))

    def __call__(self, strategy: np.ndarray) -> np.ndarray:
        """The cost of every action at the loads of ``strategy`` played by every class's players."""
        return self.game.action_costs(self.game.loads(strategy * self._weight))


def evaluator(game: CongestionGame, players: np.ndarray, evaluation: Evaluation, rounds: int):
    """The cost model on which regrets are measured (see :class:`PrivateMediator`).

    Parameters
    ----------
    game : CongestionGame
        The game (its final path set).
    players : numpy.ndarray
        Players per class.
    evaluation : {"auto", "exact", "mean-field", "nonatomic"}
        The model; ``"auto"`` is exact for integer cost powers <= 8 when ``nnz(A) * rounds <= 5e7``.
    rounds : int
        How many rounds will be evaluated (for ``"auto"``).

    Returns
    -------
    (callable, str)
        The evaluator (strategy -> cost per action) and the name of the model chosen.

    Raises
    ------
    ValidationError
        If ``evaluation`` is not one of the four.
    """
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

    Attributes
    ----------
    game : CongestionGame
        The game played (for a routing game: its final path set).
    players : numpy.ndarray
        Reported players per class.
    suggestions : numpy.ndarray
        ``suggestions[a]``: players suggested action ``a``.
    suggested_round : int
        The round ``t*`` (1-based) whose strategies the suggestions were drawn from.
    alpha : numpy.ndarray
        Per class: the regret (external, or swap under Blum-Mansour) of the suggested correlated
        distribution on the true game.
    expected_cost : numpy.ndarray
        Per class: a player's expected cost following.
    ex_post : PureRegret
        Exact gains of the realised suggestions as a pure profile.
    privacy : PrivacyGuarantee
        The total (eps, delta) of everything published.
    rho, sigma, sensitivity_l2 : float
        The zCDP budget, the noise scale and the l2 sensitivity ``sqrt(2L)`` of a round's loads.
    evaluation : str
        The cost model of the regrets.
    cost_range : float
        The largest action cost seen by the regrets (the scale of the incentive bound).
    trace : dict of numpy.ndarray
        ``round``, ``alpha`` and ``observed_regret`` (on the published costs) at up to 100 rounds.
    history : numpy.ndarray or None
        Every round's strategies after the warm-up (``keep_history=True``), rounds x actions.

    Examples
    --------
    >>> from dpgames.games.costs import PolynomialCosts
    >>> game = CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.0], [0.0, 0.1]), [[[0], [1]]], [10])
    >>> out = PrivateMediator(rounds=100, noise="none", epsilon=None).run(game, rng=1)
    >>> float(out.suggestions.sum()), out.suggestions.size  # 10 players, two roads
    (10.0, 2)
    >>> bool(out.alpha[0] <= out.cost_range), int(out.trace["round"][-1])
    (True, 100)
    """

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
        """The largest ``alpha`` over classes with players (0 if there are none)."""
        live = self.players > 0
        return float(self.alpha[live].max()) if live.any() else 0.0

    @property
    def total_expected_cost(self) -> float:
        """Everybody's expected cost following: ``sum_k n_k expected_cost[k]``."""
        return float(self.players @ self.expected_cost)

    @property
    def realised_total_cost(self) -> float:
        """The total cost of the realised suggestions (a pure profile)."""
        return float(self.suggestions @ self.ex_post.cost)


class _Learning:
    """The classes' no-regret learner and its loss scale: losses are costs over a per-class scale fixed
    from the first round's published costs (public data), so they start in [0, 1]."""

    def __init__(self, dynamics: Dynamics, learning_rate: float, rounds: int):
        self.dynamics, self.learning_rate, self.rounds = dynamics, learning_rate, rounds
        self.learner: Hedge | BlumMansour | None = None
        self.scale: np.ndarray | None = None  # per class
        self._scale_of: tuple[CongestionGame, np.ndarray, np.ndarray] | None = None  # scale per action, loss buffer

    def strategy(self, game: CongestionGame) -> np.ndarray:
        """The strategies to play (uniform until the first losses)."""
        return game.uniform_strategy() if self.learner is None else self.learner.strategy()

    def feed(self, game: CongestionGame, strategy: np.ndarray, action_costs: np.ndarray) -> np.ndarray:
        """Charge one round's published costs; return the losses charged."""
        if self.learner is None:
            self.scale = np.maximum(game.class_max(action_costs), 1e-12)
            rate = self.learning_rate * default_learning_rate(game, self.rounds)
            self.learner = (Hedge if self.dynamics == "hedge" else BlumMansour)(game, rate)
        if self._scale_of is None or self._scale_of[0] is not game:
            self._scale_of = game, game.spread(self.scale), np.empty(game.num_actions)
        _, scale, loss = self._scale_of
        np.divide(action_costs, scale, out=loss)  # the buffer is reused next round (no fresh temporary)
        self.learner.update(strategy, loss)
        return loss

    def grow(self, grown: CongestionGame, position: np.ndarray) -> None:
        """Follow column generation: the learner on the grown game (old action ``i`` at ``position[i]``)."""
        if isinstance(self.learner, Hedge):
            self.learner = self.learner.grown(grown, position)
        elif self.learner is not None:
            self.learner = BlumMansour(grown, self.learner.learning_rate)

    def reorder(self, layout: _Layout) -> None:
        """Follow the play loop's reordering of classes and actions."""
        if self.learner is not None and not layout.identity:
            self.learner = self.learner.reordered(layout.game, layout.class_order, layout.action_order)
            self.scale = self.scale[layout.class_order]

    def observed_regret(self, tracker: RegretTracker | None, rounds: int) -> np.ndarray:
        """Per class, the regret on the published costs (swap under Blum-Mansour)."""
        return tracker.swap_regret() if tracker is not None else self.learner.external_regret() / rounds


class _Layout:
    """The play loop's order of classes and actions: grouped by class size under Hedge (per-class sums
    and minima become column operations, :mod:`dpgames.games.classwise`), the game's own order under
    Blum-Mansour.  Loads are summed in the game's own action order and per-action sums are unchanged
    by reordering rows, so the numbers are those of the game's own order, bit for bit.

    The nonatomic evaluation needs ``A c`` at the published and at the true loads every round: both come
    from one pass over ``A``, stored once with entries ``1 + 0i``: ``A (u + i v) = A u + i A v`` exactly
    (multiplying by 1 and adding 0 round nothing; finite costs only, else two passes)."""

    def __init__(self, game: CongestionGame, grouped: bool):
        self.original, self.identity, self._flow = game, not grouped, None
        if self.identity:
            self.game = game
            return
        self.class_order, self.action_order = group_by_size(game.class_start)
        sizes = game.actions_per_class[self.class_order]
        names = tuple(np.asarray(game.class_names, dtype=object)[self.class_order]) if game.class_names else ()
        self.game = CongestionGame(game.costs, game.incidence[self.action_order],
                                   np.repeat(np.arange(sizes.size), sizes), game.demand[self.class_order], names)
        self.position = np.empty(self.action_order.size, dtype=np.min_scalar_type(max(self.action_order.size - 1, 0)))
        self.position[self.action_order] = np.arange(self.action_order.size)  # smallest integers: less to read
        self.class_position = np.empty_like(self.class_order)
        self.class_position[self.class_order] = np.arange(self.class_order.size)
        self._both = None

    def actions_back(self, values: np.ndarray) -> np.ndarray:
        """Per-action values (last axis) in the game's own order."""
        return values if self.identity else values[..., self.position]

    def actions_here(self, values: np.ndarray) -> np.ndarray:
        """Per-action values of the game's own order, in the loop's order."""
        return values if self.identity else values[self.action_order]

    def classes_back(self, values: np.ndarray) -> np.ndarray:
        """Per-class values in the game's own order."""
        return values if self.identity else values[self.class_position]

    def loads(self, strategy: np.ndarray) -> np.ndarray:
        """``A^T f`` for the flow ``f`` of every class's players mixing with ``strategy``, summed in the
        game's own action order.

        Reordered, ``A^T`` is kept row by row (resource by resource) with the loop's action indices but
        each row's entries in the game's own action order: a row product sums ``0 + a_1 f_1 + a_2 f_2 +
        ...`` in that order, as the column-wise product over the game's own ``A`` does, so the loads are
        the same bit for bit without gathering the flow back into the game's order every round."""
        if self._flow is None:
            self._flow = np.empty(strategy.size)  # reused every round: no fresh temporaries
            self._weight = self.game.spread(self.game.demand.astype(float))
            self._transposed = self.original.incidence.T if self.identity else _relabelled_transpose(
                self.original.incidence, self.position)
        return self._transposed @ np.multiply(strategy, self._weight, out=self._flow)

    def both_costs(self, published: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Action costs at the published and at the true loads (one pass over ``A`` when finite)."""
        game = self.game
        noisy, true = game.costs(published), game.costs(loads)
        if not (np.isfinite(noisy).all() and np.isfinite(true).all()):
            return game.incidence @ noisy, game.incidence @ true
        if self._both is None:
            self._both = game.incidence.astype(np.complex128)
        both = self._both @ (noisy + 1j * true)
        return both.real, both.imag


@dataclass
class _Play:
    """What the play loop measured, in the game's own order."""

    chosen: np.ndarray
    alpha: np.ndarray
    expected_cost: np.ndarray
    evaluation: str
    cost_range: float
    trace: dict[str, np.ndarray]
    history: np.ndarray | None


@dataclass(frozen=True)
class PrivateMediator:
    """The private mediator (module docstring): no-regret dynamics on noisy published loads, then one
    suggestion per player from a uniformly drawn round; jointly differentially private.

    Give the privacy target as ``epsilon`` (at ``delta``) or as ``rho`` (zCDP).

    Parameters
    ----------
    rounds : int
        ``T``, rounds of dynamics (default 1000).
    epsilon : float or None
        Total epsilon at ``delta`` (default 1); give exactly one of ``epsilon`` and ``rho`` unless
        ``noise="none"``.
    delta : float
        The delta of the guarantee (default 1e-6).
    rho : float or None
        Total zCDP budget, instead of ``epsilon``.
    noise : {"gaussian", "tree", "none"}
        How the loads are published (:mod:`dpgames.games.publisher`).
    dynamics : {"hedge", "blum-mansour"}
        Hedge (coarse correlated equilibria) or its swap-regret reduction (correlated equilibria).
    learning_rate : float
        Multiplies Hedge's default ``sqrt(8 ln N / T)`` (losses are costs over a public per-class scale).
    evaluation : {"auto", "exact", "mean-field", "nonatomic"}
        How regrets are measured on the true (atomic) game: ``"exact"`` (expected costs of independent
        mixing, exact for integer cost powers), ``"mean-field"`` (loads at their means, the player's own
        share removed), ``"nonatomic"`` (costs at the expected loads), ``"auto"`` (exact when affordable).
    warmup : int or None
        Rounds of column generation on published costs (routing games; see :meth:`run`); default
        ``min(100, T // 10)``.
    max_links : int or None
        The public bound ``L`` on path length (default twice the longest free-flow shortest path).
    max_paths : int
        The most paths an OD pair may collect (default 8).
    keep_history : bool
        Keep the strategies of every round after the warm-up.

    Raises
    ------
    ValidationError
        If a parameter is out of range, or both or neither of ``epsilon`` and ``rho`` are given.

    Examples
    --------
    Pigou's network with 20 players (one road costs 1, the other ``x / 20``):

    >>> from dpgames.games.costs import PolynomialCosts
    >>> game = CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.0], [0.0, 0.05]), [[[0], [1]]], [20])
    >>> out = PrivateMediator(rounds=200, epsilon=1.0).run(game, rng=0)
    >>> int(out.suggestions.sum()), out.evaluation
    (20, 'exact')
    >>> 0 <= out.max_alpha <= out.cost_range
    True
    >>> round(out.privacy.epsilon, 6) <= 1.0
    True
    """

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
        checked.update(checked_budget(checked["noise"], self.epsilon, self.rho))
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def total_rho(self) -> float:
        """The zCDP budget of everything published (``inf`` without noise)."""
        return budget_rho(self.noise, self.epsilon, self.rho, self.delta)

    @staticmethod
    def relation(links: int) -> str:
        """The neighbouring relation of the guarantee (see :func:`dpgames.games.publisher.load_relation`)."""
        return load_relation(links)

    def publisher(self, links: int, resources: int, rng=None) -> Publisher:
        """The publisher of this mediator's loads (its noise, ``T`` and budget; ``L = links``).

        Parameters
        ----------
        links : int
            ``L``, the public bound on the resources of an action.
        resources : int
            The number of resources (coordinates of the loads).
        rng : numpy.random.Generator, int or None
            The noise source.

        Returns
        -------
        Publisher
        """
        rho = None if self.noise == "none" else self.total_rho
        return make_publisher(self.noise, rounds=self.rounds, rho=rho, delta=self.delta, links=links,
                              resources=resources, rng=as_generator(rng))

    def prepare(self, model: CongestionGame | RoutingGame, players: np.ndarray | None = None):
        """The starting game (reported players as its demand) and ``L``, the public bound on the
        resources of any action that the noise is calibrated to.

        Parameters
        ----------
        model : CongestionGame or RoutingGame
            The game (a routing game starts from each OD pair's free-flow shortest path).
        players : numpy.ndarray or None
            Reported players per class (whole numbers; default the model's demand).

        Returns
        -------
        (CongestionGame, int)

        Raises
        ------
        ValidationError
            If ``players`` is not one whole number >= 0 per class.
        """
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
        added).  The suggestion round ``t*`` and the regrets use the rounds after the warm-up.

        Parameters
        ----------
        model : CongestionGame or RoutingGame
            The game.
        players : numpy.ndarray or None
            Reported players per class.
        rng : numpy.random.Generator, int or None
            Randomness (``t*``, the noise, the suggestions): same seed, same outcome.

        Returns
        -------
        MediatorOutcome

        Raises
        ------
        ValidationError
            If ``players`` is not one whole number >= 0 per class.
        """
        game, cap = self.prepare(model, players)
        players = game.demand
        gen = as_generator(rng)
        T, W = self.rounds, self.warmup if isinstance(model, RoutingGame) else 0
        suggested_round = W + int(gen.integers(T - W))  # independent of the reports
        publisher = self.publisher(cap, game.num_resources, gen)
        learning = _Learning(self.dynamics, self.learning_rate, T)
        game = self._warm_up(model, game, cap, learning, publisher)
        play = self._play(game, learning, publisher, W, suggested_round)
        suggestions = _sample_counts(game, players, play.chosen, gen)
        return MediatorOutcome(
            game=game, players=players, suggestions=suggestions, suggested_round=suggested_round + 1,
            alpha=play.alpha, expected_cost=play.expected_cost, ex_post=pure_regret(game, suggestions),
            privacy=publisher.guarantee, rho=self.total_rho, sigma=publisher.sigma,
            sensitivity_l2=math.sqrt(2 * cap), evaluation=play.evaluation, cost_range=play.cost_range,
            trace=play.trace, history=play.history)

    def _warm_up(self, model, game: CongestionGame, cap: int, learning: _Learning,
                 publisher: Publisher) -> CongestionGame:
        """The warm-up (routing games): dynamics on published costs, and every ``warmup / 10`` rounds each
        OD pair's shortest path under the published link costs joins its path set (column generation)."""
        warmup = self.warmup if isinstance(model, RoutingGame) else 0
        generate_every = max(1, warmup // WARMUP_GENERATIONS)
        weight = game.spread(game.demand.astype(float))
        for t in range(warmup):
            strategy = learning.strategy(game)
            link_costs = game.costs(np.maximum(publisher.publish(game.loads(strategy * weight)), 0.0))
            learning.feed(game, strategy, game.incidence @ link_costs)
            if (t + 1) % generate_every == 0:
                grown, position, _ = model.new_columns(game, link_costs, cap, self.max_paths)
                if grown is not game:
                    game = grown
                    learning.grow(grown, position)
                    weight = game.spread(game.demand.astype(float))
        return game

    def _play(self, game: CongestionGame, learning: _Learning, publisher: Publisher, first: int,
              suggested_round: int) -> _Play:
        """Rounds ``first .. T - 1``: dynamics on the published costs, regrets on the true game (the
        evaluator's model), the strategies of round ``suggested_round`` kept."""
        T, swap = self.rounds, self.dynamics == "blum-mansour"
        evaluate, evaluation = evaluator(game, game.demand, self.evaluation, T - first)
        nonatomic = isinstance(evaluate, NonatomicCosts)
        layout = _Layout(game, grouped=not swap)
        learning.reorder(layout)
        here = layout.game
        players = here.demand
        tracker = RegretTracker(here, swap=swap)
        observed = RegretTracker(here, swap=True) if swap else None
        every = max(1, (T - first) // TRACE_POINTS)
        trace = {"round": [], "alpha": [], "observed_regret": []}
        history = np.empty((T - first, here.num_actions)) if self.keep_history else None
        cost_range, chosen = 0.0, None
        for t in range(first, T):
            strategy = learning.strategy(here)
            loads = layout.loads(strategy)
            published = np.maximum(publisher.publish(loads), 0.0)
            if nonatomic:
                action_costs, unilateral = layout.both_costs(published, loads)
            else:
                action_costs = here.action_costs(published)
                unilateral = layout.actions_here(evaluate(layout.actions_back(strategy)))
            loss = learning.feed(here, strategy, action_costs)
            if observed is not None:
                observed.add(strategy, loss)
            tracker.add(strategy, unilateral)
            cost_range = max(cost_range, float(unilateral.max()))
            if history is not None:
                history[t - first] = strategy
            if t == suggested_round:
                chosen = strategy
            if (t + 1 - first) % every == 0 or t + 1 == T:
                trace["round"].append(t + 1)
                trace["alpha"].append(float(self._regret(tracker)[players > 0].max()))
                trace["observed_regret"].append(float(learning.observed_regret(observed, t + 1)[players > 0].max()))
        return _Play(layout.actions_back(chosen), layout.classes_back(self._regret(tracker)),
                     layout.classes_back(tracker.expected_cost()), evaluation, cost_range,
                     {k: np.asarray(v) for k, v in trace.items()},
                     None if history is None else layout.actions_back(history))

    def _regret(self, tracker: RegretTracker) -> np.ndarray:
        return tracker.swap_regret() if self.dynamics == "blum-mansour" else tracker.external_regret()


def _relabelled_transpose(incidence, position: np.ndarray):
    """``A^T`` in CSR form (one row per resource, entries in increasing action order), its action
    indices relabelled to ``position[action]``."""
    transposed = incidence.T.tocsr()
    transposed.sort_indices()
    return type(transposed)((transposed.data, position[transposed.indices].astype(transposed.indices.dtype),
                             transposed.indptr), shape=transposed.shape)


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
