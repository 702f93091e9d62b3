"""Anonymous congestion games in aggregate form: resources, classes of players, actions as sparse
rows.

A game has ``m`` resources with cost functions of their load
(:class:`~dpgames.games.costs.PolynomialCosts`), ``K`` classes of players (a class = the players of
one type: routing games' origin-destination pairs) with ``demand[k]`` players each, and ``P``
actions (a routing game's paths), each a set of resources, held as the sparse 0/1 incidence matrix
``A`` (``P x m``, CSR).  Actions are stored grouped by class (``class_start[k] : class_start[k+1]``
are class ``k``'s), so every per-class reduction is one ``reduceat``.  A flow (or a profile of
action counts) is a vector over actions; loads are ``A^T f``, action costs ``A c(x)``.  Nothing is
ever indexed by player: cost grows with ``P`` and ``nnz(A)``, never with the number of players
(Monderer & Shapley 1996 for the game; Rosenthal 1973 for its potential).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from dpgames.games.classwise import ClassOps
from dpgames.games.costs import PolynomialCosts
from dpgames.validation import ValidationError, finite_array

PAIR_CHUNK = 1 << 20  # ordered action pairs processed at once in overlap sums (bounds memory)


def csr_index_dtype(*sizes: int) -> np.dtype:
    """The index type of a CSR matrix with these sizes (entries, rows, columns): int32 when each
    fits, as scipy.sparse chooses it, else int64."""
    return np.dtype(np.int32 if max(sizes) <= np.iinfo(np.int32).max else np.int64)


@dataclass(frozen=True)
class CongestionGame:
    """A congestion game in aggregate form (see the module docstring).

    ``demand`` is the number of players of each class: whole numbers for the atomic game (the
    mediator, regrets of profiles), any non-negative mass for the nonatomic (Wardrop) game of the
    baselines.

    Parameters
    ----------
    costs : PolynomialCosts
        One cost function per resource.
    incidence : scipy.sparse matrix, shape (actions, resources)
        0/1: which resources each action uses (every action at least one).
    action_class : array_like of int, shape (actions,)
        The class owning each action, sorted (use :meth:`build` or :meth:`from_action_lists`
        otherwise).
    demand : array_like, shape (classes,)
        Players (or mass) per class, finite and ``>= 0``.
    class_names : sequence of str, optional
        One name per class.

    Raises
    ------
    ValidationError
        On a shape mismatch, a non-0/1 incidence, an action with no resource, a class with no
        action, unsorted classes, or a negative or non-finite demand (naming the field).

    Examples
    --------
    Pigou's two roads: one always costs 1, the other ``x`` (its load); one unit of traffic.

    >>> from dpgames.games import CongestionGame, PolynomialCosts, system_optimum, user_equilibrium
    >>> pigou = CongestionGame.from_action_lists(
    ...     PolynomialCosts([1.0, 0.0], [0.0, 1.0]), [[[0], [1]]], [1.0]
    ... )
    >>> pigou.num_classes, pigou.num_actions, pigou.total_cost([0.5, 0.5])
    (1, 2, 0.75)
    >>> (
    ...     round(user_equilibrium(pigou, gap=1e-10).total_cost, 6),
    ...     round(system_optimum(pigou, gap=1e-10).total_cost, 6),
    ... )
    (1.0, 0.75)
    """

    costs: PolynomialCosts
    incidence: sp.csr_matrix
    action_class: np.ndarray
    demand: np.ndarray
    class_names: tuple[str, ...] = ()
    class_start: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.costs, PolynomialCosts):
            raise ValidationError(
                "costs", f"must be PolynomialCosts, got {type(self.costs).__name__}"
            )
        try:
            a = sp.csr_matrix(self.incidence, dtype=float)
            cls = np.asarray(self.action_class, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError(
                "incidence", "and action_class must be a sparse 0/1 matrix and integer classes"
            ) from None
        a.sum_duplicates()
        if a.shape[1] != self.costs.size:
            raise ValidationError(
                "incidence",
                f"has {a.shape[1]} resources but there are {self.costs.size} cost functions",
            )
        if a.nnz and not np.all(a.data == 1.0):
            raise ValidationError(
                "incidence", "must be 0/1 (an action uses a resource at most once)"
            )
        demand = finite_array("demand", self.demand, ndim=1, low=0)
        if cls.shape != (a.shape[0],):
            raise ValidationError(
                "action_class", f"needs one entry per action ({a.shape[0]}), got shape {cls.shape}"
            )
        if cls.size and (np.any(np.diff(cls) < 0) or cls[0] < 0 or cls[-1] >= demand.size):
            raise ValidationError(
                "action_class", "must be sorted and in 0..K-1 (use CongestionGame.build)"
            )
        start = np.searchsorted(cls, np.arange(demand.size + 1))
        if np.any(np.diff(start) == 0):
            empty = int(np.flatnonzero(np.diff(start) == 0)[0])
            raise ValidationError("action_class", f": class {self._name(empty)} has no action")
        if np.any(np.diff(a.indptr) == 0):
            raise ValidationError(
                "incidence",
                f": action {int(np.flatnonzero(np.diff(a.indptr) == 0)[0])} uses no resource",
            )
        names = tuple(self.class_names)
        if names and len(names) != demand.size:
            raise ValidationError(
                "class_names", f": {len(names)} class names for {demand.size} classes"
            )
        for name, value in (
            ("incidence", a),
            ("action_class", cls),
            ("demand", demand),
            ("class_names", names),
            ("class_start", start),
        ):
            object.__setattr__(self, name, value)

    def _name(self, k: int) -> str:
        return self.class_names[k] if len(self.class_names) > k else str(k)

    # --- construction ----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        costs: PolynomialCosts,
        incidence: sp.spmatrix,
        action_class: ArrayLike,
        demand: ArrayLike,
        class_names: Sequence[str] = (),
    ) -> CongestionGame:
        """A game from actions in any order (they are grouped by class, stably); see the class for
        the parameters and errors."""
        action_class = np.asarray(action_class, dtype=np.int64)
        order = np.argsort(action_class, kind="stable")
        # __post_init__ checks and converts demand
        return cls(
            costs,
            sp.csr_matrix(incidence)[order],
            action_class[order],
            demand,  # type: ignore[arg-type]
            tuple(class_names),
        )

    @classmethod
    def from_action_lists(
        cls,
        costs: PolynomialCosts,
        actions: Sequence[Sequence[Sequence[int]]],
        demand: ArrayLike,
        class_names: Sequence[str] = (),
    ) -> CongestionGame:
        """A game from lists: ``actions[k]`` lists class ``k``'s actions, each a list of resource
        indices.

        Raises
        ------
        ValidationError
            If an action is empty or names a resource outside ``0 .. costs.size - 1`` (and as the
            class).
        """
        rows: list[int] = []
        cols: list[int] = []
        owner: list[int] = []
        for k, class_actions in enumerate(actions):
            for action in class_actions:
                resources = sorted(set(int(r) for r in action))
                if not resources or resources[0] < 0 or resources[-1] >= costs.size:
                    raise ValidationError(
                        "actions",
                        f": class {k}: an action must be a non-empty list of resources in "
                        f"0..{costs.size - 1}, got {list(action)}",
                    )
                rows += [len(owner)] * len(resources)
                cols += resources
                owner.append(k)
        inc = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(owner), costs.size))
        return cls.build(costs, inc, owner, demand, class_names)

    def with_actions(
        self, incidence: sp.spmatrix, action_class: ArrayLike
    ) -> tuple[CongestionGame, np.ndarray]:
        """The game with more actions, each placed after its class's actions (in the given order);
        also where each old action now sits (to carry flows over).

        Only the new actions are checked (this game is valid already), and the grown incidence is
        written into place (:func:`dpgames.games._paths.insert_rows`, compiled; numba is imported on
        first use) rather than stacked and permuted: the same canonical CSR, in one pass over the
        old rows.

        Parameters
        ----------
        incidence : scipy.sparse matrix, shape (new actions, resources)
            0/1: which resources each new action uses (every action at least one).
        action_class : array_like of int, shape (new actions,)
            The class of each new action (any order; ``0 .. K - 1``).

        Returns
        -------
        game : CongestionGame
            The grown game.
        position : numpy.ndarray of int
            Where each old action sits in ``game``.

        Raises
        ------
        ValidationError
            As the class's constructor, for the new actions: not a sparse 0/1 matrix over the game's
            resources, a class outside ``0 .. K - 1`` or not one per new action, an action with no
            resource.
        """
        new, new_class = self._new_actions(incidence, action_class)
        order = np.argsort(new_class, kind="stable")
        # each new action goes after its class's actions
        cuts = self.class_start[new_class[order] + 1]
        empty = np.diff(new.indptr)[order] == 0
        if empty.any():  # (named by its index in the grown game, as the constructor would)
            raise ValidationError(
                "incidence",
                f": action {int((cuts + np.arange(cuts.size))[empty].min())} uses no resource",
            )
        rows, nnz = self.num_actions + new_class.size, self.incidence.nnz + new.nnz
        dtype = csr_index_dtype(nnz, rows, self.num_resources)
        indptr, indices = np.empty(rows + 1, dtype=dtype), np.empty(nnz, dtype=dtype)
        position = np.empty(self.num_actions, dtype=np.int64)
        # compiled: numba is imported on first use only
        from dpgames.games._paths import (
            insert_rows,
        )

        insert_rows(
            self.incidence.indptr,
            self.incidence.indices,
            cuts,
            new.indptr,
            new.indices,
            order,
            indptr,
            indices,
            position,
        )
        inc = sp.csr_matrix((np.ones(nnz), indices, indptr), shape=(rows, self.num_resources))
        inc.has_canonical_format = True  # both parts are canonical; rows move whole
        start = (
            self.class_start
            + np.r_[0, np.cumsum(np.bincount(new_class, minlength=self.num_classes))]
        )
        action_class_out = np.repeat(np.arange(self.num_classes, dtype=np.int64), np.diff(start))
        return self._valid(inc, action_class_out, start), position

    def _new_actions(
        self, incidence: sp.spmatrix, action_class: ArrayLike
    ) -> tuple[sp.csr_matrix, np.ndarray]:
        """:meth:`with_actions`' new actions as a canonical 0/1 CSR and their classes, checked (the
        constructor's messages)."""
        try:
            canonical = (
                sp.issparse(incidence)
                and incidence.format == "csr"
                and incidence.has_canonical_format
            )
            # canonicalised below: not the caller's
            new = sp.csr_matrix(incidence, dtype=float, copy=not canonical)
            new_class = np.asarray(action_class, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError(
                "incidence", "and action_class must be a sparse 0/1 matrix and integer classes"
            ) from None
        try:
            # (the compiled merge trusts the row pointers and indices)
            new.check_format(full_check=True)
        except ValueError as error:
            raise ValidationError("incidence", f"is not a valid sparse matrix: {error}") from None
        if not canonical:
            new.sum_duplicates()
        if new.shape[1] != self.costs.size:
            raise ValidationError(
                "incidence",
                f"has {new.shape[1]} resources but there are {self.costs.size} cost functions",
            )
        if new.nnz and not np.all(new.data == 1.0):
            raise ValidationError(
                "incidence", "must be 0/1 (an action uses a resource at most once)"
            )
        if new_class.shape != (new.shape[0],):
            raise ValidationError(
                "action_class",
                f"needs one entry per new action ({new.shape[0]}), got shape {new_class.shape}",
            )
        if new_class.size and (new_class.min() < 0 or new_class.max() >= self.num_classes):
            raise ValidationError(
                "action_class", "must be sorted and in 0..K-1 (use CongestionGame.build)"
            )
        return new, new_class

    def _valid(
        self, incidence: sp.csr_matrix, action_class: np.ndarray, class_start: np.ndarray
    ) -> CongestionGame:
        """This game's costs, demand and names with another incidence, known valid (built by
        :meth:`with_actions` from this game and checked new actions): the constructor's passes over
        the incidence are skipped."""
        game = object.__new__(type(self))
        for name, value in (
            ("costs", self.costs),
            ("incidence", incidence),
            ("action_class", action_class),
            ("demand", self.demand),
            ("class_names", self.class_names),
            ("class_start", class_start),
        ):
            object.__setattr__(game, name, value)
        return game

    def with_demand(self, demand: ArrayLike) -> CongestionGame:
        """The same game with another demand per class."""
        # __post_init__ converts demand
        return CongestionGame(
            self.costs,
            self.incidence,
            self.action_class,
            demand,  # type: ignore[arg-type]
            self.class_names,
        )

    def with_costs(self, costs: PolynomialCosts) -> CongestionGame:
        """The same game with other cost functions (e.g. :meth:`PolynomialCosts.marginal_costs`)."""
        return CongestionGame(
            costs, self.incidence, self.action_class, self.demand, self.class_names
        )

    # --- sizes -----------------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        """Actions of all classes together."""
        return self.incidence.shape[0]

    @property
    def num_resources(self) -> int:
        """Resources (links)."""
        return self.incidence.shape[1]

    @property
    def num_classes(self) -> int:
        """Player classes (types)."""
        return self.demand.size

    @property
    def actions_per_class(self) -> np.ndarray:
        """The number of actions of each class."""
        return np.diff(self.class_start)

    @property
    def max_action_size(self) -> int:
        """``L``: the most resources any action uses (the sensitivity of loads to one player)."""
        return int(np.diff(self.incidence.indptr).max())

    # --- per-class reductions (ClassOps: reduceat's numbers, column operations when classes are
    # grouped by size)
    @cached_property
    def _classes(self) -> ClassOps:
        return ClassOps(self.class_start)

    def class_min(self, values: np.ndarray) -> np.ndarray:
        """The minimum of a per-action array over each class's actions."""
        return self._classes.min(values)

    def class_max(self, values: np.ndarray) -> np.ndarray:
        """The maximum of a per-action array over each class's actions."""
        return self._classes.max(values)

    def class_sum(self, values: np.ndarray) -> np.ndarray:
        """The sum of a per-action array over each class's actions."""
        return self._classes.sum(values)

    def class_argmin(self, values: np.ndarray) -> np.ndarray:
        """The index (among all actions) of each class's cheapest action (first on ties)."""
        return self._classes.argmin(values)

    def spread(self, per_class: np.ndarray) -> np.ndarray:
        """A per-class value repeated for each of the class's actions."""
        return self._classes.spread(per_class)

    def uniform_strategy(self) -> np.ndarray:
        """Every class mixing uniformly over its actions."""
        return 1.0 / self.spread(self.actions_per_class.astype(float))

    def all_or_nothing(self, action_costs: np.ndarray) -> np.ndarray:
        """The flow putting each class's whole demand on its cheapest action."""
        flow = np.zeros(self.num_actions)
        flow[self.class_argmin(action_costs)] = self.demand
        return flow

    # --- loads and costs -------------------------------------------------------------------------
    def loads(self, flow: np.ndarray) -> np.ndarray:
        """Resource loads ``A^T f`` of a flow (players or mass per action)."""
        return self.incidence.T @ flow

    def action_costs(self, loads: np.ndarray) -> np.ndarray:
        """Cost of every action at the given loads, ``A c(x)``."""
        return self.incidence @ self.costs(loads)

    def total_cost(self, flow: np.ndarray) -> float:
        """Social cost ``sum_r x_r c_r(x_r)`` of a flow (= ``sum_a f_a c_a``)."""
        x = self.loads(flow)
        return float(x @ self.costs(x))

    def potential(self, flow: np.ndarray) -> float:
        """The Beckmann potential ``sum_r int_0^{x_r} c_r`` (convex; minimised by the user
        equilibrium)."""
        return float(self.costs.integral(self.loads(flow)).sum())

    # --- action pairs within a class -------------------------------------------------------------
    def class_pairs(self, first: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """All ordered pairs ``(a, b)`` of actions of the same class, for ``a`` in ``first``
        (default all)."""
        a = np.arange(self.num_actions) if first is None else np.asarray(first, dtype=np.int64)
        sizes = self.actions_per_class[self.action_class[a]]
        firsts = np.repeat(a, sizes)
        offset = np.arange(firsts.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return firsts, self.class_start[self.action_class[firsts]] + offset

    def overlap(self, first: np.ndarray, second: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``sum_{r in a & b} w_r`` for each pair ``(a, b) = (first[i], second[i])``, in chunks."""
        out = np.empty(first.size)
        for lo in range(0, first.size, PAIR_CHUNK):
            hi = min(lo + PAIR_CHUNK, first.size)
            both = self.incidence[first[lo:hi]].multiply(self.incidence[second[lo:hi]])
            out[lo:hi] = sp.csr_matrix(both) @ weights
        return out
