"""How fast an oversized scenario is refused: the budget check against reading its scenario file.

    python benchmarks/bench_budget.py

Each row: the case, the time to refuse it (validate + estimate + check), the time to read and parse
the shipped file it varies (TOML), and their ratio: the two timed alternately, 5 times in one
process (benchmarks/_timing.py: median CPU times, median and range of the per-repetition ratios, CPU
and wall). Goal: every refusal well under 2 s (it is milliseconds: no heavy work runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from _timing import interleaved, print_machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from dpgames.scenarios import BudgetError, Scenario  # noqa: E402
from test_budget import OVERSIZED, _scenario  # noqa: E402


def _refuse(scenario: Scenario) -> None:
    try:
        scenario.run(seed=0)
    except BudgetError:
        return
    raise AssertionError(f"{scenario.source} was not refused")


def main() -> None:
    print_machine()
    print(
        f"{'case':34} {'refuse ms':>10} {'read ms':>9}  refuse / read, CPU      refuse / read, wall"
    )
    for case in sorted(OVERSIZED):
        name, overrides, _ = OVERSIZED[case]
        scenario = _scenario(name, overrides)
        t = interleaved(
            {
                "refuse": lambda: _refuse(scenario),
                "read": lambda: Scenario.from_file(ROOT / "scenarios" / f"{name}.toml"),
            },
            5,
        )
        print(
            f"{case:34} {t.seconds('refuse') * 1e3:10.2f} {t.seconds('read') * 1e3:9.3f}  "
            f"{t.ratio('refuse', 'read')!s:22} {t.ratio('refuse', 'read', 'wall')}"
        )
    print_machine("end")


if __name__ == "__main__":
    main()
