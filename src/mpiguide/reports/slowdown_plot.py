"""MPINPC's overview of slowdown.csv: Figure 3 of S. Hunold, "Verifying Performance Guidelines
for MPI Collectives at Scale" (SC-W 2023), collectives by message size, coloured by the
severity of their slowdown (mpiguide.analysis.slowdown) — and, unlike the paper's figure, a
collective none of whose competitors is significantly faster is drawn as a pass only where all
its tests hold: where one is undecided it has a class of its own (tests.csv's verdicts)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from mpiguide.analysis.pairing import lhs_side
from mpiguide.analysis.slowdown import SEVERITY_LABELS, mpi_names
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.reports.figure_style import VERDICT_COLOURS, VERDICT_LEGEND, with_provenance

# The overview's classes where no competitor is significantly faster: every test holds (Figure
# 3's unproblematic green; the paper's figure is not in its text, so its exact palette is not
# known), or some test could not tell.
NO_VIOLATION = "none"
CLASS_LABELS = {
    NO_VIOLATION: "none: every test holds",
    UNDECIDED: VERDICT_LEGEND[UNDECIDED],
    **{label: label for label in SEVERITY_LABELS},
}
# Colours of each class, least severe first: a cell shows the most severe of its experiments.
CLASS_COLOURS = dict(
    zip(
        (NO_VIOLATION, UNDECIDED, *SEVERITY_LABELS),
        (VERDICT_COLOURS[HOLDS], VERDICT_COLOURS[UNDECIDED], "#a6d96a", "#fee08b", "#fdae61",
         "#f46d43", "#a50026"),
        strict=True,
    )
)  # fmt: skip
# The cells of Figure 3, as text: slowdown.csv's columns and tests.csv's lhs side.
CELL_KEYS = ["mpi", "N", "ppn", "collective", "count"]
SAVE_DPI = 120


# What the slowdown overview reads of tests.csv.
TESTS_COLUMNS = (
    "guideline",
    "relation",
    "verdict",
    "median_rhs",
    "mpi",
    "nodes",
    "ppn",
    "op",
    "msg_size",
)


def read_verdicts(tests_csv: Path) -> pd.DataFrame:
    """TESTS_COLUMNS of tests.csv, as text."""
    if not tests_csv.is_file():
        raise DataError(f"{tests_csv}: no such file (written by `mpiguide check`)")
    try:
        header = pd.read_csv(tests_csv, nrows=0).columns
        missing = [column for column in TESTS_COLUMNS if column not in header]
        if missing:
            raise DataError(f"{tests_csv}: column {missing[0]!r} missing")
        return pd.read_csv(tests_csv, usecols=list(TESTS_COLUMNS), dtype=str,
                           keep_default_na=False)  # fmt: skip
    except (OSError, ValueError) as error:
        raise DataError(f"{tests_csv}: cannot read the tests: {error}") from None


def undecided_cells(tests: pd.DataFrame) -> pd.DataFrame:
    """CELL_KEYS of the lhs experiments of the `le` tests (those slowdown.csv holds) that have
    an undecided test."""
    le = tests.loc[(tests["relation"] == "le") & (tests["verdict"] == UNDECIDED)]
    le = le.loc[pd.to_numeric(le["median_rhs"], errors="coerce").notna()]
    cells = pd.DataFrame({
        "mpi": lhs_side(le["mpi"].astype(str)),
        "N": lhs_side(le["nodes"].astype(str)),
        "ppn": lhs_side(le["ppn"].astype(str)),
        "collective": mpi_names(lhs_side(le["op"].astype(str))),
        "count": lhs_side(le["msg_size"].astype(str)),
    })  # fmt: skip
    return cells.drop_duplicates().reset_index(drop=True)


def overview_classes(table: pd.DataFrame, undecided: pd.DataFrame) -> pd.Series:
    """Per row its overview class: its severity; else UNDECIDED where a test of its cell is
    (`undecided`: undecided_cells); else NO_VIOLATION."""
    keys = table[CELL_KEYS].astype(str)
    marked = pd.MultiIndex.from_frame(keys).isin(
        pd.MultiIndex.from_frame(undecided[CELL_KEYS].astype(str))
    )
    quiet = table["severity"].where(table["severity"] != "", NO_VIOLATION)
    return quiet.where((quiet != NO_VIOLATION) | ~marked, UNDECIDED)


def plot_overview(
    table: pd.DataFrame, undecided: pd.DataFrame, path: Path, provenance_line: str = ""
) -> None:
    """Figure 3: per mpi and deployment a panel of collectives (rows) by message size (columns),
    each cell coloured by its class (overview_classes), under a title led by `provenance_line`.
    Where several experiments share a collective and size (other parameters differ), the cell
    shows the most severe."""
    classes = list(CLASS_COLOURS)
    table = table.assign(_class=overview_classes(table, undecided).map(classes.index))
    panels = list(table.groupby(["mpi", "N", "ppn"], sort=True)) if len(table) else []
    figure, axes = plt.subplots(
        max(len(panels), 1), 1, figsize=(8, 1.9 + 3.2 * max(len(panels), 1)), squeeze=False,
        dpi=SAVE_DPI,
    )  # fmt: skip
    cmap = ListedColormap(list(CLASS_COLOURS.values()))
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
    figure.suptitle(
        with_provenance(
            provenance_line, "slowdown against the fastest significantly faster alternative"
        ),
        fontsize=9,
    )
    figure.legend(
        handles=[Patch(color=CLASS_COLOURS[c], label=CLASS_LABELS[c]) for c in classes],
        loc="lower center", ncol=4, frameon=False, fontsize=8,
    )  # fmt: skip
    figure.tight_layout(rect=(0, 0.09, 1, 1))
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=SAVE_DPI, bbox_inches="tight")
    plt.close(figure)
