"""What a run returns: metrics, tables and provenance, as JSON or as a readable table."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def plain(x: Any) -> Any:
    """Convert numpy scalars and arrays to plain Python (JSON-ready); non-finite floats become strings."""
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

    def check(self, extra: tuple = ()) -> Result:
        """This Result, after :func:`dpgames.scenarios.invariants.check_result` (raises
        :class:`~dpgames.scenarios.invariants.InvariantError` on a broken invariant; ``extra``: more
        rules).  :meth:`Scenario.run <dpgames.scenarios.loader.Scenario.run>` calls it on every run."""
        from dpgames.scenarios.invariants import check_result

        check_result(self, extra)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "metrics": self.metrics, "labels": self.labels,
                "tables": self.tables, "provenance": self.provenance}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls(**json.loads(text))

    def metrics_csv(self) -> str:
        """The metrics as a two-column CSV (metric, value)."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["metric", "value"])
        writer.writerows(self.metrics.items())
        return out.getvalue()

    def table_csv(self, name: str) -> str:
        columns = self.tables[name]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(list(columns))
        writer.writerows(zip(*columns.values()))
        return out.getvalue()

    def format_text(self) -> str:
        """A readable two-column table of the metrics, as the CLI prints it."""
        rows = [(self.labels.get(k, k), _format_value(v)) for k, v in self.metrics.items()]
        width = max(len(label) for label, _ in rows) if rows else 0
        seed = self.provenance.get("seed")
        head = f"{self.title}  [{self.kind}, seed {seed}]"
        return "\n".join([head, "-" * len(head)] + [f"{label:<{width}}  {value}" for label, value in rows])


def _format_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
