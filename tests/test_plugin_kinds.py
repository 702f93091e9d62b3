"""Plugin scenario kinds: one way in (the entry-point group ``dpgames.kinds``) for dpgames' own
kinds and for other packages', here the example plugin examples/voting_plugin (installed by the
README's test command) and distributions made up in the test (tests/fake_distributions.py).

Oracles: pyproject.toml's table read with tomllib; each kind module's own DESCRIPTION or docstring;
``dpgames run`` of the same file (a sweep cell, the app and the CLI must give exactly its Result);
and, for bad registrations, what was made broken (the error must name that kind and that package).
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames import run_scenario
from dpgames.cli import main
from dpgames.scenarios import InternalError, Scenario, ScenarioError, registry
from dpgames.scenarios.kind import ScenarioKind
from dpgames.scenarios.registry import BUILTIN_KINDS, SOURCE_TREE, KindError
from dpgames.sweep import load_results, plan_sweep
from dpgames.sweep.grid import cell_seed
from fake_distributions import install_fake_distribution

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "voting_plugin"
VOTE = PLUGIN / "dpgames_voting" / "scenarios" / "median_vote.toml"
BUILTIN_PACKAGE = f"dpgames {importlib.metadata.version('dpgames')}"
SMALL_VOTE = """kind = "voting"
seed = 3
[election]
alternatives = 5
[population]
peaks = [0, 1, 1, 3, 4, 4, 4]
[mechanism]
epsilon = 0.7
dictator = 0.1
"""


@pytest.fixture(scope="module", autouse=True)
def plugin_installed():
    try:
        importlib.metadata.distribution("dpgames-voting")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(
            "the example plugin is not installed: python -m pip install -e examples/voting_plugin "
            "(the README's test command installs it)"
        )


@pytest.fixture
def small_vote(tmp_path) -> Path:
    path = tmp_path / "small_vote.toml"
    path.write_text(SMALL_VOTE)
    return path


# ---------------------------------------------------------------- discovery


def test_builtin_kinds_come_from_the_entry_point_group_as_pyproject_registers_them():
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][
        "dpgames.kinds"
    ]
    assert table == BUILTIN_KINDS  # the source-tree fallback cannot drift from the registration
    found = registry.installed()
    for name, target in table.items():
        assert found[name] == registry.KindEntry(name, target, BUILTIN_PACKAGE)
        assert isinstance(found[name].load(), ScenarioKind)


def test_the_example_plugin_is_discovered_with_its_package():
    entry = registry.installed()["voting"]
    assert entry == registry.KindEntry("voting", "dpgames_voting.kind", "dpgames-voting 0.1.0")
    module = entry.load()
    assert isinstance(module, ScenarioKind)
    assert entry.examples() == (VOTE.resolve(),)


def test_without_installed_metadata_the_builtins_fall_back_to_the_source_tree_table(
    monkeypatch, small_vote
):
    real = importlib.metadata.entry_points(group=registry.GROUP)
    plugins_only = [ep for ep in real if ep.dist.name != "dpgames"]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: plugins_only)
    monkeypatch.setattr(registry, "_read", None)
    found = registry.installed()
    assert {name: found[name].target for name in BUILTIN_KINDS} == BUILTIN_KINDS
    assert {found[name].package for name in BUILTIN_KINDS} == {SOURCE_TREE}
    assert found["voting"].package == "dpgames-voting 0.1.0"
    assert run_scenario(ROOT / "scenarios" / "small_exact.toml").kind == "digital_goods"
    assert run_scenario(small_vote).kind == "voting"


def test_an_entry_point_without_a_distribution_is_listed_as_unknown_package(monkeypatch):
    real = list(importlib.metadata.entry_points(group=registry.GROUP))
    orphan = importlib.metadata.EntryPoint("orphan", "dpgames_voting.kind", registry.GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: [*real, orphan])
    monkeypatch.setattr(registry, "_read", None)
    assert registry.installed()["orphan"].package == "unknown package"


@pytest.mark.slow
def test_kind_modules_are_imported_only_when_their_kind_runs(small_vote):
    """In a fresh interpreter: reading the registry imports no kind; running one imports only it."""
    code = (
        "import sys\nfrom dpgames.scenarios import registry\nregistry.installed()\n"
        "before = set(sys.modules)\nfrom dpgames import run_scenario\nrun_scenario(sys.argv[1])\n"
        "kinds = ('dpgames_voting', 'dpgames.scenarios.digital_goods', "
        "'dpgames.scenarios.nst_mix', "
        "'dpgames.scenarios.huang_kannan', 'dpgames.scenarios.large_game')\n"
        "print(sorted(k for k in kinds if k in before), sorted(k for k in kinds if k in "
        "sys.modules))\n"
    )
    for path, imported in (
        (small_vote, "['dpgames_voting']"),
        (ROOT / "scenarios" / "small_exact.toml", "['dpgames.scenarios.digital_goods']"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == f"[] {imported}"


# ---------------------------------------------------------------- dpgames kinds


def test_dpgames_kinds_lists_every_kind_with_its_package_and_description(capsys):
    assert main(["kinds"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["KIND", "PACKAGE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(registry.installed())
    import dpgames_voting.kind as voting

    from dpgames.scenarios import digital_goods

    assert rows["voting"].split(None, 1)[1].split() == [
        "dpgames-voting",
        "0.1.0",
        *voting.DESCRIPTION.split(),
    ]
    assert rows["digital_goods"].split()[1:3] == BUILTIN_PACKAGE.split()
    assert rows["digital_goods"].endswith("  " + digital_goods.DESCRIPTION)


def test_a_kinds_description_is_shown_on_one_line():
    from dpgames_voting import kind

    assert registry.describe(kind) == " ".join(kind.DESCRIPTION.split())


# ---------------------------------------------------------------- a plugin kind everywhere


def test_dpgames_run_of_the_plugin_kind_is_run_scenario(capsys, tmp_path):
    out = tmp_path / "vote.json"
    assert main(["run", str(VOTE), "--seed", "5", "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = run_scenario(str(VOTE), seed=5).to_dict()
    assert printed["metrics"] == expected["metrics"] and printed["kind"] == "voting"
    assert json.loads(out.read_text())["tables"] == expected["tables"]
    assert main(["run", str(VOTE)]) == 0
    assert (
        "Private median vote with a random dictator  [voting, seed 11]" in capsys.readouterr().out
    )


def test_the_plugin_kind_checks_its_fields_like_a_builtin_one(small_vote):
    with pytest.raises(
        ScenarioError, match=r"small_vote.toml: field 'mechanism.epsilon': must be a number > 0"
    ):
        run_scenario(small_vote, overrides={"mechanism.epsilon": 0})
    with pytest.raises(ScenarioError, match=r"field 'election.seats': unknown key"):
        run_scenario(small_vote, overrides={"election.seats": 2})


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_dpgames_sweep_of_the_plugin_kind_cell_by_cell_equals_dpgames_run(
    tmp_path, capsys, workers
):
    out = tmp_path / f"vote{workers}.jsonl"
    code = main(
        [
            "sweep",
            str(VOTE),
            "--set",
            "epsilon=0.1,1",
            "--set",
            "dictator=0,0.05",
            "--seeds",
            "2",
            "--out",
            str(out),
            "--no-progress",
            "--workers",
            str(workers),
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = load_results(out)
    assert results.header["kind"] == "voting" and len(results.rows) == 8 and not results.failures
    for row in results.rows:
        single = run_scenario(VOTE, seed=cell_seed(11, row["seed"]), overrides=row["params"])
        assert row["metrics"] == single.metrics
    assert "welfare_ratio" in capsys.readouterr().out  # the file's summary metrics are printed


# ---------------------------------------------------------------- clean errors


def test_a_name_registered_by_two_packages_is_refused_naming_both(
    monkeypatch, tmp_path, small_vote, capsys
):
    install_fake_distribution(
        monkeypatch, tmp_path / "site", "fake-voting", {"voting": "fake_voting_kind"}
    )
    with pytest.raises(
        KindError,
        match=r"'voting' is registered by more than one package: "
        r"dpgames-voting 0\.1\.0 \(dpgames_voting\.kind\) and fake-voting 0\.1 "
        r"\(fake_voting_kind\)",
    ):
        run_scenario(small_vote)
    assert main(["run", str(small_vote)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fake-voting 0.1" in err and "Traceback" not in err
    # the others still run
    assert run_scenario(ROOT / "scenarios" / "small_exact.toml").kind == "digital_goods"
    assert main(["kinds"]) == 2
    captured = capsys.readouterr()
    assert "UNUSABLE" in captured.out and "digital_goods" in captured.out
    assert "registered by more than one package" in captured.err


BROKEN = [
    (
        "import not_a_module_h2\n",
        "broken_a",
        (
            "its module 'broken_a' cannot be imported: ModuleNotFoundError: "
            "No module named 'not_a_module_h2'"
        ),
    ),
    (
        "raise RuntimeError('boom at import')\n",
        "broken_b",
        "cannot be imported: RuntimeError: boom at import",
    ),
    (None, "broken_missing_module", "cannot be imported: ModuleNotFoundError"),
    (
        "def parse(top):\n    return None\n",
        "broken_c",
        "'broken_c' lacks DESCRIPTION (a str), EXAMPLES",
    ),
    (
        "parse = 3\n",
        "broken_d",
        "METRICS (a MetricSet), INVARIANTS (an Invariants), data_roots (a function), "
        "parse (a function)",
    ),
    ("def parse(top):\n    return None\n", "broken_e:kind", "cannot be imported: AttributeError"),
]


@pytest.mark.parametrize("source, target, expected", BROKEN)
def test_a_broken_kind_module_is_refused_naming_the_kind_and_the_package(
    monkeypatch, tmp_path, capsys, source, target, expected
):
    module = target.split(":")[0]
    modules = {module: source} if source is not None else {}
    install_fake_distribution(
        monkeypatch, tmp_path / "site", "fake-broken", {"broken": target}, modules
    )
    monkeypatch.delitem(sys.modules, module, raising=False)
    path = tmp_path / "b.toml"
    path.write_text('kind = "broken"\n')
    with pytest.raises(KindError) as caught:
        run_scenario(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: field 'kind': scenario kind 'broken' (package fake-broken 0.1)"
    )
    assert expected in message
    with pytest.raises(KindError, match="fake-broken 0.1"):
        plan_sweep(path)  # a sweep stops before its first cell
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fake-broken 0.1" in err and "Traceback" not in err


#: A kind with every member of the contract; its run's body follows.
MINIMAL_KIND = """from dpgames.scenarios import Invariants, MetricSet, Result
DESCRIPTION = "a kind whose run is broken"
EXAMPLES = ()
METRICS = MetricSet()
MEAN = METRICS.add("mean", "a figure")
INVARIANTS = Invariants()
def data_roots():
    return ()
def parse(top):
    return None
def estimate(spec):
    return []
def build(spec, seed):
    return None
def run(built):
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "    return {'mean': 1.0}\n",
            "scenario kind 'odd': run() returned dict, not a dpgames.scenarios.Result",
        ),
        (
            "    return Result('other', '', {})\n",
            "run() returned a Result of kind 'other'; it must be 'odd'",
        ),
        (
            "    return Result('odd', '', {'median': 1.0})\n",
            "run() recorded metrics its METRICS does not declare: median",
        ),
    ],
)
def test_a_kind_whose_run_breaks_the_contract_is_an_internal_error(
    monkeypatch, tmp_path, capsys, body, expected
):
    module = f"odd_kind_{tmp_path.name}"
    install_fake_distribution(
        monkeypatch, tmp_path / "site", "fake-odd", {"odd": module}, {module: MINIMAL_KIND + body}
    )
    path = tmp_path / "o.toml"
    path.write_text('kind = "odd"\n')
    with pytest.raises(InternalError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        run_scenario(path)
    assert main(["run", str(path)]) == 1  # a bug of the kind, not bad input
    assert "internal error" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kind",
    [
        "dpgames_voting.kind",
        "dpgames.scenarios.digital_goods",
        "evil",
        "./evil.py",
        "os",
        "Voting",
        " voting",
    ],
)
def test_a_scenario_file_names_a_registered_kind_never_code(monkeypatch, tmp_path, kind):
    """Scenario files are pure data: a module name or a path in ``kind`` is refused, and nothing is
    imported (evil.py, importable beside the file, would leave a mark)."""
    (tmp_path / "evil.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "s.toml"
    path.write_text(f"kind = {json.dumps(kind)}\n")
    with pytest.raises(
        KindError, match=r"field 'kind': must be one of .*'voting'.*`dpgames kinds` lists them"
    ):
        run_scenario(path)
    assert not (tmp_path / "imported").exists()


TOML_SCALARS = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    st.datetimes(),
    st.sampled_from([*BUILTIN_KINDS, "voting", "dpgames_voting.kind", "os", "", "VOTING"]),
)
TOML_VALUES = st.recursive(
    TOML_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    kind=st.integers(0, 3).flatmap(
        lambda k: st.sampled_from([*BUILTIN_KINDS, "voting"]) if k == 0 else TOML_VALUES
    )
)
def test_any_kind_value_gives_a_clean_error_or_a_run(kind):
    data = tomllib.loads(SMALL_VOTE)
    data["kind"] = kind
    try:
        result = Scenario(data, "<hypothesis>", "0" * 64).run(seed=1)
    except ScenarioError as exc:
        assert str(exc).startswith("<hypothesis>: field '")
        if not (isinstance(kind, str) and kind in registry.installed()):
            assert isinstance(exc, KindError) and "field 'kind': must be one of" in str(exc)
        return
    assert kind == "voting" and result.kind == "voting"
    assert 0 < result.metrics["welfare_ratio"] <= 1


# ---------------------------------------------------------------- the app


@pytest.mark.slow
def test_the_app_scenarios_page_offers_and_runs_the_plugin_kind():
    AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("dpgames_app/scenarios.py").run()
    box = at.selectbox(key="sc.file")
    assert "voting: median_vote.toml" in box.options
    box.set_value("voting: median_vote.toml").run()
    at.button(key="button.sc_run").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    frame = at.dataframe[0].value
    shown = dict(zip(frame["name"], frame["value"]))
    expected = run_scenario(VOTE).metrics
    for name in (
        "expected_welfare",
        "max_misreport_gain",
        "least_dictator_weight",
        "max_privacy_loss",
    ):
        assert float(shown[name]) == pytest.approx(expected[name], rel=1e-5)
    kinds = at.table[0].value
    listed = dict(zip(kinds["kind"], kinds["package"]))
    assert listed["voting"] == "dpgames-voting 0.1.0" and listed["digital_goods"] == BUILTIN_PACKAGE
