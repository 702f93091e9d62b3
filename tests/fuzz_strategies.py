"""Shared pieces of the fuzz suite (tests/test_fuzz_cli.py, tests/test_fuzz_api.py).

* ``fuzz_settings(n)``: hypothesis settings.  Default: ``n`` examples, derandomized (CI is
  deterministic).  ``DPGAMES_FUZZ=long``: ``n * DPGAMES_FUZZ_FACTOR`` (default 60) random examples,
  for local runs.  ``DPGAMES_FUZZ_LOG=FILE``: record every failing case in FILE (JSON Lines) and
  carry on instead of failing the test, to find many distinct failures in one long run.
* ``run_isolated(fn)``: runs ``fn()`` in a forked child with an address-space cap and a time limit,
  so a hang, a MemoryError or a segmentation fault is one failed case, not a dead test run.
* Value strategies: extreme and mistyped values, a TOML writer that can express all of them (deep
  nesting, datetimes, 400-digit integers, nan/inf), scenario-tree mutations.
* Oracles: ``check_cli`` (exit 0 with finite figures passing the Result invariants, or exit 2 with
  one clean ``dpgames: error:`` line) and ``check_value`` (a returned object's numbers are finite).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import math
import os
import pickle
import re
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from numbers import Real
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, settings, strategies as st

# --------------------------------------------------------------------------------------------------
# Profiles

LONG = os.environ.get("DPGAMES_FUZZ", "") == "long"
FACTOR = int(os.environ.get("DPGAMES_FUZZ_FACTOR", "60"))
FAILURE_LOG = os.environ.get("DPGAMES_FUZZ_LOG")
CASE_SECONDS = 20.0


# No shrinking: a hang would be re-run for 20 s per shrink step; cases are small enough to read as
# found.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


def fuzz_settings(n: int) -> settings:
    """``n`` derandomized examples by default; many random ones with DPGAMES_FUZZ=long."""
    checks = [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ]
    if LONG:
        return settings(
            max_examples=n * FACTOR,
            deadline=None,
            derandomize=False,
            suppress_health_check=checks,
            print_blob=True,
            phases=NO_SHRINK,
        )
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        suppress_health_check=checks,
        database=None,
        phases=NO_SHRINK,
    )


def report(case: str, problem: str | None) -> None:
    """Fail the test with ``problem`` (or, with DPGAMES_FUZZ_LOG, record it and carry on)."""
    if FAILURE_LOG:
        with open(FAILURE_LOG + ".cases", "a") as fh:  # one character per case run: the case count
            fh.write("." if problem is None else "F")
    if problem is None:
        return
    if FAILURE_LOG:
        with open(FAILURE_LOG, "a") as fh:
            fh.write(json.dumps({"case": case, "problem": problem}) + "\n")
        return
    raise AssertionError(f"{problem}\n--- case ---\n{case}")


# --------------------------------------------------------------------------------------------------
# Running a case in a forked child


@dataclass
class Outcome:
    status: str  # "returned", "raised", "exit", "timeout", "crashed"
    value: Any = (
        None  # fn's return value, the exception (type name, message, traceback) or exit code
    )
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0


def _memory_cap() -> int:
    with open("/proc/self/status") as fh:
        vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    return vm + 2 * 1024**3  # what the process has already mapped + 2 GiB


def run_isolated(
    fn: Callable[[], Any], timeout: float = CASE_SECONDS, env: dict[str, str] | None = None
) -> Outcome:
    """``fn()`` in a forked child (stdout/stderr captured, <= 2 GiB more address space,
    ``timeout``)."""
    cap = _memory_cap()
    read_end, write_end = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            os.setpgid(0, 0)  # its own process group: a timeout kills any workers it started too
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            if env:
                os.environ.update(env)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            out, err = io.StringIO(), io.StringIO()
            sys.stdout, sys.stderr = out, err
            try:
                payload: tuple = ("returned", fn())
            except SystemExit as exc:
                payload = ("exit", exc.code)
            except BaseException as exc:  # noqa: BLE001 - any exception is data for the oracle
                payload = (
                    "raised",
                    (
                        type(exc).__name__,
                        str(exc)[:3000],
                        traceback.format_exc()[-6000:],
                        [c.__name__ for c in type(exc).__mro__],
                    ),
                )
            try:
                blob = pickle.dumps(
                    (payload, out.getvalue()[-50_000_000:], err.getvalue()[-1_000_000:])
                )
            except Exception as exc:  # noqa: BLE001
                blob = pickle.dumps((("raised", ("PicklingError", str(exc), "", [])), "", ""))
            view = memoryview(blob)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:  # noqa: BLE001 - could not even report (out of memory): say so by the exit code
            os._exit(3)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, deadline = [], start + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                _kill(pid)
                return Outcome("timeout", seconds=time.monotonic() - start)
            ready, _, _ = select.select([read_end], [], [], left)
            if ready:
                chunk = os.read(read_end, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    _kill_group(pid)
    seconds = time.monotonic() - start
    if not chunks:
        if os.WIFSIGNALED(status):
            why = f"killed by signal {os.WTERMSIG(status)}"
        else:
            why = "could not report its outcome (out of memory?)"
        return Outcome("crashed", value=f"the case's process {why}", seconds=seconds)
    (kind, value), out, err = pickle.loads(b"".join(chunks))
    return Outcome(kind, value, out, err, seconds)


def _kill(pid: int) -> None:
    _kill_group(pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------------
# Values

EXTREME_NUMBERS = [
    0,
    -1,
    1,
    2,
    0.0,
    -0.0,
    1.0,
    0.5,
    5e-324,
    1e-308,
    2.2e-16,
    1e-12,
    1e-10,
    1e-6,
    1e6,
    1e12,
    1e15,
    1e300,
    1e308,
    1.7976931348623157e308,
    -1e308,
    2**31,
    2**53 + 1,
    2**63,
    2**64,
    10**9,
    10**12,
    10**30,
    10**400,
    -(10**400),
    math.nan,
    math.inf,
    -math.inf,
]
WILD_SCALARS = [
    "",
    "auto",
    "x",
    "balanced",
    "nan",
    "inf",
    "1e400",
    "0",
    "../../../../etc/passwd",
    "/dev/zero",
    True,
    False,
    dt.datetime(1979, 5, 27, 7, 32),
    dt.date(2026, 1, 1),
    dt.time(7, 32),
]


def log_uniform(low_exp: int = -12, high_exp: int = 12) -> st.SearchStrategy[float]:
    """Positive floats spread evenly over decades 10^low_exp .. 10^high_exp."""
    return st.tuples(st.integers(low_exp, high_exp), st.floats(1.0, 9.99)).map(
        lambda t: t[1] * 10.0 ** t[0]
    )


numbers = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
    st.integers(-(2**70), 2**70),
    log_uniform(),
    log_uniform().map(lambda x: -x),
)
scalars = st.one_of(numbers, st.sampled_from(WILD_SCALARS), st.text(max_size=12))


def wild_values(depth: int = 2) -> st.SearchStrategy:
    """Anything a TOML file can hold (plus deep nesting): the replacement values of a mutation."""
    if depth <= 0:
        return scalars
    inner = wild_values(depth - 1)
    return st.one_of(
        scalars,
        scalars,
        scalars,
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "x", "n", "epsilon", "kind"]), inner, max_size=3),
        st.builds(DeepNest, st.sampled_from([50, 500, 5000, 100000]), st.booleans()),
    )


@dataclass(frozen=True)
class DeepNest:
    """A value nested ``depth`` levels deep (arrays or inline tables), written literally into
    TOML."""

    depth: int
    tables: bool


def same_kind_extreme(value: Any) -> st.SearchStrategy:
    """A 'valid but extreme' replacement: the same type, scaled over many decades."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.one_of(
            st.sampled_from([0, 1, 2, 3, 10**6, 10**9, 10**12, 2**31, 2**63]), st.integers(0, 10**5)
        )
    if isinstance(value, float):
        return st.one_of(log_uniform(), st.sampled_from([0.0, 5e-324, 1e-300, 1e300, 1.0]))
    return st.nothing()


# --------------------------------------------------------------------------------------------------
# TOML writing (inline form: every table as an inline table, so any value fits on one line)


def toml_key(key: str) -> str:
    return json.dumps(str(key))


def toml_value(v: Any) -> str:
    if isinstance(v, DeepNest):
        return (
            ("{a=" * v.depth + "1" + "}" * v.depth)
            if v.tables
            else ("[" * v.depth + "1" + "]" * v.depth)
        )
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = repr(v)
        return text if any(c in text for c in ".e") else text + ".0"
    if isinstance(v, str):
        # JSON strings are TOML basic strings
        return json.dumps(v.encode("utf-8", "replace").decode("utf-8"))
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(e)}" for k, e in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} as TOML")


def toml_dumps(data: dict[str, Any]) -> str:
    return "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in data.items())


# --------------------------------------------------------------------------------------------------
# Mutating a parsed scenario (a tree of dicts and lists)


def leaf_paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``tree`` (dict keys and list indices), parents before children."""
    paths = [prefix] if prefix else []
    if isinstance(tree, dict):
        for k, v in tree.items():
            paths += leaf_paths(v, prefix + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            paths += leaf_paths(v, prefix + (i,))
    return paths


def get_path(tree: Any, path: tuple) -> Any:
    for p in path:
        tree = tree[p]
    return tree


def mutate(data, tree: dict[str, Any], max_mutations: int = 3) -> list[str]:
    """Apply 1..max_mutations random mutations to ``tree`` in place; return a description of
    each."""
    done = []
    for _ in range(data.draw(st.integers(1, max_mutations), label="mutations")):
        paths = leaf_paths(tree)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        parent, leaf = get_path(tree, path[:-1]), path[-1]
        old = parent[leaf]
        op = data.draw(
            st.sampled_from(
                ["replace", "replace", "extreme", "extreme", "delete", "extra", "wrap"]
            ),
            label="op",
        )
        if op == "extreme" and isinstance(old, (int, float)):
            parent[leaf] = data.draw(same_kind_extreme(old), label="extreme")
        elif op == "delete" and isinstance(parent, dict):
            del parent[leaf]
        elif op == "extra" and isinstance(old, dict):
            old[data.draw(st.sampled_from(["extra", "n", "epsilon", "seed", "path", "kind"]))] = (
                data.draw(wild_values(1), label="extra")
            )
        elif op == "wrap":
            parent[leaf] = [old]
        else:
            op = "replace"
            parent[leaf] = data.draw(wild_values(), label="value")
        done.append(
            f"{op} {'.'.join(map(str, path))}: {old!r:.60} -> "
            f"{'(deleted)' if op == 'delete' else repr(parent.get(leaf) if isinstance(parent, dict) else parent[leaf])[:80]}"
        )
    return done


# --------------------------------------------------------------------------------------------------
# Oracles

INTERNAL_WORDS = [
    "Traceback",
    "zero-size array",
    "Out of range float values",
    "KeyError",
    "TypeError",
    "IndexError",
    "AttributeError",
    "OverflowError",
    "ZeroDivisionError",
    "RecursionError",
    "MemoryError",
    "UnboundLocalError",
    "NameError",
    "AssertionError",
    "object of type",
    "unhashable",
    "not subscriptable",
    "not iterable",
    "has no attribute",
    "takes no arguments",
    "positional argument",
    "unexpected keyword",
    "not supported between",
    "math domain error",
    "math range error",
    "invalid literal for int",
    "could not convert",
    "_csv.Error",
    "ufunc",
    "Python int too large",
    "cannot convert float",
    "field larger than field limit",
    "is not JSON serializable",
    "setting an array element",
    "inhomogeneous",
    "broadcast",
    "integer is required",
    "must be real number",
    "string indices must be",
]
_INTERNAL = re.compile("|".join(re.escape(w) for w in INTERNAL_WORDS))
_ARGPARSE = re.compile(r"^dpgames(?: \w+)?: error: ")


def clean_error(text: str) -> str | None:
    """None if ``text`` is an acceptable user-facing error message, else what is wrong with it."""
    bad = [w for w in INTERNAL_WORDS if w in text]
    return f"internal wording {bad} in the error message" if bad else None


def check_exit(outcome: Outcome) -> str | None:
    """The exit oracle shared by every CLI case; None when the outcome is acceptable."""
    if outcome.status == "timeout":
        return f"HANG: no answer within {CASE_SECONDS:g} s"
    if outcome.status == "crashed":
        return f"CRASH: {outcome.value}"
    if outcome.status == "raised":
        name, message, tb, _ = outcome.value
        return f"UNCAUGHT {name}: {message[:300]}\n{tb[-1500:]}"
    code = outcome.value
    if outcome.status == "exit":
        code = 0 if code is None else code
    if code == 0:
        return None
    if code != 2:
        return f"EXIT {code}: stderr {outcome.stderr[-1500:]!r}"
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if lines and lines[0].startswith("usage:"):
        # argparse's own usage error: usage lines + one error line
        last = lines[-1]
        if not _ARGPARSE.match(last):
            return f"EXIT 2 without an error line: {outcome.stderr[-800:]!r}"
        return clean_error(last)
    if len(lines) != 1 or not lines[0].startswith("dpgames: error: "):
        return f"EXIT 2 but stderr is not one 'dpgames: error:' line: {outcome.stderr[-1500:]!r}"
    if len(lines[0]) > 2000:
        return f"EXIT 2 with an error line of {len(lines[0])} characters"
    return clean_error(lines[0])


def true_infinity(x: Any) -> bool:
    """A documented inf: a guarantee with no pure-DP epsilon (Gaussian noise) but a finite zCDP rho;
    the guarantee of a release without noise (eps = rho = inf, delta = 0: not private); an envy-free
    budget benchmark buying sellers of cost 0 (any eps is affordable: ``envy_free_budget`` reports
    eps = inf)."""
    name = type(x).__name__
    if (
        name == "PrivacyGuarantee"
        and getattr(x, "epsilon", 0) == math.inf
        and getattr(x, "delta", 1) == 0
    ):
        rho = getattr(x, "rho", None)
        return isinstance(rho, Real) and (math.isfinite(rho) or rho == math.inf)
    if name == "EnvyFreeBenchmark":
        return (
            getattr(x, "price", None) == 0
            and getattr(x, "epsilon", 0) == math.inf
            and all(math.isfinite(getattr(x, f)) for f in ("payment", "radius", "price"))
        )
    return False


def non_finite(x: Any, where: str = "", depth: int = 0) -> str | None:
    """Where ``x`` holds a NaN/inf float (or the strings 'nan'/'inf' JSON output uses), else
    None."""
    if depth > 6 or true_infinity(x):
        return None
    if isinstance(x, str):
        return (
            where if x.strip().lower() in {"nan", "inf", "-inf", "infinity", "-infinity"} else None
        )
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (float, np.floating, complex)):
        return None if np.isfinite(x) else where
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc" and not np.isfinite(x).all():
            return where
        if x.dtype.kind == "O":
            for i, e in enumerate(x.ravel()[:1000]):
                bad = non_finite(e, f"{where}[{i}]", depth + 1)
                if bad:
                    return bad
        return None
    if isinstance(x, dict):
        for k, v in list(x.items())[:1000]:
            bad = non_finite(v, f"{where}.{k}", depth + 1)
            if bad:
                return bad
        return None
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x[:1000]):
            bad = non_finite(v, f"{where}[{i}]", depth + 1)
            if bad:
                return bad
        return None
    if is_dataclass(x) and not isinstance(x, type):
        for f in fields(x):
            bad = non_finite(getattr(x, f.name, None), f"{where}.{f.name}", depth + 1)
            if bad:
                return bad
    return None


def _num(metrics: dict, key: str) -> float | None:
    v = metrics.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


PROBABILITY_METRICS = {
    "q_theorem_dwork_roth",
    "q_theorem_exact",
    "q_exact",
    "q_exact_all_types",
    "revenue_over_opt",
}


def documented_infinities(kind: str | None, metrics: dict[str, Any]) -> set[str]:
    """The metrics whose ``inf`` the kind declares as the true answer under these figures
    (:func:`dpgames.scenarios.invariants.may_be_infinite`: by name, with its condition; never
    NaN)."""
    if not isinstance(kind, str):
        return set()
    from dpgames.scenarios import registry

    return {
        name
        for name, value in metrics.items()
        if any(
            rule.allows(name, str(value), metrics)
            for rule in registry.load(kind).INVARIANTS.infinite_ok
        )
    }


def result_invariants(metrics: dict[str, Any], kind: str | None = None) -> str | None:
    """Invariants every printed Result must satisfy (theorems, not the code's own numbers); the only
    infinities allowed are those ``kind`` documents."""
    allowed = documented_infinities(kind, metrics)
    bad = non_finite({k: v for k, v in metrics.items() if k not in allowed}, "metrics")
    if bad:
        return f"WRONG FIGURE: non-finite {bad} = {get_path_dotted(metrics, bad)!r}"
    tol = 1e-6
    for key in ("truthful", "truthful_all_types", "individually_rational", "gains_within_bounds"):
        if metrics.get(key) is False:
            return f"WRONG FIGURE: {key} is false (a theorem guarantees it)"
    loss, bound = _num(metrics, "max_privacy_loss"), _num(metrics, "privacy_loss_bound")
    if loss is not None and loss < -tol:
        return f"WRONG FIGURE: max_privacy_loss = {loss} < 0"
    if loss is not None and bound is not None and loss > bound * (1 + tol) + tol:
        return f"WRONG FIGURE: max_privacy_loss = {loss} > privacy_loss_bound = {bound}"
    gain, gbound = _num(metrics, "max_misreport_gain"), _num(metrics, "bound_2eps")
    if gain is not None and gbound is not None and gain > gbound * (1 + tol) + tol:
        return f"WRONG FIGURE: max_misreport_gain = {gain} > 2 eps bound {gbound}"
    rev, opt = _num(metrics, "expected_revenue"), _num(metrics, "opt")
    if rev is not None and opt is not None and (rev < -tol or rev > opt * (1 + tol) + tol):
        return f"WRONG FIGURE: expected_revenue = {rev} outside [0, OPT = {opt}]"
    for key in metrics:
        x = _num(metrics, key)
        if x is None:
            continue
        if (key.startswith("prob") or key in PROBABILITY_METRICS) and not -tol <= x <= 1 + tol:
            return f"WRONG FIGURE: {key} = {x} is not a probability"
        if key.endswith("total_cost") and x < -tol:
            return f"WRONG FIGURE: {key} = {x} < 0"
    mu = _num(metrics, "min_utility")
    if mu is not None and metrics.get("individually_rational") is not None and mu < -1e-6:
        return f"WRONG FIGURE: min_utility = {mu} < 0 under an individually rational mechanism"
    return None


def get_path_dotted(tree: Any, where: str) -> Any:
    node = tree
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", where):
        key, index = part
        try:
            node = node[int(index)] if index else node[key]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def check_json_output(stdout: str) -> str | None:
    """Exit 0 with ``--json``: the Result parses, every number is finite, the invariants hold."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError as exc:
        return f"--json output is not JSON ({exc})"
    for literal in ("NaN", "Infinity"):
        if re.search(rf"(?<![\w\"]){literal}", stdout):
            return f"WRONG FIGURE: {literal} in the --json output"
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        return "--json output has no metrics table"
    return result_invariants(data["metrics"], data.get("kind")) or (
        f"WRONG FIGURE: non-finite {non_finite(data.get('tables'), 'tables')}"
        if non_finite(data.get("tables"), "tables")
        else None
    )


_TEXT_NONFINITE = re.compile(r"(?<![\w.])-?(nan|inf|infinity)(?![\w])", re.IGNORECASE)


def text_infinities_documented(text: str, json_text: str) -> str | None:
    """A text Result may print ``inf`` only where the same run's JSON has a documented infinity:
    every non-finite line's label must be the label of a metric ``check_json_output`` allowed (it
    already did)."""
    data = json.loads(json_text)
    labels = {
        str(label).strip()
        for name, label in data.get("labels", {}).items()
        if str(data["metrics"].get(name)) in ("inf", "Infinity")
    }
    for line in text.splitlines()[2:]:
        label, _, value = line.rpartition("  ")
        if _TEXT_NONFINITE.search(value) and label.strip() not in labels:
            return f"WRONG FIGURE: printed {line.strip()!r}, not a documented infinity"
    return None


def check_text_output(stdout: str) -> str | None:
    """Exit 0 without ``--json``: no nan/inf among the printed figures (the title line is the
    user's)."""
    for line in stdout.splitlines()[2:]:
        value = line.rsplit("  ", 1)[-1]
        if _TEXT_NONFINITE.search(value):
            return f"WRONG FIGURE: printed {line.strip()!r}"
    return None
