"""Anonymous games in aggregate form: ``n`` players of ``K`` types, ``A`` actions, payoffs that
depend on one's type, one's action and the *histogram* of the other players' actions (never on who
played what).

A game is held by the number of players of each type and a payoff function

    ``payoff(histograms) -> values``: histograms of the others' actions, shape ``(B, A)`` (counts,
    summing to ``n - 1``; real-valued when the mediator feeds it expected or noisy counts), to
    payoffs of shape ``(B, K, A)``: ``values[b, k, a]`` = the payoff of a type-``k`` player who
    plays ``a`` against histogram ``b``; every value in ``[0, 1]``.

or, for *own-count* games (a player's payoff depends only on how many others chose her own action:
every two-action game, crowding and singleton congestion games), by a table ``table[k, a, c]``,
``c = 0 .. n - 1`` others on action ``a``.  Every call of the payoff is checked (shape, finite, in
``[0, 1]``): a wrong function is a :class:`~dpgames.validation.ValidationError` naming ``payoff``,
never a numpy traceback.

**Largeness** (Kearns, Pai, Roth & Ullman 2014, their definition of a ``Delta``-large game): the
most one other player's change of action moves any player's payoff, ``max |u(k, a, h) - u(k, a, h -
e_b + e_c)|``. Computed exactly for tables (the largest step of ``table[k, a, :]``: one switch moves
the own-action count by at most one) and, for payoff functions, by enumerating every histogram of
the ``n - 1`` others when that is affordable; otherwise it must be declared, and the declaration is
checked on sampled switches (which can refute it, never prove it:
:attr:`AnonymousGame.largeness_method` says which).

**Expected payoffs** of a type-``k`` player when everybody else draws independently from their
type's mixed strategy (the others' histogram is then a sum of independent multinomials):

* ``"exact"``: own-count tables through the exact law of the count (a Poisson-binomial: the sum over
  types ``j`` of ``Binomial(m_j, p_j(a))``, computed by FFT convolution); payoff functions by
  enumerating the law of the whole histogram (affordable for small ``n`` and ``A`` only);
* ``"mean-field"``: the payoff at the *expected* histogram ``sum_j m_j p_j`` (exact for payoffs
  linear in the histogram; an approximation otherwise, whose error the tests measure against
  ``"exact"``);
* ``"auto"``: exact when it costs at most :data:`EXACT_BUDGET` operations, else mean-field.

Cost depends on ``K``, ``A`` and (for exact evaluation) on ``n``; the mean-field evaluation and
everything the mediator does per round are independent of ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpgames.validation import ValidationError, choice, finite_array, non_negative, positive_int

Evaluation = Literal["auto", "exact", "mean-field"]
#: What an evaluation setting resolves to (:meth:`AnonymousGame.evaluation_method`).
Method = Literal["exact", "mean-field"]
EXACT_BUDGET = 2e8  # operations (all calls together) up to which "auto" evaluates exactly
TABLE_LIMIT = 1e7  # entries K A n up to which an own-count game's table is built
STEP_BLOCK = 2**16  # payoffs per block when the largeness is read off an own-count game's payoffs
ENUMERATION_LIMIT = 2e6  # histogram codes (n)^A up to which payoff functions are enumerated
LARGENESS_SAMPLES = 256  # sampled histograms that check a declared largeness
MAX_PLAYERS = 10**12
MAX_ACTIONS = 10**5
PROBE_ACTIONS = 8  # histograms with everybody else on one action, checked at construction
TOLERANCE = 1e-12  # payoffs within this of [0, 1] are clipped, farther ones refused

PayoffFunction = Callable[[np.ndarray], ArrayLike]


def player_counts(players: ArrayLike) -> np.ndarray:
    """``players`` as the number of players of each type (int64), or a ValidationError naming
    ``players`` unless they are whole numbers ``>= 0``, at least one player and at most
    :data:`MAX_PLAYERS` in all."""
    counts = finite_array("players", players, ndim=1, low=0, integral=True)
    if counts.size == 0 or counts.sum() < 1 or counts.sum() > MAX_PLAYERS:
        raise ValidationError(
            "players",
            f"must be one whole number >= 0 per type, at least one player in all "
            f"(at most {MAX_PLAYERS:.0e}), got {counts.tolist()[:8]}",
        )
    return counts.astype(np.int64)


def _unit_interval(name: str, values: np.ndarray) -> np.ndarray:
    """``values`` clipped to [0, 1] when within :data:`TOLERANCE` of it; otherwise a
    ValidationError."""
    if not np.isfinite(values).all():
        raise ValidationError(
            name, "returned a value that is NaN or infinite: payoffs must be finite, in [0, 1]"
        )
    low, high = float(values.min(initial=0.0)), float(values.max(initial=1.0))
    if low < -TOLERANCE or high > 1 + TOLERANCE:
        raise ValidationError(
            name,
            f"returned a payoff outside [0, 1] (range {low:.6g} .. {high:.6g}): "
            "scale the payoffs to [0, 1]",
        )
    return np.clip(values, 0.0, 1.0)


def _histogram_codes(total: int, actions: int) -> np.ndarray:
    """Every histogram of ``total`` players over ``actions`` actions, shape ``(S, actions)``
    (integer)."""
    if actions == 1:
        return np.array([[total]], dtype=np.int64)
    grid = np.indices((total + 1,) * (actions - 1)).reshape(actions - 1, -1).T
    grid = grid[grid.sum(axis=1) <= total]
    return np.column_stack([grid, total - grid.sum(axis=1)]).astype(np.int64)


@dataclass(frozen=True, eq=False)
class AnonymousGame:
    """An anonymous game in aggregate form (module docstring).

    Parameters
    ----------
    players : array_like of int, shape (K,)
        Players of each type (whole numbers >= 0, at least one in all).
    num_actions : int
        ``A >= 1``: every type chooses among the same actions ``0 .. A - 1``.
    payoff : callable
        ``payoff(histograms)``: histograms ``(B, A)`` of the others' actions -> payoffs ``(B, K,
        A)`` in [0, 1].
    largeness : float, optional
        A declared ``Delta`` (checked on sampled switches); needed when exact enumeration is
        unaffordable.
    type_names : sequence of str, optional
        One name per type.

    Raises
    ------
    ValidationError
        On bad ``players`` or ``num_actions``, a payoff function that is not callable or returns the
        wrong shape, NaN or values outside [0, 1] (``payoff``), or a declared ``largeness`` that a
        sampled switch exceeds or that is missing when it cannot be computed (``largeness``).

    Examples
    --------
    Two types on two actions; payoffs fall with the number of others on one's own action:

    >>> import numpy as np
    >>> def payoff(h):
    ...     share = 1 - h / 3.0                                   # 3 others at most
    ...     return np.stack([share * 1.0, share * 0.5], axis=1)  # type 1 values everything half
    >>> game = AnonymousGame([2, 2], 2, payoff)
    >>> game.num_players, game.largeness, game.largeness_method
    (4, 0.3333333333333333, 'exact (every histogram of the others enumerated)')
    >>> game.expected_payoffs(np.full((2, 2), 0.5)).round(
    ...     4
    ... ).tolist()  # 1 - E[others on a] / 3 = 1 - 1.5 / 3
    [[0.5, 0.5], [0.25, 0.25]]
    """

    players: np.ndarray
    num_actions: int
    payoff: PayoffFunction
    largeness_declared: float | None = None
    type_names: tuple[str, ...] = ()
    own_count: bool = False

    def __init__(
        self,
        players: ArrayLike,
        num_actions: int,
        payoff: PayoffFunction,
        largeness: float | None = None,
        type_names: Sequence[str] = (),
        *,
        own_count: bool = False,
    ):
        counts = player_counts(players)
        actions = positive_int("num_actions", num_actions, high=MAX_ACTIONS)
        if not callable(payoff):
            raise ValidationError(
                "payoff",
                f"must be a callable histograms (B, A) -> payoffs (B, K, A), "
                f"got {type(payoff).__name__}",
            )
        names = tuple(type_names) if isinstance(type_names, (list, tuple)) else None
        if names is None or (
            names and (len(names) != counts.size or not all(isinstance(s, str) for s in names))
        ):
            raise ValidationError("type_names", f"must be {counts.size} strings, one per type")
        declared = None if largeness is None else non_negative("largeness", largeness)
        own_count = choice("own_count", own_count, (False, True))
        for name, value in (
            ("players", counts),
            ("num_actions", actions),
            ("payoff", payoff),
            ("largeness_declared", declared),
            ("type_names", names),
            ("own_count", own_count),
        ):
            object.__setattr__(self, name, value)
        shown = min(actions, PROBE_ACTIONS)
        probe = np.zeros((shown, actions))
        # everybody else on one action
        probe[np.arange(shown), np.arange(shown)] = self.num_players - 1
        self.payoffs(np.vstack([probe, np.full((1, actions), (self.num_players - 1) / actions)]))
        _ = self.largeness  # computed or checked now: a wrong declaration fails at construction

    @classmethod
    def from_count_table(
        cls, players: ArrayLike, table: ArrayLike, type_names: Sequence[str] = ()
    ) -> AnonymousGame:
        """An own-count game: ``table[k, a, c]`` is a type-``k`` player's payoff for action ``a``
        when ``c`` others (``c = 0 .. n - 1``) chose ``a`` too.  Real counts (the mediator's
        expected or noisy histograms) are read by linear interpolation between whole counts, clamped
        to ``[0, n - 1]``.

        Parameters
        ----------
        players : array_like of int, shape (K,)
        table : array_like, shape (K, A, n)
            Payoffs in [0, 1].
        type_names : sequence of str, optional

        Returns
        -------
        AnonymousGame

        Raises
        ------
        ValidationError
            If ``table`` is not finite, not of shape ``(K, A, n)`` or has a value outside [0, 1].
        """
        counts = player_counts(players)
        values = finite_array("table", table, ndim=3)
        n = int(counts.sum())
        if values.shape[0] != counts.size or values.shape[2] != n or values.shape[1] < 1:
            raise ValidationError(
                "table",
                f"must have shape (types, actions, players) = ({counts.size}, A, {n}), "
                f"got {values.shape}",
            )
        values = _unit_interval("table", values)
        values.setflags(write=False)

        def payoff(histograms: np.ndarray) -> np.ndarray:
            c = np.clip(histograms, 0.0, n - 1)  # (B, A)
            low = np.minimum(np.floor(c).astype(np.int64), max(n - 2, 0))
            frac = c - low
            k, a = (
                np.arange(values.shape[0])[None, :, None],
                np.arange(values.shape[1])[None, None, :],
            )
            below = values[k, a, low[:, None, :]]
            above = values[k, a, np.minimum(low + 1, n - 1)[:, None, :]]
            return below + frac[:, None, :] * (above - below)

        return cls(counts, values.shape[1], payoff, type_names=type_names, own_count=True)

    @classmethod
    def from_count_function(
        cls,
        players: ArrayLike,
        num_actions: int,
        payoff: PayoffFunction,
        largeness: float | None = None,
        type_names: Sequence[str] = (),
    ) -> AnonymousGame:
        """An own-count game given by a function: ``payoff(counts)`` maps counts ``(B, A)`` of
        others on each action (real-valued allowed) to ``(B, K, A)``, entry ``[b, k, a]`` depending
        on ``counts[b, a]`` only. Its table (:attr:`table`) is built when needed and affordable
        (exact evaluation, largeness); for larger ``n`` declare ``largeness``.

        Parameters
        ----------
        players, num_actions, payoff, largeness, type_names
            As for :class:`AnonymousGame`.

        Returns
        -------
        AnonymousGame

        Raises
        ------
        ValidationError
            As for :class:`AnonymousGame`.
        """
        return cls(players, num_actions, payoff, largeness, type_names, own_count=True)

    @cached_property
    def table(self) -> np.ndarray | None:
        """Own-count games: ``table[k, a, c]``, the payoff of ``(k, a)`` with ``c`` others on ``a``
        (``None`` for other games, or when ``K A n`` exceeds :data:`TABLE_LIMIT`)."""
        if not self.has_table:
            return None
        counts = np.repeat(
            np.arange(self.num_players, dtype=float)[:, None], self.num_actions, axis=1
        )
        return np.ascontiguousarray(np.transpose(self.payoffs(counts), (1, 2, 0)))

    @property
    def has_table(self) -> bool:
        """Whether :attr:`table` is an array (an own-count game with ``K A n <=``
        :data:`TABLE_LIMIT`), known without building it."""
        return (
            self.own_count and self.num_types * self.num_actions * self.num_players <= TABLE_LIMIT
        )

    def _largest_step(self) -> float:
        """``max |table[k, a, c + 1] - table[k, a, c]|``, from the payoffs in blocks of counts: the
        table is not built (a game is checked when constructed; its table, up to 80 MB, only when
        evaluated)."""
        n, A = self.num_players, self.num_actions
        rows = max(2, int(STEP_BLOCK // (self.num_types * A)))
        worst, last = 0.0, None
        for start in range(0, n, rows):
            counts = np.repeat(
                np.arange(start, min(start + rows, n), dtype=float)[:, None], A, axis=1
            )
            values = self.payoffs(counts)  # (rows, K, A)
            if last is not None:
                values = np.concatenate([last[None], values])
            if values.shape[0] > 1:
                worst = max(worst, float(np.abs(np.diff(values, axis=0)).max()))
            last = values[-1]
        return worst

    # --- sizes
    # ----------------------------------------------------------------------------------------
    @property
    def num_types(self) -> int:
        """``K``."""
        return int(self.players.size)

    @property
    def num_players(self) -> int:
        """``n``, all players."""
        return int(self.players.sum())

    def with_players(self, players: ArrayLike) -> AnonymousGame:
        """The same game with other reported players per type (same total ``n``: a payoff table is
        indexed by ``n``).

        Parameters
        ----------
        players : array_like of int, shape (K,)

        Returns
        -------
        AnonymousGame

        Raises
        ------
        ValidationError
            If ``players`` is not one whole number >= 0 per type with the same total.
        """
        counts = player_counts(players)
        if counts.shape != self.players.shape or counts.sum() != self.num_players:
            raise ValidationError(
                "players",
                f"must be {self.num_types} whole numbers summing to {self.num_players} "
                f"(the game's n), got {counts.tolist()[:8]}",
            )
        new = object.__new__(AnonymousGame)
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k != "players"})
        object.__setattr__(new, "players", counts)
        return new

    # --- payoffs
    # --------------------------------------------------------------------------------------
    def payoffs(self, histograms: ArrayLike) -> np.ndarray:
        """The payoff function on a batch of histograms, checked.

        Parameters
        ----------
        histograms : array_like, shape (B, A)
            Counts of the others' actions.

        Returns
        -------
        numpy.ndarray, shape (B, K, A)
            In [0, 1].

        Raises
        ------
        ValidationError
            ``histograms`` of the wrong shape or not finite; ``payoff`` raising, returning the wrong
            shape, NaN or values outside [0, 1].
        """
        h = finite_array("histograms", histograms, ndim=2)
        if h.shape[1] != self.num_actions:
            raise ValidationError(
                "histograms", f"must have shape (B, {self.num_actions}), got {h.shape}"
            )
        try:
            out = self.payoff(h)
        except ValidationError:
            raise
        except Exception as exc:  # noqa: BLE001 - a user's function: its failure is reported, named
            raise ValidationError("payoff", f"raised {type(exc).__name__}: {exc}") from None
        try:
            raw = np.asarray(out, dtype=float)
        except (TypeError, ValueError, OverflowError):
            got = f"values of dtype {out.dtype}" if isinstance(out, np.ndarray) else repr(out)[:80]
            raise ValidationError("payoff", f"must return an array of numbers, got {got}") from None
        want = (h.shape[0], self.num_types, self.num_actions)
        if raw.shape != want:
            raise ValidationError(
                "payoff",
                f"must return shape (B, K, A) = {want} for histograms of shape "
                f"{h.shape}, got {raw.shape}",
            )
        return _unit_interval("payoff", raw)

    def expected_payoffs(
        self, strategy: ArrayLike, others: ArrayLike | None = None, evaluation: Evaluation = "auto"
    ) -> np.ndarray:
        """Expected payoff of each (type, action) when the others draw independently from
        ``strategy``.

        Parameters
        ----------
        strategy : array_like, shape (K, A)
            One probability vector per type.
        others : array_like of int, shape (K,), optional
            The other players per type, the same for every row; default: row ``k`` is a type-``k``
            player's view, the others being ``players - e_k``.
        evaluation : {"auto", "exact", "mean-field"}
            See the module docstring.

        Returns
        -------
        numpy.ndarray, shape (K, A)

        Raises
        ------
        ValidationError
            On a strategy that is not one probability vector per type, bad ``others`` or
            ``evaluation``, or ``"exact"`` beyond :data:`ENUMERATION_LIMIT` for a payoff function.
        """
        p = self.check_strategy(strategy)
        views = self._views(others)
        method = self.evaluation_method(evaluation)
        if method == "mean-field":
            out = self.payoffs(views @ p)
        elif self.table is not None:
            out = self._exact_table(self.table, p, views)
        else:
            out = self._exact_enumerated(p, views)
        return (
            out[np.arange(self.num_types), np.arange(self.num_types)] if others is None else out[0]
        )

    def check_strategy(self, strategy: ArrayLike) -> np.ndarray:
        """``strategy`` as a ``(K, A)`` array of probability vectors (rows renormalised within
        1e-9).

        Raises
        ------
        ValidationError
            Unless it has shape ``(K, A)``, entries >= 0 and rows summing to 1 (within 1e-9).
        """
        p = finite_array("strategy", strategy, ndim=2, low=0)
        if p.shape != (self.num_types, self.num_actions) or np.abs(p.sum(axis=1) - 1).max() > 1e-9:
            raise ValidationError(
                "strategy",
                f"must be one probability vector per type, shape "
                f"({self.num_types}, {self.num_actions}), rows >= 0 summing to 1",
            )
        return p / p.sum(axis=1, keepdims=True)

    def _views(self, others: ArrayLike | None) -> np.ndarray:
        """Rows of other-player counts: ``players - e_k`` per type, or the given ``others`` once."""
        if others is None:
            return (self.players[None, :] - np.eye(self.num_types, dtype=np.int64)).clip(0)
        m = finite_array("others", others, ndim=1, low=0, integral=True)
        if m.shape != (self.num_types,) or m.sum() != self.num_players - 1:
            raise ValidationError(
                "others",
                f"must be {self.num_types} whole numbers >= 0 summing to n - 1 = "
                f"{self.num_players - 1}",
            )
        return m.astype(np.int64)[None, :]

    def evaluation_method(self, evaluation: Evaluation, calls: int = 1) -> Method:
        """The method ``evaluation`` resolves to (``"auto"``: exact when ``calls`` exact evaluations
        cost at most :data:`EXACT_BUDGET` operations).

        Parameters
        ----------
        evaluation : {"auto", "exact", "mean-field"}
        calls : int, default 1
            How many evaluations will be made (the mediator: one a round).

        Returns
        -------
        {"exact", "mean-field"}

        Raises
        ------
        ValidationError
            If ``evaluation`` is not one of the three, ``calls`` is not an integer >= 1, or
            ``"exact"`` is unaffordable for a payoff function.
        """
        evaluation = choice("evaluation", evaluation, ("auto", "exact", "mean-field"))
        calls = positive_int("calls", calls)
        if evaluation == "mean-field":
            return "mean-field"
        n, K, A = self.num_players, self.num_types, self.num_actions
        if self.own_count:
            affordable = self.has_table and calls * self.exact_cost() <= EXACT_BUDGET
        else:
            affordable = (
                float(n) ** A <= ENUMERATION_LIMIT and calls * self.exact_cost() <= EXACT_BUDGET
            )
        if evaluation == "auto":
            return "exact" if affordable else "mean-field"
        if not affordable:
            raise ValidationError(
                "evaluation",
                f"'exact' is unaffordable at n = {n}, K = {K}, A = {A} "
                f"(own-count table or n^A histograms too large): use 'mean-field'",
            )
        return "exact"

    def exact_cost(self) -> float:
        """Operations of one exact evaluation (own-count: ``K^2 A n log2 n``; enumeration: ``K n A
        n^A``)."""
        n, K, A = self.num_players, self.num_types, self.num_actions
        if self.own_count:
            return K * K * A * n * max(np.log2(max(n, 2)), 1.0)
        return K * n * A * float(n) ** A

    def _exact_table(self, table: np.ndarray, p: np.ndarray, views: np.ndarray) -> np.ndarray:
        """Own-count tables: ``E[table[k, a, C_a]]``, ``C_a`` the Poisson-binomial count of others
        on ``a``."""
        n, K = self.num_players, self.num_types
        c = np.arange(n)
        size = max(2 * n, 2)
        out = np.empty((views.shape[0], K, self.num_actions))
        for r, m in enumerate(views):  # a loop over (at most K) views
            pmf = stats.binom.pmf(c[None, None, :], m[:, None, None], p[:, :, None])  # (K, A, n)
            law = np.fft.irfft(np.prod(np.fft.rfft(pmf, n=size, axis=2), axis=0), n=size, axis=1)[
                :, :n
            ]
            law = np.clip(law, 0.0, None)
            law /= law.sum(axis=1, keepdims=True)  # (A, n)
            out[r] = np.einsum("kac,ac->ka", table, law)
        return out

    @cached_property
    def _enumerated(self) -> tuple[np.ndarray, np.ndarray]:
        """Every histogram of the ``n - 1`` others and the payoffs there (computed once)."""
        histograms = _histogram_codes(self.num_players - 1, self.num_actions)
        return histograms, self.payoffs(histograms)

    def _exact_enumerated(self, p: np.ndarray, views: np.ndarray) -> np.ndarray:
        """Payoff functions: the law of the others' histogram, player by player, over dense
        codes."""
        histograms, values = self._enumerated
        total, A = self.num_players - 1, self.num_actions
        strides = (total + 1) ** np.arange(A)
        codes = histograms @ strides
        out = np.empty((views.shape[0], self.num_types, A))
        for r, m in enumerate(views):
            law = np.zeros((total + 1) ** A)
            law[0] = 1.0
            for j in np.repeat(np.arange(self.num_types), m):
                # one step per other player (small n only)
                step = np.zeros_like(law)
                for a in range(A):
                    step[strides[a] :] += p[j, a] * law[: law.size - strides[a]]
                law = step
            out[r] = np.einsum("s,ska->ka", law[codes], values)
        return out

    # --- largeness
    # ------------------------------------------------------------------------------------
    @cached_property
    def _largeness(self) -> tuple[float, str]:
        if self.has_table:
            worst = self._largest_step()
            if self.largeness_declared is not None and worst > self.largeness_declared + TOLERANCE:
                raise ValidationError(
                    "largeness",
                    f"declared {self.largeness_declared:g}, but one switch moves a "
                    f"payoff by {worst:.6g} (the whole table checked)",
                )
            return worst, "exact (largest step of the payoff table)"
        n, A = self.num_players, self.num_actions
        if float(n) ** A <= ENUMERATION_LIMIT:
            histograms, values = self._enumerated
            total = n - 1
            strides = (total + 1) ** np.arange(A)
            row = np.full((total + 1) ** A, -1, dtype=np.int64)
            row[histograms @ strides] = np.arange(histograms.shape[0])
            worst = 0.0
            for b in range(A):  # a loop over ordered action pairs
                for c in range(A):
                    if b == c:
                        continue
                    movable = np.flatnonzero(histograms[:, b] >= 1)
                    moved = row[histograms[movable] @ strides - strides[b] + strides[c]]
                    if movable.size:
                        worst = max(worst, float(np.abs(values[movable] - values[moved]).max()))
            if self.largeness_declared is not None and worst > self.largeness_declared + TOLERANCE:
                raise ValidationError(
                    "largeness",
                    f"declared {self.largeness_declared:g}, but one switch moves a "
                    f"payoff by {worst:.6g} (every histogram enumerated)",
                )
            return worst, "exact (every histogram of the others enumerated)"
        if self.largeness_declared is None:
            raise ValidationError(
                "largeness",
                f"cannot be computed (n^A = {float(n) ** A:.3g} histograms): declare "
                "it (the most one other player's switch moves any payoff)",
            )
        worst = self._sampled_largeness()
        if worst > self.largeness_declared + TOLERANCE:
            raise ValidationError(
                "largeness",
                f"declared {self.largeness_declared:g}, but a sampled switch moves a "
                f"payoff by {worst:.6g}",
            )
        return self.largeness_declared, "declared (checked on sampled switches, not proved)"

    def _sampled_largeness(self) -> float:
        """The largest payoff change over switches at random histograms (seeded: reproducible)."""
        gen = np.random.default_rng(0)
        A, total = self.num_actions, self.num_players - 1
        h = gen.multinomial(total, gen.dirichlet(np.ones(A), size=LARGENESS_SAMPLES)).astype(float)
        rows = np.arange(LARGENESS_SAMPLES)
        b = np.argmax(gen.random(h.shape) * (h > 0), axis=1)  # a random action somebody plays
        # another action (itself if A = 1)
        c = (b + gen.integers(1, max(A, 2), size=LARGENESS_SAMPLES)) % A
        moved = h.copy()
        if total > 0:
            moved[rows, b] -= 1
            moved[rows, c] += 1
        return float(np.abs(self.payoffs(h) - self.payoffs(moved)).max())

    @property
    def largeness(self) -> float:
        """``Delta``: the most one other player's change of action moves any payoff (module
        docstring)."""
        return self._largeness[0]

    @property
    def largeness_method(self) -> str:
        """How :attr:`largeness` was obtained: exact, or declared and checked on samples."""
        return self._largeness[1]


def from_congestion(game, players: ArrayLike | None = None) -> tuple[AnonymousGame, float]:
    """A singleton congestion game (every action one resource, every class choosing among the same
    resources, in the same order) as an own-count game: a player on resource ``r`` with ``c`` others
    there pays ``c_r(c + 1)``; her payoff is ``1 - c_r(c + 1) / S``, ``S`` the largest cost at full
    load.

    Parameters
    ----------
    game : dpgames.games.CongestionGame
    players : array_like of int, optional
        Whole players per class (default the game's demand).

    Returns
    -------
    (AnonymousGame, float)
        The game and the scale ``S`` (cost = ``S (1 - payoff)``).

    Raises
    ------
    ValidationError
        If an action uses more than one resource, or classes choose among different resources.
    """
    # same layer; imported here to keep this module light
    from dpgames.games.game import (
        CongestionGame,
    )

    if not isinstance(game, CongestionGame):
        raise ValidationError("game", f"must be a CongestionGame, got {type(game).__name__}")
    counts = player_counts(game.demand if players is None else players)
    inc = game.incidence
    if np.any(np.diff(inc.indptr) != 1):
        raise ValidationError(
            "game", "must be a singleton congestion game (every action one resource)"
        )
    resource = inc.indices
    first = resource[game.class_start[0] : game.class_start[1]]
    if any(
        not np.array_equal(resource[game.class_start[k] : game.class_start[k + 1]], first)
        for k in range(game.num_classes)
    ):
        raise ValidationError(
            "game", "every class must choose among the same resources, in the same order"
        )
    if counts.shape != (game.num_classes,):
        raise ValidationError("players", f"must be one whole number per class ({game.num_classes})")
    n = int(counts.sum())
    load = np.arange(1, n + 1, dtype=float)
    # (A, n)
    costs = game.costs(np.broadcast_to(load[:, None], (n, game.num_resources)).copy()).T[first]
    scale = float(costs.max()) if costs.max() > 0 else 1.0
    table = np.broadcast_to(1 - costs / scale, (game.num_classes, first.size, n))
    return AnonymousGame.from_count_table(counts, table, type_names=game.class_names), scale
