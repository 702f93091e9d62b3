"""Independent random streams of one run, derived from its root seed.

A kind splits its root :class:`numpy.random.SeedSequence` into named children (population, draws,
Monte Carlo ...).  Deriving them through :func:`child_streams` never advances the root, so any
caller (the app redrawing a run's population, a test) gets exactly the streams the run used.
"""

from __future__ import annotations

import numpy as np


def child_streams(seed: np.random.SeedSequence, count: int) -> list[np.random.SeedSequence]:
    """The first ``count`` children of ``seed``, the same on every call (``seed`` is not advanced).

    Parameters
    ----------
    seed : numpy.random.SeedSequence
    count : int

    Returns
    -------
    list of numpy.random.SeedSequence
    """
    return np.random.SeedSequence(
        seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
    ).spawn(count)
