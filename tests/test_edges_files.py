"""Files at the edges: path confinement, non-regular files, malformed scenario, CSV and TNTP files.

Oracles: the refusal must happen *without reading* (a FIFO would block, a secret's contents must not
appear); figures that are read are compared with values written by hand or parsed plainly in the
test; property tests (hypothesis) have the oracle "a clean ValueError naming the file (and the field
or line), or a valid result, within a time limit".
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from dpgames import Population, Scenario, ScenarioError, run_scenario
from dpgames.cli import main
from dpgames.games.tntp import MAX_NODE_ID, TntpError, load_tntp, read_net, read_trips

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
EXAMPLES = int(os.environ.get("DPGAMES_FUZZ_EXAMPLES", "25"))

CSV_SCENARIO = (
    'kind = "digital_goods"\nseed = 1\n[population]\ndistribution = "csv"\npath = "{path}"\n'
    "[mechanism]\nepsilon = 1.0\nalpha = 0.05\n"
)
SECRET = "0.123456\n0.654321\n"


def scenario_file(folder: Path, path: str, name: str = "s.toml") -> Path:
    out = folder / name
    out.write_text(CSV_SCENARIO.format(path=path))
    return out


def refused(path: Path, *args: str) -> str:
    """Run ``dpgames run`` in a subprocess (a hang is a failure after 20 s): exit 2, one line."""
    proc = subprocess.run(
        [sys.executable, "-m", "dpgames.cli", "run", str(path), *args],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


# ---------------------------------------------------------------- confinement of data paths


@pytest.mark.parametrize(
    "path", ["../../../../etc/passwd", "/etc/passwd", "../secret.csv", "sub/../../secret.csv"]
)
def test_data_paths_outside_the_scenario_folder_are_refused_unread(tmp_path, path):
    (tmp_path / "secret.csv").write_text(SECRET)
    folder = tmp_path / "scenario"
    (folder / "sub").mkdir(parents=True)
    with pytest.raises(
        ScenarioError, match=r"field 'population.path': .* is outside the folders"
    ) as info:
        run_scenario(scenario_file(folder, path))
    message = str(info.value)
    assert "root:" not in message and "0.654321" not in message and "line" not in message


def test_an_edge_list_path_is_confined_too(tmp_path):
    text = (
        (SCENARIOS / "nst_facility_k1.toml")
        .read_text()
        .replace('graph = "grid"', 'graph = "edges"\npath = "../../../../etc/passwd"\n#')
    )
    (tmp_path / "s.toml").write_text(text.replace("rows = 8", "#").replace("cols = 8", "#"))
    with pytest.raises(ScenarioError, match=r"field 'environment.path': .* is outside the folders"):
        run_scenario(tmp_path / "s.toml")


def test_a_symlink_out_of_the_folder_is_refused_and_one_inside_is_followed(tmp_path):
    (tmp_path / "secret.csv").write_text(SECRET)
    folder = tmp_path / "scenario"
    folder.mkdir()
    (folder / "bids.csv").write_text("0.9\n0.5\n")
    (folder / "out.csv").symlink_to(tmp_path / "secret.csv")
    (folder / "in.csv").symlink_to(folder / "bids.csv")
    with pytest.raises(ScenarioError, match="outside the folders"):
        run_scenario(scenario_file(folder, "out.csv"))
    # OPT of bids 0.9, 0.5 by hand: max(0.9 * 1, 0.5 * 2) = 1.0
    assert run_scenario(scenario_file(folder, "in.csv")).metrics["opt"] == pytest.approx(1.0)


def test_data_dir_allows_a_folder_named_explicitly(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "bids.csv").write_text("0.9\n0.8\n0.2\n")
    folder = tmp_path / "scenario"
    folder.mkdir()
    for path in ("bids.csv", str(data / "bids.csv"), "../data/bids.csv"):
        scenario = scenario_file(folder, path)
        assert main(["run", str(scenario)]) == 2
        assert "field 'population.path'" in capsys.readouterr().err
        assert main(["run", str(scenario), "--data-dir", str(data), "--json"]) == 0
        # OPT by hand: max(0.9, 0.8 * 2, 0.2 * 3) = 1.6
        assert '"opt": 1.6' in capsys.readouterr().out.replace("1.6000000000000001", "1.6")
    assert main(["run", str(scenario), "--data-dir", str(tmp_path / "nowhere")]) == 2
    assert "--data-dir" in capsys.readouterr().err


def test_sweep_data_dir(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "bids.csv").write_text("0.9\n0.8\n0.2\n")
    scenario = scenario_file(tmp_path, "bids.csv")
    scenario.write_text(scenario.read_text() + "[sweep]\nseeds = 1\nepsilon = [0.5, 1.0]\n")
    out = tmp_path / "r.jsonl"
    args = ["sweep", str(scenario), "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 2
    assert "population.path" in capsys.readouterr().err
    out.unlink(missing_ok=True)
    assert main([*args, "--data-dir", str(data)]) == 0
    assert "2 cells" in capsys.readouterr().out


def test_a_scenario_given_as_text_reads_no_file_unless_told_where(tmp_path):
    (tmp_path / "bids.csv").write_text("0.5\n")
    text = CSV_SCENARIO.format(path="bids.csv")
    with pytest.raises(ScenarioError, match="no folder to read data files from"):
        Scenario.from_text(text, "t.toml").run()
    assert Scenario.from_text(text, "t.toml", data_dirs=[tmp_path]).run().metrics[
        "opt"
    ] == pytest.approx(0.5)


@pytest.mark.slow
@needs_fifo
@pytest.mark.parametrize(
    "make, what",
    [
        (lambda p: os.mkfifo(p), "FIFO"),
        (lambda p: p.mkdir(), "a folder"),
    ],
)
def test_non_regular_data_files_are_refused_without_opening(tmp_path, make, what):
    make(tmp_path / "bids.csv")
    assert what in refused(scenario_file(tmp_path, "bids.csv"))


@pytest.mark.slow
def test_a_device_is_refused(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    assert "character device" in refused(scenario_file(tmp_path, "/dev/zero"), "--data-dir", "/dev")


def test_the_shipped_csv_scenario_still_runs():
    assert run_scenario(SCENARIOS / "from_csv.toml").metrics["opt"] > 0


# ---------------------------------------------------------------- the scenario file itself


@pytest.mark.slow
@needs_fifo
def test_a_fifo_as_the_scenario_file_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "s.toml")
    assert "FIFO" in refused(tmp_path / "s.toml")


@pytest.mark.slow
@needs_fifo
def test_a_fifo_as_a_results_file_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "r.jsonl")
    for args in (
        ["plot", str(tmp_path / "r.jsonl"), "--x", "epsilon", "--y", "opt"],
        [
            "sweep",
            str(SCENARIOS / "small_exact.toml"),
            "--out",
            str(tmp_path / "r.jsonl"),
            "--workers",
            "1",
        ],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "dpgames.cli", *args], capture_output=True, text=True, timeout=20
        )
        assert proc.returncode == 2 and "FIFO" in proc.stderr and proc.stderr.count("\n") == 1, (
            proc.stderr
        )


@pytest.mark.slow
def test_a_folder_or_device_as_the_scenario_file(tmp_path):
    assert "a folder" in refused(tmp_path)
    if Path("/dev/zero").exists():
        assert "character device" in refused(Path("/dev/zero"))


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 5000,  # arrays: RecursionError inside tomllib
        "a = " + "{b = " * 3000,  # inline tables
        "a = " + "[" * 40 + "1" + "]" * 40,  # parses, but deeper than the limit
        ".".join(["a"] * 3000) + " = 1",  # dotted keys: 3000 nested tables
        "[" + ".".join(["t"] * 3000) + "]",  # a table header
    ],
)
def test_deeply_nested_toml_is_a_clean_error(text):
    with pytest.raises(ScenarioError, match=r"^deep.toml: .*nested"):
        Scenario.from_text(text, "deep.toml")


def test_a_huge_scenario_file_is_refused_with_its_size(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(b'kind = "digital_goods"\n' + b"#" * (5 * 2**20))
    with pytest.raises(
        ScenarioError, match=r"big.toml: scenario file is 5.0 MiB, over the limit of 4.0 MiB"
    ):
        Scenario.from_file(path)


def test_integers_beyond_pythons_digit_limit_are_clean_errors():
    with pytest.raises(
        ScenarioError, match=r"^big.toml: malformed TOML: an integer with more than \d+ digits"
    ):
        Scenario.from_text("seed = " + "9" * 5000, "big.toml")
    text = CSV_SCENARIO.replace(
        'distribution = "csv"\npath = "{path}"',
        'distribution = "uniform"\nn = 1\nlow = 0x' + "f" * 5000,
    )
    with pytest.raises(
        ScenarioError, match=r"^big.toml: field 'population.low': .*an integer of 20000 bits"
    ):
        Scenario.from_text(text, "big.toml").run()


@pytest.mark.parametrize("kind", ['["digital_goods"]', "{a = 1}", "1", "1979-05-27"])
def test_a_kind_that_is_not_a_string(kind):
    with pytest.raises(ScenarioError, match=r"^k.toml: field 'kind'"):
        Scenario.from_text(f"kind = {kind}\n", "k.toml").run()


# ---------------------------------------------------------------- CSV files


@pytest.mark.parametrize(
    "data, message",
    [
        (b"0.5\n" + b"7" * 200_000 + b"\n", r"line 2: a field is longer than the CSV limit"),
        (b"0.5\n0.7\n1e400\n", r"line 3, column 1: the value is not a finite number"),
        (b"0.5\nnan\n", r"line 2, column 1: the value is not a finite number"),
        (
            b"0.5\n\n\n0.x\n",
            r"line 4, column 1: the value is not a finite number",
        ),  # blank lines counted
        (b"value,x\n0.5,1\n,2\n", r"line 3, column 1: the value is empty"),
        (b"0.5\x00\n", r"line 1: contains a NUL byte"),
        ("0.5\n\x00\n".encode("utf-16"), r"line 2: contains a NUL byte"),
        ("0.5\n0.é\n".encode("latin-1"), r"line 2: not UTF-8 text"),
        (b"", r"the file has no rows"),
        (b"value\n", r"the file has a header but no data rows"),
    ],
)
def test_malformed_csv_names_the_file_and_line(tmp_path, data, message):
    path = tmp_path / "bids.csv"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: {message}") as info:
        Population.from_csv(path)
    assert "0.x" not in str(info.value) and "7777" not in str(info.value)


def test_a_csv_over_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "big.csv"
    with path.open("wb") as fh:
        fh.truncate(17 * 2**20)  # sparse: 17 MiB of NUL bytes
    with pytest.raises(
        ValueError, match=r"big.csv: is 17.0 MiB, over the limit of 16.0 MiB: refused"
    ):
        Population.from_csv(path)


def test_csv_encodings_that_are_accepted(tmp_path):
    path = tmp_path / "bids.csv"
    for data in ("\ufeffvalue\n0.25\n0.5\n".encode(), "value\n0.25\n0.5\n".encode("utf-16")):
        path.write_bytes(data)
        assert Population.from_csv(path, "value").values.tolist() == [0.25, 0.5]


def test_csv_errors_do_not_echo_the_header(tmp_path):
    path = tmp_path / "bids.csv"
    path.write_text("password,hunter2\n0.5,0.5\n")
    with pytest.raises(ValueError, match="no column 'value'") as info:
        Population.from_csv(path, "value")
    assert "hunter2" not in str(info.value)


# ---------------------------------------------------------------- TNTP files

NET = (
    "<NUMBER OF ZONES> 1\n<NUMBER OF LINKS> 3\n<FIRST THRU NODE> 1\n<END OF METADATA>\n"
    "~ init term cap len fft b power speed toll type ;\n"
    "1 2 10 1 2 0.15 4 0 0 1 ;\n2 3 10 1 3 0.15 4 0 0 1 ;\n1 3 5 2 6 0.15 4 0 0 1 ;\n"
)
TRIPS = "<NUMBER OF ZONES> 1\n<TOTAL OD FLOW> 7\n<END OF METADATA>\nOrigin 1\n  3 : 7.0;\n"


def write_network(folder: Path, net: str = NET, trips: str = TRIPS, name: str = "T") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}_net.tntp").write_text(net)
    (folder / f"{name}_trips.tntp").write_text(trips)
    return folder


@pytest.mark.parametrize(
    "value",
    ["inf", "1e300", "1e400", "12345678901234567890", "nan", "-1", "2.5", str(MAX_NODE_ID + 2)],
)
def test_node_ids_that_are_not_exact_whole_numbers_are_refused(tmp_path, value):
    path = tmp_path / "T_net.tntp"
    path.write_text(NET.replace("\n2 3 10", f"\n{value} 3 10"))
    with pytest.raises(
        TntpError, match=rf"^{re.escape(str(path))}:7: init_node must be a whole number"
    ):
        read_net(path)


@pytest.mark.parametrize("key", ["NUMBER OF LINKS", "FIRST THRU NODE"])
@pytest.mark.parametrize("value", ["inf", "1e300", "1e400", "12345678901234567890", "x"])
def test_metadata_that_is_not_a_whole_number_is_refused(tmp_path, key, value):
    path = tmp_path / "T_net.tntp"
    path.write_text(re.sub(rf"<{key}> \d+", f"<{key}> {value}", NET))
    line = 2 if key == "NUMBER OF LINKS" else 3
    with pytest.raises(
        TntpError, match=rf"^{re.escape(str(path))}:{line}: <{key}> must be a whole number"
    ):
        read_net(path)


@pytest.mark.parametrize(
    "trips, line, field",
    [
        (TRIPS.replace("Origin 1", "Origin 1e300"), 4, "origin"),
        (TRIPS.replace("Origin 1", "Origin 12345678901234567890"), 4, "origin"),
        (TRIPS.replace("  3 :", "  1e300 :"), 5, "entry 1: destination"),
        (TRIPS.replace("7.0;", "1e400;"), 5, "entry 1: demand"),
        (TRIPS.replace("<TOTAL OD FLOW> 7", "<TOTAL OD FLOW> inf"), 2, "<TOTAL OD FLOW>"),
        (TRIPS.replace("<TOTAL OD FLOW> 7", "<TOTAL OD FLOW> 8"), 2, "<TOTAL OD FLOW>"),
    ],
)
def test_bad_trips_name_the_file_line_and_field(tmp_path, trips, line, field):
    path = tmp_path / "T_trips.tntp"
    path.write_text(trips)
    with pytest.raises(TntpError, match=rf"^{re.escape(str(path))}:{line}: {re.escape(field)}"):
        read_trips(path)


@pytest.mark.parametrize(
    "trips",
    [
        "<END OF METADATA>\nOrigin 1\n",
        "<END OF METADATA>\nOrigin 1\n 3 : 0;\n",
        "<END OF METADATA>\nOrigin 1\n 1 : 5;\n",
    ],
)
def test_a_network_without_trips_is_refused(tmp_path, trips):
    folder = write_network(tmp_path / "T", trips=trips)
    with pytest.raises(TntpError, match=r"T_trips.tntp: no trips"):
        load_tntp(folder)


def test_a_small_network_is_read_exactly(tmp_path):
    game = load_tntp(write_network(tmp_path / "T"))
    links, first = read_net(tmp_path / "T" / "T_net.tntp")
    assert first == 1 and links[:, :2].tolist() == [[1, 2], [2, 3], [1, 3]]
    assert links[:, 2].tolist() == [10, 10, 5] and game.demand.tolist() == [7.0]


def tntp_scenario(folder: Path, network: str, path: str | None) -> Path:
    out = folder / "net.toml"
    line = f'path = "{path}"\n' if path is not None else ""
    out.write_text(
        f'kind = "large_game"\n[game]\nsource = "tntp"\nnetwork = "{network}"\n{line}'
        "[mediator]\nrounds = 20\n[incentives]\nenabled = false\n"
    )
    return out


@pytest.mark.slow
def test_tntp_paths_are_confined(tmp_path, monkeypatch):
    monkeypatch.delenv("DPGAMES_TNTP_DIR", raising=False)
    outside = write_network(tmp_path / "outside" / "T")
    folder = tmp_path / "scenario"
    write_network(folder / "nets" / "T")
    with pytest.raises(ScenarioError, match="field 'game.path'.*outside the folders"):
        run_scenario(tntp_scenario(folder, "T", str(outside.parent)))
    with pytest.raises(ScenarioError, match="field 'game.network': must be the name of a folder"):
        run_scenario(tntp_scenario(folder, "../outside/T", "nets"))
    (folder / "nets" / "L").mkdir()
    (folder / "nets" / "L" / "L_net.tntp").symlink_to(outside / "T_net.tntp")
    (folder / "nets" / "L" / "L_trips.tntp").symlink_to(outside / "T_trips.tntp")
    with pytest.raises(ScenarioError, match="field 'game.path'.*outside the folders"):
        run_scenario(tntp_scenario(folder, "L", "nets"))
    # inside: runs; DPGAMES_TNTP_DIR names a folder explicitly, so a path inside it is allowed too
    assert run_scenario(tntp_scenario(folder, "T", "nets")).metrics["players"] == 7
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(outside.parent))
    assert run_scenario(tntp_scenario(folder, "T", str(outside.parent))).metrics["players"] == 7
    assert run_scenario(tntp_scenario(folder, "T", None)).metrics["players"] == 7


@pytest.mark.slow
@needs_fifo
def test_a_fifo_in_a_tntp_folder_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "T"
    folder.mkdir()
    os.mkfifo(folder / "T_net.tntp")
    (folder / "T_trips.tntp").write_text(TRIPS)
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(tmp_path))
    assert "FIFO" in refused(tntp_scenario(tmp_path, "T", None))
    with pytest.raises(TntpError, match="FIFO"):
        read_net(folder / "T_net.tntp")


@pytest.mark.skipif(not (TNTP / "Braess").is_dir(), reason="TNTP networks not available")
def test_the_shipped_tntp_scenarios_still_read_from_dpgames_tntp_dir(monkeypatch):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(TNTP))
    result = run_scenario(
        SCENARIOS / "braess.toml", overrides={"mediator.rounds": 50, "incentives.enabled": False}
    )
    assert result.metrics["players"] == 6


# ---------------------------------------------------------------- fuzz: TNTP readers

TOKENS = st.sampled_from(
    [
        "0",
        "1",
        "2",
        "3",
        "-1",
        "1.5",
        "inf",
        "-inf",
        "nan",
        "1e300",
        "1e400",
        "1e-400",
        "12345678901234567890",
        str(MAX_NODE_ID),
        str(MAX_NODE_ID + 1),
        "x",
        "",
        ";",
        ":",
        "~",
        "<END OF METADATA>",
        "Origin",
        "\x00",
        "é",
        "0x10",
        "1_0",
    ]
)


def mutate(text: str, data: st.DataObject) -> str:
    """Replace, insert or delete a few whitespace-separated tokens of ``text``."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        words = lines[i].split(" ")
        j = data.draw(st.integers(0, len(words)))
        action = data.draw(st.sampled_from(["replace", "insert", "delete", "dup-line"]))
        if action == "dup-line":
            lines.insert(i, lines[i])
        elif action == "delete" and j < len(words):
            del words[j]
        elif action == "insert" or j == len(words):
            words.insert(j, data.draw(TOKENS))
        else:
            words[j] = data.draw(TOKENS)
        if action != "dup-line":
            lines[i] = " ".join(words)
    return "\n".join(lines)


def plain_links(text: str) -> list[list[float]]:
    """An independent reading of the link lines: after the leading ``<KEY> value`` lines, every
    non-blank line with its comment dropped."""
    rows, in_meta = [], True
    for line in text.splitlines():
        line = line.split("~", 1)[0].strip()
        if not line:
            continue
        key = re.match(r"^<([^>]+)>", line)
        if in_meta and key:
            in_meta = key.group(1).strip().upper() != "END OF METADATA"
            continue
        in_meta = False
        rows.append([float(x) for x in line.rstrip(";").split()])
    return rows


@settings(
    max_examples=2 * EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzz_tntp_readers(tmp_path, data):
    folder = tmp_path / "F"
    net, trips = mutate(NET, data), mutate(TRIPS, data)
    write_network(folder, net, trips, "F")
    try:
        game = load_tntp(folder)
    except TntpError as exc:
        message = str(exc)
        assert message.startswith(str(folder / "F_")) and "\n" not in message
        assert re.match(r"^\S+_(net|trips)\.tntp(:\d+)?: ", message), message
        return
    # a network that is read must be exactly the one in the file: ids whole and in range, values
    # finite
    links = plain_links(net)
    assert all(len(row) == 10 for row in links)
    ends = np.array([row[:2] for row in links])
    assert np.all(ends == np.floor(ends)) and ends.min() >= 1 and ends.max() <= MAX_NODE_ID
    assert set(game.network.labels.tolist()) == set(ends.astype(np.int64).ravel().tolist())
    assert (
        np.isfinite(np.array(links)).all()
        and np.isfinite(game.demand).all()
        and (game.demand > 0).all()
    )


# ---------------------------------------------------------------- fuzz: scenario tables of every
# kind

BASES = {
    "digital_goods": (SCENARIOS / "small_exact.toml", {}),
    "huang_kannan": (SCENARIOS / "huang_kannan_public_project.toml", {}),
    "nst_mix": (SCENARIOS / "nst_facility_k1.toml", {"population.n": 20, "scaling.n": [10, 20]}),
    "large_game": (
        SCENARIOS / "pigou.toml",
        {
            "mediator.rounds": 30,
            "incentives.enabled": False,
            "game.classes": [{"players": 10, "actions": [[0], [1]]}],
        },
    ),
}

SCALARS = st.one_of(
    st.integers(-3, 40),
    st.sampled_from([0, 1, 2**31, 2**63, 10**30, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 1e300, 0.5, 1.0, 1e6]),
    st.booleans(),
    st.text(max_size=12),
    st.sampled_from(
        [
            "../../../../etc/passwd",
            "/etc/passwd",
            "/dev/zero",
            ".",
            "csv",
            "uniform",
            "list",
            "grid",
            "tntp",
            "resources",
            "hedge",
            "facility_location",
            "public_project",
        ]
    ),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 1, 1)),
    st.dates(),
    st.times(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def leaves(node, prefix=()) -> list[tuple]:
    """Every key path of a nested dict (tables and their keys)."""
    out = []
    for key, value in node.items():
        out.append((*prefix, key))
        if isinstance(value, dict):
            out.extend(leaves(value, (*prefix, key)))
    return out


@contextlib.contextmanager
def time_limit(seconds: int):
    def fail(*_):
        raise AssertionError(f"took more than {seconds} s (a hang?)")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("kind", sorted(BASES))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_scenario_tables(kind, data, tmp_path):
    path, overrides = BASES[kind]
    base = Scenario.from_file(path).with_overrides(overrides)
    table = copy.deepcopy(base.data)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        keys = leaves(table)
        where = data.draw(st.sampled_from(keys), label="field")
        parent = table
        for name in where[:-1]:
            parent = parent[name]
        action = data.draw(st.sampled_from(["set", "set", "delete", "add"]), label="action")
        if action == "delete":
            del parent[where[-1]]
        elif action == "add":
            parent[data.draw(st.text(min_size=1, max_size=8), label="new key")] = data.draw(
                VALUES, label="value"
            )
        else:
            parent[where[-1]] = data.draw(VALUES, label="value")
        if not table:
            break
    scenario = Scenario(table, "fuzz.toml", "0" * 64, tmp_path)
    with time_limit(20):
        try:
            result = scenario.run(seed=0)
        except ValueError as exc:  # ScenarioError, ValidationError
            message = str(exc)
            assert message.startswith("fuzz.toml") and "\n" not in message.strip(), message
            assert "field '" in message or "override" in message, message
            event("clean error")
            return
    event("result")
    for name, value in result.metrics.items():
        assert (
            not isinstance(value, float)
            or math.isfinite(value)
            or (math.isinf(value) and "bound" in name)
        ), (name, value)
