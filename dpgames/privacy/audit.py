"""Privacy audits of any mechanism: exact where an output law can be had, a black box where it
cannot.

:func:`audit_privacy` is the one entry point.  It takes

* a callable ``x -> law`` or an object with ``output_distribution(x)`` (every finite mechanism of
  :mod:`dpgames.privacy`, a :class:`~dpgames.mechanisms.custom.CustomMechanism`, the exact laws of
  :mod:`dpgames.privacy.exact_laws`): a *law* is a :class:`FiniteDistribution` or a mapping
  ``{outcome: probability}`` over any hashable outcomes, listed in any order; an outcome missing
  under one input has probability 0 there.  The audit is **exact** (:func:`audit_finite`);
* a sampler ``sampler(x, size, rng) -> array`` of ``size`` outputs (three required positional
  parameters): the audit is a **black box** (:func:`~dpgames.privacy.black_box.audit_black_box`), a
  lower bound on eps certified at a stated confidence;

and the neighbouring pairs: an iterable of ``(x, x')``, :func:`~dpgames.privacy.neighbour_inputs.
neighbouring_inputs` (StatDP's candidate patterns for query vectors), or, for a mechanism that
declares its own relation (:class:`DeclaresNeighbours`, e.g. a CustomMechanism: one agent's report
changes), nothing but the number of agents or the profiles.  Both paths return a
:class:`~dpgames.privacy.audit_result.PrivacyAudit`.

**The exact figures.**  For two laws ``P``, ``Q`` over finite outcomes, the privacy loss of outcome
``o`` is ``L(o) = ln P(o) - ln Q(o)``; the pair is eps-DP exactly when ``|L| <= eps`` everywhere.
The smallest delta at eps is the hockey-stick divergence ``H_eps(P || Q) = sum_o max(0, P(o) - e^eps
Q(o))`` (Barthe & Olmedo 2013; Balle & Wang 2018, Thm 5), in both orders.  The smallest eps at a
given delta > 0 follows in closed form: sorting outcomes by ``L`` (largest first) with prefix sums
``S_P(k)``, ``S_Q(k)``, ``H_eps = max_k (S_P(k) - e^eps S_Q(k))``, so ``eps(delta) = max(0, max_k
ln((S_P(k) - delta) / S_Q(k)))`` over the prefixes with ``S_P(k) > delta`` (``inf`` where ``S_Q(k) =
0``).

For the continuous Laplace and Gaussian mechanisms the same quantities have closed forms:
:func:`laplace_delta` and :func:`~dpgames.privacy.gaussian.gaussian_delta`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpgames.privacy.audit_result import PrivacyAudit, show
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.neighbour_inputs import Neighbours, as_neighbours
from dpgames.privacy.rng import RNGLike
from dpgames.validation import (
    ValidationError,
    finite_array,
    non_negative,
    positive,
    probability,
    required_positional,
)

#: A law's probabilities must sum to 1 within this.
SUM_TOLERANCE = 1e-9
#: Mass within this of delta counts as delta (the prefix sums of probabilities are rounded).
DELTA_ROUNDING = 1e-12
#: Laws kept per audit (inputs met again are not recomputed; oldest dropped first).
LAW_CACHE = 4096

Law = FiniteDistribution | Mapping[Hashable, float]


@runtime_checkable
class HasOutputLaw(Protocol):
    """A mechanism whose exact output law at an input can be asked for."""

    def output_distribution(self, x: Any) -> Law:
        """The exact law of the output on input ``x``."""
        ...


@runtime_checkable
class DeclaresNeighbours(Protocol):
    """A mechanism that knows its own neighbouring relation (e.g. one agent's report changes): it
    builds the pairs from the number of agents ``n`` or from given ``profiles``."""

    def neighbouring_reports(
        self, n: int | None = None, profiles: Iterable | None = None
    ) -> Neighbours:
        """The neighbouring pairs of inputs at ``n`` agents (every profile) or at ``profiles``."""
        ...


def hockey_stick_divergence(p: FiniteDistribution, q: FiniteDistribution, epsilon: float) -> float:
    """``sum_o max(0, P(o) - e^eps Q(o))``, computed in log space as ``sum P(o) (1 - e^{eps -
    L(o)})`` over the outcomes whose privacy loss ``L(o) = ln P(o) - ln Q(o)`` exceeds eps: the
    smallest delta for which the pair is (eps, delta)-indistinguishable in this order (Barthe &
    Olmedo 2013; Balle & Wang 2018, Thm 5).

    Parameters
    ----------
    p, q : FiniteDistribution
        Over the same outcomes.
    epsilon : float
        ``>= 0``, ``inf`` allowed.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValidationError
        If ``p`` or ``q`` is not a FiniteDistribution over the same number of outcomes, or
        ``epsilon`` < 0.
    """
    epsilon = non_negative("epsilon", epsilon, allow_inf=True)
    if not isinstance(p, FiniteDistribution):
        raise ValidationError("p", f"must be a FiniteDistribution, got {type(p).__name__}")
    return _hockey_stick(p.log_probabilities, p.privacy_loss(q), epsilon)


def _hockey_stick(log_p: np.ndarray, loss: np.ndarray, epsilon: float) -> float:
    over = loss > epsilon
    if not over.any():
        return 0.0
    with np.errstate(over="ignore"):
        terms = np.exp(log_p[over]) * -np.expm1(epsilon - loss[over])
    return float(np.clip(terms.sum(), 0.0, 1.0))


def epsilon_at_delta(log_p: np.ndarray, loss: np.ndarray, delta: float) -> float:
    """The smallest eps with ``H_eps(P || Q) <= delta``, in closed form (module docstring): ``max(0,
    max_k ln((S_P(k) - delta) / S_Q(k)))`` over prefixes of the outcomes sorted by loss.

    Parameters
    ----------
    log_p : numpy.ndarray
        ``ln P(o)`` per outcome.
    loss : numpy.ndarray
        ``ln P(o) - ln Q(o)`` per outcome (``+inf`` where only ``P`` puts mass; 0 where neither
        does).
    delta : float
        In ``[0, 1]``; with 0 this is the largest loss (clipped at 0).

    Returns
    -------
    float
        ``inf`` when more than ``delta`` of ``P``'s mass is where ``Q`` has none.
    """
    if delta == 0.0:
        return max(0.0, float(loss.max()))
    keep = np.isfinite(log_p)
    order = np.argsort(-loss[keep], kind="stable")
    p = np.exp(log_p[keep][order])
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.where(np.isposinf(loss[keep][order]), 0.0, p * np.exp(-loss[keep][order]))
    sp, sq = np.cumsum(p), np.cumsum(q)
    over = sp > delta + DELTA_ROUNDING
    if not over.any():
        return 0.0
    if (sq[over] == 0).any():
        return math.inf
    return max(0.0, float(np.max(np.log((sp[over] - delta) / sq[over]))))


class _Law:
    """A law read from a user: outcome keys (hashable), log-probabilities, and a fast comparison
    key."""

    __slots__ = ("keys", "log_p", "labels")

    def __init__(self, keys: list | None, log_p: np.ndarray, labels: np.ndarray | None):
        self.keys, self.log_p, self.labels = keys, log_p, labels

    def key_list(self) -> list:
        if self.keys is None:
            self.keys = _hashable_labels(self.labels)
        return self.keys


def _hashable_labels(labels: np.ndarray | None) -> list:
    if labels is None:
        return []
    rows = labels.tolist() if labels.ndim > 1 else list(labels)
    out = [
        tuple(r) if isinstance(r, list) else r.item() if isinstance(r, np.generic) else r
        for r in rows
    ]
    for o in out:
        try:
            hash(o)
        except TypeError:
            raise ValidationError(
                "mechanism",
                f": outcome {show(o)} is not hashable; label outcomes with "
                "numbers, strings or tuples",
            ) from None
    return out


def _read_law(value: Any, x: Any) -> _Law:
    """A user's law at input ``x`` checked and read."""
    if isinstance(value, FiniteDistribution):
        return _Law(None, value.log_probabilities, value.outcomes)
    if not isinstance(value, Mapping):
        raise ValidationError(
            "mechanism",
            f"must give a FiniteDistribution or a mapping {{outcome: probability}}; "
            f"got {type(value).__name__} for input {show(x)}",
        )
    keys = list(value)
    if not keys:
        raise ValidationError("mechanism", f"gave an empty law for input {show(x)}")
    try:
        p = finite_array("probabilities", [value[k] for k in keys], ndim=1)
    except ValidationError as error:
        raise ValidationError(
            "mechanism", f"gave a law whose {error} for input {show(x)}"
        ) from None
    total = float(p.sum())
    if (p < 0).any() or not abs(total - 1.0) <= SUM_TOLERANCE:
        raise ValidationError(
            "mechanism",
            f"gave a law that is not a probability distribution for input {show(x)} "
            f"(probabilities must be >= 0 and sum to 1; they sum to {total:.12g})",
        )
    with np.errstate(divide="ignore"):
        return _Law(keys, np.log(p), None)


def _aligned(a: _Law, b: _Law) -> tuple[list | np.ndarray, np.ndarray, np.ndarray]:
    """The outcomes of either law and both laws' log-probabilities on them (``-inf`` where a law
    lacks an outcome); one vectorised path when both list the same outcomes in the same order."""
    if (
        a.labels is not None
        and b.labels is not None
        and a.labels.shape == b.labels.shape
        and a.labels.dtype == b.labels.dtype
        and np.array_equal(a.labels, b.labels)
    ):
        return a.labels, a.log_p, b.log_p
    ka, kb = a.key_list(), b.key_list()
    index = {k: i for i, k in enumerate(ka)}
    if len(index) < len(ka):
        raise ValidationError("mechanism", ": a law lists one outcome twice")
    extra = [k for k in dict.fromkeys(kb) if k not in index]
    if len(set(kb)) < len(kb):
        raise ValidationError("mechanism", ": a law lists one outcome twice")
    outcomes = ka + extra
    index.update({k: len(ka) + j for j, k in enumerate(extra)})
    la = np.full(len(outcomes), -np.inf)
    la[: len(ka)] = a.log_p
    lb = np.full(len(outcomes), -np.inf)
    lb[[index[k] for k in kb]] = b.log_p
    return outcomes, la, lb


def _loss(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    both_impossible = np.isneginf(la) & np.isneginf(lb)
    with np.errstate(invalid="ignore"):
        loss = la - lb
    loss[both_impossible] = 0.0
    return loss


def _input_key(x: Any) -> Hashable | None:
    """A cache key for an input: itself if hashable, its bytes if a numpy array, else ``None`` (no
    cache)."""
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    try:
        hash(x)
    except TypeError:
        return None
    return ("value", type(x).__name__, x)


class _Laws:
    """The mechanism's laws, each input computed once (up to :data:`LAW_CACHE` kept)."""

    def __init__(self, mechanism: Any):
        if isinstance(mechanism, HasOutputLaw):
            self.call: Callable[[Any], Any] = mechanism.output_distribution
        elif callable(mechanism):
            self.call = mechanism
        else:
            raise ValidationError(
                "mechanism",
                "must be a callable x -> law, a sampler (x, size, rng) -> outputs, "
                "or an object with output_distribution(x); "
                f"got {type(mechanism).__name__}",
            )
        self.cache: dict[Hashable, _Law] = {}

    def __call__(self, x: Any) -> _Law:
        key = _input_key(x)
        if key is not None and key in self.cache:
            return self.cache[key]
        try:
            value = self.call(x)
        except ValidationError as error:
            raise ValidationError("mechanism", f"refused input {show(x)}: {error}") from error
        except Exception as error:
            raise ValidationError(
                "mechanism", f"raised {type(error).__name__} on input {show(x)}: {error}"
            ) from error
        law = _read_law(value, x)
        if key is not None:
            if len(self.cache) >= LAW_CACHE:
                del self.cache[next(iter(self.cache))]
            self.cache[key] = law
        return law


def output_distribution_of(mechanism: Any, x: Any) -> FiniteDistribution:
    """The exact output law of ``mechanism`` at ``x`` as a :class:`FiniteDistribution` (labels
    kept).

    Parameters
    ----------
    mechanism : callable or HasOutputLaw
        ``x -> law`` (a FiniteDistribution or ``{outcome: probability}``), or
        ``output_distribution(x)``.
    x : object

    Returns
    -------
    FiniteDistribution

    Raises
    ------
    ValidationError
        If the mechanism fails on ``x`` or gives no valid law (naming ``x``).
    """
    law = _Laws(mechanism)(x)
    labels = law.labels if law.labels is not None else law.key_list()
    return FiniteDistribution.from_log_weights(law.log_p, labels)


class _Worst:
    """The running worst (pair, order, outcome) of an exact audit."""

    def __init__(self) -> None:
        self.epsilon, self.largest_loss = -1.0, -1.0
        self.record: dict[str, Any] = {}
        self.delta_at_claim = 0.0

    def consider(
        self,
        x: Any,
        x2: Any,
        outcomes: Any,
        la: np.ndarray,
        lb: np.ndarray,
        loss: np.ndarray,
        delta: float,
    ) -> None:
        eps = epsilon_at_delta(la, loss, delta)
        i = int(np.argmax(loss))
        if eps > self.epsilon or (eps == self.epsilon and loss[i] > self.largest_loss):
            self.epsilon, self.largest_loss = eps, float(loss[i])
            outcome = outcomes[i]
            self.record = {
                "pair": (x, x2),
                "outcome": outcome.item() if isinstance(outcome, np.generic) else outcome,
                "probabilities": (float(np.exp(la[i])), float(np.exp(lb[i]))),
            }


def audit_finite(
    mechanism: Any,
    neighbours: Iterable[tuple[Any, Any]] | Neighbours,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    relation: str | None = None,
) -> PrivacyAudit:
    """Exact privacy audit over the pairs ``neighbours``, each in both orders (see the module
    docstring).

    ``audit.epsilon`` is the smallest eps for which every pair is (eps, ``delta``)-DP: the largest
    privacy loss when ``delta = 0``.  With a claimed ``epsilon``, ``audit.delta_at_claim`` is the
    smallest delta at that eps (hockey-stick divergence) over the pairs.

    Parameters
    ----------
    mechanism : callable or HasOutputLaw
        ``x -> law`` or an object with ``output_distribution(x)``; a law is a
        :class:`FiniteDistribution` or a mapping ``{outcome: probability}`` (hashable outcomes, any
        order; missing means 0).
    neighbours : Neighbours or iterable of pairs
    epsilon : float, optional
        The eps claimed (``>= 0``).
    delta : float, default 0
        The delta at which ``audit.epsilon`` is stated.
    relation : str, optional
        Words for the neighbouring relation (default: the one ``neighbours`` carries).

    Returns
    -------
    PrivacyAudit
        ``exact=True``; ``worst`` holds the pair, the outcome with the largest loss in the worst
        order and its two probabilities.

    Raises
    ------
    ValidationError
        On no pairs, something that is not a pair, a mechanism that fails or gives no valid law (the
        input named), or bad ``epsilon`` / ``delta``.

    Examples
    --------
    >>> from dpgames.privacy import KaryResponse
    >>> audit = audit_finite(KaryResponse(2, 1.0), [(0, 1)], epsilon=0.5)
    >>> round(audit.epsilon, 12), audit.satisfies(1.0), audit.refutes(0.5)
    (1.0, True, True)
    >>> round(audit.delta_at_claim, 6)  # H_0.5 = e/(1+e) (1 - e^(0.5 - 1))
    0.287649
    >>> law = lambda x: {("yes", x): 0.75, ("no", x): 0.25}   # tuple outcomes, disjoint supports
    >>> audit_finite(law, [(0, 1)]).epsilon
    inf
    """
    claim = None if epsilon is None else non_negative("epsilon", epsilon, allow_inf=True)
    delta = probability("delta", delta, allow_zero=True)
    pairs = as_neighbours(neighbours)
    laws, worst, count = _Laws(mechanism), _Worst(), 0
    for x, x2 in pairs:
        outcomes, la, lb = _aligned(laws(x), laws(x2))
        count += 1
        # the reverse order's loss is its negation (0 stays 0 where both are impossible)
        forward = _loss(la, lb)
        for first, second, lp, lq, loss in ((x, x2, la, lb, forward), (x2, x, lb, la, -forward)):
            worst.consider(first, second, outcomes, lp, lq, loss, delta)
            if claim is not None:
                worst.delta_at_claim = max(worst.delta_at_claim, _hockey_stick(lp, loss, claim))
    if count == 0:
        raise ValidationError("neighbours", "is empty: give at least one pair (x, x')")
    claimed = None if claim is None else (claim, delta)
    return PrivacyAudit(
        worst.epsilon,
        True,
        worst.record,
        count,
        delta,
        pairs.relation if relation is None else relation,
        None,
        claimed,
        None if claim is None else worst.delta_at_claim,
        "exact: the output laws compared outcome by outcome",
    )


def audit_privacy(
    mechanism: Any,
    neighbours: Iterable[tuple[Any, Any]] | Neighbours | None = None,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    rng: RNGLike = None,
    n: int | None = None,
    profiles: Iterable | None = None,
    search_samples: int | None = None,
    screen_samples: int | None = None,
    stream_samples: int | None = None,
    processes: int = 1,
    dask: Any = None,
    progress: bool | None = None,
) -> PrivacyAudit:
    """Audit the privacy of ``mechanism`` on neighbouring inputs: exact wherever an output law can
    be had, a certified black-box lower bound where only sampling is possible (see the module
    docstring).

    Parameters
    ----------
    mechanism : callable or object
        ``x -> law`` or an object with ``output_distribution(x)`` (exact path); or a sampler
        ``sampler(x, size, rng) -> array`` of ``size`` outputs: scalars, vectors, or finite labels
        (black box).  A callable is told apart by its number of required positional parameters (1 or
        3).
    neighbours : Neighbours or iterable of pairs, optional
        The pairs ``(x, x')``; e.g. :func:`~dpgames.privacy.neighbour_inputs.neighbouring_inputs`.
        May be omitted for a mechanism that declares its relation (:class:`DeclaresNeighbours`),
        given ``n`` or ``profiles``.
    epsilon : float, optional
        The eps claimed: reported with the audit (exact: with the smallest delta at it).
    delta : float, default 0
        The delta at which eps is audited (black box: certified as ``ln((p_low - delta) /
        q_high)``).
    samples : int, default 1,000,000
        Black box: certification samples per input (search and screening come on top).
    confidence : float, default 0.95
        Black box: the probability that the certified bound holds.
    rng : Generator, int or None
        Black box: the seed of every sampler call (same seed, same bound, serial or parallel).
    n, profiles : optional
        For a mechanism that declares its relation: every profile of ``n`` agents, or these
        profiles.
    search_samples, screen_samples, stream_samples, processes, dask, progress : optional
        Black box: see :func:`~dpgames.privacy.black_box.audit_black_box`.

    Returns
    -------
    PrivacyAudit
        ``audit.exact`` says which path ran.

    Raises
    ------
    ValidationError
        On a mechanism of neither form, no pairs, bad numbers, or a failure of the user's code
        (re-raised with the input that triggered it).

    Examples
    --------
    >>> import numpy as np
    >>> law = lambda x: {"yes": 0.75, "no": 0.25} if x else {"no": 0.75, "yes": 0.25}
    >>> bool(np.isclose(audit_privacy(law, [(0, 1)]).epsilon, np.log(3)))
    True
    >>> coin = lambda x, size, rng: np.where(rng.random(size) < 0.75, x, 1 - x)
    >>> audit = audit_privacy(coin, [(0, 1)], samples=100_000, rng=0)
    >>> audit.exact, bool(0.9 < audit.epsilon < np.log(3))
    (False, True)
    """
    if neighbours is None:
        if not isinstance(mechanism, DeclaresNeighbours):
            raise ValidationError(
                "neighbours", "are needed: give pairs (x, x') or neighbouring_inputs(...)"
            )
        neighbours = mechanism.neighbouring_reports(n=n, profiles=profiles)
    elif n is not None or profiles is not None:
        raise ValidationError(
            "n",
            "and profiles build the pairs of a mechanism that declares its relation; "
            "they cannot be given with neighbours",
        )
    if _is_sampler(mechanism):
        from dpgames.privacy.black_box import audit_black_box

        return audit_black_box(
            mechanism,
            neighbours,
            samples=samples,
            search_samples=search_samples,
            screen_samples=screen_samples,
            stream_samples=stream_samples,
            delta=delta,
            confidence=confidence,
            epsilon=epsilon,
            rng=rng,
            processes=processes,
            dask=dask,
            progress=progress,
            relation=neighbours.relation if isinstance(neighbours, Neighbours) else "",
        )
    return audit_finite(mechanism, neighbours, epsilon=epsilon, delta=delta)


def _is_sampler(mechanism: Any) -> bool:
    """A plain callable with three required positional parameters ``(x, size, rng)``."""
    if isinstance(mechanism, HasOutputLaw) or not callable(mechanism):
        return False
    arity = required_positional(mechanism, "mechanism")
    if arity not in (1, 3, None):
        raise ValidationError(
            "mechanism",
            f"must take one parameter (x -> law) or three (x, size, rng -> outputs); "
            f"it takes {arity}",
        )
    return arity == 3


def laplace_delta(epsilon: float, shift: float, scale: float) -> float:
    """Exact smallest delta at ``epsilon`` for Laplace noise of scale ``b`` on two inputs ``shift``
    apart: ``max(0, 1 - exp((eps - shift/b) / 2))`` (the hockey-stick divergence of two shifted
    Laplace laws). The privacy loss is ``(|y - shift| - |y|) / b``, with maximum ``shift / b``.

    Parameters
    ----------
    epsilon : float
        ``>= 0``, ``inf`` allowed.
    shift : float
        ``>= 0``: the distance of the two inputs (at most the sensitivity).
    scale : float
        ``b > 0``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On a negative or non-numeric argument.
    """
    scale, shift = positive("scale", scale), non_negative("shift", shift)
    exponent = (non_negative("epsilon", epsilon, allow_inf=True) - shift / scale) / 2
    if math.isnan(exponent):
        # eps = inf and shift / scale = inf: every eps is attained, delta 0 at inf
        return 0.0
    return 0.0 if exponent >= 0 else -math.expm1(exponent)


def laplace_privacy_loss(y: np.ndarray, shift: float, scale: float) -> np.ndarray:
    """``ln p(y) - ln p'(y)`` for Laplace(0, b) against Laplace(shift, b): ``(|y - shift| - |y|) /
    b``.

    Parameters
    ----------
    y : array_like
        Outputs (finite).
    shift : float
    scale : float
        ``b > 0``.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On non-finite outputs or a scale that is not > 0.
    """
    y = finite_array("y", y)
    return (np.abs(y - shift) - np.abs(y)) / positive("scale", scale)
