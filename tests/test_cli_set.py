"""`dpgames run FILE --set NAME=VALUE` and titles that follow the values they state.

Oracles: the same scenario written out by hand with the new values (tomllib + a dict edit, the title
typed out), run through `dpgames run` without --set; titles written out by hand."""

from __future__ import annotations

import contextlib
import io
import json
import tomllib

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios import Scenario
from dpgames.scenarios.titles import retitle

SMALL = {
    "kind": "digital_goods",
    "seed": 5,
    "title": "Small auction, 40 bidders, eps = 0.5",
    "population": {"distribution": "uniform", "n": 40},
    "mechanism": {"epsilon": 0.5, "alpha": 0.02},
    "baselines": {"rsop_samples": 200},
}


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _file(tmp_path, data, name="s.toml"):
    path = tmp_path / name
    path.write_text(Scenario.from_dict(data).to_toml())
    return path


def test_set_runs_the_file_with_the_fields_replaced_and_the_title_following(tmp_path):
    path = _file(tmp_path, SMALL)
    code, out, err = _cli(
        ["run", str(path), "--json", "--set", "epsilon=0.3", "--set", "population.n=300"]
    )
    assert code == 0, err
    by_set = json.loads(out)
    edited = tomllib.loads(path.read_text())
    edited["mechanism"]["epsilon"], edited["population"]["n"] = 0.3, 300
    edited["title"] = "Small auction, 300 bidders, eps = 0.3"
    code, out, err = _cli(["run", str(_file(tmp_path, edited, "edited.toml")), "--json"])
    assert code == 0, err
    by_hand = json.loads(out)
    assert by_set["title"] == by_hand["title"] == "Small auction, 300 bidders, eps = 0.3"
    assert by_set["metrics"] == by_hand["metrics"] and by_set["tables"] == by_hand["tables"]
    assert (by_set["metrics"]["n"], by_set["metrics"]["epsilon"]) == (300, 0.3)


def test_set_title_is_kept_as_given_and_a_list_is_one_toml_value(tmp_path):
    path = _file(tmp_path, dict(SMALL, mechanism={"epsilon": 0.5}))
    code, out, err = _cli(
        [
            "run",
            str(path),
            "--json",
            "--set",
            'title="Mine"',
            "--set",
            "epsilon=0.3",
            "--set",
            "mechanism.prices=[0.25, 0.5, 0.75]",
        ]
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["title"] == "Mine"
    assert result["tables"]["price_law"]["price"] == [0.25, 0.5, 0.75]


@pytest.mark.parametrize(
    "assignment, named",
    [
        ("epsilon=0.1,0.5", ["--set epsilon", "one value", "dpgames sweep"]),
        ("epsilon=range:0.1:1:0.1", ["--set epsilon", "one value"]),
        ("seed=3", ["'seed'", "cannot be overridden", "--seed S"]),
        ("kind=auction", ["'kind'", "cannot be overridden"]),
        ("nope=1", ["'nope'", "no field of that name"]),
        ("epsilon", ["--set 'epsilon'", "NAME=VALUE"]),
        ("=3", ["NAME=VALUE"]),
        ("epsilon=-1", ["field 'mechanism.epsilon'"]),
    ],
)
def test_a_bad_set_is_one_line_naming_it(tmp_path, assignment, named):
    code, out, err = _cli(["run", str(_file(tmp_path, SMALL)), "--set", assignment])
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpgames: error: "), err
    for word in named:
        assert word in lines[0], (word, lines[0])


def test_set_twice_is_refused(tmp_path):
    code, _, err = _cli(
        ["run", str(_file(tmp_path, SMALL)), "--set", "epsilon=0.3", "--set", "mechanism.epsilon=1"]
    )
    assert code == 2 and "set twice" in err


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.sampled_from(
        [
            "epsilon",
            "population.n",
            "n",
            "mechanism.alpha",
            "baselines.rsop_samples",
            "title",
            "population.low",
            "mechanism.prices",
            "x.y",
            "population",
        ]
    ),
    st.text(alphabet="0123456789.,-+e[]\"' :abnrgtuefils", max_size=12),
)
def test_any_set_is_a_clean_error_or_a_run_with_that_value(tmp_path_factory, name, text):
    """Oracle: exit 2 with one `dpgames: error:` line, or exit 0 with a Result whose title and
    metrics are those of the file written out with the value (the same run, no --set)."""
    folder = tmp_path_factory.mktemp("set")
    code, out, err = _cli(["run", str(_file(folder, SMALL)), "--json", "--set", f"{name}={text}"])
    if code == 2:
        lines = err.splitlines()
        assert (
            len(lines) == 1 and lines[0].startswith("dpgames: error: ") and "Traceback" not in err
        ), err
        return
    assert code == 0, err
    result = json.loads(out)
    assert all(isinstance(v, (int, float, str, bool)) for v in result["metrics"].values())
    field = {"n": "population.n", "epsilon": "mechanism.epsilon"}.get(name, name)
    value = tomllib.loads(f"v = {text}")["v"] if _is_toml(text) else text
    again = Scenario.from_dict(SMALL).with_overrides({field: value}).run()
    assert (result["title"], result["metrics"]) == (
        again.title,
        json.loads(again.to_json())["metrics"],
    )


def _is_toml(text: str) -> bool:
    try:
        tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return False
    return True


@pytest.mark.parametrize(
    "title, old, new, expected",
    [
        (
            "Digital-goods auction, 1,000 uniform bidders, eps = 0.5",
            {"population.n": 1000, "mechanism.epsilon": 0.5},
            {"population.n": 5000, "mechanism.epsilon": 0.3},
            "Digital-goods auction, 5,000 uniform bidders, eps = 0.3",
        ),
        (
            "Pigou's two roads, 1,000 drivers",
            {"game.n": 1000},
            {"game.n": 250},
            "Pigou's two roads, 250 drivers",
        ),
        (
            "Pigou's two roads, 1,000 drivers",
            {},
            {"mechanism.epsilon": 0.3},
            "Pigou's two roads, 1,000 drivers",
        ),
        (
            "Private allocation: 20,000 bidders, 2 goods x 5,000 copies, eps = 5",
            {"mechanism.epsilon": 5},
            {"mechanism.epsilon": 0.5},
            "Private allocation: 20,000 bidders, 2 goods x 5,000 copies, eps = 0.5",
        ),
        (
            "Auction, 3 bidders of 7 kinds",
            {},
            {"population.n": 12},
            "Auction, n = 12",
        ),  # which number: unclear
        (
            "Auction, eps = 0.5, n = 10",
            {"mechanism.epsilon": 0.5},
            {"mechanism.epsilon": 0.5},
            "Auction, eps = 0.5, n = 10",
        ),
        (
            "Twelve bidders, eps = 1",
            {"population.n": 12},
            {"population.n": 20},
            "Twelve bidders, eps = 1",
        ),
    ],
)
def test_retitle(title, old, new, expected):
    assert retitle(title, old, new) == expected


def test_the_saved_settings_file_states_the_new_values(tmp_path):
    """What the app's "Save these settings" writes: `dpgames run` on it prints the new title."""
    scenario = Scenario.from_dict(SMALL).with_overrides({"population.n": 60})
    path = tmp_path / "saved.toml"
    path.write_text(scenario.to_toml())
    code, out, _ = _cli(["run", str(path), "--rows", "1"])
    assert code == 0 and out.splitlines()[0].startswith("Small auction, 60 bidders, eps = 0.5  [")
