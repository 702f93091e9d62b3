"""A public project (social choice) as an environment: a community picks one of finitely many alternatives.

Outcomes are the alternatives (no project, a park, a library, both ...), each with a cost to the
community; a type is a valuation vector over the alternatives (a kind of resident); there is nothing to
react (one reaction).  Welfare at an alternative is the sum of the agents' values minus its cost (the
cost enters as the objective's report-independent offset).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.environment import Environment
from dpgames.validation import ValidationError, finite_array, label_array


def public_project_environment(valuations: ArrayLike, outcomes: ArrayLike, types: ArrayLike | None = None,
                               cost: ArrayLike | None = None) -> Environment:
    """``valuations[t, s]``: what a type-``t`` agent is worth alternative ``s`` (m x K); ``outcomes``: the
    K alternatives' names; ``types``: the m types' names (default ``"type 0"`` ...); ``cost``: per
    alternative (default 0)."""
    v = finite_array("valuations", valuations)
    if v.ndim != 2 or v.size == 0:
        raise ValidationError("valuations", ": need a non-empty table, one row per type and one column per alternative")
    names = label_array("outcomes", outcomes, v.shape[1])
    labels = (np.array([f"type {i}" for i in range(v.shape[0])]) if types is None
              else label_array("types", types, v.shape[0]))
    c = np.zeros(v.shape[1]) if cost is None else finite_array("cost", cost)
    if c.shape != (v.shape[1],) or not np.isfinite(c).all():
        raise ValidationError("cost", f": need {v.shape[1]} finite numbers, one per alternative")
    return Environment(labels, names, ("accept",), v[:, :, None], offset=-c, name="public project")
