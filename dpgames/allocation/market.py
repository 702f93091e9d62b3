"""A market of unit-demand bidders and kinds of goods in supply ("matching with copies").

``k`` kinds of goods, good ``j`` in supply ``s_j >= 1`` (identical copies); ``n`` bidders, bidder
``i`` with a private value ``v_ij`` in ``[0, 1]`` for one copy of good ``j`` and wanting at most one
copy (unit demand).  An allocation gives each bidder at most one good and good ``j`` to at most
``s_j`` bidders; its welfare is ``sum_i v_{i, mu(i)}``.  This is the setting of Hsu, Huang, Roth,
Roughgarden & Wu (2014, arXiv 1311.2828), whose abstract states the case "agents desire at most one
good" as "exactly the maximum-weight matching problem in a bipartite graph", and that with "several
identical copies of each good" it can be solved accurately under joint differential privacy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    integer,
    memory,
    positive_int,
)

#: Value laws of :meth:`Market.random`.
LAWS = ("uniform", "common")


def check_values(values: ArrayLike, name: str = "values") -> np.ndarray:
    """``values`` as a read-only ``(n, k)`` float array with every entry in ``[0, 1]``.

    Parameters
    ----------
    values : array_like
        ``n >= 1`` rows (bidders), ``k >= 1`` columns (goods).
    name : str, default "values"
        The argument named in errors.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On a non-number, NaN or inf, the wrong shape, or an entry outside ``[0, 1]``.
    """
    v = finite_array(name, values, ndim=2, low=0, high=1)
    if v.shape[0] == 0 or v.shape[1] == 0:
        raise ValidationError(
            name, f"must have at least one bidder (row) and one good (column), got shape {v.shape}"
        )
    v = v.copy()
    v.flags.writeable = False
    return v


def check_supply(supply: ArrayLike | int, goods: int) -> np.ndarray:
    """``supply`` (one int for every good, or one per good) as a read-only int64 array of ``goods``
    entries, each ``>= 1``.

    Parameters
    ----------
    supply : int or array_like of int
    goods : int

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On a non-integer, a supply below 1 or the wrong number of entries.
    """
    raw = np.asarray(supply)
    if raw.ndim == 0:
        s = np.full(goods, integer("supply", supply, low=1, high=2**40), dtype=np.int64)
    else:
        if raw.shape != (goods,):
            raise ValidationError(
                "supply",
                f"must be one integer or {goods} integers (one per good), got shape {raw.shape}",
            )
        s = np.array(
            [integer("supply", x, low=1, high=2**40) for x in raw.tolist()], dtype=np.int64
        )
    s.flags.writeable = False
    return s


@dataclass(frozen=True, eq=False)
class Market:
    """Unit-demand bidders with values in ``[0, 1]`` and ``k`` goods in supply.

    Parameters
    ----------
    values : array_like
        ``(n, k)``: ``values[i, j]`` is bidder ``i``'s value for one copy of good ``j``, in ``[0,
        1]``.
    supply : int or array_like of int
        Copies of each good (``>= 1``): one number for all goods or one per good.

    Raises
    ------
    ValidationError
        On values outside ``[0, 1]``, NaN, a bad shape, or a supply below 1.

    Examples
    --------
    >>> m = Market([[0.9, 0.2], [0.5, 0.6], [0.4, 0.1]], supply=1)
    >>> m.n, m.k, m.supply.tolist(), m.welfare(np.array([0, 1, -1]))
    (3, 2, [1, 1], 1.5)
    >>> Market.random(1000, 5, supply=100, rng=1).values.shape
    (1000, 5)
    """

    values: np.ndarray
    supply: np.ndarray

    def __post_init__(self) -> None:
        values = check_values(self.values)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "supply", check_supply(self.supply, values.shape[1]))

    @classmethod
    def random(
        cls, n: int, k: int, supply: ArrayLike | int, rng: RNGLike = None, law: str = "uniform"
    ) -> Market:
        """``n`` bidders with values drawn from ``rng``, vectorised.

        ``law = "uniform"``: every ``v_ij`` independent uniform on ``[0, 1]``.  ``law = "common"``:
        goods of common quality ``q_j`` uniform on ``[0, 1]`` and ``v_ij = q_j * u_ij``, ``u_ij``
        uniform on ``[0, 1]`` (every bidder ranks goods alike on average, so demand crowds on the
        best goods).

        Parameters
        ----------
        n, k : int
            ``>= 1``.
        supply : int or array_like of int
        rng : int, Generator or None
            The random source, or a seed for one.
        law : {"uniform", "common"}

        Returns
        -------
        Market

        Raises
        ------
        ValidationError
            On bad sizes (or ``n * k`` beyond the memory limit), supply or law.
        """
        n, k = positive_int("n", n), positive_int("k", k)
        law = choice("law", law, LAWS)
        memory("n", float(n) * k, what=f"{n:,} bidders x {k} goods")
        rng = as_generator(rng)
        values = rng.random((n, k))
        if law == "common":
            values *= rng.random(k)
        return cls(values, supply)  # type: ignore[arg-type]  # __post_init__ checks and converts supply

    @property
    def n(self) -> int:
        """Number of bidders."""
        return self.values.shape[0]

    @property
    def k(self) -> int:
        """Number of kinds of goods."""
        return self.values.shape[1]

    def welfare(self, assignment: np.ndarray) -> float:
        """``sum_i v_{i, assignment[i]}`` over the bidders with a good (``assignment[i] = -1``:
        none).

        Parameters
        ----------
        assignment : numpy.ndarray
            ``n`` ints in ``-1 .. k-1``.

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On an assignment of the wrong shape or out of range (not checked for feasibility: see
            :meth:`is_feasible`).
        """
        a = self._assignment(assignment)
        held = a >= 0
        return float(self.values[np.flatnonzero(held), a[held]].sum())

    def sold(self, assignment: np.ndarray) -> np.ndarray:
        """Copies of each good given out by ``assignment``.

        Parameters
        ----------
        assignment : numpy.ndarray
            ``n`` ints in ``-1 .. k-1``.

        Returns
        -------
        numpy.ndarray
            Shape ``(k,)``.

        Raises
        ------
        ValidationError
            On an assignment of the wrong shape or out of range.
        """
        a = self._assignment(assignment)
        return np.bincount(a[a >= 0], minlength=self.k)

    def _assignment(self, assignment: Any) -> np.ndarray:
        """``assignment`` as ``n`` integers in ``-1 .. k-1`` (a good per bidder, -1 for none), or a
        ValidationError."""
        try:
            a = np.asarray(assignment)
        except (TypeError, ValueError):
            a = np.zeros(0)
        if (
            a.shape != (self.n,)
            or a.dtype.kind not in "iu"
            or (a.size and (a.min() < -1 or a.max() >= self.k))
        ):
            raise ValidationError("assignment", f"must be {self.n} integers in -1..{self.k - 1}")
        return a

    def is_feasible(self, assignment: np.ndarray) -> bool:
        """Whether ``assignment`` gives no good to more bidders than its supply.

        Parameters
        ----------
        assignment : numpy.ndarray
            ``n`` ints in ``-1 .. k-1``.

        Returns
        -------
        bool
        """
        return bool((self.sold(assignment) <= self.supply).all())
