"""MPINPC's view of a library's algorithms: Figure 5 of S. Hunold, "Verifying Performance
Guidelines for MPI Collectives at Scale" (SC-W 2023) compares the median runtimes of one
collective's implementations. Here, from algorithms.csv (mpiguide.tune.choose), per swept entry,
collective and deployment: each algorithm's median against the library's own choice, by message
size, each point marked with its ALGO test's verdict (the shapes every verdict figure uses) in
the algorithm's colour. Apart from outputs.py, which writes the text files without matplotlib."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.reports.figure_style import VERDICT_MARKERS, VERDICTS
from mpiguide.tune.words import times


def verdict_labels(options: AnalysisOptions | None) -> dict[str, str]:
    """What each verdict of an ALGO test says about the algorithm, with the bar it was held to
    (analysis.tuning's, where `options` are known)."""
    bar = "" if options is None else f" {times(options.tuning.v_thres)}"
    test = (
        "" if options is None
        else f" (p \u2264 {options.tuning.p_thres:g}, \u2265 {times(options.tuning.v_thres)})"
    )  # fmt: skip
    return {
        VIOLATED: f"violated: faster than the default{test}",
        HOLDS: f"holds: not{bar} faster",
        UNDECIDED: "undecided: these runs cannot tell",
    }


def plot_algorithms(
    figure5: pd.DataFrame, path: Path, options: AnalysisOptions | None = None
) -> None:
    """Write algorithms_figure as a PNG."""
    figure = algorithms_figure(figure5, options)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=120, bbox_inches="tight")
    plt.close(figure)


def algorithms_figure(figure5: pd.DataFrame, options: AnalysisOptions | None = None) -> Figure:
    """One panel per (entry, op, nodes, ppn): median time by msg_size, the default dashed, each
    algorithm's points shaped by their verdict, a legend of both."""
    keys = ["mpi", "op", "nodes", "ppn"]
    panels = list(figure5.groupby(keys, sort=True)) if len(figure5) else []
    count = max(len(panels), 1)
    figure, axes = plt.subplots(count, 1, figsize=(10, 1.0 + 3.0 * count), squeeze=False)
    labels = verdict_labels(options)
    for ax, ((mpi, op, nodes, ppn), part) in zip(axes[:, 0], panels, strict=False):
        sized = part.dropna(subset=["msg_size"]).sort_values("msg_size")
        x = sized["msg_size"].astype(float).clip(lower=1)
        default = sized.groupby("msg_size", sort=True)["default_median_s"].median()
        ax.plot(np.maximum(default.index.to_numpy(dtype=float), 1), default.to_numpy() * 1e6,
                "k--", marker="s", label="library's choice")  # fmt: skip
        for algorithm, rows in sized.groupby("algorithm", sort=True):
            xs = x.loc[rows.index]
            (line,) = ax.plot(xs, rows["median_s"] * 1e6, label=str(algorithm))
            for verdict in VERDICTS:
                mine = rows["verdict"] == verdict
                ax.plot(xs[mine], rows.loc[mine, "median_s"] * 1e6, linestyle="none",
                        marker=VERDICT_MARKERS[verdict], markersize=7, color=line.get_color(),
                        mfc=line.get_color() if verdict == VIOLATED else "none")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("message size (B)")
        ax.set_ylabel("median time (µs)")
        ax.set_title(f"{mpi}: MPI_{str(op).capitalize()}, {nodes} x {ppn} processes")
        shapes = [
            Line2D([], [], linestyle="none", marker=VERDICT_MARKERS[verdict], color="0.3",
                   mfc="0.3" if verdict == VIOLATED else "none", label=labels[verdict])
            for verdict in VERDICTS
        ]  # fmt: skip
        handles, _ = ax.get_legend_handles_labels()
        ax.legend(handles=[*handles, *shapes], fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0))  # fmt: skip
    if not panels:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no algorithm measured", ha="center", va="center")
    figure.tight_layout()
    return figure
