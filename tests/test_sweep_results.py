"""The results file: one fsync'd JSON line per cell, torn final lines, resume, and a real
SIGKILL."""

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dpgames
from dpgames.cli import main
from dpgames.sweep import SweepError, load_results, plan_sweep, results_from_bytes, run_sweep
from dpgames.sweep.grid import cell_key
from dpgames.sweep.results import ResultsWriter, read_raw

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sweep_epsilon.toml"
# A small grid of quick cells: 3 epsilons x 2 sizes x 3 seeds.
SMALL = ["epsilon=0.2,0.5,1", "n=30,50", "rsop_samples=40"]


def _plan(seeds=3, seed=None, sets=SMALL):
    return plan_sweep(SCENARIO, sets, seeds, seed)


def _cells(path):
    """The raw cell records of a results file, as the set of their canonical JSON texts."""
    raw = read_raw(path)
    texts = [json.dumps(r, sort_keys=True) for r in raw.records]
    assert len(texts) == len(set(texts)), "a cell was recorded twice"
    return set(texts)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted serial run of the small grid."""
    path = tmp_path_factory.mktemp("ref") / "ref.jsonl"
    run_sweep(_plan(), path, workers=1, progress=False)
    return path


def test_file_layout_header_then_one_line_per_cell(reference):
    lines = reference.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 1 + 18 + 1
    header = json.loads(lines[0])
    assert (
        header["format"] == "dpgames-sweep/1" and header["root_seed"] == 7 and header["seeds"] == 3
    )
    assert header["parameters"] == {
        "mechanism.epsilon": [0.2, 0.5, 1],
        "population.n": [30, 50],
        "baselines.rsop_samples": [40],
    }
    assert header["versions"]["dpgames"] == dpgames.__version__
    records = [json.loads(line) for line in lines[1:-1]]
    assert {r["status"] for r in records} == {"ok"}
    keys = {cell_key(r["params"], r["seed"]) for r in records}
    assert len(keys) == 18


@pytest.mark.slow
def test_resume_after_a_cut_at_any_byte_gives_the_uninterrupted_table(reference, tmp_path):
    """A kill can stop a write anywhere: simulate cuts at the line boundaries and at random bytes
    inside lines (the header's too); resuming must give exactly the uninterrupted records."""
    data = reference.read_bytes()
    newlines = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    rng = random.Random(2026)
    cuts = {0, newlines[0] - 5, newlines[0], newlines[3] - 1, newlines[-2] + 7, len(data) - 1}
    cuts |= {rng.randrange(len(data)) for _ in range(6)}
    expected = _cells(reference)
    for cut in sorted(cuts):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_bytes(data[:cut])
        complete = sum(1 for n in newlines if n <= cut)
        run = run_sweep(_plan(), path, workers=1, resume=True, progress=False)
        assert run.skipped == max(complete - 1, 0), cut
        assert _cells(path) == expected, cut
        assert load_results(path).rows == load_results(reference).rows


def test_readers_ignore_a_torn_final_line(reference, tmp_path):
    data = reference.read_bytes()
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data[:-40])
    results = load_results(path)
    assert results.torn and len(results.rows) == 17
    uploaded = results_from_bytes(data[:-40], "upload.jsonl")
    assert uploaded.rows == results.rows and uploaded.path == "upload.jsonl"
    with pytest.raises(SweepError, match="upload.jsonl: empty results file"):
        results_from_bytes(data[:30], "upload.jsonl")


def test_a_corrupt_complete_line_is_an_error_not_skipped(reference, tmp_path):
    lines = reference.read_bytes().split(b"\n")
    lines[4] = lines[4][:20]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SweepError, match=r"bad.jsonl: line 5 is not a JSON record"):
        load_results(path)
    path.write_text('{"a": 1}\n')
    with pytest.raises(SweepError, match="not a dpgames sweep results file"):
        load_results(path)


def test_existing_file_needs_resume_and_a_compatible_sweep(reference, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(reference.read_bytes())
    with pytest.raises(SweepError, match=r"r.jsonl exists: pass --resume"):
        run_sweep(_plan(), path, workers=1, progress=False)
    with pytest.raises(SweepError, match=r"cannot resume: it was made with root seed 7, not 8"):
        run_sweep(_plan(seed=8), path, workers=1, resume=True, progress=False)
    with pytest.raises(SweepError, match=r"cannot resume: it sweeps parameters"):
        run_sweep(_plan(sets=SMALL[:2]), path, workers=1, resume=True, progress=False)
    changed = tmp_path / "changed.toml"
    changed.write_text(SCENARIO.read_text().replace("high = 1.0", "high = 0.9"))
    with pytest.raises(SweepError, match=r"cannot resume: it was made from a different scenario"):
        run_sweep(plan_sweep(changed, SMALL, 3), path, workers=1, resume=True, progress=False)


def test_resume_can_add_seeds_and_values_and_keeps_the_root_seed(reference, tmp_path):
    path = tmp_path / "grow.jsonl"
    path.write_bytes(reference.read_bytes())
    grown = plan_sweep(SCENARIO, ["epsilon=0.2,0.5,1,2", *SMALL[1:]], 4)
    run = run_sweep(grown, path, workers=1, resume=True, progress=False)
    assert (run.ran, run.skipped) == (4 * 2 * 4 - 18, 18)
    fresh = tmp_path / "fresh.jsonl"
    run_sweep(grown, fresh, workers=1, progress=False)
    assert _cells(path) == _cells(fresh)


def test_two_writers_cannot_share_a_file(tmp_path):
    path = tmp_path / "locked.jsonl"
    header = _plan().header(7)
    with (
        ResultsWriter(path, header, resume=False),
        pytest.raises(SweepError, match="another sweep is writing this file"),
    ):
        ResultsWriter(path, header, resume=True)


def _count_records(path: Path) -> int:
    try:
        return max(path.read_bytes().count(b"\n") - 1, 0)
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_at_a_random_moment_then_resume_equals_an_uninterrupted_run(tmp_path, workers):
    """A real SIGKILL of `dpgames sweep` mid-sweep, then --resume: the same cells, none twice or
    missing."""
    sets = ["epsilon=0.1,0.2,0.5,1", "n=100,300", "rsop_samples=200"]
    args = [
        "sweep",
        str(SCENARIO),
        *[a for s in sets for a in ("--set", s)],
        "--seeds",
        "5",
        "--no-progress",
    ]
    total = 4 * 2 * 5
    path = tmp_path / "killed.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(dpgames.__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpgames.cli", *args, "--out", str(path), "--workers", str(workers)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    rng = random.Random()
    after, delay = rng.randrange(1, total - 8), rng.uniform(0.0, 0.02)  # a random moment mid-sweep
    try:
        deadline = time.monotonic() + 60
        while _count_records(path) < after and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            # worker processes it had started, in its own session
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    done_before = _count_records(path)
    assert 0 < done_before < total, (
        f"the kill ({delay:.3f} s after record {after}) did not land mid-sweep"
    )

    assert main([*args, "--out", str(path), "--workers", "1", "--resume"]) == 0
    reference = tmp_path / "reference.jsonl"
    assert main([*args, "--out", str(reference), "--workers", "1"]) == 0
    assert _cells(path) == _cells(reference)
    assert len(_cells(path)) == total
    assert load_results(path).rows == load_results(reference).rows
