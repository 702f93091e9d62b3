"""Lazy public re-exports (PEP 562) for the package ``__init__`` files.

A leaf utility: it imports nothing of dpgames, so every layer (``dpgames.privacy`` included) may use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def attach(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose public ``name`` lives in the
    module ``exports[name]`` and is imported on first use (then cached on the package)."""

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
