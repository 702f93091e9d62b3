"""Budgets before work: a scenario's size is estimated from its validated spec, before anything
heavy runs, and refused with the estimate and the option that raises the limit when it would not
fit.

Each built-in kind defines ``estimate(spec) -> list[Estimate]``: the peak memory (bytes) and the
work (elementary array operations, about 1e9 a second on one core) of each stage of its run, from
the sizes in the spec (agents, prices, types x outcomes x reactions, rounds x paths x classes, seeds
x cells). The figures are upper-end approximations of the arrays the code allocates and the loops it
runs, good to a small factor: enough to tell "a second and 100 MB" from "an hour and 80 GB" in
microseconds.

    budget = Budget.from_options(max_memory="8GB", max_work="1e11")
    run_scenario("scenarios/digital_goods.toml", budget=budget)     # dpgames run --max-memory 8GB

Every kind gives an ``estimate`` (it is part of the contract, :mod:`dpgames.scenarios.kind`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dpgames.mechanisms.deviations import _BLOCK_ELEMENTS as _DEVIATION_BLOCK, TYPE_SPACE_LIMIT
from dpgames.scenarios.text import PLAIN_LIMIT
from dpgames.validation import ValidationError

DEFAULT_MAX_MEMORY = 2e9  # bytes: 2 GB
DEFAULT_MAX_WORK = 1e10  # elementary operations: about 10 to 30 seconds
UNITS = {
    "": 1,
    "B": 1,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "K": 2**10,
    "M": 2**20,
    "G": 2**30,
    "T": 2**40,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
MEMORY_OPTION = "--max-memory"
WORK_OPTION = "--max-work"


class BudgetError(ValidationError):
    """A run refused before it starts: its estimate is over a limit.  ``field`` is the option that
    raises the limit; ``estimate`` and ``limit`` are the figures compared."""

    def __init__(self, option: str, message: str, estimate: float, limit: float):
        super().__init__(option, message)
        self.args = (message,)
        self.estimate = estimate
        self.limit = limit


@dataclass(frozen=True)
class Estimate:
    """One stage of a run: what it is, its peak memory in bytes and its work in elementary
    operations (``inf`` when a size is beyond any machine, e.g. a grid of 1 / 5e-324 prices)."""

    what: str
    memory: float
    work: float


def fmt_bytes(x: float) -> str:
    """``2.41 GB``; ``more than 1e308 bytes`` beyond floats."""
    if not math.isfinite(x):
        return "more than 1e308 bytes"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= scale:
            return (
                f"{x / scale:.3g} {unit}" if x < 1e3 * scale or unit == "TB" else f"{x:.2e} bytes"
            )
    return f"{x:.0f} bytes"


def fmt_count(x: float) -> str:
    """``112,812,340`` (thousands separators up to ``PLAIN_LIMIT`` = 1e15, as every figure the
    command line prints), ``1.23e+18`` beyond; ``more than 1e308`` beyond floats."""
    if not math.isfinite(x):
        return "more than 1e308"
    return f"{x:,.0f}" if x < PLAIN_LIMIT else f"{x:.2e}"


@dataclass(frozen=True)
class Budget:
    """Limits on a run's estimated peak memory (bytes) and work (elementary operations).

    Examples
    --------
    >>> b = Budget.from_options("1GB", "1e9")
    >>> b.check(Estimate("the law", 5e8, 1e6))
    >>> b.check(Estimate("the audit", 2e9, 1e6))
    Traceback (most recent call last):
    ...
    dpgames.scenarios.budget.BudgetError: the audit needs about 2 GB of memory (estimate), over the limit of 1 GB: make it smaller, or raise the limit with --max-memory (e.g. --max-memory 3GB)
    """

    max_memory: float = DEFAULT_MAX_MEMORY
    max_work: float = DEFAULT_MAX_WORK

    def __post_init__(self) -> None:
        for name, value in (("max_memory", self.max_memory), ("max_work", self.max_work)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not value > 0
                or (isinstance(value, float) and math.isnan(value))
            ):
                raise ValidationError(name, f"must be a number > 0 (inf: no limit), got {value!r}")

    @classmethod
    def from_options(
        cls, max_memory: str | float | None = None, max_work: str | float | None = None
    ) -> Budget:
        """A budget from command-line texts (``"8GB"``, ``"512MiB"``, ``"1e11"``, ``"inf"``).

        Parameters
        ----------
        max_memory, max_work : str or float, optional
            None: the default limit.

        Returns
        -------
        Budget

        Raises
        ------
        ValidationError
            A text that is not a size / count > 0 (naming the option).
        """
        return cls(
            DEFAULT_MAX_MEMORY if max_memory is None else parse_size(max_memory, MEMORY_OPTION),
            DEFAULT_MAX_WORK if max_work is None else parse_count(max_work, WORK_OPTION),
        )

    def check(self, estimate: Estimate, source: str = "") -> None:
        """Refuse ``estimate`` if it is over either limit (a size beyond floats is refused whatever
        the limit: no machine has it).

        Parameters
        ----------
        estimate : Estimate
        source : str
            The scenario, named in the message.

        Raises
        ------
        BudgetError
            Naming the stage, its estimate, the limit and the option that raises it.
        """
        where = f"{source}: " if source else ""
        for option, needed, limit, show, unit, scale in (
            (MEMORY_OPTION, estimate.memory, self.max_memory, fmt_bytes, "GB", 1e9),
            (WORK_OPTION, estimate.work, self.max_work, fmt_count, "", 1.0),
        ):
            what = "of memory" if option == MEMORY_OPTION else "operations (about 1e9 a second)"
            needed = math.inf if math.isnan(needed) else needed  # inf x 0: a size beyond floats
            if needed == math.inf:
                raise BudgetError(
                    option,
                    f"{where}{estimate.what} needs {show(needed)} {what}: beyond any machine, "
                    "make it smaller",
                    needed,
                    limit,
                )
            if not needed <= limit:
                raise BudgetError(
                    option,
                    f"{where}{estimate.what} needs about {show(needed)} {what} (estimate), "
                    f"over the limit of {show(limit)}: make it smaller, or raise the limit with "
                    f"{option} (e.g. {option} {_suggest(needed, unit, scale)})",
                    needed,
                    limit,
                )

    def check_all(self, estimates: Iterable[Estimate], source: str = "") -> None:
        """Check every stage, then the whole run (the stages' work added up).

        Parameters
        ----------
        estimates : iterable of Estimate
        source : str

        Raises
        ------
        BudgetError
        """
        estimates = list(estimates)
        for estimate in estimates:
            self.check(estimate, source)
        if len(estimates) > 1:
            self.check(
                Estimate(
                    "the whole run",
                    max(e.memory for e in estimates),
                    sum(e.work for e in estimates),
                ),
                source,
            )


def _suggest(x: float, unit: str, scale: float) -> str:
    if not math.isfinite(x * 1.2):
        return "inf"
    return f"{math.ceil(x * 1.2 / scale):.3g}{unit}" if unit else f"{x * 1.2:.1e}"


def parse_size(text: str | float, option: str = MEMORY_OPTION) -> float:
    """Bytes from ``"8GB"`` (powers of 1000), ``"8GiB"`` / ``"8G"`` (powers of 1024), a plain
    number, or ``"inf"`` (no limit).

    Parameters
    ----------
    text : str or float
    option : str
        The option named in an error.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Not a size > 0.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _positive(float(text), option, text)
    match = re.fullmatch(r"\s*([0-9.eE+]+|inf)\s*([A-Za-z]*)\s*", str(text))
    unit = match.group(2).upper() if match else ""
    try:
        if not match or unit not in UNITS:
            raise ValueError
        value = float(match.group(1)) * UNITS[unit]
    except ValueError:
        raise ValidationError(
            option, f"must be a size such as 8GB, 512MB or 4GiB (or inf), got {text!r}"
        ) from None
    return _positive(value, option, text)


def parse_count(text: str | float, option: str = WORK_OPTION) -> float:
    """A number of operations from ``"1e11"``, ``"20000000000"`` or ``"inf"`` (no limit).

    Parameters
    ----------
    text : str or float
    option : str
        The option named in an error.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Not a number > 0.
    """
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(
            option, f"must be a number of operations such as 1e11 (or inf), got {text!r}"
        ) from None
    return _positive(value, option, text)


def _positive(value: float, option: str, shown: Any) -> float:
    if not value > 0:
        raise ValidationError(option, f"must be > 0 (inf: no limit), got {shown!r}")
    return value


# --------------------------------------------------------------------------------------------------
# Size helpers shared by the kinds' estimates (floats: a size may be far beyond any int64)

FLOAT = 8.0  # bytes of a float64


def size(x: float | int) -> float:
    """A count as a float; a whole number too large for a float is ``inf`` (never an
    OverflowError)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf


def log2(x: float) -> float:
    """``log2(max(x, 2))``: the depth of a sort or search over ``x`` items."""
    return math.log2(max(float(x), 2.0))


def combinations(n: float, k: float) -> float:
    """``C(n, k)`` as a float (``inf`` beyond floats), for outcome sets of ``k`` facilities among
    ``n``."""
    n, k = size(n), size(k)
    if k > n:
        return 0.0
    if n == math.inf:
        return math.inf
    k = min(k, n - k)
    if k <= 1000:  # exact to rounding: a product of k ratios
        c = 1.0
        for i in range(int(k)):
            c *= (n - i) / (i + 1)
            if c == math.inf:
                break
        return c
    if n - k == n:  # k is lost next to n: C(n, k) ~ n^k / k!
        log_c = k * math.log(n) - math.lgamma(k + 1)
    else:
        log_c = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log_c) if log_c < 700 else math.inf


def price_count(epsilon: float | None, prices: Any, alpha: float | None, n: float) -> float:
    """How many prices a digital-goods price set has for ``n`` bids, as a float (a grid of step
    5e-324 has ``inf``): an explicit list's length, ``floor(1 / alpha)`` for a given grid step, else
    the balanced grid's ``ceil(eps n / 2)``; the continuum is sampled through its ``n + 1``
    pieces."""
    if prices == "continuous":
        return n + 1
    if isinstance(prices, list):
        return float(len(prices))
    if alpha is not None:
        m = 1.0 / alpha
        return float(math.floor(m)) if m < 1e300 else math.inf
    if epsilon is None:  # "balanced" eps with a grid that depends on it is refused by the kind
        return 1.0
    half = epsilon * size(n) / 2
    return max(1.0, float(math.ceil(half))) if half < 1e300 else math.inf


@dataclass(frozen=True)
class EnvironmentSize:
    """The sizes of an environment (types x outcomes x reactions) and of the graph it is built
    from."""

    types: float
    outcomes: float
    reactions: float
    nodes: float = 0.0


#: Bytes an environment run allocates whatever its size (Python objects, labels, the metrics and
#: tables of its result; about 30 KB measured on the smallest shipped ones): the floor of every
#: audit stage.
ENVIRONMENT_RUN_OVERHEAD = 256e3
#: The exact type-space audit repeats each class once per true type in blocks of about this many
#: (row, outcome) floats (:mod:`dpgames.mechanisms.deviations`).
AUDIT_BLOCK = float(_DEVIATION_BLOCK)
#: Work of the type-space audit per (class, true type, report, outcome): its matrix products, or at
#: large eps its log-sum-exps (0.8 and 2.3 ns of CPU time measured on a 64-type facility
#: environment).
TYPE_SPACE_OPS = 6.0


def environment_estimates(
    env: EnvironmentSize,
    agents: Iterable[float],
    label: str,
    terms: float = 1.0,
    per_agent: float = 8 * FLOAT,
    row_copies: float | None = None,
    fewest: float | None = None,
    most: float | None = None,
) -> list[Estimate]:
    """Building an environment and auditing it, once per population size in ``agents``.

    The graph and its distances (nodes x candidates); the utility tables (types x outcomes x
    reactions, a few copies, held to the end); per population size: the agents (``per_agent`` bytes
    each), the audit at the realised types (``row_copies`` arrays of classes x (outcomes + types),
    classes <= min(agents, types)) and, when it may fall under
    :data:`~dpgames.mechanisms.deviations.TYPE_SPACE_LIMIT` (at the ``fewest`` classes the agents
    may show), the audit over every true type, at the most classes it is run with
    (:data:`TYPE_SPACE_OPS` per class x type x type x outcome and term): (terms + 4) block arrays of
    ``min(classes x types x outcomes, AUDIT_BLOCK)`` floats and (terms + 6) arrays of classes x
    types x types gains; plus :data:`ENVIRONMENT_RUN_OVERHEAD`.

    Parameters
    ----------
    env : EnvironmentSize
    agents : iterable of float
        The population sizes audited (one stage each).
    label : str
        Names the stages.
    terms : float
        The deviation terms of the mechanism's utility (1; the reactions when they are forced).
    per_agent : float
        Bytes per agent of the population (labels, values, the profile).
    row_copies : float, optional
        Arrays of classes x (outcomes + types) the realised-type audit and the mechanism's own
        figures (e.g. payments) hold at once; default ``terms + 4``.
    fewest : float, optional
        The fewest distinct types the agents may show (default: min(agents, types), every agent her
        own type; see :func:`class_range`).
    most : float, optional
        The most distinct types the agents may show (default: types).

    Returns
    -------
    list of Estimate
    """
    t, o, r, nodes = env.types, env.outcomes, env.reactions, env.nodes
    table = t * o * r
    shown = f"{fmt_count(t)} types x {fmt_count(o)} outcomes x {fmt_count(r)} reaction{'s' if r != 1 else ''}"
    out = []
    if nodes:
        out.append(
            Estimate(
                f"{label}: the graph ({fmt_count(nodes)} nodes) and its distances",
                2000 * nodes + FLOAT * nodes * min(t, nodes),
                200 * nodes * min(t, nodes) * log2(nodes),
            )
        )
    tables = 6 * FLOAT * table
    out.append(
        Estimate(
            f"{label}: the environment ({shown})",
            tables + ENVIRONMENT_RUN_OVERHEAD,
            20 * table + 10 * t * t * o,
        )
    )
    for n in agents:
        n = size(n)
        classes = min(n, t) if most is None else min(n, t, most)
        rows = terms + 4 if row_copies is None else row_copies
        memory = (
            tables + per_agent * n + ENVIRONMENT_RUN_OVERHEAD + rows * FLOAT * classes * (o + t)
        )
        work = 30 * classes * t * o + 20 * n
        least = classes if fewest is None else min(classes, fewest)
        if least * t * t * o <= TYPE_SPACE_LIMIT:
            cells = t * t * o  # per class; 0 when no outcome fits (refused when built)
            audited = (
                min(classes, max(1.0, math.floor(TYPE_SPACE_LIMIT / cells)))
                if cells > 0
                else classes
            )
            memory += FLOAT * (
                (terms + 4) * min(audited * t * o, max(AUDIT_BLOCK, t * o))
                + (terms + 6) * audited * t * t
            )
            work += TYPE_SPACE_OPS * terms * audited * cells
        out.append(
            Estimate(
                f"{label}: the truthfulness audits ({fmt_count(n)} agents, {fmt_count(classes)} "
                f"class{'es' if classes != 1 else ''} x {fmt_count(t)} lies x "
                f"{fmt_count(o)} outcomes)",
                memory,
                work,
            )
        )
    return out


def repeated(stages: Sequence[Estimate], times: int) -> list[Estimate]:
    """``stages`` run ``times`` times over (e.g. a size listed several times in a scaling list): the
    work multiplied, the memory not (each repetition frees its own).

    Parameters
    ----------
    stages : sequence of Estimate
    times : int

    Returns
    -------
    list of Estimate
    """
    if times == 1:
        return list(stages)
    return [Estimate(f"{e.what}, x {times:,}", e.memory, e.work * times) for e in stages]


def fewest_uniform_classes(n: float, types: float) -> float:
    """The fewest distinct types ``n`` agents drawn uniformly over ``m = types`` show, but for a
    chance below 1e-4: the missing types are a sum of ``m`` negatively associated indicators of
    probability ``p = (1 - 1/m)^n``, so Bernstein's inequality holds for them (with ``v = m p (1 -
    p)`` and ``T = ln 1e4``, more than ``m p + T / 3 + sqrt(T^2 / 9 + 2 v T)`` are missing with
    chance ``<= e^-T``).  A type drawn with more than ``1/m`` only lowers the chance.

    Parameters
    ----------
    n, types : float

    Returns
    -------
    float
        At least 1, at most ``min(n, types)``.
    """
    m, n = size(types), size(n)
    if m == math.inf or m <= 1:
        return max(1.0, min(n, m))
    p = math.exp(n * math.log1p(-1 / m))
    tail, spread = math.log(1e4), m * p * (1 - p)
    missing = m * p + tail / 3 + math.sqrt(tail * tail / 9 + 2 * spread * tail)
    return max(1.0, min(n, m - missing))


def class_range(
    distribution: str,
    n: float,
    types: float,
    values: Sequence[Any] | None = None,
    weights: Sequence[float] | None = None,
) -> tuple[float, float]:
    """The fewest and the most distinct types (classes) ``n`` agents may show: drawn ``"uniform"``ly
    over the ``types`` (:func:`fewest_uniform_classes`, up to every type), by ``"weights"`` (from 1
    up to the types of weight > 0) or resampled from a ``"list"`` of ``values`` (from 1 up to its
    distinct values); any other distribution: from 1 up to every type.

    Parameters
    ----------
    distribution : str
    n, types : float
    values, weights : sequence, optional
        The list's values, the weights.

    Returns
    -------
    tuple of float
        ``(fewest, most)``, ``1 <= fewest <= most``.
    """
    if distribution == "uniform":
        return fewest_uniform_classes(n, types), max(1.0, min(size(n), size(types)))
    if distribution == "weights" and weights is not None:
        return 1.0, max(1.0, float(sum(1 for w in weights if w > 0)))
    if distribution == "list" and values is not None:
        return 1.0, max(1.0, float(len(set(values))))
    return 1.0, max(1.0, min(size(n), size(types)))
