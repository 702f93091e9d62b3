"""Errors of a scenario file that point at the fix: a misspelt required field names the key it
probably is; a whole number that TOML made a float (``1e9``, ``1000.0``) says so.

Oracles: the keys and values written in the tests; for the properties, difflib's closeness written
out plainly (a ratio >= 0.6, the cutoff of ``get_close_matches``) and the definition of a whole
number."""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios import ScenarioError
from dpgames.scenarios.spec import Table


def test_a_misspelt_required_field_names_the_key_found_instead(tmp_path, capsys):
    text = Path("scenarios/digital_goods.toml").read_text(encoding="utf-8")
    assert "\nepsilon = " in text
    path = tmp_path / "typo.toml"
    path.write_text(text.replace("\nepsilon = ", "\nepsilnon = ", 1), encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'mechanism.epsilon': is required (found 'epsilnon': a typo?)" in err


def test_a_required_field_with_nothing_like_it_is_just_required():
    with pytest.raises(ScenarioError) as error:
        Table({"zzz": 1}, "s.toml", "mechanism.").number("epsilon")
    assert str(error.value) == "s.toml: field 'mechanism.epsilon': is required"


KEYS = st.text(alphabet="abcdeilnops_", min_size=1, max_size=9)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(present=st.lists(KEYS, max_size=4, unique=True), wanted=KEYS)
def test_the_typo_hint_names_only_an_unread_key_close_to_the_missing_one(present, wanted):
    table = Table({k: 1 for k in present}, "s.toml")
    if wanted in present:
        assert table.integer(wanted) == 1
        return
    with pytest.raises(ScenarioError) as error:
        table.integer(wanted)
    message = str(error.value)
    close = [k for k in present if difflib.SequenceMatcher(None, wanted, k).ratio() >= 0.6]
    assert message.startswith(f"s.toml: field '{wanted}': is required")
    if close:
        hinted = message.split("(found '", 1)[1].split("'", 1)[0]
        assert hinted in close
    else:
        assert "a typo?" not in message


def test_a_whole_number_written_as_a_float_says_how_to_write_it():
    with pytest.raises(
        ScenarioError,
        match=r"must be a whole number >= 1 \(got 1000000000.0, a float in TOML: "
        r"write it without a decimal point or exponent, e.g. 1000000000\)",
    ):
        Table({"n": 1e9}, "s.toml", "population.").integer("n", low=1)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    value=st.one_of(
        st.integers(-5, 50),
        st.floats(-5, 50),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=3),
    )
)
def test_integer_returns_a_whole_number_in_range_or_a_clean_error(value):
    try:
        got = Table({"n": value}, "s.toml").integer("n", low=1, high=20)
    except ScenarioError as error:
        assert error.field == "n"
        is_int = isinstance(value, int) and not isinstance(value, bool)
        assert not (is_int and 1 <= value <= 20)
        whole_float = isinstance(value, float) and math.isfinite(value) and value == int(value)
        assert ("a float in TOML" in str(error)) == (whole_float and 1 <= value <= 20)
    else:
        assert type(got) is int and 1 <= got <= 20 and got == value
