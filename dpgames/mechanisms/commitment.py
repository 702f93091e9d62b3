"""The commitment (punishing) mechanism ``M^P`` of Nissim, Smorodinsky & Tennenholtz (2012).

``M^P`` ignores the reports when choosing the outcome: ``s`` is uniform on the punishing set ``P``
(by default every outcome).  It uses the reports only to *force reactions*: agent ``i`` must react
as her reported type would, ``r(t'_i, s)``.  A truthful agent reacts best; a liar is forced into a
worse reaction whenever ``r(t'_i, s)`` is not optimal for her true type, so lying never pays under
``M^P``.

The gap (Dwork & Roth 10.2.3)

    gamma = min over t != t' of max over s in P of [u(t, s, r(t, s)) - u(t, s, r(t', s))]

lower-bounds the loss of any lie: the separating outcome is drawn with probability ``1 / |P|``, so a
lie costs at least ``gamma / |P|`` in expectation.  ``gamma = 0`` means some pair of types is never
told apart by the punishing outcomes: then mixing with ``M^P`` cannot make a mechanism exactly
truthful, for any ``q < 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.environment import OUTCOME_NEIGHBOURING, Draw, Environment, Profile
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError

_BLOCK_ELEMENTS = 1 << 23


@dataclass(frozen=True)
class Gap:
    """The gap ``gamma`` and the pair of types (indices and labels) attaining it.

    ``outcome`` is the punishing outcome that separates the pair most (``None`` when ``gamma = 0``).

    Examples
    --------
    One facility on a line: every agent walks to it whatever she reports, so no lie is ever
    punished.

    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import facility_location_environment, line_graph
    >>> gap = CommitmentMechanism(facility_location_environment(line_graph(4), k=1)).gap()
    >>> gap.gamma, gap.diagnosis.startswith("gamma = 0: types 0 and 1 are never told apart")
    (0.0, True)
    """

    gamma: float
    true_type: int
    lie: int
    true_label: object
    lie_label: object
    outcome: int | None
    n_punishing: int

    @property
    def diagnosis(self) -> str | None:
        """Why no ``q < 1`` makes the mix exactly truthful, or ``None`` when ``gamma > 0``."""
        if self.gamma > 0:
            return None
        return (
            f"gamma = 0: types {self.true_label!r} and {self.lie_label!r} are never told "
            "apart by the "
            f"punishing outcomes (an agent of type {self.true_label!r} loses nothing under M^P by "
            f"reporting {self.lie_label!r}), so no q < 1 makes the mix exactly truthful"
        )


class CommitmentMechanism:
    """``M^P``: the outcome uniform on the punishing set, reactions forced to ``r(t'_i, s)``.

    Exactly truthful (weakly) by construction, and 0-DP in the outcome; its exact expected utilities
    are :meth:`forced_utility`, its gap ``gamma`` (how much the worst lie loses) :meth:`gap`.  Mixed
    with the exponential mechanism it makes :class:`~dpgames.mechanisms.nst_mix.NSTMix`.

    Parameters
    ----------
    environment : Environment
        The outcomes, types and reactions.
    punishing : array_like of int, optional
        Distinct outcome indices forming ``P`` (default: every outcome).

    Raises
    ------
    ValidationError
        If ``punishing`` is empty, not integers, repeats an index or leaves ``[0, K)``.

    Examples
    --------
    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])  # value types 0.125, 0.375, 0.625, 0.875
    >>> cm = CommitmentMechanism(env)
    >>> cm.distribution().probabilities.tolist()              # the reports do not matter
    [0.25, 0.25, 0.25, 0.25]
    >>> gap = cm.gap()  # the cheapest lie still loses gamma at one price
    >>> gap.gamma, gap.true_label, gap.lie_label
    (0.125, 0.125, 0.375)
    >>> cm.guarantee.epsilon
    0.0
    """

    def __init__(self, environment: Environment, punishing: ArrayLike | None = None):
        self.environment = environment
        k = environment.n_outcomes
        if punishing is None:
            p = np.arange(k)
        else:
            p = np.asarray(punishing)
            if p.ndim != 1 or p.size == 0 or not np.issubdtype(p.dtype, np.integer):
                raise ValidationError("punishing", ": need a non-empty list of outcome indices")
            if p.min() < 0 or p.max() >= k:
                raise ValidationError("punishing", f": outcome indices must lie in [0, {k - 1}]")
            if np.unique(p).size != p.size:
                raise ValidationError("punishing", ": outcome indices must be distinct")
            p = np.sort(p)
        self.punishing = p
        # a slice when P is every outcome: no copies of the big arrays
        self._columns = slice(None) if p.size == k else p

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """0-DP in the outcome: ``s`` is uniform on the punishing set whatever the reports.  The
        forced reactions are not private (agent ``i``'s reveals her report); only the outcome is the
        output."""
        return PrivacyGuarantee(0.0, 0.0, Neighbouring.REPLACE_ONE.described(OUTCOME_NEIGHBOURING))

    def _type_indices(self, true_types: ArrayLike) -> np.ndarray:
        t = np.asarray(true_types)
        if not np.issubdtype(t.dtype, np.integer) or (
            t.size and (t.min() < 0 or t.max() >= self.environment.n_types)
        ):
            raise ValidationError(
                "true_types", f"must be type indices in [0, {self.environment.n_types - 1}]"
            )
        return t

    @property
    def n_punishing(self) -> int:
        """``|P|``, the number of punishing outcomes."""
        return self.punishing.size

    def distribution(self, profile: Profile | None = None) -> FiniteDistribution:
        """Uniform on the punishing set (the reports do not matter)."""
        logp = np.full(self.environment.n_outcomes, -np.inf)
        logp[self.punishing] = -np.log(self.n_punishing)
        return FiniteDistribution(logp)

    @cached_property
    def _reaction_masks(self) -> list[np.ndarray]:
        """For each reaction ``r``: ``[r(x, s) == r]`` as floats, m x |P|."""
        return [mask[:, self._columns] for mask in self.environment.reaction_masks]

    def _forced_mean(self, values: np.ndarray) -> np.ndarray:
        """``mean_{s in P} values[d, s, r(x, s)]`` for D x |P| x R values: D x m (one matmul per
        reaction)."""
        total = sum(values[:, :, r] @ mask.T for r, mask in enumerate(self._reaction_masks))
        return total / self.n_punishing

    def forced_utility(self, true_types: ArrayLike) -> np.ndarray:
        """``A[t, x] = E_{s ~ U(P)}[u(t, s, r(x, s))]`` for the given true types (rows), all reports
        x.

        Parameters
        ----------
        true_types : array_like of int
            Type indices (the rows).

        Returns
        -------
        numpy.ndarray, shape (len(true_types), m)

        Raises
        ------
        ValidationError
            If a true type is not an index in ``[0, m)``.
        """
        t = self._type_indices(true_types)
        return self._forced_mean(self.environment.utility[t][:, self._columns, :])

    def forced_loss(self, true_types: ArrayLike) -> np.ndarray:
        """``A[t, t] - A[t, x] >= 0``, as a mean of non-negative per-outcome losses (exactly 0 when
        the report never forces a worse reaction)."""
        env = self.environment
        t = self._type_indices(true_types)
        p = self._columns
        return self._forced_mean(env.best_utility[t][:, p, None] - env.utility[t][:, p, :])

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: expected utility of each class reporting each type (independent of the
        others)."""
        self.environment._check(profile)
        return self.forced_utility(profile.classes)

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[a, t, x]`` expected utility of true type ``t`` reporting ``x`` (the
        same for every class ``a``: the others do not matter; a read-only broadcast view)."""
        self.environment._check(profile)
        table = self.forced_utility(np.arange(self.environment.n_types))
        return np.broadcast_to(table, (profile.classes.size, *table.shape))

    def expected_objective(self, profile: Profile) -> float:
        """``E[objective]`` under truthful reports (forced reactions are then the best ones)."""
        return float(np.mean(self.environment.objective_values(profile)[self.punishing]))

    def run(self, profile: Profile, rng: RNGLike = None) -> Draw:
        """Draw ``s`` uniformly from ``P``; each agent reacts as her reported type would."""
        self.environment._check(profile)
        s = int(self.punishing[as_generator(rng).integers(self.n_punishing)])
        return Draw(s, self.environment.best_reaction[profile.type_indices, s], forced=True)

    def gap(self) -> Gap:
        """``gamma`` exactly, with a pair of types attaining it.

        Returns
        -------
        Gap
            ``gamma``, the pair (indices and labels), the separating outcome and ``|P|``; its
            ``diagnosis`` explains a zero gap.

        Raises
        ------
        ValidationError
            With fewer than 2 types (there is no lie to punish).
        """
        env = self.environment
        if env.n_types < 2:
            raise ValidationError(
                "types",
                f": the gap needs at least 2 types (a lie), the environment has {env.n_types}",
            )
        forced = env.best_reaction[:, self._columns]
        twins = _identical_rows(forced)
        if twins is not None:
            return self._gap(0.0, *twins)
        if env.n_reactions == 2:
            return self._gap(*self._two_reaction_gap(forced))
        best, pair = np.inf, (0, 1)
        block = max(1, _BLOCK_ELEMENTS // (env.n_types * self.n_punishing))
        for start in range(0, env.n_types, block):
            rows = np.arange(start, min(start + block, env.n_types))
            worst = self._largest_forced_loss(rows, forced)
            worst[np.arange(rows.size), rows] = np.inf
            i, j = np.unravel_index(np.argmin(worst), worst.shape)
            if worst[i, j] < best:
                best, pair = float(worst[i, j]), (int(rows[i]), int(j))
        return self._gap(best, *pair)

    def _two_reaction_gap(self, forced: np.ndarray) -> tuple[float, int, int]:
        """``gamma`` with two reactions, by a sweep instead of all m x m x |P| triples.

        With two reactions a lie ``x`` costs type ``t`` at outcome ``s`` either 0 (same reaction) or
        ``alt[s]``, the loss of the other reaction.  Visiting outcomes by decreasing ``alt``, the
        first outcome where ``x`` reacts differently gives ``max_s`` for that ``x``; the minimum
        over ``x`` is the last such value (0 if some ``x`` is never told apart).  Usually a few
        outcomes settle every ``x``."""
        env = self.environment
        p = self._columns
        forced = forced.astype(np.int8)
        best, pair = np.inf, (0, 1)
        for t in range(env.n_types):
            alt = env.best_utility[t, p] - env.utility[t, p, :].min(axis=1)  # >= 0
            order = np.argsort(-alt, kind="stable")
            alt_sorted = alt[order]
            live = np.flatnonzero(np.arange(env.n_types) != t)
            low, low_x, pos, width = np.inf, -1, 0, 16
            while live.size and pos < order.size and alt_sorted[pos] > 0:
                chunk = order[pos : pos + width]
                differs = forced[np.ix_(live, chunk)] != forced[t, chunk]
                settled = differs.any(axis=1)
                if settled.any():
                    values = alt_sorted[pos + np.argmax(differs[settled], axis=1)]
                    k = int(np.argmin(values))
                    low, low_x = float(values[k]), int(live[settled][k])
                    live = live[~settled]
                pos, width = pos + width, width * 2
            if live.size:  # never told apart on outcomes that matter
                low, low_x = 0.0, int(live[0])
            if low < best:
                best, pair = low, (t, low_x)
            if best == 0:
                break
        return best, *pair

    def _largest_forced_loss(self, rows: np.ndarray, forced: np.ndarray) -> np.ndarray:
        """``max_{s in P} [u(t, s, r(t, s)) - u(t, s, r(x, s))]`` for t in ``rows`` (b x m)."""
        env = self.environment
        p = self.punishing
        loss = env.best_utility[rows][:, p, None] - env.utility[rows][:, p, :]  # b x |P| x R, >= 0
        out = np.zeros((rows.size, env.n_types))
        for r in range(env.n_reactions):
            hit = (forced == r)[None, :, :]  # 1 x m x |P|
            out = np.maximum(out, np.where(hit, loss[:, None, :, r], 0.0).max(axis=2))
        return out

    def _gap(self, gamma: float, t: int, x: int) -> Gap:
        env = self.environment
        outcome = None
        if gamma > 0:
            p = self.punishing
            per_s = env.best_utility[t, p] - env.utility[t, p, env.best_reaction[x, p]]
            outcome = int(p[np.argmax(per_s)])
        return Gap(gamma, t, x, env.type_label(t), env.type_label(x), outcome, self.n_punishing)


def _identical_rows(forced: np.ndarray) -> tuple[int, int] | None:
    """Two types that react identically to every punishing outcome (the first such pair), or
    None."""
    _, first, inverse = np.unique(forced, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    repeated = np.flatnonzero(first[inverse] != np.arange(forced.shape[0]))
    if repeated.size == 0:
        return None
    x = int(repeated[0])
    return int(first[inverse[x]]), x
