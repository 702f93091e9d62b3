"""Parameter sweeps: any scenario over a grid of parameters and seeds, on local processes or a Dask
cluster, streamed to a resumable JSON Lines file, summarised (mean and 95% CI) and plotted.

    plan = plan_sweep("scenarios/sweep_epsilon.toml", sets=["epsilon=0.1,0.5,1"], seeds=20)
    run = run_sweep(plan, "results.jsonl", workers=2)          # or dask="local" / "tcp://host:8786"
    print(format_summary(summarize(run.results, ["expected_revenue"])))
    table = load_results("results.jsonl").columns()     # what the app reads (uploads: results_from_bytes)
"""

from dpgames.sweep.grid import Cell, Grid, build_grid, cell_seed
from dpgames.sweep.plot import plot_results, sweep_figure
from dpgames.sweep.results import SweepError, SweepResults, load_results, results_from_bytes
from dpgames.sweep.runner import SweepPlan, SweepRun, plan_sweep, run_sweep
from dpgames.sweep.summary import (Estimate, format_summary, mean_ci, resolve_metric, summarize, summary_metrics,
                                   write_summary_csv)

__all__ = [
    "Cell", "Estimate", "Grid", "SweepError", "SweepPlan", "SweepResults", "SweepRun", "build_grid",
    "cell_seed", "format_summary", "load_results", "mean_ci", "plan_sweep", "plot_results", "resolve_metric",
    "results_from_bytes", "run_sweep", "summarize", "summary_metrics", "sweep_figure", "write_summary_csv",
]
