"""What a run returns: metrics, tables and provenance, as JSON or as a readable table."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A table's column as a scenario kind builds it: a list, a tuple or a numpy array (:func:`plain`
#: makes it a list).
Column = Sequence[Any] | np.ndarray


def plain(x: Any) -> Any:
    """Convert numpy scalars and arrays to plain Python (JSON-ready); non-finite floats become
    strings.

    Parameters
    ----------
    x : object
        A number, bool, string, array, list, tuple or dict of those (nested).

    Returns
    -------
    object
        The same structure with Python ints, floats (finite), bools, strings, lists and dicts.
    """
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [plain(v) for v in (x.tolist() if isinstance(x, np.ndarray) else x)]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else str(x)
    return x


@dataclass
class Result:
    """The outcome of running a scenario.

    ``metrics`` maps names to numbers (or short strings), in display order; ``labels`` gives the
    human-readable label of each metric; ``tables`` maps a table name to its columns (name -> list);
    ``provenance`` records the scenario (file, SHA-256), the seed and the versions that produced it.

    Examples
    --------
    >>> r = Result(
    ...     "digital_goods",
    ...     "demo",
    ...     {"n": 3, "opt": 1.2},
    ...     {"n": "agents"},
    ...     {"law": {"p": [0.5, 1.0]}},
    ... )
    >>> print(r.format_text())
    demo  [digital_goods, seed None]
    --------------------------------
    agents  3
    opt     1.2
    <BLANKLINE>
    table law: 2 rows
        p
      0.5
        1
    >>> Result.from_json(r.to_json()) == r
    True
    """

    kind: str
    title: str
    metrics: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    tables: dict[str, dict[str, list]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.metrics = plain(self.metrics)
        self.tables = plain(self.tables)
        self.provenance = plain(self.provenance)

    def to_dict(self) -> dict[str, Any]:
        """The Result as a plain dict (JSON-ready).

        Returns
        -------
        dict
            Keys ``kind``, ``title``, ``metrics``, ``labels``, ``tables``, ``provenance``.
        """
        return {
            "kind": self.kind,
            "title": self.title,
            "metrics": self.metrics,
            "labels": self.labels,
            "tables": self.tables,
            "provenance": self.provenance,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The Result as JSON text (what ``dpgames run --json`` prints).

        Parameters
        ----------
        indent : int or None

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Result:
        """A Result from :meth:`to_json`'s text.

        Parameters
        ----------
        text : str

        Returns
        -------
        Result
        """
        return cls(**json.loads(text))

    def metrics_csv(self) -> str:
        """The metrics as a two-column CSV (metric, value); numbers as :func:`csv_cell` writes them.

        Returns
        -------
        str
        """
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["metric", "value"])
        writer.writerows((k, csv_cell(v)) for k, v in self.metrics.items())
        return out.getvalue()

    def table_csv(self, name: str) -> str:
        """One table as CSV text: a header of column names, then one line per row
        (``--tables-dir``); numbers as :func:`csv_cell` writes them.

        Parameters
        ----------
        name : str
            A key of ``tables``.

        Returns
        -------
        str

        Raises
        ------
        KeyError
            No such table.
        """
        columns = self.tables[name]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(list(columns))
        writer.writerows([csv_cell(x) for x in row] for row in zip(*columns.values()))
        return out.getvalue()

    def to_frame(self):
        """The metrics as a pandas DataFrame, in display order.

        Returns
        -------
        pandas.DataFrame
            Columns ``key`` (the metric's name), ``label`` and ``value``.

        Raises
        ------
        ImportError
            pandas is not installed (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_frame needs pandas: pip install pandas") from None
        keys = list(self.metrics)
        return pd.DataFrame(
            {
                "key": keys,
                "label": [self.labels.get(k, k) for k in keys],
                "value": [self.metrics[k] for k in keys],
            }
        )

    def _repr_html_(self) -> str:
        """The metrics as an HTML table (label, value) and each table's name with its size
        (notebooks)."""
        from dpgames.display import html_table

        title = f"{self.title} [{self.kind}, seed {self.provenance.get('seed')}]"
        out = html_table([(self.labels.get(k, k), v) for k, v in self.metrics.items()], title=title)
        sizes = [
            (name, f"{len(next(iter(columns.values()), []))} rows x {len(columns)} columns")
            for name, columns in self.tables.items()
        ]
        return out + (
            html_table(sizes, title="tables (Result.tables; Result.table_csv(name))")
            if sizes
            else ""
        )

    def format_text(self, head: int = 5, tail: int = 5, more: str = "") -> str:
        """The Result as readable text, as the CLI prints it: the metrics (label and value), then
        every table cut to its first ``head`` and last ``tail`` rows (see
        :mod:`dpgames.scenarios.text`).

        Parameters
        ----------
        head, tail : int
            Rows shown from each end of a long table.
        more : str
            How the reader gets every row (said once when a table was cut).

        Returns
        -------
        str
        """
        from dpgames.scenarios.text import format_result

        return format_result(self, head, tail, more)


def csv_cell(x: Any) -> Any:
    """A cell of a CSV file: a float with at most 15 significant digits, the most a double holds
    exactly in decimal (``0.1 + 0.2`` is written 0.3, not 0.30000000000000004; the JSON keeps every
    bit), any other value as it is.

    Parameters
    ----------
    x : object

    Returns
    -------
    object

    Examples
    --------
    >>> csv_cell(0.1 + 0.2), csv_cell(1 / 3), csv_cell(7), csv_cell(1e-300 / 3)
    ('0.3', '0.333333333333333', 7, '3.33333333333333e-301')
    """
    return f"{x:.15g}" if isinstance(x, float) and math.isfinite(x) else x


@dataclass(frozen=True)
class Metric:
    """A metric a scenario kind declares (once, in its :class:`MetricSet`): the stable ``name`` a
    Result, a sweep's summary and the invariants use, what it ``means``, its ``unit`` ("" for a pure
    number, a flag or a text), for a bound or a guaranteed figure, the ``source`` it comes from (the
    theorem), and whether it is a ``gain_bound``: a bound on an agent's gain from a lie, utilities
    in [0, 1], which the command line's text and the app's table mark vacuous from 1 up (the JSON
    keeps the plain value)."""

    name: str
    meaning: str
    unit: str = ""
    source: str = ""
    gain_bound: bool = False


class MetricSet:
    """The metrics of one scenario kind, each declared once by :meth:`add`; the kind's ``run``
    records them (:meth:`Metrics.put`) and its invariants name them by the :class:`Metric` objects,
    never by a repeated string.

    Examples
    --------
    >>> METRICS = MetricSet()
    >>> N = METRICS.add("n", "agents", unit="agents")
    >>> N.name, "n" in METRICS, [m.name for m in METRICS]
    ('n', True, ['n'])
    """

    def __init__(self) -> None:
        self._declared: dict[str, Metric] = {}

    def add(
        self, name: str, meaning: str, unit: str = "", source: str = "", *, gain_bound: bool = False
    ) -> Metric:
        """Declare metric ``name`` (a name declared twice is refused).

        Parameters
        ----------
        name : str
            The stable identifier.
        meaning : str
            What the figure is.
        unit : str
            Its unit ("" for a pure number, a flag or a text).
        source : str
            The theorem or paper a bound or guarantee comes from ("" when none).
        gain_bound : bool
            A bound on a gain from a lie (utilities in [0, 1]): shown marked vacuous from 1 up.

        Returns
        -------
        Metric

        Raises
        ------
        ValueError
            ``name`` is already declared.
        """
        if name in self._declared:
            raise ValueError(f"metric {name!r} is declared twice")
        metric = self._declared[name] = Metric(name, meaning, unit, source, gain_bound)
        return metric

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._declared.values())

    def __len__(self) -> int:
        return len(self._declared)

    def __contains__(self, name: object) -> bool:
        return name in self._declared

    def __getitem__(self, name: str) -> Metric:
        return self._declared[name]


class Metrics:
    """Builds a :class:`Result`'s ``metrics`` and ``labels`` together, in display order: the one way
    every scenario kind records a figure, each a declared :class:`Metric`.

    Examples
    --------
    >>> m = Metrics()
    >>> m.put(Metric("n", "agents", "agents"), 3, "agents")
    >>> m.result("digital_goods").metrics
    {'n': 3}
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.labels: dict[str, str] = {}

    def put(self, metric: Metric, value: Any, label: str) -> None:
        """Record ``metric`` with its ``value`` and human-readable ``label`` (this run's wording).

        Parameters
        ----------
        metric : Metric
            A metric the kind declares; a second ``put`` of the same metric replaces the first, in
            its place.
        value : number, bool or str
        label : str
        """
        self.values[metric.name], self.labels[metric.name] = value, label

    def result(
        self,
        kind: str,
        tables: Mapping[str, Mapping[str, Column]] | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> Result:
        """The :class:`Result` of a run of ``kind`` (title empty: the loader sets it).

        Parameters
        ----------
        kind : str
            The kind's registered name.
        tables : mapping, optional
            Table name -> column name -> values (a list, a tuple or a numpy array); converted to
            plain lists (:func:`plain`), as :class:`Result` keeps them.
        provenance : mapping, optional
            As in :class:`Result`.

        Returns
        -------
        Result
        """
        columns = {
            name: {column: plain(values) for column, values in table.items()}
            for name, table in (tables or {}).items()
        }
        return Result(
            kind, "", dict(self.values), dict(self.labels), columns, dict(provenance or {})
        )
