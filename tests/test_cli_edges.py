"""The command line at its edges: a bad command line and an output cut short by its reader.

Oracles: the exit code and stderr the CLI's contract states (``dpgames --help``: 2 and one line on
stderr for invalid input), and the shell's convention for a writer whose reader went away (128 +
SIGPIPE)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from dpgames.cli import main
from dpgames.scenarios import Scenario, ScenarioError

# (argv, what the one line must name)
BAD_COMMAND_LINES = [
    (["run", "x.toml", "--seed", "abc"], ["--seed", "'abc'", "dpgames run --help"]),
    (["rnu", "x.toml"], ["'rnu'", "'run'", "'check'", "dpgames --help"]),
    (["run"], ["file", "dpgames run --help"]),
    (["sweep", "x.toml", "--seeds", "0"], ["--seeds", "'0'", "dpgames sweep --help"]),
    (["plot", "r.jsonl", "--x", "epsilon"], ["--y", "dpgames plot --help"]),
    (["run", "x.toml", "--rows", "-1"], ["--rows", "dpgames run --help"]),
    (["check", "x.toml", "--no-such-option"], ["--no-such-option", "dpgames --help"]),
]


@pytest.mark.parametrize(
    "argv, named", BAD_COMMAND_LINES, ids=[" ".join(a) for a, _ in BAD_COMMAND_LINES]
)
def test_a_bad_command_line_is_one_line_naming_the_argument(capsys, argv, named):
    """Like every other invalid input: exit 2 and ONE line on stderr (argparse printed its usage
    block first), naming the argument, the bad value or the allowed ones, and where the options are
    listed."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpgames: error: "), captured.err
    for word in named:
        assert word in lines[0], (word, lines[0])


@pytest.mark.slow
def test_output_cut_short_by_its_reader_is_not_reported_as_an_error(tmp_path):
    """`dpgames run FILE --json | head`: the reader stops early; the CLI stops quietly, like any
    Unix filter, with a shell's code for a broken pipe (it printed "dpgames: error: [Errno 32]
    Broken pipe")."""
    path = tmp_path / "big.toml"  # 2,000 prices: the JSON (~140 KB) is larger than a pipe's buffer
    path.write_text(
        Scenario.from_dict(
            {
                "kind": "digital_goods",
                "seed": 1,
                "population": {"distribution": "uniform", "n": 50},
                "mechanism": {"epsilon": 1.0, "alpha": 0.0005},
                "baselines": {"rsop_samples": 50},
                "audit": {"enabled": False},
            }
        ).to_toml()
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpgames.cli", "run", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(10) == b'{\n  "kind"'
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert err == ""
    assert code == 128 + signal.SIGPIPE


def test_check_states_the_whole_runs_peak_memory(capsys):
    """`dpgames check` compares the run with --max-memory: its last line must say the figure it
    compares (the largest stage's estimate, as Budget.check_all does), not only the work."""
    from pathlib import Path

    from dpgames.scenarios.budget import fmt_bytes

    path = Path(__file__).resolve().parents[1] / "scenarios" / "pigou.toml"
    assert main(["check", str(path)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    parsed = Scenario.from_file(path).parse()
    peak = max(stage.memory for stage in parsed.estimate())
    assert last.startswith(f"whole run: about {fmt_bytes(peak)} at its peak"), last


@pytest.mark.parametrize(
    "name", ["small_exact.toml", "from_csv.toml", "digital_goods.toml", "continuous.toml"]
)
def test_checks_memory_estimate_is_the_runs_peak_within_a_factor_4(name):
    """What `dpgames check` compares with --max-memory (the largest stage's estimate) is at least
    the peak the run allocates (tracemalloc: numpy arrays and Python objects), so the budget never
    lets through a run that needs more; and honest: at most 4 times it (it was a fixed 134 MB: 63
    times small_exact's 2.1 MB).  benchmarks/bench_check_memory.py prints the ratios of every
    shipped scenario."""
    from pathlib import Path

    from memory_peak import estimate_and_peak

    estimate, peak = estimate_and_peak(
        Scenario.from_file(Path(__file__).resolve().parents[1] / "scenarios" / name)
    )
    assert peak <= estimate <= 4 * peak


def test_tables_dir_that_is_a_file_is_named_as_such(tmp_path, capsys):
    """It said "--tables-dir x/price_law.csv: cannot write (File exists)", naming a file that does
    not exist."""
    (tmp_path / "x").write_text("")
    path = tmp_path / "s.toml"
    path.write_text(
        Scenario.from_dict(
            {
                "kind": "digital_goods",
                "seed": 1,
                "mechanism": {"epsilon": 1.0},
                "population": {"distribution": "list", "values": [0.2, 0.6]},
            }
        ).to_toml()
    )
    assert main(["run", str(path), "--tables-dir", str(tmp_path / "x")]) == 2
    captured = capsys.readouterr()
    assert (
        captured.err
        == f"dpgames: error: --tables-dir {tmp_path / 'x'}: not a folder (it is a file)\n"
    )
    assert captured.out == ""  # refused before the run


def test_a_misspelt_summary_metric_after_the_sweep_says_the_cells_are_saved(tmp_path, capsys):
    """The metric names are known only once cells ran: the error came after all the work with
    nothing about the results (and the summary CSV was not written).  Now: one line, the cells'
    file, the CSV."""
    path = tmp_path / "s.toml"
    path.write_text(
        Scenario.from_dict(
            {
                "kind": "digital_goods",
                "seed": 1,
                "population": {"distribution": "list", "values": [0.2, 0.6, 0.9]},
                "mechanism": {"epsilon": 1.0},
                "sweep": {"epsilon": [0.5, 1.0]},
            }
        ).to_toml()
    )
    out = tmp_path / "r.jsonl"
    argv = [
        "sweep",
        str(path),
        "--seeds",
        "1",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
        "--summary",
        "revenue_over_opts",
    ]
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "dpgames: error: no metric 'revenue_over_opts'"
    ), lines
    assert f"2 cells in {out}" in lines[0] and str(out.with_suffix(".summary.csv")) in lines[0]
    assert out.with_suffix(".summary.csv").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    "old, new, expected",
    [
        # a misspelt required field: it said only "field 'mechanism.epsilon': is required"
        (
            "epsilon = 0.5",
            "epsilnon = 0.5",
            "field 'mechanism.epsilon': is required (found 'epsilnon': a typo?)",
        ),
        # a whole number written as a TOML float: it said "must be a whole number >= 1 (got 1000.0)"
        (
            "n = 40",
            "n = 1e3",
            "field 'population.n': must be a whole number >= 1 (got 1000.0, a float in TOML",
        ),
    ],
)
def test_typos_a_user_makes_are_named_in_the_one_line(tmp_path, capsys, old, new, expected):
    text = Scenario.from_dict(
        {
            "kind": "digital_goods",
            "seed": 1,
            "mechanism": {"epsilon": 0.5},
            "population": {"distribution": "uniform", "n": 40},
        }
    ).to_toml()
    assert old in text
    path = tmp_path / "typo.toml"
    path.write_text(text.replace(old, new))
    assert main(["run", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dpgames: error: {path}: {expected}"), lines


def test_a_file_without_a_kind_is_told_the_kind_is_required(tmp_path, capsys):
    """It said "field 'kind': must be one of ... (got None)": a missing key reads as a wrong
    value."""
    path = tmp_path / "s.toml"
    path.write_text("seed = 1\n[mechanism]\nepsilon = 1.0\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "field 'kind': is required: one of " in err
        and "'digital_goods'" in err
        and "None" not in err
    )


def test_check_states_the_time_at_the_calibrated_rate(capsys, monkeypatch, tmp_path):
    """`dpgames check` turns the work into one time: work x the calibrated seconds per operation
    above 1e9 operations (here pinned to a known rate, 5e-9 s), the nominal 1e-9 s below 1e8."""
    from pathlib import Path

    from dpgames.scenarios import calibration

    monkeypatch.setattr(calibration, "seconds_per_operation", lambda: 5e-9)
    shipped = Path(__file__).resolve().parents[1] / "scenarios" / "digital_goods.toml"
    text = shipped.read_text()
    big = text.replace("n = 1000 ", "n = 400000 ", 1)
    assert big != text
    target = tmp_path / "big.toml"
    target.write_text(big)
    assert main(["check", str(target), "--max-work", "1e12"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    parsed = Scenario.from_file(target).parse()
    work = sum(stage.work for stage in parsed.estimate())
    assert work > calibration.TIMED_ABOVE
    seconds = work * 5e-9
    shown = f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"
    assert f"about {shown} (calibrated on this machine" in last, last
    assert main(["check", str(shipped)]) == 0
    assert "(at 1e9 operations a second)" in capsys.readouterr().out


def test_an_output_that_cannot_be_written_is_a_failing_system_not_bad_input(
    tmp_path, capsys, monkeypatch
):
    """A full disk while writing --out: exit code 1 (not 2: the input was fine), one line naming the
    option."""
    import errno
    from pathlib import Path

    path = tmp_path / "s.toml"
    path.write_text(
        Scenario.from_dict(
            {
                "kind": "digital_goods",
                "seed": 1,
                "mechanism": {"epsilon": 1.0},
                "population": {"distribution": "list", "values": [0.2, 0.6]},
            }
        ).to_toml()
    )

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"dpgames: error: --out {out}: cannot write (No space left on device)\n"


def test_internal_errors_are_told_by_their_type_not_their_wording():
    from dpgames.cli import OutputError, classify_error
    from dpgames.scenarios import InternalError, InvariantError

    code, text = classify_error(InvariantError("k", "gain", 2.0, "a gain is at most 1"))
    assert code == 1 and text.startswith("dpgames: internal error") and "DPGAMES_DEBUG" in text
    assert classify_error(InternalError("a kind's run returned no Result"))[0] == 1
    # a message that merely starts like one is an unexpected error like any other, reported as a bug
    code, text = classify_error(RuntimeError("internal error, says the text"))
    assert (
        code == 1
        and text.startswith("dpgames: internal error (a bug in dpgames")
        and "RuntimeError" in text
    )
    assert classify_error(OutputError("--out x: cannot write (Disk quota exceeded)")) == (
        1,
        "dpgames: error: --out x: cannot write (Disk quota exceeded)",
    )
    assert classify_error(ScenarioError("s.toml: field 'kind': unknown", "kind"))[0] == 2
