"""Exact privacy audits of finite mechanisms, and exact privacy loss of Laplace and Gaussian noise.

For two output distributions ``P`` and ``Q`` over the same finite outcomes:

* the privacy loss of outcome ``o`` is ``ln P(o) - ln Q(o)``; the mechanism is eps-DP on the pair
  exactly when the largest absolute loss, over both orders, is at most eps;
* the smallest delta for which it is (eps, delta)-DP on the pair is the hockey-stick divergence
  ``H_eps(P || Q) = sum_o max(0, P(o) - e^eps Q(o))``, in both orders (Barthe & Olmedo 2013;
  Balle & Wang 2018, Thm 5).

:func:`audit_finite` enumerates the given neighbouring pairs and reports both with the worst pair and
outcome.  A mechanism is a callable ``input -> FiniteDistribution`` or an object with an
``output_distribution(input)`` method.  For the continuous Laplace and Gaussian mechanisms the same
quantities have closed forms: :func:`laplace_delta` and
:func:`~dpgames.privacy.gaussian.gaussian_delta`.

:func:`audit_black_box` is the statistical auditor for mechanisms that can only be run: it samples two
neighbouring inputs and returns a Clopper-Pearson lower bound on eps (as in Jagielski, Ullman & Oprea
2020; Ding et al. 2018).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy import stats

from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.rng import as_generator
from dpgames.validation import ValidationError, finite_array, memory, non_negative, positive, positive_int, probability


def hockey_stick_divergence(p: FiniteDistribution, q: FiniteDistribution, epsilon: float) -> float:
    """``sum_o max(0, P(o) - e^eps Q(o))``, computed in log space as ``sum P(o) (1 - e^{eps - L(o)})``
    over the outcomes whose privacy loss ``L(o) = ln P(o) - ln Q(o)`` exceeds eps: the smallest delta for
    which the pair is (eps, delta)-indistinguishable in this order (Barthe & Olmedo 2013; Balle & Wang
    2018, Thm 5).

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
        If ``p`` or ``q`` is not a FiniteDistribution over the same number of outcomes, or ``epsilon`` < 0.
    """
    epsilon = non_negative("epsilon", epsilon, allow_inf=True)
    if not isinstance(p, FiniteDistribution):
        raise ValidationError("p", f"must be a FiniteDistribution, got {type(p).__name__}")
    loss = p.privacy_loss(q)
    over = loss > epsilon
    if not over.any():
        return 0.0
    with np.errstate(over="ignore"):
        terms = np.exp(p.log_probabilities[over]) * -np.expm1(epsilon - loss[over])
    return float(np.clip(terms.sum(), 0.0, 1.0))


def output_distribution_of(mechanism: Any, x: Any) -> FiniteDistribution:
    """The exact output distribution of ``mechanism`` on input ``x``: ``mechanism.output_distribution(x)``
    if it has that method, else ``mechanism(x)``.

    Parameters
    ----------
    mechanism : object or callable
    x : object
        An input of the mechanism.

    Returns
    -------
    FiniteDistribution

    Raises
    ------
    ValidationError
        If neither gives a FiniteDistribution (field ``"mechanism"``).
    """
    method = getattr(mechanism, "output_distribution", None)
    dist = method(x) if callable(method) else mechanism(x) if callable(mechanism) else None
    if not isinstance(dist, FiniteDistribution):
        raise ValidationError("mechanism", "must be a callable returning a FiniteDistribution or have an "
                                           f"output_distribution(x) method; got {type(dist).__name__} for input {x!r}")
    return dist


@dataclass(frozen=True)
class FiniteAudit:
    """What :func:`audit_finite` found.

    ``max_privacy_loss`` is the exact eps of the mechanism on the audited pairs, attained at
    ``worst_pair`` (inputs ``(x, x')``) and ``worst_outcome`` (``ln P_x(o) - ln P_x'(o)`` there).
    ``delta`` is the smallest delta at ``epsilon`` (``None`` if no ``epsilon`` was asked), attained at
    ``delta_pair`` (in the order ``H_eps(P_x || P_x')``).

    Examples
    --------
    >>> from dpgames.privacy import KaryResponse
    >>> audit = audit_finite(KaryResponse(2, 1.0), [(0, 1)], epsilon=0.5)
    >>> round(audit.max_privacy_loss, 12), audit.satisfies(1.0), audit.satisfies(0.5, 0.1)
    (1.0, True, False)
    >>> round(audit.delta, 6)  # H_0.5 = e/(1+e) (1 - e^(0.5 - 1))
    0.287649
    """

    max_privacy_loss: float
    worst_pair: tuple[Any, Any]
    worst_outcome: Any
    worst_probabilities: tuple[float, float]
    pairs_checked: int
    epsilon: float | None = None
    delta: float | None = None
    delta_pair: tuple[Any, Any] | None = None

    def satisfies(self, epsilon: float, delta: float = 0.0, tolerance: float = 1e-9) -> bool:
        """Whether the audited pairs are (epsilon, delta)-DP.

        Parameters
        ----------
        epsilon : float
        delta : float, default 0
            Needs the audit's :attr:`epsilon` equal to ``epsilon`` unless the privacy loss is already at most
            ``epsilon``.
        tolerance : float, default 1e-9
            Slack for rounding, on eps and on delta.

        Returns
        -------
        bool

        Raises
        ------
        ValidationError
            If the answer needs the delta at an eps the audit did not compute (re-run it at ``epsilon``).
        """
        if self.max_privacy_loss <= epsilon + tolerance:
            return True
        if self.epsilon is None or not math.isclose(self.epsilon, epsilon):
            raise ValidationError("epsilon", f": this audit computed delta at epsilon={self.epsilon}; "
                                             f"re-run it at {epsilon}")
        assert self.delta is not None   # computed with epsilon
        return self.delta <= delta + tolerance

    def _repr_html_(self) -> str:
        """Jupyter: the audit's findings as a table."""
        from dpgames.display import html_table  # the leaf display module, loaded on first show

        rows = [("largest privacy loss (exact)", self.max_privacy_loss), ("pairs checked", self.pairs_checked),
                ("worst pair", f"{_show(self.worst_pair[0])} vs {_show(self.worst_pair[1])}"),
                ("worst outcome", _show(self.worst_outcome))]
        if self.delta is not None:
            pair = cast(tuple[Any, Any], self.delta_pair)   # set with delta
            rows += [(f"smallest delta at eps = {self.epsilon:g}", self.delta),
                     ("its pair", f"{_show(pair[0])} vs {_show(pair[1])}")]
        return html_table(rows, title="FiniteAudit")

    def describe(self) -> str:
        """The findings in one sentence: the largest loss with its inputs, outcome and probabilities, and the
        delta with its pair if computed.

        Returns
        -------
        str
        """
        x, x2 = map(_show, self.worst_pair)
        p, q = self.worst_probabilities
        text = (f"largest privacy loss {self.max_privacy_loss:.6g} over {self.pairs_checked} neighbouring pairs, "
                f"at inputs {x} vs {x2}, outcome {_show(self.worst_outcome)} (probabilities {p:.6g} vs {q:.6g})")
        if self.delta is not None:
            pair = cast(tuple[Any, Any], self.delta_pair)   # set with delta
            text += (f"; smallest delta at eps={self.epsilon:g} is {self.delta:.6g}, "
                     f"at inputs {_show(pair[0])} vs {_show(pair[1])}")
        return text


def _show(value: Any) -> str:
    """A short text for an input or outcome (numpy scalars and arrays without their type names)."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ", threshold=20)
    return repr(value)


def audit_finite(mechanism: Any | Callable[[Any], FiniteDistribution],
                 neighbours: Iterable[tuple[Any, Any]], epsilon: float | None = None) -> FiniteAudit:
    """Exact audit over the pairs ``neighbours`` (both orders of each pair are checked).

    Parameters
    ----------
    mechanism : object or callable
        A callable ``input -> FiniteDistribution`` or an object with ``output_distribution(input)``.
    neighbours : iterable of pairs
        The neighbouring inputs ``(x, x')`` to check.
    epsilon : float, optional
        If given, the smallest delta at this eps is computed too (hockey-stick divergence).

    Returns
    -------
    FiniteAudit
        The largest privacy loss with the worst pair and outcome and, with ``epsilon``, the smallest delta
        with its worst pair.

    Raises
    ------
    ValidationError
        On no pairs, a pair that is not a pair, laws over different outcomes, or a mechanism that gives
        no FiniteDistribution.
    """
    if epsilon is not None:
        epsilon = non_negative("epsilon", epsilon)
    worst: tuple[float, Any, Any, tuple[float, float]] = (-1.0, None, None, (0.0, 0.0))
    worst_delta, delta_pair, count = -1.0, None, 0
    try:
        pairs = iter(neighbours)
    except TypeError:
        raise ValidationError("neighbours", "must be an iterable of pairs (x, x')") from None
    for pair in pairs:
        try:
            x, x2 = pair
        except (TypeError, ValueError):
            raise ValidationError("neighbours", f": each neighbour must be a pair (x, x'), got {pair!r}") from None
        p, q = output_distribution_of(mechanism, x), output_distribution_of(mechanism, x2)
        if len(p) != len(q) or not np.array_equal(p.outcomes, q.outcomes):
            raise ValidationError("mechanism", f": inputs {x!r} and {x2!r} give distributions over different outcomes")
        count += 1
        loss = p.privacy_loss(q)
        i = int(np.argmax(np.abs(loss)))
        if abs(loss[i]) > worst[0]:
            first, second = ((x, x2), (p, q)) if loss[i] >= 0 else ((x2, x), (q, p))
            worst = (float(abs(loss[i])), first, second[0].outcomes[i],
                     (float(second[0].probabilities[i]), float(second[1].probabilities[i])))
        if epsilon is not None:
            for (a, b), (pa, pb) in (((x, x2), (p, q)), ((x2, x), (q, p))):
                d = hockey_stick_divergence(pa, pb, epsilon)
                if d > worst_delta:
                    worst_delta, delta_pair = d, (a, b)
    if count == 0:
        raise ValidationError("neighbours", "is empty: give at least one pair (x, x')")
    return FiniteAudit(worst[0], worst[1], worst[2], worst[3], count, epsilon,
                       None if epsilon is None else worst_delta, delta_pair)


def laplace_delta(epsilon: float, shift: float, scale: float) -> float:
    """Exact smallest delta at ``epsilon`` for Laplace noise of scale ``b`` on two inputs ``shift`` apart:
    ``max(0, 1 - exp((eps - shift/b) / 2))`` (the hockey-stick divergence of two shifted Laplace laws).
    The privacy loss is ``(|y - shift| - |y|) / b``, with maximum ``shift / b``.

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
    if math.isnan(exponent):  # eps = inf and shift / scale = inf: every eps is attained, delta 0 at inf
        return 0.0
    return 0.0 if exponent >= 0 else -math.expm1(exponent)


def laplace_privacy_loss(y: np.ndarray, shift: float, scale: float) -> np.ndarray:
    """``ln p(y) - ln p'(y)`` for Laplace(0, b) against Laplace(shift, b): ``(|y - shift| - |y|) / b``.

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


# --- statistical (black-box) audit ------------------------------------------------------------------

Sampler = Callable[[Any, int, np.random.Generator], np.ndarray]
Event = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class StatisticalAudit:
    """A lower bound on the eps of a black-box mechanism, valid with probability ``confidence``:
    ``ln((p_low - delta) / q_high)`` with ``p_low`` a Clopper-Pearson lower bound on ``Pr[M(x) in E]``
    and ``q_high`` an upper bound on ``Pr[M(x') in E]`` (each at ``1 - (1 - confidence)/2``).

    Examples
    --------
    >>> def coin(x, size, rng):  # randomized response with eps = ln 3 on one bit x
    ...     return np.where(rng.random(size) < 0.75, x, 1 - x)
    >>> audit = audit_black_box(coin, 1, 0, 20_000, event=lambda y: y == 1, rng=0)
    >>> bool(0.9 < audit.epsilon_lower_bound < np.log(3)), audit.refutes(0.5)
    (True, True)
    """

    epsilon_lower_bound: float
    confidence: float
    event: str
    counts: tuple[int, int]
    samples: int

    def refutes(self, epsilon: float) -> bool:
        """Whether the samples show (at the stated confidence) that the mechanism is not eps-DP.

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        bool
        """
        return self.epsilon_lower_bound > epsilon


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)``, each holding with probability ``confidence``.

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
    """
    alpha = 1 - confidence
    lower = 0.0 if successes == 0 else float(stats.beta.ppf(alpha, successes, trials - successes + 1))
    upper = 1.0 if successes == trials else float(stats.beta.ppf(1 - alpha, successes + 1, trials - successes))
    return lower, upper


def _threshold_events(train_x: np.ndarray, train_y: np.ndarray, delta: float) -> tuple[Event, str]:
    """The event ``{y >= c}`` or ``{y <= c}`` (c among the pooled quantiles) with the largest estimated
    ``ln((p - delta) / q)`` on the training halves (add-one smoothing)."""
    pooled = np.concatenate([train_x, train_y])
    cuts = np.unique(np.quantile(pooled, np.linspace(0.001, 0.999, 199)))
    sx, sy = np.sort(train_x), np.sort(train_y)
    n = train_x.size
    best, choice = -np.inf, None
    for name, count in (("y >= c", lambda s: s.size - np.searchsorted(s, cuts, side="left")),
                        ("y <= c", lambda s: np.searchsorted(s, cuts, side="right"))):
        p, q = (count(sx) + 1) / (n + 2), (count(sy) + 1) / (n + 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            score = np.log(np.clip(p - delta, 0, None) / q)
        i = int(np.nanargmax(score))
        if score[i] > best:
            best, choice = score[i], (name, cuts[i])
    name, c = cast(tuple[str, float], choice)   # None only if every score is -inf: unpacking fails as before
    event = (lambda y: y >= c) if name == "y >= c" else (lambda y: y <= c)
    return event, name.replace("c", f"{c:.6g}")


def audit_black_box(mechanism: Sampler, x: Any, x_prime: Any, samples: int = 200_000, *,
                    delta: float = 0.0, confidence: float = 0.95, event: Event | None = None,
                    rng: np.random.Generator | int | None = None) -> StatisticalAudit:
    """Run ``mechanism(input, size, rng)`` (returning ``size`` outputs) ``samples`` times on ``x`` and on
    ``x_prime`` and return a lower bound on eps at ``confidence`` (Clopper-Pearson).

    ``event`` maps outputs to booleans; if omitted, half of the samples choose a threshold event on
    scalar outputs (``y >= c`` or ``y <= c``, both orders of the inputs) and the other half, independent
    of that choice, give the bound.  A correct eps-DP mechanism yields a bound above eps with
    probability at most ``1 - confidence``.

    Parameters
    ----------
    mechanism : callable
        ``(input, size, rng) -> array`` of ``size`` outputs.
    x, x_prime : object
        Two neighbouring inputs.
    samples : int, default 200,000
    delta : float, default 0
    confidence : float, default 0.95
    event : callable, optional
    rng : Generator, int or None

    Returns
    -------
    StatisticalAudit

    Raises
    ------
    ValidationError
        On bad sizes or probabilities, too few samples for automatic events, outputs of the wrong number,
        or automatic events on non-scalar outputs.
    """
    samples = positive_int("samples", samples)
    memory("samples", 4 * samples, what=f"{samples:,} outputs on each of two inputs")
    if event is None and samples < 4:
        raise ValidationError("samples", f"must be at least 4 with automatic events (half choose the event), got {samples}")
    confidence = probability("confidence", confidence)
    delta = probability("delta", delta, allow_zero=True)
    gen = as_generator(rng)
    ox, oy = np.asarray(mechanism(x, samples, gen)), np.asarray(mechanism(x_prime, samples, gen))
    if ox.shape[:1] != (samples,) or oy.shape[:1] != (samples,):
        raise ValidationError("mechanism", f"must return {samples} outputs for size={samples}")
    if event is None:
        if ox.ndim != 1:
            raise ValidationError("event", ": automatic events need scalar outputs; give an event for other outputs")
        half = samples // 2
        forward, name_f = _threshold_events(ox[:half], oy[:half], delta)
        backward, name_b = _threshold_events(oy[:half], ox[:half], delta)
        ox, oy = ox[half:], oy[half:]
        candidates = [(ox, oy, forward, f"{name_f} (x vs x')"), (oy, ox, backward, f"{name_b} (x' vs x)")]
        tail = 1 - (1 - confidence) / 2  # two candidate events: Bonferroni
    else:
        candidates = [(ox, oy, event, "given event (x vs x')")]
        tail = confidence
    best = None
    for first, second, ev, name in candidates:
        k1, k2 = int(np.count_nonzero(ev(first))), int(np.count_nonzero(ev(second)))
        per_side = 1 - (1 - tail) / 2
        p_low, _ = clopper_pearson(k1, first.size, per_side)
        _, q_high = clopper_pearson(k2, second.size, per_side)
        bound = math.log((p_low - delta) / q_high) if p_low > delta else 0.0
        if best is None or bound > best.epsilon_lower_bound:
            best = StatisticalAudit(max(bound, 0.0), confidence, name, (k1, k2), first.size)
    assert best is not None   # candidates is never empty
    return best
