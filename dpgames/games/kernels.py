"""The compiled road-network kernels (numba): whether numba's on-disk cache already holds them, and
what compiling them costs the first large game after installing (measured, not modelled)."""

from __future__ import annotations

import os
from pathlib import Path

#: CPU seconds the first game after installing spends compiling the kernels (the first run's CPU
#: time less the second's), measured by ``benchmarks/bench_first_run.py`` on a fresh venv
#: (docs/benchmarks.md): Sioux Falls (a road network: shortest paths and the mediator's round) and
#: Pigou's game (the round only).
FIRST_COMPILE_CPU_SECONDS = {"network": 16.0, "pigou": 5.0}


def kernels_compiled() -> bool:
    """Whether numba's cache holds the compiled mediator round (:mod:`dpgames.games._rounds`): in
    the package's ``__pycache__`` or, where that is not writable, under ``NUMBA_CACHE_DIR``.

    Returns
    -------
    bool
    """
    import dpgames.games as games  # read at call time: the package's folder is where numba caches

    folders = [Path(games.__file__).parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return any(
        next(folder.rglob("_rounds.*.nbi"), None) is not None
        for folder in folders
        if folder.is_dir()
    )


def first_compile_notice() -> str:
    """The sentence the command line and the app show before the first large game since installing.

    Examples
    --------
    >>> first_compile_notice().startswith("The first large game since installing compiles")
    True
    """
    return (
        "The first large game since installing compiles the road-network kernels "
        "(numba), once: about "
        f"{FIRST_COMPILE_CPU_SECONDS['network']:.0f} CPU-seconds more on a road network, "
        f"{FIRST_COMPILE_CPU_SECONDS['pigou']:.0f} on Pigou's two roads (more in wall "
        "time on a busy "
        "machine); later runs load them from numba's cache."
    )
