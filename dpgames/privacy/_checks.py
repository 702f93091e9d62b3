"""Argument checks shared by the privacy modules: one-line ValueErrors naming the field."""

from __future__ import annotations

import math

import numpy as np


def positive(name: str, value: float) -> float:
    """``value`` as a float, or a ValueError unless it is a finite number > 0."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def probability(name: str, value: float, *, allow_zero: bool = False, allow_one: bool = False) -> float:
    """``value`` as a float in (0, 1), with the ends allowed on request."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    low_ok = x > 0 or (allow_zero and x == 0)
    high_ok = x < 1 or (allow_one and x == 1)
    if not (low_ok and high_ok):
        lo, hi = "[" if allow_zero else "(", "]" if allow_one else ")"
        raise ValueError(f"{name} must be in {lo}0, 1{hi}, got {value!r}")
    return x


def positive_int(name: str, value: int) -> int:
    """``value`` as an int >= 1 (bools and non-integral numbers refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def finite_array(name: str, values, ndim: int | None = None) -> np.ndarray:
    """``values`` as a float array, finite, with ``ndim`` dimensions if given."""
    arr = np.asarray(values, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr
