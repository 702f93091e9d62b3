"""A private vote on a line, mixed with a random dictator: a mechanism written with the public API
only.

``n`` voters each have a favourite alternative (her *peak*) among ``m`` positions ``0 .. m-1`` on a
line, and the utility ``u(t, o) = 1 - |t - o| / (m - 1)`` in ``[0, 1]`` for an alternative ``o``
(single-peaked preferences).  The mechanism, for a weight ``q`` in ``[0, 1]``:

* with probability ``1 - q``, the **exponential mechanism** on social welfare: alternative ``o``
  with probability proportional to ``exp(eps * W(o) / 2)``, ``W(o) = sum_i u(t_i, o)``.  One voter
  moves ``W`` by at most 1 (sensitivity 1), so this part is eps-DP (Dwork & Roth Thm 3.10), and its
  mode is the median peak (the welfare maximiser).  By eps-DP no voter gains more than ``(e^eps - 1)
  E[u] <= e^eps - 1`` by lying (Dwork & Roth Prop 10.1's argument, exact form);
* with probability ``q``, the **random dictator**: a voter drawn uniformly, and her reported peak.
  Lying never helps there and strictly hurts: it costs the liar ``|t - t'| / ((m - 1) n)``.

The mix is exactly truthful (no voter gains by any lie) once ``q`` outweighs the exponential
mechanism's gains, as in Nissim, Smorodinsky & Tennenholtz's mix with a commitment mechanism: voter
of type ``t`` lying ``t'`` gains ``(1 - q) G(t, t') - q |t - t'| / ((m - 1) n)``, so the least such
``q`` is ``max G / (G + |t - t'| / ((m - 1) n))`` over the lies with ``G > 0``
(:func:`least_dictator_weight`).  The random dictator reveals a report, so the mix is not eps-DP for
``q > 0``: its exact privacy loss is measured, not assumed.

:func:`voting_mechanism` is a :class:`dpgames.CustomMechanism`: dpgames' generic audits
(``dpgames.truthfulness_audit``, ``dpgames.testing.assert_truthful``) enumerate it exactly.
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax

import dpgames
from dpgames import FiniteDistribution


def utility_matrix(m: int) -> np.ndarray:
    """``U[t, o] = 1 - |t - o| / (m - 1)``: the utility of a voter with peak ``t`` for alternative
    ``o``."""
    positions = np.arange(m)
    return 1.0 - np.abs(positions[:, None] - positions[None, :]) / (m - 1)


def vote_law(counts: np.ndarray, epsilon: float, q: float) -> np.ndarray:
    """The mechanism's exact probabilities over the ``m`` alternatives, given the number of voters
    reporting each peak (``counts``, shape ``(..., m)``: a batch of profiles at once)."""
    counts = np.asarray(counts, dtype=float)
    welfare = counts @ utility_matrix(counts.shape[-1])  # W(o) for every alternative
    exponential = softmax(epsilon * welfare / 2.0, axis=-1)  # log-sum-exp inside: no overflow
    dictator = counts / counts.sum(axis=-1, keepdims=True)
    return (1.0 - q) * exponential + q * dictator


def voting_mechanism(m: int, epsilon: float, q: float = 0.0) -> dpgames.CustomMechanism:
    """The vote as a :class:`dpgames.CustomMechanism` on the peaks ``0 .. m-1`` (anonymous: its law
    depends only on how many voters report each peak)."""
    U = utility_matrix(m)

    def rule(reports: tuple) -> FiniteDistribution:
        return FiniteDistribution.from_probabilities(
            vote_law(np.bincount(reports, minlength=m), epsilon, q)
        )

    def utility(t: int, outcome: int) -> float:
        return float(U[t, outcome])

    return dpgames.CustomMechanism(
        rule,
        utility,
        types=range(m),
        anonymous=True,
        name=f"private median vote (eps={epsilon:g}, dictator q={q:g})",
    )


def misreport_gains(peaks: np.ndarray, m: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact gains of a voter of peak ``t`` (a row per alternative ``t``) reporting ``t'`` (a
    column), the others' reports fixed at ``peaks``, under the exponential mechanism alone and under
    the random dictator alone: two ``(m, m)`` arrays, NaN on the diagonal (no lie) and in rows of
    peaks nobody has."""
    U = utility_matrix(m)
    counts = np.bincount(peaks, minlength=m).astype(float)
    lied = counts + np.eye(m)[None, :, :] - np.eye(m)[:, None, :]  # [t, t'] = counts - e_t + e_t'
    exp_law = vote_law(lied, epsilon, 0.0)  # (m, m, m): law after each lie
    truthful = exp_law[np.arange(m), np.arange(m)]  # the law at the true profile
    em_gain = np.einsum("tlo,to->tl", exp_law, U) - (truthful * U).sum(axis=1, keepdims=True)
    dictator_gain = (U - np.diag(U)[:, None]) / peaks.size  # u(t, t') - u(t, t), w.p. 1/n
    undefined = (counts == 0)[:, None] | np.eye(m, dtype=bool)  # nobody's peak, or no lie
    em_gain[undefined], dictator_gain[undefined] = np.nan, np.nan
    return em_gain, dictator_gain


def least_dictator_weight(peaks: np.ndarray, m: int, epsilon: float) -> float:
    """The least ``q`` for which the mix is exactly truthful at this profile (every voter, every
    lie): ``max G / (G - D)`` over the lies with exponential-mechanism gain ``G > 0`` (``D < 0`` the
    random dictator's gain), 0 when no lie gains under the exponential mechanism alone."""
    em_gain, dictator_gain = misreport_gains(peaks, m, epsilon)
    gaining = em_gain > 0  # NaN compares False
    if not gaining.any():
        return 0.0
    return float(np.max(em_gain[gaining] / (em_gain[gaining] - dictator_gain[gaining])))
