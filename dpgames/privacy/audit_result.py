"""What a privacy audit found: one type for the exact audit and for the black-box audit.

A :class:`PrivacyAudit` says which it is (:attr:`PrivacyAudit.exact`):

* **exact** (:func:`~dpgames.privacy.audit.audit_finite`): ``epsilon`` is the smallest eps for which
  every audited pair of neighbouring inputs is (eps, delta)-indistinguishable, computed from the
  exact output laws (the largest privacy loss when ``delta = 0``; the hockey-stick divergence
  otherwise);
* **black box** (:func:`~dpgames.privacy.black_box.audit_black_box`): ``epsilon`` is a lower bound
  on the mechanism's eps at ``delta`` that holds with probability at least ``confidence``, from the
  counts of one event under the two inputs on samples that played no part in choosing the pair or
  the event (``delta = 0``: ``ln(pi_L / (1 - pi_L))`` with ``pi_L`` a one-sided Clopper-Pearson
  lower bound on ``p / (p + q)`` from Poisson-sized samples; ``delta > 0``: ``ln((p_low - delta) /
  q_high)`` with one-sided Clopper-Pearson bounds on the two probabilities).

Either way ``worst`` names the pair of inputs and the outcome (exact) or event (black box) where the
figure is attained, so a violation can be reproduced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpgames.validation import ValidationError, non_negative, probability

#: Slack for rounding when an exact audit is compared with a claimed (eps, delta).
TOLERANCE = 1e-9


def show(value: Any, limit: int = 80) -> str:
    """A short text for an input, outcome or event (numpy scalars and arrays without their type
    names), cut to ``limit`` characters.

    Parameters
    ----------
    value : object
    limit : int, default 80

    Returns
    -------
    str
    """
    if isinstance(value, np.generic):
        text = repr(value.item())
    elif isinstance(value, np.ndarray):
        text = np.array2string(value, separator=", ", threshold=20)
    else:
        text = repr(value)
    return cut(text, limit)


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class PrivacyAudit:
    """The result of a privacy audit (see the module docstring for what ``epsilon`` means on each
    path).

    Attributes
    ----------
    epsilon : float
        Exact: the smallest eps for which every audited pair is (eps, delta)-DP (``inf`` when some
        outcome is possible under one input and impossible under its neighbour).  Black box: a lower
        bound on eps at ``delta``, valid with probability ``confidence`` (``inf`` never: a finite
        sample certifies a finite bound).
    exact : bool
        Which path produced it.
    worst : dict
        ``"pair"``: the inputs ``(x, x')`` in the order of the loss; exact: ``"outcome"`` and
        ``"probabilities"`` ``(P_x(o), P_x'(o))``; black box: ``"event"`` (a readable description),
        ``"counts"`` ``(k, k')`` and ``"samples"`` ``(N, N')`` of the certification.
    pairs : int
        Neighbouring pairs examined (each in both orders).
    delta : float, default 0
        The delta the figure ``epsilon`` is stated at.
    relation : str, default ""
        The neighbouring relation the pairs come from, when known.
    confidence : float or None
        Black box only: the probability that the bound holds.
    claimed : tuple of float or None
        The ``(eps, delta)`` the mechanism was audited against, if any.
    delta_at_claim : float or None
        Exact audits against a claim: the smallest delta at the claimed eps (hockey-stick
        divergence).
    method : str
        How the figure was obtained, in words.
    notes : tuple of str
        Anything else a reader needs (search budget, candidates screened, corrections applied).

    Examples
    --------
    >>> a = PrivacyAudit(
    ...     0.25, True, {"pair": (0, 1), "outcome": "heads", "probabilities": (0.5, 0.4)}, 1
    ... )
    >>> a.satisfies(0.3), a.refutes(0.2)
    (True, True)
    """

    epsilon: float
    exact: bool
    worst: dict[str, Any]
    pairs: int
    delta: float = 0.0
    relation: str = ""
    confidence: float | None = None
    claimed: tuple[float, float] | None = None
    delta_at_claim: float | None = None
    method: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0 and not math.isnan(self.epsilon)):
            raise ValidationError(
                "epsilon", f"of an audit must be >= 0 (inf allowed), got {self.epsilon}"
            )
        if not self.exact and not math.isfinite(self.epsilon):
            raise ValidationError("epsilon", "a black-box bound is finite")
        if self.pairs < 1:
            raise ValidationError("pairs", f"an audit examines at least one pair, got {self.pairs}")
        probability("delta", self.delta, allow_zero=True)
        if self.confidence is not None:
            probability("confidence", self.confidence)
        if self.delta_at_claim is not None:
            probability("delta_at_claim", self.delta_at_claim, allow_zero=True, allow_one=True)

    def refutes(self, epsilon: float, delta: float | None = None) -> bool:
        """Whether the audit shows the mechanism is *not* (epsilon, delta)-DP (exactly, or at the
        stated confidence for a black-box audit).

        Parameters
        ----------
        epsilon : float
            ``>= 0``.
        delta : float, optional
            Defaults to the audit's own ``delta``.  A black-box bound is stated at one delta; asking
            at another needs a new audit.

        Returns
        -------
        bool

        Raises
        ------
        ValidationError
            If the figure cannot answer at that delta (a black-box audit at another delta; an exact
            audit at another delta and eps without the delta at that claim).
        """
        epsilon = non_negative("epsilon", epsilon, allow_inf=True)
        delta = (
            self.delta
            if delta is None
            else probability("delta", delta, allow_zero=True, allow_one=True)
        )
        if math.isclose(delta, self.delta, rel_tol=0, abs_tol=1e-15):
            return self.epsilon > epsilon + (TOLERANCE if self.exact else 0.0)
        if (
            self.exact
            and self.claimed is not None
            and self.delta_at_claim is not None
            and math.isclose(self.claimed[0], epsilon)
        ):
            return self.delta_at_claim > delta + TOLERANCE
        how = (
            "re-run the audit with that delta"
            if not self.exact
            else "re-run it with epsilon and delta claimed"
        )
        raise ValidationError("delta", f": this audit states eps at delta = {self.delta:g}; {how}")

    def satisfies(self, epsilon: float, delta: float | None = None) -> bool:
        """Exact audits only: whether every audited pair is (epsilon, delta)-DP (up to rounding,
        1e-9).

        Parameters
        ----------
        epsilon : float
        delta : float, optional
            Defaults to the audit's own ``delta``.

        Returns
        -------
        bool

        Raises
        ------
        ValidationError
            On a black-box audit (a sample can refute a claim, never prove it) or a delta it cannot
            answer.
        """
        if not self.exact:
            raise ValidationError(
                "satisfies", ": a black-box audit can refute a claim, not prove it; use refutes()"
            )
        return not self.refutes(epsilon, delta)

    @property
    def kind(self) -> str:
        """``"exact"`` or ``"black box"``."""
        return "exact" if self.exact else "black box"

    def _figure_label(self) -> str:
        at = "" if self.delta == 0 else f" at delta = {self.delta:g}"
        if self.exact:
            return f"epsilon{at} (exact)"
        return f"epsilon{at}, certified lower bound ({self.confidence:.0%} confidence)"

    def rows(self) -> list[tuple[str, Any]]:
        """The findings as (label, value) rows: the figure, the worst pair and where it is attained.

        Returns
        -------
        list of tuple
        """
        w = self.worst
        x, x2 = w["pair"]
        rows: list[tuple[str, Any]] = [
            (self._figure_label(), self.epsilon),
            ("pairs examined", self.pairs),
        ]
        if self.relation:
            rows.append(("neighbouring relation", self.relation))
        rows.append(("worst pair", f"{show(x)} vs {show(x2)}"))
        if self.exact:
            p, q = w["probabilities"]
            rows += [
                ("worst outcome", show(w["outcome"])),
                ("its probabilities", f"{p:.6g} vs {q:.6g}"),
            ]
        else:
            (k, k2), (n, n2) = w["counts"], w["samples"]
            rows += [
                ("event", cut(str(w["event"]), 120)),
                ("event counts", f"{k:,} of {n:,} vs {k2:,} of {n2:,}"),
            ]
        if self.claimed is not None:
            rows.append(("claimed", f"({self.claimed[0]:g}, {self.claimed[1]:g})-DP"))
        if self.delta_at_claim is not None and self.claimed is not None:
            rows.append(
                (f"smallest delta at eps = {self.claimed[0]:g} (exact)", self.delta_at_claim)
            )
        if self.method:
            rows.append(("method", self.method))
        rows += [("note", note) for note in self.notes]
        return rows

    def summary(self) -> str:
        """The figure and where it is attained, in one sentence.

        Returns
        -------
        str
        """
        w = self.worst
        x, x2 = (show(v, 60) for v in w["pair"])
        if self.exact:
            p, q = w["probabilities"]
            where = f"outcome {show(w['outcome'], 60)} (probabilities {p:.6g} vs {q:.6g})"
        else:
            (k, k2), (n, n2) = w["counts"], w["samples"]
            where = f"event {cut(str(w['event']), 80)} ({k:,} of {n:,} vs {k2:,} of {n2:,})"
        return f"{self._figure_label()} {self.epsilon:.6g}, at inputs {x} vs {x2}, {where}"

    def describe(self) -> str:
        """The findings in a few lines: the figure, what kind it is, the worst pair and where it is
        attained.

        Returns
        -------
        str
        """
        from dpgames.display import text_rows  # the leaf display module

        return text_rows(self.rows())

    def _repr_html_(self) -> str:
        """Jupyter: the findings as a table."""
        from dpgames.display import html_table  # the leaf display module, loaded on first show

        return html_table(self.rows(), title=f"PrivacyAudit ({self.kind})")

    def __repr__(self) -> str:
        x, x2 = self.worst["pair"]
        where = show(self.worst["outcome"], 40) if self.exact else cut(str(self.worst["event"]), 40)
        return (
            f"PrivacyAudit(epsilon={self.epsilon:.6g}, exact={self.exact}, delta={self.delta:g}, "
            f"pairs={self.pairs}, worst={show(x, 30)} vs {show(x2, 30)} at {where})"
        )
