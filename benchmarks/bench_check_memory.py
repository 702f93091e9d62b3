"""How honest `dpgames check`'s memory estimate is: each kind's estimate against the run's measured
peak.

    DPGAMES_TNTP_DIR=/work/shared/data/tntp python benchmarks/bench_check_memory.py [FILE ...]

For every shipped scenario (or the files given): the largest stage's estimate (what ``--max-memory``
is compared with), the peak of the memory the run allocates (``tracemalloc``: Python objects and
numpy arrays, not the interpreter and its libraries, which the estimate leaves out too), and their
ratio. Each file runs in its own interpreter, as ``dpgames run`` does. A ratio below 1 is an
UNDER-estimate (the budget could let through a run that needs more than the limit); far above 1
refuses runs that would fit.  Files that need the TNTP networks are skipped without them.
"""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from _timing import print_machine

from dpgames.scenarios import Scenario
from dpgames.scenarios.budget import fmt_bytes
from dpgames.validation import ValidationError

ROOT = Path(__file__).resolve().parents[1]


def estimate_and_peak(path: Path) -> tuple[float, float, float]:
    """The largest stage's memory estimate, the run's traced peak (bytes) and the run's seconds."""
    scenario = Scenario.from_file(path)
    parsed = scenario.parse()
    estimate = max((stage.memory for stage in parsed.estimate()), default=float("nan"))
    tracemalloc.start()
    start = time.perf_counter()
    try:
        scenario.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return estimate, peak, time.perf_counter() - start


def measured_in_a_fresh_process(path: Path) -> tuple[float, float, float] | str:
    """:func:`estimate_and_peak` of ``path`` in its own interpreter, as ``dpgames run`` is: what a
    process loads once (numba and the mediator's compiled round, ~30 MB) counts for every file, not
    only the first.  Returns the reason instead when the file cannot run here."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1][:70]
    estimate, peak, seconds = (float(v) for v in done.stdout.split())
    return estimate, peak, seconds


def main(paths: list[Path]) -> None:
    print_machine()
    print(f"{'scenario':<42} {'estimate':>10} {'peak':>10} {'est/peak':>9} {'run s':>6}")
    for path in paths:
        measured = measured_in_a_fresh_process(path)
        if isinstance(measured, str):  # a network folder missing, or over the default budget
            print(f"{path.name:<42} skipped: {measured}")
            continue
        estimate, peak, seconds = measured
        flag = "  UNDER" if estimate < peak else ""
        print(
            f"{path.name:<42} {fmt_bytes(estimate):>10} {fmt_bytes(peak):>10} "
            f"{estimate / peak:>9.2f} "
            f"{seconds:>6.1f}{flag}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        try:
            print(*estimate_and_peak(Path(sys.argv[2])))
        except ValidationError as exc:
            sys.exit(f"skipped: {exc}")
    else:
        main([Path(p) for p in sys.argv[1:]] or sorted((ROOT / "scenarios").glob("*.toml")))
