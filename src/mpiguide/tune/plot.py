"""MPINPC's view of a library's algorithms: Figure 5 of S. Hunold, "Verifying Performance
Guidelines for MPI Collectives at Scale" (SC-W 2023) compares the median runtimes of one
collective's implementations. Here, from algorithms.csv (mpiguide.tune.choose), per swept entry,
collective and deployment: each algorithm's median against the library's own choice, by message
size; a filled marker where the algorithm beats the default (its ALGO test violated). Apart from
outputs.py, so that `tune` without a plot loads no matplotlib."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from mpiguide.core.atomic import atomic_path


def plot_algorithms(figure5: pd.DataFrame, path: Path) -> None:
    """One panel per (entry, op, nodes, ppn): median time by msg_size, the default dashed."""
    keys = ["mpi", "op", "nodes", "ppn"]
    panels = list(figure5.groupby(keys, sort=True)) if len(figure5) else []
    count = max(len(panels), 1)
    figure, axes = plt.subplots(count, 1, figsize=(7, 1.0 + 3.0 * count), squeeze=False)
    for ax, ((mpi, op, nodes, ppn), part) in zip(axes[:, 0], panels, strict=False):
        sized = part.dropna(subset=["msg_size"]).sort_values("msg_size")
        x = sized["msg_size"].astype(float).clip(lower=1)
        default = sized.groupby("msg_size", sort=True)["default_median_s"].median()
        ax.plot(np.maximum(default.index.to_numpy(dtype=float), 1), default.to_numpy() * 1e6,
                "k--", marker="s", label="library's choice")  # fmt: skip
        for algorithm, rows in sized.groupby("algorithm", sort=True):
            xs = x.loc[rows.index]
            (line,) = ax.plot(xs, rows["median_s"] * 1e6, marker="o", mfc="none",
                              label=str(algorithm))  # fmt: skip
            faster = rows["verdict"] == "violated"
            ax.plot(xs[faster], rows.loc[faster, "median_s"] * 1e6, "o",
                    color=line.get_color())  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("message size (B)")
        ax.set_ylabel("median time (µs)")
        ax.set_title(f"{mpi}: MPI_{str(op).capitalize()}, {nodes} x {ppn} processes")
        ax.legend(fontsize="small", ncol=2)
    if not panels:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no algorithm measured", ha="center", va="center")
    figure.tight_layout()
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=120)
    plt.close(figure)
