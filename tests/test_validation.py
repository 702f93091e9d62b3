"""dpgames.validation: every check returns a canonical value or raises ValidationError naming the
field, never another exception, for any value at all (hypothesis); and the structured errors'
contract."""

from __future__ import annotations

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames import games, privacy, validation as v
from dpgames.validation import ValidationError

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)

# Anything a user might pass: numbers of every kind and size, strings, None, containers, numpy
# values.
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from(
        [
            2**63,
            2**64,
            10**400,
            -(10**400),
            5e-324,
            1e300,
            -1e300,
            math.inf,
            -math.inf,
            math.nan,
            0,
            0.0,
            -0.0,
            1,
            1.0,
            0.5,
            "0.5",
            "1",
            b"1",
            1j,
            Fraction(1, 3),
            Fraction(10**400, 3),
            np.float64(0.25),
            np.int64(3),
            np.uint64(2**63),
            np.bool_(True),
            np.array(0.5),
            np.array([1.0]),
            np.float32(np.inf),
            (),
            [],
            {},
            object(),
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
    st.lists(st.integers(min_value=-(10**400), max_value=10**400), max_size=3),
    st.lists(st.one_of(st.integers(), st.text(max_size=2), st.none()), max_size=3),
)


def _is_real_input(x) -> bool:
    """The documented rule, written independently: real numbers, never bool or text."""
    if isinstance(x, np.ndarray):
        return x.ndim == 0 and x.dtype.kind in "iuf"
    return isinstance(x, (int, float, Fraction, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


def _float_or_none(x):
    try:
        f = float(x[()] if isinstance(x, np.ndarray) else x)
    except (OverflowError, TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _call(check, *args, **kwargs):
    """The check's result, or the ValidationError it raised (any other exception fails the test)."""
    try:
        return check(*args, **kwargs)
    except ValidationError as exc:
        assert exc.field == args[0]
        assert str(exc).startswith(args[0]) and "\n" not in str(exc)
        return exc


@SETTINGS
@given(anything)
def test_real_positive_non_negative(x):
    expected = _float_or_none(x) if _is_real_input(x) else None
    for check, ok in (
        (v.real, lambda f: True),
        (v.positive, lambda f: f > 0),
        (v.non_negative, lambda f: f >= 0),
    ):
        out = _call(check, "field", x)
        if expected is not None and ok(expected):
            assert type(out) is float and out == expected
        else:
            assert isinstance(out, ValidationError)


@SETTINGS
@given(anything, st.booleans(), st.booleans())
def test_probability(x, allow_zero, allow_one):
    out = _call(v.probability, "p", x, allow_zero=allow_zero, allow_one=allow_one)
    f = _float_or_none(x) if _is_real_input(x) else None
    inside = f is not None and (0 < f < 1 or (allow_zero and f == 0) or (allow_one and f == 1))
    if inside:
        assert type(out) is float and out == f
    else:
        assert isinstance(out, ValidationError)


@SETTINGS
@given(
    anything,
    st.one_of(st.none(), st.integers(-5, 5)),
    st.one_of(st.none(), st.integers(-5, 10**20)),
)
def test_integer_and_positive_int(x, low, high):
    is_int = (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))) or (
        isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu"
    )
    value = int(x[()] if isinstance(x, np.ndarray) else x) if is_int else None
    out = _call(v.integer, "n", x, low, high)
    if is_int and (low is None or value >= low) and (high is None or value <= high):
        assert type(out) is int and out == value
    else:
        assert isinstance(out, ValidationError)
    out = _call(v.positive_int, "n", x)
    assert (
        (type(out) is int and out == value >= 1)
        if is_int and value >= 1
        else isinstance(out, ValidationError)
    )


@SETTINGS
@given(anything, st.one_of(st.none(), st.integers(0, 2)))
def test_finite_array(x, ndim):
    out = _call(v.finite_array, "values", x, ndim)
    if isinstance(out, ValidationError):
        return
    assert out.dtype == float and np.isfinite(out).all() and (ndim is None or out.ndim == ndim)
    flat = np.asarray(x, dtype=object).ravel()
    # no text got through
    assert all(isinstance(e, (int, float, np.integer, np.floating, Fraction)) for e in flat)
    assert np.array_equal(out.ravel(), np.array([float(e) for e in flat]))


@SETTINGS
@given(anything, st.one_of(st.none(), st.integers(0, 2)), st.booleans())
def test_number_array(x, ndim, copy):
    out = _call(v.number_array, "values", x, ndim, copy=copy)
    if isinstance(out, ValidationError):
        return
    assert out.dtype == float and (ndim is None or out.ndim == ndim)
    flat = np.asarray(x, dtype=object).ravel()
    # no text got through
    assert all(isinstance(e, (int, float, np.integer, np.floating, Fraction)) for e in flat)
    assert np.array_equal(out.ravel(), np.array([float(e) for e in flat]), equal_nan=True)
    if isinstance(x, np.ndarray) and x.dtype == float:
        assert (out is x) is not copy  # the caller's own float array only without a copy


def test_number_array_lets_nan_and_inf_through_and_finite_array_does_not():
    values = np.array([np.nan, np.inf, -1.0])
    assert v.number_array("values", values, copy=False) is values
    with pytest.raises(ValidationError, match="finite"):
        v.finite_array("values", values)


@SETTINGS
@given(anything)
def test_choice(x):
    out = _call(v.choice, "mode", x, ("a", "b", 1))
    if isinstance(out, ValidationError):
        assert not any(type(x) is type(o) and x == o for o in ("a", "b", 1))
    else:
        assert out == x and type(out) in (str, int)


@SETTINGS
@given(st.one_of(st.integers(0, 10**400), st.floats(0, 1e308)), st.integers(1, 1024))
def test_memory_refuses_exactly_above_the_limit(entries, per):
    limit = 10**6
    out = _call(v.memory, "size", entries, bytes_per_entry=per, limit=limit)
    assert (out is None) == (entries * per <= limit)
    if out is not None:
        assert "of memory" in str(out) and "limit" in str(out)


def test_finite_result_refuses_nan_and_inf_with_the_field():
    assert v.finite_result("x", 1.5) == 1.5
    for bad in (math.nan, math.inf, np.array([1.0, np.inf])):
        with pytest.raises(ValidationError, match="cannot be represented") as info:
            v.finite_result("x", bad)
        assert info.value.field == "x"


def test_messages_join_field_and_reason():
    assert str(ValidationError("epsilon", "must be > 0")) == "epsilon must be > 0"
    assert str(ValidationError("k", ": cannot open 3")) == "k: cannot open 3"
    assert str(ValidationError("", "whole message")) == "whole message"
    huge = _call(v.integer, "n", 10**400, 0, 5)
    assert "401 digits" in str(huge) and len(str(huge)) < 100


def test_errors_survive_pickling_with_field_and_text():
    """Errors cross process boundaries in sweeps: class, text and field must come back."""
    from dpgames._files import FileError
    from dpgames.privacy import BudgetExceededError
    from dpgames.scenarios import ScenarioError
    from dpgames.sweep.results import SweepError

    for exc in (
        ValidationError("epsilon", "must be > 0"),
        ScenarioError("f.toml: field 'a.b': bad", "a.b"),
        BudgetExceededError("over the budget"),
        SweepError("bad file"),
        FileError("x.csv", "not found"),
    ):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc) and back.field == exc.field
        assert isinstance(back, ValidationError) and isinstance(back, ValueError)
    assert BudgetExceededError("x").field == "budget"


def test_scenario_errors_carry_the_dotted_field():
    from dpgames.scenarios import Table

    table = Table({"mechanism": {"epsilon": "high"}}, "s.toml")
    with pytest.raises(ValidationError) as info:
        table.table("mechanism").number("epsilon")
    assert info.value.field == "mechanism.epsilon"
    assert str(info.value).startswith("s.toml: field 'mechanism.epsilon': ")


@pytest.mark.parametrize(
    "make",
    [
        lambda e: privacy.LaplaceMechanism(e),
        lambda e: privacy.ExponentialMechanism(e),
        lambda e: privacy.ReportNoisyMax(e),
        lambda e: privacy.GaussianMechanism.analytic(e, 1e-6),
        lambda e: privacy.SparseVector(e, 0.0),
        lambda e: privacy.KaryResponse(3, e),
        lambda e: privacy.BinaryTreeCounter(8, epsilon=e),
        lambda e: privacy.PrivateMultiplicativeWeights(e, 0.1),
        lambda e: games.PrivateMediator(epsilon=e),
    ],
)
def test_one_rule_for_numbers_strings_are_refused_everywhere(make):
    """Before: LaplaceMechanism("0.5") coerced the string, ExponentialMechanism("0.5") died in
    numpy."""
    for text in ("0.5", "1"):
        with pytest.raises(ValidationError) as info:
            make(text)
        assert info.value.field == "epsilon"
    for number in (0.5, np.float64(0.5), Fraction(1, 2)):
        make(number)  # accepted


def test_is_hashable_agrees_with_hash():
    from dpgames.validation import is_hashable

    for value in [1, "a", (1, "b"), frozenset({2}), None]:
        assert is_hashable(value)
    for value in [[1], {"a": 1}, {3}, (1, [2])]:
        assert not is_hashable(value)


def test_tuple_text_shows_every_item_up_to_the_limit_then_the_count():
    from dpgames.display import tuple_text

    assert tuple_text([]) == "()"
    assert tuple_text(["x"]) == "('x',)"
    assert eval(tuple_text(range(12))) == tuple(range(12))
    assert tuple_text(range(13)) == f"({', '.join(map(str, range(12)))}, ... 13 in all)"
