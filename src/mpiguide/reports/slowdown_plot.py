"""MPINPC's overview of slowdown.csv: Figure 3 of S. Hunold, "Verifying Performance Guidelines
for MPI Collectives at Scale" (SC-W 2023), collectives by message size, coloured by the
severity of their slowdown (mpiguide.analysis.slowdown)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from mpiguide.analysis.slowdown import SEVERITY_LABELS
from mpiguide.core.atomic import atomic_path

# The overview's class where no competitor is significantly faster (Figure 3's unproblematic
# green; the paper's figure is not in its text, so its exact palette is not known).
NO_VIOLATION = "none"
# Colours of NO_VIOLATION and of each severity, from low to very high.
SEVERITY_COLOURS = dict(
    zip(
        (NO_VIOLATION, *SEVERITY_LABELS),
        ("#1a9850", "#a6d96a", "#fee08b", "#fdae61", "#f46d43", "#a50026"),
        strict=True,
    )
)


def overview_classes(table: pd.DataFrame) -> pd.Series:
    """Per row its overview class: its severity, or NO_VIOLATION."""
    return table["severity"].where(table["severity"] != "", NO_VIOLATION)


def plot_overview(table: pd.DataFrame, path: Path) -> None:
    """Figure 3: per mpi and deployment a panel of collectives (rows) by message size (columns),
    each cell coloured by its severity class. Where several experiments share a collective and
    size (other parameters differ), the cell shows the most severe."""
    classes = list(SEVERITY_COLOURS)
    table = table.assign(_class=overview_classes(table).map(classes.index))
    panels = list(table.groupby(["mpi", "N", "ppn"], sort=True)) if len(table) else []
    figure, axes = plt.subplots(
        max(len(panels), 1), 1, figsize=(8, 1.5 + 3.2 * max(len(panels), 1)), squeeze=False
    )
    cmap = ListedColormap(list(SEVERITY_COLOURS.values()))
    for ax, ((mpi, nodes, ppn), part) in zip(axes[:, 0], panels, strict=False):
        grid = part.pivot_table(index="collective", columns="count", values="_class", aggfunc="max")
        ax.imshow(grid.to_numpy(dtype=float), cmap=cmap, vmin=-0.5, vmax=len(classes) - 0.5,
                  aspect="auto")  # fmt: skip
        ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns])
        ax.set_yticks(range(len(grid.index)), list(grid.index))
        ax.set_xlabel("message size (B)")
        ax.set_title(f"{mpi}, {nodes} x {ppn} processes")
    if not panels:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no le tests", ha="center", va="center")
    figure.legend(
        handles=[Patch(color=c, label=label) for label, c in SEVERITY_COLOURS.items()],
        loc="lower center", ncol=len(classes), frameon=False,
    )  # fmt: skip
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=120)
    plt.close(figure)
