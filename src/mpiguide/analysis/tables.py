"""Tables from tests.csv: summary.csv, summary.md (Table 3 layout) and slowdown.csv
(mpiguide.analysis.slowdown).

summary.md gives per mpi the three-way verdicts first, one cell per guideline and deployment,
"holds/violated/undecided tests (groups likewise)", then the same counts as Table 3 of Lübbe's
neighbourhood paper, "violated tests/tests (violated groups/groups)": that form alone would show
a cell whose tests are all undecided as a pass. analysis.layout can give both the rows of one of
the paper's tables (paper_tables.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS
from mpiguide.analysis.pairing import PAIR_SEPARATOR
from mpiguide.analysis.paper_tables import GUIDELINE_LAYOUT, labelled_summary, row_labels, title
from mpiguide.analysis.sequential import FUTILE, LOOK_RUNS, STOP
from mpiguide.analysis.slowdown import write_slowdown
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import SLOWDOWN_CSV, SUMMARY_CSV, SUMMARY_MD, deployment_name

if TYPE_CHECKING:
    from mpiguide.analysis.analysis_types import Guideline

SUMMARY_KEYS = ["guideline", *DEPLOYMENT_KEYS]
NO_TESTS = "-"
# An adaptive campaign's summary columns: of the undecided tests, those that stopped as futile,
# and the fewest and most runs per side of the looks they stopped at (empty without any).
FUTILE_COLUMNS = (FUTILE, "futile_min_runs", "futile_max_runs")


def parameter_columns(tests: pd.DataFrame) -> list[str]:
    """The key columns of tests.csv: mpi, nodes, ppn and the grid parameters, between
    `relation` and `group`."""
    return list(tests.columns[2 : tests.columns.get_loc("group")])


def effect_ratio(tests: pd.DataFrame) -> pd.Series:
    """How far each test is from its relation: v for le, max(v, 1/v) for approx."""
    ratio = tests["violation_ratio"]
    return ratio.where(tests["relation"] != "approx", np.maximum(ratio, 1 / ratio))


def futile_counts(tests: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame | None:
    """Per value of `keys`, FUTILE_COLUMNS: the tests that stopped as futile and the fewest and
    most runs per side they stopped at; None for tests of a fixed campaign (no `stop`)."""
    if STOP not in tests:
        return None
    futile = tests[STOP] == FUTILE
    runs = pd.to_numeric(tests[LOOK_RUNS], errors="coerce").where(futile)
    by_key = runs.groupby([tests[key] for key in keys], sort=False)
    counts = pd.DataFrame({
        FUTILE_COLUMNS[0]: futile.groupby([tests[key] for key in keys], sort=False).sum(),
        FUTILE_COLUMNS[1]: by_key.min().astype("Int64"),
        FUTILE_COLUMNS[2]: by_key.max().astype("Int64"),
    })  # fmt: skip
    return counts.astype({FUTILE_COLUMNS[0]: int})


def futile_note(futile: int, fewest: object, most: object) -> str:
    """What follows an undecided count: " (5 futile at 10-20 runs)", or nothing."""
    if not futile:
        return ""
    runs = f"{fewest}" if fewest == most else f"{fewest}-{most}"
    return f" ({futile} futile at {runs} runs)"


def summarise(tests: pd.DataFrame) -> pd.DataFrame:
    """Per guideline, mpi and deployment: tests, violated, groups, violated groups; the tests
    and groups that hold and that are undecided (for an adaptive campaign, and of them the
    futile ones: FUTILE_COLUMNS); the median detectable ratio; and the worst violation (largest
    effect ratio) with its confidence bounds and Hodges-Lehmann ratio and interval."""
    frame = tests.assign(
        _effect=effect_ratio(tests),
        _holds=tests["verdict"] == HOLDS,
        _undecided=tests["verdict"] == UNDECIDED,
    )
    summary = frame.groupby(SUMMARY_KEYS, sort=False).agg(
        tests=("violated", "size"),
        violated=("violated", "sum"),
        groups=("group", "nunique"),
    )
    violated = frame.loc[frame["violated"].astype(bool)]
    by_deployment = violated.groupby(SUMMARY_KEYS, sort=False)
    summary["violated_groups"] = (
        by_deployment["group"].nunique().reindex(summary.index, fill_value=0).astype(int)
    )
    summary["holds"] = frame.groupby(SUMMARY_KEYS, sort=False)["_holds"].sum()
    summary["undecided"] = frame.groupby(SUMMARY_KEYS, sort=False)["_undecided"].sum()
    groups = frame.drop_duplicates([*SUMMARY_KEYS, "group"])
    for verdict, column in ((HOLDS, "holds_groups"), (UNDECIDED, "undecided_groups")):
        counts = (groups["group_verdict"] == verdict).groupby(
            [groups[key] for key in SUMMARY_KEYS], sort=False
        )
        summary[column] = counts.sum().reindex(summary.index, fill_value=0).astype(int)
    futile = futile_counts(tests, SUMMARY_KEYS)
    if futile is not None:
        summary = summary.join(futile)
    summary["median_detectable_ratio"] = frame.groupby(SUMMARY_KEYS, sort=False)[
        "detectable_ratio"
    ].median()
    worst = violated.loc[by_deployment["_effect"].idxmax()].set_index(SUMMARY_KEYS)
    worst = worst[["_effect", "ratio_low", "ratio_high", "hl_ratio", "hl_low", "hl_high"]]
    worst.columns = [
        "worst_ratio",
        "worst_ratio_low",
        "worst_ratio_high",
        "worst_hl_ratio",
        "worst_hl_low",
        "worst_hl_high",
    ]
    return summary.join(worst).reset_index()


def deployment_label(nodes: object, ppn: object) -> str:
    """`nodes`x`ppn`; a "|" (lhs|rhs when a guideline compares deployments) escaped for Markdown."""
    return deployment_name(str(nodes), str(ppn)).replace(PAIR_SEPARATOR, "\\" + PAIR_SEPARATOR)


def table3_markdown(
    summary: pd.DataFrame, guideline_ids: Sequence[str], layout: str = GUIDELINE_LAYOUT
) -> str:
    """Per mpi, Markdown tables of guidelines by deployments: the three-way verdicts
    "holds/violated/undecided (the same of groups)", then Table 3's "vio/tests
    (vioGroups/groups)", then (adaptive campaigns) the futile undecided tests; rows and their
    labels as `layout` says (paper_tables.row_labels)."""
    rows = row_labels(layout, list(guideline_ids))
    heading = title(layout)
    lines = [
        "# Guideline verdicts",
        *(["", heading] if heading else []),
        "",
        f"Per MPI library, {NO_TESTS} where the campaign has no test of the guideline.",
    ]
    summary = summary.assign(
        deployment=[
            deployment_label(n, p) for n, p in zip(summary["nodes"], summary["ppn"], strict=True)
        ],
        cell=[
            f"{v}/{t} ({vg}/{g})"
            for v, t, vg, g in zip(
                summary["violated"],
                summary["tests"],
                summary["violated_groups"],
                summary["groups"],
                strict=True,
            )
        ],
    )
    summary = summary.assign(
        three_way=[
            f"{h}/{v}/{u} ({hg}/{vg}/{ug})"
            for h, v, u, hg, vg, ug in zip(
                summary["holds"],
                summary["violated"],
                summary["undecided"],
                summary["holds_groups"],
                summary["violated_groups"],
                summary["undecided_groups"],
                strict=True,
            )
        ]
    )
    adaptive = FUTILE in summary
    if adaptive:
        summary = summary.assign(
            futile_cell=[
                f"{undecided}{futile_note(*futile)}"
                for undecided, *futile in zip(
                    summary["undecided"], *(summary[c] for c in FUTILE_COLUMNS), strict=True
                )
            ]
        )
    for mpi, part in summary.groupby("mpi", sort=True):
        deployments = sorted(part["deployment"].unique(), key=_deployment_order)
        lines += ["", f"## {mpi}", "", THREE_WAY_NOTE]
        lines += _markdown_table(part, "three_way", rows, deployments)
        lines += ["", TABLE3_NOTE]
        lines += _markdown_table(part, "cell", rows, deployments)
        if adaptive:
            lines += ["", FUTILE_NOTE]
            lines += _markdown_table(part, "futile_cell", rows, deployments)
    untested = untested_guidelines(summary, guideline_ids)
    if untested:
        lines += ["", f"{UNTESTED_NOTE}: {', '.join(untested)}"]
    return "\n".join(lines) + "\n"


THREE_WAY_NOTE = (
    "Three-way verdicts, each cell: tests that hold/are violated/are undecided (groups likewise;"
    " a group holds when all its tests hold, is violated when any is)."
)

TABLE3_NOTE = (
    "The same counted as in Lübbe 2017's Tables 3 and 4, each cell: violated tests/tests (violated"
    " groups/groups); a test that is not violated holds or is undecided, as the table above says."
)

FUTILE_NOTE = (
    "Undecided tests of this adaptive campaign, each cell: undecided (of them futile at the runs"
    " per side of the looks they stopped at: even the campaign's `max` runs would most likely"
    " not have decided them)."
)


def _markdown_table(
    part: pd.DataFrame, column: str, rows: list[tuple[str, str]], deployments: list[str]
) -> list[str]:
    cells = part.pivot(index="guideline", columns="deployment", values=column)
    lines = ["", "| Guideline | " + " | ".join(deployments) + " |"]
    lines.append("|---|" + "---|" * len(deployments))
    for label, guideline_id in rows:
        row = [
            cells.at[guideline_id, d]
            if guideline_id in cells.index and isinstance(cells.at[guideline_id, d], str)
            else NO_TESTS
            for d in deployments
        ]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return lines


UNTESTED_NOTE = "Guidelines without any test (no lhs experiment pairs with an rhs one in this data)"


def untested_guidelines(summary: pd.DataFrame, guideline_ids: Sequence[str]) -> list[str]:
    """Selected guidelines that produced no test at all: reported, never silently dropped."""
    tested = set(summary["guideline"])
    return [guideline_id for guideline_id in guideline_ids if guideline_id not in tested]


def _deployment_order(label: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in label.split("x"))


def write_tables(
    tests: pd.DataFrame,
    guidelines: Sequence[Guideline],
    outdir: Path,
    layout: str = GUIDELINE_LAYOUT,
) -> None:
    """summary.csv, summary.md and slowdown.csv of `tests` into outdir; summary.* in `layout`
    (analysis.layout)."""
    keys = parameter_columns(tests)
    summary = summarise(tests)
    ids = [g.id for g in guidelines]
    table = summary if layout == GUIDELINE_LAYOUT else labelled_summary(summary, layout, ids)
    with atomic_path(outdir / SUMMARY_CSV) as temporary:
        table.to_csv(temporary, index=False)
    markdown = table3_markdown(summary, ids, layout)
    with atomic_path(outdir / SUMMARY_MD) as temporary:
        temporary.write_text(markdown)
    write_slowdown(tests, keys, outdir / SLOWDOWN_CSV)
