"""The oracle of the memory-estimate tests: a scenario's largest-stage estimate (what ``dpgames
check`` compares with ``--max-memory``) and the peak the real run allocates (tracemalloc: Python
objects and numpy arrays), in this process or, as ``dpgames run`` is, in a fresh one (what a process
loads once, such as numba for the mediator's compiled round, then counts)."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc

from dpgames.scenarios import Scenario
from dpgames.scenarios.budget import Budget


def estimate_and_peak(scenario: Scenario) -> tuple[float, int]:
    """(the largest stage's memory estimate, the run's traced peak), both in bytes."""
    parsed = scenario.parse()
    estimate = max(stage.memory for stage in parsed.estimate())
    tracemalloc.start()
    try:
        # memory is measured here; the work limit is not the subject
        scenario.run(budget=Budget(max_work=1e15))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return estimate, peak


def estimate_and_peak_in_a_fresh_process(source: str) -> tuple[float, int]:
    """:func:`estimate_and_peak` of a scenario file's path, or of a scenario as JSON, in a fresh
    interpreter."""
    done = subprocess.run(
        [sys.executable, __file__, source], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    estimate, peak = json.loads(done.stdout.splitlines()[-1])
    return estimate, peak


if __name__ == "__main__":
    given = sys.argv[1]
    print(
        json.dumps(
            estimate_and_peak(
                Scenario.from_file(given)
                if given.endswith(".toml")
                else Scenario.from_dict(json.loads(given))
            )
        )
    )
