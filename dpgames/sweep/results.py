"""Sweep results on disk: JSON Lines, one finished cell per line, appended as cells finish.

Line 1 is a header (the scenario, its hash, the root seed, the grid, versions); every later line is one
cell: ``{"params": {...}, "seed": j, "status": "ok", "metrics": {...}}`` or ``{..., "status": "error",
"error": "..."}``.

Why JSON Lines rather than CSV or Parquet: a record is self-delimiting and self-describing (metrics
differ between scenario kinds and may be strings), it can be appended with a single write, and a record
cut short is *recognisable*: a line is complete only when it ends in a newline, whereas a CSV row cut
inside a number (``0.123`` -> ``0.1``) still parses as a valid, wrong row.  Parquet cannot be appended
row by row (its footer is written at close, so a killed writer leaves an unreadable file).

Atomic appends: each record is ONE ``os.write`` of a whole line to a file opened with ``O_APPEND``,
followed by ``fsync``, so a SIGKILL or a crash can leave at most the final line incomplete.  Readers
ignore an incomplete final line; a resumed writer truncates it away before appending.  An exclusive
``flock`` stops two sweeps from writing the same file at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpgames.sweep.grid import cell_key

FORMAT = "dpgames-sweep/1"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None


class SweepError(ValueError):
    """Bad input to a sweep (results file, executor address): reported in one line."""


@dataclass(frozen=True)
class RawFile:
    """What a results file holds: its header (None when not even that was completed), its records in
    file order, and the length in bytes of its complete lines."""

    header: dict[str, Any] | None
    records: list[dict[str, Any]]
    complete_bytes: int
    torn: bool


def read_raw(path: str | Path) -> RawFile:
    """Parse a results file, ignoring an incomplete final line (a write cut short by a kill)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SweepError(f"{path}: results file not found") from None
    except OSError as exc:
        raise SweepError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_raw(data, str(path))


def parse_raw(data: bytes, path: str) -> RawFile:
    """Parse the bytes of a results file (``path`` names it in messages)."""
    end = data.rfind(b"\n") + 1
    lines = []
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        try:
            lines.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SweepError(f"{path}: line {number} is not a JSON record (was the file edited?)") from None
    if lines and (not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT):
        raise SweepError(f"{path}: not a dpgames sweep results file (first line is not a {FORMAT} header)")
    header = lines[0] if lines else None
    return RawFile(header, lines[1:], end, torn=end < len(data))


def record_key(record: dict[str, Any]) -> str:
    return cell_key(record["params"], record["seed"])


def incompatibility(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why a results file (header ``old``) cannot be continued by sweep ``new``, or None if it can.

    The base scenario, root seed and parameter names must match; more values or seeds may be added."""
    if old.get("scenario_sha256") != new["scenario_sha256"]:
        return "it was made from a different scenario (the file's fields outside [sweep] changed)"
    if old.get("root_seed") != new["root_seed"]:
        return f"it was made with root seed {old.get('root_seed')}, not {new['root_seed']}"
    if sorted(old.get("parameters", {})) != sorted(new["parameters"]):
        return (f"it sweeps parameters {sorted(old.get('parameters', {}))}, "
                f"not {sorted(new['parameters'])}")
    return None


class ResultsWriter:
    """Appends cell records to a results file, one fsync'd line each (use as a context manager).

    A file it creates and closes without a single cell (the executor could not start, say) is removed."""

    def __init__(self, path: str | Path, header: dict[str, Any], resume: bool):
        self.path = Path(path)
        self.finished: set[str] = set()
        self.appended = 0
        existed = self.path.exists() and self.path.stat().st_size > 0
        if existed and not resume:
            raise SweepError(f"{self.path} exists: pass --resume to continue that sweep, or choose another --out")
        self._created = not existed
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise SweepError(f"{self.path}: cannot write ({exc.strerror})") from None
        try:
            self._lock()
            self._start(header)
        except BaseException:
            os.close(self._fd)
            raise

    def _lock(self) -> None:
        if fcntl is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(f"{self.path}: another sweep is writing this file") from None

    def _start(self, header: dict[str, Any]) -> None:
        raw = read_raw(self.path)
        if raw.header is None:
            os.ftruncate(self._fd, 0)
            self._write(header)
            _fsync_dir(self.path.parent)
            return
        reason = incompatibility(raw.header, header)
        if reason:
            raise SweepError(f"{self.path}: cannot resume: {reason}")
        os.ftruncate(self._fd, raw.complete_bytes)  # drop a torn final line
        self.finished = {record_key(r) for r in raw.records}

    def append(self, record: dict[str, Any]) -> None:
        """Write one cell's record as one line in one system call, then flush it to the disk."""
        self._write(record)
        self.appended += 1

    def _write(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n").encode()
        written = os.write(self._fd, line)
        if written != len(line):  # never seen for regular files; a short write would tear the line
            raise OSError(f"{self.path}: short write ({written} of {len(line)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        if self._created and not self.appended:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Write a whole file through ``write(tmp_path)`` then rename it into place: a reader never sees half
    a file."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        tmp.replace(path)
    except OSError as exc:
        raise SweepError(f"{path}: cannot write ({exc.strerror})") from None
    return path


def _fsync_dir(folder: Path) -> None:
    """Make a new file's directory entry durable too (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------------
# Loading a results file as a table


def _order(value: Any) -> tuple:
    """Sort numbers numerically, before anything else (compared by their JSON text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, json.dumps(value, sort_keys=True))


@dataclass
class SweepResults:
    """A sweep's results as a table: one row per cell, sorted by parameter values then seed.

    ``rows`` are records as written (``params``, ``seed``, ``status``, ``metrics`` or ``error``)."""

    path: str
    header: dict[str, Any]
    rows: list[dict[str, Any]]
    torn: bool = False
    parameters: list[str] = field(init=False)
    metrics: list[str] = field(init=False)

    def __post_init__(self) -> None:
        names = list(self.header.get("parameters", {}))
        for row in self.rows:
            names += [p for p in row["params"] if p not in names]
        self.parameters = names
        self.metrics = list(dict.fromkeys(m for row in self.ok_rows() for m in row["metrics"]))

    def ok_rows(self) -> Iterator[dict[str, Any]]:
        return (row for row in self.rows if row["status"] == "ok")

    @property
    def failures(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["status"] != "ok"]

    def columns(self) -> dict[str, list[Any]]:
        """The flat table: parameters, ``seed``, ``status``, every metric and ``error`` (None if absent)."""
        table: dict[str, list[Any]] = {p: [row["params"].get(p) for row in self.rows] for p in self.parameters}
        table["seed"] = [row["seed"] for row in self.rows]
        table["status"] = [row["status"] for row in self.rows]
        for m in self.metrics:
            table[m] = [row.get("metrics", {}).get(m) for row in self.rows]
        table["error"] = [row.get("error") for row in self.rows]
        return table

    def to_frame(self):
        """The flat table as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd
        return pd.DataFrame(self.columns())


def load_results(path: str | Path) -> SweepResults:
    """Read a results file (complete lines only) into a table: what the CLI's summary and plot, and the
    Streamlit app, read.  A cell recorded twice keeps its last record."""
    return _table(read_raw(path), str(path))


def results_from_bytes(data: bytes, name: str = "<results>") -> SweepResults:
    """:func:`load_results` for the bytes of a results file (an upload, say)."""
    return _table(parse_raw(data, name), name)


def _table(raw: RawFile, path: str) -> SweepResults:
    if raw.header is None:
        raise SweepError(f"{path}: empty results file (the sweep was stopped before its first line)")
    by_key = {record_key(r): r for r in raw.records}
    params = list(raw.header.get("parameters", {}))
    rows = sorted(by_key.values(),
                  key=lambda r: (tuple(_order(r["params"].get(p)) for p in params), r["seed"]))
    return SweepResults(path, raw.header, rows, raw.torn)
