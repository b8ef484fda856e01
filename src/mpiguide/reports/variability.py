"""Run-to-run variability: how far the runs (launches) of one experiment spread, and which
runs were slow as a whole — Parker et al. 2018, Figure 10 and "Impact of network congestion".

A single experiment far from its other runs may be the library; a run in which every
experiment is slow points at the machine (congestion, a noisy neighbour), not at the library.
Outputs in the output directory:

- spread.csv: per experiment and deployment: runs, min_s, max_s, median_of_medians_s, cv
  (coefficient of variation of the run medians: standard deviation / mean) and runs_outside
  (run medians more than analysis.run_band away from the median of medians);
- runs.csv: per run: experiments, outside (its run medians outside the band), run_ratio (median
  over its experiments of run median / median of medians), launch_factor (from medians.parquet
  when present, else empty) and `flagged` when run_ratio lies outside the band;
- interference.csv: how slow launches relate to what the OS said about interference (the block
  records' load_before, other_cpu_fraction, steal_s, also columns of runs.csv): per deployment
  and measure, over its runs with both numbers, `runs` and Spearman's rank correlation
  `spearman` with launch_factor (empty with fewer than 3 runs or a constant column) — a slow
  launch on a loaded host says "the machine", not "the library";
- plots/<mpi>-<nodes>x<ppn>-exp<NNNNNN>.png: Figure 10 of Parker et al.: one box per run of the
  experiment's repetitions, the median of medians and ±5 % and ±10 % around it — for the lhs and
  rhs experiment at the most violated point of every violated group, and for every experiment
  that a selector of analysis.variability picks; its title names the campaign, the deployment
  and analysis.run_band, the band that flags a run in runs.csv.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, AnalysisOptions
from mpiguide.analysis.guidelines import read_medians, with_nprocs
from mpiguide.analysis.pairing import Experiments, split_pair
from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import BLOCK, BLOCK_ATTEMPT_COLUMN, INTERFERENCE_COLUMNS
from mpiguide.core.paths import (
    INTERFERENCE_CSV,
    PLOTS_TREE,
    RUNS_CSV,
    SPREAD_CSV,
    deployment_name,
    safe_name,
)
from mpiguide.core.values import canonical_value
from mpiguide.reports.figure_drawing import FigureJob, save_figure
from mpiguide.reports.figure_style import provenance_of_runs, with_provenance
from mpiguide.reports.plots import read_repetitions, read_tests

EXPERIMENT_KEYS = [*DEPLOYMENT_KEYS, "exp_id"]
RUN_KEYS = [*DEPLOYMENT_KEYS, "run"]
# Parker's Figure 10 draws these bands around the median of medians.
FIGURE_BANDS = (0.05, 0.10)
LAUNCH_FACTOR = "launch_factor"  # per-run column of medians.parquet (aggregation), optional
# A run's box in Figure 10: light steel blue at 75 % saturation, its lines a grey at 60 % of that
# fill's lightness, 0.8 of the run's slot wide.
RUN_BOX_FILL, RUN_BOX_LINES, RUN_BOX_WIDTH = "#b6c5d8", "#777777", 0.8


def with_ratios(medians: pd.DataFrame) -> pd.DataFrame:
    """`medians` with the median of its experiment's run medians and each run's ratio to it."""
    by_experiment = medians.groupby(EXPERIMENT_KEYS, observed=True, sort=False)["median_s"]
    centre = by_experiment.transform("median")
    return medians.assign(median_of_medians_s=centre, ratio=medians["median_s"] / centre)


def spread(medians: pd.DataFrame, band: float) -> pd.DataFrame:
    """One row per experiment and deployment (see the module docstring)."""
    frame = with_ratios(medians).assign(_outside=lambda f: np.abs(f["ratio"] - 1) > band)
    by_experiment = frame.groupby(EXPERIMENT_KEYS, observed=True, sort=True)
    table = by_experiment.agg(
        runs=("median_s", "size"),
        min_s=("median_s", "min"),
        max_s=("median_s", "max"),
        median_of_medians_s=("median_of_medians_s", "first"),
        mean_s=("median_s", "mean"),
        std_s=("median_s", "std"),
        runs_outside=("_outside", "sum"),
    )
    table["cv"] = table["std_s"] / table["mean_s"]
    return table.drop(columns=["mean_s", "std_s"]).reset_index()


def runs(medians: pd.DataFrame, band: float) -> pd.DataFrame:
    """One row per run (see the module docstring)."""
    frame = with_ratios(medians).assign(_outside=lambda f: np.abs(f["ratio"] - 1) > band)
    by_run = frame.groupby(RUN_KEYS, observed=True, sort=True)
    table = by_run.agg(
        experiments=("ratio", "size"), outside=("_outside", "sum"), run_ratio=("ratio", "median")
    )
    table[LAUNCH_FACTOR] = by_run[LAUNCH_FACTOR].first() if LAUNCH_FACTOR in frame else np.nan
    table["flagged"] = np.abs(table["run_ratio"] - 1) > band
    for name in (BLOCK, BLOCK_ATTEMPT_COLUMN, *INTERFERENCE_COLUMNS):
        if name in frame:
            table[name] = by_run[name].first()
    return table.reset_index()


def interference(run_table: pd.DataFrame) -> pd.DataFrame:
    """One row per deployment and interference measure (see the module docstring), from the
    table of `runs`."""
    rows = []
    measures = [name for name in INTERFERENCE_COLUMNS if name in run_table]
    for (nodes, ppn), table in run_table.groupby(["nodes", "ppn"], sort=True):
        for name in measures:
            both = table[[LAUNCH_FACTOR, name]].astype(float).dropna()
            constant = both.nunique().min() < 2 if len(both) else True
            rho = np.nan
            if len(both) >= 3 and not constant:
                rho = both[LAUNCH_FACTOR].corr(both[name], method="spearman")
            rows.append({"nodes": nodes, "ppn": ppn, "measure": name, "runs": len(both),
                         "spearman": rho})  # fmt: skip
    return pd.DataFrame(rows, columns=["nodes", "ppn", "measure", "runs", "spearman"])


def _violated_experiments(tests_csv: Path) -> pd.DataFrame:
    """mpi, nodes, ppn, exp_id of the lhs and rhs experiments at the most violated test of every
    violated group."""
    tests = read_tests(tests_csv)
    if tests.empty or not tests["violated"].any():
        return pd.DataFrame(columns=EXPERIMENT_KEYS)
    violated = tests.loc[tests["violated"]].sort_values("violation_ratio", ascending=False)
    worst = violated.drop_duplicates(["guideline", "group"])
    rows = []
    for _, test in worst.iterrows():
        for index, side in enumerate(("lhs", "rhs")):
            deployment = [split_pair(test[key])[index] for key in DEPLOYMENT_KEYS]
            rows.append([*deployment, int(test[f"{side}_exp_id"])])
    return pd.DataFrame(rows, columns=EXPERIMENT_KEYS)


def _selected_experiments(medians: pd.DataFrame, options: AnalysisOptions) -> pd.DataFrame:
    """mpi, nodes, ppn, exp_id of the experiments analysis.variability selects."""
    if not options.variability:
        return pd.DataFrame(columns=EXPERIMENT_KEYS)
    frame = with_nprocs(medians).drop_duplicates(EXPERIMENT_KEYS)
    experiments = Experiments.from_frame(frame, list(frame.columns))
    mask = np.zeros(len(experiments), dtype=bool)
    for selector in options.variability:
        if all(key in experiments.keys for key in selector):
            mask |= experiments.selected(selector)
    chosen = {key: experiments.strings(key)[mask] for key in EXPERIMENT_KEYS}
    return pd.DataFrame(chosen, columns=EXPERIMENT_KEYS).astype({"exp_id": "int64"})


def variability_plot(
    repetitions: pd.DataFrame, run_medians: pd.Series, title: str, path: Path, footer: str = ""
) -> None:
    """Parker's Figure 10: a box per run, the median of medians and ±5 % / ±10 % lines, under
    a title led by `footer`."""
    import matplotlib.pyplot as plt  # after reports.figure_drawing has chosen the Agg backend

    centre = float(np.median(run_medians))
    by_run = repetitions.groupby("run", sort=True)["time_s"]
    runs = list(by_run.groups)
    figure, axes = plt.subplots(figsize=(max(6, 0.45 * len(runs) + 2), 4.5))
    # Outliers left out and a log axis: one congested run must not flatten the others' boxes.
    axes.boxplot([times.to_numpy() for _, times in by_run], positions=range(len(runs)),
                 widths=RUN_BOX_WIDTH, capwidths=RUN_BOX_WIDTH / 2, patch_artist=True,
                 showfliers=False, manage_ticks=False,
                 boxprops={"facecolor": RUN_BOX_FILL, "edgecolor": RUN_BOX_LINES},
                 medianprops={"color": RUN_BOX_LINES, "solid_capstyle": "butt"},
                 whiskerprops={"color": RUN_BOX_LINES, "solid_capstyle": "butt"},
                 capprops={"color": RUN_BOX_LINES})  # fmt: skip
    axes.set_xticks(range(len(runs)), [str(run) for run in runs])
    axes.set_xlim(-0.5, len(runs) - 0.5)
    axes.set_xlabel("run")
    axes.set_yscale("log")
    axes.axhline(centre, color="black", linewidth=1.2, label="median of run medians")
    for band, style in zip(FIGURE_BANDS, (":", "--"), strict=True):
        for sign in (-1, 1):
            axes.axhline(centre * (1 + sign * band), color="grey", linewidth=0.8, linestyle=style,
                         label=f"±{band:.0%}" if sign > 0 else None)  # fmt: skip
    axes.set_ylabel("time per repetition [s]")
    axes.set_title(with_provenance(footer, title), fontsize=9)
    axes.legend(fontsize=8)
    save_figure(figure, path)


def _describe(medians: pd.DataFrame, key: tuple[str, str, str, int]) -> str:
    mpi, nodes, ppn, exp_id = key
    row = medians.loc[medians["exp_id"] == exp_id].iloc[0]
    parameters = " ".join(
        f"{name}={canonical_value(value)}"
        for name, value in row.items()
        if name in ("op", "msg_size", "dtype", "topology", "root") and pd.notna(value)
    )
    return f"{mpi} {deployment_name(nodes, ppn)} exp {exp_id}: {parameters}"


def variability(
    medians_parquet: str | Path,
    timings_parquet: str | Path,
    tests_csv: str | Path,
    options: AnalysisOptions,
    outdir: str | Path,
    campaign: str = "",
    draw: Callable[[FigureJob], None] | None = None,
) -> None:
    """Write spread.csv, runs.csv and plots/ into outdir; the plots name `campaign`. Each plot
    is handed to `draw` (figure_drawing.figure_drawer's), by default drawn at once."""
    draw = draw or (lambda job: job.draw(*job.args))
    outdir = Path(outdir)
    medians = read_medians(Path(medians_parquet))
    (outdir / PLOTS_TREE).mkdir(parents=True, exist_ok=True)
    run_table = runs(medians, options.run_band)
    tables = {
        SPREAD_CSV: spread(medians, options.run_band),
        RUNS_CSV: run_table,
        INTERFERENCE_CSV: interference(run_table),
    }
    for name, table in tables.items():
        with atomic_path(outdir / name) as temporary:
            table.to_csv(temporary, index=False)
    chosen = pd.concat(
        [_violated_experiments(Path(tests_csv)), _selected_experiments(medians, options)]
    ).astype(str)
    chosen = chosen.drop_duplicates()
    if chosen.empty:
        return
    repetitions = read_repetitions(Path(timings_parquet), set(chosen["exp_id"].astype(int)))
    text_medians = medians.assign(**{k: medians[k].astype(str) for k in DEPLOYMENT_KEYS})
    for _, experiment in chosen.iterrows():
        key = (experiment["mpi"], experiment["nodes"], experiment["ppn"], int(experiment["exp_id"]))
        mask = np.ones(len(repetitions), dtype=bool)
        run_mask = np.ones(len(text_medians), dtype=bool)
        for name, value in zip(EXPERIMENT_KEYS, key, strict=True):
            mask &= (repetitions[name] == value).to_numpy()
            run_mask &= (text_medians[name] == value).to_numpy()
        where = f"{key[0]} {deployment_name(key[1], key[2])}"
        name = safe_name(key[0], deployment_name(key[1], key[2]), f"exp{key[3]:06d}") + ".png"
        footer = provenance_of_runs(campaign, where, options.run_band)
        draw(FigureJob(variability_plot, (
            repetitions.loc[mask], text_medians.loc[run_mask, "median_s"],
            _describe(medians, key), outdir / PLOTS_TREE / name, footer)))  # fmt: skip
