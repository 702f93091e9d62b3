"""Random-number generators: one rule for every ``rng`` argument of dpgames.

Every random function of dpgames takes ``rng``: a numpy :class:`~numpy.random.Generator` (used as
is, so a caller can thread one stream through several calls), an integer seed, a
:class:`~numpy.random.SeedSequence` or :class:`~numpy.random.BitGenerator`, or ``None`` (fresh OS
entropy).  The same seed gives the same result.
"""

from __future__ import annotations

import numpy as np

from dpgames.validation import integer

#: What an ``rng`` argument accepts.
RNGLike = np.random.Generator | np.random.SeedSequence | np.random.BitGenerator | int | None


def as_generator(rng: RNGLike, name: str = "rng") -> np.random.Generator:
    """A numpy Generator from any accepted ``rng`` argument.

    Parameters
    ----------
    rng : Generator, int, SeedSequence, BitGenerator or None
        A Generator is returned unchanged; an integer seed ``>= 0`` (of any size), a
        ``SeedSequence`` or a ``BitGenerator`` seeds a new one; ``None`` draws fresh entropy from
        the OS.
    name : str, default "rng"
        The argument named in the error (``"seed"`` for a function whose argument is called so).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValidationError
        If ``rng`` is anything else (a float, a negative integer, a string, a bool), with field
        ``name``.

    Examples
    --------
    >>> gen = as_generator(7)
    >>> as_generator(gen) is gen
    True
    >>> bool(as_generator(7).random() == gen.random())
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and not isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        rng = integer(name, rng, low=0)
    return np.random.default_rng(rng)
