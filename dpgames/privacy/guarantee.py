"""What a mechanism promises: its privacy parameters and the neighbouring relation they hold for."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from dpgames.privacy.conversions import RDPCurve, rdp_to_dp, zcdp_to_dp
from dpgames.privacy.neighbouring import MAX_GROUP, Neighbouring
from dpgames.validation import ValidationError, integer, non_negative, probability

#: Largest repeat count or group size accepted (counts up to it are exact in float arithmetic).
MAX_COUNT = MAX_GROUP

_GROUP_RULE = "group privacy (Dwork & Roth Thm 2.2; Bun & Steinke 2016 Prop. 1.9 for zCDP)"


@dataclass(frozen=True)
class PrivacyGuarantee:
    """``(epsilon, delta)``-differential privacy with respect to the relation ``neighbouring``.

    ``rho`` is set for mechanisms that are also ``rho``-zCDP, ``rdp`` (an :class:`RDPCurve`) for
    mechanisms with a known Renyi-DP curve tighter than ``alpha rho``.  A mechanism known only as
    ``rho``-zCDP states ``epsilon = inf`` (true but empty) and ``rho``: see :meth:`from_zcdp`;
    :meth:`at_delta` converts it to (eps, delta).  Guarantees are plain data: they compare with
    ``==``, print, and round-trip through :meth:`to_dict` / :meth:`from_dict`.

    Parameters
    ----------
    epsilon : float
        ``>= 0``, ``inf`` allowed.
    delta : float, default 0
        In ``[0, 1]``.
    neighbouring : Neighbouring or str, default ``Neighbouring.REPLACE_ONE``
        Which inputs are neighbours: a :class:`Neighbouring` or a kind's name
        (:meth:`Neighbouring.parse`).
    rho : float, optional
        The zCDP parameter (finite, ``>= 0``).
    rdp : RDPCurve, optional
        A Renyi-DP curve.

    Raises
    ------
    ValidationError
        On a value out of range or of the wrong type; ``field`` names it.

    Examples
    --------
    >>> g = PrivacyGuarantee(
    ...     0.5, neighbouring=Neighbouring.REPLACE_ONE.described("one bid changes")
    ... )
    >>> print(g)
    0.5-DP (replace one individual: one bid changes)
    >>> PrivacyGuarantee.from_dict(g.to_dict()) == g
    True
    >>> print(PrivacyGuarantee.from_zcdp(0.125).at_delta(1e-5))
    (2.16576, 1e-05)-DP, 0.125-zCDP (replace one individual)
    >>> print(
    ...     PrivacyGuarantee(0.5, neighbouring=Neighbouring.ADD_REMOVE_ONE)
    ...     .under(Neighbouring.REPLACE_ONE)
    ...     .epsilon
    ... )
    1.0
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: Neighbouring = Neighbouring.REPLACE_ONE
    rho: float | None = None
    rdp: RDPCurve | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", non_negative("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(
            self, "delta", probability("delta", self.delta, allow_zero=True, allow_one=True)
        )
        if self.rho is not None:
            object.__setattr__(self, "rho", non_negative("rho", self.rho))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring))
        if self.rdp is not None and not isinstance(self.rdp, RDPCurve):
            raise ValidationError(
                "rdp",
                "must be an RDPCurve (e.g. RDPCurve.laplace(eps) or RDPCurve.table(pairs)), "
                f"got {type(self.rdp).__name__}",
            )

    @classmethod
    def from_zcdp(
        cls, rho: float, neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE
    ) -> PrivacyGuarantee:
        """``rho``-zCDP only (Bun & Steinke 2016); ``epsilon`` is ``inf`` until :meth:`at_delta`.

        Parameters
        ----------
        rho : float
            Finite, ``>= 0``.
        neighbouring : Neighbouring or str, default ``Neighbouring.REPLACE_ONE``

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            If ``rho`` is negative, infinite or not a number.
        """
        return cls(math.inf, 0.0, Neighbouring.parse(neighbouring), rho)

    def __str__(self) -> str:
        if math.isinf(self.epsilon) and self.rho is not None:
            return f"{self.rho:g}-zCDP ({self.neighbouring})"
        core = (
            f"{self.epsilon:g}-DP" if self.delta == 0 else f"({self.epsilon:g}, {self.delta:g})-DP"
        )
        extra = f", {self.rho:g}-zCDP" if self.rho is not None else ""
        return f"{core}{extra} ({self.neighbouring})"

    def _repr_html_(self) -> str:
        """Jupyter: the parameters and the relation as a table."""
        from dpgames.display import html_table  # the leaf display module, loaded on first show

        rows: list[tuple[str, object]] = [("epsilon", self.epsilon), ("delta", self.delta)]
        rows += [("rho (zCDP)", self.rho)] if self.rho is not None else []
        rows += [("RDP curve", repr(self.rdp))] if self.rdp is not None else []
        rows += [("neighbours", self.neighbouring.relation)]
        rows += [("assuming", self.neighbouring.detail)] if self.neighbouring.detail else []
        return html_table(rows, title="PrivacyGuarantee")

    def rdp_curve(self) -> RDPCurve | None:
        """The tightest Renyi-DP curve this guarantee implies: the stated one, else ``alpha rho``
        from zCDP, else ``min(eps, alpha eps^2/2)`` from pure DP; ``None`` for approximate DP alone.

        Returns
        -------
        RDPCurve or None
        """
        if self.rdp is not None:
            return self.rdp
        if self.rho is not None:
            return RDPCurve.zcdp(self.rho)
        if self.delta == 0 and math.isfinite(self.epsilon):
            return RDPCurve.pure(self.epsilon)
        return None

    def at_delta(self, delta: float) -> PrivacyGuarantee:
        """The smallest eps this guarantee certifies at ``delta``: the stated (eps, delta) when its
        delta is at most ``delta``, or the conversion of its RDP / zCDP curve, whichever is smaller.
        ``inf`` is the true answer where no bound exists at ``delta`` (e.g. ``delta = 0`` for an
        approximate-DP guarantee without a curve).

        Parameters
        ----------
        delta : float
            In ``[0, 1]``.

        Returns
        -------
        PrivacyGuarantee
            Stated at ``delta``, with the same relation, ``rho`` and curve.

        Raises
        ------
        ValidationError
            If ``delta`` is not a probability.
        """
        delta = probability("delta", delta, allow_zero=True, allow_one=True)
        candidates = [self.epsilon if self.delta <= delta else math.inf]
        if delta > 0 and self.rho is not None:
            candidates.append(zcdp_to_dp(self.rho, delta))
        curve = self.rdp_curve()
        if delta > 0 and curve is not None:
            candidates.append(rdp_to_dp(curve, delta))
        return PrivacyGuarantee(min(candidates), delta, self.neighbouring, self.rho, self.rdp)

    def for_group(self, k: int) -> PrivacyGuarantee:
        """Group privacy for inputs differing in up to ``k`` times as many individuals:
        ``(k eps, k e^{(k-1) eps} delta)`` (Dwork & Roth Thm 2.2 and its approximate-DP form) and
        ``k^2 rho``-zCDP (Bun & Steinke, Prop. 1.9), under :meth:`Neighbouring.for_group`.  A stated
        RDP curve is dropped (no simple group rule).  The delta is computed in log space (it is 1 as
        soon as the product reaches 1).

        Parameters
        ----------
        k : int
            ``1`` to :data:`MAX_COUNT`.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            If ``k`` is out of range, or ``k eps`` or ``k^2 rho`` exceeds the float range.
        """
        k = integer("group size k", k, 1, MAX_COUNT)
        if k == 1:
            return self
        eps = k * self.epsilon
        log_delta = (
            math.log(k) + (k - 1) * self.epsilon + math.log(self.delta)
            if self.delta > 0
            else -math.inf
        )
        delta = 0.0 if self.delta == 0 else 1.0 if log_delta >= 0 else math.exp(log_delta)
        rho = None if self.rho is None else k * k * self.rho
        if (math.isinf(eps) and math.isfinite(self.epsilon)) or (
            rho is not None and math.isinf(rho)
        ):
            raise ValidationError(
                "group size k",
                f"{k} times this guarantee exceeds the float range (eps "
                f"{self.epsilon:g}, rho {self.rho}): no group guarantee can be stated",
            )
        return PrivacyGuarantee(eps, delta, self.neighbouring.for_group(k), rho)

    def under(self, neighbouring: Neighbouring | str) -> PrivacyGuarantee:
        """This guarantee restated under another relation, where a theorem allows it.

        * the same relation (kind and group): unchanged;
        * add/remove to replace: a replacement is one removal and one addition, so replace-``g``
          neighbours are at add/remove distance ``2 g``; with a guarantee for add/remove groups of
          ``h``, group privacy for ``ceil(2 g / h)`` gives it (eps-DP add/remove-one is 2eps-DP
          replace-one);
        * the same kind, another group size: group privacy for ``ceil(g / h)`` (a bound for larger
          groups holds for smaller ones as it is).

        Group privacy: Dwork & Roth Thm 2.2; Bun & Steinke 2016 Prop. 1.9 for zCDP.  The result's
        relation is ``neighbouring`` with a detail citing the rule.

        Parameters
        ----------
        neighbouring : Neighbouring or str

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            From replace to add/remove (``field`` ``"neighbouring"``): replace-one DP keeps the
            number of records public and says nothing about adding or removing one.
        """
        target, own = Neighbouring.parse(neighbouring), self.neighbouring
        if own.same_relation(target):
            return self
        if own.kind == "replace" and target.kind == "add-remove":
            raise ValidationError(
                "neighbouring",
                f": a guarantee under '{own.relation}' implies none under "
                f"'{target.relation}' (replacing keeps the number of records "
                "public, so it says nothing about adding or removing one); "
                "account for it under its own relation",
            )
        distance = target.group * (2 if own.kind != target.kind else 1)
        k = -(-distance // own.group)
        stated = self.for_group(k)
        how = "a replacement is a removal and an addition; " if own.kind != target.kind else ""
        note = (
            f"from '{own}' by {how}{_GROUP_RULE} for {k}"
            if k > 1
            else f"from '{own}' (holds for smaller groups)"
        )
        return replace(stated, neighbouring=Neighbouring(target.kind, target.group, note))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe: ``inf`` as ``"inf"``); :meth:`from_dict` inverts it.

        Returns
        -------
        dict
            Keys ``epsilon``, ``delta``, ``neighbouring`` (:meth:`Neighbouring.to_dict`), ``rho``
            (``None`` if unset) and ``rdp`` (:meth:`RDPCurve.to_dict`, ``None`` if unset).
        """
        return {
            "epsilon": "inf" if math.isinf(self.epsilon) else self.epsilon,
            "delta": self.delta,
            "neighbouring": self.neighbouring.to_dict(),
            "rho": self.rho,
            "rdp": None if self.rdp is None else self.rdp.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrivacyGuarantee:
        """The guarantee :meth:`to_dict` wrote.

        Parameters
        ----------
        data : dict
            Keys among ``epsilon`` (required), ``delta``, ``neighbouring``, ``rho``, ``rdp``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            If ``data`` is not such a dict (unknown or missing keys, values out of range).
        """
        keys = {"epsilon", "delta", "neighbouring", "rho", "rdp"}
        if not isinstance(data, dict) or "epsilon" not in data or not set(data) <= keys:
            raise ValidationError(
                "guarantee",
                f"must be a dict with keys among {sorted(keys)} (epsilon required), "
                f"got {data!r:.80}",
            )
        eps = math.inf if data["epsilon"] == "inf" else data["epsilon"]
        relation = data.get("neighbouring")
        rdp = data.get("rdp")
        return cls(
            eps,
            data.get("delta", 0.0),
            Neighbouring.REPLACE_ONE if relation is None else Neighbouring.from_dict(relation),
            data.get("rho"),
            None if rdp is None else RDPCurve.from_dict(rdp),
        )
