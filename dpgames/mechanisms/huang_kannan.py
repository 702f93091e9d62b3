"""The exponential mechanism with payments (Huang & Kannan 2012): exactly truthful, with money.

Outcome ``o`` with probability proportional to ``exp(beta W(o))``, ``W(o) = sum_i v_i(o) +
offset(o)`` the reported welfare (``offset``: report-independent, e.g. minus a project's cost).
Agent ``i`` pays

    p_i = E[v_i(o)] - (1 / beta) (ln Z(v) - ln Z_{-i}(v_{-i})),

``Z`` the normaliser with all agents, ``Z_{-i}`` without ``i``.  Her utility from reporting ``v'``,

    E_{P'}[v_i] - p_i(v') = (1 / beta) [beta E_{P'}[W_true] + H(P')] - (1 / beta) ln Z_{-i},

is the entropy-regularised true welfare of the law ``P'`` her report induces, up to a term she
cannot influence; by the Gibbs variational principle the Gibbs law of the *true* valuations
maximises it.  So truthful reporting is a dominant strategy, exactly (VCG on the entropy-regularised
welfare), for any lie, not only lies inside the type space.  Individually rational: the truthful
utility ``(1 / beta) ln E_{P_{-i}}[exp(beta v_i)]`` is at least ``E_{P_{-i}}[v_i] >= 0`` for
non-negative valuations (and, whatever their sign, at least what the agent gets by abstaining).

Valuations on an environment are the best-reaction utilities, shifted up by ``-min(0, min u)`` so
that they are non-negative (the worst outcome is worth 0); payments and the law do not depend on the
shift. The outcome is the exponential mechanism with ``eps / (2 Delta) = beta``: ``2 beta Delta``-DP
in one report (Dwork & Roth Thm 3.10); payments are not private.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.mechanisms.deviations import deviations, deviations_by_true_type, log_ratio_without
from dpgames.mechanisms.environment import OUTCOME_NEIGHBOURING, Draw, Environment, Profile
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, positive

#: Largest ``beta * |v - c|`` for the ``log1p(E[expm1(.)])`` form of the log-partition gap.
_SMALL_EXPONENT = 1.0


def scaled_log_mgf(log_q: np.ndarray, values: np.ndarray, beta: float) -> np.ndarray:
    """``(1 / beta) ln E_q[exp(beta v)]`` for each row (a normalised log-law ``log_q`` and values
    ``v``, R x K each): the gap ``(ln Z - ln Z_{-i}) / beta`` of Huang & Kannan's payment.

    Stable for every beta: with ``c`` the mid-range of the row, it is ``c + ln E_q[e^{beta (v - c)}]
    / beta``, the logarithm taken as ``log1p(E_q[expm1(x)])`` while ``|x| <= 1`` (no cancellation as
    beta -> 0, where the naive difference of two log-sum-exps loses ``1e-16 / beta`` of the scale)
    and as a log-sum-exp beyond (no overflow as beta -> infinity).  Absolute error about 1e-16 times
    the spread."""
    c = (values.max(axis=1) + values.min(axis=1)) / 2
    x = beta * (values - c[:, None])
    out = np.empty(values.shape[0])
    small = np.abs(x).max(axis=1) <= _SMALL_EXPONENT
    out[small] = np.log1p(np.sum(np.exp(log_q[small]) * np.expm1(x[small]), axis=1)) / beta
    out[~small] = logsumexp(log_q[~small] + x[~small], axis=1) / beta
    return c + out


def _expm1_minus_x(x: np.ndarray) -> np.ndarray:
    """``e^x - 1 - x`` with full relative precision (a Taylor series near 0)."""
    series = np.zeros_like(x)
    term = x * x / 2
    for j in range(3, 18):
        series += term
        term = term * x / j
    return np.where(np.abs(x) < 0.1, series, np.expm1(x) - x)


def gibbs_payments(
    log_q: np.ndarray, values: np.ndarray, beta: float, log_p: np.ndarray
) -> np.ndarray:
    """``E_P[v] - (1 / beta) ln E_q[exp(beta v)]`` per row, ``P`` the law ``q`` tilted by ``exp(beta
    v)``: Huang & Kannan's payment with ``q`` the law without the agent.

    As beta -> 0 the payment is ``beta Var_q(v) / 2 + O(beta^2)``, far below the two terms, so it is
    computed without subtracting them: with ``d = v - E_q[v]``, ``x = beta d``, ``A =
    E_q[expm1(x)]``, ``B = E_q[d expm1(x)]``, ``G = E_q[expm1(x) - x]`` and ``delta = E_q[d]``
    (zero but for rounding), ``p = B / (1 + A) - log1p(G) / beta + delta / (1 + A) - log1p(beta
    delta / (1 + G)) / beta``, every term free of cancellation: relative precision ~1e-15 for every
    beta.  For ``beta |d| > 1`` the plain difference loses nothing (the payment is then comparable
    to the spread); ``log_p``, the tilted law itself (the mechanism's law), gives ``E_P[v]`` there
    without re-tilting ``q``."""
    q = np.exp(log_q)
    c = np.sum(q * values, axis=1)
    d = values - c[:, None]
    x = beta * d
    out = np.empty(values.shape[0])
    small = np.abs(x).max(axis=1) <= _SMALL_EXPONENT
    if small.any():
        qs, ds, xs = q[small], d[small], x[small]
        em1 = np.expm1(xs)
        a, b = np.sum(qs * em1, axis=1), np.sum(qs * ds * em1, axis=1)
        g, delta = np.sum(qs * _expm1_minus_x(xs), axis=1), np.sum(qs * ds, axis=1)
        out[small] = (
            b / (1 + a)
            - np.log1p(g) / beta
            + delta / (1 + a)
            - np.log1p(beta * delta / (1 + g)) / beta
        )
    if (~small).any():
        out[~small] = values[~small] @ np.exp(log_p) - scaled_log_mgf(
            log_q[~small], values[~small], beta
        )
    return out


def _log_law_without(centred: np.ndarray, values: np.ndarray, beta: float) -> np.ndarray:
    """Rows: the normalised log-law once one agent with values ``values[r]`` is removed, from the
    centred welfare ``W - max W`` (welfare differences first, one rounding by beta after)."""
    without = centred[None, :] - values
    log_q = beta * (without - without.max(axis=1, keepdims=True))
    return log_q - logsumexp(log_q, axis=1, keepdims=True)


def huang_kannan_payments(
    valuations: ArrayLike, beta: float, offset: ArrayLike | None = None
) -> np.ndarray:
    """Each agent's payment for reported valuations (n agents x K outcomes, any real values): O(n
    K).

    ``p_i = E_P[v_i] - (1 / beta) ln E_{P_{-i}}[exp(beta v_i)]``, to ~1e-15 relative for every beta
    (see :func:`gibbs_payments`).

    Parameters
    ----------
    valuations : array_like, shape (n, K)
        Each agent's reported value of each outcome (finite).
    beta : float
        The inverse temperature, ``> 0``.
    offset : array_like, shape (K,), optional
        A report-independent welfare term per outcome (e.g. minus a cost).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    ValidationError
        If the table is not a finite n x K array, ``beta`` is not ``> 0``, or ``beta`` times the
        welfare leaves the float range.

    Examples
    --------
    Two agents, two outcomes, each wanting a different one: the law is uniform; without agent 1 it
    is ``(1, e) / (1 + e)``, so ``p_1 = 1/2 - ln(2e / (1 + e))``.

    >>> import math
    >>> from dpgames.mechanisms.huang_kannan import huang_kannan_payments
    >>> paid = huang_kannan_payments([[1.0, 0.0], [0.0, 1.0]], beta=1.0)
    >>> bool(abs(paid[0] - (0.5 - math.log(2 * math.e / (1 + math.e)))) < 1e-15)
    True
    """
    try:
        v = np.asarray(valuations, dtype=float)
    except (TypeError, ValueError, OverflowError):
        v = np.full(1, np.nan)  # refused just below, with the one message
    beta = positive("beta", beta)
    if v.ndim != 2 or v.size == 0 or not np.isfinite(v).all():
        raise ValidationError("valuations", ": need a finite n x K table")
    total = v.sum(axis=0) + (0.0 if offset is None else finite_array("offset", offset))
    if not np.isfinite(beta * total).all():
        raise ValidationError(
            "valuations", "are too large: beta times the welfare exceeds the float range"
        )
    centred = total - total.max()  # welfare differences first: beta multiplies them once
    log_p = beta * centred - logsumexp(beta * centred)
    return gibbs_payments(_log_law_without(centred, v, beta), v, beta, log_p)


class HuangKannan:
    """Huang & Kannan's mechanism on an environment, with exact law, payments and deviation
    utilities.

    The outcome is the Gibbs law ``~ exp(beta W(o))`` of the reported welfare; the payments make
    truthful reporting a dominant strategy, exactly (see the module docstring; Huang & Kannan 2012).

    Parameters
    ----------
    environment : Environment
        Outcomes, types and reactions; valuations are the best-reaction utilities (shifted to be
        non-negative), the offset a report-independent welfare term (e.g. minus a cost).
    beta : float
        Inverse temperature, ``> 0``: larger is closer to the welfare optimum and less private
        (``2 beta Delta``-DP).

    Raises
    ------
    ValidationError
        If ``beta`` is not a finite number ``> 0``.

    Examples
    --------
    >>> from dpgames import HuangKannan, truthfulness_audit
    >>> from dpgames.mechanisms import public_project_environment
    >>> env = public_project_environment(
    ...     [[0.0, 1.0, 0.3], [0.0, 0.2, 1.0]],
    ...     ["none", "park", "library"],
    ...     types=["walker", "reader"],
    ...     cost=[0.0, 0.5, 0.8],
    ... )
    >>> profile = env.profile(["walker", "walker", "reader"])
    >>> hk = HuangKannan(env, beta=2.0)
    >>> hk.distribution(profile).probabilities.round(3).tolist()   # none, park, library
    [0.028, 0.834, 0.138]
    >>> hk.payments(profile).round(4).tolist()                    # one walker, one reader
    [0.1104, 0.0541]
    >>> truthful = truthfulness_audit(hk, profile, true_types="all")
    >>> truthful.is_truthful(), hk.guarantee.epsilon             # no lie gains; 2 beta Delta
    (True, 3.2)
    """

    def __init__(self, environment: Environment, beta: float):
        self.environment = environment
        self.beta = positive("beta", beta)

    @cached_property
    def valuations(self) -> np.ndarray:
        """``v[t, o]`` (m x K), non-negative: best-reaction utilities shifted by ``-min(0, min
        u)``."""
        u = self.environment.best_utility
        return u - min(0.0, float(u.min()))

    @cached_property
    def sensitivity(self) -> float:
        """``Delta = max_o (max_t v[t, o] - min_t v[t, o])``: one report moves the welfare by at
        most this."""
        v = self.valuations
        return float(np.max(v.max(axis=0) - v.min(axis=0)))

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``2 beta Delta``-DP in one report for the outcome: the Gibbs law is the exponential
        mechanism with ``eps / (2 Delta) = beta`` (Dwork & Roth Thm 3.10).  The payments are not
        private."""
        return PrivacyGuarantee(
            2 * self.beta * self.sensitivity,
            0.0,
            Neighbouring.REPLACE_ONE.described(
                OUTCOME_NEIGHBOURING + " (payments are not private)"
            ),
        )

    def _centred_welfare(self, profile: Profile) -> np.ndarray:
        """``W - max W`` for the reported welfare ``W``.  The law and every law after a lie are
        built from welfare differences, multiplied by beta once: at beta W ~ 1e7, beta W - const
        would carry ~1e-9 of rounding into the probabilities (and "untruthful" gains of that
        size)."""
        self.environment._check(profile)
        welfare = profile.counts @ self.valuations + self.environment.offset
        return welfare - welfare.max()

    def _log_law(self, profile: Profile) -> np.ndarray:
        logw = self.beta * self._centred_welfare(profile)
        return logw - logsumexp(logw)

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The exact law of the outcome (labels: outcome indices)."""
        return FiniteDistribution(self._log_law(profile))

    def payments(self, profile: Profile) -> np.ndarray:
        """Payment of one agent of each class (D): ``E[v_a] + (ln Z_{-a} - ln Z) / beta``.

        Parameters
        ----------
        profile : Profile
            The reported types.

        Returns
        -------
        numpy.ndarray, shape (D,)
            One payment per class (``profile.classes``); :meth:`agent_payments` gives every agent's.

        Raises
        ------
        ValidationError
            If ``profile`` is not a profile of this environment.
        """
        centred = self._centred_welfare(profile)  # checks the profile first
        v = self.valuations[profile.classes]
        return gibbs_payments(
            _log_law_without(centred, v, self.beta), v, self.beta, self._log_law(profile)
        )

    def _gap(self, centred: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``(ln Z - ln Z_{-a}) / beta`` for each class ``a`` in ``rows``, stably
        (:func:`scaled_log_mgf`)."""
        v = self.valuations[rows]
        return scaled_log_mgf(_log_law_without(centred, v, self.beta), v, self.beta)

    def agent_payments(self, profile: Profile) -> np.ndarray:
        """Every agent's payment (n)."""
        per_type = np.zeros(self.environment.n_types)
        per_type[profile.classes] = self.payments(profile)
        return per_type[profile.type_indices]

    def truthful_utilities(self, profile: Profile) -> np.ndarray:
        """Utility of one truthful agent of each class (D): ``(ln Z - ln Z_{-a}) / beta >= 0``."""
        return self._gap(self._centred_welfare(profile), profile.classes)

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: quasi-linear utility ``E[v_a] - payment`` of each class reporting each
        type."""
        centred = self._centred_welfare(profile)
        rows = profile.classes
        v = self.valuations
        dev = deviations(
            self.beta * centred, v, self.beta, rows, [(v[rows], None), (None, v)], centred
        )
        own, reported = dev.expectations
        return own - self._deviation_payments(centred, rows, reported, dev.log_ratio)

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[a, t, x]`` the utility ``E[v_t] - payment`` of an agent of true type
        ``t`` (any type) reporting ``x`` against the profile minus one agent of class ``a``.  The
        payment depends on the report and the others only (``E_{a->x}[v_x]`` is the ``t = x``
        diagonal of ``E_{a->x}[v_t]``).  Exact; O(D m^2 K)."""
        centred = self._centred_welfare(profile)
        rows = profile.classes
        dev = deviations_by_true_type(
            self.beta * centred,
            self.valuations,
            self.beta,
            rows,
            [(self.valuations, None)],
            centred,
        )
        (own,) = dev.expectations
        reported = np.diagonal(own, axis1=1, axis2=2)
        return own - self._deviation_payments(centred, rows, reported, dev.log_ratio)[:, None, :]

    def _deviation_payments(self, centred, rows, reported, log_ratio) -> np.ndarray:
        """``D x m``: the payment after class ``a`` reports ``x``,
        ``E_{a->x}[v_x] - (ln Z(a->x) - ln Z_{-a}) / beta`` (``log_ratio = ln Z(a->x) - ln Z``)."""
        v, beta = self.valuations, self.beta
        c = (v.max(axis=1) + v.min(axis=1)) / 2
        x = beta * (v - c[:, None])
        if np.abs(x).max() > _SMALL_EXPONENT:  # no cancellation: the log-partitions differ by > ~1
            without = log_ratio_without(beta * centred, v, beta, rows)
            return reported - (log_ratio - without[:, None]) / beta
        # (1 / beta) ln E_{Q_a}[e^{beta v_x}] with Q_a the law without a: a matrix product of
        # expm1's.
        q = np.exp(_log_law_without(centred, v[rows], beta))
        return reported - (c[None, :] + np.log1p(q @ np.expm1(x).T) / beta)

    def rounding_tolerance(self, profile: Profile) -> float:
        """Gains below this are float rounding, not incentives: the log-law is formed from ``beta
        x`` welfare, which float64 holds to ``eps_mach beta W`` (``W <= n Delta``), so every
        probability, and with it every expected utility, is exact only to about ``4 eps_mach beta n
        Delta U`` (``U = max(1, largest valuation)``).  Negligible at ordinary ``beta``; at ``beta W
        ~ 1e7`` it is ~1e-9, the size of the rounding the audits meet there."""
        u = max(1.0, float(self.valuations.max()))
        return 4 * float(np.finfo(float).eps) * self.beta * profile.n * self.sensitivity * u

    def expected_objective(self, profile: Profile) -> float:
        """``E[welfare]`` (the environment's objective, unshifted) under truthful reports."""
        return float(self.distribution(profile).expect(self.environment.objective_values(profile)))

    def revenue(self, profile: Profile) -> float:
        """Total payments."""
        return float(self.payments(profile) @ profile.class_sizes)

    def run(self, profile: Profile, rng: RNGLike = None) -> Draw:
        """Draw an outcome; every agent reacts best (payments: :meth:`agent_payments`)."""
        s = int(self.distribution(profile).sample_indices(rng=as_generator(rng)))
        return Draw(s, self.environment.best_reaction[profile.type_indices, s])
