"""Every figure of a campaign's verdicts and runs in one process: the plots (reports/plots.py),
the slowdown overview (reports/slowdown_plot.py) and run-to-run variability with its tables
(reports/variability.py). pandas and matplotlib are imported once, and the figures are drawn in
processes forked after the imports (figure_drawing.figure_drawer), the largest first, while
this process reads what the next ones show and writes variability's tables."""

from __future__ import annotations

from pathlib import Path

from mpiguide.analysis.analysis_types import Decisions
from mpiguide.reports.figure_drawing import figure_drawer
from mpiguide.reports.plots import PlotOptions, draw_plots
from mpiguide.reports.slowdown_plot import overview_job
from mpiguide.reports.variability import variability


def figures(
    timings_parquet: Path,
    medians_parquet: Path,
    tests_csv: Path,
    slowdown_csv: Path,
    decisions: Decisions,
    plots: PlotOptions,
    outputs: tuple[Path, Path, Path],
    campaign: str = "",
    processes: int = 1,
) -> None:
    """Write the plots, the slowdown overview and variability's tables and plots into
    `outputs` (the plots' directory, slowdown.png, variability's directory), as `plot`,
    `slowdown-plot` and `variability` do, drawn in `processes` processes."""
    plots_dir, slowdown_png, variability_dir = outputs
    with figure_drawer(processes) as draw:
        draw_plots(timings_parquet, tests_csv, decisions, plots_dir, draw, plots, campaign)
        draw(overview_job(slowdown_csv, tests_csv, decisions, campaign, slowdown_png))
        variability(medians_parquet, timings_parquet, tests_csv, decisions.options,
                    variability_dir, campaign, draw)  # fmt: skip
