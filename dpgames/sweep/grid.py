"""The grid of a sweep: scenario fields (dotted names) -> values to try, times a number of seeds.

A parameter is a field of the scenario file, named by its dotted path (``mechanism.epsilon``) or,
when exactly one field of the file has that last component, by that short name (``epsilon``).
Values come from a list or a range form, in the file's ``[sweep]`` table or on the command line:

```toml
[sweep]
seeds = 20                                  # seeds per parameter combination
epsilon = [0.1, 0.5, 1.0]                   # a list (short or dotted name: "mechanism.epsilon")
"population.n" = { range = [100, 500, 100] }        # 100, 200, ..., 500 (stop included)
# alpha = { linspace = [0.01, 0.1, 10] }          # 10 evenly spaced values, ends included
# epsilon = { geomspace = [0.05, 5, 7] }          # 7 log-spaced values, ends included
summary = ["expected_revenue"]              # optional: metrics of the printed summary
```

On the command line: ``--set epsilon=0.1,0.5,1`` or ``--set population.n=range:100:500:100``.

Seeding (common random numbers): seed ``j`` of every parameter combination is child ``j`` of
``SeedSequence(root)`` (``SeedSequence(root).spawn(J)[j]``), so a cell's result depends only on its
parameters, ``root`` and ``j``, never on the executor or the order of execution; two parameter
values with the same ``j`` see the same random draws (paired comparisons), and seeds are independent
streams.
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgames.scenarios.spec import ScenarioError

RANGE_FORMS = ("range", "linspace", "geomspace")
RESERVED_SWEEP_KEYS = ("seeds", "summary")
NOT_SWEEPABLE = ("kind", "seed", "sweep")
MAX_RANGE_VALUES = 100_000
MAX_LISTED_FIELDS = 30


def cell_key(params: Mapping[str, Any], seed_index: int) -> str:
    """The canonical identity of a cell (parameters and seed index) as a string: resume matches on
    it.

    Parameters
    ----------
    params : mapping
        Dotted parameter name -> value.
    seed_index : int

    Returns
    -------
    str
    """
    return json.dumps(
        {"params": dict(params), "seed": seed_index}, sort_keys=True, separators=(",", ":")
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def cell_seed(root: int, seed_index: int) -> np.random.SeedSequence:
    """Seed of cell ``seed_index``: equal to ``SeedSequence(root).spawn(k)[seed_index]`` for any
    ``k``.

    Parameters
    ----------
    root : int
        The sweep's root seed.
    seed_index : int

    Returns
    -------
    numpy.random.SeedSequence
    """
    return np.random.SeedSequence(root, spawn_key=(seed_index,))


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: the overridden fields and the seed index."""

    params: dict[str, Any]
    seed_index: int

    @property
    def key(self) -> str:
        """The cell's identity (:func:`cell_key`): what a resumed sweep matches on."""
        return cell_key(self.params, self.seed_index)


@dataclass(frozen=True)
class Grid:
    """Parameters (dotted field -> values, in order) crossed with ``seeds`` seed indices.

    Examples
    --------
    >>> grid, _ = build_grid({"kind": "digital_goods", "mechanism": {"epsilon": 0.5}}, "<doc>",
    ...                      ["epsilon=0.1,0.5"], 2)
    >>> (
    ...     grid.count,
    ...     grid.parameters,
    ...     [(c.params["mechanism.epsilon"], c.seed_index) for c in grid.cells()],
    ... )
    (4, {'mechanism.epsilon': [0.1, 0.5]}, [(0.1, 0), (0.1, 1), (0.5, 0), (0.5, 1)])
    """

    parameters: dict[str, list[Any]]
    seeds: int

    @property
    def count(self) -> int:
        """How many cells (a Python int of any size; ``len()`` only works below 2^63)."""
        return math.prod(len(v) for v in self.parameters.values()) * self.seeds

    def __len__(self) -> int:
        return self.count

    def count_cells(self, keys: Iterable[str]) -> int:
        """How many of the cell keys (see :func:`cell_key`) name cells of this grid."""
        allowed = {
            name: {_canonical(v) for v in values} for name, values in self.parameters.items()
        }
        found = 0
        for key in keys:
            cell = json.loads(key)
            params, seed = cell["params"], cell["seed"]
            found += (
                set(params) == set(allowed)
                and 0 <= seed < self.seeds
                and all(_canonical(params[name]) in values for name, values in allowed.items())
            )
        return found

    def cells(self) -> Iterator[Cell]:
        """Every cell: the product of the parameter values in declaration order, seeds innermost."""
        names = list(self.parameters)
        for combo in itertools.product(*self.parameters.values()):
            params = dict(zip(names, combo))
            for j in range(self.seeds):
                yield Cell(params, j)


# --------------------------------------------------------------------------------------------------
# Parameter names


def leaf_fields(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of every non-table field of a scenario's data (the ``[sweep]`` table excluded).

    Parameters
    ----------
    data : mapping
    prefix : str

    Returns
    -------
    list of str
    """
    names = []
    for key, value in data.items():
        if not prefix and key == "sweep":
            continue
        if isinstance(value, dict):
            names += leaf_fields(value, f"{prefix}{key}.")
        else:
            names.append(f"{prefix}{key}")
    return names


def resolve_name(name: str, data: Mapping[str, Any], source: str) -> str:
    """The dotted field a parameter name stands for.

    A dotted name is taken as it is (it may name a field the file leaves at its default); a short
    name must be the last component of exactly one field of the file.

    Parameters
    ----------
    name : str
    data : mapping
    source : str

    Returns
    -------
    str

    Raises
    ------
    ScenarioError
        No field, or several, end in ``name``.
    """
    if not name or any(part == "" for part in name.split(".")):
        raise ScenarioError(f"{source}: parameter {name!r}: not a field name")
    if name.split(".")[0] in NOT_SWEEPABLE:
        raise ScenarioError(
            f"{source}: parameter {name!r}: cannot be swept (seeds: use seeds = N or --seeds)"
        )
    fields = leaf_fields(data)
    if "." in name or name in fields:
        _check_path(name, data, source)
        return name
    match = unique_match(
        name,
        [f for f in fields if f.rsplit(".", 1)[-1] == name],
        lambda message: ScenarioError(f"{source}: parameter {message}"),
    )
    if match:
        return match
    shown = ", ".join(fields[:MAX_LISTED_FIELDS]) + (
        ", ..." if len(fields) > MAX_LISTED_FIELDS else ""
    )
    raise ScenarioError(
        f"{source}: parameter {name!r}: no field of that name in the file (fields: "
        f"{shown}); give the dotted name, e.g. 'mechanism.{name}', "
        "to set a field the file leaves at its default"
    )


def unique_match(
    name: str, matches: Sequence[str], error: Callable[[str], Exception]
) -> str | None:
    """The one match of ``name``; None if there is none.

    Parameters
    ----------
    name : str
    matches : sequence of str
    error : callable
        ``error(message)`` returns the exception raised when there are several matches.

    Returns
    -------
    str or None
    """
    if len(matches) > 1:
        raise error(f"{name!r} is ambiguous: use one of {', '.join(matches)}")
    return matches[0] if matches else None


def _check_path(name: str, data: Mapping[str, Any], source: str) -> None:
    node: Any = data
    parts = name.split(".")
    for i, part in enumerate(parts[:-1]):
        node = node.get(part, {})
        if not isinstance(node, dict):
            raise ScenarioError(
                f"{source}: parameter {name!r}: {'.'.join(parts[: i + 1])!r} is not a table"
            )


# --------------------------------------------------------------------------------------------------
# Values


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _tidy(x: float) -> float:
    """Round away float noise (0.1 + 2 * 0.1 -> 0.3) to 12 significant digits."""
    return float(f"{x:.12g}")


def expand_range(form: str, args: Sequence[Any], where: str) -> list[Any]:
    """Values of a range form: ``range [start, stop, step]`` (stop included when reached; whole
    numbers stay whole), ``linspace [start, stop, num]`` or ``geomspace [start, stop, num]`` (ends
    included).

    Parameters
    ----------
    form : str
        ``"range"``, ``"linspace"`` or ``"geomspace"``.
    args : sequence
        Its three numbers.
    where : str
        Names the parameter in errors.

    Returns
    -------
    list

    Raises
    ------
    ScenarioError
        Bad numbers, an empty range or too many values.
    """
    usage = {
        "range": "[start, stop, step] with step > 0 and start <= stop",
        "linspace": "[start, stop, num] with num >= 1",
        "geomspace": "[start, stop, num] with start, stop > 0 and num >= 1",
    }[form]
    bad = ScenarioError(f"{where}: {form} must be {usage} (got {list(args)!r})")
    if len(args) != 3 or not all(_is_number(a) and _finite(a) for a in args):
        raise bad
    start, stop, third = args
    if form == "range":
        if third <= 0 or start > stop:
            raise bad
        count = _range_count(start, stop, third)
    else:
        if (
            not isinstance(third, int)
            or third < 1
            or (form == "geomspace" and (start <= 0 or stop <= 0))
        ):
            raise bad
        count = third
    if count > MAX_RANGE_VALUES:
        shown = (
            f"{count:,}"
            if isinstance(count, int) and count < 10**15
            else f"{float(count):.3g}"
            if count < 1e300
            else "more than 1e300"
        )
        raise ScenarioError(
            f"{where}: {form} gives {shown} values, more than the limit of {MAX_RANGE_VALUES:,}"
        )
    if form == "range":
        values = [start + k * third for k in range(int(count))]  # within the limit: an int
        values = values if all(isinstance(a, int) for a in args) else [_tidy(v) for v in values]
    else:
        space = np.linspace if form == "linspace" else np.geomspace
        with np.errstate(all="ignore"):
            values = [_tidy(float(v)) for v in space(float(start), float(stop), int(count))]
    if not all(math.isfinite(v) for v in values):
        raise ScenarioError(
            f"{where}: {form} {list(args)!r} gives values beyond the floating-point range"
        )
    return values


def _finite(x: int | float) -> bool:
    """A finite float, or a whole number of any size."""
    return isinstance(x, int) or math.isfinite(x)


def _range_count(start: float, stop: float, step: float) -> float | int:
    """How many values ``range [start, stop, step]`` has (stop included when reached): exact for
    whole numbers, ``inf`` when the count is beyond a float."""
    if all(isinstance(a, int) for a in (start, stop, step)):
        return (stop - start) // step + 1
    try:
        span = (float(stop) - float(start)) / float(step)
    except OverflowError:
        return math.inf
    return math.floor(span + 1e-9) + 1 if math.isfinite(span) else math.inf


def check_values(values: list[Any], where: str) -> list[Any]:
    """A non-empty list of distinct values (see :func:`check_value`).

    Parameters
    ----------
    values : list
    where : str

    Returns
    -------
    list

    Raises
    ------
    ScenarioError
    """
    if not isinstance(values, list) or not values:
        raise ScenarioError(
            f"{where}: must be a non-empty list of values or a range form "
            f"({', '.join('{ ' + f + ' = [...] }' for f in RANGE_FORMS)})"
        )
    seen = set()
    for v in values:
        check_value(v, where)
        canonical = json.dumps(v, sort_keys=True)
        if canonical in seen:
            raise ScenarioError(f"{where}: value {v!r} appears twice")
        seen.add(canonical)
    return values


def check_value(value: Any, where: str) -> None:
    """A swept value must be plain data a results file can hold exactly: text, true/false, a whole
    number, a finite number, or a list or table of these (no dates or times, no inf or nan).

    Parameters
    ----------
    value : object
    where : str

    Raises
    ------
    ScenarioError
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise ScenarioError(f"{where}: value {v!r} is not a finite number")
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif not isinstance(v, (str, bool, int, float)):
            kind = "a date or time" if hasattr(v, "isoformat") else type(v).__name__
            raise ScenarioError(
                f"{where}: value {v!s} is {kind}; a swept value must be text, true/false, "
                "a number, or a list or table of these"
            )


def _range_form(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) == 1:
        ((form, args),) = value.items()
        if form in RANGE_FORMS and isinstance(args, list):
            return form
    return None


def parse_cli_values(text: str, where: str) -> list[Any]:
    """``0.1,0.5,1`` (each a TOML value, or else a bare string) or ``FORM:start:stop:third``.

    Parameters
    ----------
    text : str
        The VALUES of ``--set NAME=VALUES``.
    where : str

    Returns
    -------
    list

    Raises
    ------
    ScenarioError
    """
    form, _, rest = text.partition(":")
    if form in RANGE_FORMS and rest:
        return expand_range(form, [_scalar(a) for a in rest.split(":")], where)
    return check_values([_scalar(v) for v in text.split(",")], where)


def _scalar(text: str) -> Any:
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


# --------------------------------------------------------------------------------------------------
# The [sweep] table and the command line


@dataclass(frozen=True)
class SweepTable:
    """What a scenario file's ``[sweep]`` table declares (parameter names as written)."""

    parameters: dict[str, list[Any]]
    seeds: int | None
    summary: list[str] | None


def read_sweep_table(data: Mapping[str, Any], source: str) -> SweepTable:
    """Validate a scenario's ``[sweep]`` table (absent: nothing declared).

    Parameters
    ----------
    data : mapping
    source : str

    Returns
    -------
    SweepTable

    Raises
    ------
    ScenarioError
    """
    raw = data.get("sweep", {})
    if not isinstance(raw, dict):
        raise ScenarioError(f"{source}: field 'sweep': must be a table ([sweep])")
    seeds = raw.get("seeds")
    if seeds is not None and (not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1):
        raise ScenarioError(
            f"{source}: field 'sweep.seeds': must be a whole number >= 1 (got {seeds!r})"
        )
    summary = raw.get("summary")
    if summary is not None and (
        not isinstance(summary, list)
        or not summary
        or not all(isinstance(s, str) and s for s in summary)
    ):
        raise ScenarioError(
            f"{source}: field 'sweep.summary': must be a non-empty list of metric names"
        )
    params = {k: v for k, v in raw.items() if k not in RESERVED_SWEEP_KEYS}
    return SweepTable(dict(_flatten_parameters(params, source, "")), seeds, summary)


def _flatten_parameters(
    raw: Mapping[str, Any], source: str, prefix: str
) -> Iterable[tuple[str, list[Any]]]:
    """Parameters of the [sweep] table; an unquoted dotted key (``mechanism.epsilon = [...]``)
    arrives as a nested table and is flattened back to its dotted name."""
    for key, value in raw.items():
        name = prefix + key
        where = f"{source}: field 'sweep.{name}'"
        form = _range_form(value)
        if form:
            yield name, expand_range(form, value[form], where)
        elif isinstance(value, dict):
            yield from _flatten_parameters(value, source, name + ".")
        else:
            yield name, check_values(value, where)


def build_grid(
    data: Mapping[str, Any], source: str, cli_sets: Sequence[str] = (), cli_seeds: int | None = None
) -> tuple[Grid, SweepTable]:
    """The grid of a scenario: its ``[sweep]`` table, overridden by ``--set NAME=VALUES`` and
    ``--seeds``.

    Names are resolved to dotted fields; a ``--set`` for a parameter the table declares replaces it.

    Parameters
    ----------
    data : mapping
        The scenario's data.
    source : str
        How messages name the scenario.
    cli_sets : sequence of str
        ``--set`` texts.
    cli_seeds : int, optional
        ``--seeds``.

    Returns
    -------
    (Grid, SweepTable)

    Raises
    ------
    ScenarioError
        An unknown field, a bad value or range, or a malformed ``[sweep]`` table.
    """
    table = read_sweep_table(data, source)
    parameters: dict[str, list[Any]] = {}
    for name, values in table.parameters.items():
        field = resolve_name(name, data, source)
        if field in parameters:
            raise ScenarioError(f"{source}: field 'sweep.{name}': parameter {field!r} given twice")
        parameters[field] = values
    for assignment in cli_sets:
        name, text = split_assignment(assignment, "NAME=V1,V2,... or NAME=range:START:STOP:STEP")
        field = resolve_name(name, data, source)
        parameters[field] = parse_cli_values(text, f"--set {name}")
    seeds = cli_seeds if cli_seeds is not None else (table.seeds or 1)
    if seeds < 1:
        raise ScenarioError(f"--seeds: must be a whole number >= 1 (got {seeds})")
    return Grid(parameters, seeds), table


def split_assignment(assignment: str, usage: str) -> tuple[str, str]:
    """``NAME=VALUES`` -> ``(NAME, VALUES)``, the name stripped.

    Parameters
    ----------
    assignment : str
        The text of one ``--set``.
    usage : str
        What a well-formed assignment looks like (for the error).

    Returns
    -------
    (str, str)

    Raises
    ------
    ScenarioError
        No ``=``, or nothing on one side of it.
    """
    name, eq, text = assignment.partition("=")
    if not eq or not text or not name.strip():
        raise ScenarioError(f"--set {assignment!r}: expected {usage}")
    return name.strip(), text


def run_overrides(data: Mapping[str, Any], source: str, cli_sets: Sequence[str]) -> dict[str, Any]:
    """The overrides of ``dpgames run --set NAME=VALUE``: names resolved as a sweep's parameters (a
    dotted field, or the last component of exactly one field of the file), each value one TOML value
    (a number, true/false, a quoted string, a ``[list]``), or else bare text, as ``dpgames sweep
    --set`` reads each of its values.

    Parameters
    ----------
    data : mapping
        The scenario's data.
    source : str
        How messages name the scenario.
    cli_sets : sequence of str
        The ``--set`` texts.

    Returns
    -------
    dict
        Dotted field -> value, for :meth:`dpgames.scenarios.Scenario.with_overrides`.

    Raises
    ------
    ScenarioError
        An unknown or ambiguous field, a field given twice, several values or a range (those are for
        ``dpgames sweep``), or a value a scenario cannot hold.

    Examples
    --------
    >>> run_overrides({"mechanism": {"epsilon": 0.5}, "population": {"n": 10}}, "f.toml",
    ...               ["epsilon=0.3", "population.n=5000"])
    {'mechanism.epsilon': 0.3, 'population.n': 5000}
    """
    overrides: dict[str, Any] = {}
    for assignment in cli_sets:
        name, text = split_assignment(assignment, "NAME=VALUE, e.g. mechanism.epsilon=0.3")
        field = override_field(name, data, source)
        where = f"--set {name}"
        value = _scalar(text)
        form = text.partition(":")[0]
        if isinstance(value, str) and (form in RANGE_FORMS or len(text.split(",")) > 1):
            raise ScenarioError(
                f"{where}: dpgames run takes one value (got {text!r}); to run several, "
                f"`dpgames sweep FILE --set {name}={text}`; a list is written [a, b]"
            )
        check_value(value, where)
        if field in overrides:
            raise ScenarioError(f"{where}: field {field!r} is set twice")
        overrides[field] = value
    return overrides


def override_field(name: str, data: Mapping[str, Any], source: str) -> str:
    """The dotted field an override's name stands for (see :func:`resolve_name`); ``kind``, ``seed``
    and ``[sweep]`` cannot be overridden (a run's seed has its own option).

    Parameters
    ----------
    name : str
    data : mapping
    source : str

    Returns
    -------
    str

    Raises
    ------
    ScenarioError
    """
    if name.split(".")[0] in NOT_SWEEPABLE:
        hint = " (the seed has its own option: --seed S)" if name.split(".")[0] == "seed" else ""
        raise ScenarioError(f"{source}: field {name!r} cannot be overridden{hint}")
    return resolve_name(name, data, source)
