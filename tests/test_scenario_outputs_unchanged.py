"""Every shipped scenario's ``dpgames run FILE --json`` output, byte for byte, against its recorded
file.

The files under ``tests/golden/`` were written by this module (``python
tests/test_scenario_outputs_unchanged.py --record``) from the code as it was before a refactoring of
the scenario layer: a refactoring must leave every figure, label, table and provenance field
unchanged.  Each scenario runs with the seed its file names, from the repository root (the
provenance records the path as given).  Scenarios whose run takes minutes on a road network are
marked ``slow``; TNTP networks need their data folder (``$DPGAMES_TNTP_DIR``, else
``../shared/data/tntp`` beside the repository) and are skipped without it.

A difference in the ``versions`` of the provenance (another numpy or Python) is not a change of the
scenario layer: those fields are compared only when they match the recording machine's.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from dpgames.cli import main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
PLUGIN_SCENARIOS = Path("examples/voting_plugin/dpgames_voting/scenarios")
#: Runs too heavy for the fast subset (conftest.py's docstring): road networks, large populations,
#: long mediator runs and audits; the other shipped scenarios are compared in the fast subset too.
SLOW = {
    "anaheim.toml",
    "sioux_falls.toml",
    "grid.toml",
    "large_n.toml",
    "braess.toml",
    "pigou.toml",
    "allocation_small.toml",
    "allocation_two_goods.toml",
    "anonymous_crowding.toml",
    "anonymous_market_entry.toml",
    "continuous.toml",
    "nst_facility_k2.toml",
}
TNTP = {"anaheim.toml", "sioux_falls.toml", "braess.toml"}
VERSION_FIELDS = ("dpgames", "numpy", "python")


def shipped() -> list[Path]:
    """Every shipped scenario file, relative to the repository root."""
    files = sorted(p.relative_to(ROOT) for p in (ROOT / "scenarios").glob("*.toml"))
    return files + sorted(p.relative_to(ROOT) for p in (ROOT / PLUGIN_SCENARIOS).glob("*.toml"))


def tntp_available() -> bool:
    folder = os.environ.get("DPGAMES_TNTP_DIR") or ROOT.parent / "shared" / "data" / "tntp"
    return Path(folder).is_dir()


def golden_file(path: Path) -> Path:
    return GOLDEN / f"{path.parent.name}__{path.stem}.json"


def run_json(path: Path, capsys: pytest.CaptureFixture[str] | None = None) -> str:
    """The text ``dpgames run PATH --json`` prints, run from the repository root."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        if capsys is None:
            import contextlib
            import io

            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(["run", str(path), "--json"])
            text = out.getvalue()
        else:
            capsys.readouterr()
            code = main(["run", str(path), "--json"])
            text = capsys.readouterr().out
    finally:
        os.chdir(here)
    assert code == 0, f"dpgames run {path} --json failed (exit code {code})"
    return text


def params() -> list:
    out = []
    for path in shipped():
        marks = [pytest.mark.slow] if path.name in SLOW else []
        if path.name in TNTP:
            marks.append(pytest.mark.skipif(not tntp_available(), reason="no TNTP data folder"))
        out.append(pytest.param(path, marks=marks, id=str(path)))
    return out


@pytest.mark.parametrize("path", params())
def test_the_json_output_of_every_shipped_scenario_is_byte_identical_to_its_recording(path, capsys):
    expected = golden_file(path).read_text()
    found = run_json(path, capsys)
    recorded = json.loads(expected)["provenance"]
    here = json.loads(found)["provenance"]
    if any(recorded.get(k) != here.get(k) for k in VERSION_FIELDS):
        pytest.skip(
            f"recorded under {[recorded.get(k) for k in VERSION_FIELDS]}, running under "
            f"{[here.get(k) for k in VERSION_FIELDS]}: byte identity needs the same versions"
        )
    assert found == expected


def test_every_shipped_scenario_has_a_recording():
    assert {golden_file(p).name for p in shipped()} == {p.name for p in GOLDEN.glob("*.json")}


if __name__ == "__main__":
    # python tests/test_scenario_outputs_unchanged.py --record | --compare [NAME ...]
    record = "--record" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    GOLDEN.mkdir(exist_ok=True)
    failed = []
    for path in shipped():
        if names and path.stem not in names:
            continue
        text = run_json(path)
        if record:
            golden_file(path).write_text(text)
            status = "recorded"
        else:
            status = "same" if golden_file(path).read_text() == text else "DIFFERENT"
            if status != "same":
                failed.append(str(path))
        print(f"{path}: {status}", flush=True)
    sys.exit(1 if failed else 0)
