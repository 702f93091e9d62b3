"""Agents with private types: type distributions, populations and quasi-linear utilities.

A population is the vector of the agents' true types (here valuations in [0, 1] for one unit of a
digital good).  Populations come from a type distribution and a seed, from an explicit list, or from
a CSV file.  Everything is vectorised over agents.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from dpgames._files import FileError, read_text
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory, positive, real

#: Largest CSV file read: 16 MiB, a million agents or more, read in seconds.
MAX_CSV_BYTES = 16 * 2**20


class TypeDistribution:
    """A distribution of private types; ``sample(n, rng)`` draws ``n`` i.i.d. types.

    Subclass it (a frozen dataclass validating its fields in ``__post_init__``) and implement
    :meth:`sample`; :meth:`Population.draw` then uses it like the built-in ones.

    Examples
    --------
    >>> import numpy as np
    >>> from dataclasses import dataclass
    >>> from dpgames import Population
    >>> from dpgames.agents import TypeDistribution
    >>> @dataclass(frozen=True)
    ... class PointMass(TypeDistribution):
    ...     value: float
    ...     def sample(self, n, rng=None):
    ...         return np.full(n, self.value)
    >>> Population.draw(PointMass(0.4), n=3).values.tolist()
    [0.4, 0.4, 0.4]
    """

    def sample(self, n: int, rng: RNGLike = None) -> np.ndarray:
        """``n`` i.i.d. types.

        Parameters
        ----------
        n : int
            Number of draws, ``>= 0`` (within the memory limit of
            :func:`dpgames.validation.memory`).
        rng : numpy.random.Generator or int or None
            The random source, or a seed for one.

        Returns
        -------
        numpy.ndarray, shape (n,)

        Raises
        ------
        ValidationError
            If ``n`` is not a whole number ``>= 0`` or too large to hold.
        """
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(TypeDistribution):
    """Types uniform on ``[low, high]``.

    Parameters
    ----------
    low, high : float, default 0 and 1
        Finite bounds with ``low <= high`` (and ``high - low`` within the float range).

    Raises
    ------
    ValidationError
        If a bound is not a finite number or ``low > high``.

    Examples
    --------
    >>> from dpgames import Uniform
    >>> Uniform(0.0, 1.0).sample(3, rng=0).round(3).tolist()
    [0.637, 0.27, 0.041]
    """

    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        low, high = real("low", self.low), real("high", self.high)
        if not low <= high:
            raise ValidationError(
                "high", f": uniform needs low <= high, got [{self.low}, {self.high}]"
            )
        if not np.isfinite(high - low):
            raise ValidationError(
                "high", f"- low must be within the float range, got [{self.low}, {self.high}]"
            )

    def sample(self, n: int, rng: RNGLike = None) -> np.ndarray:
        """``n`` i.i.d. types (see :meth:`TypeDistribution.sample`)."""
        return as_generator(rng).uniform(self.low, self.high, size=_sample_size(n))


def _sample_size(n: int) -> int:
    """``n`` as a number of draws: an int >= 0 within the memory limit (a ValidationError
    otherwise)."""
    n = integer("n", n, low=0)
    memory("n", n, what=f"{n:,} types")
    return n


@dataclass(frozen=True)
class Beta(TypeDistribution):
    """Types ``Beta(a, b)`` on [0, 1].

    Parameters
    ----------
    a, b : float
        Shape parameters, finite and ``> 0``.

    Raises
    ------
    ValidationError
        If a shape parameter is not a finite number ``> 0``.

    Examples
    --------
    >>> from dpgames import Beta
    >>> Beta(2, 5).sample(3, rng=0).round(3).tolist()
    [0.229, 0.116, 0.21]
    """

    a: float
    b: float

    def __post_init__(self) -> None:
        positive("a", self.a), positive("b", self.b)

    def sample(self, n: int, rng: RNGLike = None) -> np.ndarray:
        """``n`` i.i.d. types (see :meth:`TypeDistribution.sample`)."""
        return as_generator(rng).beta(self.a, self.b, size=_sample_size(n))


@dataclass(frozen=True)
class Discrete(TypeDistribution):
    """Types drawn from finitely many ``values`` with ``probabilities`` (uniform if omitted): also
    the empirical distribution of a list or a file, resampled with replacement.

    Parameters
    ----------
    values : sequence of float
        At least one finite value.
    probabilities : sequence of float, optional
        One per value, non-negative, summing to 1; uniform if omitted.

    Raises
    ------
    ValidationError
        If ``values`` is empty or not finite, or ``probabilities`` has the wrong length, a negative
        entry or does not sum to 1.

    Examples
    --------
    >>> from dpgames import Discrete
    >>> Discrete((0.2, 0.8), (0.25, 0.75)).sample(5, rng=0).tolist()
    [0.8, 0.8, 0.2, 0.2, 0.8]
    """

    values: tuple[float, ...]
    probabilities: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        values = finite_array("values", self.values, ndim=1)
        if values.size == 0:
            raise ValidationError("values", ": a discrete distribution needs at least one value")
        if self.probabilities is not None:
            p = finite_array("probabilities", self.probabilities)
            if p.shape != (len(self.values),):
                raise ValidationError(
                    "probabilities", f": {len(self.values)} values but {p.size} probabilities"
                )
            if (p < 0).any() or not np.isclose(p.sum(), 1.0):
                raise ValidationError("probabilities", "must be non-negative and sum to 1")

    def sample(self, n: int, rng: RNGLike = None) -> np.ndarray:
        """``n`` i.i.d. types (see :meth:`TypeDistribution.sample`)."""
        return as_generator(rng).choice(
            np.asarray(self.values, dtype=float), size=_sample_size(n), p=self.probabilities
        )


@dataclass(frozen=True)
class Population:
    """The true types of ``n`` agents (valuations in ``[low, high]``, by default [0, 1]).

    Parameters
    ----------
    values : array_like
        One finite type per agent (a non-empty 1-d array); stored read-only.

    Raises
    ------
    ValidationError
        If ``values`` is empty, not 1-d, or holds a non-finite number (field ``values``).

    Examples
    --------
    >>> from dpgames import Population, Uniform
    >>> population = Population.draw(Uniform(0.0, 1.0), n=1000, rng=7)
    >>> population.n
    1000
    >>> bool(((population.values >= 0) & (population.values <= 1)).all())
    True
    >>> Population.from_list([0.25, 0.5, 1.0]).values.tolist()
    [0.25, 0.5, 1.0]
    """

    values: np.ndarray

    def __post_init__(self) -> None:
        v = finite_array("values", self.values)
        if v.ndim != 1 or v.size == 0:
            raise ValidationError("values", ": a population needs at least one agent")
        if not np.isfinite(v).all():
            raise ValidationError("values", ": types must be finite numbers")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @property
    def n(self) -> int:
        """The number of agents."""
        return self.values.size

    @classmethod
    def draw(cls, distribution: TypeDistribution, n: int, rng: RNGLike = None) -> Population:
        """``n`` agents with i.i.d. types from ``distribution``.

        Parameters
        ----------
        distribution : TypeDistribution
            :class:`Uniform`, :class:`Beta`, :class:`Discrete` or a user's subclass.
        n : int
            Number of agents, ``>= 1``.
        rng : numpy.random.Generator or int or None
            The random source, or a seed for one (same seed, same population).

        Returns
        -------
        Population

        Raises
        ------
        ValidationError
            If ``n`` is not a whole number ``>= 1`` (or too large to hold).
        """
        n = integer("n", n, low=1)
        return cls(distribution.sample(n, rng))

    @classmethod
    def from_list(cls, values: ArrayLike) -> Population:
        """The agents' types given explicitly (see the class for the errors)."""
        return cls(finite_array("values", values))

    @classmethod
    def from_csv(cls, path: str | Path, column: str | None = None) -> Population:
        """Types from a CSV file: the named column (by header), or the first column.  A header row
        is recognised when its first field is not a number.

        Raises
        ------
        ValidationError
            A ``FileError`` naming the file, line and column of the first problem
            (:func:`read_csv_column`).
        """
        return cls(read_csv_column(path, column))

    def check_within(self, low: float, high: float) -> None:
        """Raise if a type lies outside ``[low, high]``, naming the first offender.

        Raises
        ------
        ValidationError
            Field ``values``: the first agent out of range, her type and how many are out.
        """
        low, high = real("low", low), real("high", high)
        bad = np.flatnonzero((self.values < low) | (self.values > high))
        if bad.size:
            i = int(bad[0])
            raise ValidationError(
                "values",
                f": agent {i} has type {self.values[i]:g}, outside [{low:g}, {high:g}] "
                f"({bad.size} agent(s) out of range)",
            )


def read_csv_column(path: str | Path, column: str | None = None) -> np.ndarray:
    """One numeric column of a CSV file (UTF-8, a regular file of at most 16 MiB), read in one pass.

    A header row is recognised when its first field is not a number.  Errors name the file, the line
    and the column, never the file's contents; a value must be a finite number (``1e400``, ``inf``
    and ``nan`` are refused).  Cells are converted in blocks by numpy.

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.
    column : str, optional
        The header name of the column to read; default the first column.

    Returns
    -------
    numpy.ndarray of float
        The column's values, in file order (blank rows skipped).

    Raises
    ------
    ValidationError
        A ``FileError`` (``field`` = the file name): unreadable, too large, not UTF-8, not CSV, no
        data rows, an unknown column, or a cell that is empty or not a finite number (naming its
        line).
    """
    path = Path(path)
    reader = csv.reader(io.StringIO(read_text(path, MAX_CSV_BYTES), newline=""))
    blocks: list[np.ndarray] = []
    cells: list[str] = []
    lines: list[int] = []
    col = None
    try:
        for row in reader:
            if not row or not (row[0].strip() or any(cell.strip() for cell in row)):
                continue
            if col is None:
                col, header_line = _csv_column(path, row, column, reader.line_num)
                if header_line is not None:
                    continue
            cells.append(row[col] if col < len(row) else "")
            lines.append(reader.line_num)
            if len(cells) == _CSV_BLOCK:
                blocks.append(_csv_numbers(path, cells, lines, col))
                cells, lines = [], []
    except csv.Error as exc:
        reason = (
            "a field is longer than the CSV limit of 128 KiB"
            if "field limit" in str(exc)
            else "not valid CSV"
        )
        raise FileError(path, f"line {reader.line_num}: {reason}") from None
    if col is None:
        raise FileError(path, "the file has no rows")
    if cells:
        blocks.append(_csv_numbers(path, cells, lines, col))
    if not blocks:
        raise FileError(path, "the file has a header but no data rows")
    return np.concatenate(blocks)


_CSV_BLOCK = 1 << 16


def _csv_column(
    path: Path, first: list[str], column: str | None, line: int
) -> tuple[int, int | None]:
    """The column to read and the header's line (None: the first row is data)."""
    header = None if _is_number(first[0]) else [cell.strip() for cell in first]
    if column is None:
        return 0, None if header is None else line
    if header is None:
        raise FileError(path, f"column {column!r} asked for, but the file has no header row")
    if column not in header:
        raise FileError(path, f"no column {column!r} in the header row (line {line})")
    return header.index(column), line


def _csv_numbers(path: Path, cells: list[str], lines: list[int], col: int) -> np.ndarray:
    """``cells`` as finite floats, else a FileError naming the first bad cell's line (not its
    text)."""
    try:
        values = np.array(cells, dtype=float)
    except (ValueError, OverflowError):  # numpy's parser refused a cell: find it the plain way
        values = np.array([float(c) if _is_number(c) else np.nan for c in cells])
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        what = "is empty" if not cells[k].strip() else "is not a finite number"
        raise FileError(path, f"line {lines[k]}, column {col + 1}: the value {what}")
    return values


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except (ValueError, OverflowError):
        return False


def quasi_linear_utility(values: ArrayLike, price: ArrayLike, buys: ArrayLike) -> np.ndarray:
    """``v - p`` for an agent who buys at price ``p``, else 0 (vectorised, broadcasting).

    Parameters
    ----------
    values, price : array_like of float
        Valuations and prices, broadcast together.
    buys : array_like of bool
        Who buys.

    Returns
    -------
    numpy.ndarray
        The quasi-linear utilities, in the broadcast shape.

    Examples
    --------
    >>> from dpgames.agents import quasi_linear_utility
    >>> quasi_linear_utility([0.9, 0.3], 0.5, [True, False]).tolist()
    [0.4, 0.0]
    """
    v, p, b = np.broadcast_arrays(
        np.asarray(values, float), np.asarray(price, float), np.asarray(buys, bool)
    )
    return np.where(b, v - p, 0.0)
