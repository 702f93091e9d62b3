"""A Dask address that accepts connections but never answers, and workers that differ from this
process.

Oracles: a socket server of our own that accepts and stays silent (a bare ``distributed.Client``
waits on it forever), the exit code and the one line of the command, wall-clock time; fake clients
whose workers report given versions."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dpgames import __version__
from dpgames._executors import ExecutorError
from dpgames.sweep.executors import CONNECT_GRACE, _check_workers, worker_versions

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def silent_server():
    """tcp://127.0.0.1:PORT of a server that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


@pytest.mark.slow
def test_a_silent_scheduler_ends_in_one_line_and_exit_2(silent_server, tmp_path):
    out = tmp_path / "r.jsonl"
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpgames.cli",
            "sweep",
            "scenarios/sweep_epsilon.toml",
            "--set",
            "n=30",
            "--seeds",
            "1",
            "--dask",
            silent_server,
            "--dask-timeout",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"dpgames: error: --dask {silent_server}: something there "
        "accepted the connection but did not answer"
    ), done.stderr
    assert elapsed < 1 + CONNECT_GRACE + 30  # the watchdog's wait, plus starting Python and dpgames
    assert not out.exists()


class FakeClient:
    def __init__(self, seen):
        self.seen = seen

    def run(self, fn):
        if isinstance(self.seen, Exception):
            raise self.seen
        return self.seen


def test_workers_with_this_processs_versions_pass():
    assert worker_versions() == (__version__, np.__version__)
    _check_workers(
        FakeClient({"tcp://w1": worker_versions(), "tcp://w2": list(worker_versions())}),
        "tcp://s:1",
    )


@pytest.mark.parametrize(
    "seen, message",
    [
        ({}, "the scheduler has no worker"),
        (
            {"tcp://w1": (__version__, "1.0.0")},
            f"worker tcp://w1 runs dpgames {__version__} with numpy 1.0.0",
        ),
        ({"tcp://w1": ("0.0.1", np.__version__)}, "worker tcp://w1 runs dpgames 0.0.1"),
        (
            ModuleNotFoundError("No module named 'dpgames'"),
            "the workers cannot run dpgames (ModuleNotFoundError",
        ),
    ],
)
def test_a_cluster_without_workers_or_with_other_versions_is_refused(seen, message):
    with pytest.raises(ExecutorError, match=None) as info:
        _check_workers(FakeClient(seen), "tcp://s:1")
    assert message in str(info.value)
