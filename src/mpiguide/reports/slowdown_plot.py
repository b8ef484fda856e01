"""MPINPC's overview of slowdown.csv: Figure 3 of S. Hunold, "Verifying Performance Guidelines
for MPI Collectives at Scale" (SC-W 2023), collectives by message size, coloured by the
severity of their slowdown (mpiguide.analysis.slowdown) — and, unlike the paper's figure, a
collective none of whose competitors is significantly faster is drawn as a pass only where all
its tests hold: where one is undecided it has a class of its own (slowdown.csv's verdict)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from mpiguide.analysis.analysis_types import Decisions
from mpiguide.analysis.slowdown import LOW_BELOW, SEVERITY_BOUNDS, SEVERITY_LABELS, read_slowdown
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.reports.figure_drawing import FigureJob
from mpiguide.reports.figure_style import (
    VERDICT_LEGEND,
    figure_footer,
    read_footer_tests,
    slowdown_tests,
    with_provenance,
)

# The overview's classes, least severe first (a cell shows the most severe of its rows): a row
# whose tests all hold, one where some test could not tell, then a violation's severities.
CLASSES = (HOLDS, UNDECIDED, *SEVERITY_LABELS)


def _percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:.0f} %"


# The severities as §4 gives them: how much slower the default is than the fastest competitor.
SEVERITY_RANGES = dict(
    zip(
        SEVERITY_LABELS,
        (f"< {_percent(LOW_BELOW)}", *(f"≤ {_percent(bound)}" for bound in SEVERITY_BOUNDS),
         f"> {_percent(SEVERITY_BOUNDS[-1])}"),
        strict=True,
    )
)  # fmt: skip
CLASS_LABELS = {
    HOLDS: "holds: every test rules a violation out",
    UNDECIDED: VERDICT_LEGEND[UNDECIDED],
    **{label: f"{label}: {SEVERITY_RANGES[label]}" for label in SEVERITY_LABELS},
}
# Colours that tell every class apart for red-green and blue-yellow colour-blind readers too
# (tests/unit/analysis/test_slowdown.py simulates them): a pass in a bluish green, which red-green
# colour blindness does not merge into the warm colours as it would a pure green; undecided in
# grey, hatched, no colour of a verdict; violations in ColorBrewer's YlOrRd, darker and redder
# the more severe, none of them green.
CLASS_COLOURS = dict(
    zip(
        CLASSES,
        ("#009e73", "#bdbdbd", "#ffeda0", "#feb24c", "#fc4e2a", "#bd0026", "#800026"),
        strict=True,
    )
)
SEVERITY_TITLE = (
    f"{VIOLATED}: the default slower than its fastest significantly faster alternative by"
)
UNDECIDED_HATCH = "///"
HATCH_COLOUR = "#636363"
NO_TEST_COLOUR = "white"  # a collective the campaign did not test at a size
NO_TEST_LABEL = "no test"
# A panel of Figure 3 per value of these columns of slowdown.csv.
PANEL_KEYS = ["mpi", "N", "ppn"]
SAVE_DPI = 120


def overview_classes(table: pd.DataFrame) -> pd.Series:
    """Per row of slowdown.csv its overview class: its severity where it is violated, else its
    verdict (HOLDS or UNDECIDED)."""
    return table["severity"].where(table["verdict"] == VIOLATED, table["verdict"])


def _legends(figure: plt.Figure, no_test: bool, bottom: float) -> None:
    """Below the panels, two rows: the verdicts that are no violation (and NO_TEST_LABEL where
    a cell is empty), then a violation's severities."""
    quiet = [
        Patch(facecolor=CLASS_COLOURS[HOLDS], edgecolor="none", label=CLASS_LABELS[HOLDS]),
        Patch(facecolor=CLASS_COLOURS[UNDECIDED], edgecolor=HATCH_COLOUR, linewidth=0,
              hatch=UNDECIDED_HATCH, label=CLASS_LABELS[UNDECIDED]),
    ]  # fmt: skip
    if no_test:
        quiet.append(Patch(facecolor=NO_TEST_COLOUR, edgecolor=CLASS_COLOURS[UNDECIDED],
                           label=NO_TEST_LABEL))  # fmt: skip
    severities = [
        Patch(facecolor=CLASS_COLOURS[label], edgecolor="none", label=CLASS_LABELS[label])
        for label in SEVERITY_LABELS
    ]
    height = figure.get_size_inches()[1]
    figure.legend(handles=quiet, loc="lower center", bbox_to_anchor=(0.5, bottom + 0.5 / height),
                  ncol=len(quiet), frameon=False, fontsize=8)  # fmt: skip
    figure.legend(
        handles=severities, loc="lower center", bbox_to_anchor=(0.5, bottom), ncol=len(severities),
        frameon=False, fontsize=8, title=SEVERITY_TITLE,
        title_fontsize=8,
    )  # fmt: skip


def overview_figure(table: pd.DataFrame, provenance_line: str = "") -> plt.Figure:
    """Figure 3: per mpi and deployment a panel of collectives (rows) by message size (columns),
    each cell coloured by its class (overview_classes), an undecided one hatched as well, under a
    title led by `provenance_line`. Where several experiments share a collective and size (other
    parameters differ), the cell shows the most severe."""
    classes = list(CLASSES)
    table = table.assign(_class=overview_classes(table).map(classes.index))
    panels = list(table.groupby(PANEL_KEYS, sort=True)) if len(table) else []
    legend_inches = 0.85
    height = 0.6 + legend_inches + 3.2 * max(len(panels), 1)
    figure, axes = plt.subplots(max(len(panels), 1), 1, figsize=(8, height), squeeze=False,
                                dpi=SAVE_DPI)  # fmt: skip
    cmap = ListedColormap([CLASS_COLOURS[c] for c in classes]).with_extremes(bad=NO_TEST_COLOUR)
    no_test = False
    for ax, ((mpi, nodes, ppn), part) in zip(axes[:, 0], panels, strict=False):
        grid = part.pivot_table(index="collective", columns="count", values="_class", aggfunc="max")
        cells = grid.to_numpy(dtype=float)
        no_test |= bool(np.isnan(cells).any())
        ax.imshow(cells, cmap=cmap, vmin=-0.5, vmax=len(classes) - 0.5, aspect="auto")
        for y, x in zip(*np.nonzero(cells == classes.index(UNDECIDED)), strict=True):
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, linewidth=0,
                                   hatch=UNDECIDED_HATCH, edgecolor=HATCH_COLOUR))  # fmt: skip
        ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns])
        ax.set_yticks(range(len(grid.index)), list(grid.index))
        # white lines between the cells, so that neighbours of one class can be counted
        ax.set_xticks(np.arange(len(grid.columns) + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(len(grid.index) + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        ax.set_xlabel("message size (B)")
        ax.set_title(f"{mpi}, {nodes} x {ppn} processes")
    if not panels:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no le tests", ha="center", va="center")
    figure.suptitle(
        with_provenance(
            provenance_line, "slowdown against the fastest significantly faster alternative"
        ),
        fontsize=9,
    )
    bottom = legend_inches / height
    figure.tight_layout(rect=(0, bottom, 1, 1))
    _legends(figure, no_test, 0.02 / height)
    return figure


def overview_job(
    slowdown_csv: Path, tests_csv: Path, decisions: Decisions, campaign: str, path: Path
) -> FigureJob:
    """The overview of slowdown.csv to draw into `path` (figure_drawing.FigureJob), its footer
    stating the campaign and what its `le` tests in tests.csv were decided with."""
    drawn = slowdown_tests(read_footer_tests(tests_csv))
    footer = figure_footer(campaign, decisions, drawn)
    return FigureJob(plot_overview, (read_slowdown(slowdown_csv), path, footer))


def plot_overview(table: pd.DataFrame, path: Path, provenance_line: str = "") -> None:
    """overview_figure of `table` as a PNG."""
    figure = overview_figure(table, provenance_line)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=SAVE_DPI, bbox_inches="tight")
    plt.close(figure)
