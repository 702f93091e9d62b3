"""The audits' static types match what they return at run time.

``truthfulness_audit`` is overloaded on its arguments (see its Notes): the snippet ``AUDIT_SNIPPET``
(tests/mypy_once.py, checked in the session's one mypy run) states each
call's type with ``typing.assert_type`` (checked by mypy) and the same call's class with
``isinstance`` (checked by running it), so an overload that lies about the runtime fails one or the
other.
"""

from __future__ import annotations

import subprocess
import sys

import mypy_once


def test_overloads_state_the_runtime_classes():
    assert not mypy_once.errors("audit_types.py"), "\n".join(mypy_once.errors("audit_types.py"))
    _, _, folder = mypy_once.report()
    ran = subprocess.run(
        [sys.executable, str(folder / "audit_types.py")],
        capture_output=True,
        text=True,
        cwd=mypy_once.ROOT,
    )
    assert ran.returncode == 0, ran.stderr
