"""Parameter sweeps: any scenario over a grid of parameters and seeds, on local processes or a Dask
cluster, streamed to a resumable JSON Lines file, summarised (mean and 95% CI) and plotted.

    plan = plan_sweep("scenarios/sweep_epsilon.toml", sets=["epsilon=0.1,0.5,1"], seeds=20)
    run = run_sweep(plan, "results.jsonl", workers=2)          # or dask="local" / "tcp://host:8786"
    print(format_summary(summarize(run.results, ["expected_revenue"])))
    table = load_results("results.jsonl").columns()     # what the app reads (uploads: results_from_bytes)

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.estimates import MeanEstimate as MeanEstimate, mean_ci as mean_ci
    from dpgames.sweep.grid import (
        Cell as Cell,
        Grid as Grid,
        build_grid as build_grid,
        cell_seed as cell_seed,
    )
    from dpgames.sweep.plot import plot_results as plot_results, sweep_figure as sweep_figure
    from dpgames.sweep.results import (
        SweepError as SweepError,
        SweepResults as SweepResults,
        load_results as load_results,
        results_from_bytes as results_from_bytes,
    )
    from dpgames.sweep.runner import (
        SweepPlan as SweepPlan,
        SweepRun as SweepRun,
        plan_sweep as plan_sweep,
        run_sweep as run_sweep,
    )
    from dpgames.sweep.summary import (
        format_summary as format_summary,
        resolve_metric as resolve_metric,
        summarize as summarize,
        summary_metrics as summary_metrics,
        write_summary_csv as write_summary_csv,
    )

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
