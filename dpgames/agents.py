"""Agents with private types: type distributions, populations and quasi-linear utilities.

A population is the vector of the agents' true types (here valuations in [0, 1] for one unit of a
digital good).  Populations come from a type distribution and a seed, from an explicit list, or from a
CSV file.  Everything is vectorised over agents.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.distribution import as_generator


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
        if not self.low <= self.high:
            raise ValueError(f"uniform needs low <= high, got [{self.low}, {self.high}]")

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).uniform(self.low, self.high, size=n)


@dataclass(frozen=True)
class Beta(TypeDistribution):
    """Types ``Beta(a, b)`` on [0, 1]."""

    a: float
    b: float

    def __post_init__(self) -> None:
        if not (self.a > 0 and self.b > 0):
            raise ValueError(f"beta needs a > 0 and b > 0, got a={self.a}, b={self.b}")

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).beta(self.a, self.b, size=n)


@dataclass(frozen=True)
class Discrete(TypeDistribution):
    """Types drawn from finitely many ``values`` with ``probabilities`` (uniform if omitted): also the
    empirical distribution of a list or a file, resampled with replacement."""

    values: tuple[float, ...]
    probabilities: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.values) == 0:
            raise ValueError("a discrete distribution needs at least one value")
        if self.probabilities is not None:
            p = np.asarray(self.probabilities, dtype=float)
            if p.shape != (len(self.values),):
                raise ValueError(f"{len(self.values)} values but {p.size} probabilities")
            if (p < 0).any() or not np.isclose(p.sum(), 1.0):
                raise ValueError("probabilities must be non-negative and sum to 1")

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        return as_generator(rng).choice(np.asarray(self.values, dtype=float), size=n, p=self.probabilities)


@dataclass(frozen=True)
class Population:
    """The true types of ``n`` agents (valuations in ``[low, high]``, by default [0, 1])."""

    values: np.ndarray

    def __post_init__(self) -> None:
        v = np.asarray(self.values, dtype=float)
        if v.ndim != 1 or v.size == 0:
            raise ValueError("a population needs at least one agent")
        if not np.isfinite(v).all():
            raise ValueError("types must be finite numbers")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @property
    def n(self) -> int:
        return self.values.size

    @classmethod
    def draw(cls, distribution: TypeDistribution, n: int, rng: np.random.Generator | int | None = None) -> Population:
        """``n`` agents with i.i.d. types from ``distribution``."""
        if n < 1:
            raise ValueError(f"a population needs n >= 1 agents, got {n}")
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
        bad = np.flatnonzero((self.values < low) | (self.values > high))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"agent {i} has type {self.values[i]:g}, outside [{low:g}, {high:g}] "
                             f"({bad.size} agent(s) out of range)")


def read_csv_column(path: str | Path, column: str | None = None) -> np.ndarray:
    """One numeric column of a CSV file, with errors naming the file, the row and the column."""
    path = Path(path)
    try:
        with path.open(newline="") as fh:
            rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    except FileNotFoundError:
        raise ValueError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from None
    if not rows:
        raise ValueError(f"{path}: the file has no rows")
    header = None if _is_number(rows[0][0]) else [cell.strip() for cell in rows[0]]
    body = rows if header is None else rows[1:]
    if column is None:
        col = 0
    elif header is None:
        raise ValueError(f"{path}: column {column!r} asked for, but the file has no header row")
    elif column not in header:
        raise ValueError(f"{path}: no column {column!r}; the header has {', '.join(header)}")
    else:
        col = header.index(column)
    values = np.empty(len(body))
    first_line = 1 if header is None else 2
    for k, row in enumerate(body):
        cell = row[col].strip() if col < len(row) else ""
        if not _is_number(cell):
            raise ValueError(f"{path}: line {k + first_line}, column {col + 1}: {cell!r} is not a number")
        values[k] = float(cell)
    if values.size == 0:
        raise ValueError(f"{path}: the file has a header but no data rows")
    return values


def _is_number(text: str) -> bool:
    try:
        return np.isfinite(float(text))
    except ValueError:
        return False


def quasi_linear_utility(values: ArrayLike, price: ArrayLike, buys: ArrayLike) -> np.ndarray:
    """``v - p`` for an agent who buys at price ``p``, else 0 (vectorised, broadcasting)."""
    v, p, b = np.broadcast_arrays(np.asarray(values, float), np.asarray(price, float), np.asarray(buys, bool))
    return np.where(b, v - p, 0.0)
