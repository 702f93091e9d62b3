"""Incentives under the private mediator: what a player gains by lying about her type, or by
ignoring her suggestion, measured on the true game (Kearns, Pai, Roth & Ullman 2014; Dwork & Roth
10.2.2).

For a player of true class ``k``:

* **ignoring the suggestion** gains ``alpha_k``: her regret under the suggested correlated
  distribution (the best fixed action instead of following; the best map from suggestions to actions
  under Blum-Mansour dynamics);
* **misreporting** class ``k'`` and then best-responding: the mediator runs on the changed reports
  (``n_k - 1``, ``n_k' + 1``), she receives a suggestion of class ``k'``'s and plays, knowing it,
  the best action of her own class against everybody else's play in that run (the best map from the
  suggestion she gets to her actions).  Gain = her expected cost when truthful and following minus
  that.

Both runs use the same seed (common random numbers: the same noise draws), so the difference
isolates the effect of her report.  Expected costs over the other players' independent draws are
exact (:class:`~dpgames.games.atomic.UnilateralCosts`); over the mediator's noise they are averaged
over ``seeds`` runs with a 95% Student-t interval (:mod:`dpgames.estimates`: undefined, NaN, for one
seed).  Every (class, lie) pair is enumerated when there are at most ``exhaustive`` of them;
otherwise ``samples`` players are drawn (class ``k`` with probability ``n_k / n``, the lie uniformly
among the other classes). Theorem (Kearns, Pai, Roth & Ullman 2014, the incentive theorem of their
section "Joint Differential Privacy and Incentives": a mediator that is (eps, delta)-jointly DP and
computes an alpha-approximate correlated equilibrium with probability 1 - beta makes "report
truthfully, then follow the suggestion" an approximate ex-post Nash equilibrium; Dwork & Roth 2014,
section 10.2.2, which presents it; cited by name because its number differs between versions): with
costs scaled to [0, 1], no deviation gains more than about ``alpha + 2 eps + beta + delta``; in cost
units we report ``alpha + (2 eps + delta) C`` with ``C`` the largest expected action cost seen
(``beta = 0``: ``alpha`` is measured, not bounded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from dpgames.estimates import t_interval
from dpgames.games.atomic import MAX_PLAYERS, UnilateralCosts
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import MediatorOutcome, PrivateMediator
from dpgames.games.network import RoutingGame
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, integer, positive_int

MAX_SEEDS = 10**4  # each seed reruns the mediator once per audited pair: more would not end


@dataclass(frozen=True)
class IncentiveAudit:
    """Per audited (true class, lie) pair: mean gains over the seeds with 95% intervals.

    Attributes
    ----------
    true_class, lie_class : numpy.ndarray of int
        The audited pairs: a player of class ``true_class[i]`` reporting ``lie_class[i]``.
    misreport_gain : numpy.ndarray
        Mean gain (cost units) from that lie, then best-responding, over the seeds.
    misreport_ci : numpy.ndarray, shape (pairs, 2)
        Its 95% Student-t interval; NaN when ``seeds == 1`` (:attr:`has_intervals` is False), since
        one draw gives no interval (the rule of :mod:`dpgames.estimates`).
    ignore_gain, ignore_ci : numpy.ndarray
        The same for ignoring the suggestion (the class's regret ``alpha_k``).
    theorem_bound : float
        ``alpha + (2 eps + delta) C``: what the incentive theorem allows (see the module docstring);
        ``inf`` for a mediator without noise (``noise="none"``: not private, eps = inf, so the
        theorem bounds nothing).
    exhaustive : bool
        Whether every (class, lie) pair was audited (else a sample of players).
    seeds : int
        Number of mediator runs averaged.

    Examples
    --------
    Two classes on two roads (cost 1, and a quarter of the load), two players each:

    >>> from dpgames.games import CongestionGame, PolynomialCosts, PrivateMediator, audit_incentives
    >>> game = CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.0], [0.0, 0.25]),
    ...                                         [[[0], [1]], [[0], [1]]], [2, 2])
    >>> audit = audit_incentives(
    ...     PrivateMediator(rounds=20, epsilon=1.0), game, [2, 2], seeds=2, rng=0
    ... )
    >>> audit.exhaustive, audit.true_class.tolist(), audit.lie_class.tolist(), audit.has_intervals
    (True, [0, 1], [1, 0], True)
    >>> audit.max_misreport_gain <= audit.theorem_bound  # with seeds=1: no intervals (has_intervals False)
    True
    """

    true_class: np.ndarray
    lie_class: np.ndarray
    misreport_gain: np.ndarray
    misreport_ci: np.ndarray  # (pairs, 2)
    ignore_gain: np.ndarray
    ignore_ci: np.ndarray
    theorem_bound: float
    exhaustive: bool
    seeds: int

    @property
    def has_intervals(self) -> bool:
        """Whether the intervals exist (at least two seeds)."""
        return self.seeds >= 2

    @property
    def max_misreport_gain(self) -> float:
        """The largest mean misreport gain (NaN when no pair was audited)."""
        return float(self.misreport_gain.max()) if self.misreport_gain.size else float("nan")

    @property
    def max_ignore_gain(self) -> float:
        """The largest mean gain from ignoring the suggestion."""
        return float(self.ignore_gain.max()) if self.ignore_gain.size else float("nan")


def _mean_ci(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means over axis 0 (the seeds) and their 95% intervals as ``(..., 2)`` (NaN for one seed)."""
    mean, low, high = t_interval(samples)
    return mean, np.stack([low, high], axis=-1)


def liar_cost(
    outcome: MediatorOutcome, true_players: np.ndarray, true_class: int, lie_class: int
) -> float:
    """Expected cost of a class-``true_class`` player who reported ``lie_class`` in ``outcome``
    (which must keep its history) and best-responds to the suggestion she gets."""
    game, history = outcome.game, cast(np.ndarray, outcome.history)  # kept, as required above
    evaluate = UnilateralCosts(game, np.asarray(true_players))  # the others: everybody but her
    mine = slice(game.class_start[true_class], game.class_start[true_class + 1])
    told = slice(game.class_start[lie_class], game.class_start[lie_class + 1])
    pair = np.zeros((told.stop - told.start, mine.stop - mine.start))
    for strategy in history:  # a loop over rounds: the suggestion-action cost table
        pair += np.outer(strategy[told], evaluate(strategy)[mine])
    return float(pair.min(axis=1).sum() / history.shape[0])


def audit_incentives(
    mediator: PrivateMediator,
    model: CongestionGame | RoutingGame,
    players: np.ndarray,
    *,
    seeds: int = 3,
    exhaustive: int = 12,
    samples: int = 8,
    rng: RNGLike = None,
) -> IncentiveAudit:
    """Gains from misreporting and from ignoring the suggestion (see the module docstring).

    Parameters
    ----------
    mediator : PrivateMediator
        The mediator audited (rerun with ``keep_history=True``).
    model : CongestionGame or RoutingGame
        The game.
    players : array_like of int
        Whole players per class (at least one in all, at most
        :data:`~dpgames.games.atomic.MAX_PLAYERS`).
    seeds : int, default 3
        Mediator runs per audited pair (common random numbers), at most :data:`MAX_SEEDS`; the
        intervals need at least 2.
    exhaustive : int, default 12
        Audit every (class, lie) pair when there are at most this many; otherwise sample.
    samples : int, default 8
        Players drawn when not exhaustive.
    rng : numpy.random.Generator or int or None
        The random source of the seeds and of the sample.

    Returns
    -------
    IncentiveAudit

    Raises
    ------
    ValidationError
        If ``mediator`` is not a :class:`PrivateMediator`, ``players`` are not whole numbers ``>=
        0`` with at least one player, or ``seeds``, ``exhaustive`` or ``samples`` are out of range.
    """
    if not isinstance(mediator, PrivateMediator):
        raise ValidationError(
            "mediator", f"must be a PrivateMediator, got {type(mediator).__name__}"
        )
    counts = finite_array("players", players, ndim=1, low=0, integral=True)
    if counts.sum() < 1 or counts.sum() > MAX_PLAYERS:
        raise ValidationError(
            "players",
            f"must be whole numbers >= 0 per class, at least one player in all "
            f"(at most {MAX_PLAYERS:.4g})",
        )
    players = counts.astype(np.int64)
    seeds = positive_int("seeds", seeds, high=MAX_SEEDS)
    exhaustive, samples = (
        integer("exhaustive", exhaustive, low=0),
        positive_int("samples", samples, high=MAX_SEEDS),
    )
    gen = as_generator(rng)
    live = np.flatnonzero(players > 0)
    K = players.size
    if K < 2:
        pairs = np.zeros((0, 2), dtype=np.int64)
    elif live.size * (K - 1) <= exhaustive:
        pairs = np.array([(k, j) for k in live for j in range(K) if j != k], dtype=np.int64)
    else:
        k = gen.choice(K, size=samples, p=players / players.sum())
        j = (k + gen.integers(1, K, size=samples)) % K
        pairs = np.column_stack([k, j])
    run = PrivateMediator(**{**mediator.__dict__, "keep_history": True})
    seed_list = gen.integers(2**63, size=seeds)
    lie_gain = np.zeros((seeds, len(pairs)))
    ignore = np.zeros((seeds, len(pairs) or 1))
    alpha_by_seed, range_by_seed = np.zeros(seeds), np.zeros(seeds)
    for s, seed in enumerate(seed_list):
        truthful = run.run(model, players, int(seed))
        alpha_by_seed[s], range_by_seed[s] = truthful.max_alpha, truthful.cost_range
        ignore[s] = truthful.alpha[pairs[:, 0]] if len(pairs) else truthful.max_alpha
        for i, (k, j) in enumerate(pairs):
            reports = players.copy()
            reports[k] -= 1
            reports[j] += 1
            lied = run.run(model, reports, int(seed))
            lie_gain[s, i] = truthful.expected_cost[k] - liar_cost(lied, players, int(k), int(j))
    gain, gain_ci = _mean_ci(lie_gain)
    ign, ign_ci = _mean_ci(ignore)
    eps = truthful.privacy.epsilon  # inf without noise: the theorem then bounds nothing
    bound = (
        math.inf
        if math.isinf(eps)
        else float(alpha_by_seed.mean() + (2 * eps + mediator.delta) * range_by_seed.max())
    )
    true_class = pairs[:, 0] if len(pairs) else live[:1]
    return IncentiveAudit(
        true_class,
        pairs[:, 1] if len(pairs) else live[:1],
        gain,
        gain_ci,
        ign,
        ign_ci,
        bound,
        len(pairs) > 0 and live.size * (K - 1) <= exhaustive,
        seeds,
    )
