"""The audits' static types match what they return at run time.

``truthfulness_audit`` is overloaded on its arguments (see its Notes): the snippet below states each
call's type with ``typing.assert_type`` (checked by mypy) and the same call's class with ``isinstance``
(checked by running it), so an overload that lies about the runtime fails one or the other.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SNIPPET = textwrap.dedent('''
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
''')


def test_overloads_state_the_runtime_classes(tmp_path: Path):
    snippet = tmp_path / "audit_types.py"
    snippet.write_text(SNIPPET)
    root = Path(__file__).resolve().parents[1]
    checked = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(root / "pyproject.toml"),
                              str(snippet)], capture_output=True, text=True, cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = subprocess.run([sys.executable, str(snippet)], capture_output=True, text=True, cwd=root)
    assert ran.returncode == 0, ran.stderr
