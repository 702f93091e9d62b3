"""The jointly differentially private mediator (Kearns, Pai, Roth & Ullman 2014; Rogers & Roth 2014;
Dwork & Roth 2014, section 10.2.2).

Players report their types (a routing game's OD pairs: ``players[k]`` reports of class ``k``).  The
mediator runs no-regret dynamics for ``T`` rounds, one learner per class
(:mod:`dpgames.games.dynamics`). In round ``t`` every class ``k`` mixes with ``p_t,k``; the mediator
publishes the *noisy* expected loads ``y~_t = sum_k n_k A_k^T p_t,k + Z_t``, and every class's next
losses are its actions' costs at ``y~_t``. At the end one round ``t*`` is drawn uniformly
(independently of the reports) and each player is suggested an action drawn from her class's
``p_t*,k``: a draw from the uniform mixture of the rounds' profiles, the correlated distribution the
dynamics computed.

**Neighbouring relation**: one player's reported type changes (all other reports fixed).
**Sensitivity**: a class-``k`` player adds ``q = A_k^T p_t,k`` to the loads, a vector in ``[0,
1]^m`` with ``||q||_1 <= L`` (``L`` = the most resources any action uses).  Her changed report
replaces ``q`` by ``q'`` of the same kind, so ``||q - q'||_1 <= 2L`` and, entries of ``q - q'``
lying in [-1, 1], ``||q - q'||_2^2 <= ||q - q'||_1 <= 2L``: the l2 sensitivity of every round's
loads is ``sqrt(2L)`` (for pure paths, ``sqrt(|a xor a'|) <= sqrt(2L)`` is attained).  Everybody
else's strategies are functions of the published loads and their own reports only, so they change
only through what was published (adaptive composition). **Noise** (:mod:`dpgames.games.publisher`):
``"gaussian"``: ``N(0, sigma^2)`` per coordinate and round with ``sigma = sqrt(2L) sqrt(T / (2
rho))``: each round ``rho/T``-zCDP (Bun & Steinke 2016, Prop. 1.6), ``rho``-zCDP in total (Lemma
2.3), converted to (eps, delta) by the accountant.  ``"tree"``: the binary-tree counter of
:mod:`dpgames.privacy.tree_counter` releases the running sums of the loads with every round's vector
allowed to change (``relation="user"``, Gaussian noise, ``rho``-zCDP); the per-round loads are
differences of consecutive sums.  Under this user-level relation every tree node of ``s`` rounds
moves by ``s sqrt(2L)``, so the tree needs more noise than per-round Gaussian noise: it is offered
for comparison.  ``"none"``: the non-private dynamics. **Joint DP** (billboard lemma, Hsu et al.
2014; KPRU Lemma): player ``j``'s suggestion is a function of the published loads, ``t*`` and her
own report, so the suggestions to everybody but ``i`` are (eps, delta)-DP in ``i``'s report.
**Incentives** (Kearns, Pai, Roth & Ullman 2014, their incentive theorem for jointly DP mediators;
Dwork & Roth 2014, section 10.2.2; cited by name, see :mod:`dpgames.games.incentives`): with costs
scaled to [0, 1], truthful reporting and following is an approximate ex-post Nash equilibrium up to
about ``alpha + 2 eps + beta + delta`` (see :mod:`dpgames.games.incentives`, which measures the
gains).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, cast

import numpy as np

from dpgames.games.atomic import PureRegret, RegretTracker, UnilateralCosts, pure_regret
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate
from dpgames.games.game import CongestionGame
from dpgames.games.network import RoutingGame
from dpgames.games.publisher import Publisher, load_relation, make_publisher
from dpgames.privacy import PrivacyGuarantee, as_generator, zcdp_to_dp
from dpgames.privacy.rng import RNGLike
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
#: The most rounds a mediator runs (its random round and counters are int64: 2^62 leaves them room;
#: a run of even 1e12 rounds would take days).
MAX_ROUNDS = 2**62
WARMUP_GENERATIONS = 10  # column generation steps during the warm-up


@lru_cache(maxsize=256)
def rho_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to at most ``(epsilon, delta)``-DP.

    Bisection on the accountant's conversion (:func:`dpgames.privacy.zcdp_to_dp`, increasing in
    rho).

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
    """A mediator's privacy budget, checked: exactly one of ``epsilon`` (at the mediator's delta)
    and ``rho`` unless ``noise == "none"``; each given one ``> 0``.

    Raises
    ------
    ValidationError
        Both or neither given with noise, or a value that is not a number ``> 0``.
    """
    if noise != "none" and (epsilon is None) == (rho is None):
        raise ValidationError("epsilon", ": give exactly one of epsilon (at delta) or rho")
    return {
        name: positive(name, value)
        for name, value in (("epsilon", epsilon), ("rho", rho))
        if value is not None
    }


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
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 0.1]), [[[0], [1]]], [10]
    ... )
    >>> NonatomicCosts(game, np.array([10]))(
    ...     np.array([0.5, 0.5])
    ... ).tolist()  # 5 players on the variable road
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
    if evaluation == "nonatomic":
        return NonatomicCosts(game, players), evaluation
    raise ValidationError(
        "evaluation", f"must be 'auto', 'exact', 'mean-field' or 'nonatomic', got {evaluation!r}"
    )


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
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 0.1]), [[[0], [1]]], [10]
    ... )
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
    """The classes' no-regret learner and its loss scale: losses are costs over a per-class scale
    fixed from the first round's published costs (public data), so they start in [0, 1]."""

    def __init__(self, dynamics: Dynamics, learning_rate: float, rounds: int):
        self.dynamics, self.learning_rate, self.rounds = dynamics, learning_rate, rounds
        self.learner: Hedge | BlumMansour | None = None
        self.scale: np.ndarray | None = None  # per class

    def strategy(self, game: CongestionGame) -> np.ndarray:
        """The strategies to play (uniform until the first losses)."""
        return game.uniform_strategy() if self.learner is None else self.learner.strategy()

    def start(
        self, game: CongestionGame, link_costs: np.ndarray
    ) -> tuple[Hedge | BlumMansour, np.ndarray]:
        """The learner and the per-class loss scale, created at the first round's published link
        costs."""
        if self.learner is None:
            self.scale = np.maximum(game.class_max(game.incidence @ link_costs), 1e-12)
            rate = self.learning_rate * default_learning_rate(game, self.rounds)
            self.learner = (Hedge if self.dynamics == "hedge" else BlumMansour)(game, rate)
        return self.learner, cast(np.ndarray, self.scale)

    def grow(self, grown: CongestionGame, position: np.ndarray) -> None:
        """Follow column generation: the learner on the grown game (old action ``i`` at
        ``position[i]``)."""
        if isinstance(self.learner, Hedge):
            self.learner = self.learner.grown(grown, position)
        elif self.learner is not None:
            self.learner = BlumMansour(grown, self.learner.learning_rate)


class _Rounds:
    """A round of dynamics on one game: from the published link costs, charge the learner (and, for
    the nonatomic evaluation, the regret tracker at the true link costs), and the next round's
    loads.

    Under Hedge the round is compiled (:mod:`dpgames.games._rounds`: the costs and the charges in
    one pass over the incidence, the new strategies and the next loads in another; numba, imported
    on first use); under Blum-Mansour it is numpy (``A c``, the learner's update, ``A^T f``).  Same
    numbers either way as the plain numpy reference mediator of tests/mediator_oracle.py, bit for
    bit."""

    def __init__(self, game: CongestionGame, learning: _Learning):
        self.game, self.learning = game, learning
        self._weight = game.spread(game.demand.astype(float))
        self._compiled = learning.dynamics == "hedge"
        if self._compiled:
            self._kernels = _kernels()
            a, m = game.incidence, game.num_resources
            self._lanes = self._kernels.Lanes(a.indptr, a.indices, game.class_start, m)
            end = m + self._kernels.SINKS  # (the sinks: cost 0, loads discarded)
            # costs ..., loads
            self._sink = (
                np.zeros(end),
                np.zeros(end),
                np.empty(end),
                np.empty(end),
            )
            # Hedge's exp(min(eta l) - eta l), then its weights
            self._factor = np.empty(game.num_actions)
            # exp's put aside
            self._tiny = (
                np.empty(game.num_actions, dtype=np.int64),
                np.empty(game.num_actions),
            )
            self._strategies = np.empty(game.num_actions), np.empty(game.num_actions)
            # classes whose weights may underflow
            self._unsafe = np.empty(game.num_classes, dtype=np.int64)
            # classes of more than 8 actions: numpy's pairwise sums (a separate compilation: None
            # prunes it)
            self._wide = True if game.actions_per_class.max() > 8 else None
        self.loads = self._loads(learning.strategy(game))

    def _loads(self, strategy: np.ndarray) -> np.ndarray:
        """``A^T f`` for every class's players mixing with ``strategy`` (summed in action order)."""
        if not self._compiled:
            return self.game.loads(strategy * self._weight)
        loads = np.empty(self.game.num_resources)
        self._kernels.spread_loads(
            self._lanes.indptr, self._lanes.plain_indices, strategy, self._weight, loads
        )
        return loads

    def largest_regret(self, per_class: np.ndarray, per_action: np.ndarray, rounds: int) -> float:
        """The largest external regret over the classes with players: ``(per_class - class min of
        per_action) / rounds`` (a regret tracker's ``follow`` and ``deviate``, or Hedge's expected
        and cumulative losses), as :meth:`RegretTracker.external_regret` computes it (under Hedge:
        compiled)."""
        return float(
            self._kernels.largest_regret(
                self._lanes.class_start, per_class, per_action, rounds, self.game.demand > 0
            )
        )

    def play(
        self,
        link_costs: np.ndarray,
        true_costs: np.ndarray | None = None,
        tracker: RegretTracker | None = None,
        observed: RegretTracker | None = None,
    ) -> None:
        """Charge one round: the learner at the published ``link_costs``; ``tracker`` (if given) at
        the ``true_costs`` of the links; ``observed`` (Blum-Mansour) at the losses.  Sets
        :attr:`loads` to the next round's."""
        game = self.game
        strategy = self.learning.strategy(game)
        learner, scale = self.learning.start(game, link_costs)
        if not self._compiled:
            loss = (game.incidence @ link_costs) / game.spread(scale)
            learner.update(strategy, loss)
            if observed is not None:
                observed.add(strategy, loss)
            if tracker is not None:
                tracker.add(strategy, game.incidence @ cast(np.ndarray, true_costs))
            self.loads = self._loads(learner.strategy())
        else:
            self._hedge_round(
                cast(Hedge, learner), scale, strategy, link_costs, true_costs, tracker
            )

    def _exp(self, values: np.ndarray, tiny: int) -> None:
        """``values = exp(values)`` with numpy's ``exp`` (as numpy's Hedge), the ``tiny`` arguments
        the kernel put aside (:data:`dpgames.games._rounds.TINY`) taken apart and written back."""
        np.exp(values, out=values)
        if tiny:
            index, value = self._tiny
            values[index[:tiny]] = np.exp(value[:tiny])

    def _hedge_round(
        self,
        hedge: Hedge,
        scale: np.ndarray,
        strategy: np.ndarray,
        link_costs: np.ndarray,
        true_costs: np.ndarray | None,
        tracker: RegretTracker | None,
    ) -> None:
        """:meth:`play` under Hedge: the compiled round (:mod:`dpgames.games._rounds`)."""
        lanes, m, kernels = self._lanes, self.game.num_resources, self._kernels
        published, true, next_loads, spare = self._sink
        published[:m] = link_costs
        if tracker is not None:
            true[:m] = true_costs
        factor, next_strategy = self._factor, self._strategies[0]
        tracked = (
            (true, tracker.follow, tracker.deviate) if tracker is not None else (None, None, None)
        )
        learner = (hedge.rates, strategy, hedge.cumulative, hedge.expected_loss)
        largest, count, tiny = kernels.charge(
            lanes.arrays,
            learner,
            published,
            scale,
            factor,
            self._unsafe,
            self._tiny,
            *tracked,
            self._wide,
        )
        self._exp(factor, tiny)
        if count and kernels.underflows(
            lanes.class_start, factor, strategy, self._unsafe[:count], self._wide
        ):
            # every class from log space, as numpy's Hedge; the weights are these exponentials
            self._exp(
                factor,
                kernels.log_scores(
                    lanes.class_start, hedge.rates, hedge.cumulative, factor, *self._tiny
                ),
            )
            strategy = strategy[:0]
        kernels.renew(
            lanes.class_start,
            lanes.group_start,
            lanes.offset,
            lanes.length,
            lanes.indices,
            factor,
            strategy,
            self._weight,
            next_strategy,
            next_loads,
            self._wide,
        )
        hedge.adopt(next_strategy)
        if tracker is not None:
            tracker.charged(largest)
        # this round's loads stay valid until the next
        self._sink = (
            published,
            true,
            spare,
            next_loads,
        )
        # ... and its strategy too (two buffers, alternating)
        self._strategies = self._strategies[::-1]
        self.loads = next_loads[:m]


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
    """The private mediator (module docstring): no-regret dynamics on noisy published loads, then
    one suggestion per player from a uniformly drawn round; jointly differentially private.

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
        Multiplies Hedge's default ``sqrt(8 ln N / T)`` (losses are costs over a public per-class
        scale).
    evaluation : {"auto", "exact", "mean-field", "nonatomic"}
        How regrets are measured on the true (atomic) game: ``"exact"`` (expected costs of
        independent mixing, exact for integer cost powers), ``"mean-field"`` (loads at their means,
        the player's own share removed), ``"nonatomic"`` (costs at the expected loads), ``"auto"``
        (exact when affordable).
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
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 0.05]), [[[0], [1]]], [20]
    ... )
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
        checked = {
            "rounds": positive_int("rounds", self.rounds, high=MAX_ROUNDS),
            "noise": choice("noise", self.noise, ("gaussian", "tree", "none")),
            "dynamics": choice("dynamics", self.dynamics, ("hedge", "blum-mansour")),
            "delta": probability("delta", self.delta),
            "learning_rate": positive("learning_rate", self.learning_rate),
            "max_paths": positive_int("max_paths", self.max_paths),
            "evaluation": choice(
                "evaluation", self.evaluation, ("auto", "exact", "mean-field", "nonatomic")
            ),
            "keep_history": choice("keep_history", self.keep_history, (False, True)),
        }
        rounds = checked["rounds"]
        checked["warmup"] = (
            min(100, rounds // 10)
            if self.warmup is None
            else integer("warmup", self.warmup, 0, rounds - 1)
        )
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
        """The neighbouring relation of the guarantee (see
        :func:`dpgames.games.publisher.load_relation`)."""
        return load_relation(links)

    def publisher(self, links: int, resources: int, rng: RNGLike = None) -> Publisher:
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
        resources = positive_int("resources", resources)
        # (rho = inf, unused, without noise)
        return make_publisher(
            self.noise,
            rounds=self.rounds,
            rho=self.total_rho,
            delta=self.delta,
            links=links,
            resources=resources,
            rng=as_generator(rng),
        )

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
        if (
            reported.shape != (game.num_classes,)
            or np.any(reported != np.round(reported))
            or np.any(reported < 0)
        ):
            raise ValidationError(
                "players",
                ": the mediator needs a whole number >= 0 of reported players per class "
                "(see dpgames.games.atomic.round_players)",
            )
        return game.with_demand(reported), max(int(cap), game.max_action_size)

    def run(
        self,
        model: CongestionGame | RoutingGame,
        players: np.ndarray | None = None,
        rng: RNGLike = None,
    ) -> MediatorOutcome:
        """Run on the reports ``players[k]`` per class (default: the model's demand, whole numbers).

        A routing game starts from each OD pair's free-flow shortest path and, during the first
        ``warmup`` rounds, adds each OD pair's shortest path under the *published* link costs
        (column generation on public data: post-processing, no privacy cost; paths over ``L`` links
        are not added).  The suggestion round ``t*`` and the regrets use the rounds after the
        warm-up.

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
        T, W = self.rounds, self._warmup_rounds(model)
        suggested_round = W + int(gen.integers(T - W))  # independent of the reports
        publisher = self.publisher(cap, game.num_resources, gen)
        learning = _Learning(self.dynamics, self.learning_rate, T)
        rounds = self._warm_up(model, game, cap, learning, publisher)
        game = rounds.game
        play = self._play(rounds, publisher, W, suggested_round)
        suggestions = _sample_counts(game, players, play.chosen, gen)
        return MediatorOutcome(
            game=game,
            players=players,
            suggestions=suggestions,
            suggested_round=suggested_round + 1,
            alpha=play.alpha,
            expected_cost=play.expected_cost,
            ex_post=pure_regret(game, suggestions),
            privacy=publisher.guarantee,
            rho=self.total_rho,
            sigma=publisher.sigma,
            sensitivity_l2=math.sqrt(2 * cap),
            evaluation=play.evaluation,
            cost_range=play.cost_range,
            trace=play.trace,
            history=play.history,
        )

    def _warmup_rounds(self, model) -> int:
        """Rounds of warm-up: ``warmup`` for a routing game (an int after ``__post_init__``), else
        0."""
        return cast(int, self.warmup) if isinstance(model, RoutingGame) else 0

    def _warm_up(
        self, model, game: CongestionGame, cap: int, learning: _Learning, publisher: Publisher
    ) -> _Rounds:
        """The warm-up (routing games): dynamics on published costs, and every ``warmup / 10``
        rounds each OD pair's shortest path under the published link costs joins its path set
        (column generation). Returns the rounds on the final game, ready for the play loop."""
        warmup = self._warmup_rounds(model)
        generate_every = max(1, warmup // WARMUP_GENERATIONS)
        rounds = _Rounds(game, learning)
        for t in range(warmup):
            link_costs = game.costs(np.maximum(publisher.publish(rounds.loads), 0.0))
            rounds.play(link_costs)
            if (t + 1) % generate_every == 0:
                grown, position, _ = model.new_columns(game, link_costs, cap, self.max_paths)
                if grown is not game:
                    game = grown
                    learning.grow(grown, position)
                    rounds = _Rounds(game, learning)
        return rounds

    def _play(
        self, rounds: _Rounds, publisher: Publisher, first: int, suggested_round: int
    ) -> _Play:
        """Rounds ``first .. T - 1``: dynamics on the published costs, regrets on the true game (the
        evaluator's model), the strategies of round ``suggested_round`` kept."""
        T, swap, game, learning = (
            self.rounds,
            self.dynamics == "blum-mansour",
            rounds.game,
            rounds.learning,
        )
        evaluate, evaluation = evaluator(game, game.demand, self.evaluation, T - first)
        nonatomic = isinstance(evaluate, NonatomicCosts)
        live = game.demand > 0
        tracker = RegretTracker(game, swap=swap)
        observed = RegretTracker(game, swap=True) if swap else None
        every = max(1, (T - first) // TRACE_POINTS)
        trace: dict[str, list[float]] = {"round": [], "alpha": [], "observed_regret": []}
        history = np.empty((T - first, game.num_actions)) if self.keep_history else None
        chosen = None
        for t in range(first, T):
            strategy = learning.strategy(game)
            loads = rounds.loads
            link_costs = game.costs(np.maximum(publisher.publish(loads), 0.0))
            if nonatomic:
                rounds.play(link_costs, game.costs(loads), tracker, observed)
            else:
                tracker.add(strategy, evaluate(strategy))
                rounds.play(link_costs, observed=observed)
            if history is not None:
                history[t - first] = strategy
            if t == suggested_round:
                chosen = strategy.copy()  # (the compiled round reuses its buffers)
            if (t + 1 - first) % every == 0 or t + 1 == T:
                trace["round"].append(t + 1)
                if swap:
                    trace["alpha"].append(float(tracker.swap_regret()[live].max()))
                    trace["observed_regret"].append(
                        float(cast(RegretTracker, observed).swap_regret()[live].max())
                    )
                else:
                    hedge = cast(Hedge, learning.learner)
                    trace["alpha"].append(
                        rounds.largest_regret(tracker.follow, tracker.deviate, tracker.rounds)
                    )
                    trace["observed_regret"].append(
                        rounds.largest_regret(hedge.expected_loss, hedge.cumulative, t + 1)
                    )
        return _Play(
            cast(np.ndarray, chosen),
            self._regret(tracker),
            tracker.expected_cost(),
            evaluation,
            tracker.largest,
            {k: np.asarray(v) for k, v in trace.items()},
            history,
        )

    def _regret(self, tracker: RegretTracker) -> np.ndarray:
        return (
            tracker.swap_regret() if self.dynamics == "blum-mansour" else tracker.external_regret()
        )


@lru_cache(maxsize=1)
def _kernels():
    """The compiled round (:mod:`dpgames.games._rounds`), imported on first use: ``import dpgames``
    does not import numba."""
    from dpgames.games import _rounds

    return _rounds


def _sample_counts(
    game: CongestionGame, players: np.ndarray, strategy: np.ndarray, gen: np.random.Generator
) -> np.ndarray:
    """Every player draws her action from her class's strategy independently: multinomial counts per
    class (classes padded to the widest action set)."""
    width = int(game.actions_per_class.max())
    offset = np.arange(game.num_actions) - game.class_start[game.action_class]
    table = np.zeros((game.num_classes, width))
    table[game.action_class, offset] = strategy
    table /= table.sum(axis=1, keepdims=True)
    counts = gen.multinomial(players.astype(np.int64), table)
    return counts[game.action_class, offset].astype(float)
