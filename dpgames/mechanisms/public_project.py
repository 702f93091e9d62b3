"""A public project (social choice) as an environment: a community picks one of finitely many
alternatives.

Outcomes are the alternatives (no project, a park, a library, both ...), each with a cost to the
community; a type is a valuation vector over the alternatives (a kind of resident); there is nothing
to react (one reaction).  Welfare at an alternative is the sum of the agents' values minus its cost
(the cost enters as the objective's report-independent offset).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.environment import Environment
from dpgames.validation import ValidationError, finite_array, label_array


def public_project_environment(
    valuations: ArrayLike,
    outcomes: ArrayLike,
    types: ArrayLike | None = None,
    cost: ArrayLike | None = None,
) -> Environment:
    """A public project: the agents choose one of K alternatives together; welfare is the sum of
    their valuations minus the alternative's cost.

    Parameters
    ----------
    valuations : array_like, shape (m, K)
        ``valuations[t, s]``: what an agent of type ``t`` is worth alternative ``s``.
    outcomes : sequence of str
        The K alternatives' names.
    types : sequence of str, optional
        The m types' names (default ``"type 0"``, ``"type 1"`` ...).
    cost : array_like, shape (K,), optional
        Cost per alternative (default 0), the environment's ``offset`` with a minus sign.

    Returns
    -------
    Environment
        One reaction (``"accept"``); objective = welfare.

    Raises
    ------
    ValidationError
        If the table is empty or not 2-d, or the names or costs do not match its shape.

    Examples
    --------
    >>> from dpgames.mechanisms import public_project_environment
    >>> env = public_project_environment(
    ...     [[0.0, 1.0], [0.0, 0.2]], ["none", "park"], cost=[0.0, 0.5]
    ... )
    >>> env.objective_values(
    ...     env.profile(["type 0", "type 1", "type 1"])
    ... ).tolist()  # 1 + 0.2 + 0.2 - 0.5
    [0.0, 0.9]
    """
    v = finite_array("valuations", valuations)
    if v.ndim != 2 or v.size == 0:
        raise ValidationError(
            "valuations",
            ": need a non-empty table, one row per type and one column per alternative",
        )
    names = label_array("outcomes", outcomes, v.shape[1])
    labels = (
        np.array([f"type {i}" for i in range(v.shape[0])])
        if types is None
        else label_array("types", types, v.shape[0])
    )
    c = np.zeros(v.shape[1]) if cost is None else finite_array("cost", cost)
    if c.shape != (v.shape[1],) or not np.isfinite(c).all():
        raise ValidationError("cost", f": need {v.shape[1]} finite numbers, one per alternative")
    return Environment(labels, names, ("accept",), v[:, :, None], offset=-c, name="public project")
