"""The exponential mechanism with payments (Huang & Kannan 2012): exactly truthful, with money.

Outcome ``o`` with probability proportional to ``exp(beta W(o))``, ``W(o) = sum_i v_i(o) + offset(o)``
the reported welfare (``offset``: report-independent, e.g. minus a project's cost).  Agent ``i`` pays

    p_i = E[v_i(o)] - (1 / beta) (ln Z(v) - ln Z_{-i}(v_{-i})),

``Z`` the normaliser with all agents, ``Z_{-i}`` without ``i``.  Her utility from reporting ``v'``,

    E_{P'}[v_i] - p_i(v') = (1 / beta) [beta E_{P'}[W_true] + H(P')] - (1 / beta) ln Z_{-i},

is the entropy-regularised true welfare of the law ``P'`` her report induces, up to a term she cannot
influence; by the Gibbs variational principle the Gibbs law of the *true* valuations maximises it.  So
truthful reporting is a dominant strategy, exactly (VCG on the entropy-regularised welfare), for any
lie, not only lies inside the type space.  Individually rational: the truthful utility
``(1 / beta) ln E_{P_{-i}}[exp(beta v_i)]`` is at least ``E_{P_{-i}}[v_i] >= 0`` for non-negative
valuations (and, whatever their sign, at least what the agent gets by abstaining).

Valuations on an environment are the best-reaction utilities, shifted up by ``-min(0, min u)`` so that
they are non-negative (the worst outcome is worth 0); payments and the law do not depend on the shift.
The outcome is the exponential mechanism with ``eps / (2 Delta) = beta``: ``2 beta Delta``-DP in one
report (Dwork & Roth Thm 3.10); payments are not private.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.mechanisms.deviations import deviations, deviations_by_true_type, log_ratio_without
from dpgames.mechanisms.environment import Draw, Environment, Profile
from dpgames.privacy._checks import positive
from dpgames.privacy.distribution import FiniteDistribution, as_generator
from dpgames.privacy.guarantee import PrivacyGuarantee


def huang_kannan_payments(valuations: ArrayLike, beta: float, offset: ArrayLike | None = None) -> np.ndarray:
    """Each agent's payment for reported valuations (n agents x K outcomes, any real values): O(n K)."""
    v = np.asarray(valuations, dtype=float)
    beta = positive("beta", beta)
    if v.ndim != 2 or v.size == 0 or not np.isfinite(v).all():
        raise ValueError("valuations: need a finite n x K table")
    total = v.sum(axis=0) + (0.0 if offset is None else np.asarray(offset, dtype=float))
    log_z = logsumexp(beta * total)
    p = np.exp(beta * total - log_z)
    log_z_without = logsumexp(beta * (total[None, :] - v), axis=1)
    return v @ p - (log_z - log_z_without) / beta


class HuangKannan:
    """Huang & Kannan's mechanism on an environment, with exact law, payments and deviation utilities."""

    def __init__(self, environment: Environment, beta: float):
        self.environment = environment
        self.beta = positive("beta", beta)

    @cached_property
    def valuations(self) -> np.ndarray:
        """``v[t, o]`` (m x K), non-negative: best-reaction utilities shifted by ``-min(0, min u)``."""
        u = self.environment.best_utility
        return u - min(0.0, float(u.min()))

    @cached_property
    def sensitivity(self) -> float:
        """``Delta = max_o (max_t v[t, o] - min_t v[t, o])``: one report moves the welfare by at most this."""
        v = self.valuations
        return float(np.max(v.max(axis=0) - v.min(axis=0)))

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(2 * self.beta * self.sensitivity, 0.0,
                                "one agent's reported type changes; the outcome is the output (payments are not private)")

    def _log_law(self, profile: Profile) -> np.ndarray:
        self.environment._check(profile)
        logw = self.beta * (profile.counts @ self.valuations + self.environment.offset)
        return logw - logsumexp(logw)

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The exact law of the outcome (labels: outcome indices)."""
        return FiniteDistribution(self._log_law(profile))

    def payments(self, profile: Profile) -> np.ndarray:
        """Payment of one agent of each class (D): ``E[v_a] + (ln Z_{-a} - ln Z) / beta``."""
        log_p = self._log_law(profile)
        rows = profile.classes
        without = log_ratio_without(log_p, self.valuations, self.beta, rows)
        return self.valuations[rows] @ np.exp(log_p) + without / self.beta

    def agent_payments(self, profile: Profile) -> np.ndarray:
        """Every agent's payment (n)."""
        per_type = np.zeros(self.environment.n_types)
        per_type[profile.classes] = self.payments(profile)
        return per_type[profile.type_indices]

    def truthful_utilities(self, profile: Profile) -> np.ndarray:
        """Utility of one truthful agent of each class (D): ``(ln Z - ln Z_{-a}) / beta >= 0``."""
        log_p = self._log_law(profile)
        return -log_ratio_without(log_p, self.valuations, self.beta, profile.classes) / self.beta

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: quasi-linear utility ``E[v_a] - payment`` of each class reporting each type."""
        log_p = self._log_law(profile)
        rows = profile.classes
        v = self.valuations
        dev = deviations(log_p, v, self.beta, rows, [(v[rows], None), (None, v)])
        own, reported = dev.expectations
        return own - self._deviation_payments(log_p, rows, reported, dev.log_ratio)

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[a, t, x]`` the utility ``E[v_t] - payment`` of an agent of true type ``t``
        (any type) reporting ``x`` against the profile minus one agent of class ``a``.  The payment
        depends on the report and the others only (``E_{a->x}[v_x]`` is the ``t = x`` diagonal of
        ``E_{a->x}[v_t]``).  Exact; O(D m^2 K)."""
        log_p = self._log_law(profile)
        rows = profile.classes
        dev = deviations_by_true_type(log_p, self.valuations, self.beta, rows, [(self.valuations, None)])
        (own,) = dev.expectations
        reported = np.diagonal(own, axis1=1, axis2=2)
        return own - self._deviation_payments(log_p, rows, reported, dev.log_ratio)[:, None, :]

    def _deviation_payments(self, log_p, rows, reported, log_ratio) -> np.ndarray:
        """``D x m``: the payment after class ``a`` reports ``x``,
        ``E_{a->x}[v_x] - (ln Z(a->x) - ln Z_{-a}) / beta`` (``log_ratio = ln Z(a->x) - ln Z``)."""
        without = log_ratio_without(log_p, self.valuations, self.beta, rows)
        return reported - (log_ratio - without[:, None]) / self.beta

    def expected_objective(self, profile: Profile) -> float:
        """``E[welfare]`` (the environment's objective, unshifted) under truthful reports."""
        return float(self.distribution(profile).expect(self.environment.objective_values(profile)))

    def revenue(self, profile: Profile) -> float:
        """Total payments."""
        return float(self.payments(profile) @ profile.class_sizes)

    def run(self, profile: Profile, rng: np.random.Generator | int | None = None) -> Draw:
        """Draw an outcome; every agent reacts best (payments: :meth:`agent_payments`)."""
        s = int(self.distribution(profile).sample_indices(rng=as_generator(rng)))
        return Draw(s, self.environment.best_reaction[profile.type_indices, s])
