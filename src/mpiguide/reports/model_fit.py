"""Least-squares fits of latency models (models.py) to run medians, and where the data leave them.

Per selected model, MPI entry and operation: least squares (statsmodels OLS, or WLS of the
relative errors with analysis.model_weighting: relative) of the run medians in microseconds on
the model's terms, every point a run median (n = message size,
p = nodes x ppn). Outputs in the output directory:

- models.csv: model, mpi, op, parameter, estimate, ci_low, ci_high (95 % confidence interval),
  r2, n (run medians fitted), published (the source's value, empty when it gives none);
- residuals.csv: per experiment (mpi, deployment, exp_id) the median of its run medians, the
  model's value there, the relative residual (observed - fitted) / fitted and `off_model` when
  its absolute value exceeds analysis.model_tolerance;
- plots/<model>-<mpi>-<op>.png: data and model, as Parker et al.'s Figures 5, 7 and 9, under a
  title that names the campaign, the MPI entry and the fit's options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.guidelines import read_medians, with_nprocs
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import MODELS_CSV, PLOTS_TREE, RESIDUALS_CSV, safe_name
from mpiguide.reports.figure_drawing import save_figure
from mpiguide.reports.figure_style import provenance_of_fit, with_provenance
from mpiguide.reports.models import Model, Selection, load_models, resolve_models

MICROSECONDS = 1e6
CONFIDENCE = 0.95
MODEL_COLUMNS = [
    "model", "mpi", "op", "parameter", "estimate", "ci_low", "ci_high", "r2", "n", "published",
]  # fmt: skip
RESIDUAL_COLUMNS = [
    "model", "mpi", "op", "exp_id", "nodes", "ppn", "nprocs", "msg_size", "observed_us",
    "fitted_us", "relative_residual", "off_model",
]  # fmt: skip


def _points(medians: pd.DataFrame, model: Model, mpi: str, op: str, where: str) -> pd.DataFrame:
    """The run medians of one (mpi, op) as n (NaN where not applicable), p and latency in
    microseconds."""
    rows = medians.loc[(medians["mpi"].astype(str) == mpi) & (medians["op"].astype(str) == op)]
    n = pd.to_numeric(rows["msg_size"], errors="coerce")
    if model.uses_n and n.isna().any():
        raise DataError(f"{where}: the model depends on n, but {op} has no msg_size")
    return pd.DataFrame(
        {
            "exp_id": rows["exp_id"].to_numpy(),
            "nodes": rows["nodes"].to_numpy(),
            "ppn": rows["ppn"].to_numpy(),
            "nprocs": rows["nprocs"].to_numpy(dtype=np.float64),
            "msg_size": n.to_numpy(dtype=np.float64),
            "latency_us": rows["median_s"].to_numpy(dtype=np.float64) * MICROSECONDS,
        }
    )


def _fit_one(model: Model, points: pd.DataFrame, weighting: str, where: str) -> Any:
    """statsmodels OLS (absolute) or WLS (relative: weights 1/fitted latency²) results;
    DataError when the points cannot determine the coefficients."""
    design = model.design(points["msg_size"], points["nprocs"])
    latency = points["latency_us"].to_numpy()
    n_terms = design.shape[1]
    if not model.determined_by(points["msg_size"], points["nprocs"]) or len(points) <= n_terms:
        sizes = sorted(points["msg_size"].unique())
        counts = sorted(points["nprocs"].unique())
        raise DataError(
            f"{where}: {len(points)} run medians at p in {[int(c) for c in counts]}"
            + (f", n in {[int(s) for s in sizes]}" if model.uses_n else "")
            + f" cannot determine the {n_terms} coefficients of {model.text} "
            "(need more process counts or message sizes, and more points than coefficients)"
        )
    if weighting == "absolute":
        return sm.OLS(latency, design).fit()
    if (latency <= 0).any():
        raise DataError(f"{where}: a latency of 0 has no relative error; use absolute weighting")
    # Weights from the observations correlate with their noise and bias the fit low; a second
    # pass weights by the first pass's fitted values (the observed latency where not positive).
    first = sm.WLS(latency, design, weights=latency**-2.0).fit()
    scale = np.where(first.fittedvalues > 0, first.fittedvalues, latency)
    return sm.WLS(latency, design, weights=scale**-2.0).fit()


def fit_models(
    medians: pd.DataFrame, selections: Sequence[Selection], options: AnalysisOptions, source: str
) -> tuple[pd.DataFrame, pd.DataFrame, list[tuple[Model, str, str, pd.DataFrame, Any]]]:
    """(models table, residuals table, fits to plot) of every selected model, mpi and op, with
    options.model_weighting and options.model_tolerance."""
    medians = with_nprocs(medians)
    coefficient_rows, residual_frames, fits = [], [], []
    for selection in selections:
        model = selection.model
        for mpi in sorted(medians["mpi"].astype(str).unique()):
            for op in selection.ops:
                where = f"{source}: model {model.id}, mpi {mpi}, op {op}"
                points = _points(medians, model, mpi, op, where)
                if points.empty:
                    raise DataError(f"{where}: no run medians of this operation")
                result = _fit_one(model, points, options.model_weighting, where)
                low, high = result.conf_int(alpha=1 - CONFIDENCE).T
                for index, name in enumerate(model.coefficients):
                    coefficient_rows.append(
                        [model.id, mpi, op, name, result.params[index], low[index], high[index],
                         result.rsquared, len(points), model.published.get(name, np.nan)]
                    )  # fmt: skip
                residual_frames.append(
                    _residuals(model, mpi, op, points, result, options.model_tolerance)
                )
                fits.append((model, mpi, op, points, result))
    table = pd.DataFrame(coefficient_rows, columns=MODEL_COLUMNS)
    residuals = (
        pd.concat(residual_frames, ignore_index=True)
        if residual_frames
        else pd.DataFrame(columns=RESIDUAL_COLUMNS)
    )
    return table, residuals, fits


def _residuals(
    model: Model, mpi: str, op: str, points: pd.DataFrame, result: Any, tolerance: float
) -> pd.DataFrame:
    """Per experiment and deployment: observed (median of run medians) against the model."""
    keys = ["exp_id", "nodes", "ppn", "nprocs", "msg_size"]
    observed = points.groupby(keys, sort=True, as_index=False, dropna=False)["latency_us"].median()
    fitted = model.predict(result.params, observed["msg_size"], observed["nprocs"])
    relative = (observed["latency_us"] - fitted) / fitted
    frame = observed.rename(columns={"latency_us": "observed_us"}).assign(
        model=model.id,
        mpi=mpi,
        op=op,
        fitted_us=fitted,
        relative_residual=relative,
        off_model=np.abs(relative) > tolerance,
    )
    frame["nprocs"] = frame["nprocs"].astype("int64")
    return frame[RESIDUAL_COLUMNS]


def plot_fit(
    model: Model, mpi: str, op: str, points: pd.DataFrame, result: Any, path: Path, footer: str = ""
) -> None:
    """Run medians and the fitted model: against n with one line per p (Parker's Figures 7 and
    9), or against p on a log2 axis when the model has no n (Figure 5), under a title led by
    `footer`."""
    import matplotlib.pyplot as plt  # after reports.figure_drawing has chosen the Agg backend

    figure, axes = plt.subplots(figsize=(7, 4.5))
    if model.uses_n:
        sizes = points["msg_size"]
        dense = np.geomspace(max(sizes.min(), 1), sizes.max(), 200)
        colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, points["nprocs"].nunique()))
        for colour, (p, part) in zip(colours, points.groupby("nprocs"), strict=True):
            axes.scatter(part["msg_size"], part["latency_us"], s=12, color=colour, alpha=0.6,
                         label=f"p = {int(p)}")  # fmt: skip
            axes.plot(dense, model.predict(result.params, dense, np.full_like(dense, p)),
                      color=colour)  # fmt: skip
        axes.set_xscale("log", base=2)
        axes.set_xlabel("message size n [bytes]")
        axes.set_yscale("log")
    else:
        counts = points["nprocs"]
        dense = np.geomspace(counts.min(), counts.max(), 200)
        axes.scatter(counts, points["latency_us"], s=12, alpha=0.6, label="run medians")
        axes.plot(dense, model.predict(result.params, np.zeros_like(dense), dense),
                  color="black", label="model")  # fmt: skip
        axes.set_xscale("log", base=2)
        axes.set_xlabel("processes p")
    estimates = ", ".join(
        f"{name} = {value:.3g}"
        for name, value in zip(model.coefficients, result.params, strict=True)
    )
    axes.set_ylabel("latency [µs]")
    title = f"{model.id} on {mpi} {op}: {model.text}\n{estimates}, R² = {result.rsquared:.3f}"
    axes.set_title(with_provenance(footer, title), fontsize=9)
    axes.legend(fontsize=8)
    save_figure(figure, path)


def fit(
    medians_parquet: str | Path,
    models_yaml: str | Path,
    selection: Sequence[Mapping[str, Any]],
    options: AnalysisOptions,
    outdir: str | Path,
    source: str = "config",
    campaign: str = "",
) -> None:
    """Fit the selected models; write models.csv, residuals.csv and plots/ into outdir, the
    plots naming `campaign`. `source` names where the selection comes from, for error
    messages."""
    outdir = Path(outdir)
    selections = resolve_models(selection, load_models(models_yaml), source)
    medians = read_medians(Path(medians_parquet))
    table, residuals, fits = fit_models(medians, selections, options, str(medians_parquet))
    (outdir / PLOTS_TREE).mkdir(parents=True, exist_ok=True)
    for name, frame in {MODELS_CSV: table, RESIDUALS_CSV: residuals}.items():
        with atomic_path(outdir / name) as temporary:
            frame.to_csv(temporary, index=False)
    for model, mpi, op, points, result in fits:
        name = safe_name(model.id, mpi, op) + ".png"
        # a fit spans every deployment of the entry: p is nodes x ppn
        footer = provenance_of_fit(campaign, f"{mpi}, every deployment", options, CONFIDENCE)
        plot_fit(model, mpi, op, points, result, outdir / PLOTS_TREE / name, footer)
