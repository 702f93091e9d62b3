"""The jointly differentially private mediator for anonymous games (Kearns, Pai, Roth & Ullman 2014,
"Mechanism design in large games: incentives and privacy"; the congestion-game version is
:mod:`dpgames.games.mediator`).

Players report their types (``reports[k]`` players of type ``k``).  For ``T`` rounds every type
``k`` mixes with ``p_t,k`` (one no-regret learner per type, :mod:`dpgames.games.dynamics`: Hedge for
coarse correlated, Blum-Mansour for correlated equilibria); the mediator publishes the *noisy*
expected action histogram ``y~_t = sum_k n_k p_t,k + Z_t`` and a type-``k`` learner is charged the
losses ``1 - u(k, ., h_t,k)`` at the mean-field histogram of the others read off the billboard,
``h_t,k = clip(y~_t - p_t,k, 0, n - 1)`` (her own expected share removed; no count of others lies
outside ``[0, n - 1]``).  At the end a round ``t*`` is drawn uniformly (independently of the
reports) and each player's suggestion is drawn from her type's ``p_t*,k``: a draw from the uniform
mixture of the rounds' product profiles.

**Neighbouring relation**: one player's reported type changes.  Her contribution to ``y_t`` moves
from ``p_t,k`` to ``p_t,k'``: by at most 2 in l1 and ``sqrt(2)`` in l2 (the publisher's ``L = 1``).
**Noise**: :mod:`dpgames.games.publisher` (Gaussian noise per round with zCDP accounting, the
binary-tree counter, or none), converted to (eps, delta) by the
:class:`~dpgames.privacy.Accountant`. **Joint DP** (billboard lemma): every type's strategies are
functions of the published histograms alone, so the suggestions to everybody but ``i`` are
post-processing of the billboard: (eps, delta)-DP in ``i``'s report.

**What is measured** (on the true game, exact expectations over the others' independent draws when
affordable, see :meth:`dpgames.games.anonymous.AnonymousGame.expected_payoffs`), per type ``k``:

* ``external_regret``, ``swap_regret``: of the suggested correlated distribution; ``alpha`` is the
  swap regret under Blum-Mansour, the external regret under Hedge;
* ``cross_regret[k, k']``: the most a type-``k`` player gains by acting, through any map ``f``, on a
  suggestion drawn for type ``k'`` instead of following her own (``cross_regret[k, k]`` = swap
  regret);
* the decomposition ``alpha <= regret_bound + 2 * feed_error``: the learners' regret on the payoffs
  they were fed is at most Hedge's ``ln N / eta + eta T / 8`` per round (times ``N`` for
  Blum-Mansour), and the true regret differs by at most twice the mean gap between fed and true
  payoffs.  For own-count games the gap is at most ``Delta ||Z_t||_inf`` (interpolated tables are
  ``Delta``-Lipschitz in each count) plus the mean-field error, both recorded (``noise_inf``,
  ``mean_field_error``).

**Incentives** (:func:`misreport_gains`).  What the sources state (their abstracts; the theorem
texts could not be retrieved, so no constant of theirs is printed here): Kearns, Pai, Rogers, Roth &
Ullman, "Robust mediators in large games" (arXiv 1512.02698, which subsumes KPRU) show that in any
large game a *strong* mediator (players may opt out or ignore suggestions but cannot misreport)
implements an approximate equilibrium, and that for *congestion* games a *weak* mediator (players
may misreport) suffices; Rogers & Roth (EC 2014) give the weak mediator for large congestion games.
For general anonymous games this module therefore measures, rather than assumes, the weak-mediator
incentive: ``eta``, the gain of a type-``k`` player who reports ``k'`` and then best-responds to her
suggestion, computed exactly on the realised noise (common random numbers).  The bound asserted by
the tests is the post-processing form we can justify: her payoff after the lie is a function ``h``
with values in [0, 1] of the billboard alone (every type's strategy is), so (eps, delta)-DP gives
``E[h(B')] <= e^eps E[h(B)] + delta``, and ``E[h(B)]`` is her truthful payoff plus ``cross_regret[k,
k']``; hence ``E[eta] <= E[cross_regret[k, k']] + (e^eps - 1) + delta``.  The ``cross_regret`` term
(what a suggestion drawn for another type reveals about the correlated device) is where general
games differ from congestion games; under a strong mediator only ``swap_regret`` remains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from dpgames.games.anonymous import AnonymousGame, Evaluation, Method
from dpgames.games.costs import PolynomialCosts
from dpgames.games.dynamics import BlumMansour, Hedge, default_learning_rate, hedge_regret_bound
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import budget_rho, checked_budget
from dpgames.games.publisher import make_publisher
from dpgames.privacy import PrivacyGuarantee
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    index_pairs,
    non_negative,
    positive,
    positive_int,
    probability,
)

Noise = Literal["gaussian", "tree", "none"]
Dynamics = Literal["hedge", "blum-mansour"]
MAX_ROUNDS = 10**6
#: Largest eps whose e^eps is a finite float (beyond it the privacy term is its cap, 1).
EXP_LIMIT = math.log(np.finfo(float).max)
TRACE_POINTS = 100


def learner_layout(types: int, actions: int) -> CongestionGame:
    """The class structure the learners of :mod:`dpgames.games.dynamics` run on: ``types`` classes
    of ``actions`` actions each (flat, type-major: a ``(K, A)`` array's ``ravel()``).  The learners
    read only the class structure; the resources and costs of this placeholder game are never used.

    Parameters
    ----------
    types, actions : int
        ``K`` and ``A``.

    Returns
    -------
    CongestionGame
    """
    return CongestionGame.from_action_lists(
        PolynomialCosts(np.zeros(actions), np.zeros(actions)),
        [[[a] for a in range(actions)]] * types,
        np.ones(types),
    )


@dataclass(frozen=True)
class AnonymousOutcome:
    """What the anonymous mediator returns and what was measured (per-round averages; payoff units).

    Attributes
    ----------
    game : AnonymousGame
        The game with the reported players.
    suggestions : numpy.ndarray, shape (K, A)
        Players of each type suggested each action.
    suggested_round : int
        ``t*`` (1-based).
    alpha, external_regret, swap_regret : numpy.ndarray, shape (K,)
        Regrets of the suggested distribution on the true game (``alpha``: swap under Blum-Mansour).
    cross_regret : numpy.ndarray, shape (K, K)
        Gains from acting on another type's suggestion (module docstring).
    expected_payoff : numpy.ndarray, shape (K,)
        A player's expected payoff following.
    observed_regret : numpy.ndarray, shape (K,)
        The learners' regret (external or swap) on the payoffs they were fed.
    regret_bound : float
        Hedge's bound per round (times ``A`` under Blum-Mansour) for the learners' regret.
    feed_error : numpy.ndarray, shape (K,)
        Mean over rounds of ``max_a |fed payoff - true payoff|``.
    noise_inf : float
        Mean over rounds of ``||Z_t||_inf`` (the realised noise of the published histogram).
    mean_field_error : numpy.ndarray, shape (K,)
        Mean over rounds of ``max_a |payoff at the true expected histogram - true payoff|``.
    privacy : PrivacyGuarantee
        The total (eps, delta) of the billboard.
    rho, sigma : float
        The zCDP budget and the noise scale.
    evaluation : {"exact", "mean-field"}
        How the true payoffs were evaluated.
    trace : dict of numpy.ndarray
        ``round`` and ``alpha`` (the running regret) at up to 100 rounds.
    history : numpy.ndarray or None
        Every round's strategies, ``(T, K, A)`` (``keep_history=True``).

    Examples
    --------
    >>> from dpgames.games.anonymous_generators import crowding_game
    >>> out = AnonymousMediator(rounds=50, noise="none").run(
    ...     crowding_game([5, 5], [[1.0, 0.5], [0.5, 1.0]]), rng=1
    ... )
    >>> out.suggestions.sum(axis=1).tolist(), out.suggested_round <= 50
    ([5, 5], True)
    >>> bool(abs(out.welfare - 5 * out.expected_payoff.sum()) < 1e-12)
    True
    """

    game: AnonymousGame
    suggestions: np.ndarray
    suggested_round: int
    alpha: np.ndarray
    external_regret: np.ndarray
    swap_regret: np.ndarray
    cross_regret: np.ndarray
    expected_payoff: np.ndarray
    observed_regret: np.ndarray
    regret_bound: float
    feed_error: np.ndarray
    noise_inf: float
    mean_field_error: np.ndarray
    privacy: PrivacyGuarantee
    rho: float
    sigma: float
    evaluation: Method
    trace: dict[str, np.ndarray]
    history: np.ndarray | None = field(default=None, repr=False)

    @property
    def max_alpha(self) -> float:
        """The largest ``alpha`` over types with players."""
        return float(self.alpha[self.game.players > 0].max())

    @property
    def welfare(self) -> float:
        """Everybody's expected payoff following: ``sum_k n_k expected_payoff[k]``."""
        return float(self.game.players @ self.expected_payoff)


class _Regrets:
    """Accumulates ``C[k, k', s, a] = sum_t p_t,k'(s) V_t,k(a)`` (and the per-type sums) over
    rounds."""

    def __init__(self, types: int, actions: int):
        self.cross = np.zeros((types, types, actions, actions))
        self.rounds = 0

    def add(self, strategy: np.ndarray, payoff: np.ndarray) -> None:
        self.cross += np.einsum("js,ka->kjsa", strategy, payoff)
        self.rounds += 1

    def results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(expected payoff, external, swap, cross) per round."""
        c = self.cross / max(self.rounds, 1)
        K = c.shape[0]
        own = c[np.arange(K), np.arange(K)]  # (K, s, a)
        follow = np.einsum("kss->k", own)
        external = own.sum(axis=1).max(axis=1) - follow
        cross = c.max(axis=3).sum(axis=2) - follow[:, None]
        swap = np.diagonal(cross).copy()
        return follow, np.maximum(external, 0.0), np.maximum(swap, 0.0), np.maximum(cross, 0.0)


@dataclass(frozen=True)
class AnonymousMediator:
    """The private mediator for anonymous games (module docstring).

    Parameters
    ----------
    rounds : int
        ``T`` (default 1000).
    epsilon : float or None
        Total epsilon at ``delta`` (default 1); give exactly one of ``epsilon`` and ``rho`` unless
        ``noise="none"``.
    delta : float
        The delta of the guarantee (default 1e-6).
    rho : float or None
        Total zCDP budget instead of ``epsilon``.
    noise : {"gaussian", "tree", "none"}
        How the histograms are published (:mod:`dpgames.games.publisher`).
    dynamics : {"hedge", "blum-mansour"}
        Coarse correlated (Hedge) or correlated (Blum-Mansour swap regret) equilibria.
    learning_rate : float
        Multiplies Hedge's tuning ``sqrt(8 ln A / T)`` (default 1).
    evaluation : {"auto", "exact", "mean-field"}
        How the regrets are measured on the true game.
    keep_history : bool
        Keep every round's strategies.

    Raises
    ------
    ValidationError
        If a parameter is out of range, or both or neither of ``epsilon`` and ``rho`` are given.

    Examples
    --------
    >>> from dpgames.games.anonymous_generators import minority_game
    >>> out = AnonymousMediator(rounds=200, epsilon=1.0).run(minority_game([30]), rng=0)
    >>> int(out.suggestions.sum()), out.evaluation, round(out.privacy.epsilon, 6) <= 1.0
    (30, 'exact', True)
    >>> bool(out.max_alpha <= out.regret_bound + 2 * out.feed_error.max())
    True
    """

    rounds: int = 1000
    epsilon: float | None = 1.0
    delta: float = 1e-6
    rho: float | None = None
    noise: Noise = "gaussian"
    dynamics: Dynamics = "hedge"
    learning_rate: float = 1.0
    evaluation: Evaluation = "auto"
    keep_history: bool = False

    def __post_init__(self) -> None:
        checked = {
            "rounds": positive_int("rounds", self.rounds, high=MAX_ROUNDS),
            "noise": choice("noise", self.noise, ("gaussian", "tree", "none")),
            "dynamics": choice("dynamics", self.dynamics, ("hedge", "blum-mansour")),
            "delta": probability("delta", self.delta),
            "learning_rate": positive("learning_rate", self.learning_rate),
            "evaluation": choice("evaluation", self.evaluation, ("auto", "exact", "mean-field")),
            "keep_history": choice("keep_history", self.keep_history, (False, True)),
        }
        checked.update(checked_budget(checked["noise"], self.epsilon, self.rho))
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def total_rho(self) -> float:
        """The zCDP budget of the billboard (``inf`` without noise)."""
        return budget_rho(self.noise, self.epsilon, self.rho, self.delta)

    def run(
        self, game: AnonymousGame, reports: np.ndarray | None = None, rng: RNGLike = None
    ) -> AnonymousOutcome:
        """Run on the reported players per type (default: the game's own).

        Parameters
        ----------
        game : AnonymousGame
        reports : array_like of int, shape (K,), optional
            Reported players per type (the same total ``n``).
        rng : numpy.random.Generator, int or None
            ``t*``, the noise and the suggestions: same seed, same outcome.

        Returns
        -------
        AnonymousOutcome

        Raises
        ------
        ValidationError
            If ``game`` is not an :class:`AnonymousGame` or ``reports`` are not whole numbers with
            its total.
        """
        if not isinstance(game, AnonymousGame):
            raise ValidationError("game", f"must be an AnonymousGame, got {type(game).__name__}")
        if reports is not None:
            game = game.with_players(reports)
        gen = as_generator(rng)
        T, K, A = self.rounds, game.num_types, game.num_actions
        suggested_round = int(gen.integers(T))  # independent of the reports
        publisher = make_publisher(
            self.noise,
            rounds=T,
            rho=self.total_rho,  # (ignored for "none")
            delta=self.delta,
            links=1,
            resources=A,
            rng=gen,
        )
        layout = learner_layout(K, A)
        rate = self.learning_rate * default_learning_rate(layout, T)
        learner = (Hedge if self.dynamics == "hedge" else BlumMansour)(layout, rate)
        evaluation = game.evaluation_method(self.evaluation, calls=T)
        players = game.players.astype(float)
        top = game.num_players - 1.0  # no count of others exceeds n - 1
        own = np.arange(K)
        regrets, observed = _Regrets(K, A), _Regrets(K, A)
        feed_error, mf_error, noise_inf = np.zeros(K), np.zeros(K), 0.0
        every = max(1, T // TRACE_POINTS)
        trace: dict[str, list] = {"round": [], "alpha": []}
        history = np.empty((T, K, A)) if self.keep_history else None
        chosen = None
        for t in range(T):  # a loop over rounds: everything inside costs O(K^2 A^2), never O(n)
            flat = learner.strategy()
            p = flat.reshape(K, A)
            loads = players @ p
            published = publisher.publish(loads)
            noise_inf += float(np.abs(published - loads).max())
            fed = game.payoffs(np.clip(published[None, :] - p, 0.0, top))[own, own]  # (K, A)
            learner.update(flat, (1.0 - fed).ravel())
            true = game.expected_payoffs(p, evaluation=evaluation)
            mean_field = game.payoffs(np.clip(loads[None, :] - p, 0.0, top))[own, own]
            feed_error += np.abs(fed - true).max(axis=1)
            mf_error += np.abs(mean_field - true).max(axis=1)
            regrets.add(p, true)
            observed.add(p, fed)
            if history is not None:
                history[t] = p
            if t == suggested_round:
                chosen = p.copy()
            if (t + 1) % every == 0 or t + 1 == T:
                trace["round"].append(t + 1)
                trace["alpha"].append(float(self._alpha(regrets)[game.players > 0].max()))
        follow, external, swap, cross = regrets.results()
        _, obs_external, obs_swap, _ = observed.results()
        swapping = self.dynamics == "blum-mansour"
        bound = (
            float(hedge_regret_bound(A, T, rate[0])) / T * (A if swapping else 1) if A > 1 else 0.0
        )
        assert chosen is not None, "suggested_round is one of the T rounds"
        suggestions = gen.multinomial(game.players, chosen).astype(np.int64)
        return AnonymousOutcome(
            game=game,
            suggestions=suggestions,
            suggested_round=suggested_round + 1,
            alpha=swap if swapping else external,
            external_regret=external,
            swap_regret=swap,
            cross_regret=cross,
            expected_payoff=follow,
            observed_regret=obs_swap if swapping else obs_external,
            regret_bound=bound,
            feed_error=feed_error / T,
            noise_inf=noise_inf / T,
            mean_field_error=mf_error / T,
            privacy=publisher.guarantee,
            rho=self.total_rho,
            sigma=publisher.sigma,
            evaluation=evaluation,
            trace={k: np.asarray(v) for k, v in trace.items()},
            history=history,
        )

    def _alpha(self, regrets: _Regrets) -> np.ndarray:
        _, external, swap, _ = regrets.results()
        return swap if self.dynamics == "blum-mansour" else external


@dataclass(frozen=True)
class MisreportGains:
    """Gains from misreporting, then best-responding (see :func:`misreport_gains`).

    Attributes
    ----------
    true_type, lie_type : numpy.ndarray of int
        The audited pairs.
    eta : numpy.ndarray
        The exact gain of each pair on the realised noise (payoff units; may be negative).
    cross_regret : numpy.ndarray
        ``cross_regret[k, k']`` of the truthful run, per pair.
    epsilon, delta : float
        The billboard's guarantee.

    Examples
    --------
    >>> from dpgames.games.anonymous_generators import market_entry
    >>> gains = misreport_gains(
    ...     AnonymousMediator(rounds=20, epsilon=0.5), market_entry([2, 1], 1), rng=0
    ... )
    >>> gains.true_type.tolist(), gains.lie_type.tolist(), round(gains.privacy_term, 4)
    ([0, 1], [1, 0], 0.6487)
    >>> bool((gains.eta <= 1).all() and (gains.cross_regret >= 0).all())
    True
    """

    true_type: np.ndarray
    lie_type: np.ndarray
    eta: np.ndarray
    cross_regret: np.ndarray
    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        arrays = {
            name: finite_array(name, getattr(self, name), ndim=1)
            for name in ("true_type", "lie_type", "eta", "cross_regret")
        }
        if len({a.size for a in arrays.values()}) > 1:
            raise ValidationError(
                "eta", "true_type, lie_type, eta and cross_regret need one entry per audited pair"
            )
        for name in ("true_type", "lie_type"):
            types = arrays[name]
            if (
                (types < 0).any()
                or (types != np.round(types)).any()
                or (types > np.iinfo(np.int64).max).any()
            ):
                raise ValidationError(name, "must hold type indices: whole numbers >= 0")
            arrays[name] = types.astype(np.int64)
        for name, value in arrays.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "epsilon", non_negative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", probability("delta", self.delta))

    @property
    def privacy_term(self) -> float:
        """``min(1, (e^eps - 1) + delta)``: the bound on ``E[eta - cross_regret]`` (module
        docstring), capped at 1, the most a gain can be with payoffs in [0, 1]."""
        if self.epsilon > EXP_LIMIT:  # e^eps beyond the float range: only the cap is left
            return 1.0
        return min(1.0, math.expm1(self.epsilon) + self.delta)

    @property
    def max_eta(self) -> float:
        """The largest gain over the audited pairs (0 when no pair was audited: nobody can lie)."""
        return float(self.eta.max()) if self.eta.size else 0.0


def misreport_gains(
    mediator: AnonymousMediator,
    game: AnonymousGame,
    rng: RNGLike = None,
    pairs: list[tuple[int, int]] | None = None,
) -> MisreportGains:
    """``eta``: what one player of type ``k`` gains by reporting ``k'`` and then playing the best
    map from the suggestion she gets to her actions, against everybody else following; exact
    expectations over the others' draws and ``t*``, on the realised noise (the truthful and the
    lying run share ``rng``'s seed).

    Parameters
    ----------
    mediator : AnonymousMediator
    game : AnonymousGame
        The true game (its players are the true types).
    rng : int or numpy.random.Generator or None
        The seed of both runs.
    pairs : list of (int, int), optional
        The (true type, lie) pairs; default every pair with a player of the true type.

    Returns
    -------
    MisreportGains

    Raises
    ------
    ValidationError
        If ``mediator`` or ``game`` has the wrong type or a pair names no type / no player.
    """
    if not isinstance(mediator, AnonymousMediator):
        raise ValidationError(
            "mediator", f"must be an AnonymousMediator, got {type(mediator).__name__}"
        )
    if not isinstance(game, AnonymousGame):
        raise ValidationError("game", f"must be an AnonymousGame, got {type(game).__name__}")
    K = game.num_types
    if pairs is None:
        pairs = [(k, j) for k in range(K) if game.players[k] > 0 for j in range(K) if j != k]
    checked = []
    for k, j in index_pairs("pairs", pairs, K):
        if game.players[k] < 1 or k == j:
            raise ValidationError(
                "pairs", f"({k}, {j}): the true type needs a player and the lie must differ"
            )
        checked.append((k, j))
    seed = int(as_generator(rng).integers(2**63))
    run = replace(mediator, keep_history=True)
    truthful = run.run(game, rng=seed)
    eta, cross = np.zeros(len(checked)), np.zeros(len(checked))
    for i, (k, j) in enumerate(checked):
        reports = game.players.copy()
        reports[k] -= 1
        reports[j] += 1
        lied = run.run(game, reports, rng=seed)
        others = game.players - np.eye(K, dtype=np.int64)[k]
        table = np.zeros((game.num_actions, game.num_actions))  # suggestion s' x action a
        assert lied.history is not None, "run with keep_history=True"
        for p in lied.history:  # a loop over rounds
            table += np.outer(p[j], game.expected_payoffs(p, others, truthful.evaluation)[k])
        eta[i] = table.max(axis=1).sum() / mediator.rounds - truthful.expected_payoff[k]
        cross[i] = truthful.cross_regret[k, j]
    eps = math.inf if mediator.noise == "none" else truthful.privacy.epsilon
    pairs_arr = np.array(checked, dtype=np.int64).reshape(-1, 2)
    return MisreportGains(pairs_arr[:, 0], pairs_arr[:, 1], eta, cross, eps, mediator.delta)
