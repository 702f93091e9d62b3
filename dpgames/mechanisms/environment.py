"""Environments of the NST model (Nissim, Smorodinsky & Tennenholtz 2012; Dwork & Roth 10.2.3).

An environment has finitely many outcomes ``O`` (the designer's choices: a price, a set of open
facilities, a project), a finite type space ``T`` shared by the agents (a value, a location), and
finitely many reactions ``R`` an agent can take once the outcome is known (buy or pass, which open
facility to use).  Everything is an array over types x outcomes x reactions:

* ``utility[t, s, r]``: the utility ``u(t, s, r)`` of an agent of type ``t`` reacting ``r`` to
  ``s``;
* ``objective[t, s, r]``: that agent's contribution to the designer's objective (her utility for
  welfare, the price she pays for revenue); the objective of a profile at ``s`` is the sum of the
  agents' contributions plus a report-independent ``offset[s]`` (e.g. minus a project's cost).

The best reaction ``r(t, s)`` maximises the utility; ties go to the reaction listed first (so a
buyer whose value equals the price buys when ``"buy"`` is listed first).  Agents with the same type
form a *class*: a :class:`Profile` holds counts per type, and every computation costs in the number
of distinct types, never in the number of agents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.validation import ValidationError, finite_array, integer

#: Largest types x outcomes x reactions array an environment accepts (about 320 MB of float64).
MAX_ENTRIES = 40_000_000

#: The neighbouring relation of the environment mechanisms' guarantees: the outcome, not the
#: reactions, is the output.
OUTCOME_NEIGHBOURING = "one agent's reported type changes; the outcome is the output"


@dataclass(frozen=True, eq=False)
class Draw:
    """One run of a mechanism on an environment: the outcome (index) and every agent's reaction
    (indices into the environment's reactions); ``forced`` says whether reactions were imposed.

    Examples
    --------
    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.5, 1.0])  # types 0.25, 0.75; reactions buy, pass
    >>> draw = CommitmentMechanism(env).run(env.profile([0.75, 0.25]), rng=1)
    >>> env.outcome_label(draw.outcome), [env.reactions[r] for r in draw.reactions], draw.forced
    ('0.5', ['buy', 'pass'], True)
    """

    outcome: int
    reactions: np.ndarray
    forced: bool = False


@dataclass(frozen=True, eq=False)
class Profile:
    """The types of ``n`` agents, as indices into an environment's type space.

    ``classes`` are the distinct types present (ascending), ``class_sizes`` their multiplicities and
    ``first_agent`` the lowest agent index of each class (the agent named in audits).  Build one
    with :meth:`Environment.profile` (from type labels) or :meth:`Environment.profile_from_counts`.

    Parameters
    ----------
    type_indices : array_like of int, shape (n,)
        Each agent's type, as an index in ``[0, n_types)``; stored read-only.
    n_types : int
        Size of the environment's type space (``>= 1``).

    Raises
    ------
    ValidationError
        If ``type_indices`` is empty, not 1-d, not integers, or outside ``[0, n_types)``.

    Examples
    --------
    >>> from dpgames.mechanisms import Profile
    >>> profile = Profile([2, 0, 2], n_types=3)
    >>> profile.counts.tolist(), profile.classes.tolist(), profile.first_agent.tolist()
    ([1, 0, 2], [0, 2], [1, 0])
    """

    type_indices: np.ndarray
    n_types: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_types", integer("n_types", self.n_types, low=1))
        idx = np.asarray(self.type_indices)
        if idx.ndim != 1 or idx.size == 0:
            raise ValidationError("type_indices", ": a profile needs at least one agent")
        if not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= self.n_types:
            raise ValidationError("type_indices", f"must be integers in [0, {self.n_types - 1}]")
        idx = idx.astype(np.intp)
        idx.setflags(write=False)
        object.__setattr__(self, "type_indices", idx)

    @property
    def n(self) -> int:
        """The number of agents."""
        return self.type_indices.size

    @cached_property
    def counts(self) -> np.ndarray:
        """Agents per type, ``(m,)``."""
        return np.bincount(self.type_indices, minlength=self.n_types)

    @cached_property
    def classes(self) -> np.ndarray:
        """The distinct types present, ascending (``D``): one class each."""
        return np.flatnonzero(self.counts)

    @property
    def class_sizes(self) -> np.ndarray:
        """Agents per class (``D``)."""
        return self.counts[self.classes]

    @cached_property
    def first_agent(self) -> np.ndarray:
        """The lowest agent index of each class (``D``): the agent an audit names for her class."""
        order = np.argsort(self.type_indices, kind="stable")
        starts = np.searchsorted(self.type_indices[order], self.classes, side="left")
        return order[starts]


@dataclass(frozen=True, eq=False)
class Environment:
    """Finite outcomes, types and reactions with their utilities and the designer's objective.

    The NST model (see the module docstring); every mechanism of :mod:`dpgames.mechanisms` that
    implements :class:`~dpgames.mechanisms.protocol.EnvironmentMechanism` runs on one.  Ready-made
    environments: :func:`~dpgames.mechanisms.pricing.pricing_environment`,
    :func:`~dpgames.mechanisms.facility_location.facility_location_environment`,
    :func:`~dpgames.mechanisms.public_project.public_project_environment`.

    Parameters
    ----------
    types : array_like, shape (m,)
        Distinct type labels (numbers or strings).
    outcomes : array_like, shape (K,) or (K, k)
        Outcome labels, or one row per outcome (e.g. the set of open facilities).
    reactions : sequence of str
        The ``R`` reaction names; ties in utility go to the reaction listed first.
    utility : array_like, shape (m, K, R)
        ``u(t, s, r)``, finite.
    objective : array_like, shape (m, K, R), optional
        Each agent's contribution to the designer's objective; default the utility (welfare).
    offset : array_like, shape (K,), optional
        A report-independent term of the objective per outcome (e.g. minus a cost); default 0.
    objective_name, name : str
        Names used in reports.
    outcome_names : sequence of str, optional
        Printable outcome names (default: from the labels).

    Raises
    ------
    ValidationError
        On a shape mismatch, a non-finite entry, repeated type labels, no reactions, or more than
        :data:`MAX_ENTRIES` entries (naming the field).

    Examples
    --------
    A posted price: two values, two prices, reactions buy or pass.

    >>> import numpy as np
    >>> from dpgames import Environment
    >>> values, prices = np.array([0.25, 0.75]), np.array([0.5, 1.0])
    >>> utility = np.zeros((2, 2, 2))                          # types x outcomes x (buy, pass)
    >>> utility[:, :, 0] = values[:, None] - prices[None, :]
    >>> env = Environment(values, prices, ("buy", "pass"), utility)
    >>> env.best_reaction.tolist()                             # only 0.75 buys, and only at 0.5
    [[1, 1], [0, 1]]
    >>> profile = env.profile([0.75, 0.75, 0.25])
    >>> env.objective_values(profile).tolist(), env.sensitivity  # welfare per price; Delta
    ([0.5, 0.0], 0.25)
    """

    types: np.ndarray
    outcomes: np.ndarray
    reactions: tuple[str, ...]
    utility: np.ndarray
    objective: np.ndarray | None = None
    offset: np.ndarray | None = None
    objective_name: str = "welfare"
    name: str = "environment"
    outcome_names: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        types = np.asarray(self.types)
        outcomes = np.asarray(self.outcomes)
        u = finite_array("utility", self.utility)
        if types.ndim != 1 or types.size == 0:
            raise ValidationError("types", ": need a non-empty 1-d array of type labels")
        if outcomes.ndim not in (1, 2) or outcomes.shape[0] == 0:
            raise ValidationError("outcomes", ": need a non-empty array of outcome labels")
        if isinstance(self.reactions, (str, bytes)) or not isinstance(
            self.reactions, (tuple, list)
        ):
            raise ValidationError(
                "reactions", f"must be a list of reaction names, got {self.reactions!r}"
            )
        reactions = tuple(str(r) for r in self.reactions)
        if self.outcome_names is not None and (
            not isinstance(self.outcome_names, (tuple, list))
            or len(self.outcome_names) != outcomes.shape[0]
        ):
            raise ValidationError(
                "outcome_names", f"must be {outcomes.shape[0]} names, one per outcome"
            )
        shape = (types.size, outcomes.shape[0], len(reactions))
        if len(reactions) == 0:
            raise ValidationError("reactions", ": need at least one reaction")
        if u.shape != shape:
            raise ValidationError(
                "utility", f"must have shape types x outcomes x reactions = {shape}, got {u.shape}"
            )
        if u.size > MAX_ENTRIES:
            raise ValidationError(
                "types",
                f"x outcomes x reactions = {u.size:,} entries exceeds {MAX_ENTRIES:,}: "
                "restrict the type space or the outcomes",
            )
        if not np.isfinite(u).all():
            raise ValidationError("utility", "must be finite")
        obj = u if self.objective is None else finite_array("objective", self.objective)
        if obj.shape != shape or not np.isfinite(obj).all():
            raise ValidationError("objective", f"must be a finite array of shape {shape}")
        offset = np.zeros(shape[1]) if self.offset is None else finite_array("offset", self.offset)
        if offset.shape != (shape[1],) or not np.isfinite(offset).all():
            raise ValidationError("offset", f"must be {shape[1]} finite numbers, one per outcome")
        if len(np.unique(types)) != types.size:
            raise ValidationError("types", ": labels must be distinct")
        for name, value in (
            ("types", types),
            ("outcomes", outcomes),
            ("reactions", reactions),
            ("utility", u),
            ("objective", obj),
            ("offset", offset),
        ):
            object.__setattr__(self, name, value)

    # --- sizes -------------------------------------------------------------------------------
    @property
    def n_types(self) -> int:
        """``m``, the size of the type space."""
        return self.types.size

    @property
    def n_outcomes(self) -> int:
        """``K``, the number of outcomes."""
        return self.outcomes.shape[0]

    @property
    def n_reactions(self) -> int:
        """``R``, the number of reactions."""
        return len(self.reactions)

    def outcome_label(self, s: int) -> str:
        """A short printable name of outcome ``s``."""
        if self.outcome_names is not None:
            return self.outcome_names[s]
        o = self.outcomes[s]
        return (
            "+".join(str(x) for x in o)
            if np.ndim(o)
            else f"{o:g}"
            if isinstance(o, float)
            else str(o)
        )

    def type_label(self, t: int):
        """Type ``t``'s label as a plain Python value."""
        return _plain(self.types[t])

    # --- reactions and utilities -------------------------------------------------------------
    @cached_property
    def best_reaction(self) -> np.ndarray:
        """``r(t, s)`` (m x K): the utility-maximising reaction, the first listed on ties."""
        return np.argmax(self.utility, axis=2)

    @cached_property
    def reaction_masks(self) -> list[np.ndarray]:
        """For each reaction ``r``, the m x K indicator ``[r(t, s) == r]`` as floats."""
        return [(self.best_reaction == r).astype(float) for r in range(self.n_reactions)]

    @cached_property
    def best_utility(self) -> np.ndarray:
        """``u(t, s, r(t, s))`` (m x K)."""
        return np.take_along_axis(self.utility, self.best_reaction[:, :, None], axis=2)[:, :, 0]

    @cached_property
    def score(self) -> np.ndarray:
        """Each type's contribution to the objective when reacting best (m x K): the objective of a
        truthful profile at ``s`` is ``sum_t counts[t] * score[t, s] + offset[s]``."""
        if self.objective is self.utility:
            return self.best_utility
        return np.take_along_axis(self.objective, self.best_reaction[:, :, None], axis=2)[:, :, 0]

    @cached_property
    def sensitivity(self) -> float:
        """How far one agent's change of type can move the objective at any outcome, exactly:
        ``max_s (max_t score[t, s] - min_t score[t, s])`` (the exponential mechanism's Delta)."""
        return float(np.max(self.score.max(axis=0) - self.score.min(axis=0)))

    @cached_property
    def utility_range(self) -> float:
        """``U_max = max_t (max_s u(t, s, r(t, s)) - min_s ...)``: the most any agent's utility
        under best reactions varies across outcomes.  The exponential mechanism's gain from any lie
        is at most ``(e^eps - 1) U_max`` (Dwork & Roth Prop 10.1, exact form)."""
        return float(np.max(self.best_utility.max(axis=1) - self.best_utility.min(axis=1)))

    @cached_property
    def objective_range(self) -> float:
        """``rho = max_t (max_s score[t, s] - min_s score[t, s])``: the most one agent's
        contribution to the objective varies across outcomes (the objective at any outcome is within
        ``n rho`` plus the offset's range of the optimum)."""
        return float(np.max(self.score.max(axis=1) - self.score.min(axis=1)))

    @property
    def offset_range(self) -> float:
        """``max_s offset[s] - min_s offset[s]``."""
        offset = cast(np.ndarray, self.offset)  # __post_init__ makes it an array
        return float(offset.max() - offset.min())

    def objective_values(self, profile: Profile) -> np.ndarray:
        """The objective of a truthful profile at every outcome (K): ``counts @ score + offset``."""
        self._check(profile)
        return profile.counts @ self.score + self.offset

    def optimum(self, profile: Profile) -> tuple[int, float]:
        """The best outcome for this profile and its objective (exact enumeration over outcomes)."""
        values = self.objective_values(profile)
        s = int(np.argmax(values))
        return s, float(values[s])

    # --- profiles ----------------------------------------------------------------------------
    def type_indices(self, labels: ArrayLike, field_name: str = "types") -> np.ndarray:
        """Indices of type labels in the type space.

        Parameters
        ----------
        labels : array_like, shape (n,)
            One type label per agent.
        field_name : str, default "types"
            The field named in errors.

        Returns
        -------
        numpy.ndarray of int, shape (n,)

        Raises
        ------
        ValidationError
            If ``labels`` is empty or a label is not in the type space (naming the first such
            agent).
        """
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValidationError(field_name, ": need a non-empty list of types")
        order = np.argsort(self.types, kind="stable")
        try:
            pos = np.searchsorted(self.types, labels, sorter=order)
        except TypeError:
            raise ValidationError(
                field_name, f": labels of the wrong kind for types like {self.type_label(0)!r}"
            ) from None
        pos = np.minimum(pos, self.types.size - 1)
        idx = order[pos]
        bad = np.flatnonzero(self.types[idx] != labels)
        if bad.size:
            i = int(bad[0])
            raise ValidationError(
                field_name,
                f": agent {i} has type {_plain(labels[i])!r}, which is not in the type "
                f"space ({self.types.size} types, e.g. {self.type_label(0)!r})",
            )
        return idx

    def profile(self, labels: ArrayLike) -> Profile:
        """A profile from the agents' type labels (see :meth:`type_indices` for the errors)."""
        return Profile(self.type_indices(labels), self.n_types)

    def profile_from_counts(self, counts: ArrayLike) -> Profile:
        """A profile with ``counts[t]`` agents of type ``t`` (agents numbered type by type).

        Raises
        ------
        ValidationError
            Unless ``counts`` is ``m`` whole numbers ``>= 0``, not all zero.
        """
        c = np.asarray(counts)
        if (
            c.shape != (self.n_types,)
            or not np.issubdtype(c.dtype, np.integer)
            or (c < 0).any()
            or c.sum() == 0
        ):
            raise ValidationError(
                "counts", f"must be {self.n_types} whole numbers >= 0, not all zero"
            )
        return Profile(np.repeat(np.arange(self.n_types), c), self.n_types)

    def _check(self, profile: Profile) -> None:
        """A ValidationError unless ``profile`` is a :class:`Profile` over this environment's
        types."""
        if not isinstance(profile, Profile):
            raise ValidationError(
                "profile",
                f"must be a Profile (Environment.profile(labels)), got {type(profile).__name__}",
            )
        if profile.n_types != self.n_types:
            raise ValidationError(
                "profile",
                f": the profile has {profile.n_types} types, the environment {self.n_types}",
            )


def _plain(x):
    """A numpy scalar as the Python value it holds (for messages and reports)."""
    return x.item() if isinstance(x, np.generic) else x
