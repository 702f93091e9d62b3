"""`dpgames check`'s memory estimate of a digital-goods run is honest: at least the run's traced
peak (the budget never lets through a run that needs more) and not far above it (it does not refuse
runs that fit).

Oracle: the peak tracemalloc measures while the run is done, on the paths the estimate distinguishes
(RSOP exact or sampled, the audits on their linear path or in log space, grid or continuum)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dpgames.scenarios import Scenario
from memory_peak import estimate_and_peak

ROOT = Path(__file__).resolve().parents[1]


def _scenario(mechanism: dict, population: dict) -> Scenario:
    data = tomllib.loads((ROOT / "scenarios" / "digital_goods.toml").read_text(encoding="utf-8"))
    data.pop("sweep", None)
    data["mechanism"].update(mechanism)
    data["population"].update(population)
    return Scenario.from_dict(data)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mechanism", "population"),
    [
        ({}, {"n": 12}),  # RSOP exact over every split
        ({}, {}),  # RSOP sampled, audits on the linear path
        ({"epsilon": 50.0}, {}),  # audits in log space
        ({"prices": "continuous"}, {"n": 300}),  # the continuum
    ],
    ids=["exact-rsop", "default", "log-space-audits", "continuum"],
)
def test_the_estimate_is_at_least_the_peak_and_within_4x(mechanism, population):
    estimate, peak = estimate_and_peak(_scenario(mechanism, population))
    assert peak <= estimate <= 4 * peak, (estimate, peak)
