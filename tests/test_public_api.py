import importlib
import subprocess
import sys

import pytest

PACKAGES = ["dpgames", "dpgames.privacy", "dpgames.games", "dpgames.sweep", "dpgames.mechanisms", "dpgames.analysis",
            "dpgames.scenarios"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        module.no_such_name


def test_import_is_cheap():
    """The re-exports are lazy: importing dpgames must not load the heavy optional stacks."""
    code = "import sys, dpgames; print(sorted(m for m in ('scipy.stats', 'networkx', 'matplotlib', 'dask') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
