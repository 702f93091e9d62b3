"""The atomic game: whole players, and the exact costs and regrets of pure, mixed and correlated
play.

**Players.**  The demand of a class (an OD pair's trips) becomes whole players by largest-remainder
rounding (Hamilton's method): every class gets the floor of its demand, and the ``round(total) - sum
of floors`` remaining players go to the classes with the largest fractional parts (ties: lower
index). The total is the total demand rounded to the nearest integer, and no class moves by a whole
player.

**Unilateral costs.**  A player of class ``k`` on action ``a`` pays ``sum_{r in a} c_r(1 + X_r)``
where ``X_r`` is the number of *other* players on ``r``.  In a pure profile ``X_r`` is known; when
every player mixes independently with her class's strategy (a mixed profile), ``X_r`` is a sum of
independent Bernoulli variables (one per other player, success probability ``q_{k', r}``, the chance
that a class-``k'`` player's action uses ``r``), and for integer powers ``E[(1 + X_r)^p]`` is exact
from the cumulants of that sum (cumulants add over independent players; moments follow by the
standard recursion).  Deviations are evaluated the same way, since the deviator's own choice does
not change the others'.  A correlated distribution that is a mixture of mixed profiles (the history
of no-regret dynamics) is handled round by round (:class:`RegretTracker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import TYPE_CHECKING, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from dpgames.games.game import CongestionGame
from dpgames.validation import ValidationError, finite_array

MAX_EXACT_POWER = 8
MAX_PLAYERS = 2.0**53  # counts of whole players stay exact in floats below this


def round_players(demand: ArrayLike) -> np.ndarray:
    """Whole players per class by largest-remainder rounding (see the module docstring).

    Parameters
    ----------
    demand : array_like
        Non-negative mass per class.

    Returns
    -------
    numpy.ndarray of int
        Whole players, summing to the rounded total; the largest remainders (then the lowest class)
        get the extra players.

    Raises
    ------
    ValidationError
        If ``demand`` is not a 1-d array of finite numbers ``>= 0``, or totals more than
        :data:`MAX_PLAYERS`.

    Examples
    --------
    >>> from dpgames.games import round_players
    >>> round_players([1.5, 1.5, 1.0]).tolist()
    [2, 1, 1]
    """
    d = finite_array("demand", demand, ndim=1, low=0)
    if (d > MAX_PLAYERS).any() or d.sum() > MAX_PLAYERS:
        # the first test: no overflow warning from the sum
        raise ValidationError(
            "demand",
            f"must total at most {MAX_PLAYERS:.4g} players (whole players are counted exactly)",
        )
    floors = np.floor(d)
    extra = int(round(float(d.sum()))) - int(floors.sum())
    order = np.lexsort((np.arange(d.size), -(d - floors)))
    out = floors.astype(np.int64)
    out[order[: max(extra, 0)]] += 1
    return out


# --- pure profiles
# -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PureRegret:
    """Exact unilateral gains in a pure profile (players counted per action).

    ``gain[a]``: the most a player on action ``a`` saves by switching to another action of her class
    (0 where nobody plays ``a``); ``best_deviation[a]`` the action that achieves it; ``cost[a]`` her
    cost.

    Examples
    --------
    Pigou's roads (cost 1, and cost = load) with all 3 players on the second: each would save 2.

    >>> from dpgames.games import CongestionGame, PolynomialCosts, pure_regret
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 1.0]), [[[0], [1]]], [3]
    ... )
    >>> regret = pure_regret(game, [0, 3])
    >>> regret.gain.tolist(), regret.cost.tolist(), regret.max_gain
    ([0.0, 2.0], [1.0, 3.0], 2.0)
    """

    gain: np.ndarray
    best_deviation: np.ndarray
    cost: np.ndarray

    @property
    def max_gain(self) -> float:
        """The largest gain of any player's unilateral deviation (0 in an empty game)."""
        return float(self.gain.max()) if self.gain.size else 0.0


def pure_regret(game: CongestionGame, counts: ArrayLike) -> PureRegret:
    """Exact best-deviation gains of the pure profile with ``counts[a]`` players on action ``a``.

    A player moving from ``a`` to ``b`` pays ``sum_{r in b} c_r(x_r + 1) - sum_{r in a & b}
    (c_r(x_r + 1)
    - c_r(x_r))``: resources she already used keep their load.

    Parameters
    ----------
    game : CongestionGame
    counts : array_like, shape (actions,)
        Players per action, ``>= 0``.

    Returns
    -------
    PureRegret

    Raises
    ------
    ValidationError
        Unless ``counts`` holds one non-negative finite number per action.
    """
    n = finite_array("counts", counts, low=0)
    if n.shape != (game.num_actions,):
        raise ValidationError(
            "counts", f"must be {game.num_actions} non-negative numbers (one per action)"
        )
    x = game.loads(n)
    now, plus = game.costs(x), game.costs(x + 1.0)
    cost = game.incidence @ now
    used = np.flatnonzero(n > 0)
    first, second = game.class_pairs(used)
    moved = (game.incidence @ plus)[second] - game.overlap(first, second, plus - now)
    moved[first == second] = cost[first[first == second]]
    gain_pair = cost[first] - moved
    order = np.lexsort((-gain_pair, first))
    starts = np.searchsorted(first[order], used)
    gain = np.zeros(game.num_actions)
    best = np.arange(game.num_actions)
    gain[used] = np.maximum(gain_pair[order][starts], 0.0)
    best[used] = np.where(gain[used] > 0, second[order][starts], used)
    return PureRegret(gain, best, cost)


# --- mixed profiles: exact expected unilateral costs
# --------------------------------------------------
def _bernoulli_cumulants(q: np.ndarray, order: int) -> list[np.ndarray]:
    """Cumulants 1..order of Bernoulli(q) (all its moments equal q)."""
    kappa: list[np.ndarray] = []
    for n in range(1, order + 1):
        kappa.append(q - sum(comb(n - 1, j - 1) * kappa[j - 1] * q for j in range(1, n)))
    return kappa


def _moments(kappa: list[np.ndarray]) -> list[np.ndarray]:
    """Raw moments 0..len(kappa) from cumulants 1..len(kappa)."""
    mu = [np.ones_like(kappa[0])]
    for n in range(1, len(kappa) + 1):
        mu.append(sum(comb(n - 1, j - 1) * kappa[j - 1] * mu[n - j] for j in range(1, n + 1)))
    return mu


@dataclass(frozen=True)
class UnilateralCosts:
    """Expected cost of each action to one player of its class, everybody else mixing independently.

    ``order = 1`` drops the variance of the others' choices (the deterministic, "mean-field" loads);
    ``order = None`` is exact (the largest cost power; integer powers <= 8 only).

    Parameters
    ----------
    game : CongestionGame
    players : numpy.ndarray of int
        Whole players per class.
    order : int, optional
        Moments of the others' loads kept (default exact).

    Raises
    ------
    ValidationError
        If ``order`` is None (exact) and a cost power is not an integer <= :data:`MAX_EXACT_POWER`.

    Examples
    --------
    Three players on Pigou's roads; the two others each take either road with probability 1/2:
    the second road costs me ``1 + E[others on it] = 2``.

    >>> import numpy as np
    >>> from dpgames.games import CongestionGame, PolynomialCosts, UnilateralCosts
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 1.0]), [[[0], [1]]], [3]
    ... )
    >>> UnilateralCosts(game, np.array([3]))(np.array([0.5, 0.5])).tolist()
    [1.0, 2.0]
    """

    game: CongestionGame
    players: np.ndarray
    order: int | None = None
    _support: sp.csr_matrix = field(init=False, repr=False)
    if TYPE_CHECKING:
        # set by __post_init__; declared for the type checker only (not dataclass fields)
        _entry_class: np.ndarray = field(init=False)
        _entry_resource: np.ndarray = field(init=False)
        _position: np.ndarray = field(init=False)
        _nnz_action: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        game = self.game
        powers = game.costs.power
        exact_order = int(powers.max()) if powers.size else 1
        if self.order is None and (
            np.any(powers != np.round(powers)) or exact_order > MAX_EXACT_POWER
        ):
            raise ValidationError(
                "order",
                f": exact expected costs need integer cost powers <= {MAX_EXACT_POWER}; "
                "use order=1 (mean-field loads) otherwise",
            )
        object.__setattr__(
            self, "order", max(exact_order, 1) if self.order is None else int(self.order)
        )
        owner = sp.csr_matrix(
            (np.ones(game.num_actions), (game.action_class, np.arange(game.num_actions))),
            shape=(game.num_classes, game.num_actions),
        )
        # class k x resource r: some action of k uses r
        support = sp.csr_matrix(owner @ game.incidence)
        support.sort_indices()
        rows = np.repeat(np.arange(support.shape[0]), np.diff(support.indptr))
        keys = rows * game.num_resources + support.indices
        a_rows = np.repeat(np.arange(game.num_actions), np.diff(game.incidence.indptr))
        position = np.searchsorted(
            keys, game.action_class[a_rows] * game.num_resources + game.incidence.indices
        )
        object.__setattr__(self, "_support", support)
        object.__setattr__(self, "_entry_class", rows)
        object.__setattr__(self, "_entry_resource", support.indices)
        object.__setattr__(self, "_position", position)
        object.__setattr__(self, "_nnz_action", a_rows)

    def __call__(self, strategy: np.ndarray) -> np.ndarray:
        """Per action: the expected cost to a player of its class who plays it, when every other
        player mixes with her class's ``strategy`` (a probability vector per class, over
        actions)."""
        game, order = self.game, cast(int, self.order)  # __post_init__ makes it an int
        coverage = np.bincount(
            self._position, weights=strategy[self._nnz_action], minlength=self._entry_class.size
        )
        coverage = np.clip(coverage, 0.0, 1.0)
        weight = self.players[self._entry_class].astype(float)
        kappa = _bernoulli_cumulants(coverage, order)
        per_resource = [
            np.bincount(self._entry_resource, weights=weight * k, minlength=game.num_resources)
            for k in kappa
        ]
        # remove the player
        others = [per_resource[j][self._entry_resource] - kappa[j] for j in range(order)]
        # she is on the resource herself: the load is 1 + X (shifts the mean only)
        others[0] = others[0] + 1.0
        mu = _moments(others)
        power = game.costs.power[self._entry_resource]
        if order == 1:
            expected = np.power(mu[1], power)
        else:
            expected = np.zeros_like(coverage)
            for p in range(order + 1):  # E[(1 + X)^p], resources grouped by their power
                expected[power == p] = mu[p][power == p]
        entry_cost = (
            game.costs.free[self._entry_resource] + game.costs.coef[self._entry_resource] * expected
        )
        return np.bincount(
            self._nnz_action, weights=entry_cost[self._position], minlength=game.num_actions
        )


# --- correlated distributions: mixtures of mixed profiles over rounds
# -----------------------------------
@dataclass
class RegretTracker:
    """Accumulates, over rounds ``t``, what the regrets of the uniform mixture of the rounds' mixed
    profiles need: per class the expected cost of following (``sum_t p_t . e_t``), per action the
    cost of always deviating to it (``sum_t e_t``) and, if ``swap``, per ordered pair ``(a, b)`` of
    a class the cost of playing ``b`` whenever ``a`` is suggested (``sum_t p_t(a) e_t(b)``).

    Parameters
    ----------
    game : CongestionGame
    swap : bool, default False
        Also track the pair costs that :meth:`swap_regret` needs.

    Attributes
    ----------
    rounds : int
        Rounds recorded.
    largest : float
        The largest unilateral cost recorded (0 before any; the scale of the incentive bound).
    follow, deviate, pair_cost : numpy.ndarray
        The sums above (``pair_cost`` only with ``swap``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpgames.games import CongestionGame, PolynomialCosts, RegretTracker
    >>> game = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 1.0]), [[[0], [1]]], [3]
    ... )
    >>> tracker = RegretTracker(game, swap=True)
    >>> tracker.add(
    ...     np.array([0.5, 0.5]), np.array([1.0, 2.0])
    ... )  # following costs 1.5; road 0 costs 1
    >>> (
    ...     tracker.expected_cost().tolist(),
    ...     tracker.external_regret().tolist(),
    ...     tracker.swap_regret().tolist(),
    ... )
    ([1.5], [0.5], [0.5])
    """

    game: CongestionGame
    swap: bool = False
    rounds: int = 0
    largest: float = 0.0
    follow: np.ndarray = field(init=False)
    deviate: np.ndarray = field(init=False)
    pair_cost: np.ndarray | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.follow = np.zeros(self.game.num_classes)
        self.deviate = np.zeros(self.game.num_actions)
        if self.swap:
            self._first, self._second = self.game.class_pairs()
            self.pair_cost = np.zeros(self._first.size)

    def add(self, strategy: np.ndarray, unilateral: np.ndarray) -> None:
        """Record one round: the mixed profile ``strategy`` and every action's cost to one player
        (``unilateral``, e.g. from :class:`UnilateralCosts`)."""
        self.follow += self.game.class_sum(strategy * unilateral)
        self.deviate += unilateral
        if self.swap:
            self.pair_cost += strategy[self._first] * unilateral[self._second]
        self.charged(float(unilateral.max()))

    def charged(self, largest: float) -> None:
        """Count one round whose sums a caller added to :attr:`follow` and :attr:`deviate` itself
        (as the private mediator's compiled round does).

        Parameters
        ----------
        largest : float
            The round's largest unilateral cost (kept in :attr:`largest` if it is the largest so
            far).
        """
        self.rounds += 1
        self.largest = max(self.largest, largest)

    def external_regret(self) -> np.ndarray:
        """Per class: expected cost of following minus that of the best fixed action (per round)."""
        return (self.follow - self.game.class_min(self.deviate)) / max(self.rounds, 1)

    def swap_regret(self) -> np.ndarray:
        """Per class: the most a player saves by the best map from suggestions to actions (per
        round)."""
        if not self.swap:
            raise ValidationError("swap", "regret needs RegretTracker(swap=True)")
        pair_cost = cast(np.ndarray, self.pair_cost)  # kept when swap is set
        own = pair_cost[self._first == self._second]  # sum_t p_t(a) e_t(a), per action a
        saving = own[self._first] - pair_cost
        best = np.maximum.reduceat(saving, np.r_[0, np.flatnonzero(np.diff(self._first)) + 1])
        return self.game.class_sum(np.maximum(best, 0.0)) / max(self.rounds, 1)

    def expected_cost(self) -> np.ndarray:
        """Per class: a player's expected cost under the mixture (per round average)."""
        return self.follow / max(self.rounds, 1)
