"""Lazy public re-exports (PEP 562) for the package ``__init__`` files.

A package lists its public names once, as ``from module import name as name`` lines inside an ``if
TYPE_CHECKING:`` block of its ``__init__.py``.  Type checkers read that block (the redundant ``as
name`` marks an explicit re-export, PEP 484), so ``from dpgames import truthfulness_audit`` keeps
its real signature in a user's editor; at run time :func:`declared_exports` reads the same lines
from the source and :func:`attach` imports each name on first use, so ``import dpgames`` stays
cheap.

A leaf utility: it imports nothing of dpgames, so every layer (``dpgames.privacy`` included) may use
it.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def declared_exports(init_file: str) -> dict[str, str]:
    """The public names of a package and the module each lives in, as its ``__init__.py``
    (``init_file``) declares them in its ``if TYPE_CHECKING:`` block of ``from module import name as
    name`` lines.

    Raises
    ------
    ImportError
        If the file has no such block, or a line of it is not of that form (a packaging error, found
        by the first import of the package).
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), filename=init_file)
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    if len(blocks) != 1:
        raise ImportError(
            f"{init_file}: needs exactly one `if TYPE_CHECKING:` block listing its public names"
        )
    exports: dict[str, str] = {}
    for statement in blocks[0].body:
        if not (
            isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0
        ):
            raise ImportError(
                f"{init_file}, line {statement.lineno}: only `from module import name as name` "
                "lines belong in the TYPE_CHECKING block"
            )
        for alias in statement.names:
            if alias.asname != alias.name or alias.name in exports:
                raise ImportError(
                    f"{init_file}, line {statement.lineno}: write `{alias.name} as {alias.name}` "
                    "(an explicit re-export), once"
                )
            exports[alias.name] = statement.module
    return exports


def attach(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose public ``name`` lives in
    the module ``exports[name]`` and is imported on first use (then cached on the package)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__, sorted(exports)
