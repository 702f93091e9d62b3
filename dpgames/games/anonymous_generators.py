"""Classic anonymous games, each a constructor of :class:`~dpgames.games.anonymous.AnonymousGame`
(as networkx keeps its graph generators apart from its graph classes): market entry, El Farol, the
minority game, restaurant crowding and a threshold public good.  Each is built from a count function
(:meth:`AnonymousGame.from_count_function`: a payoff that depends on how many others chose one's own
action) with the largeness ``Delta`` its docstring derives.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpgames.games.anonymous import AnonymousGame, player_counts
from dpgames.validation import ValidationError, finite_array, non_negative

__all__ = ["crowding_game", "el_farol", "market_entry", "minority_game", "threshold_public_goods"]


def _per_type(name: str, values: ArrayLike | float, types: int) -> np.ndarray:
    v = finite_array(name, values, low=0, high=1)
    v = np.broadcast_to(v, (types,)) if v.ndim == 0 else v
    if v.shape != (types,):
        raise ValidationError(name, f"must be one number in [0, 1] or one per type ({types})")
    return np.array(v, dtype=float)


def market_entry(
    players: ArrayLike, capacity: float, outside: ArrayLike | float = 0.5
) -> AnonymousGame:
    """The market entry game: action 0 stays out (payoff ``outside[k]``), action 1 enters; an
    entrant with ``c`` other entrants earns ``clip(1/2 + (capacity - (c + 1)) / (2 n), 0, 1)``: more
    than staying out (at ``outside = 1/2``) while the market holds at most ``capacity`` entrants.
    ``Delta <= 1 / (2n)``.

    Parameters
    ----------
    players : array_like of int, shape (K,)
    capacity : float
        Entrants the market holds (>= 0).
    outside : float or array_like, default 0.5
        The outside option of each type, in [0, 1].

    Returns
    -------
    AnonymousGame

    Raises
    ------
    ValidationError
        On bad ``players``, ``capacity`` < 0 or ``outside`` outside [0, 1].
    """
    counts = player_counts(players)
    cap = non_negative("capacity", capacity)
    stay = _per_type("outside", outside, counts.size)
    n = int(counts.sum())

    def payoff(c: np.ndarray) -> np.ndarray:
        enter = np.clip(0.5 + (cap - (c[:, 1] + 1)) / (2 * n), 0.0, 1.0)
        return np.stack(
            [
                np.broadcast_to(stay, (c.shape[0], stay.size)),
                np.broadcast_to(enter[:, None], (c.shape[0], stay.size)),
            ],
            axis=2,
        )

    return AnonymousGame.from_count_function(counts, 2, payoff, largeness=1 / (2 * n))


def el_farol(players: ArrayLike, capacity_fraction: float = 0.6) -> AnonymousGame:
    """El Farol (Arthur 1994): going to the bar is better than staying home while at most
    ``capacity_fraction * n`` go: the market entry game with ``capacity = capacity_fraction * n``
    and staying home worth 1/2.

    Parameters
    ----------
    players : array_like of int
    capacity_fraction : float, default 0.6
        In [0, 1].

    Returns
    -------
    AnonymousGame

    Raises
    ------
    ValidationError
        On bad ``players`` or a fraction outside [0, 1].
    """
    counts = player_counts(players)
    fraction = _per_type("capacity_fraction", capacity_fraction, 1)[0]
    return market_entry(counts, fraction * counts.sum(), 0.5)


def minority_game(players: ArrayLike) -> AnonymousGame:
    """The minority game (Challet & Zhang 1997), smoothed: with ``c`` others on one's own side of
    two, the payoff is ``1/2 + ((n - 1)/2 - c) / n``: above 1/2 exactly on the minority side.
    ``Delta = 1/n``.

    Parameters
    ----------
    players : array_like of int

    Returns
    -------
    AnonymousGame

    Raises
    ------
    ValidationError
        On bad ``players``.
    """
    counts = player_counts(players)
    n = int(counts.sum())

    def payoff(c: np.ndarray) -> np.ndarray:
        return np.broadcast_to(
            (0.5 + ((n - 1) / 2 - c) / n)[:, None, :], (c.shape[0], counts.size, 2)
        )

    return AnonymousGame.from_count_function(counts, 2, payoff, largeness=1 / n)


def crowding_game(players: ArrayLike, values: ArrayLike) -> AnonymousGame:
    """Restaurant choice: a type-``k`` player at restaurant ``a`` with ``c`` others there gets
    ``values[k, a] (1 - c / n)``.  ``Delta = max values / n``.

    Parameters
    ----------
    players : array_like of int, shape (K,)
    values : array_like, shape (K, A)
        In [0, 1].

    Returns
    -------
    AnonymousGame

    Raises
    ------
    ValidationError
        On bad ``players`` or ``values`` of the wrong shape or outside [0, 1].
    """
    counts = player_counts(players)
    v = finite_array("values", values, ndim=2, low=0, high=1)
    if v.shape[0] != counts.size or v.shape[1] < 1:
        raise ValidationError(
            "values", f"must have shape ({counts.size}, A), entries in [0, 1], got {v.shape}"
        )
    n = int(counts.sum())

    def payoff(c: np.ndarray) -> np.ndarray:
        return v[None, :, :] * (1 - np.clip(c, 0.0, n) / n)[:, None, :]

    return AnonymousGame.from_count_function(
        counts, v.shape[1], payoff, largeness=float(v.max()) / n
    )


def threshold_public_goods(
    players: ArrayLike, threshold: float, width: float, cost: ArrayLike | float = 0.1
) -> AnonymousGame:
    """A threshold public good with a ramp: with ``m`` contributors the good is worth
    ``b(m) = clip((m - threshold) / width, 0, 1)`` to everyone; action 1 contributes at ``cost[k]``.
    Payoffs ``(1 + b(m) - cost[k] [contributes]) / 2``.  ``Delta <= 1 / (2 width)``.

    Parameters
    ----------
    players : array_like of int, shape (K,)
    threshold : float
        Contributions below which the good is worthless (>= 0).
    width : float
        Contributions over which it ramps up to full value (> 0).
    cost : float or array_like, default 0.1
        Each type's cost of contributing, in [0, 1].

    Returns
    -------
    AnonymousGame

    Raises
    ------
    ValidationError
        On bad ``players``, ``threshold``, ``width`` or ``cost``.
    """
    counts = player_counts(players)
    t0 = non_negative("threshold", threshold)
    w = non_negative("width", width)
    if w <= 0:
        raise ValidationError("width", f"must be > 0, got {width!r}")
    paid = _per_type("cost", cost, counts.size)
    n = int(counts.sum())

    def payoff(c: np.ndarray) -> np.ndarray:
        def benefit(m: np.ndarray) -> np.ndarray:
            return np.clip((m - t0) / w, 0.0, 1.0)

        free_ride = (1 + benefit(n - 1 - c[:, 0]))[:, None] / 2  # n - 1 - c others contribute
        contribute = (1 + benefit(c[:, 1] + 1)[:, None] - paid[None, :]) / 2
        return np.stack([np.broadcast_to(free_ride, (c.shape[0], paid.size)), contribute], axis=2)

    return AnonymousGame.from_count_function(counts, 2, payoff, largeness=1 / (2 * w))
