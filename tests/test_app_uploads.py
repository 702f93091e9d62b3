"""Uploads to the Streamlit app (streamlit.testing.v1.AppTest): an uploaded scenario never reads the
server's files, and every malformed upload ends in the red one-line error box, never a page
exception.

Oracles: ``dpgames run`` (run_scenario) on the same files laid out on disk, and the absence of the
server file's contents (or of the figures they would produce) from the page.
"""

from __future__ import annotations

import json

import pytest

from app_session import ROOT, AppTest, start
from dpgames import run_scenario

SCENARIOS = ROOT / "scenarios"

CSV_SCENARIO = (
    'kind = "digital_goods"\nseed = 3\n[population]\ndistribution = "csv"\npath = "{path}"\n'
    "[mechanism]\nepsilon = 1.0\nalpha = 0.05\n"
)


def uploader(at: AppTest, key: str):
    found = [u for u in at.get("file_uploader") if u.key == key]
    assert found, f"no uploader {key!r}; have {[u.key for u in at.get('file_uploader')]}"
    return found[0]


def error_box(at: AppTest) -> str:
    """The page's error: exactly the red box, one line, no exception."""
    assert not at.exception, [e.value for e in at.exception]
    assert at.error, "expected an error box"
    text = " ".join(e.value for e in at.error)
    assert "\n" not in text.strip() and "Traceback" not in text
    return text


def run_upload(toml: bytes, data: list[tuple[str, bytes]] = (), name: str = "mine.toml") -> AppTest:
    """The Scenarios page: upload ``toml`` (and data files with it), press Run."""
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("upload a file...").run()
    uploader(at, "upload.sc_toml").set_value((name, toml, "text/plain"))
    at.run()
    if data:
        uploader(at, "upload.sc_data").set_value([(n, d, "text/plain") for n, d in data])
        at.run()
    if not at.exception and not at.error:
        at.button(key="button.sc_run").click().run()
    return at


def metric_tables(at: AppTest) -> list:
    """The page's tables of a Result's metrics (other tables, e.g. the installed kinds, left
    out)."""
    return [
        d.value for d in at.dataframe if "metric" in d.value.columns and "name" in d.value.columns
    ]


def shown_metric(at: AppTest, name: str) -> str:
    tables = metric_tables(at)
    assert tables, "no metrics shown"
    frame = tables[0]
    row = frame[frame["name"] == name]
    assert len(row) == 1, list(frame["name"])
    return row["value"].iloc[0]


# ---------------------------------------------------------------- confinement


@pytest.mark.parametrize(
    "path",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "README.md",
        "pyproject.toml",
        "../README.md",
        "/dev/zero",
    ],
)
def test_an_uploaded_scenario_cannot_name_a_server_file(path):
    at = run_upload(CSV_SCENARIO.format(path=path).encode())
    message = error_box(at)
    assert "field 'population.path'" in message
    assert (
        "root:" not in message
        and "[project]" not in message
        and "dpgames" not in message.split("'")[0]
    )
    assert not metric_tables(at)  # no metrics: nothing of the file reached a figure


def test_overrides_of_a_shipped_scenario_are_confined_too():
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("from_csv.toml")
    at.text_area(key="sc.overrides").set_value('population.path = "../../../../etc/passwd"').run()
    at.button(key="button.sc_run").click().run()
    message = error_box(at)
    assert (
        "field 'population.path'" in message
        and "outside the folders" in message
        and "root:" not in message
    )


def test_a_server_file_of_numbers_does_not_leak_through_the_metrics(tmp_path):
    """A file of numbers on the server: refused, so neither its maximum (OPT) nor its sum is
    shown."""
    secret = tmp_path / "secret.csv"
    secret.write_text("0.123456\n0.654321\n")
    at = run_upload(CSV_SCENARIO.format(path=secret).encode())
    assert "outside the folders" in error_box(at)
    assert not metric_tables(at)
    assert str(tmp_path) in error_box(at)  # the path it named, not its contents
    assert "0.654321" not in error_box(at)


def test_relative_paths_do_not_resolve_against_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "bids.csv").write_text("value\n0.5\n")
    monkeypatch.chdir(tmp_path)
    at = run_upload(CSV_SCENARIO.format(path="bids.csv").encode())
    message = error_box(at)
    assert "file 'bids.csv' not found" in message and str(tmp_path) not in message


def test_an_upload_may_use_the_shipped_example_data():
    """scenarios/from_csv.toml uploaded as is (path = "data/example_bids.csv"): the same figures as
    `dpgames run scenarios/from_csv.toml`."""
    path = SCENARIOS / "from_csv.toml"
    expected = run_scenario(path)
    at = run_upload(path.read_bytes(), name="from_csv.toml")
    assert not at.exception and not at.error, [e.value for e in at.error]
    for name in ("opt", "expected_revenue"):
        assert float(shown_metric(at, name)) == pytest.approx(expected.metrics[name], rel=1e-5)


def test_an_upload_reads_the_csv_uploaded_with_it(tmp_path):
    """The uploaded CSV is used: the figures equal `dpgames run` on the same two files on disk."""
    bids = b"value\n0.9\n0.8\n0.3\n0.7\n0.75\n"
    toml = CSV_SCENARIO.format(path="bids.csv")
    (tmp_path / "bids.csv").write_bytes(bids)
    (tmp_path / "s.toml").write_text(toml)
    expected = run_scenario(tmp_path / "s.toml")
    at = run_upload(toml.encode(), [("bids.csv", bids)])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert float(shown_metric(at, "opt")) == pytest.approx(expected.metrics["opt"], rel=1e-9)
    assert expected.metrics["opt"] == pytest.approx(
        max(v * sum(w >= v for w in (0.9, 0.8, 0.3, 0.7, 0.75)) for v in (0.9, 0.8, 0.3, 0.7, 0.75))
    )


def test_an_upload_reads_a_tntp_network_uploaded_with_it(tmp_path):
    """TNTP files uploaded with the scenario: the same figures as `dpgames run` on the files on
    disk."""
    net = (
        b"<NUMBER OF LINKS> 3\n<END OF METADATA>\n1 2 10 1 2 0.15 4 0 0 1 ;\n2 3 10 1 3 "
        b"0.15 4 0 0 1 ;\n"
        b"1 3 5 2 6 0.15 4 0 0 1 ;\n"
    )
    trips = b"<END OF METADATA>\nOrigin 1\n  3 : 7.0;\n"
    toml = (
        'kind = "large_game"\nseed = 1\n[game]\nsource = "tntp"\nnetwork = "T"\npath = "."\n'
        "[mediator]\nrounds = 20\n[incentives]\nenabled = false\n"
    )
    (tmp_path / "T").mkdir()
    (tmp_path / "T" / "T_net.tntp").write_bytes(net)
    (tmp_path / "T" / "T_trips.tntp").write_bytes(trips)
    (tmp_path / "s.toml").write_text(toml)
    expected = run_scenario(tmp_path / "s.toml").metrics
    at = run_upload(toml.encode(), [("T_net.tntp", net), ("T_trips.tntp", trips)])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert int(shown_metric(at, "players")) == expected["players"] == 7
    assert float(shown_metric(at, "ue_total_cost")) == pytest.approx(
        expected["ue_total_cost"], rel=1e-5
    )


def test_a_bad_uploaded_csv_names_the_users_file_not_the_server_folder():
    at = run_upload(
        CSV_SCENARIO.format(path="bids.csv").encode(), [("bids.csv", b"value\n0.5\nabc\n")]
    )
    message = error_box(at)
    assert "bids.csv: line 3, column 1" in message and "abc" not in message
    assert "dpgames-upload" not in message and "/tmp" not in message


# ---------------------------------------------------------------- malformed uploads: the red box

RESULTS = (
    json.dumps({"format": "dpgames-sweep/1", "scenario": "x.toml"})
    + "\n"
    + json.dumps({"seed": 1, "status": "ok"})
    + "\n"
).encode()
DEEP = b"a = " + b"[" * 5000
DEEP_TABLES = b"a = " + b"{b = " * 2000
JUNK = bytes(range(256)) * 40
HUGE = b"kind = 'digital_goods'\n" + b"# padding\n" * 500_000


@pytest.mark.parametrize(
    "data, expected",
    [
        (RESULTS, "malformed TOML"),
        (DEEP, "nested"),
        (DEEP_TABLES, "mine.toml"),
        (JUNK, "not a UTF-8 text file"),
        (b"", "field 'kind'"),
        (b'kind = ["digital_goods"]\n', "field 'kind'"),
        (
            b"kind = 'digital_goods'\n[population]\ndistribution = 'list'\nvalues = "
            b"[0.5]\n[mechanism]\nepsilon = 1e400\n",
            "field 'mechanism.epsilon'",
        ),
        (
            b"kind = 'digital_goods'\n[population]\ndistribution = 'list'\nvalues = "
            b"[0.5]\n[mechanism]\n"
            b"epsilon = 1979-05-27T07:32:00Z\n",
            "field 'mechanism.epsilon'",
        ),
        (b"kind = 'digital_goods'\nseed = 99999999999999999999999\n", "mine.toml"),
        (b"kind = 'digital_goods'\x00\n", "malformed TOML"),
        (HUGE, "over the limit"),
        (b"value\n0.5\n0.7\n", "malformed TOML"),
    ],
    ids=[
        "results-file",
        "deep-arrays",
        "deep-tables",
        "binary",
        "empty",
        "unhashable-kind",
        "eps-1e400",
        "datetime",
        "huge-seed",
        "nul",
        "5-MiB",
        "csv-as-toml",
    ],
)
def test_malformed_scenario_uploads_end_in_the_error_box(data, expected):
    assert expected in error_box(run_upload(data))


@pytest.mark.parametrize(
    "data",
    [
        RESULTS.replace(b'"status": "ok"', b'"status": "ok", "params": []'),
        b'{"format": "dpgames-sweep/1"}\n"a string record"\n',
        JUNK,
        b"",
        DEEP,
        b"[" * 100_000 + b"\n",
        b'{"format": "dpgames-sweep/1", "root_seed": 1e400}\n',
    ],
    ids=["params-list", "string-record", "binary", "empty", "deep-toml", "deep-json", "seed-1e400"],
)
def test_malformed_results_uploads_end_in_the_error_box(data):
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("upload a file...").run()
    uploader(at, "upload.sc_sweep").set_value(("bad.jsonl", data, "text/plain"))
    at.run()
    error_box(at)


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"name\nalice\nbob\n", "line 2, column 1"),
        (b"0.5\n1e400\n", "line 2, column 1: the value is not a finite number"),
        (b"0.5\n" + b"7" * 200_000 + b"\n", "longer than the CSV limit"),
        (b"0.5\x00\n", "NUL"),
        (b"", "no rows"),
        (JUNK, "bids.csv"),
        ("0.5\n0.é\n".encode("latin-1"), "not UTF-8"),
    ],
    ids=["text", "1e400", "200-KiB-field", "nul", "empty", "binary", "latin-1"],
)
def test_malformed_csv_uploads_end_in_the_error_box(data, expected):
    at = start()
    at.radio(key="dg.source").set_value("CSV of bids").run()
    uploader(at, "upload.dg_csv").set_value(("bids.csv", data, "text/plain"))
    message = error_box(at.run())
    assert expected in message and "/tmp" not in message


def test_the_auction_page_runs_an_uploaded_scenario_on_the_shipped_example_data():
    path = SCENARIOS / "from_csv.toml"
    expected = run_scenario(path).metrics["opt"]
    at = start()
    at.radio(key="dg.source").set_value("Scenario file (TOML)").run()
    uploader(at, "upload.dg_toml").set_value((path.name, path.read_bytes(), "text/plain"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = [m.value for m in at.metric if m.label == "OPT"][0]
    assert float(shown.replace(",", "")) == pytest.approx(expected, abs=0.006)


def test_the_auction_page_refuses_an_uploaded_scenario_naming_a_server_file():
    at = start()
    at.radio(key="dg.source").set_value("Scenario file (TOML)").run()
    data = CSV_SCENARIO.format(path="../../../../etc/passwd").encode()
    uploader(at, "upload.dg_toml").set_value(("evil.toml", data, "text/plain"))
    message = error_box(at.run())
    assert "outside the folders" in message and "root:" not in message


@pytest.mark.parametrize(
    "data",
    [DEEP, JUNK, b'kind = ["digital_goods"]\n', HUGE],
    ids=["deep", "binary", "unhashable-kind", "5-MiB"],
)
def test_malformed_toml_on_the_auction_page(data):
    at = start()
    at.radio(key="dg.source").set_value("Scenario file (TOML)").run()
    uploader(at, "upload.dg_toml").set_value(("bad.toml", data, "text/plain"))
    assert "bad.toml" in error_box(at.run())
