"""Parameter sweeps: any scenario over a grid of parameters and seeds, on local processes or a Dask
cluster, streamed to a resumable JSON Lines file, summarised (mean and 95% CI) and plotted.

    plan = plan_sweep("scenarios/sweep_epsilon.toml", sets=["epsilon=0.1,0.5,1"], seeds=20)
    run = run_sweep(plan, "results.jsonl", workers=2)          # or dask="local" / "tcp://host:8786"
    print(format_summary(summarize(run.results, ["expected_revenue"])))
    table = load_results("results.jsonl").columns()     # what the app reads (uploads: results_from_bytes)

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "Cell": "dpgames.sweep.grid",
    "Grid": "dpgames.sweep.grid",
    "build_grid": "dpgames.sweep.grid",
    "cell_seed": "dpgames.sweep.grid",
    "plot_results": "dpgames.sweep.plot",
    "sweep_figure": "dpgames.sweep.plot",
    "SweepError": "dpgames.sweep.results",
    "SweepResults": "dpgames.sweep.results",
    "load_results": "dpgames.sweep.results",
    "results_from_bytes": "dpgames.sweep.results",
    "SweepPlan": "dpgames.sweep.runner",
    "SweepRun": "dpgames.sweep.runner",
    "plan_sweep": "dpgames.sweep.runner",
    "run_sweep": "dpgames.sweep.runner",
    "Estimate": "dpgames.estimates",
    "format_summary": "dpgames.sweep.summary",
    "mean_ci": "dpgames.estimates",
    "resolve_metric": "dpgames.sweep.summary",
    "summarize": "dpgames.sweep.summary",
    "summary_metrics": "dpgames.sweep.summary",
    "write_summary_csv": "dpgames.sweep.summary",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
