"""One mypy run for the whole test session (mypy is slow to start: three runs cost three times its
startup).

The run checks what ``[tool.mypy]`` configures (``dpgames/``, ``dpgames_app/``, ``app.py``) together
with the user-side snippets of the typing tests: :data:`AUDIT_SNIPPET`
(``tests/test_audit_typing.py``) and :func:`exports_snippet` (``tests/test_typed_exports.py``).
:func:`report` returns its output once, cached; each test reads the lines of its own file.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from test_public_api import PACKAGES

ROOT = Path(__file__).resolve().parents[1]

AUDIT_SNIPPET = textwrap.dedent("""
    from typing import assert_type

    from dpgames.analysis.custom_audit import CustomAudit, DominantAudit, ExPostAudit
    from dpgames.analysis.sampled_audit import BayesianAudit, SampledAudit
    from dpgames.analysis.truthfulness import (
        TrueTypes, TruthfulnessAudit, TruthfulnessVerdict, TypeSpaceAudit, truthfulness_audit)
    from dpgames.mechanisms.commitment import CommitmentMechanism
    from dpgames.mechanisms.custom import CustomMechanism
    from dpgames.mechanisms.pricing import pricing_environment

    env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    mech = CommitmentMechanism(env)
    profile = env.profile([0.875, 0.375])
    own = truthfulness_audit(mech, profile)
    assert_type(own, TruthfulnessAudit)
    assert isinstance(own, TruthfulnessAudit)
    every = truthfulness_audit(mech, profile, "all")
    assert_type(every, TypeSpaceAudit)
    assert isinstance(every, TypeSpaceAudit)
    every = truthfulness_audit(mech, [0.875, 0.375], true_types="all")
    assert_type(every, TypeSpaceAudit)
    assert isinstance(every, TypeSpaceAudit)
    which: TrueTypes = "own"
    either = truthfulness_audit(mech, profile, which)
    assert_type(either, TruthfulnessAudit | TypeSpaceAudit)

    median = CustomMechanism(lambda r: sorted(r)[len(r) // 2], lambda t, o: -abs(t - o), types=range(5))
    custom = truthfulness_audit(median, [1, 3, 4])
    assert_type(custom, CustomAudit)
    assert isinstance(custom, ExPostAudit) and isinstance(custom, CustomAudit)
    dominant = truthfulness_audit(median, n=2, profiles="all")
    assert isinstance(dominant, DominantAudit)
    bayes = truthfulness_audit(median, n=2, prior={0: 0.5, 4: 0.5})
    assert isinstance(bayes, BayesianAudit)
    sampled = truthfulness_audit(lambda r, rng: r[0], [1, 3], utility=lambda t, o: -abs(t - o), types=range(5),
                                 samples=10)
    assert isinstance(sampled, SampledAudit)

    verdicts: list[TruthfulnessVerdict] = [own, every, custom, dominant, bayes, sampled]
    assert [v.is_truthful() for v in verdicts] == [True, True, True, True, True, True]
    assert all(isinstance(v.worst_case["gain"], float) and v.max_gain <= v.rounding_slack for v in verdicts)
""")


def exported_names() -> list[tuple[str, str]]:
    """Every ``(package, name)`` of the public API, in the order of ``tests/test_public_api.py``'s
    PACKAGES."""
    return [
        (package, name) for package in PACKAGES for name in importlib.import_module(package).__all__
    ]


def exports_snippet() -> str:
    """A user's file: ``reveal_type`` of every public name, one a line after one import line per
    package."""
    lines = [f"import {package}" for package in PACKAGES]
    lines += [f"reveal_type({package}.{name})" for package, name in exported_names()]
    return "\n".join(lines) + "\n"


@functools.cache
def report() -> tuple[int, str, Path]:
    """``(exit code, output, folder of the snippets)`` of one mypy run with the project's
    configuration."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    folder = Path(tempfile.mkdtemp(prefix="dpgames-mypy-"))
    (folder / "audit_types.py").write_text(AUDIT_SNIPPET)
    (folder / "user_code.py").write_text(exports_snippet())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "dpgames",
            "dpgames_app",
            "app.py",
            str(folder / "audit_types.py"),
            str(folder / "user_code.py"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    return done.returncode, done.stdout + done.stderr, folder


def errors(name: str | None = None) -> list[str]:
    """mypy's error lines: of the snippet ``name``, or (``None``) of everything but the snippets."""
    _, output, _ = report()
    found = [line for line in output.splitlines() if ": error:" in line]
    if name is None:
        return [
            line for line in found if "audit_types.py" not in line and "user_code.py" not in line
        ]
    return [line for line in found if name in line]
