"""The first large game after installing: numba compiles the road-network kernels once, on a fresh
venv.

    python benchmarks/bench_first_run.py [--venv PATH] [--keep-venv] [--scenario FILE]

Creates a fresh virtual environment in a temporary folder (``python -m venv``), installs dpgames
into it from this checkout's own files (``pip install`` of a copy of the checkout; numba is a core
dependency, no extra needed), then runs ``dpgames run scenarios/pigou.toml`` twice with the venv's
``dpgames``: the first run compiles the kernels (:mod:`dpgames.games._rounds`, ``_paths``,
``_dijkstra``) and writes numba's cache next to the installed modules, the second loads them from
that cache.  Each run is a child process; its wall time and its CPU time (user + system, from
``getrusage(RUSAGE_CHILDREN)``) are printed, with the first/second ratio, the machine's load average
before and after, and its CPU model.  The difference between the two runs is what the first run
costs the user once.

``--venv PATH`` uses (or creates, then keeps) the venv at PATH; ``--keep-venv`` keeps the temporary
one and prints where it is.  A venv that already ran the scenario has its kernels cached: its
"first" run is a cached one (the numba cache is deleted first unless ``--keep-cache`` is given, so
reusing a venv still measures a first compile).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the copy of the checkout that pip installs leaves out: version control, build output,
#: caches.
NOT_SOURCES = (
    ".git",
    "build",
    "dist",
    "site",
    "*.egg-info",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".cache",
    "results",
    "*.whl",
)


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (``platform.processor()`` where /proc is
    missing)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``command`` run as a child; its output is discarded
    unless it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def install(venv: Path) -> Path:
    """The venv at ``venv`` (created when missing) with this checkout installed; its ``dpgames``
    script."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} and installing {ROOT} (pip install, not editable) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        with tempfile.TemporaryDirectory(prefix="dpgames-source-") as folder:
            # pip builds in the source tree (build/, *.egg-info): build in a copy, not in the
            # checkout
            source = Path(folder) / "dpgames"
            shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
            wall, cpu = timed(
                [str(python), "-m", "pip", "install", "--quiet", str(source)], cwd=venv
            )
        print(f"  installed in {wall:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
    where = subprocess.run(
        [str(python), "-c", "import dpgames; print(dpgames.__file__)"],
        cwd=venv,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not where.startswith(str(venv)):
        sys.exit(f"the venv imports dpgames from {where}, not from its own site-packages")
    return venv / "bin" / "dpgames"


def clear_cache(venv: Path) -> int:
    """Delete numba's cache files (``*.nbi``, ``*.nbc``) under the venv's dpgames; how many went."""
    found = [
        p
        for pattern in ("*.nbi", "*.nbc")
        for p in venv.glob(f"lib/python*/site-packages/dpgames/**/{pattern}")
    ]
    for path in found:
        path.unlink()
    return len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, help="use (or create, and keep) the venv at this path")
    parser.add_argument(
        "--keep-venv", action="store_true", help="keep the temporary venv and print its path"
    )
    parser.add_argument(
        "--keep-cache",
        action="store_true",
        help="do not delete numba's cache of a reused venv before the first run",
    )
    parser.add_argument("--scenario", type=Path, default=ROOT / "scenarios" / "pigou.toml")
    args = parser.parse_args()
    if "NUMBA_CACHE_DIR" in os.environ:
        sys.exit(
            "NUMBA_CACHE_DIR is set: numba would cache outside the venv; unset it for "
            "this benchmark"
        )
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs); Python {platform.python_version()}")
    print(f"load average (1, 5, 15 min) at the start: {load()}")
    temporary = None if args.venv else Path(tempfile.mkdtemp(prefix="dpgames-first-run-"))
    venv = args.venv.resolve() if args.venv else temporary / "venv"
    try:
        dpgames = install(venv)
        if not args.keep_cache and (gone := clear_cache(venv)):
            print(f"  deleted {gone} numba cache files of the reused venv")
        command = [str(dpgames), "run", str(args.scenario.resolve())]
        print(f"$ dpgames run {args.scenario.name}   (twice, from {venv.parent})", flush=True)
        first = timed(command, cwd=venv.parent)
        second = timed(command, cwd=venv.parent)
        print(f"{'':<32} {'wall s':>8} {'CPU s':>8}")
        print(f"{'first run (numba compiles)':<32} {first[0]:>8.1f} {first[1]:>8.1f}")
        print(f"{'second run (numba cache)':<32} {second[0]:>8.1f} {second[1]:>8.1f}")
        print(f"{'first / second':<32} {first[0] / second[0]:>8.2f} {first[1] / second[1]:>8.2f}")
        print(
            f"{'first - second (the compile)':<32} {first[0] - second[0]:>8.1f} "
            f"{first[1] - second[1]:>8.1f}"
        )
        print(f"load average at the end: {load()}")
    finally:
        if temporary is not None:
            if args.keep_venv:
                print(f"venv kept: {venv}  (reuse it with --venv {venv})")
            else:
                shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    main()
