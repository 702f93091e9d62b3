"""The grid of a sweep: parameter names, values and ranges, the [sweep] table, cell seeds."""

from pathlib import Path

import numpy as np
import pytest

from dpgames.scenarios import Scenario, ScenarioError
from dpgames.sweep.grid import (
    build_grid,
    cell_key,
    cell_seed,
    expand_range,
    parse_cli_values,
    resolve_name,
)

ROOT = Path(__file__).resolve().parents[1]
DIGITAL_GOODS = ROOT / "scenarios" / "digital_goods.toml"
SMALL = {"population.n": 30, "audit.enabled": False, "baselines.rsop_samples": 50}


def _scenario(text: str) -> Scenario:
    return Scenario.from_text(text, "test.toml")


# --- seeds
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("root", [0, 7, 2**70 + 3])
def test_cell_seed_is_the_spawned_child_of_the_root(root):
    """Oracle: numpy's own SeedSequence.spawn, asked for more children than we use."""
    children = np.random.SeedSequence(root).spawn(12)
    for j in (0, 1, 5, 11):
        ours = cell_seed(root, j)
        assert ours.generate_state(8).tolist() == children[j].generate_state(8).tolist()
        assert ours.spawn_key == children[j].spawn_key == (j,)


def test_scenario_run_accepts_a_seed_sequence_and_records_it():
    scenario = Scenario.from_file(DIGITAL_GOODS).with_overrides(SMALL)
    spawned = np.random.SeedSequence(11).spawn(4)[3]
    by_spawn = scenario.run(spawned)
    by_key = scenario.run(np.random.SeedSequence(11, spawn_key=(3,)))
    assert by_spawn.metrics == by_key.metrics
    assert by_spawn.provenance["seed"] == 11 and by_spawn.provenance["spawn_key"] == [3]
    # the kind spawns children from it: the caller's object is untouched
    again = scenario.run(spawned)
    assert again.metrics == by_spawn.metrics and spawned.n_children_spawned == 0
    assert scenario.run(np.random.SeedSequence(11)).metrics == scenario.run(11).metrics
    assert scenario.run(spawned).metrics != scenario.run(11).metrics


def test_single_run_ignores_the_sweep_table_but_checks_it_is_a_table():
    scenario = Scenario.from_file(ROOT / "scenarios" / "sweep_epsilon.toml").with_overrides(SMALL)
    assert scenario.run(1).metrics["n"] == 30
    with pytest.raises(ScenarioError, match=r"test.toml: field 'sweep': must be a table"):
        _scenario(
            'kind = "digital_goods"\nsweep = 3\n[population]\ndistribution="uniform"\nn=5\n'
            "[mechanism]\nepsilon=1\n"
        ).run(1)


# --- names
# ---------------------------------------------------------------------------------------------


def test_short_names_resolve_to_the_one_field_with_that_last_component():
    data = Scenario.from_file(DIGITAL_GOODS).data
    assert resolve_name("epsilon", data, "f") == "mechanism.epsilon"
    assert resolve_name("n", data, "f") == "population.n"
    # dotted: may be a default
    assert resolve_name("mechanism.alpha", data, "f") == "mechanism.alpha"
    assert resolve_name("title", data, "f") == "title"


def test_ambiguous_unknown_and_reserved_names_are_refused_with_the_candidates():
    data = _scenario("[a]\nx = 1\n[b]\nx = 2\n[b.c]\ny = 3\n").data
    with pytest.raises(
        ScenarioError, match=r"test.toml: parameter 'x' is ambiguous: use one of a.x, b.x"
    ):
        resolve_name("x", data, "test.toml")
    with pytest.raises(
        ScenarioError, match=r"parameter 'z': no field of that name .*a.x, b.x, b.c.y"
    ):
        resolve_name("z", data, "test.toml")
    with pytest.raises(ScenarioError, match=r"'a.x' is not a table"):
        resolve_name("a.x.q", data, "test.toml")
    for reserved in ("seed", "kind", "sweep.seeds"):
        with pytest.raises(ScenarioError, match="cannot be swept"):
            resolve_name(reserved, data, "test.toml")


# --- values
# ----------------------------------------------------------------------------------------------


def test_ranges_against_hand_written_values():
    assert expand_range("range", [100, 500, 100], "w") == [100, 200, 300, 400, 500]
    assert all(type(v) is int for v in expand_range("range", [1, 3, 1], "w"))
    assert expand_range("range", [0.1, 0.5, 0.1], "w") == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert expand_range("range", [0, 1, 0.3], "w") == [0, 0.3, 0.6, 0.9]  # stop not reached
    assert expand_range("linspace", [0, 1, 5], "w") == [0, 0.25, 0.5, 0.75, 1]
    assert expand_range("geomspace", [0.01, 1, 3], "w") == [0.01, 0.1, 1]
    assert expand_range("linspace", [2, 3, 1], "w") == [2]


@pytest.mark.parametrize(
    "form,args",
    [
        ("range", [1, 0, 1]),
        ("range", [0, 1, 0]),
        ("range", [0, 1]),
        ("linspace", [0, 1, 0]),
        ("linspace", [0, 1, 2.5]),
        ("geomspace", [0, 1, 3]),
        ("range", [0, "a", 1]),
    ],
)
def test_bad_ranges_name_the_field_and_the_form(form, args):
    with pytest.raises(ScenarioError, match=rf"^where: {form} must be \["):
        expand_range(form, args, "where")


def test_command_line_values_are_toml_scalars_or_bare_words():
    assert parse_cli_values("0.1,0.5,1", "w") == [0.1, 0.5, 1]
    assert parse_cli_values("grid, continuous", "w") == ["grid", "continuous"]
    assert parse_cli_values("true,false", "w") == [True, False]
    assert parse_cli_values("range:100:300:100", "w") == [100, 200, 300]
    assert parse_cli_values("geomspace:0.1:10:3", "w") == [0.1, 1, 10]
    with pytest.raises(ScenarioError, match="w: value 0.5 appears twice"):
        parse_cli_values("0.5,1,0.5", "w")


# --- the [sweep] table and the command line
# ------------------------------------------------------------

BASE = """kind = "digital_goods"
[population]
distribution = "uniform"
n = 10
[mechanism]
epsilon = 0.5
"""


def test_sweep_table_quoted_and_unquoted_dotted_keys_ranges_and_seeds():
    text = (
        BASE + '[sweep]\nseeds = 3\n"population.n" = [10, 20]\nmechanism.epsilon = { range = '
        "[1, 2, 1] }\n"
    )
    grid, table = build_grid(_scenario(text).data, "test.toml")
    assert grid.parameters == {"population.n": [10, 20], "mechanism.epsilon": [1, 2]}
    assert grid.seeds == 3 and len(grid) == 12 and table.summary is None
    cells = list(grid.cells())
    assert len({c.key for c in cells}) == 12
    assert [
        (c.params["population.n"], c.params["mechanism.epsilon"], c.seed_index) for c in cells[:4]
    ] == [(10, 1, 0), (10, 1, 1), (10, 1, 2), (10, 2, 0)]


def test_command_line_replaces_table_parameters_and_seeds():
    text = BASE + '[sweep]\nseeds = 3\nepsilon = [0.1, 0.2]\nsummary = ["opt"]\n'
    grid, table = build_grid(_scenario(text).data, "t", ["mechanism.epsilon=1,2,3", "n=5,6"], 2)
    assert grid.parameters == {"mechanism.epsilon": [1, 2, 3], "population.n": [5, 6]}
    assert grid.seeds == 2 and table.summary == ["opt"]
    grid, _ = build_grid(_scenario(BASE).data, "t")
    assert grid.parameters == {} and len(grid) == 1 and list(grid.cells())[0].params == {}


@pytest.mark.parametrize(
    "sweep,message",
    [
        ("seeds = 0", r"field 'sweep.seeds': must be a whole number >= 1"),
        ("summary = 3", r"field 'sweep.summary': must be a non-empty list"),
        ("epsilon = 0.5", r"field 'sweep.epsilon': must be a non-empty list"),
        ("epsilon = []", r"field 'sweep.epsilon': must be a non-empty list"),
        ('epsilon = [1]\n"mechanism.epsilon" = [2]', r"parameter 'mechanism.epsilon' given twice"),
        ("epsilonn = [1]", r"parameter 'epsilonn': no field of that name"),
    ],
)
def test_bad_sweep_tables_name_the_file_and_field(sweep, message):
    with pytest.raises(ScenarioError, match=r"^test.toml: .*" + message):
        build_grid(_scenario(BASE + "[sweep]\n" + sweep + "\n").data, "test.toml")


def test_bad_set_syntax():
    with pytest.raises(ScenarioError, match=r"--set 'epsilon': expected NAME=V1,V2"):
        build_grid(_scenario(BASE).data, "t", ["epsilon"])


def test_cell_key_is_canonical():
    assert cell_key({"b": 1, "a": 0.5}, 2) == cell_key({"a": 0.5, "b": 1}, 2)
    assert cell_key({"a": 1}, 0) != cell_key({"a": 1.0}, 0) != cell_key({"a": 1}, 1)
