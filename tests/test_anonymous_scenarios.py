"""The anonymous_game scenario kind: the shipped examples run (smaller copies here), their figures
agree with the library called directly, bad fields name the field, and any data dict gives a clean
error or a result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.games.anonymous_generators import market_entry
from dpgames.games.anonymous_mediator import AnonymousMediator
from dpgames.scenarios import Scenario, registry
from dpgames.scenarios.spec import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios").glob("anonymous_*.toml"))


def small(data: dict) -> dict:
    """The example with fewer players and rounds (the same fields)."""
    game = dict(data["game"])
    game["players"] = [max(1, int(p) // 10**4) if p > 1000 else int(p) for p in game["players"]]
    mech = dict(data["mechanism"], rounds=40)
    return {**data, "game": game, "mechanism": mech}


def test_kind_is_registered_in_pyproject_and_the_fallback_table():
    assert (
        'anonymous_game = "dpgames.scenarios.anonymous_game"'
        in (ROOT / "pyproject.toml").read_text()
    )
    assert registry.BUILTIN_KINDS["anonymous_game"] == "dpgames.scenarios.anonymous_game"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_parse_and_smaller_copies_run(path):
    import tomllib

    data = tomllib.loads(path.read_text())
    data.pop("sweep", None)
    result = Scenario.from_dict(small(data), source=str(path)).run(seed=1)
    m = result.metrics
    assert 0 <= m["alpha"] <= m["alpha_decomposition_bound"] + 1e-12
    assert m["observed_regret"] <= m["regret_bound"] + 1e-12
    assert sum(result.tables["suggestions"]["players"]) == m["n"]


def test_market_entry_scenario_equals_the_library_called_directly():
    data = {
        "kind": "anonymous_game",
        "seed": 5,
        "game": {"type": "market_entry", "players": [6, 4], "capacity": 5, "outside": [0.5, 0.4]},
        "mechanism": {"rounds": 30, "epsilon": 1.0, "dynamics": "blum-mansour"},
    }
    scenario = Scenario.from_dict(data, source="<test>")
    parsed = scenario.parse()
    result = scenario.run()
    mediator_seed, _ = parsed.seed.spawn(2)
    out = AnonymousMediator(rounds=30, epsilon=1.0, dynamics="blum-mansour").run(
        market_entry([6, 4], 5, [0.5, 0.4]), rng=np.random.default_rng(mediator_seed)
    )
    assert result.metrics["alpha"] == out.max_alpha
    assert result.tables["suggestions"]["players"] == out.suggestions.ravel().tolist()


@pytest.mark.parametrize(
    "game,mechanism,field",
    [
        ({"type": "crowding", "players": [3, 2], "values": [[0.5, 2.0], [0.1, 0.2]]}, {}, "values"),
        (
            {"type": "crowding", "players": [3, 2.5], "values": [[0.5, 0.2], [0.1, 0.2]]},
            {},
            "players",
        ),
        ({"type": "market_entry", "players": [3]}, {}, "capacity"),
        ({"type": "public_goods", "players": [3], "threshold": 1, "width": 0}, {}, "width"),
        ({"type": "dating", "players": [3]}, {}, "type"),
        ({"type": "minority", "players": [3]}, {"noise": "laplace"}, "noise"),
        ({"type": "minority", "players": [3]}, {"rounds": 0}, "rounds"),
        ({"type": "minority", "players": [3], "extra": 1}, {}, "extra"),
    ],
)
def test_bad_fields_are_named(game, mechanism, field):
    data = {"kind": "anonymous_game", "seed": 1, "game": game, "mechanism": mechanism}
    with pytest.raises(ScenarioError, match=field):
        Scenario.from_dict(data, source="<test>").parse()


def test_the_misreport_audit_refuses_large_games():
    data = {
        "kind": "anonymous_game",
        "seed": 1,
        "game": {"type": "minority", "players": [1000]},
        "audit": {"misreport": True},
    }
    with pytest.raises(ScenarioError, match="misreport"):
        Scenario.from_dict(data, source="<test>").parse()


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["crowding", "market_entry", "el_farol", "minority", "public_goods"]),
    players=st.lists(st.integers(-1, 6), min_size=1, max_size=3),
    x=st.floats(-1, 10) | st.just(True) | st.just("a"),
    rounds=st.integers(-1, 20),
    noise=st.sampled_from(["gaussian", "tree", "none", "x"]),
)
def test_fuzz_scenario(kind, players, x, rounds, noise):
    game = {"type": kind, "players": players}
    extra = {
        "crowding": {"values": [[x, 0.5]] * len(players)},
        "market_entry": {"capacity": x},
        "el_farol": {"capacity_fraction": x},
        "minority": {},
        "public_goods": {"threshold": 1, "width": x},
    }
    game.update(extra[kind])
    data = {
        "kind": "anonymous_game",
        "seed": 1,
        "game": game,
        "mechanism": {"rounds": rounds, "noise": noise},
    }
    try:
        result = Scenario.from_dict(data, source="<fuzz>").run()
    except ScenarioError:
        return
    assert 0 <= result.metrics["alpha"] <= result.metrics["alpha_decomposition_bound"] + 1e-12
