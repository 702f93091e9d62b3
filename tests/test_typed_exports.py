"""dpgames is a typed library (PEP 561) to its users' type checkers.

Every package lists its public names once, in an ``if TYPE_CHECKING:`` block of explicit re-exports
that both mypy and :func:`dpgames._lazy.declared_exports` read (see :mod:`dpgames._lazy`).  The
oracle here is mypy itself: in a user's file, ``reveal_type`` of every public name of every package
must reveal its real type, never ``Any`` (what a PEP 562 ``__getattr__`` alone gives a checker).
"""

from __future__ import annotations

import importlib
import re

import pytest

import mypy_once
from dpgames._lazy import declared_exports
from test_public_api import PACKAGES


def test_every_public_name_has_its_real_type_for_a_type_checker():
    names = mypy_once.exported_names()
    _, output, _ = mypy_once.report()
    revealed = re.findall(r"user_code\.py:(\d+): note: Revealed type is \"(.*)\"", output)
    assert len(revealed) == len(names), output[-3000:]
    first = len(PACKAGES) + 1
    untyped = [names[int(line) - first] for line, shown in revealed if shown == "Any"]
    assert not untyped, f"seen as Any by mypy: {untyped}"


@pytest.mark.parametrize("package", PACKAGES)
def test_the_type_checking_block_is_the_packages_public_api(package):
    module = importlib.import_module(package)
    assert sorted(declared_exports(module.__file__)) == module.__all__


@pytest.mark.parametrize(
    "block, complaint",
    [
        ("x = 1\n", "exactly one `if TYPE_CHECKING:` block"),
        ("if TYPE_CHECKING:\n    import os\n", "only `from module import name as name`"),
        ("if TYPE_CHECKING:\n    from os import path\n", "write `path as path`"),
        ("if TYPE_CHECKING:\n    from os import path as p\n", "write `path as path`"),
        (
            "if TYPE_CHECKING:\n    from os import sep as sep\n    from os import sep as sep\n",
            "once",
        ),
        (
            "if TYPE_CHECKING:\n    from . import sep as sep\n",
            "only `from module import name as name`",
        ),
    ],
)
def test_a_malformed_block_is_refused_naming_the_line(tmp_path, block, complaint):
    init = tmp_path / "__init__.py"
    init.write_text("from typing import TYPE_CHECKING\n" + block)
    with pytest.raises(ImportError, match=re.escape(complaint)):
        declared_exports(str(init))
