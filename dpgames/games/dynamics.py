"""No-regret dynamics for classes of players, vectorised across classes.

All players of a class see the same losses, so they hold the same mixed strategy: one learner per
class, stored as flat arrays over actions (or over ordered action pairs of a class).

* :class:`Hedge` (multiplicative weights; Freund & Schapire 1997): ``p_t(a) ∝ exp(-eta L_{t-1}(a))``.
  For losses in [0, 1] its external regret after ``T`` rounds is at most ``ln N / eta + eta T / 8``
  (Cesa-Bianchi & Lugosi 2006, Thm 2.2), ``sqrt(T ln N / 2)`` at ``eta = sqrt(8 ln N / T)``.  Time
  averages of no-external-regret play converge to coarse correlated equilibria.
* :class:`BlumMansour` (Blum & Mansour 2007): one Hedge copy per action ``a``; copy ``a`` proposes a
  row ``Q[a, .]`` and is charged ``p_t(a) l_t``; the strategy is the stationary ``p = p Q``.  Swap
  regret is at most the sum of the copies' external regrets, ``N (ln N / eta + eta T / 8)``, so time
  averages converge to correlated equilibria.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from dpgames.games.game import CongestionGame
from dpgames.validation import ValidationError, finite_array


def default_learning_rate(game: CongestionGame, rounds: int) -> np.ndarray:
    """``sqrt(8 ln N_k / T)`` per class (Hedge's tuning for losses in [0, 1]; 1 for one action)."""
    n = game.actions_per_class.astype(float)
    return np.where(n > 1, np.sqrt(8 * np.log(np.maximum(n, 2)) / rounds), 1.0)


def _rates(learning_rate: ArrayLike, game: CongestionGame) -> np.ndarray:
    """The learning rate per class: one number or one per class, each finite and > 0."""
    if not isinstance(game, CongestionGame):
        raise ValidationError("game", f"must be a CongestionGame, got {type(game).__name__}")
    eta = finite_array("learning_rate", learning_rate)
    if eta.shape not in ((), (1,), (game.num_classes,)) or not (eta > 0).all():
        raise ValidationError("learning_rate", f"must be finite and > 0: one number or one per class ({game.num_classes})")
    return np.broadcast_to(eta, (game.num_classes,))


def _class_softmax(game: CongestionGame, scores: np.ndarray) -> np.ndarray:
    shifted = scores - game.spread(game.class_max(scores))
    w = np.exp(shifted)
    return w / game.spread(game.class_sum(w))


@dataclass
class Hedge:
    """Hedge for every class at once; ``learning_rate`` per class (or one number)."""

    game: CongestionGame
    learning_rate: ArrayLike
    cumulative: np.ndarray = field(init=False)
    expected_loss: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        eta = _rates(self.learning_rate, self.game)
        self._eta = self.game.spread(eta)
        self.cumulative = np.zeros(self.game.num_actions)
        self.expected_loss = np.zeros(self.game.num_classes)
        self._p = self.game.uniform_strategy()

    def strategy(self) -> np.ndarray:
        return self._p

    def update(self, strategy: np.ndarray, loss: np.ndarray) -> None:
        """Charge ``loss``; the next strategy is ``p * exp(-eta loss)``, renormalised per class (the same
        as the softmax of ``-eta`` times the cumulative loss, one exponential a round)."""
        self.expected_loss += self.game.class_sum(strategy * loss)
        self.cumulative += loss
        step = self._eta * loss
        w = self._p * np.exp(self.game.spread(self.game.class_min(step)) - step)  # each class's best: factor 1
        total = self.game.class_sum(w)
        if np.all(total > 0):
            self._p = w / self.game.spread(total)
        else:  # a class underflowed to zero: recompute in log space
            self._p = _class_softmax(self.game, -self._eta * self.cumulative)

    def grown(self, game: CongestionGame, position: np.ndarray) -> Hedge:
        """This learner on a game with more actions (old action ``i`` now at ``position[i]``); a new
        action starts with its class's smallest cumulative loss (column generation)."""
        learner = Hedge(game, self.learning_rate)
        fresh = np.ones(game.num_actions, dtype=bool)
        fresh[position] = False
        learner.cumulative[position] = self.cumulative
        learner.cumulative[fresh] = game.spread(game.class_min(np.where(fresh, np.inf, learner.cumulative)))[fresh]
        learner.expected_loss = self.expected_loss.copy()
        learner._p = _class_softmax(game, -learner._eta * learner.cumulative)
        return learner

    def external_regret(self) -> np.ndarray:
        """Per class, on the losses it was given: ``sum_t p_t . l_t - min_a sum_t l_t(a)``."""
        return self.expected_loss - self.game.class_min(self.cumulative)


@dataclass
class BlumMansour:
    """The Blum-Mansour swap-regret reduction over Hedge, for every class at once."""

    game: CongestionGame
    learning_rate: ArrayLike
    cumulative: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        game = self.game
        eta = _rates(self.learning_rate, game)
        self._first, self._second = game.class_pairs()
        self._eta = eta[game.action_class[self._first]]
        self.cumulative = np.zeros(self._first.size)  # copy `first` has charged loss on action `second`
        self._groups = [(size, np.flatnonzero(game.actions_per_class == size))
                        for size in np.unique(game.actions_per_class)]

    def _rows(self) -> np.ndarray:
        """``Q[a, b]`` for every ordered pair (a Hedge distribution per copy ``a``)."""
        scores = -self._eta * self.cumulative
        starts = np.r_[0, np.flatnonzero(np.diff(self._first)) + 1]
        shifted = scores - np.repeat(np.maximum.reduceat(scores, starts), np.diff(np.r_[starts, scores.size]))
        w = np.exp(shifted)
        return w / np.repeat(np.add.reduceat(w, starts), np.diff(np.r_[starts, w.size]))

    def strategy(self) -> np.ndarray:
        """The stationary distribution of every class's ``Q`` (batched solves, classes grouped by size)."""
        q = self._rows()
        p = np.empty(self.game.num_actions)
        pair_start = np.r_[0, np.cumsum(self.game.actions_per_class ** 2)]
        for size, classes in self._groups:  # a loop over the distinct numbers of actions
            if size == 1:
                p[self.game.class_start[classes]] = 1.0
                continue
            idx = pair_start[classes][:, None] + np.arange(size * size)
            mat = q[idx].reshape(-1, size, size)
            system = np.transpose(mat, (0, 2, 1)) - np.eye(size)
            system[:, -1, :] = 1.0
            rhs = np.zeros((classes.size, size))
            rhs[:, -1] = 1.0
            sol = np.linalg.solve(system, rhs[..., None])[..., 0]
            p[self.game.class_start[classes][:, None] + np.arange(size)] = np.clip(sol, 0.0, None)
        return p / self.game.spread(self.game.class_sum(p))

    def update(self, strategy: np.ndarray, loss: np.ndarray) -> None:
        self.cumulative += strategy[self._first] * loss[self._second]


def hedge_regret_bound(num_actions: ArrayLike, rounds: int, learning_rate: ArrayLike) -> np.ndarray:
    """``ln N / eta + eta T / 8``: Hedge's external regret bound for losses in [0, 1]."""
    n = finite_array("num_actions", num_actions)
    eta = finite_array("learning_rate", learning_rate)
    return np.log(n) / eta + eta * rounds / 8
