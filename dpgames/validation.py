"""One validation layer for every public entry point: checks that cannot crash, and structured
errors.

This module is the bottom layer of dpgames: it imports nothing else of the package, and every other
layer (``privacy/`` included) validates its arguments through it.  A check either returns the value
in canonical form (a Python ``float`` or ``int``, a float array) or raises :class:`ValidationError`,
whose ``field`` names the argument or scenario field and whose message says what is allowed.  No
check lets a ``TypeError``, ``OverflowError`` or numpy error escape: huge integers, strings,
``None``, NaN and infinities are all refused in one readable line.

**The rule for numbers.**  A real parameter is a Python ``int``, ``float`` or
:class:`fractions.Fraction` (any :class:`numbers.Real`), a numpy integer or float, or a 0-d numpy
array of those.  ``bool`` is refused (``True`` is not an epsilon), and so are strings: ``"0.5"`` is
never parsed into a number (parse text at the edge that reads it: a TOML file, a command line).  An
integer parameter is a Python or numpy integer, never a float, even an integral one.  Array
parameters follow the same rule element-wise (no strings, no complex numbers, no ``None``).  The one
documented exception is the exact rational parameters of :mod:`dpgames.privacy.discrete`, which also
accept ``"p/q"`` strings, because that is their exact form.

A :class:`ValidationError` is bad *input*; any other exception reaching the command line or the app
is a bug in dpgames and is reported as such (exit code 1), never as "invalid input".
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

#: Default ceiling on the memory one call may plan to allocate (bytes); above it the call is refused
#: up front with its estimate (:func:`memory`), instead of dying in a MemoryError.
MAX_BYTES = 2 * 1024**3


class ValidationError(ValueError):
    """Invalid input: ``field`` names the argument (or scenario field), ``message`` says what is
    allowed.

    ``str(error)`` is ``field`` and ``message`` joined by a space (no space when ``message`` starts
    with ``":"`` or ``","``; just ``message`` when ``field`` is empty); ``reason`` is ``message``
    without a leading ``": "``, for callers that name the field themselves (a scenario file's
    field).  A subclass of :class:`ValueError`, so ``except ValueError`` keeps working; picklable
    (it crosses process boundaries in sweeps).

    Parameters
    ----------
    field : str
        The argument or field at fault ("" when none applies).
    message : str
        What is allowed (and what was given).

    Examples
    --------
    >>> from dpgames.validation import ValidationError, positive
    >>> try:
    ...     positive("epsilon", -1)
    ... except ValidationError as error:
    ...     print(error.field, "|", error.reason, "|", error)
    epsilon | must be a finite number > 0, got -1 | epsilon must be a finite number > 0, got -1
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.reason = message.removeprefix(": ")
        super().__init__(_join(field, message))

    def __reduce__(self):
        return _restore, (type(self), self.args, dict(self.__dict__))


def _join(field: str, message: str) -> str:
    if not field:
        return message
    return f"{field}{message}" if message[:1] in (":", ",") else f"{field} {message}"


def _restore(cls: type[ValidationError], args: tuple, state: dict) -> ValidationError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


def _shown(value: Any) -> str:
    """A short repr for messages: huge integers by their number of digits, long reprs cut."""
    if (
        isinstance(value, (int, np.integer))
        and not isinstance(value, bool)
        and abs(int(value)) >= 10**30
    ):
        return f"an integer of {len(str(abs(int(value))))} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_real(value: Any) -> Any:
    """``value`` if it is a real number under the module's rule (a 0-d array unwrapped), else
    None."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (numbers.Real, np.integer, np.floating)
    ):
        return None
    return value


def real(name: str, value: Any, what: str = "a finite number", *, allow_inf: bool = False) -> float:
    """``value`` as a finite Python float (ints that do not fit a float are refused, never
    overflow); ``allow_inf`` also lets ``+inf`` and ``-inf`` through (never NaN).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.
    what : str
        How the allowed values are described in the error.
    allow_inf : bool, default False

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Unless ``value`` is a real number (not a bool or a string) within the float range.
    """
    x = _as_real(value)
    if x is None:
        raise ValidationError(name, f"must be {what}, got {_shown(value)}")
    try:
        f = float(x)
    except (OverflowError, ValueError, TypeError):
        raise ValidationError(name, f"must be {what}, got a number too large for a float") from None
    if not (math.isfinite(f) or (allow_inf and math.isinf(f))):
        raise ValidationError(name, f"must be {what}, got {_shown(value)}")
    return f


def positive(name: str, value: Any) -> float:
    """``value`` as a float, or a ValidationError unless it is a finite number > 0.

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Unless ``value`` is a finite real number ``> 0``.
    """
    x = real(name, value, "a finite number > 0")
    if not x > 0:
        raise ValidationError(name, f"must be a finite number > 0, got {_shown(value)}")
    return x


def non_negative(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """``value`` as a float, or a ValidationError unless it is a finite number >= 0 (or ``+inf``
    when ``allow_inf``).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.
    allow_inf : bool, default False

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Unless ``value`` is a real number ``>= 0`` (finite unless ``allow_inf``).
    """
    what = "a number >= 0 (inf allowed)" if allow_inf else "a finite number >= 0"
    x = real(name, value, what, allow_inf=allow_inf)
    if not x >= 0:
        raise ValidationError(name, f"must be {what}, got {_shown(value)}")
    return x


def probability(
    name: str, value: Any, *, allow_zero: bool = False, allow_one: bool = False
) -> float:
    """``value`` as a float in (0, 1), with the ends allowed on request.

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.
    allow_zero, allow_one : bool, default False
        Whether 0 (1) is allowed.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Unless ``value`` is a real number in the interval, which the message states.
    """
    lo, hi = "[" if allow_zero else "(", "]" if allow_one else ")"
    interval = f"{lo}0, 1{hi}"
    x = real(name, value, f"a number in {interval}")
    low_ok = x > 0 or (allow_zero and x == 0)
    high_ok = x < 1 or (allow_one and x == 1)
    if not (low_ok and high_ok):
        raise ValidationError(name, f"must be in {interval}, got {_shown(value)}")
    return x


def integer(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python int in ``[low, high]`` (bools, floats and strings refused).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.
    low, high : int, optional
        Bounds (inclusive).

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        Unless ``value`` is a Python or numpy integer (never a float, even an integral one) within
        the bounds.
    """
    if low is not None and high is not None:
        what = f"an integer in [{low}, {high}]"
    elif low is not None:
        what = f"an integer >= {low}"
    elif high is not None:
        what = f"an integer <= {high}"
    else:
        what = "an integer"
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValidationError(name, f"must be {what}, got {_shown(value)}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValidationError(name, f"must be {what}, got {_shown(v)}")
    return v


def positive_int(name: str, value: Any, high: int | None = None) -> int:
    """``value`` as an int >= 1 (and <= ``high`` if given; bools and non-integral numbers refused).

    Raises
    ------
    ValidationError
        As :func:`integer` with ``low=1``.
    """
    return integer(name, value, low=1, high=high)


def is_hashable(value: Any) -> bool:
    """Whether ``hash(value)`` succeeds: whether ``value`` can be a dictionary key or a type label.

    Examples
    --------
    >>> is_hashable((1, "a")), is_hashable([1])
    (True, False)
    """
    try:
        hash(value)
    except TypeError:
        return False
    return True


def choice(name: str, value: Any, options: tuple) -> Any:
    """``value`` if it is one of ``options`` (compared by equality and type, unhashable values
    refused).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    value : object
        What the caller passed.
    options : tuple
        The allowed values.

    Returns
    -------
    object
        ``value`` itself.

    Raises
    ------
    ValidationError
        Unless ``value`` is one of ``options``, which the message lists.
    """
    try:
        ok = any(type(value) is type(o) and value == o for o in options)
    except Exception:  # an object whose == misbehaves is not an option
        ok = False
    if not ok:
        shown = (
            " or ".join(repr(o) for o in options)
            if len(options) <= 2
            else ", ".join(repr(o) for o in options[:-1]) + f" or {options[-1]!r}"
        )
        raise ValidationError(name, f"must be {shown}, got {_shown(value)}")
    return value


def number_array(
    name: str, values: Any, ndim: int | None = None, *, copy: bool = True, allow_bool: bool = False
) -> np.ndarray:
    """``values`` as a float array of numbers (finite or not: :func:`finite_array` checks that too),
    with ``ndim`` dimensions if given.

    Strings, ``None``, complex numbers and ragged nestings are refused; integers too large for a
    float are refused, not overflowed.

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    values : array_like
        What the caller passed.
    ndim : int, optional
        The number of dimensions required.
    copy : bool, default True
        ``False`` returns the caller's own array when it already is a float array (for a caller that
        only reads it): saves a pass and an allocation.
    allow_bool : bool, default False
        Accept booleans (as 0 and 1): only for parameters that are bits or flags.

    Returns
    -------
    numpy.ndarray of float

    Raises
    ------
    ValidationError
        On a non-number or the wrong number of dimensions.
    """
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ValidationError(name, "must be an array of finite numbers") from None
    kind: str = raw.dtype.kind
    if kind == "O" and not all(_as_real(x) is not None for x in raw.flat):
        kind = "?"
    if kind not in "biufO":
        raise ValidationError(
            name, "must be an array of finite numbers (no strings, None or complex values)"
        )
    if not allow_bool and (
        kind == "b" or (kind == "O" and any(isinstance(x, (bool, np.bool_)) for x in raw.flat))
    ):
        raise ValidationError(name, "must be numbers, not booleans (True is not a number here)")
    try:
        with np.errstate(over="raise", invalid="raise"):
            arr = raw.astype(float, copy=copy)
    except (TypeError, ValueError, OverflowError, FloatingPointError):
        raise ValidationError(
            name, "must be an array of finite numbers (a value is too large for a float)"
        ) from None
    if ndim is not None and arr.ndim != ndim:
        raise ValidationError(name, f"must be a {ndim}-d array, got shape {arr.shape}")
    return arr


def finite_array(
    name: str,
    values: Any,
    ndim: int | None = None,
    *,
    allow_inf: bool = False,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    integral: bool = False,
    allow_bool: bool = False,
) -> np.ndarray:
    """``values`` as a float array (a new one), finite (or ``+-inf`` too with ``allow_inf``; never
    NaN), with ``ndim`` dimensions if given (:func:`number_array`, then the check).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    values : array_like
        What the caller passed.
    ndim : int, optional
        The number of dimensions required.
    allow_inf : bool, default False
        Let ``inf`` and ``-inf`` through (points at which a CDF is evaluated, say).
    low, high : float, optional
        Bounds every entry must respect: ``>= low`` (``> low`` with ``open_low``) and ``<= high``.
        ``low=0`` says "counts, costs, prices >= 0"; ``low=0, open_low=True`` says "> 0";
        ``low=0, high=1`` says "probabilities".
    open_low : bool, default False
        Make ``low`` a strict bound.
    integral : bool, default False
        Require whole numbers (counts given as floats, ``2.0``, are accepted).
    allow_bool : bool, default False
        Accept booleans (as 0 and 1): only for parameters that are bits or flags.  Elsewhere
        ``True`` is refused, as by :func:`real`.

    Returns
    -------
    numpy.ndarray of float

    Raises
    ------
    ValidationError
        On a non-number, a boolean (unless ``allow_bool``), a non-finite entry (NaN only, with
        ``allow_inf``), the wrong number of dimensions, or an entry outside the bounds or not whole
        (the message states the rule and the first offending entry).
    """
    arr = number_array(name, values, ndim, allow_bool=allow_bool)
    if allow_inf:
        if np.isnan(arr).any():
            raise ValidationError(name, "must be numbers (no NaN)")
    elif not np.isfinite(arr).all():
        raise ValidationError(name, "must be finite (no NaN or inf)")
    if low is not None or high is not None or integral:
        _check_entries(name, arr, low, high, open_low, integral)
    return arr


def _check_entries(
    name: str,
    arr: np.ndarray,
    low: float | None,
    high: float | None,
    open_low: bool,
    integral: bool,
) -> None:
    """The bounds and integrality of :func:`finite_array`, one message naming the rule and an
    offender."""
    bad = np.zeros(arr.shape, dtype=bool)
    rules = []
    if low is not None:
        bad |= (arr <= low) if open_low else (arr < low)
        rules.append(f"{'>' if open_low else '>='} {low:g}")
    if high is not None:
        bad |= arr > high
        rules.append(f"<= {high:g}")
    if integral:
        with np.errstate(invalid="ignore"):
            bad |= arr != np.round(arr)
        rules.append("whole numbers")
    if bad.any():
        first = arr[bad].flat[0]
        raise ValidationError(name, f"must be {' and '.join(rules)}, got {_shown(float(first))}")


def index_array(name: str, values: Any, size: int, what: str = "indices") -> np.ndarray:
    """``values`` as a 1-d int64 array of whole numbers in ``0 .. size - 1`` (integral floats
    accepted).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    values : array_like
        What the caller passed.
    size : int
        The number of things indexed.
    what : str
        What the indices are, for the error (e.g. "pair indices").

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    ValidationError
        On anything but a 1-d list of whole numbers in range (a fraction, NaN, a boolean, a string,
        a nesting).
    """
    booleans = (
        values.dtype.kind == "b"
        if isinstance(values, np.ndarray)
        else any(
            isinstance(v, (bool, np.bool_))
            for v in (values if isinstance(values, (list, tuple)) else ())
        )
    )
    if booleans:
        raise ValidationError(
            name, f"must be a 1-d list of {what}, not booleans (a mask is not a list of indices)"
        )
    arr = finite_array(name, values)
    if (
        arr.ndim != 1
        or np.any(arr != np.round(arr))
        or (arr.size and (arr.min() < 0 or arr.max() >= size))
    ):
        raise ValidationError(name, f"must be a 1-d list of {what}: whole numbers in 0..{size - 1}")
    return arr.astype(np.int64)


def index_pairs(name: str, values: Any, size: int) -> list[tuple[int, int]]:
    """``values`` as a list of ``(i, j)`` pairs of integers in ``0 .. size - 1`` (floats, bools,
    strings and items that are not pairs refused).

    Parameters
    ----------
    name : str
        The argument or field named in the error.
    values : iterable of pairs
        What the caller passed.
    size : int
        The number of things indexed.

    Returns
    -------
    list of (int, int)

    Raises
    ------
    ValidationError
        Unless ``values`` is an iterable (not a string) of two-element items, each an integer in
        range.
    """
    what = f"must be a list of (i, j) pairs of integers in 0..{size - 1}"
    if isinstance(values, (str, bytes, dict)):
        raise ValidationError(name, f"{what}, got {_shown(values)}")
    try:
        items = list(values)
    except TypeError:
        raise ValidationError(name, f"{what}, got {_shown(values)}") from None
    out = []
    for item in items:
        if isinstance(item, (str, bytes, dict)) or not hasattr(item, "__len__") or len(item) != 2:
            raise ValidationError(name, f"{what}, got an item {_shown(item)}")
        out.append((integer(name, item[0], 0, size - 1), integer(name, item[1], 0, size - 1)))
    return out


def label_array(name: str, values: Any, size: int) -> np.ndarray:
    """``values`` as a 1-d array of ``size`` labels (names of types or outcomes), or a
    ValidationError (ragged nesting included, which numpy would refuse in its own words).

    Returns
    -------
    numpy.ndarray, shape (size,)

    Raises
    ------
    ValidationError
        Unless ``values`` holds exactly ``size`` labels in one dimension.
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise ValidationError(
            name, f": need {size} labels, one per entry, not a ragged nesting"
        ) from None
    if arr.shape != (size,):
        raise ValidationError(name, f": need {size} labels, one per entry, got shape {arr.shape}")
    return arr


def finite_result(name: str, value: Any, what: str = "") -> Any:
    """``value`` (a float or an array) unchanged if finite; otherwise a ValidationError saying the
    figure ``name`` cannot be represented as a float for these inputs (``what``: which inputs, in
    words).  For results, so that a NaN or an overflow to inf never passes for a number.

    Returns
    -------
    object
        ``value`` unchanged.

    Raises
    ------
    ValidationError
        If any entry of ``value`` is NaN or infinite.
    """
    if not np.isfinite(value).all():
        extra = f" ({what})" if what else ""
        raise ValidationError(name, f"cannot be represented as a float for these inputs{extra}")
    return value


def memory(
    name: str, entries: float, *, bytes_per_entry: int = 8, limit: int = MAX_BYTES, what: str = ""
) -> None:
    """Refuse, before any allocation, a request whose ``entries`` x ``bytes_per_entry`` exceed
    ``limit``, with the estimate in the message (``entries`` may be a huge int or a float).

    Parameters
    ----------
    name : str
        The argument or field that asks for the memory.
    entries : int or float
        How many entries would be allocated.
    bytes_per_entry : int, default 8
    limit : int, default :data:`MAX_BYTES`
    what : str
        What would be allocated, in words, for the message.

    Raises
    ------
    ValidationError
        If the estimate exceeds ``limit`` (stating both).
    """
    need = float(entries) * bytes_per_entry if entries < 1e300 else math.inf
    if need > limit:
        detail = f"{what}: " if what else ""
        raise ValidationError(
            name,
            f"is too large: {detail}about {_bytes(need)} of memory (the limit is {_bytes(limit)})",
        )


def _bytes(n: float) -> str:
    if not math.isfinite(n):
        return "more than 1e300 bytes"
    for unit, size in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def required_positional(fn: Callable, what: str) -> int | None:
    """The number of required positional parameters of ``fn`` (``None`` if its signature is
    unreadable).

    Parameters
    ----------
    fn : callable
    what : str
        The field named in the error.

    Returns
    -------
    int or None

    Raises
    ------
    ValidationError
        If ``fn`` takes ``*args`` (its arity is then not fixed).

    Examples
    --------
    >>> required_positional(lambda t, outcome, agent=0: 0, "utility")
    2
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = sig.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        raise ValidationError(what, "must take a fixed number of positional parameters, not *args")
    return sum(p.kind in kinds and p.default is inspect.Parameter.empty for p in params)
