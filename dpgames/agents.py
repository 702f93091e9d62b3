"""Agents with private types: type distributions, populations and quasi-linear utilities.

A population is the vector of the agents' true types (here valuations in [0, 1] for one unit of a
digital good).  Populations come from a type distribution and a seed, from an explicit list, or from a
CSV file.  Everything is vectorised over agents.
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
from dpgames.privacy.distribution import as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory, positive, real

#: Largest CSV file read: 16 MiB, a million agents or more, read in seconds.
MAX_CSV_BYTES = 16 * 2 ** 20


class TypeDistribution:
    """A distribution of private types; ``sample(n, rng)`` draws ``n`` i.i.d. types."""

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(TypeDistribution):
    """Types uniform on ``[low, high]``."""

    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        low, high = real("low", self.low), real("high", self.high)
        if not low <= high:
            raise ValidationError("high", f": uniform needs low <= high, got [{self.low}, {self.high}]")
        if not np.isfinite(high - low):
            raise ValidationError("high", f"- low must be within the float range, got [{self.low}, {self.high}]")

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).uniform(self.low, self.high, size=_sample_size(n))


def _sample_size(n: int) -> int:
    """``n`` as a number of draws: an int >= 0 within the memory limit (a ValidationError otherwise)."""
    n = integer("n", n, low=0)
    memory("n", n, what=f"{n:,} types")
    return n


@dataclass(frozen=True)
class Beta(TypeDistribution):
    """Types ``Beta(a, b)`` on [0, 1]."""

    a: float
    b: float

    def __post_init__(self) -> None:
        positive("a", self.a), positive("b", self.b)

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).beta(self.a, self.b, size=_sample_size(n))


@dataclass(frozen=True)
class Discrete(TypeDistribution):
    """Types drawn from finitely many ``values`` with ``probabilities`` (uniform if omitted): also the
    empirical distribution of a list or a file, resampled with replacement."""

    values: tuple[float, ...]
    probabilities: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        values = finite_array("values", self.values, ndim=1)
        if values.size == 0:
            raise ValidationError("values", ": a discrete distribution needs at least one value")
        if self.probabilities is not None:
            p = finite_array("probabilities", self.probabilities)
            if p.shape != (len(self.values),):
                raise ValidationError("probabilities", f": {len(self.values)} values but {p.size} probabilities")
            if (p < 0).any() or not np.isclose(p.sum(), 1.0):
                raise ValidationError("probabilities", "must be non-negative and sum to 1")

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).choice(np.asarray(self.values, dtype=float), size=_sample_size(n), p=self.probabilities)


@dataclass(frozen=True)
class Population:
    """The true types of ``n`` agents (valuations in ``[low, high]``, by default [0, 1])."""

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
        return self.values.size

    @classmethod
    def draw(cls, distribution: TypeDistribution, n: int, rng: np.random.Generator | int | None = None) -> Population:
        """``n`` agents with i.i.d. types from ``distribution``."""
        n = integer("n", n, low=1)
        return cls(distribution.sample(n, rng))

    @classmethod
    def from_list(cls, values: ArrayLike) -> Population:
        return cls(np.asarray(values, dtype=float))

    @classmethod
    def from_csv(cls, path: str | Path, column: str | None = None) -> Population:
        """Types from a CSV file: the named column (by header), or the first column.  A header row is
        recognised when its first field is not a number."""
        return cls(read_csv_column(path, column))

    def check_within(self, low: float, high: float) -> None:
        """Raise if a type lies outside ``[low, high]``, naming the first offender."""
        low, high = real("low", low), real("high", high)
        bad = np.flatnonzero((self.values < low) | (self.values > high))
        if bad.size:
            i = int(bad[0])
            raise ValidationError("values", f": agent {i} has type {self.values[i]:g}, outside [{low:g}, {high:g}] "
                                            f"({bad.size} agent(s) out of range)")


def read_csv_column(path: str | Path, column: str | None = None) -> np.ndarray:
    """One numeric column of a CSV file (UTF-8, a regular file of at most 16 MiB), read in one pass.

    A header row is recognised when its first field is not a number.  Errors name the file, the line
    and the column, never the file's contents; a value must be a finite number (``1e400``, ``inf`` and
    ``nan`` are refused).  Cells are converted in blocks by numpy."""
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
        reason = "a field is longer than the CSV limit of 128 KiB" if "field limit" in str(exc) else "not valid CSV"
        raise FileError(path, f"line {reader.line_num}: {reason}") from None
    if col is None:
        raise FileError(path, "the file has no rows")
    if cells:
        blocks.append(_csv_numbers(path, cells, lines, col))
    if not blocks:
        raise FileError(path, "the file has a header but no data rows")
    return np.concatenate(blocks)


_CSV_BLOCK = 1 << 16


def _csv_column(path: Path, first: list[str], column: str | None, line: int) -> tuple[int, int | None]:
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
    """``cells`` as finite floats, else a FileError naming the first bad cell's line (not its text)."""
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
    """``v - p`` for an agent who buys at price ``p``, else 0 (vectorised, broadcasting)."""
    v, p, b = np.broadcast_arrays(np.asarray(values, float), np.asarray(price, float), np.asarray(buys, bool))
    return np.where(b, v - p, 0.0)
