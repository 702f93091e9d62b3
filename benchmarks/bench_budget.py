"""How fast an oversized scenario is refused: the budget check against reading its scenario file.

    python benchmarks/bench_budget.py

Each row: the case, the time to refuse it (validate + estimate + check, median of 5), the time to read
and parse the shipped file it varies (TOML), and their ratio.  Goal: every refusal well under 2 s (it is milliseconds: no heavy work runs).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from dpgames.scenarios import BudgetError, Scenario  # noqa: E402
from test_budget import OVERSIZED, _scenario  # noqa: E402


def _median_seconds(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _refuse(scenario: Scenario) -> None:
    try:
        scenario.run(seed=0)
    except BudgetError:
        return
    raise AssertionError(f"{scenario.source} was not refused")


def main() -> None:
    print(f"{'case':34} {'refuse ms':>10} {'read ms':>9} {'ratio':>6}")
    for case in sorted(OVERSIZED):
        name, overrides, _ = OVERSIZED[case]
        scenario = _scenario(name, overrides)
        _refuse(scenario)   # warm: the kind's module imported
        refuse = _median_seconds(lambda: _refuse(scenario))
        parse = _median_seconds(lambda: Scenario.from_file(ROOT / "scenarios" / f"{name}.toml"))
        print(f"{case:34} {refuse * 1e3:10.2f} {parse * 1e3:9.3f} {refuse / parse:6.2f}")


if __name__ == "__main__":
    main()
