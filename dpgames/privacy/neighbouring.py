"""The neighbouring relation of a privacy guarantee, as a value.

Differential privacy bounds how much a mechanism's output law can move between *neighbouring*
inputs, and which inputs are neighbours is part of the guarantee: eps-DP when one individual's
record is replaced by another (``Neighbouring.REPLACE_ONE``, the dataset size is public) is not
eps-DP when one record is added or removed (``Neighbouring.ADD_REMOVE_ONE``), and a guarantee for
groups of up to ``k`` individuals (:meth:`Neighbouring.for_group`) is another relation again.  Two
guarantees compose only under one relation
(:meth:`~dpgames.privacy.guarantee.PrivacyGuarantee.under` converts where a theorem allows it).

A relation also carries ``detail``: what the mechanism assumes about how one individual's data
enters it (e.g. "the query's value moves by at most 1 in l1 norm").  The detail is for people;
composition looks at the relation alone (:meth:`Neighbouring.same_relation`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from dpgames.validation import ValidationError, integer

#: Largest group size accepted (the group rule's ``k eps`` stays exact in float arithmetic below
#: it).
MAX_GROUP = 10**15

_KINDS = ("replace", "add-remove")


@dataclass(frozen=True)
class Neighbouring:
    """Which inputs are neighbours: ``kind`` (``"replace"``: one individual's record is replaced,
    the number of records is public; ``"add-remove"``: one record is added or removed) for groups of
    up to ``group`` individuals, with a free-text ``detail`` for people.

    Use the constants :attr:`REPLACE_ONE` and :attr:`ADD_REMOVE_ONE` and :meth:`described`,
    :meth:`for_group`; :meth:`parse` also reads a kind's name (``"replace"``, ``"add-remove"``).

    Parameters
    ----------
    kind : {"replace", "add-remove"}
    group : int, default 1
        Inputs differing in at most ``group`` individuals are neighbours (1 to :data:`MAX_GROUP`).
    detail : str, default ""
        What is assumed of how one individual's data enters the mechanism (not used by composition).

    Raises
    ------
    ValidationError
        On a kind other than the two above, a group size out of range or a detail that is not text.

    Examples
    --------
    >>> Neighbouring.REPLACE_ONE.described("one bid changes")
    Neighbouring(kind='replace', group=1, detail='one bid changes')
    >>> print(Neighbouring.ADD_REMOVE_ONE.for_group(3))
    add or remove up to 3 individuals
    >>> Neighbouring.parse("add-remove") == Neighbouring.ADD_REMOVE_ONE
    True
    >>> Neighbouring.from_dict(Neighbouring.ADD_REMOVE_ONE.to_dict()) == Neighbouring.ADD_REMOVE_ONE
    True
    """

    kind: str
    group: int = 1
    detail: str = ""

    REPLACE_ONE: ClassVar[Neighbouring]
    ADD_REMOVE_ONE: ClassVar[Neighbouring]

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValidationError(
                "neighbouring", f"kind must be one of {_KINDS}, got {self.kind!r}"
            )
        object.__setattr__(self, "group", integer("neighbouring group", self.group, 1, MAX_GROUP))
        if not isinstance(self.detail, str):
            raise ValidationError(
                "neighbouring", f"detail must be a string, got {type(self.detail).__name__}"
            )

    @classmethod
    def parse(cls, value: Neighbouring | str) -> Neighbouring:
        """A relation from a :class:`Neighbouring` (returned as is) or a kind's name (one
        individual).

        Parameters
        ----------
        value : Neighbouring or {"replace", "add-remove"}

        Returns
        -------
        Neighbouring

        Raises
        ------
        ValidationError
            If ``value`` is neither (field ``"neighbouring"``); a description is given with
            :meth:`described`, never as the relation itself.
        """
        if isinstance(value, Neighbouring):
            return value
        if isinstance(value, str) and value in _KINDS:
            return cls(value)
        raise ValidationError(
            "neighbouring",
            f"must be a Neighbouring (e.g. Neighbouring.REPLACE_ONE."
            f"described('one bid changes')) or one of {_KINDS}, got {value!r:.80}",
        )

    def described(self, detail: str) -> Neighbouring:
        """The same relation with ``detail`` as its description (see the class docstring).

        Parameters
        ----------
        detail : str

        Returns
        -------
        Neighbouring

        Raises
        ------
        ValidationError
            If ``detail`` is not a string.
        """
        return replace(self, detail=detail)

    def for_group(self, k: int) -> Neighbouring:
        """The relation of inputs differing in up to ``k`` times as many individuals (``group *
        k``).

        Parameters
        ----------
        k : int
            ``1`` to :data:`MAX_GROUP`.

        Returns
        -------
        Neighbouring

        Raises
        ------
        ValidationError
            If ``k`` is not an integer in ``1 .. MAX_GROUP`` or the product exceeds
            :data:`MAX_GROUP`.
        """
        k = integer("group size k", k, 1, MAX_GROUP)
        if self.group * k > MAX_GROUP:
            raise ValidationError(
                "group size k", f"{k} times a group of {self.group} exceeds {MAX_GROUP:.0e}"
            )
        return replace(self, group=self.group * k)

    def same_relation(self, other: Neighbouring) -> bool:
        """Whether ``other`` is the same relation (kind and group), whatever the details say.

        Parameters
        ----------
        other : Neighbouring

        Returns
        -------
        bool
        """
        return (self.kind, self.group) == (other.kind, other.group)

    @property
    def relation(self) -> str:
        """The relation in words, without the detail (e.g. ``"replace one individual"``)."""
        verb = "replace" if self.kind == "replace" else "add or remove"
        return (
            f"{verb} one individual"
            if self.group == 1
            else f"{verb} up to {self.group} individuals"
        )

    def __str__(self) -> str:
        return f"{self.relation}: {self.detail}" if self.detail else self.relation

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe); :meth:`from_dict` inverts it.

        Returns
        -------
        dict
            ``{"kind", "group", "detail"}``.
        """
        return {"kind": self.kind, "group": self.group, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Neighbouring:
        """The relation :meth:`to_dict` wrote.

        Parameters
        ----------
        data : dict
            ``kind`` (required), ``group`` and ``detail``.

        Returns
        -------
        Neighbouring

        Raises
        ------
        ValidationError
            If ``data`` is not such a dict.
        """
        if (
            not isinstance(data, dict)
            or "kind" not in data
            or not set(data) <= {"kind", "group", "detail"}
        ):
            raise ValidationError(
                "neighbouring", f"must be a dict with keys kind, group, detail; got {data!r:.80}"
            )
        return cls(data["kind"], data.get("group", 1), data.get("detail", ""))


Neighbouring.REPLACE_ONE = Neighbouring("replace")
Neighbouring.ADD_REMOVE_ONE = Neighbouring("add-remove")
