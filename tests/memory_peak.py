"""The oracle of the memory-estimate tests: a scenario's largest-stage estimate (what ``dpgames check``
compares with ``--max-memory``) and the peak the real run allocates (tracemalloc: Python objects and numpy
arrays), measured in this process."""

from __future__ import annotations

import tracemalloc

from dpgames.scenarios import Scenario


def estimate_and_peak(scenario: Scenario) -> tuple[float, int]:
    """(the largest stage's memory estimate, the run's traced peak), both in bytes."""
    parsed = scenario.parse()
    estimate = max(stage.memory for stage in parsed.module.estimate(parsed.spec))
    tracemalloc.start()
    try:
        scenario.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return estimate, peak
