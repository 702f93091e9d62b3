"""A mechanism from plain functions: a user's rule, utility and payments, with exact laws on demand.

``CustomMechanism(rule, utility, types)`` wraps three callables so that the audits of
:mod:`dpgames.analysis.custom_audit` can enumerate them exactly:

* ``rule(reports)``: ``reports`` is a tuple of type labels, one per agent.  It returns one hashable
  outcome (deterministic), a mapping ``{outcome: probability}`` or a :class:`FiniteDistribution` (its
  ``outcomes`` labels).  A dict or a FiniteDistribution is a law; anything else (a tuple included) is
  one outcome.  ``rule(reports, rng)`` (two required parameters) is a *sampling-only* mechanism: it
  draws one outcome with the numpy Generator ``rng``; only the sampled audit applies to it.
* ``utility(t, outcome)`` or ``utility(t, outcome, agent)`` (``agent``: the 0-based position in
  ``reports``), told apart by the number of required positional parameters.  With
  ``vectorized=True`` it is called once per batch as ``utility(types, outcomes)`` (``types``: a numpy
  array of type labels, ``outcomes``: a list) or ``utility(types, outcomes, agents)`` (``agents``: an
  int array), and returns an array of shape ``(len(types), len(outcomes))``, respectively
  ``(len(agents), len(types), len(outcomes))``.
* ``payments(reports)`` (optional): the n agents' expected payments; an agent's utility is quasi-linear,
  ``u(t, o) - p_i``.

Each distinct report tuple is evaluated once (``rule`` and ``payments`` together) and cached; with
``anonymous=True`` the cache key is the multiset of reports, so permutations share one call.  At most
``cache_size`` laws are kept (oldest dropped first).  ``rule_calls`` counts the calls made for laws
(the anonymity check's calls are counted apart, in ``check_calls``).  Utilities are cached cell by
cell in a (types x outcomes seen) table, so an expected utility is one dot product.

Every failure of the user's functions or of their results is a :class:`ValidationError` naming the
reports, outcome, type or agent involved (the original exception chained), never a wrong figure.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.rng import as_generator
from dpgames.validation import ValidationError

#: A law's probabilities must sum to 1 within this; entries in ``[-NEGATIVE_SLACK, 0)`` read as 0.
SUM_TOLERANCE = 1e-9
NEGATIVE_SLACK = 1e-12
#: Laws kept in the cache by default (oldest dropped first).
CACHE_SIZE = 200_000
#: Profiles (each with one random permutation) on which ``anonymous=True`` is checked, per number of agents.
ANONYMITY_SAMPLES = 8


#: Result types that are certainly one outcome (a fast path before the law checks).
_PLAIN_OUTCOMES = frozenset({int, float, str, tuple, bool, type(None), np.int64, np.float64})


def required_positional(fn: Callable, what: str) -> int | None:
    """The number of required positional parameters of ``fn`` (``None`` if its signature is unreadable).

    Parameters
    ----------
    fn : callable
    what : str
        The field named in the error.

    Returns
    -------
    int or None

    Raises
    ------
    ValidationError
        If ``fn`` takes ``*args`` (its arity is then not fixed).

    Examples
    --------
    >>> required_positional(lambda t, outcome, agent=0: 0, "utility")
    2
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = sig.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        raise ValidationError(what, "must take a fixed number of positional parameters, not *args")
    return sum(p.kind in kinds and p.default is inspect.Parameter.empty for p in params)


#: Largest |utility| and |payment| accepted: a gain, (u - p) - (u' - p'), then stays within the float range.
MAX_MAGNITUDE = np.finfo(float).max / 4


def _check_magnitude(field: str, values: np.ndarray, where: str) -> None:
    """Refuse utilities or payments whose differences could leave the float range (:data:`MAX_MAGNITUDE`)."""
    big = np.abs(values) > MAX_MAGNITUDE
    if big.any():
        raise ValidationError(field, f"must return numbers of magnitude at most {MAX_MAGNITUDE:.4g} (so that "
                                     f"gains fit a float), got {values[big].flat[0]:g} at {where}")


def _finite_number(value: Any) -> float | None:
    """``value`` as a finite float (a number or a bool), else ``None``."""
    if isinstance(value, (numbers.Real, np.bool_)):
        x = float(value)
        if np.isfinite(x):
            return x
    return None


class CustomMechanism:
    """A direct mechanism given by a user's ``rule``, ``utility`` and optional ``payments`` on ``types``.

    See the module docstring for the forms each callable may take.  The audits of
    :mod:`dpgames.analysis.custom_audit` (:func:`dpgames.truthfulness_audit`,
    :func:`dpgames.testing.assert_truthful`) enumerate it exactly, as they do the built-in mechanisms.

    Parameters
    ----------
    rule : callable
        ``rule(reports)`` -> one hashable outcome, a ``{outcome: probability}`` mapping or a
        :class:`~dpgames.privacy.distribution.FiniteDistribution`; or ``rule(reports, rng)`` -> one outcome
        drawn with the numpy Generator (a sampling-only mechanism: only sampled audits apply).
    utility : callable
        ``utility(t, outcome)`` or ``utility(t, outcome, agent)`` (``agent``: 0-based position).
    types : iterable of hashable
        The type space: the labels agents may report (distinct).
    payments : callable, optional
        ``payments(reports)`` -> the n agents' expected payments; utility is then quasi-linear.
    anonymous : bool, default False
        Declares that the law depends only on the multiset of reports (and payments are
        permutation-equivariant): agents of equal type are audited once.  Checked on
        :data:`ANONYMITY_SAMPLES` seeded permuted profiles per number of agents; a false declaration is
        refused, naming the profile and the permutation.
    name : str, optional
        Shown in reports (default: the rule's ``__name__``).
    vectorized : bool, default False
        ``utility(types, outcomes[, agents])`` takes arrays and returns the whole table (module docstring).
    cache_size : int, default :data:`CACHE_SIZE`
        Laws kept (oldest dropped first).

    Raises
    ------
    ValidationError
        If a callable is missing or has the wrong number of required parameters, ``types`` is not an
        iterable of distinct hashable labels, ``anonymous=True`` with an agent-dependent utility, or
        ``cache_size`` is not an integer ``>= 1``.  Later failures of the user's functions (an exception,
        a law that does not sum to 1, a non-finite utility, a utility or payment of magnitude above
        :data:`MAX_MAGNITUDE`, whose differences would leave the float range) are ValidationErrors naming
        the reports, outcome, type or agent involved.

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> def median_rule(reports):
    ...     return sorted(reports)[len(reports) // 2]
    >>> def utility(t, outcome):
    ...     return -abs(t - outcome)
    >>> median = CustomMechanism(median_rule, utility, types=range(11), anonymous=True)
    >>> outcomes, probabilities = median.law((3, 7, 5, 1, 9))
    >>> outcomes, probabilities.tolist(), median.expected_utility(0, 3, (3, 7, 5, 1, 9))
    ((5,), [1.0], -2.0)
    >>> truthfulness_audit(median, [3, 7, 5, 1, 9]).is_truthful()     # every agent x every lie, exact
    True
    >>> mean = CustomMechanism(lambda r: round(sum(r) / len(r)), utility, types=range(11), anonymous=True)
    >>> truthfulness_audit(mean, [3, 7, 5, 1, 9]).worst_case
    {'agent': 0, 'true_type': 3, 'lie': 0, 'gain': 1.0, 'profile': (3, 7, 5, 1, 9)}
    """

    def __init__(self, rule: Callable, utility: Callable, types: Iterable, *, payments: Callable | None = None,
                 anonymous: bool = False, name: str | None = None, vectorized: bool = False,
                 cache_size: int = CACHE_SIZE):
        if not callable(rule):
            raise ValidationError("rule", f"must be a callable reports -> outcome or law, got {rule!r}")
        if not callable(utility):
            raise ValidationError("utility", f"must be a callable utility(t, outcome[, agent]), got {utility!r}")
        if payments is not None and not callable(payments):
            raise ValidationError("payments", f"must be a callable reports -> payments or None, got {payments!r}")
        arity = required_positional(rule, "rule")
        if arity not in (None, 1, 2):
            raise ValidationError("rule", f"must take (reports) or (reports, rng), but it requires {arity} "
                                          "positional parameters")
        self.sampling = arity == 2
        u_arity = required_positional(utility, "utility")
        if u_arity not in (2, 3):
            got = "an unreadable signature" if u_arity is None else f"{u_arity} required positional parameters"
            raise ValidationError("utility", f"must take (t, outcome) or (t, outcome, agent), but it has {got}")
        self.agent_dependent = u_arity == 3
        if anonymous and self.agent_dependent:
            raise ValidationError("anonymous", "is declared True, which needs a utility that ignores the agent: "
                                               "utility(t, outcome), not utility(t, outcome, agent)")
        self._types = _type_space(types)
        self._index = {t: k for k, t in enumerate(self._types)}
        self._labels = np.empty(len(self._types), dtype=object)
        for k, t in enumerate(self._types):
            self._labels[k] = t
        self.rule, self.utility, self.payments = rule, utility, payments
        self.anonymous = bool(anonymous)
        self.vectorized = bool(vectorized)
        self.name: str = name or cast(str, getattr(rule, "__name__", type(rule).__name__))
        if not (isinstance(cache_size, int) and cache_size >= 1):
            raise ValidationError("cache_size", f"must be an integer >= 1, got {cache_size!r}")
        self.cache_size = cache_size
        self.rule_calls = self.payment_calls = self.check_calls = 0
        self._cache: dict = {}
        self._outcomes: list = []
        self._outcome_index: dict = {}
        self._tables: dict = {}  # agent (None if the utility ignores it) -> (types x outcome cap) with NaN = unknown
        self._checked_n: set[int] = set()
        self.scale = 1.0  # the largest |utility| or |payment| met, for the rounding slack

    def __repr__(self) -> str:
        kind = "sampling-only " if self.sampling else ""
        return f"CustomMechanism({self.name!r}, {kind}{self.n_types} types{', anonymous' if self.anonymous else ''})"

    @property
    def types(self) -> tuple:
        """The type labels, in the order given."""
        return self._types

    @property
    def n_types(self) -> int:
        """The number of types."""
        return len(self._types)

    @property
    def outcomes(self) -> tuple:
        """Every outcome met so far, in order of first appearance."""
        return tuple(self._outcomes)

    # --- reports --------------------------------------------------------------------------------------
    def indices(self, reports: Sequence, field: str = "reports") -> np.ndarray:
        """Type indices of a profile of labels; ValidationError naming the first label outside ``types``."""
        zero_d = isinstance(reports, np.ndarray) and reports.ndim == 0
        if isinstance(reports, (str, bytes)) or not isinstance(reports, Iterable) or zero_d:
            raise ValidationError(field, f"must be a sequence of type labels, got {repr(reports)[:80]}")
        out = []
        for i, r in enumerate(reports):
            try:
                out.append(self._index[r])
            except (KeyError, TypeError):
                raise ValidationError(field, f"is refused: agent {i} reports {r!r}, which is not in types "
                                             f"({_show(self._types)})") from None
        if not out:
            raise ValidationError(field, "must hold at least one report")
        return np.asarray(out, dtype=np.intp)

    def labels(self, idx: np.ndarray) -> tuple:
        """The tuple of type labels of an index array."""
        return tuple(self._labels[idx].tolist())

    def key(self, idx: np.ndarray) -> Any:
        """The cache key of a profile: when anonymous the multiset (the counts per type, as int64 bytes:
        hashed once), else the tuple of type indices."""
        if self.anonymous:
            return np.bincount(idx, minlength=self.n_types).astype(np.int64).tobytes()
        return tuple(idx.tolist())

    # --- laws -----------------------------------------------------------------------------------------
    def entry(self, idx: np.ndarray | None, reports: tuple | None = None, key: Any = None) -> tuple:
        """The cached ``(outcome indices, probabilities or None, payments or None)`` at a profile.

        A point mass is ``(int, None, pay)``.  ``pay`` is the (n,) payment vector, or when anonymous the
        payment per reported type (NaN for types nobody reports).  Give ``idx`` or both ``reports`` and
        ``key``."""
        if key is None:
            key = self.key(cast(np.ndarray, idx))   # idx is given when key is not
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if self.sampling:
            raise ValidationError("rule", f"{self.name} is sampling-only (rule(reports, rng)): it has no exact law; "
                                          "use the sampled audit (truthfulness_audit(mech, profile, samples=...))")
        if reports is None:
            reports = self.labels(cast(np.ndarray, idx))   # idx is given when reports are not
        found = self._compute(idx, reports)
        if len(self._cache) >= self.cache_size:
            del self._cache[next(iter(self._cache))]
        self._cache[key] = found
        return found

    def _compute(self, idx: np.ndarray | None, reports: tuple) -> tuple:
        self.rule_calls += 1
        try:
            raw = self.rule(reports)
        except Exception as exc:
            raise _wrapped("rule", exc, reports) from exc
        try:
            k = self._outcome_index.get(raw) if type(raw) in _PLAIN_OUTCOMES else None
        except TypeError:  # a tuple holding a list: refused by _normalise
            k = None
        out, p = (k, None) if k is not None else self._normalise(raw, reports)
        pay = None
        if self.payments is not None:
            self.payment_calls += 1
            pay = self._payments(_call(self.payments, "payments", reports), reports)
            if self.anonymous:
                pay = self._by_type(self.indices(reports) if idx is None else idx, pay, reports)
        return out, p, pay

    def _normalise(self, raw: Any, reports: tuple) -> tuple:
        """``(int, None)`` for one outcome, else ``(outcome indices, probabilities)`` of a checked law."""
        if type(raw) in _PLAIN_OUTCOMES:
            return self._outcome(raw, reports), None
        if isinstance(raw, FiniteDistribution):
            labels = [tuple(o) if isinstance(o, list) else o for o in raw.outcomes.tolist()]
            probs = raw.probabilities.tolist()
        elif isinstance(raw, Mapping):
            labels, probs = list(raw.keys()), list(raw.values())
        else:
            return self._outcome(raw, reports), None
        if not labels:
            raise ValidationError("rule", f"returned an empty law at reports {_show(reports)}")
        p = np.empty(len(probs))
        for k, (o, q) in enumerate(zip(labels, probs)):
            x = _finite_number(q)
            if x is None or x < -NEGATIVE_SLACK:
                raise ValidationError("rule", f"gives outcome {o!r} the probability {q!r} at reports {_show(reports)}: "
                                              "probabilities must be finite numbers >= 0")
            p[k] = max(x, 0.0)
        total = p.sum()
        if not abs(total - 1.0) <= SUM_TOLERANCE:
            raise ValidationError("rule", f"returned probabilities summing to {float(total):.12g} (not 1 within "
                                          f"{SUM_TOLERANCE:g}) at reports {_show(reports)}")
        idx = np.fromiter((self._outcome(o, reports) for o in labels), dtype=np.intp, count=len(labels))
        return idx, p / total

    def _outcome(self, o: Any, reports: tuple) -> int:
        try:
            k = self._outcome_index.get(o)
        except TypeError:
            raise ValidationError("rule", f"returned the non-hashable outcome {o!r} at reports {_show(reports)}: "
                                          "outcomes must be hashable (a tuple, not a list or an array)") from None
        if k is None:
            k = self._outcome_index[o] = len(self._outcomes)
            self._outcomes.append(o)  # the utility tables grow on their next use (:meth:`table`)
        return k

    def _payments(self, raw: Any, reports: tuple) -> np.ndarray:
        n = len(reports)
        try:
            pay = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError("payments", f"must return {n} numbers at reports {_show(reports)}, "
                                              f"got {raw!r}") from None
        if pay.shape != (n,):
            raise ValidationError("payments", f"must return one payment per agent ({n}) at reports "
                                              f"{_show(reports)}, got shape {pay.shape}")
        if not np.isfinite(pay).all():
            raise ValidationError("payments", f"returned a non-finite payment ({pay[~np.isfinite(pay)][0]}) at "
                                              f"reports {_show(reports)}")
        _check_magnitude("payments", pay, f"reports {_show(reports)}")
        if pay.size:
            self.scale = max(self.scale, float(np.abs(pay).max()))
        return pay

    def _by_type(self, idx: np.ndarray, pay: np.ndarray, reports: tuple) -> np.ndarray:
        """Anonymous payments per reported type; agents reporting the same type must pay the same."""
        m = self.n_types
        hi = np.full(m, -np.inf)
        lo = np.full(m, np.inf)
        np.maximum.at(hi, idx, pay)
        np.minimum.at(lo, idx, pay)
        spread = np.where(np.isfinite(hi), hi - lo, 0.0)
        if spread.max() > SUM_TOLERANCE * max(1.0, self.scale):
            t = int(np.argmax(spread))
            raise ValidationError("anonymous", f"is declared True, but agents reporting {self._types[t]!r} pay "
                                               f"different amounts ({lo[t]!r} and {hi[t]!r}) at reports "
                                               f"{_show(reports)}: payments are not permutation-equivariant")
        return np.where(np.isfinite(hi), hi, np.nan)

    # --- utilities ------------------------------------------------------------------------------------
    def table(self, agent: int) -> np.ndarray:
        """The (types x outcomes) utility cache of ``agent`` (NaN: not computed yet); call :meth:`fill` first."""
        key = agent if self.agent_dependent else None
        holder = self._tables.get(key)
        if holder is not None and holder[0].shape[1] >= len(self._outcomes):
            return holder[0]
        cap = max(8, 2 * len(self._outcomes))
        if holder is None:
            holder = self._tables[key] = [np.full((self.n_types, cap), np.nan)]
        else:
            grown = np.full((self.n_types, cap), np.nan)
            grown[:, :holder[0].shape[1]] = holder[0]
            holder[0] = grown
        return holder[0]

    def fill(self, agent: int, rows: np.ndarray | int, cols: np.ndarray | int) -> np.ndarray:
        """Compute the missing utilities of types ``rows`` x outcomes ``cols`` for ``agent``; the table."""
        table = self.table(agent)
        rows, cols = np.atleast_1d(rows), np.atleast_1d(cols)
        missing = np.isnan(table[np.ix_(rows, cols)])
        if not missing.any():
            return table
        need_rows = rows[missing.any(axis=1)]
        need_cols = np.unique(cols[missing.any(axis=0)])
        if self.vectorized:
            block = self._vector_block(agent, need_rows, need_cols)
        else:
            block = np.empty((need_rows.size, need_cols.size))
            for a, t in enumerate(need_rows):
                for b, o in enumerate(need_cols):
                    block[a, b] = self._scalar(agent, int(t), int(o))
        table[np.ix_(need_rows, need_cols)] = block
        self.scale = max(self.scale, float(np.abs(block).max()))
        return table

    def _scalar(self, agent: int, t: int, o: int) -> float:
        label, outcome = self._types[t], self._outcomes[o]
        args = (label, outcome, agent) if self.agent_dependent else (label, outcome)
        where = f"type {label!r}, outcome {outcome!r}" + (f", agent {agent}" if self.agent_dependent else "")
        try:
            value = self.utility(*args)
        except Exception as exc:
            raise ValidationError("utility", f"raised {type(exc).__name__}: {exc} at {where}") from exc
        x = _finite_number(value)
        if x is None:
            raise ValidationError("utility", f"must return a finite number, got {value!r} at {where}")
        _check_magnitude("utility", np.array([x]), where)
        return x

    def _vector_block(self, agent: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        outcomes = [self._outcomes[o] for o in cols]
        types = self._labels[rows]
        try:
            types = types.astype(np.result_type(*types.tolist()))
        except (TypeError, ValueError):
            pass
        args = (types, outcomes, np.array([agent])) if self.agent_dependent else (types, outcomes)
        where = f"types {_show(types.tolist())}, outcomes {_show(outcomes)}"
        try:
            raw = self.utility(*args)
        except Exception as exc:
            raise ValidationError("utility", f"(vectorized) raised {type(exc).__name__}: {exc} at {where}") from exc
        shape = (rows.size, cols.size)
        try:
            block = np.asarray(raw, dtype=float).reshape(shape)
        except (TypeError, ValueError):
            raise ValidationError("utility", f"(vectorized) must return an array of shape {shape} "
                                             f"(types x outcomes) at {where}") from None
        if not np.isfinite(block).all():
            a, b = np.argwhere(~np.isfinite(block))[0]
            raise ValidationError("utility", f"must return finite numbers, got {block[a, b]} at type "
                                             f"{types[a]!r}, outcome {outcomes[b]!r}")
        _check_magnitude("utility", block, where)
        return block

    def value(self, agent: int, t: int, report: int, found: tuple) -> float:
        """Agent ``agent``'s exact expected utility, true type index ``t``, reporting ``report``, at ``found``."""
        out, p, pay = found
        table = self.table(agent)
        if p is None:
            u = table[t, out]
            if np.isnan(u):  # not computed yet
                u = self.fill(agent, t, out)[t, out]
        else:
            row = table[t, out]
            if np.isnan(row).any():
                row = self.fill(agent, t, out)[t, out]
            u = row @ p
        if pay is None:
            return float(u)
        return float(u - (pay[report] if self.anonymous else pay[agent]))

    def values_at(self, agent: int, t: int, reports: Sequence[int], found: Sequence[tuple]) -> np.ndarray:
        """:meth:`value` at several laws at once (``agent`` reports ``reports[k]`` at ``found[k]``): one
        gather when every law is a point mass."""
        if not all(p is None for _, p, _ in found):
            return np.array([self.value(agent, t, r, f) for r, f in zip(reports, found)])
        outs = np.fromiter((o for o, _, _ in found), dtype=np.intp, count=len(found))
        u = self.table(agent)[t, outs]
        if np.isnan(u).any():
            u = self.fill(agent, t, outs)[t, outs]
        if found[0][2] is None:
            return u
        owner = (lambda r: r) if self.anonymous else (lambda r: agent)
        return u - np.array([pay[owner(r)] for r, (_, _, pay) in zip(reports, found)])

    def values(self, agent: int, found: tuple) -> np.ndarray:
        """Expected utility of every true type at ``found``, before payments (one entry per type)."""
        out, p, _ = found
        table = self.fill(agent, np.arange(self.n_types), out)
        return table[:, out] if p is None else table[:, out] @ p

    # --- the public exact interface -------------------------------------------------------------------
    def law(self, reports: Sequence) -> tuple[tuple, np.ndarray]:
        """The exact law at ``reports``: (outcomes, probabilities), outcomes as the rule labels them.

        Parameters
        ----------
        reports : sequence
            One type label per agent.

        Returns
        -------
        outcomes : tuple
            The outcomes with positive probability (one for a deterministic rule).
        probabilities : numpy.ndarray
            Their probabilities (a copy).

        Raises
        ------
        ValidationError
            If a report is not a type, or the rule fails or returns an invalid law (naming the reports).
        """
        out, p, _ = self.entry(self.indices(reports))
        if p is None:
            return (self._outcomes[out],), np.ones(1)
        return tuple(self._outcomes[k] for k in out), p.copy()

    def expected_utility(self, agent: int, true_type: Any, reports: Sequence) -> float:
        """The exact expected utility (minus the expected payment) of ``agent`` with ``true_type`` at ``reports``.

        Parameters
        ----------
        agent : int
            Position in ``reports``.
        true_type : hashable
            The agent's true type (a label of ``types``); ``reports[agent]`` is what she reported.
        reports : sequence
            One type label per agent.

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            If ``agent`` is out of range, a label is not a type, or the user's functions fail.
        """
        idx = self.indices(reports)
        if not (isinstance(agent, (int, np.integer)) and 0 <= agent < idx.size):
            raise ValidationError("agent", f"must be an index in [0, {idx.size - 1}], got {agent!r}")
        t = self.indices([true_type], "true_type")[0]
        self.check_anonymity(idx.size)
        return self.value(int(agent), int(t), int(idx[agent]), self.entry(idx))

    def check_anonymity(self, n: int, profile: np.ndarray | None = None, seed: int = 0) -> None:
        """Refuse ``anonymous=True`` when a permuted profile (seeded sample) changes the law or the payments."""
        if not self.anonymous or n in self._checked_n or n < 2:
            return
        rng = as_generator(seed, "seed")
        samples = [rng.integers(self.n_types, size=n) for _ in range(ANONYMITY_SAMPLES)]
        if profile is not None:
            samples[0] = np.asarray(profile)
        for idx in samples:
            perm = rng.permutation(n)
            a, b = self.labels(idx), self.labels(idx[perm])
            la, lb = (self._check_law(r) for r in (a, b))
            outcomes = set(la[0]) | set(lb[0])
            gap = max(abs(la[0].get(o, 0.0) - lb[0].get(o, 0.0)) for o in outcomes)
            if gap > SUM_TOLERANCE:
                raise ValidationError("anonymous", f"is declared True, but the law at reports {_show(a)} differs (by "
                                                   f"{gap:.3g} in probability) from the law at its permutation "
                                                   f"{_show(b)} (permutation {perm.tolist()})")
            if la[1] is not None and np.abs(lb[1] - la[1][perm]).max() > SUM_TOLERANCE * max(1.0, self.scale):
                raise ValidationError("anonymous", f"is declared True, but the payments at reports {_show(a)} are not "
                                                   f"permuted with the reports at {_show(b)} (permutation "
                                                   f"{perm.tolist()})")
        self._checked_n.add(n)

    def _check_law(self, reports: tuple) -> tuple[dict, np.ndarray | None]:
        self.check_calls += 1
        out, p = self._normalise(_call(self.rule, "rule", reports), reports)
        law = {self._outcomes[out]: 1.0} if p is None else {}
        if p is not None:
            for k, q in zip(out.tolist(), p.tolist()):
                law[self._outcomes[k]] = law.get(self._outcomes[k], 0.0) + q
        pay = None if self.payments is None else self._payments(_call(self.payments, "payments", reports), reports)
        return law, pay

    # --- sampling-only mechanisms ---------------------------------------------------------------------
    def draw(self, reports: tuple, rng: np.random.Generator) -> int:
        """One outcome (its index) of a sampling-only rule at ``reports``."""
        self.rule_calls += 1
        raw = _call(self.rule, "rule", reports, rng)
        if isinstance(raw, (Mapping, FiniteDistribution)):
            raise ValidationError("rule", f"a sampling rule(reports, rng) must return one outcome, got a law at "
                                          f"reports {_show(reports)}")
        return self._outcome(raw, reports)

    def expected_payments(self, idx: np.ndarray, reports: tuple) -> np.ndarray | None:
        """The cached payments at a profile (sampling-only mechanisms: payments are expected payments)."""
        if self.payments is None:
            return None
        key = ("pay", self.key(idx))
        hit = self._cache.get(key)
        if hit is None:
            self.payment_calls += 1
            hit = self._cache[key] = self._payments(_call(self.payments, "payments", reports), reports)
        return hit


def _type_space(types: Iterable) -> tuple:
    if isinstance(types, (str, bytes)) or not isinstance(types, Iterable):
        raise ValidationError("types", f"must be an iterable of hashable type labels, got {types!r}")
    labels = tuple(types.tolist() if isinstance(types, np.ndarray) else types)
    if not labels:
        raise ValidationError("types", "must hold at least one type")
    seen: dict = {}
    for t in labels:
        try:
            if t in seen:
                raise ValidationError("types", f"lists {t!r} twice: type labels must be distinct")
        except TypeError:
            raise ValidationError("types", f"holds the non-hashable label {t!r}") from None
        seen[t] = True
    return labels


def _call(fn: Callable, what: str, reports: tuple, *extra: Any) -> Any:
    try:
        return fn(reports, *extra)
    except Exception as exc:
        raise _wrapped(what, exc, reports) from exc


def _wrapped(what: str, exc: Exception, reports: tuple) -> ValidationError:
    """The error of a user's function, naming the reports that triggered it (chain the original to it)."""
    return ValidationError(what, f"raised {type(exc).__name__}: {exc} at reports {_show(reports)}")


def _show(items: Sequence, limit: int = 12) -> str:
    items = list(items)
    if len(items) <= limit:
        return repr(tuple(items))
    return f"({', '.join(map(repr, items[:limit]))}, ... {len(items)} in all)"
