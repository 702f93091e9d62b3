"""Fuzzing the command line: generated scenario, CSV, TNTP and results files and command lines.

Oracle (every case, run in a forked child with a 20 s limit and a 2 GiB address-space cap): exit 0
with finite figures that pass the Result invariants (tests/fuzz_strategies.py), or exit 2 with ONE
line ``dpgames: error: ...`` free of Python/numpy internals.  A traceback, exit 1, a hang, a
MemoryError or a crash fails the case.  ``DPGAMES_FUZZ=long`` runs many more random cases (see
fuzz_strategies.py).

The regression cases at the end are concrete inputs once seen to fail, one test each.
"""

from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from fuzz_strategies import (
    EXTREME_NUMBERS,
    DeepNest,
    check_exit,
    check_json_output,
    check_text_output,
    clean_error,
    fuzz_settings,
    leaf_paths,
    mutate,
    report,
    result_invariants,
    run_isolated,
    text_infinities_documented,
    toml_dumps,
    toml_value,
    wild_values,
)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
TNTP_DIR = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))
HAVE_TNTP = (TNTP_DIR / "Braess" / "Braess_net.tntp").exists()
BASES = {
    p.name: tomllib.loads(p.read_text())
    for p in sorted(SCENARIOS.glob("*.toml"))
    if HAVE_TNTP or "tntp" not in p.read_text()
}
HEAVY = {"anaheim.toml", "sioux_falls.toml", "grid.toml", "large_n.toml"}  # seconds per valid run
ENV = {"DPGAMES_TNTP_DIR": str(TNTP_DIR), "DPGAMES_DEBUG": ""}  # never the debug traceback


def cli(argv: list[str], cwd: Path, timeout: float = 20.0):
    """``dpgames ARGV`` in a forked child, in folder ``cwd``."""

    def call():
        from dpgames.cli import main

        os.chdir(cwd)
        return main(argv)

    return run_isolated(call, timeout=timeout, env=ENV)


def oracle(outcome, argv: list[str], folder: Path | None = None) -> str | None:
    problem = check_exit(outcome)
    if problem or outcome.value not in (0, None):
        return problem
    if argv and argv[0] == "run":
        if "--json" in argv:
            return check_json_output(outcome.stdout)
        problem = check_text_output(outcome.stdout)
        if problem and folder is not None:
            # a non-finite figure: the same run's JSON must document each one
            again = cli([*argv, "--json"], folder)
            return check_json_output(again.stdout) or text_infinities_documented(
                outcome.stdout, again.stdout
            )
        return problem
    return None


SESSION_TMP = Path(tempfile.mkdtemp(prefix="dpgames-fuzz-"))  # every case's folder; removed at exit
atexit.register(shutil.rmtree, SESSION_TMP, True)


def workdir() -> Path:
    folder = Path(tempfile.mkdtemp(dir=SESSION_TMP))
    shutil.copytree(SCENARIOS / "data", folder / "data")
    return folder


def describe(argv: list[str], folder: Path, files: list[str]) -> str:
    shown = []
    for name in files:
        path = folder / name
        try:
            text = path.read_bytes()[:3000].decode("utf-8", "replace")
        except OSError:
            continue
        shown.append(f"--- {name} ---\n{text}")
    return f"dpgames {' '.join(argv)}\n" + "\n".join(shown)


def cell_errors(argv: list[str], folder: Path) -> str | None:
    """A sweep that exits 0 may still record failed cells: their errors must be clean one-liners
    too."""
    if "--out" not in argv or argv.index("--out") + 1 >= len(argv):
        return None
    try:
        header, *lines = (folder / argv[argv.index("--out") + 1]).read_text().splitlines()
        # the kind's documented infinities apply to every cell
        kind = json.loads(header).get("kind")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("status") != "ok":
            problem = clean_error(str(record.get("error", "")))
            if problem:
                return f"CELL ERROR recorded by the sweep: {str(record.get('error'))[:400]!r} ({problem})"
        elif isinstance(record.get("metrics"), dict):
            problem = result_invariants(record["metrics"], kind)
            if problem:
                return f"{problem} (sweep cell {record.get('params')} seed {record.get('seed')})"
    return None


def run_case(
    argv: list[str], folder: Path, files: list[str], timeout: float = 20.0, note: str = ""
) -> None:
    try:
        outcome = cli(argv, folder, timeout)
        problem = oracle(outcome, argv, folder)
        if problem is None and argv and argv[0] == "sweep" and outcome.value in (0, None):
            problem = cell_errors(argv, folder)
        report(
            describe(argv, folder, files) + (f"\n--- changes ---\n{note}" if note else ""), problem
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# Scenario files


@fuzz_settings(20)
@given(st.data())
def test_fuzz_run_mutated_scenarios(data):
    """Every shipped scenario, with 1-3 fields replaced, deleted, added or wrapped."""
    name = data.draw(st.sampled_from(sorted(BASES)), label="base")
    tree = copy.deepcopy(BASES[name])
    changes = mutate(data, tree)
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    argv = ["run", "s.toml"] + data.draw(
        st.sampled_from([["--json"], ["--json"], [], ["--json", "--out", "o.json"]])
    )
    if data.draw(st.booleans(), label="seed flag"):
        argv += [
            "--seed",
            data.draw(st.sampled_from(["0", "1", "-1", str(2**64), str(10**30), "x"])),
        ]
    run_case(argv, folder, ["s.toml"], note="\n".join(changes))


@fuzz_settings(8)
@given(st.data())
def test_fuzz_run_raw_bytes(data):
    """Scenario files damaged at the byte level: truncated, spliced, non-UTF-8, a BOM, NUL bytes."""
    name = data.draw(st.sampled_from(sorted(set(BASES) - HEAVY)), label="base")
    raw = (SCENARIOS / name).read_bytes()
    cut = data.draw(st.integers(0, len(raw)), label="at")
    insert = data.draw(
        st.sampled_from(
            [
                b"",
                b"\x00",
                b"\xff\xfe",
                b"\xef\xbb\xbf",
                b"[",
                b"= 1\n",
                b"\n[x]\n",
                b"a = " + b"[" * 3000,
                b'"',
                b"\r",
                b"\\u0000",
            ]
        ),
        label="insert",
    )
    keep = data.draw(st.booleans(), label="keep tail")
    folder = workdir()
    (folder / "s.toml").write_bytes(raw[:cut] + insert + (raw[cut:] if keep else b""))
    run_case(["run", "s.toml", "--json"], folder, ["s.toml"])


@fuzz_settings(12)
@given(
    kind=st.sampled_from(["digital_goods", "nst_mix", "huang_kannan", "large_game", "x", ""]),
    body=st.dictionaries(
        st.sampled_from(
            [
                "population",
                "mechanism",
                "environment",
                "game",
                "audit",
                "baselines",
                "mediator",
                "scaling",
                "incentives",
                "sweep",
                "title",
                "seed",
            ]
        ),
        wild_values(2),
        max_size=4,
    ),
)
def test_fuzz_run_generated_scenarios(kind, body):
    """Scenario files made from scratch: a kind and random tables."""
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps({"kind": kind, **body}))
    run_case(["run", "s.toml", "--json"], folder, ["s.toml"])


PRIVACY_FIELDS = {
    "small_exact.toml": "mechanism.epsilon",
    "digital_goods.toml": "mechanism.epsilon",
    "continuous.toml": "mechanism.epsilon",
    "nst_pricing.toml": "mechanism.epsilon",
    "nst_facility_k2.toml": "mechanism.epsilon",
    "huang_kannan_public_project.toml": "mechanism.beta",
    "huang_kannan_facility.toml": "mechanism.beta",
    "pigou.toml": "mediator.epsilon",
}


@fuzz_settings(6)
@given(
    name=st.sampled_from(sorted(PRIVACY_FIELDS)),
    exponent=st.floats(-6, 6),
    scale_exponent=st.integers(0, 12),
    small=st.booleans(),
)
def test_fuzz_valid_extremes(name, exponent, scale_exponent, small):
    """Valid but extreme: eps (or beta) anywhere in [1e-6, 1e6], public-project values and costs
    scaled by up to 1e12, populations shrunk: the run is refused by a budget or prints figures
    passing every invariant."""
    tree = copy.deepcopy(BASES[name])
    section, key = PRIVACY_FIELDS[name].split(".")
    tree[section][key] = 10.0**exponent
    if name == "huang_kannan_public_project.toml":
        factor = 10.0**scale_exponent
        env = tree["environment"]
        env["cost"] = [c * factor for c in env["cost"]]
        env["valuations"] = {k: [v * factor for v in row] for k, row in env["valuations"].items()}
    if small and isinstance(tree.get("population", {}).get("n"), int):
        tree["population"]["n"] = 7
    tree.pop("scaling", None)
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(["run", "s.toml", "--json"], folder, ["s.toml"])


#: Degenerate but valid values: tiny and huge positive numbers, -0.0, empty and single-element
#: lists.
TINY_HUGE = [5e-324, 1e-300, 1e-12, 1.0, 1e12, 1e300, 1.7976931348623157e308]
DEGENERATE = {
    "digital_goods.toml": {
        "population.high": [-0.0, 0.0, 5e-324, 1.0],
        "population.low": [-0.0, 0.0],
        "population.n": [1, 2, 2**31, 2**63 - 1],
        "audit.lies": [2, 3, 2**31, 2**63 - 1, [0.0], [-0.0], [1.0], [5e-324], []],
        "mechanism.epsilon": TINY_HUGE,
    },
    "continuous.toml": {"audit.lies": [2, 2**31, 2**63 - 1, [0.5]], "mechanism.epsilon": TINY_HUGE},
    "anonymous_market_entry.toml": {
        "game.outside": [
            [-0.0, 0.0],
            [5e-324, 1.0],
            [1.0, 1.0],
            [0.5],
            [],
            [[0.5], 0.4],
            ["a", 0.5],
            -0.0,
            5e-324,
        ],
        "game.capacity": [-0.0, 0.0, 5e-324, 1e300],
        "game.players": [[0, 1], [1, 0]],
        "mechanism.rounds": [1, 2, 10**30],
    },
    "privacy_market_budget.toml": {
        "population.costs": [
            {"law": "uniform", "low": -0.0, "high": 5e-324},
            {"law": [1]},
            {"law": {"a": 1}},
            {"law": "uniform"},
            {},
        ],
        "population.bit_rate": [-0.0, 5e-324, 1.0],
        "population.n": [1, 2],
    },
    "allocation_small.toml": {
        "auction.alpha": [1e-4, 1e-3, 1.0],
        "auction.margin": [-0.0, 5e-324, 1e300],
        "market.supply": [1, [1], [1, 1, 1], 10**30],
        "market.bidders": [1, 2],
        "auction.epsilon": TINY_HUGE,
        "audit.bidders": [0, 1],
    },
    "pigou.toml": {"mediator.rounds": [1, 2, 2**62, 2**63, 10**30], "mediator.epsilon": TINY_HUGE},
    "nst_facility_k1.toml": {"scaling.n": [[1], [1, 1], [2] * 50, []], "population.n": [1, 2]},
}
DEGENERATE_CASES = [
    (name, field, value)
    for name, fields in DEGENERATE.items()
    for field, values in fields.items()
    for value in values
]


@fuzz_settings(25)
@given(case=st.sampled_from(DEGENERATE_CASES), second=st.sampled_from(DEGENERATE_CASES))
def test_fuzz_degenerate_values(case, second):
    """A degenerate but valid value (or two, in the same or another file's fields): exit 0 with a
    result that passes its invariants, or exit 2 with one line (a budget's refusal included),
    quickly."""
    name, field, value = case
    tree = copy.deepcopy(BASES[name])
    tree.pop("sweep", None)
    changes = [(field, value)] + ([second[1:]] if second[0] == name else [])
    for dotted, new in changes:
        section, key = dotted.split(".")
        tree.setdefault(section, {})[key] = new
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(["run", "s.toml", "--json"], folder, ["s.toml"], timeout=60.0, note=repr(changes))


# --------------------------------------------------------------------------------------------------
# CSV files

CSV_CELLS = st.one_of(
    st.sampled_from(
        [
            "0.5",
            "1",
            "0",
            "-1",
            "",
            "nan",
            "inf",
            "1e400",
            "5e-324",
            "1e308",
            "0x1p-3",
            "1_0",
            " 0.3 ",
            '"0.2"',
            "value",
            "1,5",
            "\x00",
            "é",
            "0.5;",
        ]
    ),
    st.floats(0, 1).map(repr),
    st.text(max_size=6),
)


@fuzz_settings(10)
@given(st.data())
def test_fuzz_csv_population(data):
    header = data.draw(
        st.sampled_from(["value", "id,value", "value,value", "", "\ufeffvalue", "a;b", "VALUE"])
    )
    rows = data.draw(
        st.lists(st.lists(CSV_CELLS, min_size=1, max_size=3).map(",".join), max_size=30)
    )
    if data.draw(st.integers(0, 9), label="huge field") == 0:
        rows.append("0." + "5" * 140_000)
    column = data.draw(
        st.sampled_from([None, "value", "id", "missing", "", 0, ["value"]]), label="column"
    )
    ending = data.draw(st.sampled_from(["\n", "\r\n", "\r"]))
    folder = workdir()
    body = ending.join([header, *rows])
    (folder / "bids.csv").write_bytes(body.encode("utf-8", "replace"))
    population = {"distribution": "csv", "path": "bids.csv"}
    if column is not None:
        population["column"] = column
    scenario = {
        "kind": "digital_goods",
        "seed": 1,
        "population": population,
        "mechanism": {"epsilon": 1.0, "alpha": 0.05},
        "baselines": {"rsop_samples": 50},
    }
    (folder / "s.toml").write_text(toml_dumps(scenario))
    run_case(["run", "s.toml", "--json"], folder, ["s.toml", "bids.csv"])


# --------------------------------------------------------------------------------------------------
# TNTP files

TNTP_TOKENS = [
    "0",
    "-1",
    "1",
    "2",
    "3",
    "4",
    "5",
    "1e300",
    "1e400",
    "inf",
    "nan",
    "-inf",
    "99999999999999999999",
    "1.5",
    "x",
    "",
    "1e-320",
    "0.0",
    str(2**63),
    "1,2",
]


def mutate_tntp(data, text: str) -> str:
    lines = text.splitlines()
    for _ in range(data.draw(st.integers(1, 4), label="tntp mutations")):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        op = data.draw(
            st.sampled_from(["token", "token", "token", "delete", "duplicate", "truncate"]),
            label="tntp op",
        )
        tokens = lines[i].replace("\t", " ").split(" ")
        if op == "token" and tokens:
            j = data.draw(st.integers(0, len(tokens) - 1), label="token")
            tokens[j] = data.draw(st.sampled_from(TNTP_TOKENS), label="new token")
            lines[i] = " ".join(tokens)
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])), label="cut")]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not HAVE_TNTP, reason="TNTP data not found (set DPGAMES_TNTP_DIR)")
@fuzz_settings(8)
@given(st.data())
def test_fuzz_tntp_files(data):
    folder = workdir()
    net = folder / "nets" / "Fz"
    net.mkdir(parents=True)
    which = data.draw(st.sampled_from(["net", "trips", "both"]), label="file")
    for part in ("net", "trips"):
        text = (TNTP_DIR / "Braess" / f"Braess_{part}.tntp").read_text()
        if which in (part, "both"):
            text = mutate_tntp(data, text)
        (net / f"Fz_{part}.tntp").write_text(text)
    scenario = copy.deepcopy(BASES["braess.toml"])
    scenario["game"] = {"source": "tntp", "network": "Fz", "path": "nets"}
    scenario["mediator"]["rounds"] = 40
    scenario["incentives"] = {"enabled": False}
    (folder / "s.toml").write_text(toml_dumps(scenario))
    run_case(
        ["run", "s.toml", "--json"],
        folder,
        ["s.toml", "nets/Fz/Fz_net.tntp", "nets/Fz/Fz_trips.tntp"],
    )


# --------------------------------------------------------------------------------------------------
# Sweeps and results files

SMALL_SWEEP = {
    "kind": "digital_goods",
    "title": "fuzz",
    "seed": 7,
    "population": {"distribution": "uniform", "n": 30, "low": 0.0, "high": 1.0},
    "mechanism": {"epsilon": 0.5, "prices": "grid"},
    "baselines": {"posted_price": 0.5, "rsop_samples": 20},
    "audit": {"enabled": True, "lies": "auto", "beta": 0.05},
    "sweep": {"seeds": 2, "epsilon": [0.5, 1.0], "summary": ["revenue_over_opt"]},
}
SET_VALUES = [
    "0.1,0.5",
    "1",
    "geomspace:1e-6:1e6:5",
    "1e-6,1e6",
    "range:1:3:1",
    "3,1000",
    "range:0:1e308:1e-308",
    "range:1:4:1",
    "linspace:0.1:1:3",
    "geomspace:1e-3:1:3",
    "geomspace:0:1:3",
    "linspace:0:1:0",
    "range:1:10:0",
    "a,b",
    "",
    "nan",
    "inf",
    "1e400",
    ",",
    "[1]",
    "range:1:1000000000:1",
    "linspace:0:1:1000000000",
    "0.5,0.5",
    "true",
    "1979-05-27",
    "{a=1}",
    "range:5:1:1",
    "range:1:2",
    "geomspace:1:-1:3",
]
SET_NAMES = [
    "epsilon",
    "mechanism.epsilon",
    "population.n",
    "n",
    "alpha",
    "mechanism.alpha",
    "seed",
    "kind",
    "population",
    "audit.lies",
    "nope",
    "mechanism.epsilon.x",
    "",
    "baselines.rsop_samples",
    "title",
]


@fuzz_settings(12)
@given(st.data())
def test_fuzz_sweep_command(data):
    tree = copy.deepcopy(SMALL_SWEEP)
    if data.draw(st.booleans(), label="mutate file"):
        mutate(data, tree, max_mutations=2)
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    argv = ["sweep", "s.toml", "--workers", "1", "--no-progress", "--out", "r.jsonl"]
    for _ in range(data.draw(st.integers(0, 2), label="sets")):
        argv += [
            "--set",
            f"{data.draw(st.sampled_from(SET_NAMES))}={data.draw(st.sampled_from(SET_VALUES))}",
        ]
    if data.draw(st.booleans(), label="seeds"):
        argv += [
            "--seeds",
            data.draw(st.sampled_from(["1", "2", "0", "-1", "x", "1000000000", str(2**64)])),
        ]
    if data.draw(st.booleans(), label="seed"):
        argv += ["--seed", data.draw(st.sampled_from(["0", "5", str(2**128), "-3"]))]
    if data.draw(st.booleans(), label="summary"):
        argv += [
            "--summary",
            data.draw(
                st.sampled_from(["revenue_over_opt", "nope", ",", "opt,epsilon", "price_set"])
            ),
        ]
    run_case(argv, folder, ["s.toml"])


def base_results(folder: Path) -> list[dict]:
    """The records of a real two-cell results file of SMALL_SWEEP, made once per session."""
    cache = SESSION_TMP / "base.results.jsonl"
    if not cache.exists():
        tree = copy.deepcopy(SMALL_SWEEP)
        tree["sweep"]["seeds"] = 1
        (folder / "base.toml").write_text(toml_dumps(tree))
        outcome = cli(
            ["sweep", "base.toml", "--workers", "1", "--no-progress", "--out", str(cache)],
            folder,
            60,
        )
        assert outcome.value in (0, None) and cache.exists(), outcome
    return [json.loads(line) for line in cache.read_text().splitlines()]


RECORD_VALUES = st.one_of(
    st.sampled_from(
        [None, "x", [], {}, [1, 2], 1.5, -1, 2**70, float("nan"), float("inf"), "ok", "error", True]
    ),
    wild_values(1).filter(lambda v: not isinstance(v, DeepNest) and not hasattr(v, "isoformat")),
)


def mutate_records(data, records: list) -> list:
    """Damage a results file's parsed lines: drop/retype keys, add junk records."""
    for _ in range(data.draw(st.integers(1, 3), label="record mutations")):
        i = data.draw(st.integers(0, len(records) - 1), label="record")
        record = records[i]
        op = data.draw(
            st.sampled_from(["drop", "retype", "retype", "replace", "add", "nested"]), label="rop"
        )
        if op == "replace":
            records[i] = data.draw(RECORD_VALUES, label="whole record")
        elif op == "add":
            records.insert(i, data.draw(RECORD_VALUES, label="new record"))
        elif isinstance(record, dict) and record:
            key = data.draw(st.sampled_from(sorted(record)), label="key")
            if op == "drop":
                del record[key]
            elif op == "nested" and isinstance(record[key], dict) and record[key]:
                sub = data.draw(st.sampled_from(sorted(record[key])), label="subkey")
                record[key][sub] = data.draw(RECORD_VALUES, label="subvalue")
            else:
                record[key] = data.draw(RECORD_VALUES, label="value")
    return records


@fuzz_settings(15)
@given(st.data())
def test_fuzz_results_files(data):
    """Damaged results files given to ``dpgames plot`` and to ``dpgames sweep --resume``."""
    folder = workdir()
    records = mutate_records(data, copy.deepcopy(base_results(folder)))
    text = "\n".join(json.dumps(r, default=str) for r in records) + "\n"
    if data.draw(st.integers(0, 5), label="tear") == 0:
        text = text[: data.draw(st.integers(0, len(text)), label="cut")]
    (folder / "r.jsonl").write_text(text)
    if data.draw(st.booleans(), label="resume"):
        tree = copy.deepcopy(SMALL_SWEEP)
        tree["sweep"]["seeds"] = 1
        (folder / "base.toml").write_text(toml_dumps(tree))
        argv = [
            "sweep",
            "base.toml",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            "r.jsonl",
            "--resume",
        ]
    else:
        argv = [
            "plot",
            "r.jsonl",
            "--x",
            data.draw(st.sampled_from(["epsilon", "mechanism.epsilon", "seed", "nope"])),
            "--y",
            data.draw(
                st.sampled_from(["revenue_over_opt", "opt,revenue_over_opt", "price_set", "nope"])
            ),
            "--out",
            "p.png",
        ]
    run_case(argv, folder, ["r.jsonl"])


# --------------------------------------------------------------------------------------------------
# Command lines

ARG_TOKENS = [
    "run",
    "sweep",
    "plot",
    "kinds",
    "--json",
    "--out",
    "--seed",
    "--seeds",
    "--set",
    "--workers",
    "--resume",
    "--summary",
    "--x",
    "--y",
    "--log-x",
    "--no-progress",
    "--dask-timeout",
    "-h",
    "--help",
    "s.toml",
    "r.jsonl",
    "missing.toml",
    "data",
    "/dev/null",
    "/dev/zero",
    "fifo",
    "0",
    "-1",
    "1e400",
    "nan",
    str(10**30),
    "epsilon=0.1",
    "=",
    "",
    "--",
    "-",
    "x" * 300,
    "\x00",
    "é",
]


@fuzz_settings(20)
@given(st.lists(st.sampled_from(ARG_TOKENS), min_size=0, max_size=7))
def test_fuzz_command_lines(tokens):
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(SMALL_SWEEP))
    os.mkfifo(folder / "fifo")
    if "--workers" not in tokens and "sweep" in tokens:
        tokens = tokens + ["--workers", "1"]
    if "--help" in tokens or "-h" in tokens or "\x00" in tokens:
        tokens = [t for t in tokens if t not in ("--help", "-h", "\x00")]
    run_case(tokens, folder, [], timeout=20)


# --------------------------------------------------------------------------------------------------
# Regression cases: inputs once seen to fail, each exact.


def scenario_case(base: str, changes: dict, argv_extra=("--json",)) -> tuple[dict, list[str]]:
    tree = copy.deepcopy(BASES[base])
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        node = tree
        for p in parents:
            node = node.setdefault(p, {})
        if value is _DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return tree, ["run", "s.toml", *argv_extra]


_DELETE = object()

SCENARIO_REGRESSIONS = {
    "digital_goods epsilon=1000 (privacy loss -1)": (
        "digital_goods.toml",
        {"mechanism.epsilon": 1000},
    ),
    "small_exact epsilon=1000 (NaN gains)": ("small_exact.toml", {"mechanism.epsilon": 1000.0}),
    "small_exact epsilon=500": ("small_exact.toml", {"mechanism.epsilon": 500.0}),
    "kind as a list (unhashable)": ("small_exact.toml", {"kind": ["digital_goods"]}),
    "alpha=5e-324": ("small_exact.toml", {"mechanism.alpha": 5e-324}),
    "alpha=5e-8 pricing (MemoryError)": ("nst_pricing.toml", {"mechanism.alpha": 5e-8}),
    "nst_mix eps=2**63 (math range error)": ("nst_pricing.toml", {"mechanism.epsilon": 2**63}),
    "nst_mix with one type (IndexError)": ("nst_pricing.toml", {"environment.types": [0.5]}),
    "distribution=weights without weights": (
        "nst_facility_k2.toml",
        {"population.distribution": "weights"},
    ),
    "epsilon=5e-324 (ZeroDivisionError)": ("digital_goods.toml", {"mechanism.epsilon": 5e-324}),
    "epsilon=5e5 auction (MemoryError)": ("digital_goods.toml", {"mechanism.epsilon": 5e5}),
    "epsilon=1e6 default grid": ("digital_goods.toml", {"mechanism.epsilon": 1e6}),
    "n=10**9 bidders": ("digital_goods.toml", {"population.n": 10**9}),
    "rsop_samples=10**9": ("digital_goods.toml", {"baselines.rsop_samples": 10**9}),
    "mediator rounds=10**8": ("pigou.toml", {"mediator.rounds": 10**8}),
    "grid rows=10**12": ("grid.toml", {"game.rows": 10**12}),
    "grid rows=2**31": ("grid.toml", {"game.rows": 2**31}),
    "pigou free=[0,0] (ZeroDivisionError)": ("pigou.toml", {"game.free": [0.0, 0.0]}),
    "huang_kannan beta=1e-10 (not truthful)": (
        "huang_kannan_public_project.toml",
        {"mechanism.beta": 1e-10},
    ),
    "huang_kannan beta=1e-12": ("huang_kannan_facility.toml", {"mechanism.beta": 1e-12}),
    "huang_kannan beta=1e6": ("huang_kannan_public_project.toml", {"mechanism.beta": 1e6}),
    "incentives seeds=10**9": ("pigou.toml", {"incentives.seeds": 10**9}),
    "path outside the folder (/etc/passwd)": (
        "from_csv.toml",
        {"population.path": "../../../../../../etc/passwd"},
    ),
    "deep nesting (RecursionError)": ("small_exact.toml", {"extra": DeepNest(100000, False)}),
    "deep nested tables": ("small_exact.toml", {"extra": DeepNest(100000, True)}),
    "datetime value": (
        "small_exact.toml",
        {"mechanism.epsilon": __import__("datetime").date(2026, 1, 1)},
    ),
    "n = 10**400": ("digital_goods.toml", {"population.n": 10**400}),
    # found by test_fuzz_valid_extremes (fuzz_findings.md E1, E2, B1)
    "B1 epsilon=17468.76 default grid (memory budget)": (
        "digital_goods.toml",
        {"mechanism.epsilon": 17468.760497747327},
    ),
    "E1 huang_kannan facility beta=3.7e5, n=7": (
        "huang_kannan_facility.toml",
        {"population.n": 7, "mechanism.beta": 371580.05485050124},
    ),
    "E2 huang_kannan public project values x 1e10": (
        "huang_kannan_public_project.toml",
        {
            "mechanism.beta": 26.210305848421367,
            "environment.cost": [0.0, 3e11, 5e11, 8e11],
            "environment.valuations": {
                "family": [0.0, 1e10, 3e9, 1.2e10],
                "student": [0.0, 2e9, 1e10, 1.1e10],
                "retiree": [0.0, 6e9, 6e9, 9e9],
            },
        },
    ),
}


@pytest.mark.parametrize("name", list(SCENARIO_REGRESSIONS))
def test_regression_scenario(name):
    base, changes = SCENARIO_REGRESSIONS[name]
    if base not in BASES:
        pytest.skip("TNTP data not found")
    tree, argv = scenario_case(base, changes)
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(argv, folder, ["s.toml"])


@pytest.mark.parametrize(
    "path", ["../../../../../../etc/passwd", "/etc/passwd", "/proc/self/environ"]
)
def test_regression_data_path_confined(path):
    """A scenario's data path outside its folder is refused without reading it (nothing of it is
    echoed)."""
    folder = workdir()
    try:
        tree, argv = scenario_case("from_csv.toml", {"population.path": path})
        (folder / "s.toml").write_text(toml_dumps(tree))
        outcome = cli(argv, folder)
        assert check_exit(outcome) is None, check_exit(outcome)
        assert outcome.value == 2, (
            f"exit {outcome.value}: a file outside the scenario's folder was used"
        )
        assert ":x:" not in outcome.stderr and "root" not in outcome.stderr, outcome.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_regression_csv_field_over_128k():
    folder = workdir()
    (folder / "bids.csv").write_text("value\n0.5\n0." + "5" * 140_000 + "\n")
    tree, argv = scenario_case("from_csv.toml", {"population.path": "bids.csv"})
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(argv, folder, ["s.toml"])


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/null"])
@pytest.mark.parametrize("what", ["scenario", "csv", "plot", "resume"])
def test_regression_special_files(special, what):
    folder = workdir()
    if special == "fifo":
        os.mkfifo(folder / "fifo")
    if what == "scenario":
        argv = ["run", special]
    elif what == "plot":
        argv = ["plot", special, "--x", "epsilon", "--y", "opt"]
    elif what == "resume":
        (folder / "s.toml").write_text(toml_dumps(SMALL_SWEEP))
        argv = ["sweep", "s.toml", "--workers", "1", "--no-progress", "--resume", "--out", special]
    else:
        tree, argv = scenario_case("from_csv.toml", {"population.path": special})
        (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(argv, folder, [], timeout=20)


@pytest.mark.skipif(not HAVE_TNTP, reason="TNTP data not found")
@pytest.mark.parametrize("token", ["1e300", "inf", "1e400", "99999999999999999999"])
@pytest.mark.parametrize("where", ["node", "metadata"])
def test_regression_tntp_extreme_numbers(token, where):
    folder = workdir()
    net = folder / "nets" / "Fz"
    net.mkdir(parents=True)
    text = (TNTP_DIR / "Braess" / "Braess_net.tntp").read_text()
    if where == "node":
        text = text.replace("\t4\t2\t1\t100", f"\t{token}\t2\t1\t100")
    else:
        text = text.replace("<NUMBER OF LINKS> 5", f"<NUMBER OF LINKS> {token}")
    (net / "Fz_net.tntp").write_text(text)
    shutil.copy(TNTP_DIR / "Braess" / "Braess_trips.tntp", net / "Fz_trips.tntp")
    tree, argv = scenario_case(
        "braess.toml",
        {
            "game.path": "nets",
            "game.network": "Fz",
            "mediator.rounds": 50,
            "incentives.enabled": False,
        },
    )
    (folder / "s.toml").write_text(toml_dumps(tree))
    try:
        outcome = cli(argv, folder)
        assert check_exit(outcome) is None, check_exit(outcome)
        assert outcome.value == 2, f"a TNTP {where} of {token} was accepted (exit {outcome.value})"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


SWEEP_REGRESSIONS = {
    "range to 1e308 step 1e-308 (OverflowError)": (["--set", "epsilon=range:0:1e308:1e-308"], {}),
    "datetime in the sweep grid (not JSON serialisable)": (
        [],
        {"sweep.epsilon": [__import__("datetime").date(2026, 1, 1)]},
    ),
    "seeds = 10**9": ([], {"sweep.seeds": 10**9}),
}


@pytest.mark.parametrize("name", list(SWEEP_REGRESSIONS))
def test_regression_sweep(name):
    extra, changes = SWEEP_REGRESSIONS[name]
    tree = copy.deepcopy(SMALL_SWEEP)
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        tree[section][key] = value
    folder = workdir()
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(
        ["sweep", "s.toml", "--workers", "1", "--no-progress", "--out", "r.jsonl", *extra],
        folder,
        ["s.toml"],
    )


def test_regression_sweep_results_on_a_device():
    """--out /dev/full (a full disk; not a regular file): one clean line, never a 16-line OSError
    traceback."""
    folder = workdir()
    tree = copy.deepcopy(SMALL_SWEEP)
    tree["sweep"]["seeds"] = 1
    (folder / "s.toml").write_text(toml_dumps(tree))
    run_case(
        ["sweep", "s.toml", "--workers", "1", "--no-progress", "--out", "/dev/full"],
        folder,
        ["s.toml"],
    )


RESULTS_REGRESSIONS = {
    "record without params": lambda r: r[1].pop("params"),
    "record without seed": lambda r: r[1].pop("seed"),
    "record without status": lambda r: r[1].pop("status"),
    "string record": lambda r: r.__setitem__(1, "a string"),
    "params as a list": lambda r: r[1].__setitem__("params", [1, 2]),
    "string seed": lambda r: r[1].__setitem__("seed", "zero"),
    "failed cell without error": lambda r: r[1].__setitem__("status", "error"),
}


@pytest.mark.parametrize("command", ["plot", "resume"])
@pytest.mark.parametrize("name", list(RESULTS_REGRESSIONS))
def test_regression_results_file(name, command):
    folder = workdir()
    records = copy.deepcopy(base_results(folder))
    RESULTS_REGRESSIONS[name](records)
    (folder / "r.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    if command == "plot":
        argv = ["plot", "r.jsonl", "--x", "epsilon", "--y", "revenue_over_opt", "--out", "p.png"]
    else:
        tree = copy.deepcopy(SMALL_SWEEP)
        tree["sweep"]["seeds"] = 1
        (folder / "base.toml").write_text(toml_dumps(tree))
        argv = [
            "sweep",
            "base.toml",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            "r.jsonl",
            "--resume",
        ]
    run_case(argv, folder, ["r.jsonl"])


def test_regression_resume_retries_failed_cells():
    """A failed cell recorded in the results file is run again by --resume (or the user is told)."""
    folder = workdir()
    try:
        records = copy.deepcopy(base_results(folder))
        failed = records[1]
        records[1] = {
            "params": failed["params"],
            "seed": failed["seed"],
            "status": "error",
            "error": "killed",
        }
        (folder / "r.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
        tree = copy.deepcopy(SMALL_SWEEP)
        tree["sweep"]["seeds"] = 1
        (folder / "base.toml").write_text(toml_dumps(tree))
        argv = [
            "sweep",
            "base.toml",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            "r.jsonl",
            "--resume",
        ]
        outcome = cli(argv, folder)
        assert check_exit(outcome) is None, check_exit(outcome)
        lines = [json.loads(line) for line in (folder / "r.jsonl").read_text().splitlines()]
        last = {json.dumps([r["params"], r["seed"]], sort_keys=True): r for r in lines[1:]}
        key = json.dumps([failed["params"], failed["seed"]], sort_keys=True)
        said = "fail" in (outcome.stdout + outcome.stderr).lower()
        assert last[key]["status"] == "ok" or said, (
            "a failed cell was neither re-run nor reported by --resume"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_toml_writer_round_trips():
    """The fuzzers' TOML writer writes what it is given (so a failure is the library's, not the
    writer's)."""
    data = {"a": [1, 2.5, "x", True, {"b": -0.0}], "t": {"n": 10**400, "e": 5e-324}, "s": 'é"\\\n'}
    assert tomllib.loads(toml_dumps(data)) == data
    assert toml_value(float("inf")) == "inf" and leaf_paths({"a": [1]}) == [("a",), ("a", 0)]
    assert all(toml_value(x) for x in EXTREME_NUMBERS)
