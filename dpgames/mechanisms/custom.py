"""A mechanism from plain functions: a user's rule, utility and payments, with exact laws on demand.

``CustomMechanism(rule, utility, types)`` wraps three callables so that the audits of
:mod:`dpgames.analysis.custom_audit` can enumerate them exactly:

* ``rule(reports)``: ``reports`` is a tuple of type labels, one per agent.  It returns one hashable
  outcome (deterministic), a mapping ``{outcome: probability}`` or a :class:`FiniteDistribution`
  (its ``outcomes`` labels).  A dict or a FiniteDistribution is a law; anything else (a tuple
  included) is one outcome.  ``rule(reports, rng)`` (two required parameters) is a *sampling-only*
  mechanism: it draws one outcome with the numpy Generator ``rng``; only the sampled audit applies
  to it.
* ``utility(t, outcome)`` or ``utility(t, outcome, agent)`` (``agent``: the 0-based position in
  ``reports``), told apart by the number of required positional parameters.  With
  ``vectorized=True`` it is called once per batch as ``utility(types, outcomes)`` (``types``: a
  numpy array of type labels, ``outcomes``: a list) or ``utility(types, outcomes, agents)``
  (``agents``: an int array), and returns an array of shape ``(len(types), len(outcomes))``,
  respectively ``(len(agents), len(types), len(outcomes))``.
* ``payments(reports)`` (optional): the n agents' expected payments; an agent's utility is
  quasi-linear, ``u(t, o) - p_i``.
* With ``batched=True`` the rule (and ``payments``) take a block of profiles at once, vectorised by
  the user: ``reports`` is a numpy array of shape ``(k, n)`` plus the shape of one label (the array
  ``numpy.asarray(types)`` indexed by the profiles' type indices: ``(k, n, m)`` for rankings given
  as m-tuples; labels of mixed kinds are passed as an object array), and the rule returns one
  outcome per profile, an array of shape ``(k,)`` or ``(k, d)`` (each row one outcome, read as a
  tuple); ``payments`` returns shape ``(k, n)``.  A batched rule is deterministic.  The exhaustive
  dominant-strategy audit calls it on blocks of profiles
  (:mod:`dpgames.analysis.custom_enumeration`), the ex-post audit once on the truthful profile and
  every lie, the coalitional audit on blocks of joint lies; the other audits on blocks of one
  profile.

Type spaces: ``types=`` is one space for every agent (any number of agents).  Agents of different
kinds say so explicitly: ``type_spaces=[space_0, ..., space_{n-1}]`` (one per agent; agents with
equal spaces share a role), or ``roles={name: space}`` with ``agent_roles=[name of agent 0, ...]``
and then, if natural, one utility per role (``utility={name: callable}``).  Both fix the number of
agents; each agent's report and true type range over her own space in every audit and in
:meth:`CustomMechanism.neighbouring_reports`, and ``anonymous=True`` means anonymity within each
role. A list of collections passed as ``types=`` is refused (it would read as labels), pointing
here.

``neutral=True`` (with ``types=`` the rankings of at most :data:`NEUTRAL_ALTERNATIVES` alternatives)
declares that the rule commutes with relabelling the alternatives; the exhaustive dominant-strategy
audit then enumerates one profile of the others per orbit.  Like ``anonymous=True`` it is checked on
seeded samples (:meth:`CustomMechanism.check_neutrality`) before any audit uses it.

Each distinct report tuple is evaluated once (``rule`` and ``payments`` together) and cached; with
``anonymous=True`` the cache key is the multiset of reports, so permutations share one call.  At
most ``cache_size`` laws are kept (oldest dropped first).  ``rule_calls`` counts the profiles
evaluated for laws, one per call of an unbatched rule (the anonymity check's are counted apart, in
``check_calls``).  Utilities are cached cell by cell in a (types x outcomes seen) table, so an
expected utility is one dot product.

Every failure of the user's functions or of their results is a :class:`ValidationError` naming the
reports, outcome, type or agent involved (the original exception chained), never a wrong figure.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np

from dpgames.display import tuple_text
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.neighbour_inputs import Neighbours
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, integer, is_hashable, required_positional

#: A law's probabilities must sum to 1 within this; entries in ``[-NEGATIVE_SLACK, 0)`` read as 0.
SUM_TOLERANCE = 1e-9
NEGATIVE_SLACK = 1e-12
#: A batched rule's integer outcomes spanning at most this many values are indexed by a table
#: lookup.
SMALL_SPAN = 1 << 16
#: Laws kept in the cache by default (oldest dropped first).
CACHE_SIZE = 200_000
#: Largest number of neighbouring pairs the privacy audits enumerate.
PAIR_LIMIT = 1_000_000
#: Profiles (each with one random permutation) on which ``anonymous=True`` is checked, per number of
#: agents.
ANONYMITY_SAMPLES = 8
#: Random profiles, and as many symmetric ones (voter i ranking as s^i(r) for a random relabelling
#: s), each with one random relabelling of the alternatives, on which ``neutral=True`` is checked.
NEUTRALITY_SAMPLES = 8
#: Most alternatives ``neutral=True`` accepts (720 rankings, 720 relabellings).
NEUTRAL_ALTERNATIVES = 6


#: Result types that are certainly one outcome (a fast path before the law checks).
_PLAIN_OUTCOMES = frozenset({int, float, str, tuple, bool, type(None), np.int64, np.float64})


#: Largest |utility| and |payment| accepted: a gain, (u - p) - (u' - p'), then stays within the
#: float range.
MAX_MAGNITUDE = np.finfo(float).max / 4


def _check_magnitude(field: str, values: np.ndarray, where: object) -> None:
    """Refuse utilities or payments whose differences could leave the float range
    (:data:`MAX_MAGNITUDE`)."""
    big = np.abs(values) > MAX_MAGNITUDE
    if big.any():
        raise ValidationError(
            field,
            f"must return numbers of magnitude at most {MAX_MAGNITUDE:.4g} (so that "
            f"gains fit a float), got {values[big].flat[0]:g} at {where}",
        )


def _finite_number(value: Any) -> float | None:
    """``value`` as a finite float (a number or a bool), else ``None``."""
    if isinstance(value, (numbers.Real, np.bool_)):
        x = float(value)
        if np.isfinite(x):
            return x
    return None


class CustomMechanism:
    """A direct mechanism given by a user's ``rule``, ``utility`` and optional ``payments`` on
    ``types``.

    See the module docstring for the forms each callable may take.  The audits of
    :mod:`dpgames.analysis.custom_audit` (:func:`dpgames.truthfulness_audit`,
    :func:`dpgames.testing.assert_truthful`) enumerate it exactly, as they do the built-in
    mechanisms.

    Parameters
    ----------
    rule : callable
        ``rule(reports)`` -> one hashable outcome, a ``{outcome: probability}`` mapping or a
        :class:`~dpgames.privacy.distribution.FiniteDistribution`; or ``rule(reports, rng)`` -> one
        outcome drawn with the numpy Generator (a sampling-only mechanism: only sampled audits
        apply).
    utility : callable or mapping
        ``utility(t, outcome)`` or ``utility(t, outcome, agent)`` (``agent``: 0-based position);
        with ``roles``, optionally ``{role: utility}``.
    types : iterable of hashable, optional
        The type space: the labels every agent may report (distinct).  Exactly one of ``types``,
        ``type_spaces`` and ``roles`` is given.
    type_spaces : sequence of iterables, optional
        One type space per agent (fixes ``n``).
    roles : mapping, optional
        ``{role: type space}``, with ``agent_roles``.
    agent_roles : sequence, optional
        Each agent's role (fixes ``n``).
    payments : callable, optional
        ``payments(reports)`` -> the n agents' expected payments; utility is then quasi-linear.
    anonymous : bool, default False
        Declares that the law depends only on the multiset of reports (and payments are
        permutation-equivariant): agents of equal type are audited once.  Checked on
        :data:`ANONYMITY_SAMPLES` seeded permuted profiles per number of agents; a false declaration
        is refused, naming the profile and the permutation.
    neutral : bool, default False
        Declares that the rule commutes with every relabelling ``s`` of the alternatives: ``types``
        are the ``m!`` strict rankings of ``m <= NEUTRAL_ALTERNATIVES`` alternatives, the law at
        the relabelled profile is the relabelled law (an outcome that is an alternative is
        relabelled, a tuple entry by entry, anything else kept), payments are unchanged, and
        ``utility(s(t), s(o)) = utility(t, o)`` (as :func:`~dpgames.types.ordinal_utility`).  The
        exhaustive dominant-strategy audit then enumerates one profile of the others per orbit
        under relabelling (about ``m!`` times fewer): a relabelled profile has the relabelled gains
        (with every lie tried: restricted ``lies=`` enumerate every profile).  Checked like
        ``anonymous`` on :data:`NEUTRALITY_SAMPLES` seeded profiles and relabellings per number of
        agents; a false declaration is refused, naming the profile and the relabelling.
    name : str, optional
        Shown in reports (default: the rule's ``__name__``).
    vectorized : bool, default False
        ``utility(types, outcomes[, agents])`` takes arrays and returns the whole table (module
        docstring).
    batched : bool, default False
        ``rule(reports)`` (and ``payments``) take an array of ``k`` profiles and return ``k``
        outcomes (``k`` payment rows): module docstring.
    cache_size : int, default :data:`CACHE_SIZE`
        Laws kept (oldest dropped first).

    Raises
    ------
    ValidationError
        If a callable is missing or has the wrong number of required parameters, ``types`` is not an
        iterable of distinct hashable labels (or is a list of type spaces), not exactly one of
        ``types``, ``type_spaces`` and ``roles`` is given, ``agent_roles`` names an unknown role, a
        per-role utility is missing, ``anonymous=True`` with an agent-dependent utility,
        ``batched=True`` with a sampling rule, ``neutral=True`` without ``types=`` every ranking of
        at most :data:`NEUTRAL_ALTERNATIVES` alternatives, or ``cache_size`` is not an integer ``>=
        1``.  A batched rule returning an array of the wrong shape is refused when called, naming
        the shape expected and the first profile of the block.  Later failures of the user's
        functions (an exception, a law that does not sum to 1, a non-finite utility, a utility or
        payment of magnitude above :data:`MAX_MAGNITUDE`, whose differences would leave the float
        range) are ValidationErrors naming the reports, outcome, type or agent involved.

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
    >>> truthfulness_audit(median, [3, 7, 5, 1, 9]).is_truthful()  # every agent x every lie, exact
    True
    >>> mean = CustomMechanism(
    ...     lambda r: round(sum(r) / len(r)), utility, types=range(11), anonymous=True
    ... )
    >>> truthfulness_audit(mean, [3, 7, 5, 1, 9]).worst_case
    {'agent': 0, 'true_type': 3, 'lie': 0, 'gain': 1.0, 'profile': (3, 7, 5, 1, 9)}
    """

    def __init__(
        self,
        rule: Callable,
        utility: Callable | Mapping[Any, Callable],
        types: Iterable | None = None,
        *,
        type_spaces: Sequence[Iterable] | None = None,
        roles: Mapping[Any, Iterable] | None = None,
        agent_roles: Sequence | None = None,
        payments: Callable | None = None,
        anonymous: bool = False,
        neutral: bool = False,
        name: str | None = None,
        vectorized: bool = False,
        batched: bool = False,
        cache_size: int = CACHE_SIZE,
    ):
        if not callable(rule):
            raise ValidationError(
                "rule", f"must be a callable reports -> outcome or law, got {rule!r}"
            )
        if payments is not None and not callable(payments):
            raise ValidationError(
                "payments", f"must be a callable reports -> payments or None, got {payments!r}"
            )
        arity = required_positional(rule, "rule")
        if arity not in (None, 1, 2):
            raise ValidationError(
                "rule",
                f"must take (reports) or (reports, rng), but it requires {arity} "
                "positional parameters",
            )
        self.sampling = arity == 2
        if not isinstance(batched, (bool, np.bool_)):
            raise ValidationError("batched", f"must be True or False, got {batched!r}")
        if batched and self.sampling:
            raise ValidationError(
                "batched",
                "is for a deterministic rule(reports) taking a block of profiles; "
                "a sampling rule(reports, rng) is called one profile at a time",
            )
        self.batched = bool(batched)
        spaces, role_names, role_of = _role_spaces(types, type_spaces, roles, agent_roles)
        self._types = tuple(dict.fromkeys(t for space in spaces for t in space))
        self._index = {t: k for k, t in enumerate(self._types)}
        self._labels = np.empty(len(self._types), dtype=object)
        for k, t in enumerate(self._types):
            self._labels[k] = t
        self._label_list = list(self._types)
        self._batch_labels = (
            _label_array(self._types, self._labels) if self.batched else self._labels
        )
        self._spaces = [
            np.array([self._index[t] for t in space], dtype=np.intp) for space in spaces
        ]
        self._member = [np.isin(np.arange(len(self._types)), space) for space in self._spaces]
        self.role_names: tuple = role_names
        self._role_of: np.ndarray | None = role_of
        self._utilities = _role_utilities(utility, role_names, roles is not None)
        self.agent_dependent = any(dependent for _, dependent in self._utilities)
        self.utility = utility
        if anonymous and self.agent_dependent:
            raise ValidationError(
                "anonymous",
                "is declared True, which needs a utility that ignores the agent: "
                "utility(t, outcome), not utility(t, outcome, agent)",
            )
        self.rule, self.payments = rule, payments
        self.anonymous = bool(anonymous)
        self.vectorized = bool(vectorized)
        self.name: str = name or cast(str, getattr(rule, "__name__", type(rule).__name__))
        self.cache_size = integer("cache_size", cache_size, low=1)
        self.rule_calls = self.payment_calls = self.check_calls = 0
        self._cache: dict = {}
        self._outcomes: list = []
        self._outcome_index: dict = {}
        self._tables: dict = {}  # (role, agent or None) -> (types x outcome cap) with NaN = unknown
        self._checked_n: set[int] = set()
        self.neutral = bool(neutral)
        self._neutral_n: set[int] = set()
        self._orbits: dict[int, np.ndarray] = {}
        if not isinstance(neutral, (bool, np.bool_)):
            raise ValidationError("neutral", f"must be True or False, got {neutral!r}")
        if neutral:
            self._alternatives, self._moves, self._relabel = _relabellings(self, types)
        self.scale = 1.0  # the largest |utility| or |payment| met, for the rounding slack

    def __getstate__(self) -> dict:
        """Pickled (for worker processes) without the cached laws: a worker computes its own."""
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state

    def __repr__(self) -> str:
        kind = "sampling-only " if self.sampling else "batched " if self.batched else ""
        roles = (
            ""
            if self._role_of is None
            else f", {self._role_of.size} agents in {len(self._spaces)} roles"
        )
        return (
            f"CustomMechanism({self.name!r}, {kind}{self.n_types} types{roles}"
            f"{', anonymous' if self.anonymous else ''})"
        )

    @property
    def types(self) -> tuple:
        """The type labels, in the order given (with per-agent type spaces or roles: every label of
        any space, in order of first appearance; :meth:`type_space` gives one agent's)."""
        return self._types

    @property
    def n_types(self) -> int:
        """The number of type labels (of all spaces together)."""
        return len(self._types)

    @property
    def n_agents(self) -> int | None:
        """The number of agents fixed by ``type_spaces`` or ``agent_roles`` (``None``: any
        number)."""
        return None if self._role_of is None else int(self._role_of.size)

    @property
    def outcomes(self) -> tuple:
        """Every outcome met so far, in order of first appearance."""
        return tuple(self._outcomes)

    def role(self, agent: int) -> int:
        """The index (in ``role_names``) of ``agent``'s role (0 when every agent shares one type
        space)."""
        return 0 if self._role_of is None else int(self._role_of[agent])

    def space(self, agent: int) -> np.ndarray:
        """The type indices ``agent`` may have and report (her role's type space)."""
        return self._spaces[self.role(agent)]

    def type_space(self, agent: int) -> tuple:
        """The type labels ``agent`` may have and report.

        Parameters
        ----------
        agent : int
            0-based position in the reports.

        Returns
        -------
        tuple

        Raises
        ------
        ValidationError
            If ``agent`` is not a position (of the ``n_agents`` when fixed).
        """
        if (
            not isinstance(agent, (int, np.integer))
            or isinstance(agent, bool)
            or agent < 0
            or (self._role_of is not None and agent >= self._role_of.size)
        ):
            raise ValidationError("agent", f"must be an agent's 0-based position, got {agent!r}")
        return self._labels_of(self.space(int(agent)))

    def roles_of(self, n: int) -> np.ndarray:
        """The role index of each of ``n`` agents (all 0 without roles)."""
        return np.zeros(n, dtype=np.intp) if self._role_of is None else self._role_of

    def check_n(self, n: int, field: str = "n") -> None:
        """Refuse a number of agents other than the one fixed by ``type_spaces`` or
        ``agent_roles``."""
        if self._role_of is not None and n != self._role_of.size:
            raise ValidationError(
                field,
                f"gives {n} agents, but the mechanism has {self._role_of.size} (one per "
                "type space or agent role)",
            )

    def random_profile(self, rng: RNGLike, n: int) -> np.ndarray:
        """A profile of ``n`` type indices, each agent's drawn uniformly from her type space
        (``rng``: a seed, a Generator, or None)."""
        rng = as_generator(rng)
        if self._role_of is None:
            return self._spaces[0][rng.integers(self._spaces[0].size, size=n)]
        return np.array(
            [self._spaces[r][rng.integers(self._spaces[r].size)] for r in self._role_of.tolist()],
            dtype=np.intp,
        )

    def classes(self, idx: np.ndarray) -> np.ndarray:
        """Each agent's (role, type) class as one integer ``role * n_types + type``: what anonymity
        keeps."""
        return self.roles_of(idx.size) * self.n_types + idx

    # --- reports
    # --------------------------------------------------------------------------------------
    def _indices(self, reports: Sequence, field: str = "reports") -> np.ndarray:
        """Type indices of a profile of labels; ValidationError naming the first label outside
        ``types``."""
        zero_d = isinstance(reports, np.ndarray) and reports.ndim == 0
        if isinstance(reports, (str, bytes)) or not isinstance(reports, Iterable) or zero_d:
            raise ValidationError(
                field, f"must be a sequence of type labels, got {repr(reports)[:80]}"
            )
        out = []
        for i, r in enumerate(reports):
            try:
                out.append(self._index[r])
            except (KeyError, TypeError):
                raise ValidationError(
                    field,
                    f"is refused: agent {i} reports {r!r}, which is not in "
                    f"{self._space_name(i)} ({tuple_text(self._space_labels(i))})",
                ) from None
        if not out:
            raise ValidationError(field, "must hold at least one report")
        idx = np.asarray(out, dtype=np.intp)
        if self._role_of is not None:
            self.check_n(idx.size, field)
            for i, r in enumerate(out):
                if not self._member[self._role_of[i]][r]:
                    raise ValidationError(
                        field,
                        f"is refused: agent {i} reports {reports[i]!r}, which is not in "
                        f"{self._space_name(i)} ({tuple_text(self._space_labels(i))})",
                    )
        return idx

    def _space_name(self, agent: int) -> str:
        if self._role_of is None:
            return "types"
        if agent >= self._role_of.size:
            return f"any type space (the mechanism has {self._role_of.size} agents)"
        return f"the type space of role {self.role_names[self._role_of[agent]]!r}"

    def _space_labels(self, agent: int) -> tuple:
        if self._role_of is None or agent >= self._role_of.size:
            return self._types
        return self._labels_of(self.space(agent))

    def _labels_of(self, idx: np.ndarray) -> tuple:
        """The tuple of type labels of an index array."""
        return tuple(self._labels[idx].tolist())

    def _key(self, idx: np.ndarray) -> Any:
        """The cache key of a profile: when anonymous the multiset (the counts per type, as int64
        bytes: hashed once), else the tuple of type indices."""
        if self.anonymous:
            if self._role_of is None:
                return np.bincount(idx, minlength=len(self._types)).astype(np.int64).tobytes()
            return (
                np.bincount(self.classes(idx), minlength=len(self._spaces) * len(self._types))
                .astype(np.int64)
                .tobytes()
            )
        return tuple(idx.tolist())

    def _keys(self, rows: np.ndarray) -> list:
        """:meth:`_key` of each row of ``rows`` (``(k, n)`` type indices), computed at once."""
        if not self.anonymous:
            return [tuple(r) for r in rows.tolist()]
        size = len(self._spaces) * self.n_types if self._role_of is not None else self.n_types
        cls = rows if self._role_of is None else self.classes(rows)
        counts = np.zeros((rows.shape[0], size), dtype=np.int64)
        np.add.at(counts, (np.arange(rows.shape[0])[:, None], cls), 1)
        raw, width = counts.tobytes(), size * 8
        return [raw[k * width : (k + 1) * width] for k in range(rows.shape[0])]

    # --- laws
    # -----------------------------------------------------------------------------------------
    def _entry(
        self, idx: np.ndarray | None, reports: tuple | None = None, key: Any = None
    ) -> tuple:
        """The cached ``(outcome indices, probabilities or None, payments or None)`` at a profile.

        A point mass is ``(int, None, pay)``.  ``pay`` is the (n,) payment vector, or when anonymous
        the payment per reported type (NaN for types nobody reports).  Give ``idx`` or both
        ``reports`` and ``key``."""
        if key is None:
            key = self._key(cast(np.ndarray, idx))  # idx is given when key is not
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if self.sampling:
            raise ValidationError(
                "rule",
                f"{self.name} is sampling-only (rule(reports, rng)): it has no exact law; "
                "use the sampled audit (truthfulness_audit(mech, profile, samples=...))",
            )
        if reports is None:
            reports = self._labels_of(cast(np.ndarray, idx))  # idx is given when reports are not
        found = self._compute(idx, reports)
        if len(self._cache) >= self.cache_size:
            del self._cache[next(iter(self._cache))]
        self._cache[key] = found
        return found

    def _compute(self, idx: np.ndarray | None, reports: tuple) -> tuple:
        if self.batched:
            self.rule_calls += 1
            idx = self._indices(reports) if idx is None else idx
            outs, pays = self._batch(idx[None])
            pay = None if pays is None else pays[0]
            if pay is not None and self.anonymous:
                pay = self._by_class(idx, pay, reports)
            return int(outs[0]), None, pay
        out, p, pay = self._entries([reports])[0]
        if self.payments is not None:
            self.payment_calls += 1
            pay = self._payments(_call(self.payments, "payments", reports), reports)
            if self.anonymous:
                pay = self._by_class(self._indices(reports) if idx is None else idx, pay, reports)
        return out, p, pay

    def _cached_entries(self, rows: np.ndarray, reports: list[tuple]) -> list[tuple]:
        """:meth:`_entry` at each profile (``rows``: type indices, ``reports``: their labels), the
        laws not cached computed in one pass (:meth:`_entries`, then the payments) and cached."""
        keys = self._keys(rows)
        cache = self._cache
        found: list = [cache.get(k) for k in keys]
        miss = [j for j, f in enumerate(found) if f is None]
        if not miss:
            return found
        if self.sampling:
            self._entry(rows[miss[0]])  # refused, naming the audit that applies
        fresh = self._entries([reports[j] for j in miss])
        pays = None if self.payments is None else self._payment_rows([reports[j] for j in miss])
        for k, j in enumerate(miss):
            out, p, _ = fresh[k]
            pay = None
            if pays is not None:
                pay = self._by_class(rows[j], pays[k], reports[j]) if self.anonymous else pays[k]
            found[j] = (out, p, pay)
            if len(cache) >= self.cache_size:
                del cache[next(iter(cache))]
            cache[keys[j]] = found[j]
        return found

    def _entries(self, profiles: Iterable[tuple]) -> list[tuple]:
        """The rule's (unbatched) law at each report tuple of ``profiles``, uncached, one call each,
        as entries without payments: ``(outcome index, None, None)`` for one outcome, else
        ``(outcome indices, probabilities, None)``."""
        rule, index, plain, found = self.rule, self._outcome_index, _PLAIN_OUTCOMES, []
        for reports in profiles:
            try:
                raw = rule(reports)
            except Exception as exc:
                raise _wrapped("rule", exc, reports) from exc
            try:
                k = index.get(raw) if type(raw) in plain else None
            except TypeError:  # a tuple holding a list: refused by _normalise
                k = None
            found.append(
                (k, None, None) if k is not None else (*self._normalise(raw, reports), None)
            )
        self.rule_calls += len(found)
        return found

    def _payment_rows(self, profiles: Sequence[tuple]) -> np.ndarray:
        """The (unbatched) payments at each report tuple of ``profiles``, uncached: shape ``(k,
        n)``."""
        pay = cast(Callable, self.payments)
        self.payment_calls += len(profiles)
        return np.stack([self._payments(_call(pay, "payments", r), r) for r in profiles])

    def _batch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """A batched rule (and payments) on the profiles ``idx`` (``(k, n)`` type indices): each
        profile's outcome index and the ``(k, n)`` payments (``None`` without payments).  Not
        cached; not counted in ``rule_calls`` (the callers count).

        Raises
        ------
        ValidationError
            If the rule or the payments raise, or return an array of another shape than ``(k,)`` or
            ``(k, d)`` (outcomes), ``(k, n)`` (payments), or non-finite payments: naming the block's
            first profile.
        """
        k, n = idx.shape
        reports = self._batch_labels[idx]
        try:
            raw = self.rule(reports)
        except Exception as exc:
            raise _wrapped("rule", exc, self._labels_of(idx[0]), "(batched) ") from exc
        where = _Block(self, idx)
        if isinstance(raw, (Mapping, FiniteDistribution)):
            raise ValidationError(
                "rule", f"(batched) must return one outcome per profile, not a law, at {where}"
            )
        try:
            out = np.asarray(raw)
        except (TypeError, ValueError) as exc:
            raise ValidationError(
                "rule",
                f"(batched) must return an array of shape ({k},) or ({k}, d), "
                f"got {type(raw).__name__} ({exc}) at {where}",
            ) from None
        if out.ndim not in (1, 2) or out.shape[0] != k:
            raise ValidationError(
                "rule",
                f"(batched) must return one outcome per profile: an array of shape "
                f"({k},) or ({k}, d), got shape {out.shape} at {where}",
            )
        found = self._outcome_indices(out, where)
        if self.payments is None:
            return found, None
        try:
            raw_pay = self.payments(reports)
        except Exception as exc:
            raise _wrapped("payments", exc, self._labels_of(idx[0]), "(batched) ") from exc
        try:
            pay = np.asarray(raw_pay, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(
                "payments", f"(batched) must return an array of shape ({k}, {n}) at {where}"
            ) from None
        if pay.shape != (k, n):
            raise ValidationError(
                "payments",
                f"(batched) must return one payment per agent and profile: shape "
                f"({k}, {n}), got {pay.shape} at {where}",
            )
        if not np.isfinite(pay).all():
            row = int(np.flatnonzero(~np.isfinite(pay).all(axis=1))[0])
            raise ValidationError(
                "payments",
                f"returned a non-finite payment at reports {tuple_text(self._labels_of(idx[row]))}",
            )
        _check_magnitude("payments", pay, where)
        self.payment_calls += k
        if pay.size:
            self.scale = max(self.scale, float(np.abs(pay).max()))
        return found, pay

    def _outcome_indices(self, out: np.ndarray, where: str | _Block) -> np.ndarray:
        """The outcome index of each element (``out`` 1-d) or row (2-d, read as a tuple) of a
        batched rule's result, registering new outcomes: one :func:`numpy.unique` pass unless the
        outcomes are objects."""
        if out.dtype == object:
            rows = [tuple(r) for r in out.tolist()] if out.ndim == 2 else out.tolist()
            return np.fromiter(
                (self._outcome(o, where) for o in rows), dtype=np.intp, count=len(rows)
            )
        if out.dtype.kind not in "biufUS":
            raise ValidationError(
                "rule",
                f"(batched) must return numbers, strings or objects, got an array of "
                f"dtype {out.dtype} at {where}",
            )
        if out.ndim == 1 and out.dtype.kind in "iu" and out.size:
            low = int(out.min())
            span = int(out.max()) - low + 1
            if span <= SMALL_SPAN:  # e.g. alternatives: a table lookup, no sort
                seen = np.flatnonzero(np.bincount(out - low, minlength=span))
                lookup = np.zeros(span, dtype=np.intp)
                lookup[seen] = self._codes(seen + low, where)
                return lookup[out - low]
        flat = out.reshape(out.shape[0], -1)
        if out.dtype.kind in "biu" and flat.size:
            # each outcome one integer (its values in base span): one sort
            low = flat.min(axis=0)
            span = int(flat.max()) - int(low.min()) + 1
            if flat.shape[1] * math.log2(max(span, 2)) < 62:
                keys = (flat - low) @ (span ** np.arange(flat.shape[1] - 1, -1, -1, dtype=np.int64))
                _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
                return self._codes(out[first], where)[inverse.reshape(-1)]
        distinct, inverse = np.unique(out, axis=0 if out.ndim == 2 else None, return_inverse=True)
        return self._codes(distinct, where)[inverse.reshape(-1)]

    def _codes(self, distinct: np.ndarray, where: str | _Block) -> np.ndarray:
        """The outcome indices of distinct outcomes (rows read as tuples), new ones registered."""
        labels = [tuple(r) for r in distinct.tolist()] if distinct.ndim == 2 else distinct.tolist()
        return np.fromiter(
            (self._outcome(o, where) for o in labels), dtype=np.intp, count=len(labels)
        )

    def _normalise(self, raw: Any, reports: tuple) -> tuple:
        """``(int, None)`` for one outcome, else ``(outcome indices, probabilities)`` of a checked
        law."""
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
            raise ValidationError("rule", f"returned an empty law at reports {tuple_text(reports)}")
        p = np.empty(len(probs))
        for k, (o, q) in enumerate(zip(labels, probs)):
            x = _finite_number(q)
            if x is None or x < -NEGATIVE_SLACK:
                raise ValidationError(
                    "rule",
                    f"gives outcome {o!r} the probability {q!r} at reports {tuple_text(reports)}: "
                    "probabilities must be finite numbers >= 0",
                )
            p[k] = max(x, 0.0)
        total = p.sum()
        if not abs(total - 1.0) <= SUM_TOLERANCE:
            raise ValidationError(
                "rule",
                f"returned probabilities summing to {float(total):.12g} (not 1 within "
                f"{SUM_TOLERANCE:g}) at reports {tuple_text(reports)}",
            )
        idx = np.fromiter(
            (self._outcome(o, reports) for o in labels), dtype=np.intp, count=len(labels)
        )
        return idx, p / total

    def _outcome(self, o: Any, reports: tuple | str | _Block) -> int:
        try:
            k = self._outcome_index.get(o)
        except TypeError:
            where = (
                str(reports)
                if isinstance(reports, (str, _Block))
                else f"reports {tuple_text(reports)}"
            )
            raise ValidationError(
                "rule",
                f"returned the non-hashable outcome {o!r} at {where}: "
                "outcomes must be hashable (a tuple, not a list or an array)",
            ) from None
        if k is None:
            k = self._outcome_index[o] = len(self._outcomes)
            self._outcomes.append(o)  # the utility tables grow on their next use (:meth:`_table`)
        return k

    def _payments(self, raw: Any, reports: tuple) -> np.ndarray:
        n = len(reports)
        try:
            pay = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(
                "payments", f"must return {n} numbers at reports {tuple_text(reports)}, got {raw!r}"
            ) from None
        if pay.shape != (n,):
            raise ValidationError(
                "payments",
                f"must return one payment per agent ({n}) at reports "
                f"{tuple_text(reports)}, got shape {pay.shape}",
            )
        if not np.isfinite(pay).all():
            raise ValidationError(
                "payments",
                f"returned a non-finite payment ({pay[~np.isfinite(pay)][0]}) at "
                f"reports {tuple_text(reports)}",
            )
        _check_magnitude("payments", pay, f"reports {tuple_text(reports)}")
        if pay.size:
            self.scale = max(self.scale, float(np.abs(pay).max()))
        return pay

    def _by_class(self, idx: np.ndarray, pay: np.ndarray, reports: tuple) -> np.ndarray:
        """Anonymous payments per (role, reported type) class; agents of one class must pay the
        same."""
        size = len(self._spaces) * self.n_types
        cls = self.classes(idx)
        hi = np.full(size, -np.inf)
        lo = np.full(size, np.inf)
        np.maximum.at(hi, cls, pay)
        np.minimum.at(lo, cls, pay)
        spread = np.where(np.isfinite(hi), hi - lo, 0.0)
        if spread.max() > SUM_TOLERANCE * max(1.0, self.scale):
            c = int(np.argmax(spread))
            raise ValidationError(
                "anonymous",
                f"is declared True, but agents reporting {self._types[c % self.n_types]!r} "
                f"pay different amounts ({lo[c]!r} and {hi[c]!r}) at reports "
                f"{tuple_text(reports)}: payments are not permutation-equivariant",
            )
        return np.where(np.isfinite(hi), hi, np.nan)

    def paid(self, pay: np.ndarray | None, agent: int, report: int) -> float:
        """``agent``'s payment in a cached entry's payments ``pay`` when she reports type index
        ``report``."""
        if pay is None:
            return 0.0
        return float(
            pay[self.role(agent) * self.n_types + report] if self.anonymous else pay[agent]
        )

    # --- utilities
    # ------------------------------------------------------------------------------------
    def _table(self, agent: int) -> np.ndarray:
        """The (types x outcomes) utility cache of ``agent`` (NaN: not computed yet); call
        :meth:`_fill` first."""
        role = self.role(agent)
        key = (role, agent if self._utilities[role][1] else None)
        holder = self._tables.get(key)
        if holder is not None and holder[0].shape[1] >= len(self._outcomes):
            return holder[0]
        cap = max(8, 2 * len(self._outcomes))
        if holder is None:
            holder = self._tables[key] = [np.full((self.n_types, cap), np.nan)]
        else:
            grown = np.full((self.n_types, cap), np.nan)
            grown[:, : holder[0].shape[1]] = holder[0]
            holder[0] = grown
        return holder[0]

    def _fill(self, agent: int, rows: np.ndarray | int, cols: np.ndarray | int) -> np.ndarray:
        """Compute the missing utilities of types ``rows`` x outcomes ``cols`` for ``agent``; the
        table."""
        table = self._table(agent)
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
        utility, dependent = self._utilities[self.role(agent)]
        try:
            value = utility(label, outcome, agent) if dependent else utility(label, outcome)
        except Exception as exc:
            raise ValidationError(
                "utility", f"raised {type(exc).__name__}: {exc} at {self._cell(agent, t, o)}"
            ) from exc
        x = _finite_number(value)
        if x is None:
            raise ValidationError(
                "utility",
                f"must return a finite number, got {value!r} at {self._cell(agent, t, o)}",
            )
        if abs(x) > MAX_MAGNITUDE:
            _check_magnitude("utility", np.array([x]), self._cell(agent, t, o))
        return x

    def _cell(self, agent: int, t: int, o: int) -> str:
        """``type ..., outcome ...[, agent ...]``: where a utility failed."""
        dependent = self._utilities[self.role(agent)][1]
        return f"type {self._types[t]!r}, outcome {self._outcomes[o]!r}" + (
            f", agent {agent}" if dependent else ""
        )

    def _vector_block(self, agent: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        outcomes = [self._outcomes[o] for o in cols]
        types = self._labels[rows]
        with contextlib.suppress(TypeError, ValueError):
            # labels of no common numeric type stay objects
            types = types.astype(np.result_type(*types.tolist()))
        utility, dependent = self._utilities[self.role(agent)]
        args = (types, outcomes, np.array([agent])) if dependent else (types, outcomes)
        where = f"types {tuple_text(types.tolist())}, outcomes {tuple_text(outcomes)}"
        try:
            raw = utility(*args)
        except Exception as exc:
            raise ValidationError(
                "utility", f"(vectorized) raised {type(exc).__name__}: {exc} at {where}"
            ) from exc
        shape = (rows.size, cols.size)
        try:
            block = np.asarray(raw, dtype=float).reshape(shape)
        except (TypeError, ValueError):
            raise ValidationError(
                "utility",
                f"(vectorized) must return an array of shape {shape} (types x outcomes) at {where}",
            ) from None
        if not np.isfinite(block).all():
            a, b = np.argwhere(~np.isfinite(block))[0]
            raise ValidationError(
                "utility",
                f"must return finite numbers, got {block[a, b]} at type "
                f"{types[a]!r}, outcome {outcomes[b]!r}",
            )
        _check_magnitude("utility", block, where)
        return block

    def _value(self, agent: int, t: int, report: int, found: tuple) -> float:
        """Agent ``agent``'s exact expected utility, true type index ``t``, reporting ``report``, at
        ``found``."""
        out, p, pay = found
        table = self._table(agent)
        if p is None:
            u = table[t, out]
            if np.isnan(u):  # not computed yet
                u = self._fill(agent, t, out)[t, out]
        else:
            row = table[t, out]
            if np.isnan(row).any():
                row = self._fill(agent, t, out)[t, out]
            u = row @ p
        return float(u) - self.paid(pay, agent, report)

    def _values_at(
        self, agent: int, t: int, reports: Sequence[int], found: Sequence[tuple]
    ) -> np.ndarray:
        """:meth:`_value` at several laws at once (``agent`` reports ``reports[k]`` at
        ``found[k]``): one gather when every law is a point mass."""
        if not all(p is None for _, p, _ in found):
            return np.array([self._value(agent, t, r, f) for r, f in zip(reports, found)])
        outs = np.fromiter((o for o, _, _ in found), dtype=np.intp, count=len(found))
        u = self._table(agent)[t, outs]
        if np.isnan(u).any():
            u = self._fill(agent, t, outs)[t, outs]
        if found[0][2] is None:
            return u
        return u - np.array([self.paid(pay, agent, r) for r, (_, _, pay) in zip(reports, found)])

    def _values(self, agent: int, found: tuple) -> np.ndarray:
        """Expected utility of every true type of ``agent``'s space at ``found``, before payments
        (one entry per type of :meth:`space`)."""
        out, p, _ = found
        rows = self.space(agent)
        table = self._fill(agent, rows, out)[rows]
        return table[:, out] if p is None else table[:, out] @ p

    # --- the public exact interface
    # -------------------------------------------------------------------
    def law(self, reports: Sequence) -> tuple[tuple, np.ndarray]:
        """The exact law at ``reports``: (outcomes, probabilities), outcomes as the rule labels
        them.

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
            If a report is not a type, or the rule fails or returns an invalid law (naming the
            reports).
        """
        out, p, _ = self._entry(self._indices(reports))
        if p is None:
            return (self._outcomes[out],), np.ones(1)
        return tuple(self._outcomes[k] for k in out), p.copy()

    # --- the privacy interface (dpgames.privacy.audit: HasOutputLaw, DeclaresNeighbours)
    # ---------------
    def output_distribution(self, reports: Sequence) -> dict:
        """The exact law at ``reports`` as ``{outcome: probability}``: what the privacy audits
        compare.

        Parameters
        ----------
        reports : sequence
            One type label per agent.

        Returns
        -------
        dict

        Raises
        ------
        ValidationError
            As :meth:`law`.
        """
        outcomes, p = self.law(reports)
        return dict(zip(outcomes, p.tolist()))

    def neighbouring_reports(
        self, n: int | None = None, profiles: Iterable | None = None
    ) -> Neighbours:
        """Pairs of report profiles that differ in one agent's report: every profile of ``n`` agents
        (each unordered pair once; profiles as multisets when anonymous), or each of ``profiles``
        against every change of one agent's report.  Refused above :data:`PAIR_LIMIT` pairs, with
        the count.

        Parameters
        ----------
        n : int, optional
            Agents (every profile over ``types``).
        profiles : iterable of sequences, optional
            The profiles to start from.

        Returns
        -------
        Neighbours

        Raises
        ------
        ValidationError
            Unless exactly one of ``n`` and ``profiles`` is given, on a report outside ``types``, or
            above the pair limit.
        """
        if (n is None) == (profiles is None):
            raise ValidationError(
                "n", "or profiles (exactly one) gives the profiles whose neighbours are audited"
            )
        if n is not None:
            n = integer("n", n, 1, 10**6)
            self.check_n(n)
            count = self._pairs_over_all_profiles(n)
            first = self._labels_of(np.array([self.space(i)[0] for i in range(n)], dtype=np.intp))
            make = (lambda: self._all_pairs(n)) if count else (lambda: iter([(first, first)]))
            where = f"every profile of {n} agents"
        else:
            starts = [self._indices(r, "profiles") for r in _profile_list(cast(Iterable, profiles))]
            count = sum(self.space(i).size - 1 for s in starts for i in range(s.size))
            make = (
                (lambda: self._pairs_from(starts))
                if count
                else (lambda: iter([(self._labels_of(starts[0]),) * 2]))
            )
            count = max(1, count)
            where = f"{len(starts)} given profile{'s' if len(starts) != 1 else ''}"
        if count > PAIR_LIMIT:
            raise ValidationError(
                "n" if n is not None else "profiles",
                f": {count:,} neighbouring pairs exceed the limit of {PAIR_LIMIT:,}; "
                "give fewer agents or profiles",
            )
        within = "types" if self._role_of is None else "her own type space"
        return Neighbours(
            make,
            max(1, count),
            f"one agent's report changes within {within} ({where}; types "
            f"{tuple_text(self._types)})",
        )

    def _pairs_over_all_profiles(self, n: int) -> int:
        """The unordered neighbouring pairs among all profiles of ``n`` agents: ``prod m_j x sum_i
        (m_i - 1) / 2`` over type spaces of sizes ``m_i``; when anonymous, per role ``r`` (``c_r``
        agents, ``m_r`` types) the pairs ``{M, M - t + t'}`` (``t < t'``): the multiset of the
        role's other ``c_r - 1`` agents (``C(c_r + m_r - 2, c_r - 1)`` ways) and the two types
        (``C(m_r, 2)``), times the other roles' multisets."""
        roles = self.roles_of(n)
        if not self.anonymous:
            sizes = [self.space(i).size for i in range(n)]
            return math.prod(sizes) * sum(m - 1 for m in sizes) // 2
        counts = [int((roles == r).sum()) for r in range(len(self._spaces))]
        sizes = [space.size for space in self._spaces]
        multisets = [math.comb(c + m - 1, c) for c, m in zip(counts, sizes)]
        return sum(
            math.comb(c + m - 2, c - 1)
            * math.comb(m, 2)
            * math.prod(multisets[:r] + multisets[r + 1 :])
            for r, (c, m) in enumerate(zip(counts, sizes))
            if c >= 1
        )

    def profiles(self, n: int, skip: int | None = None) -> Iterator[tuple]:
        """Every profile of ``n`` agents as type indices (each agent within her type space), or with
        ``skip``, every profile of the others (her position left out); when anonymous one per
        multiset of each role (sorted within the role's positions)."""
        roles = self.roles_of(n)
        keep = [i for i in range(n) if i != skip]
        if not self.anonymous:
            yield from itertools.product(*(self.space(i).tolist() for i in keep))
            return
        positions = [
            [k for k, i in enumerate(keep) if roles[i] == r] for r in range(len(self._spaces))
        ]
        groups = [(g, self._spaces[r].tolist()) for r, g in enumerate(positions) if g]
        if len(groups) == 1 and len(groups[0][0]) == len(keep):
            yield from itertools.combinations_with_replacement(groups[0][1], len(keep))
            return
        out = [0] * len(keep)
        for combos in itertools.product(
            *(itertools.combinations_with_replacement(sp, len(g)) for g, sp in groups)
        ):
            for (g, _), combo in zip(groups, combos):
                for k, t in zip(g, combo):
                    out[k] = t
            yield tuple(out)

    def canonical(self, profile: Sequence[int]) -> tuple:
        """A profile of type indices, sorted within each role when anonymous (the representative
        :meth:`profiles` enumerates)."""
        if not self.anonymous:
            return tuple(profile)
        roles = self.roles_of(len(profile)).tolist()
        out = list(profile)
        for r in set(roles):
            where = [i for i, q in enumerate(roles) if q == r]
            for i, t in zip(where, sorted(out[i] for i in where)):
                out[i] = t
        return tuple(out)

    def _all_pairs(self, n: int):
        """Every unordered pair of profiles of ``n`` agents differing in one report (multisets if
        anonymous)."""
        roles = self.roles_of(n).tolist()
        for combo in self.profiles(n):
            movers = (
                range(n)
                if not self.anonymous
                else sorted(
                    {(roles[i], t): i for i, t in reversed(list(enumerate(combo)))}.values()
                )
            )
            for i in movers:
                space = self.space(i)
                for t2 in space[space > combo[i]].tolist():
                    other = self.canonical(combo[:i] + (t2,) + combo[i + 1 :])
                    yield self._labels_of(np.asarray(combo)), self._labels_of(np.asarray(other))

    def _pairs_from(self, starts: list[np.ndarray]):
        """Each start profile against each change of one agent's report (within her type space)."""
        for idx in starts:
            for i in range(idx.size):
                for t2 in self.space(i).tolist():
                    if t2 != idx[i]:
                        other = idx.copy()
                        other[i] = t2
                        yield self._labels_of(idx), self._labels_of(other)

    def expected_utility(self, agent: int, true_type: Any, reports: Sequence) -> float:
        """The exact expected utility (minus the expected payment) of ``agent`` with ``true_type``
        at ``reports``.

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
        idx = self._indices(reports)
        if not (isinstance(agent, (int, np.integer)) and 0 <= agent < idx.size):
            raise ValidationError(
                "agent", f"must be an index in [0, {idx.size - 1}], got {agent!r}"
            )
        t = self.type_index(int(agent), true_type)
        self.check_anonymity(idx.size)
        return self._value(int(agent), int(t), int(idx[agent]), self._entry(idx))

    def type_index(self, agent: int, label: Any, field: str = "true_type") -> int:
        """The index of ``label``, a type of ``agent``'s space; ValidationError naming the space
        otherwise."""
        k = self._index.get(label) if is_hashable(label) else None
        if k is None or not self._member[self.role(agent)][k]:
            raise ValidationError(
                field,
                f"is refused: {label!r} is not in {self._space_name(agent)} of agent "
                f"{agent} ({tuple_text(self._space_labels(agent))})",
            )
        return k

    def check_neutrality(self, n: int, rng: RNGLike = 0) -> None:
        """Refuse ``neutral=True`` when relabelling the alternatives of a profile (samples drawn
        from ``rng``: a seed, a numpy Generator or None) does not relabel the law, changes the
        payments, or changes a voter's utility of an outcome."""
        if not self.neutral or n in self._neutral_n:
            return
        generator = as_generator(rng)
        samples = [self.random_profile(generator, n) for _ in range(NEUTRALITY_SAMPLES)]
        for _ in range(NEUTRALITY_SAMPLES):  # voter i ranks as s^i(r): symmetric, rich in ties
            s, t = (int(generator.integers(k)) for k in (len(self._moves), self.n_types))
            row = [t]
            for _ in range(n - 1):
                row.append(int(self._relabel[s][row[-1]]))
            samples.append(np.array(row, dtype=np.intp))
        moves = generator.integers(len(self._moves), size=len(samples)).tolist()
        moved = [self._relabel[s][idx] for idx, s in zip(samples, moves)]
        laws = self._check_laws([p for pair in zip(samples, moved) for p in pair])
        for k, (idx, s) in enumerate(zip(samples, moves)):
            (law, pay), (law_moved, pay_moved) = laws[2 * k], laws[2 * k + 1]
            rename = dict(zip(self._alternatives, self._moves[s]))
            expected: dict = {}
            for o, q in law.items():
                image = _relabelled(o, rename)
                expected[image] = expected.get(image, 0.0) + q
            where = (
                f"reports {tuple_text(self._labels_of(idx))} and their relabelling "
                f"{tuple_text(self._labels_of(moved[k]))} (alternatives renamed "
                f"{', '.join(f'{a!r} -> {b!r}' for a, b in rename.items())})"
            )
            if _law_gap(expected, law_moved) > SUM_TOLERANCE:
                raise ValidationError(
                    "neutral",
                    f"is declared True, but at {where} the law {_law_text(law)} becomes "
                    f"{_law_text(law_moved)}, not the relabelled {_law_text(expected)}",
                )
            slack = SUM_TOLERANCE * max(1.0, self.scale)
            if pay is not None and pay_moved is not None and np.abs(pay - pay_moved).max() > slack:
                raise ValidationError(
                    "neutral",
                    f"is declared True, but the payments change at {where}: "
                    f"{pay.tolist()} and {pay_moved.tolist()}",
                )
            agent = k % n
            t, t_moved = int(idx[agent]), int(moved[k][agent])
            for o in law:
                image = _relabelled(o, rename)
                k_o, k_image = (self._outcome(x, "the neutrality check") for x in (o, image))
                table = self._fill(agent, np.array([t, t_moved]), np.array([k_o, k_image]))
                a, b = float(table[t, k_o]), float(table[t_moved, k_image])
                if abs(a - b) > slack:
                    raise ValidationError(
                        "neutral",
                        f"is declared True, but the utility is not invariant under relabelling: "
                        f"utility({self._types[t]!r}, {o!r}) = {a:g} and utility("
                        f"{self._types[t_moved]!r}, {image!r}) = {b:g} at {where}",
                    )
        self._neutral_n.add(n)

    def orbit_others(self, n: int) -> np.ndarray:
        """The others' profiles (``n - 1`` agents, sorted type indices) of an anonymous neutral
        mechanism, one per orbit under relabelling the alternatives: of the multisets whose vector
        of counts per type is the lexicographically largest of its orbit (so each holds the first
        type), in the order of :meth:`profiles`.  Computed once per ``n``."""
        if not self.neutral:
            raise ValidationError("neutral", "orbits under relabelling need neutral=True")
        hit = self._orbits.get(n)
        if hit is not None:
            return hit
        k, m = n - 1, self.n_types
        if k == 0:
            found = np.zeros((1, 0), dtype=np.intp)
        else:
            rows = np.array(
                [(0, *c) for c in itertools.combinations_with_replacement(range(m), k - 1)],
                dtype=np.intp,
            ).reshape(-1, k)
            keep = np.zeros(rows.shape[0], dtype=bool)
            step = max(1, 2_000_000 // (self._relabel.shape[0] * m))
            for start in range(0, rows.shape[0], step):
                block = rows[start : start + step]
                counts = np.zeros((block.shape[0], m), dtype=np.int16)
                np.add.at(counts, (np.arange(block.shape[0])[:, None], block), 1)
                images = counts[:, self._relabel]  # (rows, relabellings, types)
                diff = images - counts[:, None, :]
                first = (diff != 0).argmax(axis=2)
                lead = np.take_along_axis(diff, first[..., None], axis=2)[..., 0]
                keep[start : start + step] = ~(lead > 0).any(axis=1)
            found = rows[keep]
        self._orbits[n] = found
        return found

    def check_anonymity(self, n: int, profile: np.ndarray | None = None, rng: RNGLike = 0) -> None:
        """Refuse ``anonymous=True`` when a permuted profile (a sample drawn from ``rng``: a seed, a
        numpy Generator or None) changes the law or the payments; and a false ``neutral=True``
        (:meth:`check_neutrality`)."""
        self.check_neutrality(n, rng)
        if not self.anonymous or n in self._checked_n or n < 2:
            return
        generator = as_generator(rng)
        samples = [self.random_profile(generator, n) for _ in range(ANONYMITY_SAMPLES)]
        if profile is not None:
            samples[0] = np.asarray(profile)
        roles = self.roles_of(n)
        groups = [np.flatnonzero(roles == r) for r in np.unique(roles).tolist()]
        perms = []
        for _ in samples:
            if len(groups) == 1:
                perms.append(generator.permutation(n))
                continue
            perm = np.arange(n)
            for where in groups:  # permuted within each role
                perm[where] = where[generator.permutation(where.size)]
            perms.append(perm)
        laws = self._check_laws([p for idx, perm in zip(samples, perms) for p in (idx, idx[perm])])
        for k, (idx, perm) in enumerate(zip(samples, perms)):
            la, lb = laws[2 * k], laws[2 * k + 1]
            gap = _law_gap(la[0], lb[0])
            moved = la[1] is not None and np.abs(lb[1] - la[1][perm]).max() > SUM_TOLERANCE * max(
                1.0, self.scale
            )
            if gap > SUM_TOLERANCE or moved:
                a, b = (tuple_text(self._labels_of(p)) for p in (idx, idx[perm]))
                what = (
                    f"the law at reports {a} differs (by {gap:.3g} in probability) from the law "
                    f"at its permutation {b}"
                    if gap > SUM_TOLERANCE
                    else f"the payments at reports {a} are not permuted with the reports at {b}"
                )
                raise ValidationError(
                    "anonymous",
                    f"is declared True, but {what} (permutation {perm.tolist()})",
                )
        self._checked_n.add(n)

    def _check_laws(self, profiles: Sequence[np.ndarray]) -> list[tuple[dict, np.ndarray | None]]:
        """Uncached ``({outcome: probability}, payments or None)`` at each profile of type indices,
        for the symmetry checks (counted in ``check_calls``): a batched rule is called once on all
        of them."""
        self.check_calls += len(profiles)
        if self.batched:
            outs, pays = self._batch(np.stack(profiles))
            return [
                ({self._outcomes[int(o)]: 1.0}, None if pays is None else pays[k])
                for k, o in enumerate(outs.tolist())
            ]
        found = []
        for idx in profiles:
            reports = self._labels_of(idx)
            out, p = self._normalise(_call(self.rule, "rule", reports), reports)
            law = {self._outcomes[out]: 1.0} if p is None else {}
            if p is not None:
                for k, q in zip(out.tolist(), p.tolist()):
                    law[self._outcomes[k]] = law.get(self._outcomes[k], 0.0) + q
            pay = (
                None
                if self.payments is None
                else self._payments(_call(self.payments, "payments", reports), reports)
            )
            found.append((law, pay))
        return found

    # --- sampling-only mechanisms
    # ---------------------------------------------------------------------
    def _draw(self, reports: tuple, rng: np.random.Generator) -> int:
        """One outcome (its index) of a sampling-only rule at ``reports``."""
        self.rule_calls += 1
        raw = _call(self.rule, "rule", reports, rng)
        if isinstance(raw, (Mapping, FiniteDistribution)):
            raise ValidationError(
                "rule",
                f"a sampling rule(reports, rng) must return one outcome, got a law at "
                f"reports {tuple_text(reports)}",
            )
        return self._outcome(raw, reports)

    def expected_payments(self, idx: np.ndarray, reports: tuple) -> np.ndarray | None:
        """The cached payments at a profile (sampling-only mechanisms: payments are expected
        payments)."""
        if self.payments is None:
            return None
        key = ("pay", self._key(idx))
        hit = self._cache.get(key)
        if hit is None:
            self.payment_calls += 1
            hit = self._cache[key] = self._payments(
                _call(self.payments, "payments", reports), reports
            )
        return hit


def _law_gap(a: dict, b: dict) -> float:
    """The largest difference in probability between two laws ``{outcome: probability}``."""
    if a.keys() == b.keys() and len(a) == 1:
        return 0.0
    return max(abs(a.get(o, 0.0) - b.get(o, 0.0)) for o in set(a) | set(b))


def _law_text(law: dict) -> str:
    """A law ``{outcome: probability}`` in words, a point mass as its outcome."""
    if len(law) == 1:
        return repr(next(iter(law)))
    return "{" + ", ".join(f"{o!r}: {q:.6g}" for o, q in law.items()) + "}"


def _relabelled(outcome: Any, rename: dict) -> Any:
    """``outcome`` with its alternatives renamed: an alternative itself, a tuple entry by entry."""
    if isinstance(outcome, tuple):
        return tuple(_relabelled(o, rename) for o in outcome)
    return rename.get(outcome, outcome) if is_hashable(outcome) else outcome


def _relabellings(mech: CustomMechanism, types: Any) -> tuple[tuple, list[tuple], np.ndarray]:
    """The alternatives, every relabelling of them (``moves[s]``: the images of the alternatives in
    order) and ``table[s, t]``: the type index of ranking ``t`` relabelled by ``s``.

    Raises
    ------
    ValidationError
        Unless ``types=`` holds every strict ranking of at most :data:`NEUTRAL_ALTERNATIVES`
        alternatives and the rule is exact.
    """
    if types is None or mech.sampling:
        raise ValidationError(
            "neutral",
            "is declared for an exact rule over one type space of rankings (types="
            "rankings(alternatives)), not with type_spaces=, roles= or a sampling rule",
        )
    first = mech.types[0]
    alternatives = first if isinstance(first, tuple) else ()
    m = len(alternatives)
    pos = {a: j for j, a in enumerate(alternatives)} if is_hashable(alternatives) else {}
    if (
        not 1 <= len(pos) == m <= NEUTRAL_ALTERNATIVES
        or len(mech.types) != math.factorial(m)
        or any(not isinstance(t, tuple) or len(t) != m or set(t) != pos.keys() for t in mech.types)
    ):
        raise ValidationError(
            "neutral",
            f"is declared True, which needs types= to be every strict ranking of at most "
            f"{NEUTRAL_ALTERNATIVES} alternatives (dpgames.types.rankings); got "
            f"{len(mech.types)} types starting with {first!r}",
        )
    ranks = np.array([[pos[a] for a in t] for t in mech.types], dtype=np.intp)  # (types, m)
    moves = list(itertools.permutations(range(m)))
    images = np.asarray(moves, dtype=np.intp)[:, ranks]  # (relabellings, types, m)
    codes = images @ (m ** np.arange(m - 1, -1, -1))
    lookup = np.full(m**m, -1, dtype=np.intp)
    lookup[ranks @ (m ** np.arange(m - 1, -1, -1))] = np.arange(len(mech.types))
    return alternatives, [tuple(alternatives[j] for j in p) for p in moves], lookup[codes]


class _Block:
    """Where a batched call failed, "the block of k profiles starting at reports ...", formatted
    only when an error names it (a batched rule is called on many small blocks)."""

    def __init__(self, mech: CustomMechanism, idx: np.ndarray):
        self.mech, self.idx = mech, idx

    def __str__(self) -> str:
        first = tuple_text(self.mech._labels_of(self.idx[0]))
        return f"the block of {self.idx.shape[0]} profiles starting at reports {first}"


def _profile_list(profiles: Iterable) -> list:
    if isinstance(profiles, (str, bytes)) or not isinstance(profiles, Iterable):
        raise ValidationError(
            "profiles", f"must be an iterable of report profiles, got {profiles!r}"
        )
    out = list(itertools.islice(profiles, PAIR_LIMIT + 1))
    if not out:
        raise ValidationError("profiles", "must hold at least one profile")
    return out


#: Labels that are certainly collections, never type labels: a list of these is a list of type
#: spaces.
_SPACE_LIKE = (range, list, set, frozenset, dict, np.ndarray)


def _type_space(types: Any, field: str = "types") -> tuple:
    if isinstance(types, (str, bytes)) or not isinstance(types, Iterable):
        raise ValidationError(field, f"must be an iterable of hashable type labels, got {types!r}")
    labels = tuple(types.tolist() if isinstance(types, np.ndarray) else types)
    if not labels:
        raise ValidationError(field, "must hold at least one type")
    if field == "types" and any(isinstance(t, _SPACE_LIKE) for t in labels):
        bad = next(t for t in labels if isinstance(t, _SPACE_LIKE))
        raise ValidationError(
            field,
            f"holds the collection {bad!r} as a type label: for one type space per agent "
            "pass type_spaces=[space_0, ..., space_n-1] (or roles= with agent_roles=)",
        )
    seen: dict = {}
    for t in labels:
        try:
            if t in seen:
                raise ValidationError(field, f"lists {t!r} twice: type labels must be distinct")
        except TypeError:
            raise ValidationError(field, f"holds the non-hashable label {t!r}") from None
        seen[t] = True
    return labels


def _role_spaces(
    types: Any, type_spaces: Any, roles: Any, agent_roles: Any
) -> tuple[list[tuple], tuple, np.ndarray | None]:
    """The type space of each role, the role names and each agent's role (``None``: one space, any
    n)."""
    given = [
        name
        for name, v in (("types", types), ("type_spaces", type_spaces), ("roles", roles))
        if v is not None
    ]
    if len(given) != 1:
        raise ValidationError(
            "types",
            "or type_spaces= (one per agent) or roles= (with agent_roles=): exactly one "
            f"is needed, got {', '.join(given) if given else 'none'}",
        )
    if (roles is None) != (agent_roles is None):
        raise ValidationError(
            "agent_roles" if roles is not None else "roles",
            "goes with roles= ({role: type space}) and agent_roles= (each agent's role): give both",
        )
    if types is not None:
        return [_type_space(types)], ("all",), None
    if type_spaces is not None:
        if (
            isinstance(type_spaces, (str, bytes, Mapping))
            or not isinstance(type_spaces, Sequence)
            or not type_spaces
        ):
            raise ValidationError(
                "type_spaces",
                f"must be a non-empty list of type spaces, one per agent, got {type_spaces!r}",
            )
        spaces = [_type_space(space, f"type_spaces[{i}]") for i, space in enumerate(type_spaces)]
        distinct = list(dict.fromkeys(spaces))  # agents of equal type spaces share a role
        names = tuple(f"space {k}" for k in range(len(distinct)))
        return distinct, names, np.array([distinct.index(space) for space in spaces], dtype=np.intp)
    if not isinstance(roles, Mapping) or not roles:
        raise ValidationError(
            "roles", f"must be a non-empty mapping {{role: type space}}, got {roles!r}"
        )
    names = tuple(roles)
    spaces = [_type_space(roles[r], f"roles[{r!r}]") for r in names]
    if (
        isinstance(agent_roles, (str, bytes))
        or not isinstance(agent_roles, Sequence)
        or not agent_roles
    ):
        raise ValidationError(
            "agent_roles",
            f"must be a non-empty sequence of role names, one per agent, got {agent_roles!r}",
        )
    where = []
    for i, r in enumerate(agent_roles):
        if not is_hashable(r) or r not in roles:
            raise ValidationError(
                "agent_roles",
                f"names the unknown role {r!r} for agent {i} (roles: {tuple_text(names)})",
            )
        where.append(names.index(r))
    return spaces, names, np.array(where, dtype=np.intp)


def _role_utilities(utility: Any, names: tuple, by_role: bool) -> list[tuple[Callable, bool]]:
    """``(utility, agent-dependent)`` per role: one callable for all, or (with roles) a mapping role
    -> callable."""
    if by_role and isinstance(utility, Mapping):
        unknown = [r for r in utility if r not in names]
        missing = [r for r in names if r not in utility]
        if unknown or missing:
            raise ValidationError(
                "utility",
                f"as a mapping must give one utility per role: "
                f"{'unknown ' + tuple_text(unknown) if unknown else 'missing ' + tuple_text(missing)}",
            )
        return [_one_utility(utility[r], f"utility[{r!r}]") for r in names]
    return [_one_utility(utility, "utility")] * len(names)


def _one_utility(utility: Any, field: str) -> tuple[Callable, bool]:
    if not callable(utility):
        raise ValidationError(
            field, f"must be a callable utility(t, outcome[, agent]), got {utility!r}"
        )
    arity = required_positional(utility, field)
    if arity not in (2, 3):
        got = (
            "an unreadable signature"
            if arity is None
            else f"{arity} required positional parameters"
        )
        raise ValidationError(
            field, f"must take (t, outcome) or (t, outcome, agent), but it has {got}"
        )
    return utility, arity == 3


def _call(fn: Callable, what: str, reports: tuple, *extra: Any) -> Any:
    try:
        return fn(reports, *extra)
    except Exception as exc:
        raise _wrapped(what, exc, reports) from exc


def _wrapped(what: str, exc: Exception, reports: tuple, kind: str = "") -> ValidationError:
    """The error of a user's function, naming the reports that triggered it (chain the original to
    it)."""
    return ValidationError(
        what, f"{kind}raised {type(exc).__name__}: {exc} at reports {tuple_text(reports)}"
    )


def _label_array(types: tuple, labels: np.ndarray) -> np.ndarray:
    """The labels as a batched rule receives them: numbers, strings, or equal-length tuples of
    numbers as a numeric array (one row per label); anything else as the object array ``labels``."""
    kinds = {type(t) for t in types}
    if kinds <= {int, float, np.int64, np.float64} or kinds <= {str}:
        return np.asarray(types)
    if (
        kinds <= {tuple}
        and len({len(t) for t in types}) == 1
        and all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
            for t in types
            for x in t
        )
    ):
        return np.asarray(types)
    return labels
