"""Black-box privacy audit: search for the worst neighbouring pair and event, then certify a lower
bound on eps.

A mechanism that can only be run is audited from samples, as the statistical DP testers do (Ding et
al. 2018, StatDP; Bichsel et al. 2021, DP-Sniper; Jagielski, Ullman & Oprea 2020): if ``M`` is (eps,
delta)-DP then for every event ``E`` and neighbouring inputs ``x, x'``, ``Pr[M(x) in E] <= e^eps
Pr[M(x') in E] + delta``, so one-sided Clopper-Pearson bounds ``p_low <= Pr[M(x) in E]`` and
``q_high >= Pr[M(x') in E]`` give the lower bound ``eps >= ln((p_low - delta) / q_high)`` (the
certificate for ``delta > 0``).  For ``delta = 0`` a tighter one spends the confidence once: on
Poisson(N)-sized samples the counts are independent Poisson(``N p``) and Poisson(``N q``), and given
their total the first is Binomial with proportion ``p / (p + q)``, whose Clopper-Pearson lower bound
``pi_L`` gives ``eps >= ln(pi_L / (1 - pi_L))`` (see :func:`_ratio_bound`).

:func:`audit_black_box` works in two phases on independent samples:

1. **Search** (it may look at anything).  Every candidate pair is screened on a small budget in both
   orders; the best few are searched again on a larger one.  Each pair's draws are seeded by the
   pair's index (``_child(seed, phase, pair, input)``), so the screening and the search may run on
   worker processes in any order and choose the same event.  On each, half of the samples build
   candidate events and the other half estimate, for each candidate, the bound it is expected to
   certify at the certification sample size (the search estimates of ``p`` and ``q``, made
   pessimistic by their own confidence bounds against the winner's curse, put into the
   Clopper-Pearson formula at ``N = samples``; see :func:`expected_bound`).  The event with the
   largest expected certified bound wins: not the largest raw ratio (a thin tail has a large ratio
   and certifies nothing), and with no floor on the event's probability (DP-Sniper's floor of 1%
   caps its bound at ln 100), so an event impossible under ``x'`` certifies ``ln(p_low / q_high)``
   with ``q_high`` about ``ln(1/alpha) / N``, growing with N. Events are built for every kind of
   output:

   * finite outputs (labels, or numeric outputs taking few distinct values, a vector row being one
     outcome): single outcomes and unions of outcomes in the order of their estimated likelihood
     ratio;
   * scalars: tails and intervals;
   * vectors: cells of a coarse grid (each coordinate cut into its repeated values, such as a
     "halted" code, and a few quantile bins) ordered by estimated ratio, and thresholds (both tails)
     on a learned score: an additive log-likelihood-ratio model and an additive logistic regression
     on per-coordinate features (quantile-bin one-hots, indicators of repeated values, the raw
     value); the same scores on the continuous columns decorrelated by the inverse Cholesky factor
     of their within-input covariance (outputs that mix independent noises linearly, such as prefix
     sums, are unmixed, and an additive score becomes the likelihood ratio again); and, when G-tests
     of independence split the coordinates into groups independent of each other under each input
     (mechanisms run side by side), thresholds on the sum over the groups of each group's
     log-likelihood ratio estimated on its grid cells (the likelihood ratio of a product law is the
     product of the ratios);
   * above 10**7 certification draws (``stream_samples``), unions of grid cells on further draws
     streamed in chunks, many more than the search holds in memory: half estimate each cell's
     log-likelihood ratio (summed over the independent groups), half score the unions of the cells
     in decreasing order of it, so that a union of thin cells with a large ratio, which pessimistic
     estimates on a million draws cannot tell from a broad event, wins when the certification can
     resolve it.

2. **Certification** of the one chosen (pair, order, event) on ``samples`` fresh draws per input,
   streamed in chunks (memory does not grow with ``samples``), each chunk seeded from
   ``SeedSequence(seed).spawn``: the same seed gives the same bound serially, on local processes
   or on a Dask cluster.  For ``delta = 0`` the draws per input are two independent
   Poisson(``samples``) sizes, themselves drawn from the certification's seed, and the certificate
   is the conditional binomial test on them, one-sided Clopper-Pearson on ``p / (p + q)`` at
   ``confidence``; for ``delta > 0``, ``samples`` draws per input and each side bounded at ``1 -
   (1 - confidence) / 2``.

**Guarantee.** For a mechanism that is (eps, delta)-DP on the audited pairs, the returned bound
exceeds eps with probability at most ``1 - confidence``, whatever the search chose: the
certification samples are independent of the search, so the chosen event is fixed when they are
drawn; for ``delta = 0`` the conditional Clopper-Pearson bound holds given the total count, hence
unconditionally, and for ``delta > 0`` the two one-sided bounds hold together with probability ``>=
confidence`` (union bound).
"""

from __future__ import annotations

import math
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from scipy import optimize, sparse, special, stats
from scipy.sparse import csgraph

from dpgames.privacy.audit_result import PrivacyAudit, show
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    MAX_BYTES,
    ValidationError,
    integer,
    memory,
    non_negative,
    positive_int,
    probability,
)

Sampler = Callable[[Any, int, np.random.Generator], Any]

#: Most entries (rows x coordinates) one drawn chunk holds; chunks have at most 2**20 rows.
CHUNK_ENTRIES = 2**22
#: Pairs kept after screening for the full event search.
KEPT_PAIRS = 3
#: Rows of each input used to fit the logistic score (the rest of the fitting half is not needed).
FIT_ROWS = 30_000
#: Fewest rows of each input for the logistic score (below, the additive ratio alone: a regression
#: on a few hundred rows adds noise, not power).
MIN_FIT_ROWS = 5_000
#: Rows of each input the G-tests of independence between coordinates read (a dependence too weak to
#: show on them leaves the groups apart: the block score is then a cruder estimate, the bound still
#: valid).
BLOCK_ROWS = 10_000
#: A numeric output is treated as finite when every coordinate takes at most this many values in the
#: search.
FEW_VALUES = 64
#: Most repeated values per coordinate kept as atoms (their own cells and indicators).
ATOMS = 32
#: Candidates per family re-scored with exact Clopper-Pearson bounds after a ranking by Wilson
#: bounds.
RESCORED = 32
#: Most frequent patterns of repeated values searched for a score within them.
PATTERNS = 8
#: The streamed cells search (:func:`_stream_search`) reads ``samples // STREAM_SHARE`` draws per
#: input on each kept pair when that exceeds what the in-memory search reads (with the default
#: budgets: above 10**7 certification draws), and a tenth of that on each screened pair when it
#: exceeds the screening's. A union of thin cells with a large ratio is recognised only on millions
#: of selection rows, more than a search holding its outputs in memory can keep; the screening needs
#: them too, or it keeps the pairs whose broad events look best.
STREAM_SHARE = 10
#: Most distinct cells of one grid the streamed search counts per input (its counts hold at most
#: 2**18 x (16 + 8 x groups) bytes); a grid with more is left out for that pair: its cells are too
#: thin to order on any budget the search can afford.
STREAM_CELLS = 2**18
#: Pooled quantile bins of a scalar output's streamed grid: its unions in the order of the estimated
#: ratio are the tails and intervals of a likelihood ratio that is not monotone, on cuts 0.5% apart
#: (the in-memory intervals' cuts are about 1% apart, and chosen on a few hundred thousand rows).
SCALAR_STREAM_BINS = 200
#: Seed-sequence keys of the phases (children of the root seed).
PROBE, SCREEN, SEARCH, CERTIFY = 0, 1, 2, 3


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` on a binomial proportion, each holding
    with probability at least ``confidence`` (Clopper & Pearson 1934).

    Parameters
    ----------
    successes : int
        ``0 .. trials``.
    trials : int
        ``>= 1``.
    confidence : float
        In ``(0, 1)``.

    Returns
    -------
    tuple of float

    Raises
    ------
    ValidationError
        On counts out of range or a confidence outside ``(0, 1)``.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 1000, 0.95)
    >>> lo, round(hi, 5)  # (1 - hi)^1000 = 0.05
    (0.0, 0.00299)
    """
    trials = positive_int("trials", trials)
    successes = integer("successes", successes, low=0, high=trials)
    confidence = probability("confidence", confidence)
    lower, upper = _cp_bounds(np.array([successes], float), trials, 1 - confidence)
    return float(lower[0]), float(upper[0])


def _cp_bounds(successes: np.ndarray, trials: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised one-sided Clopper-Pearson bounds at level ``1 - alpha`` each (counts may be
    fractional: the search plugs in expected counts)."""
    k = np.asarray(successes, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(
            k <= 0, 0.0, special.betaincinv(np.maximum(k, 1e-300), trials - k + 1, alpha)
        )
        upper = np.where(
            k >= trials, 1.0, special.betaincinv(k + 1, np.maximum(trials - k, 1e-300), 1 - alpha)
        )
    return lower, upper


def _bound(p_low: np.ndarray, q_high: np.ndarray, delta: float) -> np.ndarray:
    """``ln((p_low - delta) / q_high)``; where ``p_low <= delta`` a very negative figure (ranks
    last)."""
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(p_low - delta, 1e-300)) - np.log(q_high)


def _ratio_bound(
    first: np.ndarray, second: np.ndarray, alpha: float, exact: bool = True
) -> np.ndarray:
    """The conditional certificate for ``delta = 0``: ``ln(pi_L / (1 - pi_L))`` with ``pi_L`` the
    one-sided Clopper-Pearson lower bound, at level ``1 - alpha``, on ``pi = p / (p + q)`` from
    ``first`` successes in ``first + second`` trials; ``-inf`` (certifies nothing) where ``first``
    is 0, ``T = 0`` included.

    On Poisson(``N``) draws per input the count of an event of probability ``p`` is exactly
    Poisson(``N p``) (Poissonization: a Poisson number of independent trials, thinned), so the two
    counts are independent Poisson(``N p``) and Poisson(``N q``), and given their total ``T`` the
    first is exactly Binomial(``T``, ``p / (p + q)``): the conditional test of the ratio of two
    Poisson means (Przyborowski & Wilenski 1940; Lehmann & Romano, *Testing Statistical Hypotheses*,
    ch. 4, comparing two Poisson populations).  Hence ``Pr[pi_L > pi | T] <= alpha`` for every
    ``T``, so unconditionally, and the figure is at most ``ln(p / q)`` with probability ``>= 1 -
    alpha``.  ``pi_L`` and ``1 - pi_L`` are each computed directly (``I_x(a, b) = 1 - I_(1-x)(b,
    a)``), so the log-odds keep their precision near 0 and 1. Counts may be fractional (the search
    plugs in expected counts); ``exact=False`` uses the Wilson score bound instead (a fast
    ranking)."""
    k1, k2 = np.asarray(first, float), np.asarray(second, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if exact:
            tiny = np.maximum(k1, 1e-300)
            odds = np.log(special.betaincinv(tiny, k2 + 1, alpha)) - np.log(
                special.betaincinv(k2 + 1, tiny, 1 - alpha)
            )
        else:
            low, _ = _wilson(k1, k1 + k2, alpha)
            odds = np.log(low) - np.log1p(-low)
        return np.where(k1 > 0, odds, -np.inf)


def _wilson(
    successes: np.ndarray, trials: int | np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Wilson score bounds at level ``1 - alpha`` each: a fast stand-in for
    Clopper-Pearson to rank thousands of candidate events (the winner is re-scored exactly)."""
    z = float(special.ndtri(1 - alpha))
    p = np.asarray(successes, float) / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (
        z
        / (1 + z * z / trials)
        * np.sqrt(np.maximum(p * (1 - p) / trials + z * z / (4 * trials * trials), 0.0))
    )
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def expected_bound(
    kp: np.ndarray,
    np_: int,
    kq: np.ndarray,
    nq: int,
    samples: int,
    alpha: float,
    delta: float,
    candidates: int = 1,
    exact: bool = True,
) -> np.ndarray:
    """The bound an event is expected to certify on ``samples`` draws per input, from search counts
    ``kp`` of ``np_`` (first input) and ``kq`` of ``nq`` (second), for the best of ``candidates``
    events scored on the same counts; ``alpha`` is ``(1 - confidence) / 2``, the level of each side
    of the two-bound certificate.

    The search estimates are first made pessimistic, ``p`` by its Clopper-Pearson lower bound and
    ``q`` by its upper bound at level ``1 - 0.05 / sqrt(candidates)`` (so that among thousands of
    thin events, one that was lucky in the search, say 3 draws under ``x`` and none under ``x'``,
    does not outrank a broad event with a real but small ratio; the square root, not a full
    Bonferroni, because the candidates of a family are nested tails and unions, strongly correlated:
    at ``0.05 / candidates`` the rare events of a real violation lost to broad weak ones in trials
    on sparse vector), then put into the one-sided Clopper-Pearson bounds at ``samples`` trials
    (level ``1 - alpha`` each) when ``delta > 0``, and for ``delta = 0`` as the expected counts
    ``samples p`` and ``samples q`` into the conditional certificate on Poisson-sized samples at
    level ``1 - 2 alpha`` (:func:`_ratio_bound`), the certificate the audit then computes.  An event
    never seen under ``x'`` is credited with ``q`` of about ``ln(20 sqrt(candidates)) / nq``: at
    most what the search could see.  ``exact=False`` uses Wilson score bounds instead of
    Clopper-Pearson throughout (a fast ranking)."""
    bounds = _cp_bounds if exact else _wilson
    shrink = 0.05 / math.sqrt(max(candidates, 1))
    p, _ = bounds(np.asarray(kp, float), np_, shrink)
    _, q = bounds(np.asarray(kq, float), nq, shrink)
    if delta == 0:
        return _ratio_bound(p * samples, q * samples, 2 * alpha, exact)
    p_low, _ = bounds(p * samples, samples, alpha)
    _, q_high = bounds(q * samples, samples, alpha)
    return _bound(p_low, q_high, delta)


# --- outputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Kind:
    """What the sampler returns: ``numeric`` rows of ``width`` numbers, or hashable labels
    (``width`` 0 for scalar labels, else the length of a row, each row one label)."""

    numeric: bool
    width: int

    def text(self) -> str:
        if self.numeric:
            return "numbers" if self.width == 1 else f"numeric vectors of length {self.width}"
        return "labels" if self.width == 0 else f"label vectors of length {self.width}"


def _outputs(raw: Any, x: Any, size: int) -> tuple[np.ndarray, _Kind]:
    """The sampler's ``size`` outputs on ``x`` in canonical form (a float array ``(size, d)``, or a
    1-d object array of hashable labels) and their kind, or a ValidationError saying what is
    wrong."""
    try:
        arr = np.asarray(raw)
    except (TypeError, ValueError):
        raise ValidationError(
            "sampler", f"must return an array of outputs; got a ragged sequence for input {show(x)}"
        ) from None
    if arr.ndim == 0 or arr.shape[0] != size:
        raise ValidationError(
            "sampler",
            f"must return {size} outputs for size={size}; got "
            f"{'a scalar' if arr.ndim == 0 else f'shape {arr.shape}'} for input {show(x)}",
        )
    rows = arr.reshape(size, -1)
    if rows.shape[1] == 0:
        raise ValidationError(
            "sampler", f"returned empty outputs (shape {arr.shape}) for input {show(x)}"
        )
    if arr.dtype.kind in "biuf":
        out = rows.astype(float) + 0.0  # + 0.0 maps -0.0 to 0.0: one value, one cell
        if np.isnan(out).any():
            raise ValidationError("sampler", f"returned NaN outputs for input {show(x)}")
        return out, _Kind(True, out.shape[1])
    if arr.dtype.kind not in "OUS":
        raise ValidationError(
            "sampler",
            f"must return numbers or hashable labels; got dtype {arr.dtype} for input {show(x)}",
        )
    labels = arr.tolist() if arr.ndim == 1 else [tuple(r) for r in rows.tolist()]
    try:
        hash(tuple(labels))
    except TypeError:
        raise ValidationError(
            "sampler", f"returned unhashable outputs for input {show(x)}"
        ) from None
    if any(v != v for v in labels):
        # NaN is the one label unequal to itself: it would match nothing
        raise ValidationError("sampler", f"returned NaN outputs for input {show(x)}")
    out = np.empty(size, dtype=object)
    out[:] = labels
    return out, _Kind(False, 0 if arr.ndim == 1 else rows.shape[1])


def _call(
    sampler: Sampler, x: Any, size: int, seed: np.random.SeedSequence
) -> tuple[np.ndarray, _Kind]:
    """``size`` outputs of ``sampler`` on ``x`` from a generator seeded by ``seed``, and their
    kind."""
    try:
        raw = sampler(x, size, np.random.default_rng(seed))
    except Exception as exc:  # noqa: BLE001 - any failure in the user's code is reported with its input
        raise ValidationError(
            "sampler", f"raised {type(exc).__name__}: {exc} (on input {show(x)})"
        ) from exc
    return _outputs(raw, x, size)


def _draw(
    sampler: Sampler, x: Any, size: int, seed: np.random.SeedSequence, kind: _Kind
) -> np.ndarray:
    """As :func:`_call`, checked against ``kind`` (the kind of the first input's outputs)."""
    out, got = _call(sampler, x, size, seed)
    if got != kind:
        raise ValidationError(
            "sampler",
            f"must return outputs of one kind on every input: {got.text()} on "
            f"input {show(x)}, {kind.text()} on the first input",
        )
    return out


def _child(root: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """The seed sequence ``root.spawn(...)[keys[0]].spawn(...)[keys[1]]...``, computed directly
    (spawning is stateful; this is not, so a chunk's seed depends only on its keys)."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + keys)


def _chunk_rows(kind: _Kind) -> int:
    return max(1, min(2**20, CHUNK_ENTRIES // max(kind.width, 1)))


def _draw_many(
    sampler: Sampler, x: Any, size: int, seed: np.random.SeedSequence, kind: _Kind
) -> np.ndarray:
    """``size`` outputs drawn in chunks, chunk ``c`` seeded by ``_child(seed, c)``."""
    rows = _chunk_rows(kind)
    parts = [
        _draw(sampler, x, min(rows, size - start), _child(seed, c), kind)
        for c, start in enumerate(range(0, size, rows))
    ]
    return np.concatenate(parts)


# --- events
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Coordinates:
    """Per-coordinate features of numeric rows: each coordinate's repeated values (atoms, sorted)
    and the interior edges of quantile bins of its other values, with a centre and scale for the raw
    value."""

    atoms: tuple[np.ndarray, ...]
    edges: tuple[np.ndarray, ...]
    centre: np.ndarray
    scale: np.ndarray
    #: ``(columns, shift, unmix)``: the coordinates are ``(y[:, columns] - shift) @ unmix``
    #: (:meth:`decorrelated`), not the outputs ``y`` themselves.
    linear: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def finite(cls, uniques: list[tuple[np.ndarray, np.ndarray]]) -> _Coordinates | None:
        """Every value an atom, if each coordinate takes at most :data:`FEW_VALUES` values
        (``uniques``: each coordinate's distinct values and their counts, :func:`_uniques`); else
        None."""
        if any(values.size > FEW_VALUES for values, _ in uniques):
            return None
        d = len(uniques)
        return cls(
            tuple(values for values, _ in uniques),
            tuple(np.empty(0) for _ in uniques),
            np.zeros(d),
            np.ones(d),
        )

    @classmethod
    def fit(
        cls, pooled: np.ndarray, uniques: list[tuple[np.ndarray, np.ndarray]], bins: tuple[int, ...]
    ) -> tuple[_Coordinates, ...]:
        """One set of coordinates per entry of ``bins``, all with the same atoms (one tuple, so that
        :class:`_Search` matches them once): the values repeated at least 3 times (at most
        :data:`ATOMS`, the most frequent); bins: that many pooled quantile bins of the other finite
        values."""
        atom_list: list[np.ndarray] = []
        edge_lists: list[list[np.ndarray]] = [[] for _ in bins]
        centre, scale = np.zeros(pooled.shape[1]), np.ones(pooled.shape[1])
        for j, (column, (values, counts)) in enumerate(zip(pooled.T, uniques)):
            repeated = values[counts >= 3]
            if repeated.size > ATOMS:
                repeated = np.sort(values[np.argsort(-counts, kind="stable")[:ATOMS]])
            atom_list.append(repeated)
            rest = column[~np.isin(column, repeated)]
            rest = rest[np.isfinite(rest)]
            for edges, b in zip(edge_lists, bins):
                edges.append(
                    np.unique(np.quantile(rest, np.linspace(0, 1, b + 1)[1:-1]))
                    if rest.size and b > 1
                    else np.empty(0)
                )
            if rest.size:
                q25, q50, q75 = np.quantile(rest, [0.25, 0.5, 0.75])
                centre[j], scale[j] = q50, (q75 - q25) / 1.349 or float(np.std(rest)) or 1.0
        atoms = tuple(atom_list)
        return tuple(cls(atoms, tuple(edges), centre, scale) for edges in edge_lists)

    @classmethod
    def decorrelated(
        cls, coarse: _Coordinates, parts: tuple[np.ndarray, np.ndarray], bins: int
    ) -> _Coordinates | None:
        """Coordinates of the outputs' continuous columns (those without repeated values in
        ``coarse``) decorrelated: ``z = (y - shift) @ inv(L).T`` where ``L L^T`` is the within-input
        covariance of those columns on ``parts`` (the rows drawn under each input, centred on their
        own means, so that the difference of the inputs does not count as correlation), with
        ``bins`` quantile bins per ``z``.  When the outputs are a linear map of independent noises
        with a lower-triangular Cholesky factor (prefix sums of noisy answers, ``y = L (x +
        noise)``), ``z`` recovers the independent noisy answers up to scale, where a sum of
        per-coordinate terms is the log-likelihood ratio.  None with fewer than two such columns, no
        correlation above 0.1 between them (the outputs' own coordinates serve), non-finite values
        or a singular covariance."""
        columns = np.flatnonzero([a.size == 0 for a in coarse.atoms])
        if columns.size < 2:
            return None
        ys = [part[:, columns] for part in parts]
        if not all(np.isfinite(y).all() for y in ys):
            return None
        cov = sum(np.cov(y, rowvar=False) for y in ys) / len(ys)
        sd = np.sqrt(np.diag(cov))
        if not (sd > 0).all() or np.abs(cov / np.outer(sd, sd) - np.eye(columns.size)).max() <= 0.1:
            return None
        try:
            unmix = np.linalg.inv(np.linalg.cholesky(cov)).T
        except np.linalg.LinAlgError:
            return None
        linear = (columns, np.mean([y.mean(axis=0) for y in ys], axis=0), unmix)
        z = cls._mixed(linear, np.concatenate(parts))
        (fitted,) = cls.fit(
            z, [np.unique(column, return_counts=True) for column in z.T], bins=(bins,)
        )
        return replace(fitted, linear=linear)

    @staticmethod
    def _mixed(linear: tuple[np.ndarray, np.ndarray, np.ndarray], y: np.ndarray) -> np.ndarray:
        columns, shift, unmix = linear
        z = (y[:, columns] - shift) @ unmix
        z[~np.isfinite(z)] = 0.0  # an infinite output (never in the fit) maps to the centre
        return z

    def view(self, y: np.ndarray) -> np.ndarray:
        """The values these coordinates describe: the outputs ``y`` themselves, or their
        decorrelated columns."""
        return y if self.linear is None else self._mixed(self.linear, y)

    @property
    def sizes(self) -> np.ndarray:
        """Categories per coordinate: its atoms, then its bins (at most ``FEW_VALUES + 1`` or
        ``ATOMS + 17``: an int8 holds a category)."""
        return np.array(
            [a.size + e.size + 1 for a, e in zip(self.atoms, self.edges)], dtype=np.int64
        )

    def matches(self, columns: np.ndarray) -> np.ndarray:
        """``(d, n)`` int8: the index of each value's atom in its coordinate, -1 for none
        (``columns``: the outputs transposed, ``(d, n)``, each row contiguous)."""
        out = np.full(columns.shape, -1, dtype=np.int8)
        for atoms, column, row in zip(self.atoms, columns, out):
            if atoms.size:
                at = np.searchsorted(atoms, column)
                np.minimum(at, atoms.size - 1, out=at)
                np.copyto(row, at, where=atoms[at] == column, casting="unsafe")
        return out

    def binned(self, columns: np.ndarray, matched: np.ndarray) -> np.ndarray:
        """``(d, n)`` int8 categories of ``columns`` given their atoms ``matched``
        (:meth:`matches`)."""
        out = np.empty(columns.shape, dtype=np.int8)
        for atoms, edges, column, match, row in zip(self.atoms, self.edges, columns, matched, out):
            if edges.size:
                np.add(
                    np.searchsorted(edges, column, side="right"),
                    atoms.size,
                    out=row,
                    casting="unsafe",
                )
            else:
                row.fill(atoms.size)
            if atoms.size:
                np.copyto(row, match, where=match >= 0)
        return out

    def categories(self, y: np.ndarray) -> np.ndarray:
        """``(n, d)`` category of each coordinate: the index of its atom, else atoms + its bin."""
        columns = np.ascontiguousarray(self.view(y).T)  # one contiguous pass per coordinate
        return self.binned(columns, self.matches(columns)).T

    def raw(self, y: np.ndarray, categories: np.ndarray) -> np.ndarray:
        """The standardised value (clipped to +-20), 0 at atoms."""
        z = np.clip((self.view(y) - self.centre) / self.scale, -20.0, 20.0)
        return np.where(categories < np.array([a.size for a in self.atoms]), 0.0, z)

    def cell_keys(self, y: np.ndarray) -> np.ndarray:
        """One key per row for the cell of the grid it falls in (an int64, or bytes when the grid is
        huge)."""
        return self.keys(self.categories(y))

    def keys(self, cats: np.ndarray) -> np.ndarray:
        """:meth:`cell_keys` from the rows' categories ``cats`` (``(n, d)``)."""
        sizes = self.sizes
        if float(np.prod(sizes.astype(float))) < 2.0**62:
            radix = np.concatenate([[1], np.cumprod(sizes[:-1])]).astype(np.int64)
            keys, term = (
                np.zeros(cats.shape[0], dtype=np.int64),
                np.empty(cats.shape[0], dtype=np.int64),
            )
            for column, r in zip(cats.T, radix):  # a column of the (d, n) categories is contiguous
                np.multiply(column, r, out=term)
                keys += term
            return keys
        return _row_keys(cats.astype(np.float64))

    def free(self, keys: np.ndarray) -> np.ndarray:
        """Whether the cell of each grid key leaves some coordinate free (shown "*" or "any" by
        :meth:`cell_text`: the other-values category of a coordinate without bins); never for byte
        keys."""
        out = np.zeros(keys.shape, dtype=bool)
        if keys.dtype.kind != "i":
            return out
        rest = keys.copy()
        for atoms, edges, size in zip(self.atoms, self.edges, self.sizes):
            if edges.size == 0:
                out |= rest % size == atoms.size
            rest //= size
        return out

    def cell_text(self, key: Any) -> str:
        """The cell of grid key ``key`` in words: per coordinate its value, its bin, or "*"
        (any)."""
        if not isinstance(key, (int, np.integer)):
            return "a cell"
        parts, rest = [], int(key)
        for atoms, edges, size in zip(self.atoms, self.edges, self.sizes):
            c = rest % int(size)
            rest //= int(size)
            if c < atoms.size:
                parts.append(f"{atoms[c]:.6g}")
            elif edges.size == 0:
                parts.append("*" if atoms.size else "any")
            else:
                b = c - atoms.size
                parts.append(
                    _bin_text(
                        edges[b - 1] if b > 0 else -np.inf, edges[b] if b < edges.size else np.inf
                    )
                )
        return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"

    def describe(self) -> str:
        name = "x" if self.linear is None else "z"
        shown = [
            f"{name}{j}: {a.size} repeated values, {e.size + 1} bins"
            for j, (a, e) in enumerate(zip(self.atoms, self.edges))
        ]
        text = "; ".join(shown[:4]) + ("; ..." if len(shown) > 4 else "")
        if self.linear is not None:
            text += f"; z = the outputs' columns {self.linear[0].tolist()} decorrelated"
        return text


def _bin_text(low: float, high: float) -> str:
    """A bin ``low <= y < high`` of :meth:`_Coordinates.categories` (repeated values excluded)."""
    return f"{'(' if low == -np.inf else '['}{low:.4g}, {high:.4g})"


def _row_keys(y: np.ndarray) -> np.ndarray:
    """One hashable, sortable key per numeric row (its bytes)."""
    y = np.ascontiguousarray(y)
    return y.view(np.dtype((np.void, y.dtype.itemsize * y.shape[1]))).ravel()


def _lookup(uniq: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The position of each of ``keys`` among the sorted keys ``uniq`` and whether it is there."""
    at = np.minimum(np.searchsorted(uniq, keys), max(uniq.size - 1, 0))
    inside = uniq[at] == keys if uniq.size else np.zeros(keys.shape, dtype=bool)
    return at, inside


def _tally(uniq: np.ndarray, keys: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """How many of ``keys`` (or their total ``weights``) equal each of the sorted keys ``uniq``
    (keys not among ``uniq`` are not counted)."""
    at, inside = _lookup(uniq, keys)
    counted = None if weights is None else weights[inside]
    return np.bincount(at[inside], counted, minlength=uniq.size).astype(np.int64)


@dataclass(frozen=True)
class _Interval:
    """Scalar outputs in ``[low, high]``."""

    low: float
    high: float

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return (y[:, 0] >= self.low) & (y[:, 0] <= self.high)

    def describe(self) -> str:
        if self.low == -np.inf:
            return f"output <= {self.high:.6g}"
        if self.high == np.inf:
            return f"output >= {self.low:.6g}"
        return f"output in [{self.low:.6g}, {self.high:.6g}]"


@dataclass(frozen=True)
class _Cells:
    """Numeric rows whose cell (``coordinates.cell_keys``) is among ``keys`` (sorted)."""

    coordinates: _Coordinates
    keys: np.ndarray
    finite: bool

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return np.isin(self.coordinates.cell_keys(y), self.keys)

    def describe(self) -> str:
        shown = ", ".join(self.coordinates.cell_text(k) for k in self.keys[:4])
        more = ", ..." if self.keys.size > 4 else ""
        what = "outcomes" if self.finite else "cells"
        return f"output in {{{shown}{more}}} ({self.keys.size} {what})"


@dataclass(frozen=True)
class _Labels:
    """Label outputs among ``outcomes``."""

    outcomes: frozenset

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return np.fromiter((o in self.outcomes for o in y), dtype=bool, count=y.size)

    def describe(self) -> str:
        shown = sorted(show(o, 40) for o in self.outcomes)
        return (
            f"output in {{{', '.join(shown[:6])}{', ...' if len(shown) > 6 else ''}}} "
            f"({len(shown)} outcomes)"
        )


@dataclass(frozen=True)
class _Score:
    """An additive score ``b + sum_j w[offset_j + category_j(y)] + sum_j v_j raw_j(y)`` of numeric
    rows."""

    coordinates: _Coordinates
    weights: np.ndarray
    slopes: np.ndarray
    name: str

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.values(y, self.coordinates.categories(y))

    def values(self, y: np.ndarray, cats: np.ndarray) -> np.ndarray:
        """The scores of rows ``y`` whose categories are ``cats`` (the raw term skipped when no
        slope is set)."""
        offsets = np.concatenate([[0], np.cumsum(self.coordinates.sizes)[:-1]])
        s = self.weights[cats + offsets].sum(axis=1)
        return s + self.coordinates.raw(y, cats) @ self.slopes if self.slopes.any() else s + 0.0


def _block_keys(cats: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """One int64 key per row for its categories ``cats`` (``(n, k)``, each column below its
    ``sizes``): the mixed-radix number where it fits in 62 bits, else a fixed multiplicative hash (a
    collision merges two cells: the event stays a fixed function of the output)."""
    if float(np.prod(sizes.astype(float))) < 2.0**62:
        radix = np.concatenate([[1], np.cumprod(sizes[:-1])]).astype(np.int64)
    else:
        radix = (
            np.arange(1, sizes.size + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        ).view(np.int64) | 1
    with np.errstate(over="ignore"):
        return (cats.astype(np.int64) * radix).sum(axis=1)


@dataclass(frozen=True)
class _BlockScore:
    """A sum over groups (blocks) of coordinates of a looked-up log-likelihood ratio of each block's
    cell: ``sum_b llr_b[cell_b(y)]`` (``fallback`` for a cell not seen when the table was built).
    When the blocks are independent under each input, the likelihood ratio of the output is the
    product of the blocks' ratios, so this is an estimate of the log-likelihood ratio of the whole
    output (Neyman & Pearson 1933: its upper sets are the most powerful events)."""

    coordinates: _Coordinates
    blocks: tuple[np.ndarray, ...]
    keys: tuple[np.ndarray, ...]
    llr: tuple[np.ndarray, ...]
    fallback: tuple[float, ...]
    name: str = "block log-likelihood-ratio"

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.values(y, self.coordinates.categories(y))

    def values(self, y: np.ndarray, cats: np.ndarray) -> np.ndarray:
        """The scores of rows whose categories are ``cats`` (``y`` unused: the cells say
        everything)."""
        sizes = self.coordinates.sizes
        total = np.zeros(cats.shape[0])
        for block, keys, llr, fallback in zip(self.blocks, self.keys, self.llr, self.fallback):
            key = _block_keys(cats[:, block], sizes[block])
            at = np.minimum(np.searchsorted(keys, key), keys.size - 1)
            total += np.where(keys[at] == key, llr[at], fallback)
        return total

    def describe(self) -> str:
        shown = ", ".join("{" + ", ".join(map(str, b.tolist())) + "}" for b in self.blocks[:4])
        return f"blocks of coordinates {shown}{', ...' if len(self.blocks) > 4 else ''}"


@dataclass(frozen=True)
class _Threshold:
    """Numeric rows whose score is ``>= threshold`` (``upper``) or ``<= threshold``."""

    score: _Score | _BlockScore
    threshold: float
    upper: bool

    def __call__(self, y: np.ndarray) -> np.ndarray:
        s = self.score(y)
        return s >= self.threshold if self.upper else s <= self.threshold

    def describe(self) -> str:
        coordinates = self.score.coordinates
        if isinstance(self.score, _BlockScore):
            return (
                f"{self.score.name} score {'>=' if self.upper else '<='} {self.threshold:.6g} "
                f"({self.score.describe()}; features {coordinates.describe()})"
            )
        if (
            len(coordinates.atoms) == 1
            and not self.score.slopes.any()
            and coordinates.linear is None
        ):
            # one coordinate, no raw term: the event is a union of its categories, shown as values
            # and intervals
            w = self.score.weights
            inside = w >= self.threshold if self.upper else w <= self.threshold
            atoms, edges = (
                coordinates.atoms[0],
                np.concatenate([[-np.inf], coordinates.edges[0], [np.inf]]),
            )
            shown = [f"{v:.6g}" for v in atoms[inside[: atoms.size]]]
            bins = np.flatnonzero(inside[atoms.size :])
            for run in np.split(bins, np.flatnonzero(np.diff(bins) > 1) + 1) if bins.size else []:
                shown.append(_bin_text(edges[run[0]], edges[run[-1] + 1]))
            more = f", ... ({len(shown)} parts)" if len(shown) > 8 else ""
            return f"output in {' or '.join(shown[:8])}{more}" if shown else "no output"
        return (
            f"{self.score.name} score {'>=' if self.upper else '<='} {self.threshold:.6g} "
            f"(features {coordinates.describe()})"
        )


@dataclass(frozen=True)
class _Within:
    """Numeric rows in the cell ``cell`` whose score passes ``inner``."""

    cell: _Cells
    inner: _Threshold

    def __call__(self, y: np.ndarray) -> np.ndarray:
        inside = self.cell(y)
        out = np.zeros(y.shape[0], dtype=bool)
        out[inside] = self.inner(y[inside])
        return out

    def describe(self) -> str:
        return f"{self.cell.describe()} and {self.inner.describe()}"


Event = _Interval | _Cells | _Labels | _Threshold | _Within


# --- the event search
# -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    """A candidate: the event, whether it bounds ``(x, x')`` (``forward``) or ``(x', x)``, its
    expected certified bound and its counts on the search's selection half."""

    expected: float
    forward: bool
    event: Event
    counts: tuple[int, int]


class _Search:
    """Event search on one pair: ``first`` / ``second`` are the outputs on ``x`` / ``x'``; each is
    split into a building half and a selection half, and every candidate is scored on the selection
    half."""

    def __init__(
        self, first: np.ndarray, second: np.ndarray, samples: int, alpha: float, delta: float
    ):
        h1, h2 = first.shape[0] // 2, second.shape[0] // 2
        self.build = (first[:h1], second[:h2])
        self.select = (first[h1:], second[h2:])
        self.samples, self.alpha, self.delta = samples, alpha, delta
        self.best: _Found | None = None
        self._cats: dict[int, tuple[_Coordinates, list[np.ndarray]]] = {}

    def index(self, coordinates: Iterable[_Coordinates]) -> None:
        """Compute the categories of the four halves under each of ``coordinates`` once (``(d, n)``
        int8, atoms matched once per atoms tuple); the search's families then read them."""
        todo = [c for c in coordinates if id(c) not in self._cats]
        for c in todo:
            self._cats[id(c)] = (c, [])
        for part in (*self.build, *self.select):
            columns = np.ascontiguousarray(part.T)  # one contiguous pass per coordinate
            matched: dict[int, np.ndarray] = {}
            for c in todo:
                if c.linear is not None:
                    mixed = np.ascontiguousarray(c.view(part).T)
                    self._cats[id(c)][1].append(c.binned(mixed, c.matches(mixed)))
                    continue
                if id(c.atoms) not in matched:
                    matched[id(c.atoms)] = c.matches(columns)
                self._cats[id(c)][1].append(c.binned(columns, matched[id(c.atoms)]))

    def categories(
        self, coordinates: _Coordinates, part: int, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``(n, d)`` categories under ``coordinates`` (indexed) of half ``part`` (0, 1: building
        half of ``x``, ``x'``; 2, 3: selection half), of its rows ``rows`` (a mask) if given."""
        cats = self._cats[id(coordinates)][1][part]
        return (cats if rows is None else cats[:, rows]).T

    def scored(
        self, score: _Score | _BlockScore, part: int, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``score`` of half ``part`` (its rows ``rows`` if given), from the indexed categories."""
        y = (*self.build, *self.select)[part]
        return score.values(
            y if rows is None else y[rows], self.categories(score.coordinates, part, rows)
        )

    def offer(
        self,
        counts: tuple[np.ndarray, np.ndarray],
        events: Callable[[int], Event],
        drawn: tuple[int, int] | None = None,
    ) -> None:
        """Candidates with selection counts ``counts`` (under ``x``, under ``x'``) out of ``drawn``
        rows (default: the selection half); ``events(i)`` builds the i-th.  Both orders are
        scored."""
        k1, k2 = (np.asarray(c, float) for c in counts)
        if k1.size == 0:
            return
        n1, n2 = drawn or (self.select[0].shape[0], self.select[1].shape[0])
        for forward, (ka, na, kb, nb) in ((True, (k1, n1, k2, n2)), (False, (k2, n2, k1, n1))):
            rough = expected_bound(
                ka, na, kb, nb, self.samples, self.alpha, self.delta, 2 * k1.size, exact=False
            )
            top = np.argsort(-rough, kind="stable")[:RESCORED]
            value = expected_bound(
                ka[top], na, kb[top], nb, self.samples, self.alpha, self.delta, 2 * k1.size
            )
            i = int(top[np.argmax(value)])
            if self.best is None or value.max() > self.best.expected:
                self.best = _Found(float(value.max()), forward, events(i), (int(ka[i]), int(kb[i])))

    # finite outputs and grids of cells

    def cells(
        self,
        keys_build: tuple[np.ndarray, np.ndarray],
        keys_select: tuple[np.ndarray, np.ndarray],
        event: Callable[[np.ndarray], Event],
    ) -> None:
        """Single outcomes and prefix unions of outcomes ordered by their ratio on the building
        half, in both orders (``event(keys)`` builds the event of a set of outcome keys)."""
        b1, b2 = keys_build
        s1, s2 = keys_select
        uniq, inverse = np.unique(np.concatenate([b1, b2]), return_inverse=True)
        m = uniq.size
        c1 = np.bincount(inverse[: b1.size], minlength=m)
        c2 = np.bincount(inverse[b1.size :], minlength=m)
        ratio = np.log((c1 + 0.5) / (b1.size + 1)) - np.log((c2 + 0.5) / (b2.size + 1))
        self.unions(uniq, ratio, (_tally(uniq, s1), _tally(uniq, s2)), None, event)

    def unions(
        self,
        uniq: np.ndarray,
        ratio: np.ndarray,
        selected: tuple[np.ndarray, np.ndarray],
        selected_rows: tuple[int, int] | None,
        event: Callable[[np.ndarray], Event],
    ) -> None:
        """Single outcomes and prefix unions of the outcomes ``uniq`` (sorted keys) in the order of
        ``ratio`` (their log-likelihood ratio estimated on other rows), in both orders, counted
        ``selected`` times on ``selected_rows`` selection rows of each input (default the selection
        half; ``event(keys)`` builds the event of a set of keys)."""
        d1, d2 = selected
        for order in (np.argsort(-ratio, kind="stable"), np.argsort(ratio, kind="stable")):
            # offer builds its event at once: the lambdas never outlive this iteration
            top = order[:4096]
            self.offer(
                (d1[top], d2[top]),
                lambda i: event(np.sort(uniq[top[i : i + 1]])),
                selected_rows,
            )
            self.offer(
                (np.cumsum(d1[order]), np.cumsum(d2[order])),
                lambda i: event(np.sort(uniq[order[: i + 1]])),
                selected_rows,
            )

    def labels(self) -> None:
        """Label outputs: the cells search over the outcomes, coded as integers."""
        table: dict[Any, int] = {}
        codes = [
            np.fromiter(
                (table.setdefault(o, len(table)) for o in part), dtype=np.int64, count=part.size
            )
            for part in (*self.build, *self.select)
        ]
        outcomes = list(table)
        self.cells(
            (codes[0], codes[1]),
            (codes[2], codes[3]),
            lambda keys: _Labels(frozenset(outcomes[int(k)] for k in keys)),
        )

    def grid(self, coordinates: _Coordinates, finite: bool) -> None:
        """Numeric rows: the cells search over the cells of ``coordinates``' grid."""
        keys = [coordinates.keys(self.categories(coordinates, part)) for part in range(4)]
        self.cells((keys[0], keys[1]), (keys[2], keys[3]), lambda k: _Cells(coordinates, k, finite))

    # scalars

    def intervals(self, cuts: int = 96) -> None:
        """Scalar outputs: ``[a, b]`` for cut points ``a <= b`` at pooled quantiles of the building
        half, tails included (``a = -inf`` or ``b = inf``)."""
        pooled = np.concatenate([self.build[0][:, 0], self.build[1][:, 0]])
        levels = np.unique(
            np.concatenate(
                [
                    np.linspace(0, 1, cuts),
                    np.geomspace(1e-5, 0.02, 12),
                    1 - np.geomspace(1e-5, 0.02, 12),
                ]
            )
        )
        points = np.unique(np.quantile(pooled, levels, method="inverted_cdf"))
        lows = np.concatenate([[-np.inf], points])
        highs = np.concatenate([points, [np.inf]])
        counts = []
        for part in self.select:
            s = np.sort(part[:, 0])
            below = np.searchsorted(s, lows, side="left")
            upto = np.searchsorted(s, highs, side="right")
            counts.append(np.maximum(upto[None, :] - below[:, None], 0).ravel())
        n = highs.size
        self.offer(
            (counts[0], counts[1]), lambda i: _Interval(float(lows[i // n]), float(highs[i % n]))
        )

    # learned scores

    def thresholds(
        self,
        score: _Score | _BlockScore,
        within: _Cells | None = None,
        rows: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """Both tails of ``score`` (on the rows in the cell ``within``, given by the masks ``rows``
        of the selection half, if given), at thresholds from pooled quantiles of the selection
        half's scores."""
        s1, s2 = (
            np.sort(self.scored(score, part, None if rows is None else rows[part - 2]))
            for part in (2, 3)
        )
        pooled = np.concatenate([s1, s2])
        if pooled.size == 0:
            return
        levels = np.unique(
            np.concatenate(
                [
                    np.linspace(0, 1, 201),
                    np.geomspace(1e-6, 0.05, 40),
                    1 - np.geomspace(1e-6, 0.05, 40),
                ]
            )
        )
        cuts = np.unique(np.quantile(pooled, levels, method="inverted_cdf"))
        upper = (
            s1.size - np.searchsorted(s1, cuts, side="left"),
            s2.size - np.searchsorted(s2, cuts, side="left"),
        )
        lower = (np.searchsorted(s1, cuts, side="right"), np.searchsorted(s2, cuts, side="right"))
        for tail, counts in ((True, upper), (False, lower)):
            if within is None:
                self.offer(counts, lambda i: _Threshold(score, float(cuts[i]), tail))
            else:
                self.offer(
                    counts, lambda i: _Within(within, _Threshold(score, float(cuts[i]), tail))
                )

    def scores(
        self,
        coordinates: _Coordinates,
        logistic: bool,
        within: _Cells | None = None,
        rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """The additive log-likelihood-ratio score of ``coordinates``' categories and, if
        ``logistic``, an additive logistic regression on them and the raw values, fitted on the
        building half (on its rows in the cell ``within`` if given: ``rows`` are the cell's masks of
        the building and selection halves of each input)."""
        selected = None if rows is None else (rows[2], rows[3])
        c1, c2 = (
            self.categories(coordinates, part, None if rows is None else rows[part])
            for part in (0, 1)
        )
        n1, n2 = c1.shape[0], c2.shape[0]
        sizes = coordinates.sizes
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        width = int(sizes.sum())
        m1 = np.bincount((c1 + offsets).ravel(), minlength=width)
        m2 = np.bincount((c2 + offsets).ravel(), minlength=width)
        llr = np.log((m1 + 0.5) / (n1 + 1)) - np.log((m2 + 0.5) / (n2 + 1))
        d = c1.shape[1]
        self.thresholds(
            _Score(coordinates, llr, np.zeros(d), "additive log-likelihood-ratio"), within, selected
        )
        if logistic:
            y = np.concatenate(
                [
                    (part if rows is None else part[mask])[:FIT_ROWS]
                    for part, mask in zip(self.build, (None, None) if rows is None else rows[:2])
                ]
            )
            cats = np.concatenate([c1[:FIT_ROWS].T, c2[:FIT_ROWS].T], axis=1).T
            weights, slopes = _fit_logistic(coordinates, y, cats, min(n1, FIT_ROWS), llr / d)
            self.thresholds(_Score(coordinates, weights, slopes, "logistic"), within, selected)

    def groups(self, grouping: _Coordinates) -> list[np.ndarray]:
        """Groups of coordinates independent of each other under each input:
        :func:`_independent_blocks` on ``grouping``'s categories of the first :data:`BLOCK_ROWS`
        building rows of each input."""
        parts = [self.categories(grouping, part)[:BLOCK_ROWS] for part in (0, 1)]
        return _independent_blocks(parts, grouping.sizes)

    def blocks(self, groups: list[np.ndarray], grids: Iterable[_Coordinates]) -> None:
        """When the coordinates fall into several ``groups`` (:meth:`groups`), not all single
        coordinates, thresholds on the sum over the groups of each group's cell log-likelihood
        ratio, estimated on the building half with each of ``grids``: e.g. two mechanisms run side
        by side, each with its joint law."""
        if len(groups) < 2 or max(g.size for g in groups) < 2:
            return
        for grid in grids:
            c1, c2 = self.categories(grid, 0), self.categories(grid, 1)
            keys, llrs, fallbacks = [], [], []
            for block in groups:
                k1, k2 = (_block_keys(c[:, block], grid.sizes[block]) for c in (c1, c2))
                uniq, inverse = np.unique(np.concatenate([k1, k2]), return_inverse=True)
                m1 = np.bincount(inverse[: k1.size], minlength=uniq.size)
                m2 = np.bincount(inverse[k1.size :], minlength=uniq.size)
                keys.append(uniq)
                llrs.append(np.log((m1 + 0.5) / (k1.size + 1)) - np.log((m2 + 0.5) / (k2.size + 1)))
                fallbacks.append(math.log((k2.size + 1) / (k1.size + 1)))
            self.thresholds(
                _BlockScore(grid, tuple(groups), tuple(keys), tuple(llrs), tuple(fallbacks))
            )

    def patterns(self, patterns: _Coordinates, features: _Coordinates, top: int = PATTERNS) -> None:
        """Within each of the ``top`` most frequent cells of ``patterns`` (each coordinate: one of
        its repeated values, or any other value) that leave some coordinate free, thresholds on an
        additive score of ``features`` fitted on that cell's rows: e.g. "the first four answers are
        'below' and the score of the fifth answer is high"."""
        keys = [patterns.keys(self.categories(patterns, part)) for part in range(4)]
        cells, counts = np.unique(np.concatenate(keys[:2]), return_counts=True)
        ranked = cells[np.argsort(-counts, kind="stable")]
        for key in ranked[patterns.free(ranked)][:top]:
            b1, b2, s1, s2 = (k == key for k in keys)
            self.scores(
                features,
                logistic=False,
                within=_Cells(patterns, np.array([key]), False),
                rows=(b1, b2, s1, s2),
            )


def _independent_blocks(
    parts: list[np.ndarray], sizes: np.ndarray, level: float = 1e-6
) -> list[np.ndarray]:
    """The connected components of the graph joining two coordinates when a G-test of independence
    (Sokal & Rohlf 1981; ``G = 2 sum O ln(O / E)``, asymptotically chi-square with ``(r - 1)(c -
    1)`` degrees of freedom under independence) rejects at ``level``, the statistics and degrees of
    freedom of the inputs' samples summed (``parts``: ``(n, d)`` categories under each input, each
    below ``sizes``). Testing within each input keeps the difference between the inputs from showing
    as a dependence."""
    d = sizes.size
    width = int(sizes.max())
    stat = np.zeros((d, d))
    dof = np.zeros((d, d))
    for cats in parts:
        n = cats.shape[0]
        if n == 0:
            continue
        shifted = cats.astype(np.int64) + np.arange(d) * width * width
        for i in range(d):  # one pass per coordinate: all its pairs at once
            joint = (
                np.bincount(
                    (shifted + cats[:, i : i + 1].astype(np.int64) * width).ravel(),
                    minlength=d * width * width,
                )
                .reshape(d, width, width)
                .astype(float)
            )
            rows, cols = joint.sum(axis=2), joint.sum(axis=1)  # (d, width): coordinate j's and i's
            expected = rows[:, :, None] * cols[:, None, :] / n
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(joint > 0, joint * np.log(joint / expected), 0.0)
            stat[i] += 2 * terms.sum(axis=(1, 2))
            dof[i] += np.maximum((rows > 0).sum(axis=1) - 1, 0) * np.maximum(
                (cols > 0).sum(axis=1) - 1, 0
            )
    with np.errstate(invalid="ignore"):
        linked = (dof > 0) & (stat > stats.chi2.isf(level, np.maximum(dof, 1)))
    count, label = csgraph.connected_components(
        sparse.csr_matrix(linked | linked.T), directed=False
    )
    return [np.flatnonzero(label == k) for k in range(count)]


def _fit_logistic(
    coordinates: _Coordinates,
    y: np.ndarray,
    cats: np.ndarray,
    drawn: int,
    start: np.ndarray,
    penalty: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray]:
    """Additive logistic regression of "drawn under x" (1, the first ``drawn`` rows of ``y``)
    against "under x'" (0, the others) on category one-hots (``cats``: the categories of ``y``) and
    raw values, ridge-penalised, by L-BFGS from the category weights ``start``; returns the category
    weights (the intercept folded into the first coordinate's) and the slopes of the raw values.
    The products over rows are numpy's own loops (``einsum``), not BLAS: a threaded BLAS splits a
    sum over rows by its thread count, so the fit, hence the event and the bound, would depend on
    the machine (and BLAS threads contending with the worker processes made the fit several times
    slower)."""
    label = np.concatenate([np.ones(drawn), np.zeros(y.shape[0] - drawn)])
    raw = coordinates.raw(y, cats)
    sizes = coordinates.sizes
    index = (cats + np.concatenate([[0], np.cumsum(sizes)[:-1]])).ravel()
    width, d, n = int(sizes.sum()), y.shape[1], y.shape[0]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, v, b = theta[:width], theta[width : width + d], theta[-1]
        s = w[index].reshape(n, d).sum(axis=1) + np.einsum("ij,j->i", raw, v) + b
        value = np.mean(np.logaddexp(0.0, s) - label * s) + penalty / 2 * (w @ w + v @ v)
        r = (special.expit(s) - label) / n
        grad = np.concatenate(
            [
                np.bincount(index, np.repeat(r, d), minlength=width) + penalty * w,
                np.einsum("ij,i->j", raw, r) + penalty * v,
                [r.sum()],
            ]
        )
        return float(value), grad

    theta = optimize.minimize(
        loss,
        np.concatenate([start, np.zeros(d + 1)]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 60},
    ).x
    weights = theta[:width].copy()
    weights[: sizes[0]] += theta[-1]
    return weights, theta[width : width + d]


def _merged(
    held: tuple[np.ndarray, np.ndarray, np.ndarray], keys: np.ndarray, parts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``held`` (distinct sorted keys, their counts, and each key's block keys ``(m, blocks)``) with
    the rows ``keys`` (and their block keys ``parts``) counted in."""
    every = np.concatenate([held[0], keys])
    uniq, first, inverse = np.unique(every, return_index=True, return_inverse=True)
    weights = np.concatenate([held[1], np.ones(keys.size, dtype=np.int64)])
    counts = np.bincount(inverse, weights, minlength=uniq.size).astype(np.int64)
    return uniq, counts, np.concatenate([held[2], parts])[first]


def _streamed_cells(
    sampler: Sampler,
    x: Any,
    seed: np.random.SeedSequence,
    kind: _Kind,
    chunks: range,
    size: int,
    grids: list[_Coordinates],
    groups: list[np.ndarray],
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """For each of ``grids``, the distinct cells of ``size`` outputs on ``x`` drawn in chunks
    ``chunks`` (chunk ``c`` seeded by ``_child(seed, c)``, one chunk in memory at a time): their
    keys (sorted), their counts, and the key of each one's cell of each group of coordinates in
    ``groups`` (``(cells, groups)``, :func:`_block_keys`); None for a grid with more than
    :data:`STREAM_CELLS` distinct cells."""
    rows = _chunk_rows(kind)
    empty = np.empty(0, dtype=np.int64)
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [
        (empty, empty, np.empty((0, len(groups)), dtype=np.int64)) for _ in grids
    ]
    for c, start in zip(chunks, range(0, size, rows)):
        if all(held is None for held in out):
            break
        y = _draw(sampler, x, min(rows, size - start), _child(seed, c), kind)
        columns = np.ascontiguousarray(y.T)
        matched: dict[int, np.ndarray] = {}  # grids sharing their atoms match them once
        for j, grid in enumerate(grids):
            held = out[j]
            if held is None:
                continue
            if id(grid.atoms) not in matched:
                matched[id(grid.atoms)] = grid.matches(columns)
            cats = grid.binned(columns, matched[id(grid.atoms)]).T
            parts = np.stack([_block_keys(cats[:, g], grid.sizes[g]) for g in groups], axis=1)
            keys = grid.keys(cats)
            if not held[0].size:
                held = (keys[:0], empty, held[2])
            merged = _merged(held, keys, parts)
            out[j] = merged if merged[0].size <= STREAM_CELLS else None
    return out


def _stream_search(
    search: _Search,
    grids: list[tuple[_Coordinates, bool]],
    groups: list[np.ndarray],
    sampler: Sampler,
    pair: tuple[Any, Any],
    seeds: tuple[np.random.SeedSequence, ...],
    kind: _Kind,
    first_chunk: int,
    size: int,
) -> None:
    """Unions of the cells of each of ``grids`` (``(coordinates, finite)``) in the order of their
    estimated log-likelihood ratio, on ``size`` further outputs of each input, streamed.  The first
    half (chunks from ``first_chunk`` on) estimates the ratio: per cell, or, when ``groups`` (groups
    of coordinates independent of each other under each input, :func:`_independent_blocks`) are
    several, as the sum over the groups of each group's cell log-ratio (the ratio of a product law,
    each factor estimated on many more rows than the thin cells of the whole output); the second
    half counts the cells again to score the unions (:meth:`_Search.unions`), so the event is chosen
    on rows that did not order it.  Memory holds one chunk and the cell counts, whatever
    ``size``."""
    rows = _chunk_rows(kind)
    half = size // 2
    later = first_chunk - (-half // rows)
    coordinates = [grid for grid, _ in grids]
    built, selected = (
        [
            _streamed_cells(sampler, x, seed, kind, range(start, 2**62), n, coordinates, groups)
            for x, seed in zip(pair, seeds)
        ]
        for start, n in ((first_chunk, half), (later, size - half))
    )
    for j, (grid, finite) in enumerate(grids):
        b1, b2, c1, c2 = built[0][j], built[1][j], selected[0][j], selected[1][j]
        if b1 is None or b2 is None or c1 is None or c2 is None:
            continue  # too many cells to count
        (_, m1, p1), (_, m2, p2), (s1, d1, q1), (s2, d2, q2) = b1, b2, c1, c2
        uniq, first = np.unique(np.concatenate([s1, s2]), return_index=True)
        blocks = np.concatenate([q1, q2])[first]
        ratio = np.zeros(uniq.size)
        for g in range(len(groups)):
            cells = np.union1d(p1[:, g], p2[:, g])
            f1, f2 = _tally(cells, p1[:, g], m1), _tally(cells, p2[:, g], m2)
            llr = np.log((f1 + 0.5) / (half + 1)) - np.log((f2 + 0.5) / (half + 1))
            at, inside = _lookup(cells, blocks[:, g])
            ratio[inside] += llr[at[inside]]  # a cell of a group never built: log-ratio 0
        search.unions(
            uniq,
            ratio,
            (_tally(uniq, s1, d1), _tally(uniq, s2, d2)),
            (size - half, size - half),
            lambda keys: _Cells(grid, keys, finite),
        )


def _search_pair(
    first: np.ndarray,
    second: np.ndarray,
    kind: _Kind,
    samples: int,
    alpha: float,
    delta: float,
    thorough: bool,
    stream: Callable[[_Search, list[tuple[_Coordinates, bool]], list[np.ndarray]], None]
    | None = None,
) -> _Found:
    """The best event for one pair (both orders), by expected certified bound; ``thorough`` adds the
    patterns and the logistic score (the screening skips them); ``stream(search, grids, groups)``,
    if given, adds the unions of the grids' cells on streamed outputs (:func:`_stream_search`)."""
    search = _Search(first, second, samples, alpha, delta)
    if not kind.numeric:
        search.labels()
    else:
        pooled = np.concatenate([part[:FIT_ROWS] for part in search.build])  # enough to place cuts
        uniques = [np.unique(column, return_counts=True) for column in pooled.T]
        exact = _Coordinates.finite(uniques)
        coarse, medium, features = _Coordinates.fit(pooled, uniques, bins=(1, 3, 16))
        grids: tuple[_Coordinates, ...] = (coarse, medium) if kind.width > 1 else ()
        search.index([c for c in (exact, *grids, features) if c is not None])
        if exact is not None:
            search.grid(exact, finite=True)
        if kind.width == 1:
            search.intervals()
        else:
            for grid in grids:
                search.grid(grid, finite=False)
            if thorough and any(a.size for a in coarse.atoms):
                search.patterns(coarse, features)
        logistic = (
            thorough
            and kind.width > 1
            and min(part.shape[0] for part in search.build) >= MIN_FIT_ROWS
        )
        search.scores(features, logistic=logistic)
        groups = [np.arange(1)]
        if kind.width > 1:
            parts = (search.build[0][:FIT_ROWS], search.build[1][:FIT_ROWS])
            mixed = _Coordinates.decorrelated(coarse, parts, bins=16)
            if mixed is not None:
                search.index([mixed])
                search.scores(mixed, logistic=logistic)
            groups = search.groups(medium)
            search.blocks(groups, grids)
        if kind.width == 1 and stream is not None:
            grids = _Coordinates.fit(pooled, uniques, bins=(SCALAR_STREAM_BINS,))
        streamed = ([(exact, True)] if exact is not None else []) + [(g, False) for g in grids]
        if stream is not None and streamed:
            stream(search, streamed, groups)
    assert search.best is not None  # every family offers at least one candidate
    return search.best


# --- certification
# --------------------------------------------------------------------------------------


def _count_chunk(
    sampler: Sampler, x: Any, size: int, seed: np.random.SeedSequence, kind: _Kind, event: Event
) -> int:
    """How many of ``size`` fresh outputs on ``x`` (seeded by ``seed``) fall in ``event``."""
    return int(np.count_nonzero(event(_draw(sampler, x, size, seed, kind))))


def _search_task(
    sampler: Sampler,
    pair: tuple[Any, Any],
    size: int,
    seeds: tuple[np.random.SeedSequence, ...],
    kind: _Kind,
    samples: int,
    alpha: float,
    delta: float,
    thorough: bool,
    streamed: int = 0,
) -> _Found:
    """:func:`_search_pair` on ``size`` fresh outputs of each input of ``pair`` (input ``i`` seeded
    by ``seeds[i]``), and with ``streamed`` further outputs of each for the streamed cells search
    (the chunks after those of the ``size`` outputs): one unit of work of the screening or the
    search, run wherever."""
    first, second = (_draw_many(sampler, x, size, seed, kind) for x, seed in zip(pair, seeds))
    stream = None
    if streamed > 0:
        stream = partial(
            _stream_search,
            sampler=sampler,
            pair=pair,
            seeds=seeds,
            kind=kind,
            first_chunk=-(-size // _chunk_rows(kind)),
            size=streamed,
        )
    return _search_pair(first, second, kind, samples, alpha, delta, thorough, stream)


def _map(
    executor: Executor | None,
    function: Callable[..., Any],
    tasks: list[tuple],
    draws: list[int],
    bar: Any,
    at_once: int | None = None,
) -> list[Any]:
    """``function(*task)`` for every task, in the order of ``tasks`` whoever runs them and whenever
    they end: serially without an executor, else at most ``at_once`` (default all) submitted at a
    time.  The bar advances by ``draws[j]`` when task ``j`` ends."""
    if executor is None:
        results = []
        for task, size in zip(tasks, draws):
            results.append(function(*task))
            bar.update(size)
        return results
    out: list[Any] = [None] * len(tasks)
    queue = iter(range(len(tasks)))
    pending: dict[Future, int] = {}
    try:
        for j in queue:
            pending[executor.submit(function, *tasks[j])] = j
            if len(pending) == (at_once or len(tasks)):
                break
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                j = pending.pop(future)
                out[j] = future.result()
                bar.update(draws[j])
                following = next(queue, None)
                if following is not None:
                    pending[executor.submit(function, *tasks[following])] = following
    finally:
        for future in pending:
            future.cancel()
    return out


@contextmanager
def _executor(processes: int, dask: Any) -> Iterator[Executor | None]:
    """Local processes, a Dask cluster (a ``distributed.Client`` or a scheduler address), or None
    (serial)."""
    if dask is not None:
        try:
            from distributed import Client
        except ImportError:
            raise ValidationError(
                "dask", "needs the distributed package: pip install distributed"
            ) from None
        if isinstance(dask, Client):
            yield dask.get_executor()
            return
        if not isinstance(dask, str):
            raise ValidationError(
                "dask", f"must be a distributed.Client or a scheduler address, got {show(dask)}"
            )
        try:
            client = Client(dask, timeout="10s", set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            raise ValidationError(
                "dask", f": cannot reach a Dask scheduler at {dask!r} ({exc})"
            ) from None
        try:
            yield client.get_executor()
        finally:
            client.close()
        return
    if processes == 1:
        yield None
        return
    import multiprocessing

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context(method)) as pool:
        yield pool


def _certification_sizes(
    root: np.random.SeedSequence, samples: int, delta: float
) -> tuple[int, int]:
    """Draws per input of the certification: for ``delta = 0`` two independent Poisson(``samples``)
    sizes drawn from ``_child(root, CERTIFY, 2)`` (so the counts are exactly Poisson, see
    :func:`_ratio_bound`; the same seed gives the same sizes whoever draws the chunks), else
    ``samples`` each."""
    if delta > 0:
        return samples, samples
    first, second = np.random.default_rng(_child(root, CERTIFY, 2)).poisson(samples, 2).tolist()
    return first, second


def _certify(
    sampler: Sampler,
    pair: tuple[Any, Any],
    event: Event,
    kind: _Kind,
    sizes: tuple[int, int],
    root: np.random.SeedSequence,
    executor: Executor | None,
    bar: Any,
) -> tuple[int, int]:
    """Counts of ``event`` on ``sizes[i]`` fresh outputs of input ``i`` of ``pair``; chunk ``c`` of
    input ``i`` is seeded by ``_child(root, CERTIFY, i, c)`` whoever runs it."""
    rows = _chunk_rows(kind)
    chunks = [
        (i, min(rows, sizes[i] - start), c)
        for i in (0, 1)
        for c, start in enumerate(range(0, sizes[i], rows))
    ]
    tasks = [
        (sampler, pair[i], size, _child(root, CERTIFY, i, c), kind, event) for i, size, c in chunks
    ]
    counts = _map(executor, _count_chunk, tasks, [size for _, size, _ in chunks], bar)
    return (
        sum(k for (i, _, _), k in zip(chunks, counts) if i == 0),
        sum(k for (i, _, _), k in zip(chunks, counts) if i == 1),
    )


# --- the audit
# ------------------------------------------------------------------------------------------


def _at_once(processes: int, entries: int) -> int:
    """Searches run at once: at most ``processes``, and as many as the memory limit holds at
    ``entries`` (the search's estimate for one) each."""
    return max(1, min(processes, int(MAX_BYTES // max(16 * entries, 1))))


def _streamed_budget(samples: int, held: int, share: int = STREAM_SHARE) -> int:
    """Draws per input of the streamed cells search of a phase whose in-memory search reads
    ``held``: ``samples // share`` when that exceeds ``held``, else 0 (none).  The search's is
    ``_streamed_budget(samples, search_samples)``, the screening's ``_streamed_budget(search's,
    screen_samples)``."""
    streamed = samples // share
    return streamed if streamed > held else 0


def _root_seed(rng: RNGLike) -> np.random.SeedSequence:
    """The root seed sequence: ``rng`` itself, ``SeedSequence(rng)`` for an integer, else drawn from
    ``rng``."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.SeedSequence(integer("rng", rng, low=0))
    return np.random.SeedSequence(as_generator(rng).integers(0, 2**63, size=4).tolist())


def _pairs(neighbours: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    try:
        items = list(neighbours)
    except TypeError:
        raise ValidationError("neighbours", "must be an iterable of pairs (x, x')") from None
    pairs = []
    for pair in items:
        try:
            x, x2 = pair
        except (TypeError, ValueError):
            raise ValidationError(
                "neighbours", f": each neighbour must be a pair (x, x'), got {show(pair)}"
            ) from None
        pairs.append((x, x2))
    if not pairs:
        raise ValidationError("neighbours", "is empty: give at least one pair (x, x')")
    return pairs


def _progress(enabled: bool | None, total: int, long: bool) -> Any:
    from tqdm import tqdm

    disable = (None if long else True) if enabled is None else not enabled
    return tqdm(
        total=total,
        unit="draw",
        unit_scale=True,
        file=sys.stderr,
        disable=disable,
        dynamic_ncols=True,
        desc="black-box audit",
    )


def audit_black_box(
    sampler: Sampler,
    neighbours: Iterable[tuple[Any, Any]],
    *,
    samples: int = 1_000_000,
    search_samples: int | None = None,
    screen_samples: int | None = None,
    stream_samples: int | None = None,
    delta: float = 0.0,
    confidence: float = 0.95,
    epsilon: float | None = None,
    rng: RNGLike = None,
    processes: int = 1,
    dask: Any = None,
    progress: bool | None = None,
    relation: str = "",
) -> PrivacyAudit:
    """A lower bound on the eps of a mechanism that can only be sampled, valid with probability
    ``confidence``, found by searching pairs and events and certified on fresh samples (see the
    module docstring; Ding et al. 2018, Bichsel et al. 2021, Jagielski et al. 2020).

    **Guarantee.** If the mechanism is (eps, delta)-DP on the given pairs, ``Pr[audit.epsilon > eps]
    <= 1 - confidence``, whatever the search chose: one (pair, order, event) is certified, on
    samples drawn after and independently of the search.

    Parameters
    ----------
    sampler : callable
        ``sampler(x, size, rng) -> array`` of ``size`` outputs on input ``x`` drawn with the numpy
        Generator ``rng``: numbers (shape ``(size,)``), numeric vectors of a fixed length (``(size,
        d)``, special codes such as a "halted" value allowed), or hashable labels (strings, ints,
        tuples in an object array; a row of a 2-d label array is one label).  NaN is refused;
        ``+-inf`` is a value.
    neighbours : iterable of pairs
        The candidate neighbouring inputs ``(x, x')``; each is audited in both orders.
    samples : int, default 1,000,000
        Certification draws per input (streamed in chunks: memory does not grow with it); for
        ``delta = 0``, the mean of the Poisson-distributed number of draws per input.
    search_samples : int, optional
        Draws per input for the event search on each of the (at most 3) pairs kept after screening.
        Default ``samples // 4`` within ``[1,000, 1,000,000]``: enough to locate the event and
        estimate its probabilities to a few per cent of the certification's precision, at most a
        quarter of the certification's cost per pair.
    screen_samples : int, optional
        Draws per input for screening each pair (only with several pairs).  Default
        ``min(samples // 10, 100,000)``, at least 1,000.
    stream_samples : int, optional
        Further draws per input, on each kept pair, streamed in chunks (memory does not grow with
        it), for unions of grid cells in the order of their estimated ratio; a tenth of it on each
        screened pair when that exceeds ``screen_samples`` (0: none).  Default ``samples // 10``
        when that exceeds ``search_samples``, else 0: a union of thin cells with a large ratio is
        recognised only on millions of draws, which the certification resolves only at large
        ``samples``.
    delta : float, default 0
        In ``[0, 1)``.  ``0``: the bound is ``ln(pi_L / (1 - pi_L))``, ``pi_L`` the one-sided
        Clopper-Pearson lower bound on ``p / (p + q)`` from the counts on Poisson-sized samples (one
        bound at ``confidence``); ``> 0``: ``ln((p_low - delta) / q_high)`` with two one-sided
        Clopper-Pearson bounds on ``samples`` draws each.
    confidence : float, default 0.95
        In ``(0, 1)``.
    epsilon : float, optional
        The claimed eps, recorded in the result (``audit.refutes(epsilon)`` gives the verdict).
    rng : int, SeedSequence, Generator or None
        The root seed: phase, pair and chunk seeds are spawned from it, so the same seed gives the
        same bound whatever ``processes`` or ``dask``.
    processes : int, default 1
        Local processes for the screening (one pair per task), the search (one kept pair per task,
        as many at once as the memory limit allows) and the certification (one chunk per task).  The
        sampler must be picklable; otherwise the audit runs serially and says so in its notes.
    dask : distributed.Client or str, optional
        A Dask client or scheduler address to run the same tasks on instead.
    progress : bool, optional
        A progress bar on stderr; default: only for long audits (``2 * samples > 2e7``) on a
        terminal.
    relation : str, default ""
        The neighbouring relation the pairs come from, recorded in the result.

    Returns
    -------
    PrivacyAudit
        ``exact=False``; ``worst`` holds the pair (in the order of the bound), the event in words,
        its certification counts and the draws per input actually made; ``method`` names the
        certificate; ``notes`` the budgets and pairs screened.

    Raises
    ------
    ValidationError
        On bad arguments, an empty ``neighbours``, a sampler that raises (chained, naming the
        input), that returns the wrong number or shape of outputs, NaN, or outputs of different
        kinds on two inputs, or a request over the memory limit.

    Examples
    --------
    >>> def coin(
    ...     bit, size, rng
    ... ):  # randomized response keeping the bit with probability 3/4: eps = ln 3
    ...     return np.where(rng.random(size) < 0.75, bit, 1 - bit)
    >>> audit = audit_black_box(coin, [(0, 1)], samples=100_000, epsilon=1.0, rng=0)
    >>> bool(0.9 < audit.epsilon < math.log(3)), audit.refutes(1.0)
    (True, True)
    """
    if not callable(sampler):
        raise ValidationError(
            "sampler", f"must be a callable (x, size, rng) -> outputs, got {show(sampler)}"
        )
    samples = positive_int("samples", samples)
    search_samples = (
        min(max(samples // 4, 1000), 10**6)
        if search_samples is None
        else integer("search_samples", search_samples, low=2)
    )
    screen_samples = (
        max(min(samples // 10, 10**5), 1000)
        if screen_samples is None
        else integer("screen_samples", screen_samples, low=2)
    )
    stream_samples = (
        _streamed_budget(samples, search_samples)
        if stream_samples is None
        else integer("stream_samples", stream_samples, low=0)
    )
    delta = probability("delta", delta, allow_zero=True)
    confidence = probability("confidence", confidence)
    claimed = None if epsilon is None else (non_negative("epsilon", epsilon, allow_inf=True), delta)
    processes = positive_int("processes", processes)
    if progress is not None and not isinstance(progress, bool):
        raise ValidationError("progress", f"must be True, False or None, got {show(progress)}")
    if not isinstance(relation, str):
        raise ValidationError("relation", f"must be a str, got {show(relation)}")
    pairs = _pairs(neighbours)
    root = _root_seed(rng)
    alpha = (1 - confidence) / 2
    kind = _call(sampler, pairs[0][0], 2, _child(root, PROBE))[1]
    width = max(kind.width, 1)
    # entries (8 bytes) per row held by a search: outputs, the sampler's temporaries, categories,
    # scores (a traced peak of 16.5 * width + 8 bytes per row on the suite's 20-wide sparse-vector
    # outputs)
    per_row = 2 * width + 4
    screened = len(pairs) > 1
    screen_stream = _streamed_budget(stream_samples, screen_samples) if screened else 0
    memory(
        "search_samples",
        2 * max(search_samples, screen_samples if screened else 0) * per_row,
        what=f"searching on {max(search_samples, screen_samples):,} outputs of {kind.text()} "
        "per input",
    )
    memory("samples", 4 * _chunk_rows(kind) * per_row, what="one certification chunk")

    kept = list(range(len(pairs)))
    notes = []
    executor_note = ""
    if dask is None and processes > 1:
        try:
            pickle.dumps((sampler, pairs))
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the audit runs serially
            processes = 1
            executor_note = f"; the sampler or inputs cannot be pickled ({type(exc).__name__}), so it ran serially"
    sizes = _certification_sizes(root, samples, delta)
    total = (
        sum(sizes)
        + 2 * (search_samples + stream_samples) * min(len(pairs), KEPT_PAIRS)
        + (2 * (screen_samples + screen_stream) * len(pairs) if screened else 0)
    )
    with (
        _executor(processes, dask) as executor,
        _progress(progress, total, total > 2 * 10**7) as bar,
    ):
        if screened:
            tasks = [
                (
                    sampler,
                    pair,
                    screen_samples,
                    (_child(root, SCREEN, i, 0), _child(root, SCREEN, i, 1)),
                    kind,
                    samples,
                    alpha,
                    delta,
                    False,
                    screen_stream,
                )
                for i, pair in enumerate(pairs)
            ]
            screens = _map(
                executor,
                _search_task,
                tasks,
                [2 * (screen_samples + screen_stream)] * len(pairs),
                bar,
                _at_once(processes, screen_samples * per_row),
            )
            ranking = np.array([found.expected for found in screens])
            kept = sorted(np.argsort(-ranking, kind="stable")[:KEPT_PAIRS].tolist())
            notes.append(
                f"screened {len(pairs)} pairs in both orders on {screen_samples:,} draws "
                "per input; "
                f"searched the best {len(kept)}"
            )
        if stream_samples:
            notes.append(
                f"unions of grid cells also searched on {stream_samples:,} streamed draws "
                "per input "
                f"of each searched pair ({screen_stream:,} of each screened pair)"
            )
        tasks = [
            (
                sampler,
                pairs[i],
                search_samples,
                (_child(root, SEARCH, i, 0), _child(root, SEARCH, i, 1)),
                kind,
                samples,
                alpha,
                delta,
                True,
                stream_samples,
            )
            for i in kept
        ]
        searches = _map(
            executor,
            _search_task,
            tasks,
            [2 * (search_samples + stream_samples)] * len(kept),
            bar,
            _at_once(processes, search_samples * per_row),
        )
        j = max(range(len(kept)), key=lambda j: (searches[j].expected, -j))  # the first of the best
        found, i = searches[j], kept[j]
        pair = pairs[i] if found.forward else pairs[i][::-1]
        k, k2 = _certify(sampler, pair, found.event, kind, sizes, root, executor, bar)
    if delta == 0:
        bound = max(float(_ratio_bound(np.array([k]), np.array([k2]), 1 - confidence)[0]), 0.0)
        certificate = (
            "conditional binomial test on Poisson-sized samples, "
            "one-sided Clopper-Pearson on p/(p+q)"
        )
        drawn = f"{sizes[0]:,} and {sizes[1]:,} fresh draws (Poisson({samples:,}) sizes)"
    else:
        p_low, _ = _cp_bounds(np.array([k]), samples, alpha)
        _, q_high = _cp_bounds(np.array([k2]), samples, alpha)
        bound = max(float(_bound(p_low, q_high, delta)[0]), 0.0) if p_low[0] > delta else 0.0
        certificate = f"two one-sided Clopper-Pearson bounds, each at {1 - alpha:.4g} (union bound)"
        drawn = f"{samples:,} fresh draws per input"
    where = (
        "on a Dask cluster"
        if dask is not None
        else f"on {processes} processes"
        if processes > 1
        else "in this process"
    )
    notes += [
        f"event search on {search_samples:,} draws per input"
        + (f" and {stream_samples:,} streamed ones (unions of cells)" if stream_samples else "")
        + " (half build the candidate events, half choose by the bound expected at "
        f"{samples:,} draws; expected {max(found.expected, 0.0):.4g}, counts of the "
        "chosen event on "
        f"its selection draws {found.counts[0]:,} vs {found.counts[1]:,})",
        f"certified one (pair, order, event) on {drawn} {where}{executor_note}: no "
        "multiple-testing correction is needed",
    ]
    method = (
        f"black box: search of {len(pairs)} pair(s) and events on {kind.text()}, then a "
        "certificate "
        f"at {confidence:.0%} on independent samples ({certificate})"
    )
    worst = {"pair": pair, "event": found.event.describe(), "counts": (k, k2), "samples": sizes}
    return PrivacyAudit(
        bound,
        False,
        worst,
        len(pairs),
        delta=delta,
        relation=relation,
        confidence=confidence,
        claimed=claimed,
        method=method,
        notes=tuple(notes),
    )
