"""Reading road networks in TNTP format (Bar-Gera's Transportation Networks for Research).

``<name>_net.tntp``: metadata lines ``<KEY> value`` up to ``<END OF METADATA>``, then one link a line:
``init_node term_node capacity length free_flow_time B power speed toll link_type ;``.
``<name>_trips.tntp``: metadata, then ``Origin o`` lines each followed by ``dest : demand;`` entries.
``~`` starts a comment; blank lines are skipped.  Link cost: BPR ``t0 (1 + B (x / capacity)^power)``,
plus an optional generalized-cost constant ``toll_weight * toll + distance_weight * length`` (Chicago
Sketch's README: 0.02 min/cent and 0.04 min/mile).  Nodes numbered below ``<FIRST THRU NODE>`` are
zones no path may pass through.  Any malformed line is a :class:`TntpError` naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgames.games.costs import PolynomialCosts
from dpgames.games.network import RoutingGame, RoutingNetwork

LINK_FIELDS = ("init_node", "term_node", "capacity", "length", "free_flow_time", "b", "power", "speed", "toll",
               "link_type")
_META = re.compile(r"^<([^>]+)>\s*(.*)$")
_ENTRY = re.compile(r"^\s*(\d+)\s*:\s*([^;:\s]+)\s*$")


class TntpError(ValueError):
    """A malformed TNTP file: the message names the file and the line."""


def _lines(path: Path):
    """(line number, text) of the data lines after the metadata; also the metadata dict."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise TntpError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TntpError(f"{path}: cannot read ({exc})") from None
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


def _meta_int(path: Path, meta: dict, key: str) -> int | None:
    if key not in meta:
        return None
    number, value = meta[key]
    try:
        return int(float(value))
    except ValueError:
        raise TntpError(f"{path}:{number}: <{key}> must be a number, got {value!r}") from None


def read_net(path: str | Path) -> tuple[np.ndarray, int]:
    """The link table (``len(LINK_FIELDS)`` columns, float) and the first thru node (1 if absent)."""
    path = Path(path)
    meta, body = _lines(path)
    rows = []
    for number, line in body:
        fields = line.rstrip(";").split()
        if len(fields) != len(LINK_FIELDS):
            raise TntpError(f"{path}:{number}: a link line needs {len(LINK_FIELDS)} fields "
                            f"({' '.join(LINK_FIELDS)}) ended by ';', got {len(fields)}: {line!r}")
        try:
            values = [float(f) for f in fields]
        except ValueError:
            raise TntpError(f"{path}:{number}: link fields must be numbers, got {line!r}") from None
        bad = _bad_link_field(values)
        if bad:
            raise TntpError(f"{path}:{number}: {bad}: {line!r}")
        rows.append(values)
    if not rows:
        raise TntpError(f"{path}: no links")
    declared = _meta_int(path, meta, "NUMBER OF LINKS")
    if declared is not None and declared != len(rows):
        raise TntpError(f"{path}:{meta['NUMBER OF LINKS'][0]}: <NUMBER OF LINKS> is {declared} but the file "
                        f"has {len(rows)} links")
    first_thru = _meta_int(path, meta, "FIRST THRU NODE")
    return np.array(rows), 1 if first_thru is None else first_thru


def _bad_link_field(v: list[float]) -> str | None:
    if not all(np.isfinite(v)):
        return "fields must be finite"
    if v[0] != int(v[0]) or v[1] != int(v[1]) or v[0] < 1 or v[1] < 1:
        return "init_node and term_node must be whole numbers >= 1"
    if v[2] <= 0:
        return "capacity must be > 0"
    if min(v[3], v[4], v[5], v[6], v[8]) < 0:
        return "length, free_flow_time, b, power and toll must be >= 0"
    return None


def read_trips(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OD demand: arrays of origins, destinations and demand (entries with demand 0 dropped)."""
    path = Path(path)
    meta, body = _lines(path)
    origins, dests, demand = [], [], []
    origin = None
    for number, line in body:
        if line.lower().startswith("origin"):
            parts = line.split()
            if len(parts) != 2 or not parts[1].isdigit():
                raise TntpError(f"{path}:{number}: expected 'Origin <node>', got {line!r}")
            origin = int(parts[1])
            continue
        if origin is None:
            raise TntpError(f"{path}:{number}: demand entries before any 'Origin' line: {line!r}")
        for entry in filter(None, (e.strip() for e in line.split(";"))):
            match = _ENTRY.match(entry)
            value = _number(match.group(2)) if match else None
            if value is None or not (np.isfinite(value) and value >= 0):
                raise TntpError(f"{path}:{number}: expected entries '<destination> : <demand >= 0>;', "
                                f"got {entry!r}")
            if value > 0:
                origins.append(origin)
                dests.append(int(match.group(1)))
                demand.append(value)
    total = meta.get("TOTAL OD FLOW")
    if total is not None and _number(total[1]) is not None and not np.isclose(sum(demand), _number(total[1]),
                                                                               rtol=1e-6, atol=1e-6):
        raise TntpError(f"{path}:{total[0]}: <TOTAL OD FLOW> is {total[1]} but the entries add up to {sum(demand):g}")
    return np.array(origins, dtype=np.int64), np.array(dests, dtype=np.int64), np.array(demand)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class TntpFiles:
    """Where a TNTP network lives: ``<folder>/<name>_net.tntp`` and ``<folder>/<name>_trips.tntp``."""

    folder: Path
    name: str

    @property
    def net(self) -> Path:
        return self.folder / f"{self.name}_net.tntp"

    @property
    def trips(self) -> Path:
        return self.folder / f"{self.name}_trips.tntp"


def load_tntp(folder: str | Path, name: str | None = None, *, toll_weight: float = 0.0,
              distance_weight: float = 0.0, demand_scale: float = 1.0) -> RoutingGame:
    """The routing game of a TNTP network (demand in trips, fractional as in the file, times
    ``demand_scale``; intra-zonal trips, origin = destination, are dropped).  ``name`` defaults to the folder's name (``.../SiouxFalls`` -> ``SiouxFalls``)."""
    folder = Path(folder)
    files = TntpFiles(folder, name or folder.name)
    links, first_thru = read_net(files.net)
    origins, dests, demand = read_trips(files.trips)
    routed = origins != dests  # intra-zonal trips never use the network: dropped
    origins, dests, demand = origins[routed], dests[routed], demand[routed]
    nodes = np.unique(np.concatenate([links[:, 0], links[:, 1]]).astype(np.int64))
    known = set(nodes.tolist())
    for label, ends in (("origin", origins), ("destination", dests)):
        unknown = sorted(set(ends.tolist()) - known)
        if unknown:
            raise TntpError(f"{files.trips}: {label} node {unknown[0]} has no link in {files.net}")
    fixed = toll_weight * links[:, 8] + distance_weight * links[:, 3]
    costs = PolynomialCosts.bpr(links[:, 4], links[:, 2], links[:, 5], links[:, 6], fixed)
    network = RoutingNetwork(nodes, links[:, 0].astype(np.int64), links[:, 1].astype(np.int64), costs,
                             nodes[nodes < first_thru])
    return RoutingGame(network, origins, dests, demand * demand_scale)
