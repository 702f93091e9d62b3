"""The note about compiling the road-network kernels: shown before the first large game since
installing (numba's cache empty), to a person at a terminal, never into a pipe or when the kernels
are cached."""

import io
import sys
from pathlib import Path

import pytest

import dpgames.games as games
import dpgames.games.kernels as kernels
from dpgames.cli import main

ROOT = Path(__file__).resolve().parents[1]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_cache_is_found_in_the_package_or_numba_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(games, "__file__", str(tmp_path / "games" / "__init__.py"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert not kernels.kernels_compiled()  # a fresh install: nothing cached
    cache = tmp_path / "numba"
    (cache / "dpgames" / "games").mkdir(parents=True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    assert not kernels.kernels_compiled()
    (cache / "dpgames" / "games" / "_rounds.hedge_round-12.py311.nbi").write_bytes(b"")
    assert kernels.kernels_compiled()


@pytest.mark.parametrize(
    "terminal, cached, shown", [(True, False, True), (False, False, False), (True, True, False)]
)
def test_the_command_line_says_it_once_to_a_terminal(monkeypatch, capsys, terminal, cached, shown):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(kernels, "kernels_compiled", lambda: cached)
    if terminal:
        monkeypatch.setattr("sys.stderr", Terminal())
    assert main(["run", "scenarios/pigou.toml", "--json"]) in (0, None)
    captured = capsys.readouterr()
    err = sys.stderr.getvalue() if terminal else captured.err
    assert ("compiles the road-network kernels (numba), once" in err) is shown
    assert captured.out.lstrip().startswith("{")  # the JSON itself is untouched
