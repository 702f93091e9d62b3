"""Executors: in process, local processes and a real Dask LocalCluster give bitwise identical
records."""

import socket
import sys
import types
from pathlib import Path

import distributed
import numpy as np
import pytest

from dpgames.cli import main
from dpgames.scenarios import MetricSet, Result, Scenario
from dpgames.scenarios.invariants import Invariants
from dpgames.sweep import Grid, SweepError, SweepPlan, load_results, plan_sweep, run_sweep
from dpgames.sweep.results import read_raw
from fake_distributions import install_fake_distribution

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sweep_epsilon.toml"
SETS = ["epsilon=0.25,1", "n=30,60", "rsop_samples=40"]
SEEDS = 3


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _record_lines(path: Path) -> list[bytes]:
    """The cell lines of a results file, byte for byte, in a canonical order."""
    return sorted(path.read_bytes().split(b"\n")[1:-1])


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    path = tmp_path_factory.mktemp("serial") / "serial.jsonl"
    run_sweep(plan_sweep(SCENARIO, SETS, SEEDS), path, workers=1, progress=False)
    return path


def test_records_are_the_runs_of_the_spawned_seeds(serial):
    """Oracle: each cell run directly with child j of SeedSequence(root), as numpy's spawn makes
    it."""
    base = Scenario.from_file(SCENARIO)
    children = np.random.SeedSequence(7).spawn(SEEDS)
    records = read_raw(serial).records
    assert len(records) == 2 * 2 * SEEDS
    for record in records:
        expected = base.with_overrides(record["params"]).run(children[record["seed"]])
        assert record["status"] == "ok" and record["metrics"] == expected.metrics


def test_common_random_numbers_same_seed_same_population_across_epsilon(serial):
    rows = load_results(serial).rows
    opt = {
        (r["params"]["mechanism.epsilon"], r["params"]["population.n"], r["seed"]): r["metrics"][
            "opt"
        ]
        for r in rows
    }
    for n in (30, 60):
        for j in range(SEEDS):
            assert opt[(0.25, n, j)] == opt[(1, n, j)]  # OPT depends on the bids only
        assert len({opt[(1, n, j)] for j in range(SEEDS)}) == SEEDS  # seeds differ


@pytest.mark.slow
def test_local_processes_equal_serial_bitwise(serial, tmp_path):
    path = tmp_path / "processes.jsonl"
    run = run_sweep(plan_sweep(SCENARIO, SETS, SEEDS), path, workers=2, progress=False)
    assert run.ran == 12
    assert _record_lines(path) == _record_lines(serial)


@pytest.mark.slow
def test_dask_local_cluster_equals_serial_bitwise(serial, tmp_path):
    """A real LocalCluster (2 single-threaded worker processes on 127.0.0.1), reached by its address
    as an existing cluster would be, and started by --dask local."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        by_address = tmp_path / "address.jsonl"
        run_sweep(
            plan_sweep(SCENARIO, SETS, SEEDS),
            by_address,
            dask=cluster.scheduler_address,
            progress=False,
        )
    assert _record_lines(by_address) == _record_lines(serial)
    local = tmp_path / "local.jsonl"
    assert (
        main(
            [
                "sweep",
                str(SCENARIO),
                *[a for s in SETS for a in ("--set", s)],
                "--seeds",
                str(SEEDS),
                "--dask",
                "local",
                "--workers",
                "2",
                "--out",
                str(local),
                "--no-progress",
            ]
        )
        == 0
    )
    assert _record_lines(local) == _record_lines(serial)


@pytest.mark.parametrize(
    "address,message",
    [
        (
            f"tcp://127.0.0.1:{_closed_port()}",
            "--dask {address}: cannot reach a Dask scheduler there",
        ),
        (
            "nonsense",
            "--dask: expected a scheduler address like tcp://HOST:PORT, or 'local' (got "
            "'nonsense')",
        ),
    ],
)
def test_unreachable_or_malformed_dask_address_is_one_clear_line(
    tmp_path, capsys, address, message
):
    out = tmp_path / "r.jsonl"
    code = main(
        [
            "sweep",
            str(SCENARIO),
            "--set",
            "n=30",
            "--seeds",
            "1",
            "--dask",
            address,
            "--dask-timeout",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(
        "dpgames: error: " + message.format(address=address)
    )
    assert not out.exists()  # no results file left behind: the same command can simply be rerun


def test_a_failing_cell_is_recorded_and_the_sweep_goes_on(tmp_path):
    """plan_sweep now refuses epsilon = -1 up front; a plan built directly (as a value invalid only
    in some combinations would be) still runs, its failing cells recorded."""
    path = tmp_path / "fail.jsonl"
    grid = Grid(
        {"mechanism.epsilon": [-1, 0.5], "population.n": [30], "baselines.rsop_samples": [40]}, 2
    )
    run = run_sweep(
        SweepPlan(Scenario.from_file(SCENARIO), grid, 7, None), path, workers=1, progress=False
    )
    failed, ok = run.results.failures, list(run.results.ok_rows())
    assert len(failed) == 2 and len(ok) == 2
    assert {r["params"]["mechanism.epsilon"] for r in failed} == {-1}
    assert all(
        "field 'mechanism.epsilon': must be a number > 0 (got -1)" in r["error"] for r in failed
    )
    assert str(SCENARIO) in failed[0]["error"]


def _toy_kind_module() -> types.ModuleType:
    """A scenario kind the sweep has never heard of, implementing the kind contract
    (:mod:`dpgames.scenarios.kind`): the mean of ``flips`` coin flips with bias ``p``."""
    module = types.ModuleType("_sweep_toy_kind")
    metrics = MetricSet()
    mean = metrics.add("mean", "share of heads", "probability")

    def parse(top):
        coin = top.table("coin", required=True)
        spec = (coin.number("p", low=0, high=1), coin.integer("flips", low=1))
        coin.done()
        return spec

    def build(spec, seed):
        return spec, seed

    def run(built):
        (p, flips), seed = built
        if p == 1:
            raise RuntimeError("a coin that always lands heads")
        heads = np.random.default_rng(seed).random(flips) < p
        return Result("toy_coin", "", {mean.name: float(heads.mean())})

    module.DESCRIPTION, module.EXAMPLES, module.METRICS = "coin flips", (), metrics
    module.INVARIANTS = Invariants()
    module.data_roots = lambda: ()
    module.estimate = lambda spec: []
    module.parse, module.build, module.run = parse, build, run
    return module


def test_any_registered_kind_can_be_swept(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "_sweep_toy_kind", _toy_kind_module())
    install_fake_distribution(
        monkeypatch, tmp_path / "site", "toy-coin", {"toy_coin": "_sweep_toy_kind"}
    )
    scenario = tmp_path / "coin.toml"
    scenario.write_text(
        'kind = "toy_coin"\nseed = 5\n[coin]\np = 0.5\nflips = 10\n'
        "[sweep]\nseeds = 3\np = [0.2, 0.8, 1.0]\n"
    )
    results = run_sweep(
        plan_sweep(scenario), tmp_path / "coin.jsonl", workers=1, progress=False
    ).results
    for row in results.rows:
        p, j = row["params"]["coin.p"], row["seed"]
        if p == 1.0:
            assert row["error"] == "RuntimeError: a coin that always lands heads"
            continue
        # Oracle: the flips drawn by hand from child j of SeedSequence(5).
        rng = np.random.default_rng(np.random.SeedSequence(5).spawn(3)[j])
        assert row["metrics"]["mean"] == float((rng.random(10) < p).mean())


def test_workers_must_be_positive(tmp_path):
    with pytest.raises(SweepError, match="--workers: must be a whole number >= 1"):
        run_sweep(plan_sweep(SCENARIO, SETS, 1), tmp_path / "w.jsonl", workers=0, progress=False)


def test_a_worker_that_dies_stops_the_sweep_with_one_clear_error():
    """A worker killed outright (here it exits at once) breaks the pool: one clear error says to
    --resume."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from dpgames._executors import ExecutorError, run_all

    with (
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool,
        pytest.raises(ExecutorError, match="a worker process died.*--resume"),
    ):
        list(run_all(pool, os._exit, [(3,)], window=1))
