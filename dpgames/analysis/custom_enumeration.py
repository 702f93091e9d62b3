"""Every profile of a :class:`~dpgames.mechanisms.custom.CustomMechanism`, streamed in chunks: the
exact dominant-strategy audit (``profiles="all"``) at any size that fits the time limit.

The work is cut into *chunks*: one audited agent and a range of the others' profiles (in the order
of :meth:`~dpgames.mechanisms.custom.CustomMechanism.profiles`, multisets within each role when
anonymous), each with every report of hers: the *lines* of :mod:`~dpgames.analysis.lines`.  A
chunk's answer is its best lie (gain, true type, lie, profile) with its place in the enumeration, so
that the chunks' answers merge into the first of the largest gains in enumeration order, whichever
ran them, in whatever order, and however they were cut: the verdict, ``worst_case`` and ``max_gain``
do not depend on ``chunk_size``, ``processes``, ``dask`` or a resumed ``checkpoint``.

* Each profile's law is computed once (kept by profile in one process, up to :data:`LAW_MEMORY`
  laws, then forgotten and recomputed as met again): a **batched** rule (``CustomMechanism(...,
  batched=True)``) once per chunk on the chunk's new profiles, an unbatched one once per new
  profile.
* ``processes=k`` spreads the chunks over ``k`` local processes and ``dask=`` over a Dask cluster
  (``"local"``, a LocalCluster of ``processes`` workers, or a scheduler's ``tcp://HOST:PORT``): the
  executors of the parameter sweeps (:mod:`dpgames._executors`).  Each worker process runs a
  contiguous stripe of the chunks (taking half of the longest stripe left when its own runs out) and
  keeps the laws it computed across them (:func:`worker_lines`): neighbouring chunks share most of
  their laws, so the workers together call the rule not much more often than one process does.
* ``checkpoint=path`` appends each chunk's answer to a JSON Lines file as it finishes; the same call
  with the same path skips the chunks already there (the file's header must match the audit:
  mechanism name, number of agents, type spaces, anonymity, lies and chunk size; the rule's code
  cannot be checked).
* Enumerations of more than :data:`~dpgames.analysis.limits.PROFILE_LIMIT` profile evaluations
  first time one chunk and are refused, with the count and the time estimate, when the estimate
  exceeds ``max_seconds``; more than :data:`ENUMERATION_LIMIT` evaluations are refused outright.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgames._executors import ExecutorError, run_striped, worker_executors
from dpgames.analysis.lies import Lies
from dpgames.analysis.limits import BLOCK, PROFILE_LIMIT, count_profiles
from dpgames.analysis.lines import Lines, line_gains
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.validation import ValidationError, integer, positive

#: Profiles per chunk by default (the rule's batch size and the unit of progress and checkpoints).
CHUNK = 131_072
#: Largest number of profile evaluations (profiles x audited agents' reports) an enumeration
#: accepts.
ENUMERATION_LIMIT = 10**10
#: Default ``max_seconds``: the longest estimated enumeration accepted.
TIME_LIMIT = 3600.0
#: Laws of an unbatched rule kept by an enumeration in one process (then forgotten and recomputed).
LAW_MEMORY = 500_000
#: The checkpoint file's format tag.
FORMAT = "dpgames-enumeration/1"
#: Chunks in flight per worker.
IN_FLIGHT = 2


@dataclass(frozen=True)
class Best:
    """A chunk's best lie and its place in the enumeration (the merge key after the gain)."""

    gain: float
    order: tuple[int, int, int, int, int]  # audited agent's rank, lies' rank, true type, line, lie
    agent: int
    true_type: int
    lie: int
    profile: tuple[int, ...]

    def better(self, other: Best | None) -> bool:
        """Whether this one is kept over ``other``: a larger gain, or an equal gain met first."""
        return (
            other is None
            or self.gain > other.gain
            or (self.gain == other.gain and self.order < other.order)
        )


@dataclass(frozen=True)
class Plan:
    """The chunks of one enumeration: per audited agent her lines' count and lies, then the chunk
    size."""

    n: int
    agents: tuple[int, ...]
    lines: tuple[int, ...]
    # per agent: (stand-in agent, lies mask) each
    masks: tuple[tuple[tuple[int, np.ndarray], ...], ...]
    chunk_lines: tuple[int, ...]
    token: str = ""  # tells one enumeration's chunks from another's in a worker process
    # the others' profiles one per orbit under relabelling the alternatives (neutral, every lie)
    orbits: bool = False

    def tasks(self) -> Iterator[tuple[int, int, int]]:
        """``(agent rank, start line, stop line)`` of every chunk, in enumeration order."""
        for rank, (count, step) in enumerate(zip(self.lines, self.chunk_lines)):
            for start in range(0, count, step):
                yield rank, start, min(count, start + step)

    def evaluations(self, mech: CustomMechanism) -> int:
        """Profile evaluations: lines x reports, over the audited agents."""
        return sum(count * mech.space(a).size for a, count in zip(self.agents, self.lines))


def plan(mech: CustomMechanism, n: int, tried: Lies, chunk_size: int) -> Plan:
    """The audited agents (one per role when anonymous), their lies and lines, cut in chunks of
    about ``chunk_size`` profiles (at most :data:`~dpgames.analysis.limits.BLOCK` gains each)."""
    roles = mech.roles_of(n)
    agents = (
        sorted({int(r): i for i, r in reversed(list(enumerate(roles.tolist())))}.values())
        if mech.anonymous
        else list(range(n))
    )
    # a relabelled line has the relabelled gains when every lie is tried (restricted lies need not
    # be closed under relabelling)
    orbits = mech.neutral and n > 1 and not tried.restricted
    lines, masks, steps = [], [], []
    for agent in agents:
        m = mech.space(agent).size
        lines.append(others_count(mech, n, agent, orbits))
        stand = [j for j in range(n) if roles[j] == roles[agent]] if mech.anonymous else [agent]
        kinds: dict[bytes, tuple[int, np.ndarray]] = {}
        for j in stand:  # the agents this line stands for, once per distinct set of lies
            local = tried.local(j)
            kinds.setdefault(local.tobytes(), (j, local))
        masks.append(tuple(kinds.values()))
        steps.append(max(1, min(chunk_size // m, BLOCK // (m * m))))
    return Plan(
        n, tuple(agents), tuple(lines), tuple(masks), tuple(steps), uuid.uuid4().hex, orbits
    )


def others_count(mech: CustomMechanism, n: int, agent: int, orbits: bool = False) -> int:
    """The profiles of the agents other than ``agent`` (multisets within each role when anonymous;
    with ``orbits``, one per orbit under relabelling the alternatives)."""
    if orbits:
        if mech.anonymous:
            return int(mech.orbit_others(n).shape[0])
        return mech.n_types ** (n - 2)  # the first of the others ranks as the first type
    if not mech.anonymous:
        return math.prod(mech.space(i).size for i in range(n) if i != agent)
    roles = mech.roles_of(n).tolist()
    counts = [roles.count(r) - (r == roles[agent]) for r in range(len(mech.role_names))]
    return math.prod(math.comb(c + mech._spaces[r].size - 1, c) for r, c in enumerate(counts) if c)


def others_block(
    mech: CustomMechanism, n: int, agent: int, start: int, stop: int, orbits: bool = False
) -> np.ndarray:
    """The others' profiles ``start`` to ``stop`` (type indices, shape ``(stop - start, n - 1)``),
    in the order of ``mech.profiles(n, skip=agent)``, decoded from their ranks (no Python work per
    profile): mixed-radix digits, or when anonymous one multiset rank per role
    (:func:`unrank_multisets`).  With ``orbits`` (a neutral mechanism, every lie tried:
    :func:`plan`), one profile per orbit under relabelling the alternatives: the multisets of
    :meth:`~dpgames.mechanisms.custom.CustomMechanism.orbit_others`, or the profiles whose first
    agent ranks as the first type (a relabelling moves every ranking, so each orbit holds exactly
    one)."""
    if orbits:
        if mech.anonymous:
            return mech.orbit_others(n)[start:stop]
        out = np.zeros((stop - start, n - 1), dtype=np.intp)
        if n > 2:
            rest = np.unravel_index(
                np.arange(start, stop, dtype=np.int64), [mech.n_types] * (n - 2)
            )
            out[:, 1:] = np.stack(rest, axis=1)
        return out
    keep = [i for i in range(n) if i != agent]
    if not keep:
        return np.zeros((stop - start, 0), dtype=np.intp)
    ranks = np.arange(start, stop, dtype=np.int64)
    if mech.anonymous:
        roles = mech.roles_of(n)[keep]
        groups = [
            (np.flatnonzero(roles == r), space)
            for r, space in enumerate(mech._spaces)
            if (roles == r).any()
        ]
        sizes = [math.comb(g.size + space.size - 1, g.size) for g, space in groups]
        out = np.empty((stop - start, len(keep)), dtype=np.intp)
        for (g, space), digit in zip(groups, np.unravel_index(ranks, sizes)):
            out[:, g] = space[unrank_multisets(digit, space.size, g.size)]
        return out
    digits = np.unravel_index(ranks, [mech.space(i).size for i in keep])
    return np.stack([mech.space(i)[d] for i, d in zip(keep, digits)], axis=1).astype(
        np.intp, copy=False
    )


def unrank_multisets(ranks: np.ndarray, m: int, k: int) -> np.ndarray:
    """The multisets of ``k`` values in ``range(m)`` of the given ranks in lexicographic order (the
    order of :func:`itertools.combinations_with_replacement`), one sorted row each, by the
    combinatorial number system: ``C(m - v + s - 2, s - 1)`` multisets of ``s`` values whose
    smallest is ``v`` follow those whose smallest is below ``v``.  One :func:`numpy.searchsorted`
    per position."""
    out = np.empty((ranks.size, k), dtype=np.intp)
    rank = np.asarray(ranks, dtype=np.int64)
    low = np.zeros(ranks.size, dtype=np.intp)
    for position in range(k):
        s = k - position  # values still to place, this one included
        # before[v]: the multisets of s values from range(m) whose smallest is below v
        before = np.zeros(m + 1, dtype=np.int64)
        before[1:] = np.cumsum([math.comb(m - v + s - 2, s - 1) for v in range(m)])
        target = rank + before[low]
        low = np.searchsorted(before, target, side="right") - 1
        rank = target - before[low]
        out[:, position] = low
    return out


def run_chunk(
    mech: CustomMechanism,
    chunks: Plan,
    rank: int,
    start: int,
    stop: int,
    lines: Lines | None = None,
) -> tuple[int, int, Best | None, int, float, int]:
    """One chunk: ``(agent rank, start, best lie or None, rule calls, utility scale, profiles)``,
    the laws taken from and added to ``lines`` (this process's, in a serial enumeration), else to
    the laws this worker process keeps for the enumeration (:func:`worker_lines`)."""
    if lines is None:
        lines = worker_lines(mech, chunks, rank)
        mech = lines.mech  # the copy whose outcomes the kept laws index
    agent, n = chunks.agents[rank], chunks.n
    space = mech.space(agent)
    m = space.size
    others = others_block(mech, n, agent, start, stop, chunks.orbits)
    profiles = np.empty((others.shape[0], m, n), dtype=np.intp)
    profiles[:, :, :agent] = others[:, None, :agent]
    profiles[:, :, agent] = space[None, :]
    profiles[:, :, agent + 1 :] = others[:, None, agent:]
    calls = mech.rule_calls
    A = lines.utilities(agent, lines.profile_ids(profiles))
    G = line_gains(A)
    best = None
    for k, (j, local) in enumerate(chunks.masks[rank]):
        full = bool((local | np.eye(m, dtype=bool)).all())
        Gj = G if full else np.where(local[:, None, :], G, -np.inf)
        t, line, x = (int(i) for i in np.unravel_index(int(np.argmax(Gj)), Gj.shape))
        at = profiles[line, t].tolist()
        at[agent], at[j] = at[j], at[agent]  # j in her place (same role: anonymous)
        found = Best(
            float(Gj[t, line, x]),
            (rank, k, t, start + line, x),
            j,
            int(space[t]),
            int(space[x]),
            tuple(at),
        )
        if found.better(best):
            best = found
    return rank, start, best, mech.rule_calls - calls, mech.scale, profiles.shape[0] * m


#: Per thread of a worker process, the laws of the enumeration it last ran a chunk of (``kept``:
#: ``[token, Lines, agent rank]``); per thread, so that a Dask worker's threads never share a store.
_KEPT = threading.local()


def worker_lines(mech: CustomMechanism, chunks: Plan, rank: int) -> Lines:
    """The laws this thread of a worker process keeps for the enumeration ``chunks`` (a new store
    for a new enumeration, or past :data:`LAW_MEMORY` laws), so that a worker computes each
    profile's law about once however many of its chunks meet it; the expected utilities of the last
    agent go when a chunk of another comes."""
    kept = getattr(_KEPT, "kept", None)
    if kept is None or kept[0] != chunks.token or len(kept[1]) > LAW_MEMORY:
        kept = _KEPT.kept = [chunks.token, Lines(mech), rank]
    elif kept[2] != rank:
        kept[1].forget_utilities()
        kept[2] = rank
    return kept[1]


def enumerate_all(
    mech: CustomMechanism,
    n: int,
    tried: Lies,
    *,
    chunk_size: int | None = None,
    processes: int = 1,
    dask: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    max_seconds: float = TIME_LIMIT,
) -> tuple[Best | None, int, int]:
    """Every chunk of the enumeration (module docstring): ``(the best lie or None, profiles, rule
    calls)``.

    Raises
    ------
    ValidationError
        On bad ``chunk_size``, ``processes``, ``dask``, ``checkpoint``, ``progress`` or
        ``max_seconds``, a checkpoint of another audit, a mechanism that cannot be sent to worker
        processes, more than :data:`ENUMERATION_LIMIT` evaluations or an estimated time above
        ``max_seconds``.
    """
    chunk_size = CHUNK if chunk_size is None else integer("chunk_size", chunk_size, low=1)
    processes = integer("processes", processes, low=1)
    max_seconds = positive("max_seconds", max_seconds)
    if progress is not None and not isinstance(progress, bool):
        raise ValidationError("progress", f"must be True, False or None, got {progress!r}")
    if dask is not None and not isinstance(dask, str):
        raise ValidationError(
            "dask", f"must be 'local' or a scheduler address tcp://HOST:PORT, got {dask!r}"
        )
    chunks = plan(mech, n, tried, chunk_size)
    evaluations = chunks.evaluations(mech)
    what = "multisets" if mech.anonymous else "profiles"
    if evaluations > ENUMERATION_LIMIT:
        raise ValidationError(
            "profiles",
            f"is refused: 'all' with n={n} evaluates {evaluations:,} {what} (every "
            f"line of every audited agent), above the limit {ENUMERATION_LIMIT:,}; use "
            "profiles=K (K random profiles) or profiles='search'",
        )
    if processes > 1 and dask is None:
        try:
            pickle.dumps(mech)
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the processes cannot get it
            raise ValidationError(
                "processes",
                f"> 1 needs a mechanism that pickles (rule, utility and payments "
                f"defined at module level, not lambdas or closures): "
                f"{type(exc).__name__}: {exc}",
            ) from None
    with _Checkpoint.open(checkpoint, _header(mech, chunks)) as saved:
        best: Best | None = None
        for _, _, found, _, scale, _ in saved.done.values():
            mech.scale = max(mech.scale, scale)
            if found is not None and found.better(best):
                best = found
        todo = [task for task in chunks.tasks() if task[:2] not in saved.done]
        left = sum(
            (stop - start) * mech.space(chunks.agents[rank]).size for rank, start, stop in todo
        )
        calls = 0
        lines = Lines(mech)
        with _bar(progress, evaluations, left > PROFILE_LIMIT) as bar:
            bar.update(evaluations - left)
            if todo and left > PROFILE_LIMIT:
                # time the first chunk, refuse if the whole would take too long
                started, cpu = time.perf_counter(), time.process_time()
                first = run_chunk(mech, chunks, *todo[0], lines=lines)
                took = max(time.perf_counter() - started, time.process_time() - cpu)
                size = (todo[0][2] - todo[0][1]) * mech.space(chunks.agents[todo[0][0]]).size
                estimate = took / size * left / (processes if dask is None else max(processes, 1))
                if estimate > max_seconds:
                    raise ValidationError(
                        "profiles",
                        f"is refused: 'all' with n={n} evaluates {evaluations:,} "
                        f"{what}, about {estimate:,.0f} s here (timed on {size:,}), "
                        f"above max_seconds={max_seconds:g}; use a batched rule, "
                        "processes=, dask=, a larger max_seconds, profiles=K or "
                        "profiles='search'",
                    )
                best, calls = _record(saved, first, best, calls, mech, bar)
                todo = todo[1:]
            for result in run_tasks(mech, chunks, todo, processes, dask, lines):
                best, calls = _record(saved, result, best, calls, mech, bar)
    return best, count_profiles(mech, n), calls


def run_tasks(
    mech: CustomMechanism,
    chunks: Plan,
    tasks: list[tuple[int, int, int]],
    processes: int = 1,
    dask: str | None = None,
    lines: Lines | None = None,
) -> Iterator[tuple]:
    """The answers of the chunks ``tasks`` (``(agent rank, start, stop)`` of ``chunks.tasks()``, in
    enumeration order), as each finishes (:func:`run_chunk`).

    In this process (``processes=1``, no ``dask``) the laws are kept in ``lines`` (a new store if
    ``None``, renewed past :data:`LAW_MEMORY` laws).  Otherwise each worker process (``processes``
    local ones, or every worker of the Dask cluster ``dask``) runs a contiguous stripe of the tasks
    (:func:`~dpgames._executors.run_striped`) and keeps its own laws across them
    (:func:`worker_lines`): neighbouring chunks share most of their laws, so each worker computes
    about its share of them.

    Raises
    ------
    ValidationError
        If the cluster cannot be reached or a worker died (``field`` ``"dask"`` or ``"processes"``).
    """
    if dask is None and processes == 1:
        lines = Lines(mech) if lines is None else lines
        for task in tasks:
            if len(lines) > LAW_MEMORY:
                lines = Lines(mech)
            elif task[1] == 0:
                # a new agent's first chunk: the last one's utilities are done with
                lines.forget_utilities()
            yield run_chunk(mech, chunks, *task, lines=lines)
        return
    if not tasks:
        return
    try:
        with worker_executors(processes, dask, _preload(mech)) as executors:
            work = [(mech, chunks, *task) for task in tasks]
            yield from run_striped(executors, run_chunk, work, IN_FLIGHT)
    except (
        ExecutorError
    ) as exc:  # an unreachable cluster, a worker that died: every finished chunk is saved
        raise ValidationError("dask" if dask is not None else "processes", f": {exc}") from None


def _preload(mech: CustomMechanism) -> tuple[str, ...]:
    """What local worker processes import once, in their fork server, rather than each on its start:
    the dpgames modules this process has imported (a worker imports the main script again, and with
    it whatever it imports) and the modules of the user's functions."""
    functions = (mech.rule, mech.utility, mech.payments)
    return tuple(
        sorted(
            {name for name in sys.modules if name == "dpgames" or name.startswith("dpgames.")}
            | {
                module
                for module in (getattr(f, "__module__", None) for f in functions)
                if isinstance(module, str) and module != "__main__" and module in sys.modules
            }
        )
    )


def _record(
    saved: _Checkpoint,
    result: tuple,
    best: Best | None,
    calls: int,
    mech: CustomMechanism,
    bar: Any,
) -> tuple[Best | None, int]:
    """Merge one chunk's answer, save it, advance the bar."""
    rank, start, found, used, scale, size = result
    saved.append(result)
    mech.scale = max(mech.scale, scale)
    bar.update(size)
    return (found if found is not None and found.better(best) else best), calls + used


def _header(mech: CustomMechanism, chunks: Plan) -> dict:
    """What a checkpoint must match to be resumed by this enumeration."""
    spaces = (
        [mech.type_space(a).__repr__() for a in range(chunks.n)]
        if mech.n_agents
        else [repr(mech.types)]
    )
    lies = [(j, local.tolist()) for agent in chunks.masks for j, local in agent]
    digest = hashlib.sha256(repr((spaces, lies)).encode()).hexdigest()
    return {
        "format": FORMAT,
        "mechanism": mech.name,
        "n": chunks.n,
        "anonymous": mech.anonymous,
        "orbits": chunks.orbits,
        "batched": mech.batched,
        "chunk_lines": list(chunks.chunk_lines),
        "types_and_lies": digest,
    }


class _Checkpoint:
    """Chunks' answers on a JSON Lines file (a header, then one line per chunk), or nowhere."""

    def __init__(self, path: Path | None, done: dict):
        self.path = path
        self.done = done
        self.file: Any = None

    @classmethod
    @contextmanager
    def open(cls, path: str | os.PathLike | None, header: dict) -> Iterator[_Checkpoint]:
        if path is None:
            yield cls(None, {})
            return
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise ValidationError("checkpoint", f"must be a file path, got {path!r}")
        path = Path(path)
        done = _read(path, header) if path.exists() else {}
        try:
            handle = path.open("a", encoding="utf-8")
            if done or path.stat().st_size:
                handle.truncate(_complete_bytes(path))  # a line cut by an interruption goes
        except OSError as exc:
            raise ValidationError(
                "checkpoint", f"cannot be written: {path} ({exc.strerror or exc})"
            ) from None
        saved = cls(path, done)
        saved.file = handle
        with handle:
            if not done and path.stat().st_size == 0:
                handle.write(json.dumps(header) + "\n")
                handle.flush()
            yield saved

    def append(self, result: tuple) -> None:
        rank, start, found, calls, scale, _ = result
        self.done[(rank, start)] = result
        if self.file is None:
            return
        row = (
            None
            if found is None
            else [
                found.gain,
                list(found.order),
                found.agent,
                found.true_type,
                found.lie,
                list(found.profile),
            ]
        )
        self.file.write(
            json.dumps({"rank": rank, "start": start, "best": row, "scale": scale}) + "\n"
        )
        self.file.flush()


def _complete_bytes(path: Path) -> int:
    """The length of ``path`` up to its last newline."""
    data = path.read_bytes()
    return data.rfind(b"\n") + 1


def _read(path: Path, header: dict) -> dict:
    """The chunks saved in ``path`` (a last line cut by an interruption is ignored)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError("checkpoint", f"cannot be read: {path} ({exc})") from None
    lines = text.split("\n")
    complete, cut = lines[:-1], lines[-1]  # text after the last newline: an interrupted write
    if not complete and not cut:
        return {}
    try:
        found = json.loads(complete[0]) if complete else None
    except json.JSONDecodeError:
        found = None
    if found != header:
        raise ValidationError(
            "checkpoint",
            f"{path} holds another audit (or is not a checkpoint): expected the "
            f"header {json.dumps(header)}; give a new path to start afresh",
        )
    done: dict = {}
    for number, line in enumerate(complete[1:], start=2):
        try:
            row = json.loads(line)
            b = row["best"]
            order = (
                (int(b[1][0]), int(b[1][1]), int(b[1][2]), int(b[1][3]), int(b[1][4]))
                if b
                else None
            )
            best = (
                None
                if b is None or order is None
                else Best(
                    float(b[0]), order, int(b[2]), int(b[3]), int(b[4]), tuple(int(v) for v in b[5])
                )
            )
            done[(int(row["rank"]), int(row["start"]))] = (
                row["rank"],
                row["start"],
                best,
                0,
                float(row["scale"]),
                0,
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
            raise ValidationError(
                "checkpoint", f"{path} line {number} is not a chunk's answer"
            ) from None
    return done


def _bar(enabled: bool | None, total: int, long: bool) -> Any:
    from tqdm import tqdm

    disable = (None if long else True) if enabled is None else not enabled
    return tqdm(
        total=total,
        unit="profile",
        unit_scale=True,
        file=sys.stderr,
        disable=disable,
        dynamic_ncols=True,
        desc="dominant-strategy audit",
    )
