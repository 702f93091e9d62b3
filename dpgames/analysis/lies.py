"""The lies an audit of a :class:`~dpgames.mechanisms.custom.CustomMechanism` tries: :class:`Lies`,
every report of an agent's type space, a fixed collection of reports, or a function ``(agent,
true_type) -> reports``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dpgames.display import tuple_text
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.validation import ValidationError, is_hashable


class Lies:
    """The reports each agent may make instead of the truth: every report of her type space
    (``None``), a collection of reports (each agent uses those of her space), or a function
    ``(agent, true_type) -> reports``, called once per (agent, true type) and checked against the
    agent's type space.

    Raises
    ------
    ValidationError
        On a collection holding a report of no type space, or a function that raises, returns
        something other than a collection of reports, or a report outside the agent's type space.
    """

    def __init__(self, mech: CustomMechanism, lies: Any):
        self.mech = mech
        self.function = callable(lies) and not isinstance(lies, (str, bytes))
        self.given = lies
        self._cache: dict[tuple[int, int], np.ndarray] = {}
        self.fixed: np.ndarray | None = None
        if lies is None or self.function:
            return
        if isinstance(lies, (str, bytes)) or not isinstance(lies, Iterable):
            raise ValidationError(
                "lies",
                f"must be a collection of reports or a function (agent, true_type) -> "
                f"reports, got {lies!r}",
            )
        self.fixed = np.zeros(mech.n_types, dtype=bool)
        for r in lies:
            k = mech._index.get(r) if is_hashable(r) else None
            if k is None:
                raise ValidationError(
                    "lies", f"holds {r!r}, which is in no type space ({tuple_text(mech.types)})"
                )
            self.fixed[k] = True

    @property
    def restricted(self) -> bool:
        """Whether fewer than every report is tried."""
        return self.given is not None

    def describe(self) -> str:
        """The lies tried, in words."""
        if self.given is None:
            return "every report of her type space"
        if self.fixed is not None:
            return f"the reports {tuple_text(self.mech._labels_of(np.flatnonzero(self.fixed)))}"
        return f"the reports of {getattr(self.given, '__name__', 'lies')}(agent, true type)"

    def allowed(self, agent: int, t: int) -> np.ndarray:
        """Over every type index: whether ``agent`` with true type index ``t`` may report it (truth
        excluded)."""
        hit = self._cache.get((agent, t))
        if hit is not None:
            return hit
        mech = self.mech
        mask = mech._member[mech.role(agent)].copy()
        if self.fixed is not None:
            mask &= self.fixed
        elif self.function:
            mask &= self._called(agent, t)
        mask[t] = False
        self._cache[(agent, t)] = mask
        return mask

    def _called(self, agent: int, t: int) -> np.ndarray:
        mech = self.mech
        label = mech.types[t]
        try:
            raw = self.given(agent, label)
        except Exception as exc:
            raise ValidationError(
                "lies", f"raised {type(exc).__name__}: {exc} for agent {agent}, true type {label!r}"
            ) from exc
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise ValidationError(
                "lies",
                f"must return a collection of reports, got {raw!r} for agent {agent}, "
                f"true type {label!r}",
            )
        out = np.zeros(mech.n_types, dtype=bool)
        for r in raw:
            k = mech._index.get(r) if is_hashable(r) else None
            if k is None or not mech._member[mech.role(agent)][k]:
                raise ValidationError(
                    "lies",
                    f"returned {r!r} for agent {agent} (true type {label!r}), which is "
                    f"not in her type space ({tuple_text(mech.type_space(agent))})",
                )
            out[k] = True
        return out

    def local(self, agent: int) -> np.ndarray:
        """``mask[k, j]``: whether ``agent`` with the ``k``-th type of her space may report the
        ``j``-th."""
        space = self.mech.space(agent)
        return np.array([self.allowed(agent, int(t))[space] for t in space.tolist()]).reshape(
            space.size, space.size
        )

    def representatives(self, agents: Sequence[int], keys: Sequence[Any], whole: bool) -> list[int]:
        """The first of ``agents`` per distinct (key, lies): agents of one key (e.g. one class of an
        anonymous mechanism) with the same lies are audited once.  ``whole``: compare every true
        type's lies (else only the truth given as each key's type index, ``key[1]``)."""
        seen: dict = {}
        for i, key in zip(agents, keys):
            if self.function:
                mask = self.local(i) if whole else self.allowed(i, int(key[1]))
                key = (key, mask.tobytes())
            seen.setdefault(key, i)
        return sorted(seen.values())
