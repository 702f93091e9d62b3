"""The modules of ``dpgames.analysis`` import as a DAG: each imports alone in a fresh interpreter,
and no chain of imports (module level, inside functions or under ``TYPE_CHECKING``) leads from a
module back to itself."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import dpgames.analysis

PACKAGE = Path(dpgames.analysis.__file__).parent
MODULES = sorted(f"dpgames.analysis.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def imports_within(path: Path, package: str = "dpgames.analysis") -> set[str]:
    """The modules of ``package`` that the file at ``path`` imports, anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(name for name in names if name.startswith(package + ".") and name in MODULES)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (as the list of its nodes, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_dag():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_parser_sees_imports_in_functions_and_under_type_checking(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from "
        "dpgames.analysis.lines import Lines\n"
        "def f():\n    import dpgames.analysis.limits\n"
    )
    assert imports_within(source) == {"dpgames.analysis.lines", "dpgames.analysis.limits"}


def test_no_import_cycle_among_the_analysis_modules():
    graph = {name: imports_within(PACKAGE / f"{name.rsplit('.', 1)[1]}.py") for name in MODULES}
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph) or [])}"


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_each_analysis_module_imports_alone_in_a_fresh_interpreter(module):
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(dpgames.analysis.__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
