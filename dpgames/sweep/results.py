"""Sweep results on disk: JSON Lines, one finished cell per line, appended as cells finish.

Line 1 is a header (the scenario, its hash, the root seed, the grid, versions); every later line is
one cell: ``{"params": {...}, "seed": j, "status": "ok", "metrics": {...}}`` or ``{..., "status":
"error", "error": "..."}``.  The metrics' human-readable labels (the same in almost every cell) are
kept once, in a small JSON file beside it (:func:`labels_path`), which plots read.

Why JSON Lines rather than CSV or Parquet: a record is self-delimiting and self-describing (metrics
differ between scenario kinds and may be strings), it can be appended with a single write, and a
record cut short is *recognisable*: a line is complete only when it ends in a newline, whereas a CSV
row cut inside a number (``0.123`` -> ``0.1``) still parses as a valid, wrong row.  Parquet cannot
be appended row by row (its footer is written at close, so a killed writer leaves an unreadable
file).

Atomic appends: each record is ONE ``os.write`` of a whole line to a file opened with ``O_APPEND``,
followed by ``fsync``, so a SIGKILL or a crash can leave at most the final line incomplete.  Readers
ignore an incomplete final line; a resumed writer truncates it away before appending.  An exclusive
``flock`` stops two sweeps from writing the same file at once.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpgames._executors import ExecutorError
from dpgames._files import FileError, read_regular
from dpgames.sweep.grid import cell_key

FORMAT = "dpgames-sweep/1"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]  # the lock is skipped when fcntl is None


class SweepError(ExecutorError):
    """Bad input to a sweep (results file, executor address): reported in one line."""


#: Largest results file read (a million cells is about 300 MiB).
MAX_RESULTS_BYTES = 2**31
#: Largest labels file read.
MAX_LABELS_BYTES = 2**22


@dataclass(frozen=True)
class RawFile:
    """What a results file holds: its header (None when not even that was completed), its records in
    file order, and the length in bytes of its complete lines."""

    header: dict[str, Any] | None
    records: list[dict[str, Any]]
    complete_bytes: int
    torn: bool


def read_raw(path: str | Path) -> RawFile:
    """A results file's header and complete records (a torn last line is left out).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    RawFile

    Raises
    ------
    SweepError
        The file cannot be read, or a line is not a valid header or record.
    """
    try:
        # a FIFO, a device or a folder is refused unopened
        data = read_regular(path, MAX_RESULTS_BYTES)
    except FileError as exc:
        raise SweepError(
            f"{path}: results file {'not found' if exc.reason == 'file not found' else exc.reason}"
        ) from None
    return parse_raw(data, str(path))


def parse_raw(data: bytes, path: str) -> RawFile:
    """Parse the bytes of a results file.

    Every complete line is checked (:func:`check_header`, :func:`check_record`): a malformed one is
    a :class:`SweepError` naming the file, the line number and what is wrong, never a KeyError
    later.

    Parameters
    ----------
    data : bytes
    path : str
        Names the file in messages.

    Returns
    -------
    RawFile

    Raises
    ------
    SweepError
    """
    end = data.rfind(b"\n") + 1
    lines = []
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        try:
            lines.append(json.loads(line, parse_constant=_refuse_constant))
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError, RecursionError):
            raise SweepError(
                f"{path}: line {number} is not a JSON record (was the file edited?)"
            ) from None
    if lines and (not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT):
        raise SweepError(
            f"{path}: not a dpgames sweep results file (first line is not a {FORMAT} header)"
        )
    header = check_header(lines[0], path) if lines else None
    records = [
        check_record(record, f"{path}: line {number}")
        for number, record in enumerate(lines[1:], start=2)
    ]
    return RawFile(header, records, end, torn=end < len(data))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_header(header: dict[str, Any], path: str) -> dict[str, Any]:
    """The header's fields that readers use, checked: ``parameters`` (names -> lists of values),
    ``root_seed`` (a whole number >= 0), ``title`` (text) and ``summary`` (metric names or null).

    Parameters
    ----------
    header : dict
    path : str

    Returns
    -------
    dict

    Raises
    ------
    SweepError
    """
    where = f"{path}: line 1 (header)"
    parameters = header.get("parameters", {})
    if not isinstance(parameters, dict) or not all(
        isinstance(v, list) for v in parameters.values()
    ):
        raise SweepError(f"{where}: 'parameters' must map parameter names to lists of values")
    seed = header.get("root_seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"{where}: 'root_seed' must be a whole number >= 0 (got {_short(seed)})")
    if not isinstance(header.get("title", ""), str):
        raise SweepError(f"{where}: 'title' must be text")
    summary = header.get("summary")
    if summary is not None and not (
        isinstance(summary, list) and all(isinstance(m, str) for m in summary)
    ):
        raise SweepError(f"{where}: 'summary' must be a list of metric names or null")
    return header


def check_record(record: Any, where: str) -> dict[str, Any]:
    """A cell record, checked: ``params`` (a table), ``seed`` (a whole number >= 0), ``status``
    ("ok" with a ``metrics`` table, or "error" with an ``error`` text).

    Parameters
    ----------
    record : object
    where : str
        Names the file and line in messages.

    Returns
    -------
    dict

    Raises
    ------
    SweepError
    """
    if not isinstance(record, dict):
        raise SweepError(
            f"{where}: a cell record must be a JSON object, got {type(record).__name__}"
        )
    for key in ("params", "seed", "status"):
        if key not in record:
            raise SweepError(f"{where}: the cell record has no {key!r}")
    if not isinstance(record["params"], dict):
        raise SweepError(
            f"{where}: 'params' must be an object of parameter values, got "
            f"{_short(record['params'])}"
        )
    seed = record["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"{where}: 'seed' must be a whole number >= 0, got {_short(seed)}")
    status = record["status"]
    if status == "ok":
        if not isinstance(record.get("metrics"), dict):
            raise SweepError(f"{where}: a record with status 'ok' needs a 'metrics' object")
    elif status == "error":
        if not isinstance(record.get("error"), str):
            raise SweepError(f"{where}: a record with status 'error' needs an 'error' text")
    else:
        raise SweepError(f"{where}: 'status' must be 'ok' or 'error', got {_short(status)}")
    return record


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


def record_key(record: dict[str, Any]) -> str:
    """The identity of a written cell record (:func:`~dpgames.sweep.grid.cell_key`)."""
    return cell_key(record["params"], record["seed"])


def incompatibility(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why a results file (header ``old``) cannot be continued by sweep ``new``, or None if it can.

    The base scenario, root seed and parameter names must match; more values or seeds may be added.

    Parameters
    ----------
    old, new : dict
        Headers.

    Returns
    -------
    str or None
    """
    if old.get("scenario_sha256") != new["scenario_sha256"]:
        return "it was made from a different scenario (the file's fields outside [sweep] changed)"
    if old.get("root_seed") != new["root_seed"]:
        return f"it was made with root seed {old.get('root_seed')}, not {new['root_seed']}"
    if sorted(old.get("parameters", {})) != sorted(new["parameters"]):
        return (
            f"it sweeps parameters {sorted(old.get('parameters', {}))}, "
            f"not {sorted(new['parameters'])}"
        )
    return None


class ResultsWriter:
    """Appends cell records to a results file, one fsync'd line each (use as a context manager).

    A file it creates and closes without a single cell (the executor could not start, say) is
    removed."""

    def __init__(self, path: str | Path, header: dict[str, Any], resume: bool):
        self.path = Path(path)
        self.finished: set[str] = set()  # cells recorded "ok": a resume skips them
        self.failed: set[str] = set()  # cells recorded with an error: a resume runs them again
        self.appended = 0
        self.recreated = 0  # times the file was deleted under the sweep and written again
        try:
            existed = self.path.exists() and self.path.stat().st_size > 0
        except OSError as exc:
            raise SweepError(f"{self.path}: cannot read ({exc.strerror})") from None
        if existed and not resume:
            raise SweepError(
                f"{self.path} exists: pass --resume to continue that sweep, or choose another --out"
            )
        self._created = not existed
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_NONBLOCK: a FIFO named as the results file must not block the open (it is refused
            # below)
            self._fd = os.open(
                self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o644
            )
        except OSError as exc:
            raise SweepError(f"{self.path}: cannot write ({exc.strerror})") from None
        try:
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                raise SweepError(
                    f"{self.path}: not a regular file (a device, a FIFO or a socket): "
                    "choose another --out"
                )
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
            self._size = 0
            self._write(header)
            _fsync_dir(self.path.parent)
            return
        reason = incompatibility(raw.header, header)
        if reason:
            raise SweepError(f"{self.path}: cannot resume: {reason}")
        os.ftruncate(self._fd, raw.complete_bytes)  # drop a torn final line
        self._size = raw.complete_bytes
        # a cell recorded twice: its last record counts
        last = {record_key(r): r for r in raw.records}
        self.finished = {key for key, r in last.items() if r["status"] == "ok"}
        self.failed = {key for key, r in last.items() if r["status"] != "ok"}

    def append(self, record: dict[str, Any]) -> None:
        """Write one cell's record as one line in one system call, then flush it to the disk."""
        self._write(record)
        self.appended += 1

    def _write(self, record: dict[str, Any]) -> None:
        """Append one line; a full disk or a short write is taken back (no torn line is left) and
        reported in one line.  Before writing, the file must still be the one this writer opened
        (see :meth:`_check_same_file`)."""
        line = (json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n").encode()
        self._check_same_file()
        size = self._size
        try:
            written = _os_write(self._fd, line)
            if written != len(line):
                raise OSError(errno.ENOSPC, f"short write: {written} of {len(line)} bytes")
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)  # take back a partial line: the file stays whole
            reason = exc.strerror or str(exc)
            raise SweepError(
                f"{self.path}: cannot append a cell's record ({reason}); the {self.appended} "
                "cells written before are kept: make room and run again with --resume"
            ) from None
        self._size = size + len(line)

    def _check_same_file(self) -> None:
        """Detect the results file deleted, replaced or changed by another program while the sweep
        runs.

        Deleted: it is written again from this writer's open copy (nothing is lost) and a warning
        says so. Replaced or changed: the sweep stops, and this writer's copy is saved next to
        it."""
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            try:
                self._recreate()
            except OSError as exc:
                raise SweepError(
                    f"{self.path} was deleted while the sweep ran and cannot be written again "
                    f"({exc.strerror or exc})"
                ) from None
            return
        opened = os.fstat(self._fd)
        if (on_disk.st_dev, on_disk.st_ino) == (
            opened.st_dev,
            opened.st_ino,
        ) and opened.st_size == self._size:
            return
        saved = self.path.with_name(self.path.name + f".recovered-{os.getpid()}")
        what = (
            "changed by another program"
            if on_disk.st_ino == opened.st_ino
            else "replaced by another file"
        )
        try:
            saved.write_bytes(_read_fd(self._fd)[: self._size])
        except OSError as exc:
            raise SweepError(
                f"{self.path} was {what} while the sweep ran; stopped, and this sweep's records "
                f"could not be saved to {saved} ({exc.strerror})"
            ) from None
        raise SweepError(
            f"{self.path} was {what} while the sweep ran; stopped, and this sweep's records "
            f"are saved in {saved}"
        )

    def _recreate(self) -> None:
        data = _read_fd(self._fd)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            raise
        os.close(self._fd)
        self._fd = fd
        self._lock()
        self.recreated += 1
        print(
            f"dpgames: warning: {self.path} was deleted while the sweep ran; written "
            "again from the open "
            f"copy ({len(data)} bytes, nothing lost)",
            file=sys.stderr,
        )

    def close(self) -> None:
        """Close the file; a file this writer created and wrote no cell to is removed."""
        try:
            same = os.path.samestat(os.stat(self.path), os.fstat(self._fd))
        except FileNotFoundError:
            same = False
        if self._created and not self.appended and same:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_fd(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def _os_write(fd: int, data: bytes) -> int:
    """``os.write`` (a seam for tests that simulate a full disk)."""
    return os.write(fd, data)


def write_atomic(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write a whole file through ``write(tmp_path)`` then rename it into place: a reader never sees
    half a file.

    Parameters
    ----------
    path : str or Path
    write : callable
        ``write(tmp_path)`` writes the content.

    Returns
    -------
    Path

    Raises
    ------
    SweepError
        The file cannot be written.
    """
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
    """Make a new file's directory entry durable too (POSIX; a no-op where directories cannot be
    opened)."""
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


# --------------------------------------------------------------------------------------------------
# Loading a results file as a table


def _order(value: Any) -> tuple:
    """Sort numbers numerically, before anything else (compared by their JSON text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, json.dumps(value, sort_keys=True))


@dataclass
class SweepResults:
    """A sweep's results as a table: one row per cell, sorted by parameter values then seed.

    ``rows`` are records as written (``params``, ``seed``, ``status``, ``metrics`` or ``error``);
    ``labels`` maps a metric to its human-readable label, from the labels file beside the results
    (:func:`labels_path`; empty without one).

    Examples
    --------
    >>> r = SweepResults(
    ...     "<doc>",
    ...     {"parameters": {"mechanism.epsilon": [0.1]}},
    ...     [
    ...         {
    ...             "params": {"mechanism.epsilon": 0.1},
    ...             "seed": 0,
    ...             "status": "ok",
    ...             "metrics": {"revenue": 2.0},
    ...         }
    ...     ],
    ... )
    >>> r.parameters, r.metrics, r.columns()["revenue"]
    (['mechanism.epsilon'], ['revenue'], [2.0])
    """

    path: str
    header: dict[str, Any]
    rows: list[dict[str, Any]]
    torn: bool = False
    parameters: list[str] = field(init=False)
    metrics: list[str] = field(init=False)
    labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = list(self.header.get("parameters", {}))
        for row in self.rows:
            names += [p for p in row["params"] if p not in names]
        self.parameters = names
        self.metrics = list(dict.fromkeys(m for row in self.ok_rows() for m in row["metrics"]))

    def ok_rows(self) -> Iterator[dict[str, Any]]:
        """The rows of the cells that ran (status ``ok``)."""
        return (row for row in self.rows if row["status"] == "ok")

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The rows of the cells that failed."""
        return [row for row in self.rows if row["status"] != "ok"]

    def columns(self) -> dict[str, list[Any]]:
        """The flat table: parameters, ``seed``, ``status``, every metric and ``error`` (None if
        absent)."""
        table: dict[str, list[Any]] = {
            p: [row["params"].get(p) for row in self.rows] for p in self.parameters
        }
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
    """Read a results file (complete lines only) into a table: what the CLI's summary and plot, and
    the Streamlit app, read.  A cell recorded twice keeps its last record.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    SweepResults
        With the metrics' labels when the labels file beside it (:func:`labels_path`) is readable.

    Raises
    ------
    SweepError
        The file cannot be read or is not a results file.
    """
    results = _table(read_raw(path), str(path))
    results.labels.update(read_labels(labels_path(path)))
    return results


def labels_path(results_path: str | Path) -> Path:
    """The labels file of a results file: ``r.jsonl`` -> ``r.labels.json``.

    Parameters
    ----------
    results_path : str or Path

    Returns
    -------
    Path
    """
    return Path(results_path).with_suffix(".labels.json")


def read_labels(path: str | Path) -> dict[str, str]:
    """The metric -> label map of a labels file; empty when it is missing or not such a map (labels
    are a nicety: a plot falls back to the metrics' names).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    dict
    """
    try:
        data = json.loads(read_regular(path, MAX_LABELS_BYTES))
    except (FileError, ValueError, OSError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def write_labels(path: str | Path, labels: dict[str, str]) -> Path:
    """Merge ``labels`` into the labels file at ``path`` (labels already there are kept),
    atomically.

    Parameters
    ----------
    path : str or Path
    labels : dict
        Metric -> label.

    Returns
    -------
    Path
    """
    merged = {**labels, **read_labels(path)}
    return write_atomic(
        path, lambda tmp: Path(tmp).write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    )


def results_from_bytes(data: bytes, name: str = "<results>") -> SweepResults:
    """:func:`load_results` for the bytes of a results file (an upload, say); no labels.

    Parameters
    ----------
    data : bytes
    name : str
        How messages name the file.

    Returns
    -------
    SweepResults

    Raises
    ------
    SweepError
        Not a results file.
    """
    return _table(parse_raw(data, name), name)


def _table(raw: RawFile, path: str) -> SweepResults:
    if raw.header is None:
        raise SweepError(
            f"{path}: empty results file (the sweep was stopped before its first line)"
        )
    by_key = {record_key(r): r for r in raw.records}
    params = list(raw.header.get("parameters", {}))
    rows = sorted(
        by_key.values(),
        key=lambda r: (tuple(_order(r["params"].get(p)) for p in params), r["seed"]),
    )
    return SweepResults(path, raw.header, rows, raw.torn)
