"""summary.md / summary.csv in the layout of a paper's published table (analysis.layout).

A layout lists a table's rows in the paper's order, each with the paper's row label and the
catalogue entry whose tests it counts. Cells are as in tables.table3_markdown: "violated
tests/tests (violated groups/groups)", one column per deployment, one table per mpi entry.
Which entry is which row follows from the paper (docs/guidelines.md, "The papers' tables").

Only names here at import time (analysis_types.py checks `analysis.layout` against them and must
load fast); pandas comes with the summary passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# The default layout: one row per selected guideline, labelled by its id (tables.py).
GUIDELINE_LAYOUT = "guidelines"


@dataclass(frozen=True)
class PaperTable:
    title: str
    rows: tuple[tuple[str, str], ...]  # (the paper's row label, catalogue id)


LUBBE_TABLE3 = PaperTable(
    title=(
        "Lübbe 2017, Table 3: guideline violations with neighbourhoods of radius 1 "
        "(nbhcoll campaigns)"
    ),
    rows=(
        ("Neigh_allgather ≼ Neigh_alltoall", "GL4"),
        ("Cart ≼ Vneum", "GL9"),
        ("FMAJ ≼ RAND", "GL11-FMAJ-RAND"),
        ("LMAJ ≼ RAND", "GL11-LMAJ-RAND"),
        ("reorder=1 ≼ reorder=0", "GL12-AS-TESTED"),
    ),
)
LUBBE_TABLE4 = PaperTable(
    title="Lübbe 2017, Table 4: guideline violations in campaign full-jupiter",
    rows=(
        ("Allgather ≼ Neigh_allgather", "GL7"),
        ("Alltoall ≼ Neigh_alltoall", "GL8"),
        ("Neigh_allgather ≼ Neigh_alltoall", "GL4"),
        ("LINEAR ≼ RAND", "GL11-LINEAR-RAND"),
        ("reorder=1 ≼ reorder=0", "GL12-AS-TESTED"),
    ),
)
PAPER_TABLES = {"lubbe-table3": LUBBE_TABLE3, "lubbe-table4": LUBBE_TABLE4}
LAYOUTS = (GUIDELINE_LAYOUT, *PAPER_TABLES)


def row_labels(layout: str, guideline_ids: list[str]) -> list[tuple[str, str]]:
    """(label, guideline id) of every row of summary.md: the paper's rows in its order, then
    every other selected guideline under its own id."""
    table = PAPER_TABLES.get(layout)
    paper_rows = list(table.rows) if table else []
    in_table = {guideline_id for _, guideline_id in paper_rows}
    return paper_rows + [(g, g) for g in guideline_ids if g not in in_table]


def labelled_summary(summary: pd.DataFrame, layout: str, guideline_ids: list[str]) -> pd.DataFrame:
    """summary.csv: a `row` column first (the paper's label, or the guideline id), rows in the
    order of `row_labels`; a guideline counted by two rows appears once per row."""
    import pandas as pd

    pieces = [
        summary.loc[summary["guideline"] == guideline_id].assign(row=label)
        for label, guideline_id in row_labels(layout, guideline_ids)
    ]
    labelled = pd.concat(pieces, ignore_index=True) if pieces else summary.assign(row=[])
    return labelled[["row", *summary.columns]]


def title(layout: str) -> str | None:
    """The heading of summary.md in a paper's layout (None: the default layout)."""
    table = PAPER_TABLES.get(layout)
    return f"In the layout of {table.title}" if table else None
