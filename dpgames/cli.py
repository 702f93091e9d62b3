"""The ``dpgames`` command line: argument parsing, printing and exit codes only.

Exit codes: 0 success, 2 invalid input (one readable line on stderr, no traceback; set
``DPGAMES_DEBUG=1`` to see the traceback), 1 a failing system (an output that cannot be written, out
of memory) or an internal error.  Which is which is told by the exception's type, never by its
message.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from dpgames.validation import ValidationError


class InputError(Exception):
    """Bad input from the command line: reported in one line, exit code 2.

    Examples
    --------
    >>> classify_error(InputError("--data-dir x: not a folder"))
    (2, 'dpgames: error: --data-dir x: not a folder')
    """


class OutputError(Exception):
    """An output the command could not write (a full disk, a folder removed meanwhile): not bad
    input, a failing system; reported in one line naming the option and the path, exit code 1.

    Examples
    --------
    >>> classify_error(OutputError("--out r.json: cannot write (No space left on device)"))
    (1, 'dpgames: error: --out r.json: cannot write (No space left on device)')
    """


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (like every other invalid input),
    naming the argument and pointing to the command's ``--help``, instead of the usage block and the
    error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"dpgames: error: {message} (see `{self.prog} --help`)\n")


def _run(args: argparse.Namespace) -> None:
    from dpgames.scenarios import Scenario

    if args.out:  # output paths are checked before the run: a bad one is known before any work
        _output_path(args.out, "--out")
    if args.tables_dir:
        _output_path(args.tables_dir, "--tables-dir", folder=True)
    scenario = Scenario.from_file(args.file, _data_dirs(args.data_dir))
    if args.set:
        from dpgames.sweep.grid import run_overrides

        scenario = scenario.with_overrides(run_overrides(scenario.data, scenario.source, args.set))
    if scenario.kind == "large_game" and sys.stderr.isatty():  # a note for a person, not for a pipe
        from dpgames.games.kernels import first_compile_notice, kernels_compiled

        if not kernels_compiled():
            print(f"dpgames: {first_compile_notice()}", file=sys.stderr)
    result = scenario.run(args.seed, _budget(args))
    more = "--json, or --tables-dir DIR for one CSV file per table"
    text = result.to_json() if args.json else result.format_text(args.rows, args.rows, more)
    print(text)
    if args.out:
        _write(Path(args.out), result.to_json() + "\n", "--out")
    if args.tables_dir:
        folder = Path(args.tables_dir)
        written = [
            _write(folder / f"{name}.csv", result.table_csv(name), "--tables-dir")
            for name in result.tables
        ]
        print(
            f"\n{len(written)} table{'s' if len(written) != 1 else ''} written to {folder}: "
            f"{', '.join(p.name for p in written) or 'none'}",
            file=sys.stderr,
        )


def _output_path(text: str, option: str, folder: bool = False) -> Path:
    """The path an output option names, checked before any work: no NUL byte, a file where a file is
    written (not an existing folder) or a folder where one is, each name within the file system's
    limit (with room for the ``.tmp`` of an atomic write) and the nearest existing folder writable.
    Raises :class:`InputError` naming the option and what is wrong."""
    shown = text if len(text) <= 160 else f"{text[:100]}...{text[-40:]}"  # one readable line
    if "\0" in text:
        raise InputError(f"{option} {shown!r}: a path cannot hold a NUL byte")
    path = Path(text)
    try:
        if folder and path.exists() and not path.is_dir():
            raise InputError(f"{option} {shown}: not a folder (it is a file)")
        if not folder and path.is_dir():
            raise InputError(f"{option} {shown}: is a folder; give the name of a file to write")
        # a file is written in its folder
        existing = path.absolute() if folder else path.absolute().parent
        while not existing.exists():
            existing = existing.parent
        longest = os.pathconf(existing if existing.is_dir() else existing.parent, "PC_NAME_MAX")
    except OSError as exc:  # e.g. a name too long to even look up
        raise InputError(f"{option} {shown}: cannot write there ({exc.strerror or exc})") from None
    for name in path.parts:
        if len(os.fsencode(name)) + len(".tmp") > longest:
            raise InputError(
                f"{option}: the name {name[:24]}... is {len(os.fsencode(name))} bytes "
                "long, more than "
                f"the file system allows ({longest - len('.tmp')} for a file written here)"
            )
    if not existing.is_dir():
        raise InputError(
            f"{option} {shown}: cannot write there ({existing} is a file, not a folder)"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(
            f"{option} {shown}: cannot write there (no permission to write in {existing})"
        )
    return path


def _write(path: Path, text: str | bytes, option: str) -> Path:
    """Write ``text`` (or bytes) to ``path`` atomically (a reader never sees half a file); the path
    written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
    return path


def _sweep(args: argparse.Namespace) -> None:
    from dpgames import sweep
    from dpgames.scenarios import Scenario

    scenario = Scenario.from_file(args.file, _data_dirs(args.data_dir))
    plan = sweep.plan_sweep(
        scenario, args.set, args.seeds, args.seed, _names(args.summary), args.max_cells
    )
    out = _output_path(args.out or f"{Path(args.file).stem}.results.jsonl", "--out")
    done = sweep.run_sweep(
        plan,
        out,
        workers=args.workers,
        dask=args.dask,
        resume=args.resume,
        progress=not args.no_progress,
        dask_timeout=args.dask_timeout,
        budget=_budget(args),
    )
    if done.retried:
        print(f"retried {done.retried} cells that had failed in {out}", file=sys.stderr)
    results = done.results
    failures = results.failures
    if failures:
        first = failures[0]
        if len(failures) == len(results.rows):
            raise InputError(f"every cell failed (first error: {first['error']})")
        print(
            f"{len(failures)} of {len(results.rows)} cells failed; first: {first['params']} seed "
            f"{first['seed']}: {first['error']}",
            file=sys.stderr,
        )
    csv_path = sweep.write_summary_csv(sweep.summarize(results), out.with_suffix(".summary.csv"))
    saved = (
        f"{len(results.rows)} cells in {out} ({done.ran} run now, {done.skipped} already there); "
        f"summary of every metric: {csv_path}"
    )
    try:
        metrics = sweep.summary_metrics(results, plan.summary)
    except (
        ValidationError
    ) as exc:  # a misspelt summary metric is known only now: say the cells are saved
        raise InputError(f"{_one_line(exc)}; nothing is lost: {saved}") from None
    if metrics:
        print(sweep.format_summary(sweep.summarize(results, metrics)))
    print(f"\n{saved}")


def _plot(args: argparse.Namespace) -> None:
    from dpgames import sweep

    results = sweep.load_results(args.results)
    ys = _names(args.y)
    if not ys:
        raise ValidationError(
            "--y", f"must name at least one metric (comma-separated), got {args.y!r}"
        )
    out = (
        args.out
        or Path(args.results).with_suffix("").as_posix() + f"-{'-'.join(ys)}-vs-{args.x}.png"
    )
    written = sweep.plot_results(
        results,
        args.x,
        ys,
        out,
        log_x=args.log_x,
        title=args.title,
        xlabel=args.xlabel,
        ylabel=args.ylabel,
    )
    if results.torn:  # after success only: a failure is one line
        print(
            f"note: {args.results}: the last line is incomplete (the sweep was "
            "interrupted); it is left out "
            "(dpgames sweep --resume repairs the file)",
            file=sys.stderr,
        )
    print(written)


def _gain_curve(args: argparse.Namespace) -> None:
    """The exact audit of a user's mechanism family at each parameter value: a table, a CSV and a
    PNG."""
    from dpgames.analysis.curves import gain_curve, gain_curve_figure
    from dpgames.sweep.grid import parse_cli_values

    stem = args.out or f"gain-curve-{args.parameter}"
    csv_path, png_path = _output_path(f"{stem}.csv", "--out"), _output_path(f"{stem}.png", "--out")
    build = load_target(args.target)
    values = parse_cli_values(args.values, "--values")
    if args.profile is not None and args.profiles is not None:
        raise InputError(
            "--profiles goes with --n (every profile, or a search), not with --profile"
        )
    audit: dict = (
        {"profile": _profile(args.profile)}
        if args.profile is not None
        else {"n": args.n, "profiles": args.profiles or "all"}
    )
    if args.coalitions is not None:
        audit["coalitions"] = args.coalitions
    curve = gain_curve(build, values, parameter=args.parameter, tol=args.tol, **audit)
    print(curve.describe())
    _write(csv_path, curve.csv(), "--out")
    figure = gain_curve_figure(curve, title=args.title)
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    _write(png_path, image.getvalue(), "--out")
    print(f"\nwritten: {csv_path}, {png_path}", file=sys.stderr)


def load_target(target: str) -> Callable:
    """The callable a ``FILE.py:NAME`` or ``MODULE:NAME`` names (the file or module is imported: it
    is the user's own code, named on the command line).

    Raises
    ------
    InputError
        If ``target`` has no ``:NAME``, the file or module cannot be imported, or ``NAME`` is
        missing or not callable.

    Examples
    --------
    >>> load_target("math:sqrt")(9.0)
    3.0
    """
    where, _, name = target.rpartition(":")
    if not where or not name.isidentifier():
        raise InputError(
            f"TARGET {target!r}: must be FILE.py:NAME or MODULE:NAME (a function value -> "
            "mechanism)"
        )
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise InputError(f"TARGET {target!r}: no file {where}")
            spec = importlib.util.spec_from_file_location(f"_dpgames_target_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise InputError(f"TARGET {target!r}: cannot load {where}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except InputError:
        raise
    except Exception as exc:  # the user's module failed to import: say so in one line
        raise InputError(
            f"TARGET {target!r}: importing {where} raised {type(exc).__name__}: {exc}"
        ) from None
    found = getattr(module, name, None)
    if not callable(found):
        raise InputError(f"TARGET {target!r}: {where} has no callable {name}")
    return found


def _profile(text: str) -> list:
    """``--profile 1,2,3`` as a list of TOML values (a bare word as a string)."""
    import tomllib

    items = []
    for part in text.split(","):
        try:
            items.append(tomllib.loads(f"v = {part.strip()}")["v"])
        except tomllib.TOMLDecodeError:
            items.append(part.strip())
    return items


def _check(args: argparse.Namespace) -> None:
    """Validate a scenario file and show its size estimate, without running it."""
    from dpgames.scenarios import Scenario
    from dpgames.scenarios.budget import fmt_bytes, fmt_count

    scenario = Scenario.from_file(args.file, _data_dirs(args.data_dir))
    parsed = scenario.parse(args.seed)
    print(
        f'{args.file}: valid {parsed.name} scenario "{parsed.title}" (seed '
        f"{parsed.seed_record['seed']})"
    )
    stages = parsed.estimate()
    for stage in stages:
        print(
            f"  {stage.what}: about {fmt_bytes(stage.memory)}, {fmt_count(stage.work)} operations"
        )
    if not stages:
        print("  (this kind gives no size estimate)")
    budget = _budget(args)
    budget.check_all(stages, args.file)  # over a limit: the BudgetError's one line, exit code 2
    if stages:
        from dpgames.scenarios.calibration import TIMED_ABOVE, machine_seconds

        work = sum(s.work for s in stages)
        how = (
            "calibrated on this machine by a small timed run; start-up not counted"
            if work > TIMED_ABOVE
            else "at 1e9 operations a second"
        )
        print(
            f"whole run: about {fmt_bytes(max(s.memory for s in stages))} at its peak "
            "(its largest stage), "
            f"{fmt_count(work)} operations, about {_seconds(machine_seconds(work))} "
            f"({how}); within "
            f"--max-memory {fmt_bytes(budget.max_memory)} and --max-work "
            f"{fmt_count(budget.max_work)}"
        )


def _seconds(seconds: float) -> str:
    """A duration in words: seconds below two minutes, then minutes, then hours."""
    if seconds < 120:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _kinds(args: argparse.Namespace) -> None:
    from dpgames.scenarios.registry import catalogue

    rows = catalogue()
    width = max([len(r.name) for r in rows] + [4])
    pwidth = max([len(r.package) for r in rows] + [7])
    print(f"{'KIND':<{width}}  {'PACKAGE':<{pwidth}}  DESCRIPTION")
    for r in rows:
        print(
            f"{r.name:<{width}}  {r.package:<{pwidth}}  {r.description or f'UNUSABLE: {r.error}'}"
        )
    broken = [r for r in rows if r.error]
    if broken:
        raise InputError(f"{len(broken)} scenario kind(s) cannot be used; first: {broken[0].error}")


def _data_dirs(folders: list[str]) -> list[Path]:
    """The ``--data-dir`` folders: further folders a scenario's data files may come from."""
    for folder in folders:
        if not Path(folder).is_dir():
            raise InputError(f"--data-dir {folder}: not a folder")
    return [Path(folder).resolve() for folder in folders]


def _budget(args: argparse.Namespace):
    """The --max-memory / --max-work limits (see dpgames.scenarios.budget)."""
    from dpgames.scenarios.budget import Budget

    return Budget.from_options(args.max_memory, args.max_work)


def _add_budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        default=None,
        help="refuse a run whose estimated peak memory is over SIZE (e.g. 8GB, 512MB; "
        "inf: no limit; default 2GB)",
    )
    parser.add_argument(
        "--max-work",
        metavar="OPS",
        default=None,
        help="refuse a run whose estimated work is over OPS elementary operations "
        "(about 1e9 a second; e.g. 1e11; inf: no limit; default 1e10)",
    )


def _names(text: str | None) -> list[str] | None:
    return [name.strip() for name in text.split(",") if name.strip()] if text else None


DATA_DIR_HELP = (
    "a further folder the scenario's data files (CSV, TNTP, edge lists) may be read from; by "
    "default only the scenario file's folder (and $DPGAMES_TNTP_DIR for networks); repeatable"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpgames`` and its commands (run, check, sweep, plot, gain-curve,
    kinds).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = _Parser(
        prog="dpgames",
        description="Mechanism design with differential privacy.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  dpgames run scenarios/digital_goods.toml            metrics and tables of one run\n"
        "  dpgames run scenarios/nst_pricing.toml --tables-dir out   also every table as CSV\n"
        "  dpgames run scenarios/digital_goods.toml --set epsilon=0.3   one field changed\n"
        "  dpgames check scenarios/sioux_falls.toml            validate, show the size estimate\n"
        "  dpgames sweep scenarios/sweep_epsilon.toml --seeds 5 --out r.jsonl\n"
        "  dpgames plot r.jsonl --x epsilon --y revenue_over_opt\n"
        "  dpgames gain-curve mine.py:build --values linspace:0:1:5 --n 3   your mechanism's gain\n"
        "  dpgames kinds                                       the installed scenario kinds\n\n"
        "exit codes: 0 success, 2 invalid input (one line on stderr), 1 internal error\n"
        "(DPGAMES_DEBUG=1 shows the traceback).  COMMAND --help for each command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="run a scenario file and print its metrics",
        description="Run a scenario file once and print its metrics (labelled, one a line) and "
        "its tables (first and last --rows rows); --json prints everything as JSON.  "
        "--set changes fields of the file for this run, as the app's overrides do.",
    )
    run.add_argument("file", help="scenario file (TOML), e.g. scenarios/digital_goods.toml")
    run.add_argument(
        "--seed", type=_seed, default=None, help="root seed (overrides the file's seed)"
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="replace a field of the file, e.g. mechanism.epsilon=0.3 or population.n=5000 (a "
        "dotted "
        "field, or its last part when only one field ends so; the value in TOML: 0.3, true, "
        '"text", [1, 2]); the title follows the new values; repeatable',
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the Result as JSON (every table, every row) instead of text",
    )
    run.add_argument("--out", metavar="PATH", help="also write the Result as JSON to PATH")
    run.add_argument(
        "--tables-dir",
        metavar="DIR",
        help="also write each result table, every row, as DIR/NAME.csv",
    )
    run.add_argument(
        "--rows",
        type=_seed,
        default=5,
        metavar="K",
        help="rows shown from each end of a long table in the text output (default 5; 0: only "
        "each table's columns and row count)",
    )
    run.add_argument("--data-dir", action="append", default=[], metavar="DIR", help=DATA_DIR_HELP)
    _add_budget_options(run)
    run.set_defaults(handler=_run)

    sweep = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of parameters and seeds",
        description="Run a scenario file over its [sweep] grid (and --set parameters) "
        "and seeds; stream each cell to a JSON Lines file; print mean and 95% CI per cell.",
    )
    sweep.add_argument("file", help="scenario file (TOML), e.g. scenarios/sweep_epsilon.toml")
    sweep.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="parameter values, e.g. epsilon=0.1,0.5,1 or population.n=range:100:500:100 "
        "(also linspace:START:STOP:NUM, geomspace:...); repeatable",
    )
    sweep.add_argument(
        "--seeds", type=_positive, default=None, help="seeds per parameter combination"
    )
    sweep.add_argument(
        "--seed", type=_seed, default=None, help="root seed (overrides the file's seed)"
    )
    sweep.add_argument(
        "--workers",
        type=_positive,
        default=None,
        help="local worker processes (default: every core; 1 runs in this process), "
        "or the size of a --dask local cluster",
    )
    sweep.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="run on a Dask cluster: tcp://HOST:PORT, or 'local' for a LocalCluster",
    )
    sweep.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to try reaching the Dask scheduler (default 10)",
    )
    sweep.add_argument(
        "--out", metavar="PATH", help="results file (default FILE_STEM.results.jsonl)"
    )
    sweep.add_argument("--data-dir", action="append", default=[], metavar="DIR", help=DATA_DIR_HELP)
    sweep.add_argument(
        "--resume",
        action="store_true",
        help="continue the results file: skip the cells recorded ok, run failed cells again",
    )
    sweep.add_argument(
        "--max-cells",
        type=_positive,
        default=100_000,
        metavar="N",
        help="refuse a grid of more than N cells (parameter combinations x seeds; default 100000)",
    )
    _add_budget_options(sweep)
    sweep.add_argument("--summary", metavar="METRICS", help="metrics to summarise, comma-separated")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(handler=_sweep)

    plot = sub.add_parser(
        "plot",
        help="plot a sweep's results: a metric against a parameter, with CI bands",
        description="Draw a PNG of a results file of `dpgames sweep`: the mean of each --y "
        "metric across seeds against the --x parameter, with its 95% confidence band, one "
        "line per combination of the other swept parameters, one panel per metric.  The "
        "axes carry the labels in words; a log-spaced x gets a log axis.",
    )
    plot.add_argument("results", help="results file written by dpgames sweep")
    plot.add_argument("--x", required=True, help="parameter on the x axis (short or dotted name)")
    plot.add_argument("--y", required=True, help="metric(s) on the y axis, comma-separated")
    plot.add_argument("--out", metavar="PNG", help="image file (default next to RESULTS)")
    plot.add_argument(
        "--title", help="the figure's title (default: the scenario's, less the swept values)"
    )
    plot.add_argument("--xlabel", help="the x axis's title (default: the parameter in words)")
    plot.add_argument("--ylabel", help="the y axes' title (default: each metric's label)")
    scale = plot.add_mutually_exclusive_group()
    scale.add_argument(
        "--log-x",
        dest="log_x",
        action="store_const",
        const=True,
        default=None,
        help="logarithmic x axis (default: when the x values are log-spaced)",
    )
    scale.add_argument(
        "--linear-x",
        dest="log_x",
        action="store_const",
        const=False,
        help="linear x axis, even for log-spaced x values",
    )
    plot.set_defaults(handler=_plot)

    curve = sub.add_parser(
        "gain-curve",
        help="exact gain from lying against a parameter of your own mechanism",
        description="Audit your mechanism family exactly at each parameter value "
        "(dpgames.analysis.curves.gain_curve: TARGET(value) -> a CustomMechanism) and "
        "print the best "
        "lie's gain, the margin and the verdict per value; write them with each worst case as "
        "OUT.csv and a plot of the best lie's gain against the parameter as OUT.png.",
    )
    curve.add_argument(
        "target", help="FILE.py:NAME or MODULE:NAME, a function value -> CustomMechanism"
    )
    curve.add_argument(
        "--values",
        required=True,
        help="parameter values, e.g. 0,0.25,0.5 or linspace:0:1:5 (as sweep --set)",
    )
    curve.add_argument("--parameter", default="value", help="the parameter's name (default: value)")
    where = curve.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--n",
        type=_positive,
        help="agents: audit every profile (dominant strategy; with --profiles all)",
    )
    where.add_argument("--profile", metavar="R1,R2,...", help="audit at these reports (ex post)")
    curve.add_argument(
        "--profiles",
        choices=["all", "search"],
        default=None,
        help="with --n: every profile (all, the default) or a search",
    )
    curve.add_argument(
        "--coalitions",
        type=_positive,
        default=None,
        metavar="K",
        help="coalitions of up to K agents lie together (default: one liar)",
    )
    curve.add_argument("--tol", type=float, default=0.0, help="the verdict's tolerance (default 0)")
    curve.add_argument(
        "--out", metavar="STEM", help="write STEM.csv and STEM.png (default gain-curve-PARAMETER)"
    )
    curve.add_argument("--title", help="the plot's title")
    curve.set_defaults(handler=_gain_curve)

    check = sub.add_parser(
        "check",
        help="validate a scenario file and show its size estimate, without running it",
        description="Parse and validate every field of a scenario file (as `dpgames run` "
        "does before running) and print the kind's estimate of each stage's peak memory and "
        "work. Exit code 2 if the file is invalid or over the limits.",
    )
    check.add_argument("file", help="scenario file (TOML)")
    check.add_argument(
        "--seed", type=_seed, default=None, help="root seed (overrides the file's seed)"
    )
    check.add_argument("--data-dir", action="append", default=[], metavar="DIR", help=DATA_DIR_HELP)
    _add_budget_options(check)
    check.set_defaults(handler=_check)

    kinds = sub.add_parser(
        "kinds",
        help="list the installed scenario kinds, their packages and descriptions",
        description="List the scenario kinds registered in the entry-point group "
        "dpgames.kinds (dpgames' own and other installed packages'). Exit code 2 if one "
        "cannot be used (a broken module, or a name registered by two packages).",
    )
    kinds.set_defaults(handler=_kinds)
    return parser


def _version() -> str:
    """The installed distribution's version (pyproject.toml is its one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpgames")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def _one_line(exc: BaseException) -> str:
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success, 2 invalid input (a :class:`~dpgames.validation.ValidationError` -
        scenario, file, argument - or an :class:`InputError`), 1 anything else: a failing system (an
        :class:`OutputError`, out of memory) or an internal error, i.e. a bug in dpgames or a plugin
        (never reported as invalid input).
        Always one line on stderr; ``DPGAMES_DEBUG=1`` re-raises for the traceback.  130 on Ctrl-C;
        141, silently, when the reader of the output stops early (``dpgames run FILE --json |
        head``).
    """
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except KeyboardInterrupt:
        print("dpgames: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader stopped early (`dpgames run ... --json | head`): not an error to report
        # no second error when Python flushes
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
    except Exception as exc:
        if os.environ.get("DPGAMES_DEBUG"):
            raise
        code, text = classify_error(exc)
        print(text, file=sys.stderr)
        return code
    return 0


def classify_error(exc: Exception) -> tuple[int, str]:
    """The exit code and the one-line message for an exception that ended a command (see
    :func:`main`).

    Parameters
    ----------
    exc : Exception

    Returns
    -------
    (int, str)
    """
    from dpgames.scenarios.invariants import InternalError

    if isinstance(exc, (ValidationError, InputError)):
        return 2, f"dpgames: error: {_one_line(exc)}"
    if isinstance(exc, MemoryError):
        return 1, "dpgames: error: out of memory (lower the sizes, or see --max-memory)"
    if isinstance(exc, (OutputError, OSError)):
        return 1, f"dpgames: error: {_one_line(exc)}"
    if isinstance(exc, InternalError):
        # its message says what broke (a failed result invariant ...)
        return 1, f"dpgames: {_one_line(exc)}; rerun with DPGAMES_DEBUG=1 for the traceback"
    return 1, (
        f"dpgames: internal error (a bug in dpgames, please report it): {type(exc).__name__}: "
        f"{_one_line(exc)}; rerun with DPGAMES_DEBUG=1 for the traceback"
    )


if __name__ == "__main__":
    sys.exit(main())
