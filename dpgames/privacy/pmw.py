"""Private multiplicative weights for linear queries over a histogram (Hardt & Rothblum 2010).

Data: a histogram ``x`` of ``n`` records over a universe of ``N`` elements; queries: rows ``q`` of a
matrix with entries in [0, 1], with true (normalised) answers ``a = Q x / n``.  One record changing
moves every answer by at most ``1 / n`` (the neighbouring relation; ``n`` is public).  The mechanism
keeps a public distribution ``p`` over the universe (uniform at first) and answers queries with
``Q p``; when a query is badly answered it measures that query with Laplace noise and updates

    ``p(u) <- p(u) exp(-eta * sign * q(u))``, normalised, with ``sign = sign(q.p - measurement)``,

which lowers the relative entropy ``KL(x/n || p)`` by at least ``eta |q.p - q.x/n| - eta^2``
whenever the sign is right.  Starting from ``ln N``, at most ``ln N / (eta alpha - eta^2)`` updates
happen at error ``alpha``: this bounds the number of rounds the privacy budget must pay for.

Two ways to find the badly answered query (``selection``):

``alpha`` is the target error: the learning rate is ``eta = alpha / 2`` unless given (it minimises
the update bound, to ``4 ln N / alpha^2``) and, by default, ``rounds`` is that bound.

* ``"exponential"`` (offline, as in MWEM, Hardt, Ligett & McSherry 2012): ``rounds`` times, select
  the query of largest error with the exponential mechanism (eps/(2 rounds)), measure it with
  Laplace noise (eps/(2 rounds)), update.  eps-DP by basic composition.
* ``"sparse_vector"`` (online, Hardt & Rothblum): go through the queries in order; the sparse vector
  (eps/2, at most ``rounds`` positives) flags those whose error exceeds ``alpha``; each flagged
  query is measured with Laplace noise (eps/(2 rounds)) and triggers an update.  eps-DP by basic
  composition.

The result reports the errors against the true answers and the accountant of what was spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.accounting import Accountant
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.laplace import LaplaceMechanism
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.privacy.sparse_vector import SparseVector, first_above
from dpgames.validation import ValidationError, choice, finite_array, positive, positive_int

Selection = Literal["exponential", "sparse_vector"]
_RELATION = Neighbouring.REPLACE_ONE.described("one record of the histogram changes (n public)")
MAX_ROUNDS = 10**7  # more rounds than this would split the budget into noise of no use, and hang


@dataclass(frozen=True)
class PMWResult:
    """What :meth:`PrivateMultiplicativeWeights.run` released and spent.

    ``synthetic``: the final public distribution over the universe; ``answers``: the released
    answers (offline selection: ``Q @ synthetic``; online sparse-vector selection: each query's
    answer when it was processed, ``q.p`` of the public ``p`` then, or its noisy measurement if it
    was flagged); ``true_answers``: ``Q x / n``; ``updates``: the (query index, sign) of every
    multiplicative update, in order; ``max_error_after_update``: the largest error over all queries
    after each update; ``accountant``: the privacy spent.

    Examples
    --------
    >>> pmw = PrivateMultiplicativeWeights(1.0, 0.2, rounds=5, selection="exponential")
    >>> queries = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
    >>> result = pmw.run(np.array([5.0, 3.0, 2.0, 0.0]), queries, rng=0)
    >>> len(result.updates), round(result.max_error, 4)
    (5, 0.3498)
    >>> print(result.guarantee)
    1-DP, 0.05-zCDP (replace one individual: one record of the histogram changes (n public))
    """

    synthetic: np.ndarray
    answers: np.ndarray
    true_answers: np.ndarray
    updates: tuple[tuple[int, int], ...]
    max_error_after_update: np.ndarray
    accountant: Accountant

    @property
    def max_error(self) -> float:
        """The largest error of a released answer against the true answers."""
        return float(np.max(np.abs(self.answers - self.true_answers)))

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """What the run spent: basic composition of its accountant (:meth:`Accountant.basic_total`),
        eps-DP in the histogram's records (replace one record, ``n`` public).
        """
        return self.accountant.basic_total()


class PrivateMultiplicativeWeights:
    """Private multiplicative weights (see the module docstring); eps-DP in the histogram's records.

    Parameters
    ----------
    epsilon : float
        ``> 0``: the total budget.
    alpha : float
        ``> 0``: the target error.
    rounds : int, optional
        Updates paid for (default :meth:`update_bound`; at most :data:`MAX_ROUNDS`).
    selection : {"sparse_vector", "exponential"}
    eta : float, optional
        Learning rate (default ``alpha / 2``).

    Raises
    ------
    ValidationError
        On bad arguments.

    Examples
    --------
    >>> pmw = PrivateMultiplicativeWeights(1.0, 0.2)
    >>> pmw.update_bound(4), pmw.rounds_for(4)
    (139, 139)
    >>> print(pmw.guarantee)
    1-DP (replace one individual: one record of the histogram changes (n public))
    """

    def __init__(
        self,
        epsilon: float,
        alpha: float,
        rounds: int | None = None,
        selection: Selection = "sparse_vector",
        eta: float | None = None,
    ):
        self.epsilon = positive("epsilon", epsilon)
        self.alpha = positive("alpha", alpha)
        self.rounds = None if rounds is None else positive_int("rounds", rounds, high=MAX_ROUNDS)
        self.selection = choice("selection", selection, ("exponential", "sparse_vector"))
        self.eta = self.alpha / 2 if eta is None else positive("eta", eta)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP under replace-one neighbours of the histogram (one record changes, ``n``
        public): basic composition of the selection and measurement steps (see the module
        docstring).
        """
        return PrivacyGuarantee(self.epsilon, 0.0, _RELATION)

    def update_bound(self, universe_size: int) -> int | float:
        """At most ``ln N / (eta alpha - eta^2)`` updates happen while every flagged error exceeds
        alpha and every sign is right (``inf`` if ``eta >= alpha``).

        Parameters
        ----------
        universe_size : int
            ``N >= 1``.

        Returns
        -------
        int or float
            ``inf`` when ``eta >= alpha``.

        Raises
        ------
        ValidationError
            On a bad universe size.
        """
        size = positive_int("universe_size", universe_size)
        gain = self.eta * self.alpha - self.eta * self.eta
        bound = math.log(size) / gain if gain > 0 else math.inf
        return math.ceil(bound) if math.isfinite(bound) else math.inf

    def rounds_for(self, universe_size: int) -> int:
        """The number of rounds paid for: as given, else :meth:`update_bound` (at least 1).

        Parameters
        ----------
        universe_size : int

        Returns
        -------
        int

        Raises
        ------
        ValidationError
            If no bound exists (``eta >= alpha``: give ``rounds``) or it exceeds :data:`MAX_ROUNDS`.
        """
        if self.rounds is not None:
            return self.rounds
        bound = self.update_bound(universe_size)
        if math.isinf(bound):
            raise ValidationError(
                "rounds", ": with eta >= alpha there is no bound on the updates, give rounds"
            )
        if bound > MAX_ROUNDS:
            raise ValidationError(
                "alpha",
                f"{self.alpha:g} (eta {self.eta:g}) needs {bound:.3g} rounds, more than "
                f"{MAX_ROUNDS:,}: give a larger alpha or rounds",
            )
        return max(1, int(bound))  # finite here: an int

    def run(self, histogram: ArrayLike, queries: ArrayLike, rng: RNGLike = None) -> PMWResult:
        """Answer the linear ``queries`` on ``histogram`` privately.

        Parameters
        ----------
        histogram : array_like
            Counts ``>= 0`` over the universe, at least one record.
        queries : array_like
            ``k x N`` matrix with entries in ``[0, 1]``.
        rng : Generator, int or None

        Returns
        -------
        PMWResult

        Raises
        ------
        ValidationError
            On a bad histogram or query matrix (shape, entries), or as :meth:`rounds_for`.
        """
        x = finite_array("histogram", histogram, ndim=1, low=0)
        q = finite_array("queries", queries, ndim=2)
        if x.sum() <= 0:
            raise ValidationError(
                "histogram", "must have non-negative counts and at least one record"
            )
        if q.shape[1] != x.size:
            raise ValidationError(
                "queries", f"must have one column per universe element ({x.size}), got {q.shape[1]}"
            )
        if q.min() < 0 or q.max() > 1:
            raise ValidationError("queries", ": query entries must be in [0, 1]")
        n, gen = float(x.sum()), as_generator(rng)
        true = q @ x / n
        run, rounds = _Run(q, true, self.eta), self.rounds_for(x.size)
        measure = LaplaceMechanism(self.epsilon / (2 * rounds), 1 / n)
        if self.selection == "exponential":
            accountant = self._run_exponential(run, measure, rounds, n, gen)
            run.answers = q @ run.p
        else:
            accountant = self._run_sparse_vector(run, measure, rounds, n, gen)
        return PMWResult(
            run.p, run.answers, true, tuple(run.updates), np.array(run.max_errors), accountant
        )

    def _run_exponential(
        self, run: _Run, measure: LaplaceMechanism, rounds: int, n: float, gen
    ) -> Accountant:
        select = ExponentialMechanism(self.epsilon / (2 * rounds), sensitivity=1 / n)
        for _ in range(rounds):
            # size None: one index
            i = cast(int, select.sample_indices(np.abs(run.errors()), rng=gen))
            # one value in, one out
            run.update(i, cast(float, measure.release(run.true[i], rng=gen)))
        return (
            Accountant()
            .spend("select (exponential mechanism)", _relabel(select.guarantee), rounds)
            .spend("measure (Laplace)", _relabel(measure.guarantee), rounds)
        )

    def _run_sparse_vector(
        self, run: _Run, measure: LaplaceMechanism, rounds: int, n: float, gen
    ) -> Accountant:
        sv = SparseVector(self.epsilon / 2, self.alpha, max_positives=rounds, sensitivity=1 / n)
        k = run.q.shape[0]
        noise = gen.laplace(0.0, sv.query_scale, size=k)

        def noisy_errors(lo: int, hi: int) -> np.ndarray:  # answers given now: the public p's
            signed = run.errors(lo, hi)
            run.answers[lo:hi] = run.true[lo:hi] + signed
            return np.abs(signed) + noise[lo:hi]

        position = 0
        while len(run.updates) < rounds and position < k:
            level = sv.threshold + gen.laplace(0.0, sv.threshold_scale)
            hit = first_above(noisy_errors, k, position, level)
            if hit is None:
                break
            # a flagged query gets its measurement
            run.answers[hit] = measure.release(run.true[hit], rng=gen)
            run.update(hit, run.answers[hit])
            position = hit + 1
        # after the last update (if the rounds ran out)
        run.answers[position:] = run.q[position:] @ run.p
        accountant = Accountant().spend(
            "find badly answered queries (sparse vector)", _relabel(sv.guarantee)
        )
        return accountant.spend("measure (Laplace)", _relabel(measure.guarantee), rounds)


def _relabel(g: PrivacyGuarantee) -> PrivacyGuarantee:
    """``g`` stated for the histogram's records (the selection and measurement steps' own details
    are about their scores; the relation, replace one, is the same)."""
    return replace(g, neighbouring=_RELATION)


class _Run:
    """The public state of one run: the distribution ``p`` and the log of updates."""

    def __init__(self, q: np.ndarray, true: np.ndarray, eta: float):
        self.q, self.true, self.eta = q, true, eta
        self.log_p = np.full(q.shape[1], -math.log(q.shape[1]))
        self.p = np.exp(self.log_p)
        self.answers = np.zeros(q.shape[0])
        self.updates: list[tuple[int, int]] = []
        self.max_errors: list[float] = []

    def errors(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Signed errors ``q.p - q.x/n`` of queries ``lo .. hi-1``."""
        return self.q[lo:hi] @ self.p - self.true[lo:hi]

    def update(self, i: int, measurement: float) -> None:
        sign = 1 if self.q[i] @ self.p > measurement else -1
        self.log_p -= self.eta * sign * self.q[i]
        self.log_p -= np.logaddexp.reduce(self.log_p)
        self.p = np.exp(self.log_p)
        self.updates.append((int(i), sign))
        self.max_errors.append(float(np.max(np.abs(self.errors()))))
