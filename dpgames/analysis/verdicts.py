"""The truthfulness verdict the audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism`
share: :class:`Verdict` (the rounding slack, :meth:`Verdict.is_truthful`, the HTML view) and
:class:`FromBestLie` (``max_gain`` and ``margin`` from the best lie's gain).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from dpgames.analysis.limits import ROUNDING
from dpgames.display import html_table


class _Audited(Protocol):
    """What :class:`Verdict`'s methods read from the audit they are mixed into."""

    @property
    def max_gain(self) -> float: ...

    @property
    def margin(self) -> float: ...

    @property
    def worst_case(self) -> dict[str, Any]: ...

    @property
    def scale(self) -> float: ...

    @property
    def rounding_slack(self) -> float: ...

    def is_truthful(self, tol: float = 0.0) -> bool: ...

    def describe(self) -> str: ...


class Verdict:
    """Shared by the audits: the rounding slack, :meth:`is_truthful` and the HTML view, from the
    audit's ``max_gain``, ``margin``, ``worst_case``, ``scale`` and ``describe()``.

    Every audit names two figures of the best lie (the one of largest gain): ``max_gain = max(gain,
    0)``, never negative (0 when every lie loses or ties), and ``margin = -gain``, the best lie's
    loss: how strictly truth wins (positive when every lie strictly loses, 0 on a tie, negative when
    a lie gains, ``inf`` when no lie was tried).

    A mixin: its methods take ``self`` as the protocol ``_Audited`` (mypy's pattern for mixins),
    because an audit provides ``max_gain`` and ``worst_case`` either as dataclass fields
    (``DominantAudit`` stores them) or as properties computed from its gains: a property declared
    here would block those fields at run time, and an attribute declared here would make the
    properties illegal overrides.
    """

    @property
    def rounding_slack(self: _Audited) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, utility scale)``."""
        return ROUNDING * max(1.0, self.scale)

    def is_truthful(self: _Audited, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack

    def _repr_html_(self: _Audited) -> str:
        """The headline figures as a table (Jupyter): the worst lie, its interval if estimated, the
        verdict; titled by the first line of ``describe()``."""
        worst = self.worst_case or {}
        rows = [("largest gain", worst.get("gain", self.max_gain))]
        rows += [("agent", worst["agent"])] if "agent" in worst else []
        rows += [
            (key.replace("_", " "), repr(worst[key]))
            for key in ("true_type", "lie")
            if key in worst
        ]
        if worst.get("ci") is not None:
            rows.append(("95% CI", f"[{worst['ci'][0]:.6g}, {worst['ci'][1]:.6g}]"))
        rows.append(("margin (best lie's loss)", self.margin))
        rows.append(("truthful", self.is_truthful()))
        return html_table(rows, title=self.describe().splitlines()[0])


def best_and_margin(best: float) -> tuple[float, float]:
    """``(max_gain, margin)`` from the best lie's gain: ``max_gain = max(best, 0)`` and ``margin =
    -best`` (the best lie's loss; ``inf`` when no lie was tried)."""
    if best == -np.inf:
        return 0.0, np.inf
    return max(float(best), 0.0), 0.0 - float(best)


class FromBestLie:
    """``max_gain`` and ``margin`` of an audit that stores ``best``, the best lie's gain (its score:
    for an ordinal audit, how far the lie's lottery escapes truth's dominance)."""

    best: float

    @property
    def max_gain(self) -> float:
        """The best lie's gain if positive, else 0."""
        return best_and_margin(self.best)[0]

    @property
    def margin(self) -> float:
        """The best lie's loss, minus its gain (0 for a lie that ties; ``inf`` when no lie was
        tried)."""
        return best_and_margin(self.best)[1]
