"""Shared machinery of the audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism`.

*Lines*: for one agent and fixed reports of the others, the ``m`` profiles where she reports each type.
Along a line, ``A[t, x]`` (her expected utility with true type ``t`` reporting ``x``) is one dot product
per (law, type); :class:`Lines` gathers the laws of many lines and computes every ``A`` in one
vectorised pass.  Dominant-strategy enumeration (the largest ``A[t, x] - A[t, t]`` over every line) and
the exact Bayesian audit (a weighted sum of the same over the others' profiles) are both built on it.

Also here: the size limits every audit checks before its first rule call, and :class:`Verdict`, the
rounding slack (``1e-12 x max(1, utility scale)``) and truthfulness verdict the audits share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from dpgames.analysis.truthfulness import ROUNDING
from dpgames.display import html_table
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.validation import ValidationError

#: Largest number of profiles (multisets when anonymous) ``profiles="all"`` enumerates ...
PROFILE_LIMIT = 1_000_000
#: ... and largest work (agents audited x types x profiles) it accepts.
WORK_LIMIT = 50_000_000
#: Largest number of rule calls an audit plans (ex post, Monte Carlo, sampled); more is refused up front.
CALL_LIMIT = 5_000_000
#: Lines per vectorised block (bounds the memory of the (types x lines x reports) array).
BLOCK = 4_000_000


class _Audited(Protocol):
    """What :class:`Verdict`'s methods read from the audit they are mixed into."""

    @property
    def max_gain(self) -> float: ...

    @property
    def worst_case(self) -> dict[str, Any]: ...

    @property
    def scale(self) -> float: ...

    @property
    def rounding_slack(self) -> float: ...

    def is_truthful(self, tol: float = 0.0) -> bool: ...

    def describe(self) -> str: ...


class Verdict:
    """Shared by the audits: the rounding slack, :meth:`is_truthful` and the HTML view, from the audit's
    ``max_gain``, ``worst_case``, ``scale`` and ``describe()``.

    A mixin: its methods take ``self`` as the protocol ``_Audited`` (mypy's pattern for mixins), because
    an audit provides ``max_gain`` and ``worst_case`` either as dataclass fields (``DominantAudit`` stores
    them) or as properties computed from its gains: a property declared here would block those fields at
    run time, and an attribute declared here would make the properties illegal overrides.
    """

    @property
    def rounding_slack(self: _Audited) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, utility scale)``."""
        return ROUNDING * max(1.0, self.scale)

    def is_truthful(self: _Audited, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack

    def _repr_html_(self: _Audited) -> str:
        """The headline figures as a table (Jupyter): the worst lie, its interval if estimated, the verdict;
        titled by the first line of ``describe()``."""
        worst = self.worst_case or {}
        rows = [("largest gain", worst.get("gain", self.max_gain))]
        rows += [("agent", worst["agent"])] if "agent" in worst else []
        rows += [(key.replace("_", " "), repr(worst[key])) for key in ("true_type", "lie") if key in worst]
        if worst.get("ci") is not None:
            rows.append(("95% CI", f"[{worst['ci'][0]:.6g}, {worst['ci'][1]:.6g}]"))
        rows.append(("truthful", self.is_truthful()))
        return html_table(rows, title=self.describe().splitlines()[0])


def count_profiles(m: int, n: int, anonymous: bool) -> int:
    """Profiles of ``n`` agents over ``m`` types: ``m^n``, or ``C(n + m - 1, n)`` multisets when anonymous."""
    return math.comb(n + m - 1, n) if anonymous else m ** n


def check_calls(field: str, what: str, calls: int, alternatives: str) -> None:
    """Refuse, before any work, an audit that would call the rule more than :data:`CALL_LIMIT` times."""
    if calls > CALL_LIMIT:
        raise ValidationError(field, f"is refused: {what} would call the rule about {calls:,} times (limit "
                                     f"{CALL_LIMIT:,}){alternatives}")


# --- lines: one agent, the others fixed, every report -----------------------------------------------------
class Lines:
    """Laws of many profiles, gathered so that expected utilities are computed in one vectorised pass.

    The laws are kept flat (outcome indices, probabilities, one segment per profile), and the expected
    utility of every type at every law is computed once per utility table, for the laws added since."""

    def __init__(self, mech: CustomMechanism):
        self.mech = mech
        self.ids: dict = {}
        self.cols: list[int] = []
        self.probs: list[float] = []
        self.starts: list[int] = []
        self.pays: list[np.ndarray | None] = []
        self._eu: dict = {}
        self._paid: tuple[int, np.ndarray] = (0, np.empty((0, 0)))

    def id(self, profile: tuple) -> int:
        """The local id of a profile (a tuple of type indices), computing its law on first sight."""
        mech = self.mech
        key = mech.key(np.asarray(profile, dtype=np.intp)) if mech.anonymous else profile
        j = self.ids.get(key)
        if j is None:
            idx = np.asarray(profile, dtype=np.intp)
            out, p, pay = mech.entry(idx, mech.labels(idx), key)
            j = self.ids[key] = len(self.starts)
            self.starts.append(len(self.cols))
            if p is None:
                self.cols.append(out)
                self.probs.append(1.0)
            else:
                self.cols.extend(out.tolist())
                self.probs.extend(p.tolist())
            self.pays.append(pay)
        return j

    def grid(self, agent: int, others: Sequence[tuple]) -> np.ndarray:
        """``J[line, x]``: the id of the profile where ``agent`` reports ``x`` and the others ``others[line]``."""
        m = self.mech.n_types
        return np.array([[self.id(o[:agent] + (x,) + o[agent:]) for x in range(m)] for o in others],
                        dtype=np.intp).reshape(len(others), m)

    def _expected(self, agent: int) -> np.ndarray:
        """``eu[t, j]``: the expected utility of type ``t`` at law ``j`` (before payments)."""
        mech, m = self.mech, self.mech.n_types
        key = agent if mech.agent_dependent else None
        done, eu = self._eu.get(key, (0, np.empty((m, 0))))
        if done < len(self.starts):
            lo = self.starts[done]
            cols, weights = np.array(self.cols[lo:], dtype=np.intp), np.array(self.probs[lo:])
            table = mech.fill(agent, np.arange(m), np.unique(cols))
            fresh = np.add.reduceat(table[:, cols] * weights, np.array(self.starts[done:]) - lo, axis=1)
            eu = np.hstack([eu, fresh])
            self._eu[key] = (len(self.starts), eu)
        return eu

    def _payments(self) -> np.ndarray:
        """Payments per law: ``(laws, n)``, or ``(laws, types)`` by reported type when anonymous."""
        done, paid = self._paid
        if done < len(self.pays):
            fresh = np.array(self.pays[done:])
            paid = fresh if done == 0 else np.vstack([paid, fresh])
            self._paid = (len(self.pays), paid)
        return paid

    def utilities(self, agent: int, J: np.ndarray) -> np.ndarray:
        """``A[t, line, x]``: ``agent``'s expected utility (minus payment) with true type ``t`` reporting
        ``x`` on each line of ``J``."""
        A = self._expected(agent)[:, J]
        if self.pays[0] is not None:
            paid = self._payments()
            m = self.mech.n_types
            A = A - (paid[J, np.arange(m)[None, :]] if self.mech.anonymous else paid[J, agent])[None]
        return A


def line_gains(A: np.ndarray) -> np.ndarray:
    """``G[t, line, x] = A[t, line, x] - A[t, line, t]``, truth-telling masked to ``-inf`` (kept if m = 1)."""
    m = A.shape[0]
    truth = A[np.arange(m), :, np.arange(m)]  # (m, lines)
    G = A - truth[:, :, None]
    if m > 1:
        G[np.arange(m), :, np.arange(m)] = -np.inf
    return G
