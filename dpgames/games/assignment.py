"""Non-private baselines: user equilibrium, system optimum, price of anarchy (nonatomic, Wardrop).

The user equilibrium (UE) minimises the convex Beckmann potential ``sum_r int_0^{x_r} c_r`` over
feasible flows (Beckmann, McGuire & Winsten 1956); the system optimum (SO) is the UE of the marginal
costs ``c_r + x c_r'`` (same reference).  Two solvers, both on path flows over a path set grown by
column generation (:mod:`dpgames.games.network`), both with an exact line search on the potential:

* ``"frank-wolfe"`` (Frank & Wolfe 1956; LeBlanc, Morlok & Pierskalla 1975): move towards the
  all-or-nothing flow on current shortest paths;
* ``"path-based"``: a projected Newton step per class, shifting flow from every path to the class's
  cheapest one by ``(c_a - c_b) / sum_{r in a xor b} c_r'`` (Bertsekas 1976; Jayakrishnan et al.
  1994), all classes at once, scaled by the line search.

``"path-based"`` is the default, and Frank-Wolfe is not the default anywhere (scenarios included):
it needs 10-20x more iterations for the same gap, and each of its iterations keeps the flow on an
explicit path set (the :class:`Assignment` reports path flows), which costs more than a textbook
link-only Frank-Wolfe iteration (``benchmarks/bench_games.py`` measures both in the same run).  It
is kept as the reference method of transportation research.

Convergence measure: the relative gap ``1 - sum_k d_k pi_k / sum_a f_a c_a`` with ``pi_k`` the cost
of class ``k``'s shortest path in the *whole* network (not only the path set).  Costs of explicit
congestion games (no network) use their fixed action sets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.network import RoutingGame
from dpgames.validation import (
    ValidationError,
    choice,
    finite_result,
    non_negative,
    positive_int,
)

Model = CongestionGame | RoutingGame
Method = Literal["frank-wolfe", "path-based"]
LINE_SEARCH_STEPS = 48


@dataclass(frozen=True)
class Assignment:
    """A (near-)equilibrium flow, as :func:`user_equilibrium` and :func:`system_optimum` return it.

    Attributes
    ----------
    game : CongestionGame
        The game with its final path set (and the true costs).
    flow : numpy.ndarray
        The flow on every action (path).
    loads : numpy.ndarray
        The resource (link) loads.
    gaps : numpy.ndarray
        The relative gap after each iteration.
    total_cost : float
        The social cost under the true costs.
    method : str
        The solver.

    Examples
    --------
    Pigou's network (one road costs 1, the other ``x``; one unit of traffic): everybody takes the
    variable road at the user equilibrium.

    >>> from dpgames.games.costs import PolynomialCosts
    >>> pigou = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 1.0]), [[[0], [1]]], [1.0]
    ... )
    >>> ue = user_equilibrium(pigou, gap=1e-9)
    >>> [round(f, 6) for f in ue.flow.tolist()], round(ue.total_cost, 6), ue.relative_gap <= 1e-9
    ([0.0, 1.0], 1.0, True)
    """

    game: CongestionGame
    flow: np.ndarray
    loads: np.ndarray
    gaps: np.ndarray
    total_cost: float
    method: str

    @property
    def relative_gap(self) -> float:
        """The relative gap reached."""
        return float(self.gaps[-1])

    @property
    def iterations(self) -> int:
        """The number of iterations run."""
        return int(self.gaps.size)


def _check_model(model) -> None:
    if not isinstance(model, (CongestionGame, RoutingGame)):
        raise ValidationError(
            "model", f"must be a CongestionGame or a RoutingGame, got {type(model).__name__}"
        )


def _start(model: Model, costs: PolynomialCosts) -> CongestionGame:
    game = model.initial_game() if isinstance(model, RoutingGame) else model
    return game.with_costs(costs)


def _columns(model: Model, game: CongestionGame, flow: np.ndarray, link_costs: np.ndarray):
    """Grow the path set (routing games); return the game, the flow and each class's shortest
    cost."""
    if isinstance(model, RoutingGame):
        return model.add_shortest_paths(game, flow, link_costs)
    return game, flow, game.class_min(game.incidence @ link_costs)


def relative_gap(
    game: CongestionGame, flow: np.ndarray, shortest: np.ndarray | None = None
) -> float:
    """``1 - sum_k d_k pi_k / sum_a f_a c_a`` (``pi_k``: shortest costs, by default over the action
    set).

    Parameters
    ----------
    game : CongestionGame
        The game (its demand and costs).
    flow : numpy.ndarray
        The flow per action.
    shortest : numpy.ndarray or None
        Each class's shortest cost (for a routing game: over the whole network).

    Returns
    -------
    float
        The gap in [0, 1]; NaN when the costs exceed the float range.
    """
    link_costs = game.costs(game.loads(flow))
    action_costs = game.incidence @ link_costs
    pi = game.class_min(action_costs) if shortest is None else shortest
    spent = float(flow @ action_costs)
    if not math.isfinite(spent):
        return math.nan  # costs beyond the float range: no gap can be stated
    return 0.0 if spent <= 0 else max(0.0, 1.0 - float(game.demand @ pi) / spent)


def _line_search(costs: PolynomialCosts, x: np.ndarray, dx: np.ndarray) -> float:
    """The step in [0, 1] minimising the potential along ``x + s dx`` (bisection on its derivative,
    which is increasing because the costs are)."""
    if float(dx @ costs(x + dx)) <= 0:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(LINE_SEARCH_STEPS):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if float(dx @ costs(x + mid * dx)) < 0 else (low, mid)
    return 0.5 * (low + high)


def _newton_direction(
    game: CongestionGame, flow: np.ndarray, x: np.ndarray, action_costs: np.ndarray
) -> np.ndarray:
    best = game.class_argmin(action_costs)
    target = game.spread(best)
    slope = game.costs.derivative(x)
    along = game.incidence @ slope
    curvature = along + along[target] - 2 * game.overlap(np.arange(game.num_actions), target, slope)
    excess = action_costs - action_costs[target]
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(curvature > 0, np.minimum(flow, excess / curvature), flow)
    shift[best] = 0.0
    direction = -shift
    np.add.at(direction, target, shift)
    return direction


def user_equilibrium(
    model: Model,
    *,
    method: Method = "path-based",
    gap: float = 1e-4,
    max_iterations: int = 10_000,
    costs: PolynomialCosts | None = None,
    initial: Assignment | None = None,
) -> Assignment:
    """Solve for the user equilibrium to relative gap ``gap`` (or ``max_iterations``).

    Parameters
    ----------
    model : CongestionGame or RoutingGame
        The game (a routing game's path set grows by column generation).
    method : {"path-based", "frank-wolfe"}
        The solver (module docstring); path-based is the faster.
    gap : float
        The relative gap to reach (>= 0).
    max_iterations : int
        The most iterations.
    costs : PolynomialCosts or None
        Replaces the model's cost functions (the system optimum passes the marginal costs).
    initial : Assignment or None
        Warm-starts from an earlier assignment of the same model.

    Returns
    -------
    Assignment

    Raises
    ------
    ValidationError
        If an argument is invalid, or the costs leave the float range during the solve.
    """
    _check_model(model)
    if costs is not None and not isinstance(costs, PolynomialCosts):
        raise ValidationError("costs", f"must be PolynomialCosts, got {type(costs).__name__}")
    if initial is not None and not isinstance(initial, Assignment):
        raise ValidationError("initial", f"must be an Assignment, got {type(initial).__name__}")
    choice("method", method, ("frank-wolfe", "path-based"))
    gap = non_negative("gap", gap)
    max_iterations = positive_int("max_iterations", max_iterations)
    base = model.network.costs if isinstance(model, RoutingGame) else model.costs
    costs = base if costs is None else costs
    if initial is None:
        game = _start(model, costs)
        flow = game.all_or_nothing(game.incidence @ costs(np.zeros(game.num_resources)))
    else:
        game, flow = initial.game.with_costs(costs), initial.flow.copy()
    gaps = []
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below, not warned
        for _ in range(max_iterations):
            x = game.loads(flow)
            game, flow, shortest = _columns(model, game, flow, costs(x))
            action_costs = game.incidence @ costs(x)
            gaps.append(relative_gap(game, flow, shortest))
            if not (math.isfinite(gaps[-1]) and np.isfinite(flow).all()):
                raise ValidationError(
                    "demand",
                    "and the cost functions give costs beyond the float range during the "
                    "solve (loads up to the total demand): scale the units down",
                )
            if gaps[-1] <= gap:
                break
            if method == "frank-wolfe":
                direction = game.all_or_nothing(action_costs) - flow
            else:
                direction = _newton_direction(game, flow, x, action_costs)
            step = _line_search(costs, x, game.loads(direction))
            flow = np.maximum(flow + step * direction, 0.0)
    true_game = game.with_costs(base)
    total = finite_result(
        "total_cost", true_game.total_cost(flow), "the cost at the equilibrium loads"
    )
    return Assignment(true_game, flow, true_game.loads(flow), np.array(gaps), total, method)


def system_optimum(model: Model, **kwargs) -> Assignment:
    """The flow of least total cost: the user equilibrium of the marginal costs ``c + x c'``.

    Parameters
    ----------
    model : CongestionGame or RoutingGame
        The game.
    **kwargs
        As for :func:`user_equilibrium` (``method``, ``gap``, ``max_iterations``, ``initial``).

    Returns
    -------
    Assignment
        Its ``gaps`` are those of the marginal-cost game; ``total_cost`` is under the true costs.

    Raises
    ------
    ValidationError
        As :func:`user_equilibrium`.
    """
    _check_model(model)
    base = model.network.costs if isinstance(model, RoutingGame) else model.costs
    return user_equilibrium(model, costs=base.marginal_costs(), **kwargs)


def price_of_anarchy(equilibrium: Assignment, optimum: Assignment) -> float:
    """Total cost at the user equilibrium over that at the system optimum.

    Parameters
    ----------
    equilibrium, optimum : Assignment
        From :func:`user_equilibrium` and :func:`system_optimum`.

    Returns
    -------
    float
        The ratio; 1 when both are 0 (nothing is lost), ``inf`` when only the optimum costs nothing.

    Raises
    ------
    ValidationError
        If an argument is not an :class:`Assignment`.
    """
    for name, value in (("equilibrium", equilibrium), ("optimum", optimum)):
        if not isinstance(value, Assignment):
            raise ValidationError(
                name,
                "must be an Assignment (from user_equilibrium or system_optimum), "
                f"got {type(value).__name__}",
            )
    if optimum.total_cost > 0:
        return equilibrium.total_cost / optimum.total_cost
    return 1.0 if equilibrium.total_cost <= 0 else math.inf
