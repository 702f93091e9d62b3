"""Shared test instances (random environments, the shipped scenarios cut to a small size), imported
by several test modules; the independent oracles live in ``truthfulness_oracles.py`` and
``auction_oracles.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.facility_location import facility_location_environment, line_graph
from dpgames.mechanisms.pricing import pricing_environment
from dpgames.scenarios import Scenario

ROOT = Path(__file__).resolve().parents[1]
NST_FILES = ["nst_pricing", "nst_facility_k2", "nst_facility_k1"]
HK_FILES = ["huang_kannan_facility", "huang_kannan_public_project"]


def random_environment(rng: np.random.Generator, objective: bool = False) -> Environment:
    """A small random environment on a coarse utility grid (so ties happen): 2-4 types, 2-5
    outcomes, 1-3 reactions; an objective of its own when ``objective``."""
    m, k, r = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(1, 4))
    utility = rng.integers(-4, 5, size=(m, k, r)) / 4
    obj = rng.integers(0, 5, size=(m, k, r)) / 4 if objective else None
    return Environment(np.arange(m), np.arange(k), tuple(f"r{j}" for j in range(r)), utility, obj)


def quick(name: str) -> Scenario:
    """A shipped scenario with its [scaling] cut to one small n, to keep the suite fast."""
    scenario = Scenario.from_file(ROOT / "scenarios" / f"{name}.toml")
    if "scaling" in scenario.data:
        scenario = scenario.with_overrides({"scaling.n": [60]})
    return scenario


def environment_instance(seed: int) -> tuple[Environment, list[int], float]:
    """(environment, agents, eps) on random small environments, pricing and facility k = 2 on a
    line."""
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        env = random_environment(rng, objective=bool(seed % 2))
    elif kind == 1:
        prices = np.sort(
            rng.choice(np.arange(1, 9) / 8, size=int(rng.integers(2, 5)), replace=False)
        )
        env = pricing_environment(prices)
    else:
        env = facility_location_environment(line_graph(int(rng.integers(3, 6))), k=2)
    agents = rng.integers(0, env.n_types, size=int(rng.integers(1, 6))).tolist()
    return env, agents, float(rng.choice([0.3, 1.0, 4.0]))


def first_of_each_class(gains, profile) -> np.ndarray:
    """The rows of per-agent ``gains`` of each class's first agent (the audits report one row per
    class)."""
    return np.array([gains[i] for i in profile.first_agent])
