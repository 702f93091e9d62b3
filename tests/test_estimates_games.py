"""`dpgames check`'s memory estimates of the game kinds (large_game, anonymous_game, allocation)
against the run's measured peak.

Oracle: tracemalloc on the real run (Python objects and numpy arrays), in a FRESH process, as
`dpgames run` is: the first Hedge mediator of a process imports numba and loads the compiled round
(about 29 MB, counted by large_game.COMPILED_ROUND_LOAD), which a process that already ran one does
not pay again.  Each case asserts peak <= estimate (the budget never lets through a run that needs
more) <= 4 x peak + 4 MB (not absurd).  benchmarks/bench_check_memory.py prints the same ratios.
"""

import json
from pathlib import Path

import pytest

from dpgames.scenarios import Scenario
from dpgames.scenarios.large_game import data_roots
from memory_peak import estimate_and_peak_in_a_fresh_process

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def assert_honest(estimate: float, peak: float, factor: float = 4.0) -> None:
    assert peak <= estimate <= factor * peak + 4e6, (estimate, peak)


#: Variants whose memory follows a loop count the estimate takes at its proven worst case (the exact
#: ascending auction keeps a row per round; its rounds are bounded by 1 + sum_j (L + 1 + L min(s_j,
#: n)), which a market of 50,000 bidders with 20,000 copies per good reaches only in the worst
#: case): an upper bound by construction, honest within this factor instead of 4.
WORST_CASE_LOOPS = {"allocation, 50,000 bidders": 10.0}


NEEDS_TNTP = {"braess.toml": "Braess", "sioux_falls.toml": "SiouxFalls", "anaheim.toml": "Anaheim"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "pigou.toml",
        "braess.toml",
        "sioux_falls.toml",
        "anaheim.toml",
        "allocation_small.toml",
        "allocation_two_goods.toml",
        "anonymous_market_entry.toml",
        "anonymous_crowding.toml",
    ],
)
def test_shipped_scenarios_estimate_is_at_least_the_peak_and_at_most_4_times_it(name):
    """Every shipped scenario of these kinds that runs in a few seconds (grid.toml takes 8 s: its
    case is covered by the smaller grid with the incentive audit below)."""
    network = NEEDS_TNTP.get(name)
    if network is not None and not (data_roots()[0] / network).is_dir():
        pytest.skip(f"no TNTP folder {network} (set DPGAMES_TNTP_DIR)")
    assert_honest(*estimate_and_peak_in_a_fresh_process(str(SCENARIOS / name)))


VARIANTS = {
    # the incentive audit holds three histories (rounds x paths) at once; wide path sets (max_paths
    # 12)
    "grid with the audit": {
        "kind": "large_game",
        "seed": 1,
        "game": {"source": "grid", "rows": 8, "cols": 8, "pairs": 12, "players": 1200},
        "mediator": {"rounds": 800, "max_paths": 12},
        "incentives": {"enabled": True, "seeds": 2, "samples": 2},
    },
    # Blum-Mansour (no compiled round): the peak is the system optimum's path sets (33 paths per
    # pair)
    "grid, blum-mansour": {
        "kind": "large_game",
        "seed": 1,
        "game": {"source": "grid", "rows": 20, "cols": 20, "pairs": 60, "players": 30000},
        "mediator": {"rounds": 300, "max_paths": 4, "dynamics": "blum-mansour"},
        "incentives": {"enabled": False},
    },
    "pigou, 5000 rounds": {
        "kind": "large_game",
        "seed": 1,
        "game": {
            "source": "resources",
            "free": [1.0, 0.0],
            "coef": [0.0, 0.001],
            "classes": [{"players": 1000, "actions": [[0], [1]]}],
        },
        "mediator": {"rounds": 5000},
        "incentives": {"enabled": False},
    },
    # the optimum by assignment: a dense bidders x copies cost matrix and its copy
    "allocation, assignment": {
        "kind": "allocation",
        "seed": 1,
        "market": {"bidders": 2000, "goods": 5, "supply": 100},
        "auction": {"alpha": 0.05, "epsilon": 2.0},
        "audit": {"bidders": 2},
    },
    "allocation, 50,000 bidders": {
        "kind": "allocation",
        "seed": 1,
        "market": {"bidders": 50000, "goods": 2, "supply": 20000},
        "auction": {"alpha": 0.25, "epsilon": 5.0},
    },
    "market entry, 200 firms": {
        "kind": "anonymous_game",
        "seed": 1,
        "game": {
            "type": "market_entry",
            "players": [150, 50],
            "capacity": 80,
            "outside": [0.5, 0.45],
        },
        "mechanism": {
            "rounds": 3000,
            "epsilon": 2.0,
            "dynamics": "blum-mansour",
            "evaluation": "exact",
        },
        "audit": {"misreport": True},
    },
    "crowding, 10,000 diners": {
        "kind": "anonymous_game",
        "seed": 1,
        "game": {
            "type": "crowding",
            "players": [4000, 6000],
            "values": [[0.9, 0.6, 0.3, 0.5], [0.3, 0.6, 0.9, 0.5]],
        },
        "mechanism": {"rounds": 200},
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_variants_estimate_is_at_least_the_peak_and_at_most_4_times_it(name):
    """Sizes the shipped files do not reach: more rounds, wider path sets, a bigger grid, the
    assignment."""
    data = VARIANTS[name]
    Scenario.from_dict(data).parse()  # a valid scenario (a typo fails here, not in the child)
    assert_honest(
        *estimate_and_peak_in_a_fresh_process(json.dumps(data)), WORST_CASE_LOOPS.get(name, 4.0)
    )


def test_the_compiled_rounds_load_is_counted_only_under_hedge():
    """Blum-Mansour never imports numba: its estimate leaves the 30 MB out (oracle: the module
    constant)."""
    from dpgames.scenarios import large_game

    base = {
        "kind": "large_game",
        "seed": 1,
        "incentives": {"enabled": False},
        "game": {
            "source": "resources",
            "free": [1.0, 0.0],
            "coef": [0.0, 0.001],
            "classes": [{"players": 10, "actions": [[0], [1]]}],
        },
    }

    def largest(dynamics: str) -> float:
        spec = Scenario.from_dict({**base, "mediator": {"dynamics": dynamics}}).parse().spec
        return max(stage.memory for stage in large_game.estimate(spec))

    assert largest("hedge") - largest("blum-mansour") == large_game.COMPILED_ROUND_LOAD
