"""The black-box DP testers' benchmark: the correct and broken mechanisms of the published suites.

StatDP (Ding, Wang, Wang, Zhang & Kifer 2018, "Detecting Violations of Differential Privacy", CCS)
and DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev 2021, "DP-Sniper: Black-Box Discovery of
Differential Privacy Violations using Classifiers", IEEE S&P) evaluate their testers on one suite:
noisy histograms, four report-noisy-max variants, the six sparse-vector variants collected by Lyu,
Su & Li (2017, "Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 10(6),
Algorithms 1-6), numerical sparse vector and prefix sums (Wang, Ding, Wang, Kifer & Zhang 2019,
"Proving Differential Privacy with Shadow Execution", PLDI), RAPPOR (Erlingsson, Pihur & Korolova
2014, CCS), parallel runs, the Laplace mechanism and a truncated geometric mechanism.  This module
writes each of them from the papers, at the suite's claimed ``eps = 0.1`` and with the parameters
of the testers' published runs (DP-Sniper's ``exp_default``: cutoff ``c = 1`` for the single
sparse-vector variants, ``c = 2`` when run in parallel and for numerical sparse vector, threshold
``T = 1`` (``T = 0.5`` for Alg. 1), 5 queries for noisy max and histograms, 10 for sparse vector
and prefix sums, entries in ``[-10, 10]``; RAPPOR with 4 hashes, a 20-bit Bloom filter and ``f =
0.75, p = 0.45, q = 0.55``, one-time RAPPOR with ``f = 0.95``).

Every mechanism is a vectorised **sampler** ``sampler(x, size, rng) -> numpy.ndarray``: ``size``
outputs of one input ``x`` (a 1-d array of query answers), shape ``(size,)`` for scalar outputs and
``(size, k)`` for vectors.  Finite outputs are small integer codes (``int8``; indices ``int64``):
:data:`ABOVE`, :data:`BELOW` and :data:`HALTED` (asked after the cutoff) for sparse vector, 0/1 bits
for RAPPOR.  A sparse-vector variant that releases noisy values returns ``float64`` rows
``[codes..., values...]``: the codes, then the released value where the code is :data:`ABOVE` and 0
elsewhere, so no number doubles as a code and nothing is NaN.

:data:`TESTBED` lists them as :class:`BenchmarkMechanism` entries (look one up with
:func:`benchmark_mechanism`): the claimed eps, whether the literature calls the mechanism eps-DP at
that claim under the stated neighbouring relation, the relation, the input length and domain, the
citation, ``true_epsilon`` where a closed form is derived in the docstring (and checked by the
tests), and ``published_lower_bound``: the best certified lower bound of DP-Sniper's published runs,
read from its reference results (repository ``eth-sri/dp-sniper``, files
``eval_sp2021/reference-results/dd_search_reg_data.log`` and ``dd_search_mlp_data.log``, field
``eps_lcb``, the larger of the logistic-regression and neural-network runs; the paper's power figure
is drawn from these logs), for the mechanisms identical to DP-Sniper's.

Derived privacy losses (``true_epsilon``: the supremum of the loss over the relation and the domain;
the tests check each against the exact law, a fine grid or an enumeration):

* Laplace noise of scale ``b`` added to ``x`` (``laplace``, ``noisy_hist``,
  ``noisy_hist_wrong_scale``, ``laplace_parallel`` (20 copies of ``x[0]``), and the prefix sums, an
  invertible linear map of ``x + Lap(b)``): the log-density ratio is ``sum_i (|y_i - x'_i| - |y_i -
  x_i|) / b``, at most ``||x - x'||_1 / b`` (per copy), attained where every ``y_i <= min(x_i,
  x'_i)``.  Hence 0.1 for ``Lap(1/eps)`` and one entry moved by 1; 10 for the inverted scale
  ``Lap(eps)``; 20 x 0.005 = 0.1 for the parallel copies; 10 x 0.1 = 1.0 for prefix sums when all 10
  entries move.
* Truncated geometric: ``P(z | c) = (1-a)/(1+a) a^|z-c|`` for ``0 < z < n``, ``a^c/(1+a)`` at 0 and
  ``a^(n-c)/(1+a)`` at ``n`` (``a = e^-eps``); every ratio between ``c`` and ``c + 1`` is ``a`` or
  ``1/a``: exactly eps.
* Noisy max returning the Laplace-noised maximum of ``L`` entries (scale ``b = 2/eps``): the density
  of ``M = max_i (x_i + L_i)`` is ``sum_i p(m - x_i) prod_{j != i} F(m - x_j)``; Laplace's ``p`` and
  ``F`` are log-Lipschitz with constant ``1/b``, so the ratio is at most ``e^{L/b}`` when every
  entry moves by at most 1, and for ``x' = x + 1`` and ``m <= min x`` every factor is exponential in
  ``m``, so the ratio is ``e^{L/b}`` on a set of positive probability: ``L / b = 5 x 0.05 = 0.25``.
* Noisy max returning the exponential-noised maximum: ``M >= max_i x_i`` surely, so for ``x = 1``
  and ``x' = 2`` (all entries) the output ``M < 2`` has probability ``(1 - e^{-1/b})^5 > 0`` under
  ``x`` and 0 under ``x'``: infinite.
* Sparse vector without query noise (Lyu's Alg. 5): the answers are ``1[x_i >= T + rho]``; for
  ``x = (1, ..., 1)`` they all agree surely, for ``x' = (2, ..., 2, 0, ..., 0)`` they split whenever
  ``-1 < rho <= 1``, probability ``1 - e^{-1/20}``: infinite.
* RAPPOR: the report bits are independent given the Bloom filter, so the loss of a pair is the
  Hamming distance of the two filters times the loss of one bit, ``ln(q*/p*)`` (see
  ``_rappor_bit_loss``), maximised over consecutive whole values in ``[-10, 10]`` (8 bits apart at
  most: 0.4001 for RAPPOR, 0.8007 one-time).

Neighbouring relations (the names of :func:`dpgames.privacy.neighbouring_inputs`): ``"one-entry"``:
one entry changes by at most 1; ``"all-entries"``: every entry changes by at most 1 (the
sensitivity-1 query vectors of sparse vector and noisy max); ``"add-remove"``: one record is added
to or removed from a histogram (one count changes by 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    integer,
    memory,
    non_negative,
    positive,
    positive_int,
    real,
)

#: Sparse-vector answer codes: "above the threshold", "below", and "not answered: the cutoff was
#: reached".
ABOVE, BELOW, HALTED = 1, 0, -1

#: The neighbouring relations an entry may assume.
Relation = Literal["one-entry", "all-entries", "add-remove"]

Sampler = Callable[[np.ndarray, int, RNGLike], np.ndarray]

#: Arrays of ``size`` rows a sampler holds at once (for the up-front memory check, per output
#: column).
_TEMPORARIES = 4


def _inputs(
    x: object,
    size: object,
    rng: RNGLike,
    *,
    length: int | None = None,
    integer: bool = False,
    per_entry: int = 1,
    extra: int = 0,
) -> tuple[np.ndarray, int, np.random.Generator]:
    """The validated ``(x, size, generator)`` of a sampler call; a call that would allocate more
    than :data:`dpgames.validation.MAX_BYTES` (``size`` rows of ``per_entry * len(x) + extra``
    columns, a few arrays at once) is refused up front."""
    arr = finite_array("x", x, ndim=1)
    if arr.size == 0:
        raise ValidationError("x", "must hold at least one query answer, got an empty array")
    if length is not None and arr.size != length:
        raise ValidationError(
            "x", f"must hold exactly {length} value(s) for this mechanism, got {arr.size}"
        )
    if integer and np.any(arr != np.round(arr)):
        raise ValidationError(
            "x", f"must hold whole numbers for this mechanism, got {arr.tolist()}"
        )
    n = positive_int("size", size)
    memory(
        "size",
        n * (per_entry * arr.size + extra) * _TEMPORARIES,
        what=f"{n} outputs: draw in batches",
    )
    return arr, n, as_generator(rng)


# ----------------------------------------------------------------------------------------------
# samplers


@dataclass(frozen=True)
class _Laplace:
    """``x[0] + Lap(scale)``, or ``copies`` independent draws of it (shape ``(size, copies)``)."""

    scale: float
    copies: int = 1

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng, length=1, extra=self.copies)
        shape = (n,) if self.copies == 1 else (n, self.copies)
        return arr[0] + gen.laplace(0.0, self.scale, shape)


@dataclass(frozen=True)
class _TruncatedGeometric:
    """``clip(c + Z, 0, n)`` with ``P(Z = k)`` proportional to ``exp(-epsilon |k|)``; ``c`` in
    ``0..n``."""

    epsilon: float
    n: int

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng, length=1, integer=True)
        if not 0 <= arr[0] <= self.n:
            raise ValidationError("x", f"must be a count in 0..{self.n}, got {arr[0]:g}")
        success = -math.expm1(-self.epsilon)  # 1 - alpha, alpha = e^-eps
        z = gen.geometric(success, n) - gen.geometric(success, n)  # two-sided geometric
        return np.clip(int(arr[0]) + z, 0, self.n).astype(np.int64)


@dataclass(frozen=True)
class _NoisyVector:
    """``x + Lap(scale)`` entry-wise, then an optional cumulative sum (prefix sums)."""

    scale: float
    prefix_sums: bool = False

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng)
        out = gen.laplace(0.0, self.scale, (n, arr.size))
        out += arr
        return np.cumsum(out, axis=1, out=out) if self.prefix_sums else out


@dataclass(frozen=True)
class _NoisyMax:
    """Add ``noise`` of ``scale`` to every entry; report the index of the largest or its noisy
    value."""

    noise: Literal["laplace", "exponential"]
    scale: float
    output: Literal["index", "value"]

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng)
        noisy = (
            gen.laplace(0.0, self.scale, (n, arr.size))
            if self.noise == "laplace"
            else gen.exponential(self.scale, (n, arr.size))
        )
        noisy += arr
        return noisy.argmax(axis=1) if self.output == "index" else noisy.max(axis=1)


def _halted(above: np.ndarray, cutoff: int | None) -> np.ndarray:
    """Queries asked after ``cutoff`` "above" answers (none without a cutoff)."""
    if cutoff is None:
        return np.zeros(above.shape, dtype=bool)
    earlier = np.cumsum(above, axis=1, dtype=np.int32)
    earlier -= above
    return earlier >= cutoff


def _codes(above: np.ndarray, halted: np.ndarray) -> np.ndarray:
    codes = above.astype(np.int8)  # ABOVE = 1, BELOW = 0
    codes[halted] = HALTED
    return codes


@dataclass(frozen=True)
class _SparseVector:
    """One of Lyu, Su & Li's sparse-vector variants (their Fig. 1), by its knobs.

    Noisy threshold ``T + Lap(threshold_scale)``; query ``i`` is "above" when
    ``x_i + Lap(query_scale) >= `` the noisy threshold (no query noise when ``query_scale == 0``);
    after ``cutoff`` "above" answers the rest are :data:`HALTED` (no cutoff when ``None``);
    ``redraw``: a fresh threshold noise after every "above" (Alg. 2); ``release_value``: output the
    noisy query value of an "above" answer (Alg. 3), as ``[codes..., values...]``.
    """

    threshold: float
    threshold_scale: float
    query_scale: float
    cutoff: int | None
    redraw: bool = False
    release_value: bool = False

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng, per_entry=2)
        noisy_threshold = self.threshold + gen.laplace(0.0, self.threshold_scale, n)
        noisy = (
            gen.laplace(0.0, self.query_scale, (n, arr.size))
            if self.query_scale > 0
            else np.zeros((n, arr.size))
        )
        noisy += arr
        if self.redraw:
            above = np.empty(noisy.shape, dtype=bool)
            for i in range(arr.size):  # the threshold changes after each "above"
                above[:, i] = noisy[:, i] >= noisy_threshold
                rows = np.flatnonzero(above[:, i])
                noisy_threshold[rows] = self.threshold + gen.laplace(
                    0.0, self.threshold_scale, rows.size
                )
        else:
            above = noisy >= noisy_threshold[:, None]
        halted = _halted(above, self.cutoff)
        codes = _codes(above, halted)
        if not self.release_value:
            return codes
        released = above & ~halted
        return np.hstack([codes.astype(np.float64), np.where(released, noisy, 0.0)])


@dataclass(frozen=True)
class _NumericalSparseVector:
    """Numerical sparse vector (Wang et al. 2019, Fig. 1 of the shadow-execution paper).

    Threshold noise ``Lap(3 / eps)``, comparison noise ``Lap(6 c / eps)``; an "above" query releases
    ``x_i + Lap(3 c / eps)`` drawn afresh; at most ``c`` answers "above".  Rows ``[codes...,
    values...]``.
    """

    epsilon: float
    threshold: float
    cutoff: int

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng, per_entry=3)
        noisy_threshold = self.threshold + gen.laplace(0.0, 3.0 / self.epsilon, n)
        compared = gen.laplace(0.0, 6.0 * self.cutoff / self.epsilon, (n, arr.size))
        compared += arr
        above = compared >= noisy_threshold[:, None]
        halted = _halted(above, self.cutoff)
        released = gen.laplace(0.0, 3.0 * self.cutoff / self.epsilon, (n, arr.size))
        released += arr
        values = np.where(above & ~halted, released, 0.0)
        return np.hstack([_codes(above, halted).astype(np.float64), values])


def _murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3, x86 32-bit variant (Appleby), as an unsigned 32-bit integer."""
    mask = 0xFFFFFFFF

    def rotl(v: int, r: int) -> int:
        return ((v << r) | (v >> (32 - r))) & mask

    def mix(k: int) -> int:
        return (rotl((k * 0xCC9E2D51) & mask, 15) * 0x1B873593) & mask

    h = seed & mask
    blocks = len(data) // 4
    for i in range(blocks):
        h ^= mix(int.from_bytes(data[4 * i : 4 * i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * blocks :]
    if tail:
        h ^= mix(int.from_bytes(tail, "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    return h ^ (h >> 16)


def bloom_filter(value: int, hashes: int = 4, size: int = 20) -> np.ndarray:
    """RAPPOR's Bloom filter of a client's value (Erlingsson et al. 2014, step 1): bit
    ``murmur3(str(value), seed=i) mod size`` is set for each hash ``i < hashes`` (the hash read as a
    signed 32-bit integer, Python's ``mod``: the same filters as DP-Sniper's RAPPOR).

    Parameters
    ----------
    value : int
        The client's value (a category).
    hashes, size : int

    Returns
    -------
    numpy.ndarray of bool, shape (size,)

    Examples
    --------
    >>> np.flatnonzero(bloom_filter(0)).tolist(), np.flatnonzero(bloom_filter(1)).tolist()
    ([0, 11, 18], [3, 10, 13])
    """
    bits = np.zeros(positive_int("size", size), dtype=bool)
    text = str(integer("value", value)).encode()
    for seed in range(positive_int("hashes", hashes)):
        h = _murmur3_32(text, seed)
        bits[(h - (1 << 32) if h >= 1 << 31 else h) % size] = True
    return bits


@dataclass(frozen=True)
class _Rappor:
    """RAPPOR's report of one client's value (``x`` of length 1, a whole number): the Bloom filter,
    its permanent randomised response (each bit set to 1 w.p. ``f/2``, to 0 w.p. ``f/2``, kept
    otherwise), and unless ``one_time``, the instantaneous randomised response (a 1 w.p. ``q`` over
    a 1, ``p`` over a 0).  Both steps act on each bit independently, so a report bit is one
    Bernoulli draw with the composed chance :func:`_rappor_bit_chances` (the same law, one uniform
    per bit).  Output bits ``int8``, shape ``(size, filter_size)``.  (Deployed RAPPOR memoises the
    permanent response per value; one report, as audited here, draws it afresh, as DP-Sniper's
    does.)
    """

    f: float
    p: float
    q: float
    hashes: int
    filter_size: int
    one_time: bool

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng, length=1, integer=True, extra=self.filter_size)
        bits = bloom_filter(int(arr[0]), self.hashes, self.filter_size)
        chance = np.where(bits, *_rappor_bit_chances(self.f, self.p, self.q, self.one_time))
        return (gen.random((n, self.filter_size)) < chance).astype(np.int8)


def _rappor_bit_chances(f: float, p: float, q: float, one_time: bool) -> tuple[float, float]:
    """``(P(report bit = 1 | Bloom bit 1), P(... | Bloom bit 0))``: ``(1 - f/2, f/2)`` after the
    permanent response, then ``q* = (1 - f/2) q + (f/2) p`` and ``p* = (f/2) q + (1 - f/2) p`` after
    the instantaneous one (Erlingsson et al. 2014, Sec. 3)."""
    hi, lo = 1 - f / 2, f / 2
    if one_time:
        return hi, lo
    return hi * q + lo * p, lo * q + hi * p


@dataclass(frozen=True)
class _Parallel:
    """Several samplers run on the same input with independent noise; outputs side by side."""

    parts: tuple[Sampler, ...]

    def __call__(self, x: object, size: int, rng: RNGLike) -> np.ndarray:
        arr, n, gen = _inputs(x, size, rng)
        outs = [np.asarray(part(arr, n, gen)) for part in self.parts]
        return np.hstack([o.reshape(n, -1).astype(np.float64) for o in outs])


# ----------------------------------------------------------------------------------------------
# entries


@dataclass(frozen=True)
class BenchmarkMechanism:
    """One mechanism of the testers' benchmark.

    Attributes
    ----------
    name : str
    sampler : callable
        ``sampler(x, size, rng) -> numpy.ndarray`` of ``size`` outputs for the input ``x``.
    epsilon : float
        The claimed eps.
    private : bool
        Whether the published literature calls the mechanism eps-DP at the claimed eps under
        ``relation`` (False: a known violation).
    relation : {"one-entry", "all-entries", "add-remove"}
        The neighbouring relation of the claim.
    length : int
        The input length.
    low, high : float
        The domain of every input entry.
    integer_inputs : bool
        Whether inputs must be whole numbers (a category, a count): audit such entries on
        whole-number pairs only.
    citation : str
    true_epsilon : float or None
        The supremum of the privacy loss over all pairs of ``relation`` in the domain, where derived
        in closed form (see the entry's docstring in this module; ``inf`` when some output has
        probability 0 under one input only); None where not derived.
    published_lower_bound : float or None
        The best certified lower bound of DP-Sniper's published runs for this very mechanism (see
        the module docstring), None where DP-Sniper did not run it as specified here.
    """

    name: str
    sampler: Sampler
    epsilon: float
    private: bool
    relation: Relation
    length: int
    low: float
    high: float
    integer_inputs: bool
    citation: str
    true_epsilon: float | None = None
    published_lower_bound: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError("name", f"must be a non-empty string, got {self.name!r:.80}")
        if not callable(self.sampler):
            raise ValidationError("sampler", "must be callable as sampler(x, size, rng)")
        positive("epsilon", self.epsilon)
        for flag in ("private", "integer_inputs"):
            if not isinstance(getattr(self, flag), bool):
                raise ValidationError(
                    flag, f"must be True or False, got {getattr(self, flag)!r:.80}"
                )
        choice("relation", self.relation, ("one-entry", "all-entries", "add-remove"))
        positive_int("length", self.length)
        if not real("low", self.low) < real("high", self.high):
            raise ValidationError("high", f"must exceed low, got [{self.low}, {self.high}]")
        if not isinstance(self.citation, str):
            raise ValidationError("citation", "must be a string")
        if self.true_epsilon is not None:
            non_negative("true_epsilon", self.true_epsilon, allow_inf=True)
        if self.published_lower_bound is not None:
            non_negative("published_lower_bound", self.published_lower_bound)

    @property
    def violation(self) -> bool:
        """True when the mechanism is *not* eps-DP at its claim (what a tester must flag)."""
        return not self.private


#: The claimed eps of every entry (the suites' common claim).
EPSILON = 0.1
_DING = "Ding, Wang, Wang, Zhang & Kifer 2018 (StatDP), CCS"
_LYU = "Lyu, Su & Li 2017, PVLDB 10(6)"
_WANG = "Wang, Ding, Wang, Kifer & Zhang 2019 (shadow execution), PLDI"
_RAPPOR = "Erlingsson, Pihur & Korolova 2014 (RAPPOR), CCS"
_SNIPER = "Bichsel, Steffen, Bogunovic & Vechev 2021 (DP-Sniper), IEEE S&P"


def _rappor_bit_loss(f: float, p: float, q: float, one_time: bool) -> float:
    """The privacy loss of one Bloom bit that differs between two values, ``ln(q*/p*)``, for
    parameters with ``q* + p* = 1`` (``p + q = 1``, and always for the one-time response).

    The report bits are independent given the filter, so the law of a report is a product and the
    log-ratio of two values' laws is a sum over the bits where their filters differ: ``ln(q*/p*)``
    or ``ln((1 - q*)/(1 - p*))`` at a bit set for the first value, ``ln(p*/q*)`` or ``ln((1 -
    p*)/(1 - q*))`` at a bit set for the second, as the report shows 1 or 0.  With ``q* + p* = 1``
    the largest term is ``ln(q*/p*)`` in both cases, so the loss of a pair is ``d_H ln(q*/p*)``,
    ``d_H`` the Hamming distance of the two filters, attained by the report that copies the first
    filter on those bits.
    """
    hi, lo = _rappor_bit_chances(f, p, q, one_time)
    if not math.isclose(hi + lo, 1.0):
        raise ValidationError("q", f"the closed form needs p + q = 1, got p = {p}, q = {q}")
    return math.log(hi / lo)


def _rappor_true_epsilon(
    f: float, p: float, q: float, one_time: bool, low: int, high: int
) -> float:
    """``max d_H(B(v), B(v + 1)) * bit loss`` over consecutive whole values in ``[low, high]``."""
    distance = max(int(np.sum(bloom_filter(v) != bloom_filter(v + 1))) for v in range(low, high))
    return distance * _rappor_bit_loss(f, p, q, one_time)


_SVT_T = 1.0


def _lyu(
    threshold_share: float, query_scale: float, cutoff: int | None, **knobs: bool
) -> _SparseVector:
    """A Lyu et al. variant at eps = 0.1: threshold noise ``Lap(1 / (threshold_share eps))``."""
    return _SparseVector(_SVT_T, 1.0 / (threshold_share * EPSILON), query_scale, cutoff, **knobs)


#: Parameters DP-Sniper's ``exp_default`` passes (c = 1 for the single variants).
_C = 1

TESTBED: tuple[BenchmarkMechanism, ...] = (
    BenchmarkMechanism(
        "laplace",
        _Laplace(1 / EPSILON),
        EPSILON,
        True,
        "one-entry",
        1,
        -10,
        10,
        False,
        "Dwork, McSherry, Nissim & Smith 2006; in " + _SNIPER,
        true_epsilon=0.1,
        published_lower_bound=0.097634,
    ),
    BenchmarkMechanism(
        "truncated_geometric",
        _TruncatedGeometric(EPSILON, 5),
        EPSILON,
        True,
        "one-entry",
        1,
        0,
        5,
        True,
        "Ghosh, Roughgarden & Sundararajan 2009 (count c in 0..5); DP-Sniper runs Balcer "
        "& Vadhan's "
        "GeoSample of this law with another ratio, so its figure does not apply",
        true_epsilon=0.1,
    ),
    BenchmarkMechanism(
        "noisy_hist",
        _NoisyVector(1 / EPSILON),
        EPSILON,
        True,
        "add-remove",
        5,
        0,
        10,
        False,
        _DING + ", Alg. 9 (histogram with Lap(1/eps))",
        true_epsilon=0.1,
        published_lower_bound=0.097794,
    ),
    BenchmarkMechanism(
        "noisy_hist_wrong_scale",
        _NoisyVector(EPSILON),
        EPSILON,
        False,
        "add-remove",
        5,
        0,
        10,
        False,
        _DING + ", Alg. 10 (histogram with Lap(eps): the scale inverted)",
        true_epsilon=10.0,
        published_lower_bound=4.602022,
    ),
    BenchmarkMechanism(
        "noisy_max_laplace_index",
        _NoisyMax("laplace", 2 / EPSILON, "index"),
        EPSILON,
        True,
        "all-entries",
        5,
        -10,
        10,
        False,
        _DING + ", Alg. 5 (report noisy max, Lap(2/eps), the index)",
        published_lower_bound=0.092501,
    ),
    BenchmarkMechanism(
        "noisy_max_exponential_index",
        _NoisyMax("exponential", 2 / EPSILON, "index"),
        EPSILON,
        True,
        "all-entries",
        5,
        -10,
        10,
        False,
        _DING + ", Alg. 6 (report noisy max, Exp(2/eps), the index: permute-and-flip)",
        published_lower_bound=0.097920,
    ),
    BenchmarkMechanism(
        "noisy_max_laplace_value",
        _NoisyMax("laplace", 2 / EPSILON, "value"),
        EPSILON,
        False,
        "all-entries",
        5,
        -10,
        10,
        False,
        _DING + ", Alg. 7 (report noisy max, Lap(2/eps), the noisy maximum itself)",
        true_epsilon=0.25,
        published_lower_bound=0.248810,
    ),
    BenchmarkMechanism(
        "noisy_max_exponential_value",
        _NoisyMax("exponential", 2 / EPSILON, "value"),
        EPSILON,
        False,
        "all-entries",
        5,
        -10,
        10,
        False,
        _DING + ", Alg. 8 (report noisy max, Exp(2/eps), the noisy maximum itself)",
        true_epsilon=math.inf,
        published_lower_bound=0.353444,
    ),
    BenchmarkMechanism(
        "svt1",
        _SparseVector(0.5, 2 / EPSILON, 4 * _C / EPSILON, _C),
        EPSILON,
        True,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU + ", Alg. 1 (their correct variant; T = 0.5, c = 1)",
        published_lower_bound=0.085798,
    ),
    BenchmarkMechanism(
        "svt2",
        _lyu(1 / (2 * _C), 4 * _C / EPSILON, _C, redraw=True),
        EPSILON,
        True,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU + ", Alg. 2 (Dwork & Roth 2014: threshold noise Lap(2c/eps), redrawn after "
        "each 'above'; T = 1, c = 1)",
        published_lower_bound=0.085934,
    ),
    BenchmarkMechanism(
        "svt3",
        _lyu(1 / 2, 2 * _C / EPSILON, _C, release_value=True),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU + ", Alg. 3 (Roth 2011: releases the noisy query value of an 'above', query "
        "noise Lap(2c/eps); T = 1, c = 1)",
        published_lower_bound=0.182168,
    ),
    BenchmarkMechanism(
        "svt4",
        _lyu(1 / 4, 4 / (3 * EPSILON), _C),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU
        + ", Alg. 4 (Lee & Clifton 2014: eps/4 on the threshold, query noise Lap(4/(3 eps)) not "
        "scaled with c; T = 1, c = 1)",
        published_lower_bound=0.169569,
    ),
    BenchmarkMechanism(
        "svt5",
        _lyu(1 / 2, 0.0, None),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU + ", Alg. 5 (Stoddard et al. 2014: no query noise, no cutoff; T = 1)",
        true_epsilon=math.inf,
        published_lower_bound=1.761185,
    ),
    BenchmarkMechanism(
        "svt6",
        _lyu(1 / 2, 2 / EPSILON, None),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _LYU + ", Alg. 6 (Chen et al. 2015: query noise Lap(2/eps), no cutoff; T = 1)",
        published_lower_bound=0.272041,
    ),
    BenchmarkMechanism(
        "svt34_parallel",
        _Parallel(
            (_lyu(1 / 2, 4 / EPSILON, 2, release_value=True), _lyu(1 / 4, 4 / (3 * EPSILON), 2))
        ),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _SNIPER
        + " (SVT34Parallel: Lyu's Alg. 3 and Alg. 4, each at eps = 0.1 with c = 2, T = 1, run on "
        "one input; even correct parts would compose to 0.2 only)",
        published_lower_bound=0.261621,
    ),
    BenchmarkMechanism(
        "numerical_svt",
        _NumericalSparseVector(EPSILON, 1.0, 2),
        EPSILON,
        True,
        "all-entries",
        10,
        -10,
        10,
        False,
        _WANG + " (numerical sparse vector; T = 1, c = 2)",
        published_lower_bound=0.034501,
    ),
    BenchmarkMechanism(
        "prefix_sum",
        _NoisyVector(1 / EPSILON, prefix_sums=True),
        EPSILON,
        True,
        "one-entry",
        10,
        -10,
        10,
        False,
        _WANG + " (prefix sums of x + Lap(1/eps))",
        true_epsilon=0.1,
    ),
    BenchmarkMechanism(
        "prefix_sum_all_entries",
        _NoisyVector(1 / EPSILON, prefix_sums=True),
        EPSILON,
        False,
        "all-entries",
        10,
        -10,
        10,
        False,
        _WANG + " (prefix sums), under the every-entry relation DP-Sniper ran it with",
        true_epsilon=1.0,
        published_lower_bound=0.577433,
    ),
    BenchmarkMechanism(
        "laplace_parallel",
        _Laplace(1 / 0.005, copies=20),
        EPSILON,
        True,
        "one-entry",
        1,
        -10,
        10,
        False,
        _SNIPER + " (LaplaceParallel: 20 Laplace mechanisms at eps = 0.005 on one input)",
        true_epsilon=0.1,
        published_lower_bound=0.034953,
    ),
    BenchmarkMechanism(
        "rappor",
        _Rappor(0.75, 0.45, 0.55, 4, 20, one_time=False),
        EPSILON,
        False,
        "one-entry",
        1,
        -10,
        10,
        True,
        _RAPPOR + ", steps 1-3 (h = 4, k = 20, f = 0.75, p = 0.45, q = 0.55); Erlingsson et al. "
        "state eps_1 = 2h ln(q*/p*) = 0.40 for one report, not 0.1",
        true_epsilon=_rappor_true_epsilon(0.75, 0.45, 0.55, False, -10, 10),
        published_lower_bound=0.300802,
    ),
    BenchmarkMechanism(
        "one_time_rappor",
        _Rappor(0.95, 0.45, 0.55, 4, 20, one_time=True),
        EPSILON,
        False,
        "one-entry",
        1,
        -10,
        10,
        True,
        _RAPPOR + ", steps 1-2 (permanent response only, f = 0.95)",
        true_epsilon=_rappor_true_epsilon(0.95, 0.45, 0.55, True, -10, 10),
        published_lower_bound=0.599899,
    ),
)

_BY_NAME = {entry.name: entry for entry in TESTBED}


def benchmark_mechanism(name: str) -> BenchmarkMechanism:
    """The :data:`TESTBED` entry called ``name``.

    Raises
    ------
    ValidationError
        With field ``"name"`` listing the names, for an unknown name.

    Examples
    --------
    >>> entry = benchmark_mechanism("svt3")
    >>> entry.private, entry.relation, entry.sampler([0.0] * 10, 2, rng=0).shape
    (False, 'all-entries', (2, 20))
    """
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValidationError("name", f"must be one of {', '.join(_BY_NAME)}; got {name!r}")
    return _BY_NAME[name]
