"""The package as a user installs it: a wheel and an sdist built from the repository, the wheel
installed into a fresh virtual environment, and the README's first command run from it.

The venv sees the test machine's site-packages (numpy, scipy, ... are not downloaded again), but the
wheel's own ``dpgames`` comes first on its path, so what runs is the installed wheel, not this tree.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_wheel_and_sdist_hold_the_package(dist):
    (wheel,) = dist.glob("dpgames-*.whl")
    (sdist,) = dist.glob("dpgames-*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "dpgames").rglob("*.py")}
    assert modules <= set(names), sorted(modules - set(names))
    assert "dpgames/py.typed" in names  # PEP 561: users' type checkers read dpgames' hints
    entry_points = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith("entry_points.txt")))
        .decode()
    )
    assert "dpgames = dpgames.cli:main" in entry_points and "[dpgames.kinds]" in entry_points
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/pyproject.toml") for n in archive.getnames())


def test_installed_wheel_runs_the_first_readme_command(dist, tmp_path):
    (wheel,) = dist.glob("dpgames-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    where = subprocess.run(
        [str(python), "-c", "import dpgames; print(dpgames.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert str(env_dir) in where.stdout, where.stdout + where.stderr
    ran = subprocess.run(
        [str(env_dir / "bin" / "dpgames"), "run", str(ROOT / "scenarios" / "digital_goods.toml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    here = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpgames.cli",
            "run",
            str(ROOT / "scenarios" / "digital_goods.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ran.stdout == here.stdout
    version = subprocess.run(
        [str(env_dir / "bin" / "dpgames"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and "0." in version.stdout
