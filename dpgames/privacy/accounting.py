"""Privacy accounting: an immutable log of what ran, and its total privacy cost.

An :class:`Accountant` holds the events spent so far (each a name, a :class:`PrivacyGuarantee` and a
repeat count) and, optionally, a budget.  :meth:`Accountant.spend` returns a *new* accountant (the
old one is unchanged) or raises :class:`BudgetExceededError`.  Totals, every one a valid bound:

* basic composition (Dwork & Roth Thm 3.16): ``(sum eps_i, sum delta_i)``;
* advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20, in its form for
  unequal eps_i): ``eps = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^{eps_i} - 1)``, ``delta =
  sum delta_i
  + delta'``;
* zCDP (Bun & Steinke 2016): the rho_i add up (Lemma 2.3); pure eps-DP counts as eps^2/2-zCDP;
  converted to (eps, delta) by :func:`~dpgames.privacy.conversions.zcdp_to_dp`;
* Renyi DP (Mironov 2017): the curves add up order by order (Prop. 1); converted by
  :func:`~dpgames.privacy.conversions.rdp_values_to_dp` over a grid of orders.

Events that carry no zCDP / RDP statement (approximate DP alone) are composed with the zCDP / RDP
part by basic composition, so those totals stay valid for any mix.  :meth:`Accountant.best_total`
reports the smallest eps among them at a given delta.  Group privacy: :meth:`Accountant.group_total`
applies the group rule to every event and composes the results.

An accountant holds one neighbouring relation (:class:`~dpgames.privacy.neighbouring.Neighbouring`):
guarantees under another are restated under it where group privacy allows (add/remove one to replace
one) and refused otherwise, so a total never mixes relations silently.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from dpgames.privacy.conversions import ALPHAS, rdp_values_to_dp, zcdp_to_dp
from dpgames.privacy.guarantee import MAX_COUNT, PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.validation import ValidationError, integer, probability


class BudgetExceededError(ValidationError):
    """Spending an event would take the total past the accountant's budget (``field``:
    ``"budget"``).

    A :class:`~dpgames.validation.ValidationError`: the request, not dpgames, is at fault.

    Examples
    --------
    >>> acc = Accountant(budget=PrivacyGuarantee(1.0)).spend("first", PrivacyGuarantee(0.6))
    >>> try:
    ...     acc.spend("second", PrivacyGuarantee(0.5))
    ... except BudgetExceededError as error:
    ...     print(error.field)
    budget
    """

    def __init__(self, message: str):
        super().__init__("", message)
        self.field = "budget"


@dataclass(frozen=True)
class PrivacyEvent:
    """One thing that ran: ``count`` runs of a mechanism with guarantee ``guarantee``.

    Parameters
    ----------
    name : str
    guarantee : PrivacyGuarantee
    count : int, default 1
        ``1`` to :data:`~dpgames.privacy.guarantee.MAX_COUNT`.

    Raises
    ------
    ValidationError
        On a name that is not text, a bad count or a guarantee that is not a PrivacyGuarantee.

    Examples
    --------
    >>> PrivacyEvent("query", PrivacyGuarantee(0.1), 3).count
    3
    """

    name: str
    guarantee: PrivacyGuarantee
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValidationError("name", f"must be a string, got {type(self.name).__name__}")
        object.__setattr__(
            self, "count", integer(f"count of event {self.name!r}", self.count, 1, MAX_COUNT)
        )
        if not isinstance(self.guarantee, PrivacyGuarantee):
            raise ValidationError(
                "guarantee",
                f"of event {self.name!r} must be a PrivacyGuarantee, "
                f"got {type(self.guarantee).__name__}",
            )


def _event_rho(g: PrivacyGuarantee) -> float | None:
    """The zCDP parameter of a guarantee: stated, or eps^2/2 for pure DP (Bun & Steinke Prop.
    1.4)."""
    if g.rho is not None:
        return g.rho
    if g.delta == 0 and math.isfinite(g.epsilon):
        rho = g.epsilon * g.epsilon / 2
        return rho if math.isfinite(rho) else None  # eps > 1.9e154: no representable zCDP statement
    return None


def _times(k: int, x: float) -> float:
    return 0.0 if x == 0 else k * x  # k * inf stays inf; 0 stays 0 (no 0 * inf); overflow gives inf


def _overflowed(before: float, added: float, after: float) -> bool:
    """Whether a running sum of finite terms left the float range."""
    return math.isfinite(before) and math.isfinite(added) and not math.isfinite(after)


@dataclass(frozen=True)
class _Totals:
    """Running sums over the events, so that spending costs O(|ALPHAS|) whatever the log's
    length."""

    eps: float = 0.0  # sum k eps
    delta: float = 0.0  # sum k delta
    eps_squared: float = 0.0  # sum k eps^2
    drift: float = 0.0  # sum k eps (e^eps - 1)
    rho: float = 0.0  # sum k rho over events with a zCDP statement
    no_rho: tuple[float, float] = (0.0, 0.0)  # (sum k eps, sum k delta) over the others
    rdp: np.ndarray = field(default_factory=lambda: np.zeros_like(ALPHAS))
    no_rdp: tuple[float, float] = (0.0, 0.0)
    details: tuple[str, ...] = ()  # distinct details of the events' relation, in order of arrival
    overflow: str | None = None  # which running sum of finite terms left the float range

    def plus(self, event: PrivacyEvent) -> _Totals:
        g, k = event.guarantee, event.count
        # e^eps overflows past 709: the advanced bound is then looser than the basic one, and stated
        # inf
        drift = _times(k, g.epsilon * math.expm1(g.epsilon)) if g.epsilon < 700 else math.inf
        rho, curve = _event_rho(g), g.rdp_curve()
        own = (_times(k, g.epsilon), _times(k, g.delta))
        eps, k_rho = self.eps + own[0], 0.0 if rho is None else _times(k, rho)
        overflow = self.overflow or (
            "epsilon"
            if _overflowed(self.eps, g.epsilon, eps)
            else "rho"
            if rho is not None and _overflowed(self.rho, rho, self.rho + k_rho)
            else None
        )
        with np.errstate(over="ignore"):
            rdp = (
                self.rdp if curve is None else self.rdp + k * np.asarray(curve(ALPHAS), dtype=float)
            )
        return _Totals(
            eps=eps,
            delta=self.delta + own[1],
            eps_squared=self.eps_squared + _times(k, g.epsilon * g.epsilon),
            drift=self.drift + drift,
            rho=self.rho + k_rho,
            no_rho=self.no_rho if rho is not None else _add(self.no_rho, own),
            rdp=rdp,
            no_rdp=self.no_rdp if curve is not None else _add(self.no_rdp, own),
            details=self.details
            + (() if g.neighbouring.detail in self.details else (g.neighbouring.detail,)),
            overflow=overflow,
        )


def _add(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return a[0] + b[0], a[1] + b[1]


def _with_rest(convert, curve_is_zero: bool, rest: tuple[float, float], delta: float) -> float:
    """eps of (curve part converted at ``delta - rest_delta``) composed with the rest by basic
    composition; ``inf`` when the rest alone already needs more than ``delta``."""
    rest_eps, rest_delta = rest
    if curve_is_zero:
        return rest_eps if rest_delta <= delta else math.inf
    left = delta - rest_delta
    return convert(left) + rest_eps if left > 0 else math.inf


@dataclass(frozen=True)
class Accountant:
    """An immutable privacy ledger under one neighbouring relation, with an optional budget.

    ``budget`` is a :class:`PrivacyGuarantee`: an (eps, delta) budget is checked against
    :meth:`best_total` at the budget's delta; a zCDP budget (``PrivacyGuarantee.from_zcdp(rho)``)
    against the total rho.  ``events`` may be given to start from a log; otherwise use
    :meth:`spend`.

    The ledger's relation is ``neighbouring`` if given, else the budget's, else the first event's.
    A guarantee under another relation is restated under it by :meth:`PrivacyGuarantee.under`
    (add/remove one to replace one: group privacy, eps-DP becomes 2eps-DP, the rule cited in the
    stored event's relation) or refused with a :class:`~dpgames.validation.ValidationError` (replace
    one to add/remove one: no theorem gives it).

    Parameters
    ----------
    budget : PrivacyGuarantee, optional
        With a finite epsilon or a rho.
    events : sequence of PrivacyEvent, default ()
    neighbouring : Neighbouring or str, optional

    Raises
    ------
    ValidationError
        On a budget or events of the wrong type, a budget under another relation, an event whose
        guarantee cannot be restated under the ledger's relation; :class:`BudgetExceededError` if
        the events already overspend the budget.

    Examples
    --------
    >>> acc = Accountant().spend("query", PrivacyGuarantee(0.1), count=100)
    >>> round(acc.basic_total().epsilon, 6), round(acc.advanced_total(1e-6).epsilon, 4)
    (10.0, 6.3082)
    >>> acc.best_total(1e-6) == min(acc.totals(1e-6).values(), key=lambda g: g.epsilon)
    True
    >>> acc.spend("count", PrivacyGuarantee(0.1, neighbouring=Neighbouring.ADD_REMOVE_ONE)).events[
    ...     -1
    ... ].guarantee.epsilon
    0.2
    """

    budget: PrivacyGuarantee | None = None
    events: tuple[PrivacyEvent, ...] = ()
    neighbouring: Neighbouring | None = None
    _totals: _Totals = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.budget is not None and not isinstance(self.budget, PrivacyGuarantee):
            raise ValidationError(
                "budget", f"must be a PrivacyGuarantee, got {type(self.budget).__name__}"
            )
        if self.budget is not None and math.isinf(self.budget.epsilon) and self.budget.rho is None:
            raise ValidationError("budget", "must have a finite epsilon or a rho")
        try:
            events = tuple(self.events)
        except TypeError:
            raise ValidationError("events", "must be a sequence of PrivacyEvent") from None
        if not all(isinstance(e, PrivacyEvent) for e in events):
            raise ValidationError("events", "must be a sequence of PrivacyEvent")
        relation = self._relation(events)
        object.__setattr__(self, "neighbouring", relation)
        # a budget gives the relation, so it is not None when there is one
        if (
            self.budget is not None
            and relation is not None
            and not self.budget.neighbouring.same_relation(relation)
        ):
            raise ValidationError(
                "budget",
                f"is stated under '{self.budget.neighbouring.relation}', the ledger "
                f"under '{relation.relation}': state both under one relation",
            )
        # relation is None only when there are no events
        events = tuple(
            replace(e, guarantee=e.guarantee.under(cast(Neighbouring, relation))) for e in events
        )
        totals = _Totals()
        for event in events:
            totals = totals.plus(event)
        object.__setattr__(self, "_totals", totals)
        object.__setattr__(self, "events", events)
        self._check_budget(self.events[-1] if self.events else None)

    def _relation(self, events: tuple[PrivacyEvent, ...]) -> Neighbouring | None:
        """The ledger's relation: as given, else the budget's, else the first event's (details
        dropped: the totals state the events' details), else ``None`` until the first event."""
        if self.neighbouring is not None:
            return Neighbouring.parse(self.neighbouring)
        source = self.budget if self.budget is not None else events[0].guarantee if events else None
        return (
            None
            if source is None
            else Neighbouring(source.neighbouring.kind, source.neighbouring.group)
        )

    # --- spending ------------------------------------------------------------------------------
    def spend(self, name: str, guarantee: PrivacyGuarantee, count: int = 1) -> Accountant:
        """A new accountant with ``count`` runs of a mechanism of guarantee ``guarantee`` added.

        Parameters
        ----------
        name : str
        guarantee : PrivacyGuarantee
            Restated under the ledger's relation (:meth:`PrivacyGuarantee.under`) if it has another.
        count : int, default 1
            ``1`` to :data:`~dpgames.privacy.guarantee.MAX_COUNT`.

        Returns
        -------
        Accountant
            This one is unchanged.

        Raises
        ------
        BudgetExceededError
            If that would overspend (nothing changes).
        ValidationError
            On a bad name, guarantee or count, or a guarantee no rule restates under the ledger's
            relation.
        """
        event = PrivacyEvent(name, guarantee, count)
        relation = self.neighbouring
        if relation is None:
            relation = Neighbouring(guarantee.neighbouring.kind, guarantee.neighbouring.group)
        event = replace(event, guarantee=guarantee.under(relation))
        # the running sums grow by one event, not recomputed from the whole ledger
        ledger = copy.copy(self)
        object.__setattr__(ledger, "events", self.events + (event,))
        object.__setattr__(ledger, "neighbouring", relation)
        object.__setattr__(ledger, "_totals", self._totals.plus(event))
        ledger._check_budget(event)
        return ledger

    def can_spend(self, guarantee: PrivacyGuarantee, count: int = 1) -> bool:
        """Whether :meth:`spend` of ``count`` runs of ``guarantee`` would stay within the budget.

        Parameters
        ----------
        guarantee : PrivacyGuarantee
        count : int, default 1

        Returns
        -------
        bool

        Raises
        ------
        ValidationError
            As :meth:`spend`, for anything but overspending.
        """
        try:
            self.spend("probe", guarantee, count)
        except BudgetExceededError:
            return False
        return True

    def affordable_count(self, guarantee: PrivacyGuarantee, limit: int = 10**9) -> int:
        """The largest number of further runs of ``guarantee`` the budget allows (at most
        ``limit``).

        Parameters
        ----------
        guarantee : PrivacyGuarantee
        limit : int, default 10**9

        Returns
        -------
        int
            ``limit`` without a budget; found by doubling and bisection on :meth:`can_spend`.

        Raises
        ------
        ValidationError
            On a bad ``limit`` or guarantee.
        """
        limit = integer("limit", limit, 1, MAX_COUNT)
        if self.budget is None:
            return limit
        if not self.can_spend(guarantee, 1):
            return 0
        low, high = 1, 2
        while high <= limit and self.can_spend(guarantee, high):
            low, high = high, 2 * high
        high = min(high, limit + 1)
        while high - low > 1:  # can_spend(low) is true, can_spend(high) false or high > limit
            mid = (low + high) // 2
            low, high = (mid, high) if self.can_spend(guarantee, mid) else (low, mid)
        return low

    def _check_budget(self, event: PrivacyEvent | None) -> None:
        b = self.budget
        if b is None:
            return
        if self._totals.overflow:
            over, spent = True, f"a total {self._totals.overflow} beyond the float range"
        elif math.isfinite(b.epsilon):
            total = self.best_total(b.delta)
            over = total.epsilon > b.epsilon * (1 + 1e-12)
            spent = f"({total.epsilon:.6g}, {b.delta:g})-DP"
        else:
            rho = self.rho
            # a budget of infinite eps has a rho
            over = rho is None or rho > cast(float, b.rho) * (1 + 1e-12)
            spent = (
                "no zCDP bound (an event is approximate DP only)"
                if rho is None
                else f"{rho:.6g}-zCDP"
            )
        if over:
            what = (
                f"spending {event.count} x {event.name!r} ({event.guarantee})"
                if event
                else "nothing"
            )
            raise BudgetExceededError(
                f"{what} would bring the total to {spent}, over the budget {b}"
            )

    # --- totals --------------------------------------------------------------------------------
    def _representable(self) -> _Totals:
        """The running sums, or a ValidationError if one of them left the float range (finite events
        whose total eps or rho exceeds about 1.8e308 have no representable total)."""
        t = self._totals
        if t.overflow:
            raise ValidationError(
                "events",
                f": their total {t.overflow} exceeds the float range (about 1.8e308), "
                "no total can be stated",
            )
        return t

    def _stated(self, epsilon: float, delta: float) -> PrivacyGuarantee:
        """A total: under the ledger's relation (replace one if still empty), its detail the
        ledger's or the events' details joined."""
        relation = self.neighbouring or Neighbouring.REPLACE_ONE
        if not relation.detail:
            relation = relation.described("; ".join(d for d in self._totals.details if d))
        return PrivacyGuarantee(epsilon, delta, relation, self.rho)

    @property
    def rho(self) -> float | None:
        """Total zCDP parameter, or ``None`` if some event has no zCDP statement."""
        return self._totals.rho if self._totals.no_rho == (0.0, 0.0) else None

    def basic_total(self) -> PrivacyGuarantee:
        """Basic composition (Dwork & Roth Thm 3.16): ``(sum eps_i, min(1, sum delta_i))``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            If a running sum of finite events left the float range.
        """
        t = self._representable()
        return self._stated(t.eps, min(1.0, t.delta))

    def advanced_total(self, delta: float) -> PrivacyGuarantee:
        """Advanced composition at total ``delta = sum delta_i + delta'`` (Dwork & Roth Thm 3.20):
        ``eps = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^{eps_i} - 1)``; eps is ``inf`` if
        ``delta <= sum delta_i``, and where the formula's value exceeds the float range (some
        ``eps_i > 700``: it is then looser than :meth:`basic_total`).

        Parameters
        ----------
        delta : float
            In ``(0, 1)``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            On a bad ``delta`` or a total beyond the float range.
        """
        delta = probability("delta", delta)
        t = self._representable()
        slack = delta - t.delta
        eps = math.sqrt(-2 * math.log(slack) * t.eps_squared) + t.drift if slack > 0 else math.inf
        return self._stated(eps, delta)

    def zcdp_total(self, delta: float) -> PrivacyGuarantee:
        """zCDP composition (Bun & Steinke Lemma 2.3) converted at ``delta`` (events without a zCDP
        statement: basic composition).

        Parameters
        ----------
        delta : float
            In ``[0, 1)``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            On a bad ``delta`` or a total beyond the float range.
        """
        delta = probability("delta", delta, allow_zero=True)
        t = self._representable()
        eps = _with_rest(lambda d: zcdp_to_dp(t.rho, d), t.rho == 0, t.no_rho, delta)
        return self._stated(eps, delta)

    def rdp_total(self, delta: float) -> PrivacyGuarantee:
        """RDP composition (Mironov 2017, Prop. 1) converted at ``delta`` (events without an RDP
        curve: basic composition).

        Parameters
        ----------
        delta : float
            In ``[0, 1)``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            On a bad ``delta`` or a total beyond the float range.
        """
        delta = probability("delta", delta, allow_zero=True)
        t = self._representable()
        eps = _with_rest(lambda d: rdp_values_to_dp(t.rdp, d), not t.rdp.any(), t.no_rdp, delta)
        return self._stated(eps, delta)

    def totals(self, delta: float) -> dict[str, PrivacyGuarantee]:
        """Every method's (eps, delta) at ``delta``: keys ``"basic"`` (its own delta; eps is inf
        where it exceeds ``delta``), ``"zcdp"``, ``"rdp"`` and, for ``delta > 0``, ``"advanced"``.

        Parameters
        ----------
        delta : float
            In ``[0, 1)``.

        Returns
        -------
        dict of str to PrivacyGuarantee

        Raises
        ------
        ValidationError
            On a bad ``delta`` or a total beyond the float range.
        """
        delta = probability("delta", delta, allow_zero=True)
        basic = self.basic_total()
        if basic.delta > delta:
            basic = replace(basic, epsilon=math.inf, delta=delta)
        out = {"basic": basic, "zcdp": self.zcdp_total(delta), "rdp": self.rdp_total(delta)}
        if delta > 0:
            out["advanced"] = self.advanced_total(delta)
        return out

    def best_total(self, delta: float = 0.0) -> PrivacyGuarantee:
        """The tightest valid (eps, delta) among :meth:`totals`, stated at ``delta``.

        Parameters
        ----------
        delta : float, default 0
            In ``[0, 1)``.

        Returns
        -------
        PrivacyGuarantee

        Raises
        ------
        ValidationError
            On a bad ``delta`` or a total beyond the float range.
        """
        best = min(self.totals(delta).values(), key=lambda g: g.epsilon)
        return replace(best, delta=delta)

    def group_total(self, k: int, delta: float = 0.0) -> PrivacyGuarantee:
        """The tightest (eps, delta) for inputs differing in up to ``k`` individuals: every event's
        group guarantee (:meth:`PrivacyGuarantee.for_group`), composed.

        Parameters
        ----------
        k : int
            ``1`` to :data:`~dpgames.privacy.guarantee.MAX_COUNT`.
        delta : float, default 0

        Returns
        -------
        PrivacyGuarantee
            Under the ledger's relation for groups of ``k`` (:meth:`Neighbouring.for_group`).

        Raises
        ------
        ValidationError
            On a bad ``k`` or ``delta``, or a group guarantee beyond the float range.
        """
        k = integer("k", k, low=1, high=MAX_COUNT)
        relation = None if self.neighbouring is None else self.neighbouring.for_group(k)
        grouped = Accountant(
            events=tuple(replace(e, guarantee=e.guarantee.for_group(k)) for e in self.events),
            neighbouring=relation,
        )
        return grouped.best_total(delta)
