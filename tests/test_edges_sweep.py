"""Sweeps at the edges: malformed results files, resume after failed cells, grid values that cannot
be swept, grids too large to run, and faults (a killed parent, a full disk, the results file deleted
or replaced while the sweep runs)."""

import errno
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios import ScenarioError
from dpgames.scenarios.budget import Budget
from dpgames.sweep import (
    SweepError,
    format_summary,
    load_results,
    plan_sweep,
    results as results_module,
    results_from_bytes,
    run_sweep,
    summarize,
)
from dpgames.sweep.executors import json_value
from dpgames.sweep.results import ResultsWriter, read_raw

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sweep_epsilon.toml"
QUICK = ["epsilon=0.5,1", "n=20", "rsop_samples=40"]
HEADER = {
    "format": "dpgames-sweep/1",
    "scenario": "x.toml",
    "scenario_sha256": "0" * 64,
    "kind": "digital_goods",
    "title": "t",
    "root_seed": 7,
    "parameters": {"mechanism.epsilon": [0.5, 1]},
    "seeds": 2,
    "summary": None,
    "versions": {},
}
GOOD = {
    "params": {"mechanism.epsilon": 0.5},
    "seed": 0,
    "status": "ok",
    "metrics": {"revenue": 1.5},
}


def _file(tmp_path, *records, name="r.jsonl", tail=b""):
    path = tmp_path / name
    lines = [json.dumps(HEADER)] + [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    return path


# --- malformed results files
# ---------------------------------------------------------------------------

MALFORMED = {
    "no params": ({"seed": 0, "status": "ok", "metrics": {}}, "no 'params'"),
    "no seed": ({"params": {}, "status": "ok", "metrics": {}}, "no 'seed'"),
    "no status": ({"params": {}, "seed": 0}, "no 'status'"),
    "a string record": ('"hello"', "must be a JSON object"),
    "params as a list": (
        {"params": [1, 2], "seed": 0, "status": "ok", "metrics": {}},
        "'params' must be",
    ),
    "a string seed": ({"params": {}, "seed": "0", "status": "ok", "metrics": {}}, "'seed' must be"),
    "a negative seed": (
        {"params": {}, "seed": -1, "status": "ok", "metrics": {}},
        "'seed' must be",
    ),
    "an unknown status": ({"params": {}, "seed": 0, "status": "maybe"}, "'status' must be"),
    "an error without its text": (
        {"params": {}, "seed": 0, "status": "error"},
        "needs an 'error' text",
    ),
    "ok without metrics": ({"params": {}, "seed": 0, "status": "ok"}, "needs a 'metrics' object"),
    "non-JSON junk": ("not json {", "not a JSON record"),
    "a NaN seed": (
        '{"params": {}, "seed": NaN, "status": "ok", "metrics": {}}',
        "not a JSON record",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_record_is_one_line_naming_the_file_and_line(tmp_path, case):
    record, what = MALFORMED[case]
    path = _file(tmp_path, GOOD, record)
    with pytest.raises(SweepError) as info:
        load_results(path)
    message = str(info.value)
    assert str(path) in message and "line 3" in message and what in message and "\n" not in message


def test_plot_and_resume_report_a_malformed_file_in_one_line(tmp_path, capsys):
    path = _file(tmp_path, GOOD, {"params": [1], "seed": 0, "status": "ok", "metrics": {}})
    assert main(["plot", str(path), "--x", "epsilon", "--y", "revenue"]) == 2
    assert (
        main(
            [
                "sweep",
                str(SCENARIO),
                *sum((["--set", s] for s in QUICK), []),
                "--out",
                str(path),
                "--resume",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("line 3" in line and str(path) in line for line in err)


def test_a_malformed_header_is_refused(tmp_path):
    path = tmp_path / "h.jsonl"
    for header in (
        {**HEADER, "parameters": [1]},
        {**HEADER, "root_seed": "7"},
        {**HEADER, "summary": 3},
    ):
        path.write_text(json.dumps(header) + "\n")
        with pytest.raises(SweepError, match="line 1"):
            load_results(path)


def test_a_torn_last_line_is_left_out_and_plot_says_so(tmp_path, capsys):
    path = _file(tmp_path, GOOD, tail=b'{"params": {"mechanism.eps')
    results = load_results(path)
    assert results.torn and len(results.rows) == 1
    pytest.importorskip("matplotlib")
    assert (
        main(
            [
                "plot",
                str(path),
                "--x",
                "epsilon",
                "--y",
                "revenue",
                "--out",
                str(tmp_path / "p.png"),
            ]
        )
        == 0
    )
    assert "incomplete" in capsys.readouterr().err
    assert main(["plot", str(path), "--x", "nope", "--y", "revenue"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1  # a failure is one line, no note


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.just(10**400)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
records = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"params": json_values, "seed": json_values, "status": json_values},
        optional={"metrics": json_values, "error": json_values},
    ),
    st.fixed_dictionaries(
        {
            "params": st.dictionaries(
                st.sampled_from(["mechanism.epsilon", "n"]), json_values, max_size=2
            ),
            "seed": st.integers(0, 3),
            "status": st.sampled_from(["ok", "error"]),
        },
        optional={
            "metrics": st.dictionaries(st.sampled_from(["revenue", "gain"]), json_values),
            "error": st.text(max_size=5),
        },
    ),
)


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.lists(records, max_size=5), st.binary(max_size=8))
def test_any_results_file_loads_as_a_table_or_fails_cleanly(rows, tail):
    """Oracle: a SweepError, or a table whose rows are well-formed records and whose summary
    works."""
    data = ("\n".join(json.dumps(x) for x in [HEADER, *rows]) + "\n").encode() + tail.replace(
        b"\n", b""
    )
    try:
        results = results_from_bytes(data, "fuzz.jsonl")
    except SweepError as exc:
        assert str(exc).startswith("fuzz.jsonl") and "\n" not in str(exc)
        return
    for row in results.rows:
        assert (
            isinstance(row["params"], dict)
            and isinstance(row["seed"], int)
            and row["status"] in ("ok", "error")
        )
    assert len(results.columns()["seed"]) == len(results.rows)
    format_summary(summarize(results))


# --- resume after failed cells
# -------------------------------------------------------------------------


@pytest.mark.slow
def test_resume_retries_the_failed_cells_and_the_new_record_wins(tmp_path):
    """Cells refused by a tiny budget are recorded as failed; a resume with the default budget runs
    exactly those again, and the table then holds their successful records."""
    path = tmp_path / "r.jsonl"
    plan = plan_sweep(SCENARIO, QUICK, seeds=2)
    first = run_sweep(plan, path, workers=1, progress=False, budget=Budget(max_work=1.0))
    assert len(first.results.failures) == 4 and first.retried == 0
    again = run_sweep(plan, path, workers=1, progress=False, resume=True)
    assert (again.ran, again.skipped, again.retried) == (4, 0, 4)
    assert not again.results.failures and len(again.results.rows) == 4
    assert len(read_raw(path).records) == 8  # the failed records stay in the file, superseded
    done = run_sweep(plan, path, workers=1, progress=False, resume=True)
    assert (done.ran, done.skipped, done.retried) == (0, 4, 0)


@pytest.mark.slow
def test_resume_on_the_command_line_says_it_retries(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    args = [
        "sweep",
        str(SCENARIO),
        *sum((["--set", s] for s in QUICK), []),
        "--seeds",
        "1",
        "--out",
        str(path),
        "--workers",
        "1",
        "--no-progress",
    ]
    assert main([*args, "--max-work", "1"]) == 2  # every cell failed: exit 2, one line
    assert "every cell failed" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert "retried 2 cells that had failed" in capsys.readouterr().err


# --- grid values
# -------------------------------------------------------------------------------------


def _scenario_file(tmp_path, sweep_lines):
    text = SCENARIO.read_text().rsplit("\n[sweep]", 1)[0] + "\n[sweep]\n" + sweep_lines + "\n"
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "line, what",
    [
        ("epsilon = [1979-05-27T07:32:00Z]", "date or time"),
        ("epsilon = [07:32:00]", "date or time"),
        ("epsilon = [0.5, inf]", "not a finite number"),
        ("epsilon = [nan]", "not a finite number"),
        ("epsilon = [[1.0, inf]]", "not a finite number"),
    ],
)
def test_values_a_results_file_cannot_hold_are_refused(tmp_path, line, what):
    with pytest.raises(ScenarioError, match=what):
        plan_sweep(_scenario_file(tmp_path, line))


@pytest.mark.parametrize(
    "text, count",
    [
        ("range:0:1e308:1e-308", "more than 1e300"),
        ("range:0:1e308:1e300", "100,000,001"),
        (f"range:0:{10**400}:1", "more than 1e300"),
        ("linspace:0:1:1000000000", "1,000,000,000"),
    ],
)
def test_ranges_with_absurd_counts_are_refused_with_the_count(text, count):
    with pytest.raises(ScenarioError, match="more than the limit") as info:
        plan_sweep(SCENARIO, [f"epsilon={text}"])
    assert count in str(info.value)


def test_a_range_beyond_the_float_range_is_refused():
    with pytest.raises(ScenarioError, match="floating-point range"):
        plan_sweep(SCENARIO, ["epsilon=linspace:-1e308:1e308:5"])


def test_too_many_cells_are_refused_up_front_with_the_count_and_the_option():
    with pytest.raises(SweepError) as info:
        plan_sweep(SCENARIO, seeds=10**9)
    message = str(info.value)
    assert "14,000,000,000 cells" in message and "--max-cells" in message
    assert len(plan_sweep(SCENARIO, seeds=10**9, max_cells=2 * 10**10).grid) == 14 * 10**9


def test_a_non_finite_metric_is_recorded_as_text_not_a_json_error():
    assert json_value(float("nan")) == "nan" and json_value(float("-inf")) == "-inf"
    import numpy as np

    assert json_value(np.float64(2.5)) == 2.5 and json_value([np.int64(3), math.inf]) == [3, "inf"]
    assert json.loads(json.dumps(json_value({"a": (1.0, float("inf"))}), allow_nan=False)) == {
        "a": [1.0, "inf"]
    }


# --- faults: a full disk, the file deleted or replaced
# ---------------------------------------------------


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_leaves_no_torn_line(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    plan = plan_sweep(SCENARIO, QUICK, seeds=2)
    real_write, calls = os.write, []

    def full_after_three(fd, data):
        calls.append(len(data))
        if len(calls) == 4:  # header + 2 cells, then half a line fits
            return real_write(fd, data[: len(data) // 2])
        if len(calls) > 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(results_module, "_os_write", full_after_three)
    with pytest.raises(SweepError) as info:
        run_sweep(plan, path, workers=1, progress=False)
    message = str(info.value)
    assert "\n" not in message and "short write" in message and "--resume" in message
    raw = read_raw(path)
    assert not raw.torn and len(raw.records) == 2
    monkeypatch.setattr(results_module, "_os_write", real_write)
    done = run_sweep(plan, path, workers=1, progress=False, resume=True)
    assert (done.ran, done.skipped) == (2, 2) and not read_raw(path).torn


def test_enospc_is_reported_with_its_reason(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, HEADER, resume=False) as writer:
        writer.append(GOOD)
        monkeypatch.setattr(
            results_module,
            "_os_write",
            lambda fd, data: (_ for _ in ()).throw(
                OSError(errno.ENOSPC, "No space left on device")
            ),
        )
        with pytest.raises(SweepError, match="No space left on device"):
            writer.append({**GOOD, "seed": 1})
    assert len(read_raw(path).records) == 1


def test_a_results_file_deleted_mid_run_is_written_again_and_said(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, HEADER, resume=False) as writer:
        writer.append(GOOD)
        path.unlink()
        writer.append({**GOOD, "seed": 1})
        assert writer.recreated == 1
    assert "was deleted while the sweep ran" in capsys.readouterr().err
    assert [r["seed"] for r in read_raw(path).records] == [0, 1]


def test_a_results_file_replaced_mid_run_stops_and_keeps_the_records(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, HEADER, resume=False) as writer:
        writer.append(GOOD)
        path.unlink()
        path.write_text("someone else's file\n")
        with pytest.raises(SweepError, match="replaced by another file") as info:
            writer.append({**GOOD, "seed": 1})
    saved = Path(str(info.value).rsplit(" ", 1)[-1])
    assert [r["seed"] for r in read_raw(saved).records] == [0]
    assert path.read_text() == "someone else's file\n"


def test_a_results_file_changed_by_another_program_stops_the_sweep(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, HEADER, resume=False) as writer:
        writer.append(GOOD)
        with open(path, "a") as other:
            other.write("junk\n")
        with pytest.raises(SweepError, match="changed by another program"):
            writer.append({**GOOD, "seed": 1})


@pytest.mark.slow
def test_the_file_deleted_during_a_real_sweep_loses_nothing(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    plan = plan_sweep(SCENARIO, QUICK, seeds=2)
    real_write, calls = os.write, []

    def delete_before_third(fd, data):
        calls.append(1)
        if len(calls) == 3 and path.exists():
            path.unlink()
        return real_write(fd, data)

    monkeypatch.setattr(results_module, "_os_write", delete_before_third)
    # the deletion happens between the check and the write: the next append notices and recovers
    run_sweep(plan, path, workers=1, progress=False)
    assert len(load_results(path).rows) == 4


# --- faults: the parent killed
# ---------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_killing_the_sweep_leaves_no_worker_alive(tmp_path):
    """kill -9 of the main process runs no clean-up: the workers must notice and exit by
    themselves."""
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dpgames.cli",
            "sweep",
            str(SCENARIO),
            "--set",
            "n=400",
            "--seeds",
            "50",
            "--workers",
            "2",
            "--no-progress",
            "--out",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not out.exists() or out.read_bytes().count(b"\n") < 3
        ):
            time.sleep(0.1)
        workers = _descendants(proc.pid)
        assert len(workers) >= 3, "the pool did not start"  # fork server, 2 workers (and a tracker)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.1)
    left = [p for p in workers if _alive(p)]
    for p in left:  # do not leave them behind if the test fails
        os.kill(p, signal.SIGKILL)
    assert not left, f"{len(left)} worker processes outlived the killed sweep"


def test_odd_but_valid_records_summarise_and_plot(tmp_path):
    """Values a hand-edited file may hold (a 400-digit metric, text metrics, a table as a parameter
    value) load, summarise (as missing values) and plot without an error."""
    pytest.importorskip("matplotlib")
    from dpgames.sweep import plot_results

    path = _file(
        tmp_path,
        {**GOOD, "metrics": {"revenue": 10**400}},
        {**GOOD, "seed": 1, "metrics": {"revenue": "inf"}},
        {
            "params": {"mechanism.epsilon": {"a": [1, "x"]}},
            "seed": 0,
            "status": "ok",
            "metrics": {"revenue": 2.0},
        },
    )
    results = load_results(path)
    table = summarize(results, ["revenue"])  # no finite value in the first cell: no row for it
    assert table["seeds"] == [1] and table["mean"] == [2.0]
    assert plot_results(results, "epsilon", ["revenue"], tmp_path / "p.png").stat().st_size > 0


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full", "/dev/zero", "fifo"])
@pytest.mark.parametrize("resume", [False, True])
def test_a_device_or_fifo_as_the_results_file_is_refused_at_once(tmp_path, device, resume):
    if device == "fifo":
        device = str(tmp_path / "fifo")
        os.mkfifo(device)
    elif not Path(device).exists():
        pytest.skip(f"no {device}")
    plan = plan_sweep(SCENARIO, QUICK, seeds=1)
    with pytest.raises(SweepError, match="not a regular file|results file"):
        run_sweep(plan, device, workers=1, progress=False, resume=resume)
    assert Path(device).exists()


set_texts = st.one_of(
    st.text(alphabet="0123456789.,:-+eEinfa ", max_size=24),
    st.builds(
        lambda form, a, b, c: f"{form}:{a}:{b}:{c}",
        st.sampled_from(["range", "linspace", "geomspace"]),
        st.one_of(st.integers(-(10**30), 10**30), st.floats()),
        st.one_of(st.integers(), st.floats()),
        st.one_of(st.integers(-5, 10**12), st.floats()),
    ),
)


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(set_texts, st.integers(1, 10**12))
def test_any_set_value_plans_a_json_header_or_fails_cleanly(text, seeds):
    """Oracle: a clean error, or a plan of at most --max-cells cells whose header (every value
    of the grid) is strict JSON."""
    from dpgames.sweep.grid import MAX_RANGE_VALUES

    try:
        plan = plan_sweep(SCENARIO, [f"epsilon={text}"], seeds=seeds)
    except (ScenarioError, SweepError) as exc:
        assert "\n" not in str(exc)
    else:
        assert plan.grid.count <= 100_000
        assert all(len(v) <= MAX_RANGE_VALUES for v in plan.grid.parameters.values())
        json.dumps(plan.header(7), allow_nan=False)


@pytest.mark.slow
def test_a_cell_with_a_nan_metric_is_saved_and_summarised(tmp_path, monkeypatch):
    """A metric that is not finite (here injected into every cell's Result) is recorded as text: the
    file stays strict JSON and the summary, counting no finite value for it, has no row for it."""
    import numpy as np

    from dpgames.scenarios import Scenario

    real_run = Scenario.run

    def run_with_nan(self, *args, **kwargs):
        result = real_run(self, *args, **kwargs)
        result.metrics.update(undefined=float("nan"), unbounded=np.float64(np.inf))
        return result

    monkeypatch.setattr(Scenario, "run", run_with_nan)
    path = tmp_path / "z.jsonl"
    # in this process
    run = run_sweep(plan_sweep(SCENARIO, QUICK, seeds=2), path, workers=1, progress=False)
    assert all(r["status"] == "ok" for r in run.results.rows)
    assert {(r["metrics"]["undefined"], r["metrics"]["unbounded"]) for r in run.results.rows} == {
        ("nan", "inf")
    }
    for line in path.read_text().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the file"))
    table = summarize(run.results, ["undefined"])
    assert table["metric"] == [] and table["seeds"] == []
