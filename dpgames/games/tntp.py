"""Reading road networks in TNTP format (Bar-Gera's Transportation Networks for Research).

``<name>_net.tntp``: metadata lines ``<KEY> value`` up to ``<END OF METADATA>``, then one link a
line: ``init_node term_node capacity length free_flow_time B power speed toll link_type ;``.
``<name>_trips.tntp``: metadata, then ``Origin o`` lines each followed by ``dest : demand;``
entries. ``~`` starts a comment; blank lines are skipped.  Link cost: BPR ``t0 (1 + B (x /
capacity)^power)``, plus an optional generalized-cost constant ``toll_weight * toll +
distance_weight * length`` (Chicago Sketch's README: 0.02 min/cent and 0.04 min/mile).  Nodes
numbered below ``<FIRST THRU NODE>`` are zones no path may pass through.  Any malformed line is a
:class:`TntpError` naming the file and line.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgames._files import MAX_DATA_BYTES, FileError, read_text
from dpgames.games.costs import PolynomialCosts
from dpgames.games.network import RoutingGame, RoutingNetwork
from dpgames.validation import ValidationError, non_negative, positive

LINK_FIELDS = (
    "init_node",
    "term_node",
    "capacity",
    "length",
    "free_flow_time",
    "b",
    "power",
    "speed",
    "toll",
    "link_type",
)
_META = re.compile(r"^<([^>]+)>\s*(.*)$")
_ENTRY = re.compile(r"^\s*([^:\s]+)\s*:\s*([^;:\s]+)\s*$")


#: Node ids are whole numbers in [1, MAX_NODE_ID]: each is exact as a float64 and as an int64.
MAX_NODE_ID = 2**53 - 1
#: Link attributes and demands are finite numbers of magnitude at most MAX_VALUE ...
MAX_VALUE = 1e12
#: ... and the BPR power at most MAX_POWER (published networks use 4).
MAX_POWER = 16.0


class TntpError(FileError):
    """A malformed TNTP file: the message names the file, the line and the field (``"<file>:<line>:
    ..."``), never the line's contents.  A :class:`~dpgames.validation.ValidationError` (bad input).

    Examples
    --------
    >>> from dpgames.games.tntp import TntpError
    >>> str(TntpError("net.tntp", "capacity must be > 0", 12))
    'net.tntp:12: capacity must be > 0'
    """

    def __init__(self, path: str | Path, message: str, line: int | None = None):
        super().__init__(path if line is None else f"{path}:{line}", message)
        self.line = line


def _lines(path: Path):
    """(line number, text) of the data lines after the metadata; also the metadata dict."""
    try:
        text = read_text(path, MAX_DATA_BYTES)
    except FileError as exc:
        raise TntpError(path, exc.reason) from None
    meta, body, in_meta = {}, [], True
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("~", 1)[0].strip()
        if not line:
            continue
        match = _META.match(line)
        if in_meta and match:
            key = match.group(1).strip().upper()
            if key == "END OF METADATA":
                in_meta = False
            else:
                meta[key] = (number, match.group(2).strip())
            continue
        in_meta = False
        body.append((number, line))
    return meta, body


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (ValueError, OverflowError):
        return None


def _whole(path: Path, line: int, field: str, text: str, low: int, high: int) -> int:
    """``text`` as a whole number in [low, high] (``12`` or ``12.0``), else a TntpError naming the
    field."""
    value = _number(text)
    if value is None or not (
        math.isfinite(value) and value == math.floor(value) and low <= value <= high
    ):
        raise TntpError(path, f"{field} must be a whole number in [{low}, {high}]", line)
    return int(value)


def _meta_int(path: Path, meta: dict, key: str, low: int, high: int) -> int | None:
    if key not in meta:
        return None
    number, value = meta[key]
    return _whole(path, number, f"<{key}>", value, low, high)


def read_net(path: str | Path) -> tuple[np.ndarray, int]:
    """The link table (``len(LINK_FIELDS)`` columns, float) and the first thru node (1 if absent).

    Node ids are whole numbers in [1, 2^53 - 1] (never rounded or truncated); the other fields are
    finite, of magnitude at most 1e12, and the BPR power at most 16.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``*_net.tntp`` file.

    Returns
    -------
    links : numpy.ndarray, shape (links, len(LINK_FIELDS))
    first_thru_node : int

    Raises
    ------
    ValidationError
        A :class:`TntpError` naming the file, the line and the field of the first problem.
    """
    path = Path(path)
    meta, body = _lines(path)
    rows = []
    for number, line in body:
        fields = line.rstrip(";").split()
        if len(fields) != len(LINK_FIELDS):
            raise TntpError(
                path,
                f"a link line needs {len(LINK_FIELDS)} fields ({' '.join(LINK_FIELDS)}) "
                f"ended by ';', got {len(fields)}",
                number,
            )
        rows.append(_link(path, number, fields))
    if not rows:
        raise TntpError(path, "no links")
    declared = _meta_int(path, meta, "NUMBER OF LINKS", 0, MAX_NODE_ID)
    if declared is not None and declared != len(rows):
        raise TntpError(
            path,
            f"<NUMBER OF LINKS> is {declared} but the file has {len(rows)} links",
            meta["NUMBER OF LINKS"][0],
        )
    first_thru = _meta_int(path, meta, "FIRST THRU NODE", 0, MAX_NODE_ID)
    return np.array(rows), 1 if first_thru is None else first_thru


def _link(path: Path, number: int, fields: list[str]) -> list[float]:
    """One link line's fields as floats, each checked: the error names the field."""
    ends = [
        float(_whole(path, number, name, text, 1, MAX_NODE_ID))
        for name, text in zip(LINK_FIELDS[:2], fields)
    ]
    values = []
    for name, text in zip(LINK_FIELDS[2:], fields[2:]):
        value = _number(text)
        if value is None:
            raise TntpError(path, f"{name}: link fields must be numbers", number)
        if not (math.isfinite(value) and abs(value) <= MAX_VALUE):
            raise TntpError(
                path, f"{name} must be a finite number of magnitude <= {MAX_VALUE:g}", number
            )
        values.append(value)
    capacity, length, free_flow_time, b, power, _, toll, _ = values
    if capacity <= 0:
        raise TntpError(path, "capacity must be > 0", number)
    for name, value in (
        ("length", length),
        ("free_flow_time", free_flow_time),
        ("b", b),
        ("power", power),
        ("toll", toll),
    ):
        if value < 0:
            raise TntpError(
                path, f"{name} must be >= 0 (length, free_flow_time, b, power and toll are)", number
            )
    if power > MAX_POWER:
        raise TntpError(path, f"power must be <= {MAX_POWER:g}", number)
    return ends + values


def read_trips(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OD demand: arrays of origins, destinations and demand (entries with demand 0 dropped).

    Parameters
    ----------
    path : str or pathlib.Path
        A ``*_trips.tntp`` file.

    Returns
    -------
    origins, destinations : numpy.ndarray of int
    demand : numpy.ndarray of float

    Raises
    ------
    ValidationError
        A :class:`TntpError` naming the file, the line and the field of the first problem (or a
        total that differs from the sum of the entries).
    """
    path = Path(path)
    meta, body = _lines(path)
    origins, dests, demand = [], [], []
    origin = None
    for number, line in body:
        if line.lower().startswith("origin"):
            parts = line.split()
            if len(parts) != 2:
                raise TntpError(path, "expected 'Origin <node>'", number)
            origin = _whole(path, number, "origin", parts[1], 1, MAX_NODE_ID)
            continue
        if origin is None:
            raise TntpError(path, "demand entries before any 'Origin' line", number)
        for k, entry in enumerate(filter(None, (e.strip() for e in line.split(";"))), start=1):
            match = _ENTRY.match(entry)
            if not match:
                raise TntpError(path, f"entry {k}: expected '<destination> : <demand>;'", number)
            dest = _whole(path, number, f"entry {k}: destination", match.group(1), 1, MAX_NODE_ID)
            value = _number(match.group(2))
            if value is None or not (math.isfinite(value) and 0 <= value <= MAX_VALUE):
                raise TntpError(
                    path, f"entry {k}: demand must be a finite number in [0, {MAX_VALUE:g}]", number
                )
            if value > 0:
                origins.append(origin)
                dests.append(dest)
                demand.append(value)
    _check_total(path, meta, demand)
    return (
        np.array(origins, dtype=np.int64),
        np.array(dests, dtype=np.int64),
        np.array(demand, dtype=float),
    )


def _check_total(path: Path, meta: dict, demand: list[float]) -> None:
    if "TOTAL OD FLOW" not in meta:
        return
    number, text = meta["TOTAL OD FLOW"]
    total = _number(text)
    if total is None or not (math.isfinite(total) and total >= 0):
        raise TntpError(path, "<TOTAL OD FLOW> must be a finite number >= 0", number)
    if not math.isclose(math.fsum(demand), total, rel_tol=1e-6, abs_tol=1e-6):
        raise TntpError(
            path,
            f"<TOTAL OD FLOW> differs from the sum of the entries ({math.fsum(demand):g})",
            number,
        )


@dataclass(frozen=True)
class TntpFiles:
    """Where a TNTP network lives: ``<folder>/<name>_net.tntp`` and ``<folder>/<name>_trips.tntp``.

    Examples
    --------
    >>> from pathlib import Path
    >>> from dpgames.games.tntp import TntpFiles
    >>> files = TntpFiles(Path("data/SiouxFalls"), "SiouxFalls")
    >>> files.net.as_posix(), files.trips.name
    ('data/SiouxFalls/SiouxFalls_net.tntp', 'SiouxFalls_trips.tntp')
    """

    folder: Path
    name: str

    @property
    def net(self) -> Path:
        """The link file."""
        return self.folder / f"{self.name}_net.tntp"

    @property
    def trips(self) -> Path:
        """The origin-destination (trip) file."""
        return self.folder / f"{self.name}_trips.tntp"


def load_tntp(
    folder: str | Path,
    name: str | None = None,
    *,
    toll_weight: float = 0.0,
    distance_weight: float = 0.0,
    demand_scale: float = 1.0,
) -> RoutingGame:
    """The routing game of a TNTP network (demand in trips, fractional as in the file, times
    ``demand_scale``; intra-zonal trips, origin = destination, are dropped).  ``name`` defaults to
    the folder's name (``.../SiouxFalls`` -> ``SiouxFalls``).  Both files are read as in
    :func:`read_net` and :func:`read_trips`: regular files only (a FIFO or a device is refused
    unopened), every field checked.

    Parameters
    ----------
    folder : str or pathlib.Path
        The folder holding ``<name>_net.tntp`` and ``<name>_trips.tntp``.
    name : str, optional
        The network's file prefix (default: the folder's name).
    toll_weight, distance_weight : float, default 0
        Weights (``>= 0``) of each link's toll and length added to its travel time (generalised
        cost).
    demand_scale : float, default 1
        Factor (``> 0``) on every origin-destination demand.

    Returns
    -------
    RoutingGame
        BPR link costs ``t0 (1 + B (x / c)^power)`` plus the weighted toll and length.

    Raises
    ------
    ValidationError
        A ``TntpError`` naming the file and line of the first malformed field, a missing file, no
        trips, or an origin or destination without links; a plain ValidationError for a bad weight
        or scale.
    """
    toll_weight = non_negative("toll_weight", toll_weight)
    distance_weight = non_negative("distance_weight", distance_weight)
    demand_scale = positive("demand_scale", demand_scale)
    if not isinstance(folder, (str, os.PathLike)):
        raise ValidationError(
            "folder", f"must be a path (a string or a Path), got {type(folder).__name__}"
        )
    folder = Path(folder)
    files = TntpFiles(folder, name or folder.name)
    links, first_thru = read_net(files.net)
    origins, dests, demand = read_trips(files.trips)
    routed = origins != dests  # intra-zonal trips never use the network: dropped
    origins, dests, demand = origins[routed], dests[routed], demand[routed]
    if demand.size == 0:
        raise TntpError(
            files.trips, "no trips: no entry with demand > 0 between two distinct nodes"
        )
    nodes = np.unique(np.concatenate([links[:, 0], links[:, 1]]).astype(np.int64))
    known = set(nodes.tolist())
    for label, ends in (("origin", origins), ("destination", dests)):
        unknown = sorted(set(ends.tolist()) - known)
        if unknown:
            raise TntpError(files.trips, f"{label} node {unknown[0]} has no link in {files.net}")
    fixed = toll_weight * links[:, 8] + distance_weight * links[:, 3]
    costs = PolynomialCosts.bpr(links[:, 4], links[:, 2], links[:, 5], links[:, 6], fixed)
    network = RoutingNetwork(
        nodes,
        links[:, 0].astype(np.int64),
        links[:, 1].astype(np.int64),
        costs,
        nodes[nodes < first_thru],
    )
    return RoutingGame(network, origins, dests, demand * demand_scale)
