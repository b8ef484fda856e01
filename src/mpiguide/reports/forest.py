"""Forest plots: per guideline and deployment one figure of every group, each a row with the
effect of its deciding test, that test's interval and the group's verdict mark — what holds,
what is violated and what these runs cannot tell, side by side, in one file whatever the
number of groups.

A group's row shows the test farthest from its relation among those whose verdict is the
group's (the most violated test of a violated group, the most nearly violated undecided test of
an undecided one, the one nearest to violation of a holding group): `violation_ratio` on a log
axis with [`ratio_low`, `ratio_high`] from tests.csv as they are, reference lines at 1 and at
`v_thres` (and 1/`v_thres` for `approx`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from mpiguide.analysis.analysis_types import PROCESS_COUNT_KEYS, AnalysisOptions
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.paths import ALL_DEPLOYMENTS, deployment_name, forest_plot_path
from mpiguide.reports.figure_style import (
    VERDICT_COLOURS,
    VERDICT_MARKERS,
    VERDICTS,
    group_keys,
    provenance,
    save_figure,
    value_label,
    verdict_handles,
    with_provenance,
)

ROW_INCHES = 0.24


def deciding_tests(tests: pd.DataFrame) -> pd.DataFrame:
    """One row per group: the test farthest from its relation (`_effect`) among those whose
    verdict is the group's, with the group's counts of violated and undecided tests."""
    flags = pd.DataFrame({
        "guideline": tests["guideline"], "group": tests["group"], "n_tests": 1,
        "n_violated": (tests["verdict"] == VIOLATED).astype(int),
        "n_undecided": (tests["verdict"] == UNDECIDED).astype(int),
    })  # fmt: skip
    counts = flags.groupby(["guideline", "group"], sort=False).sum()
    own = tests.loc[tests["verdict"] == tests["group_verdict"]]
    chosen = own.sort_values("_effect", ascending=False, kind="stable")
    chosen = chosen.drop_duplicates(["guideline", "group"]).sort_values(["guideline", "group"])
    return chosen.join(counts, on=["guideline", "group"])


def forest_deployment(test: pd.Series, varied: str) -> tuple[str, str]:
    """The mpi entry and deployment of a group's forest plot: where the varied parameter is a
    process count a group spans the deployments (ALL_DEPLOYMENTS)."""
    if varied in PROCESS_COUNT_KEYS:
        return str(test["mpi"]), ALL_DEPLOYMENTS
    return str(test["mpi"]), deployment_name(test["nodes"], test["ppn"])


def _split_item(item: str) -> tuple[str, str]:
    """`ndim=2` or `op: a vs b` (group_keys) as (key, value)."""
    equals, colon = item.find("="), item.find(": ")
    if colon != -1 and (equals == -1 or colon < equals):
        return item[:colon], item[colon + 2 :]
    return item[:equals], item[equals + 1 :]


def row_labels(rows: pd.DataFrame, keys: list[str], varied: str) -> tuple[list[str], str, str]:
    """Each row's label — `#3 2 RAND @ 1 KiB ✗2 ?1/10`: the values of only the keys in
    which the rows differ, `n/a` where one does not apply; the names of those keys
    (`ndim ordering`), and what every row shares (`op: a vs b; nrep=10 ...`). Values without
    their keys keep the labels short: drawing them is most of a forest plot's time."""
    described = [group_keys(row, keys, varied) for _, row in rows.iterrows()]
    shared = set.intersection(*({*differing, *fixed} for differing, fixed in described))
    values = [
        dict(_split_item(item) for item in (*differing, *fixed) if item not in shared)
        for differing, fixed in described
    ]
    columns = list(dict.fromkeys(key for row in values for key in row))
    labels = []
    for (_, row), own in zip(rows.iterrows(), values, strict=True):
        marks = [f"✗{row['n_violated']}"] if row["n_violated"] else []
        marks += [f"?{row['n_undecided']}"] if row["n_undecided"] else []
        # a holding group's mark says all its tests hold: no count to add
        tally = f" {' '.join(marks)}/{row['n_tests']}" if marks else ""
        cells = " ".join(own.get(column, "n/a") for column in columns)
        labels.append(f"#{int(row['group'])} {cells} @ {value_label(varied, row[varied])}{tally}")
    differing, fixed = described[0]
    common = "; ".join(
        [item for item in differing if item in shared]
        + [" ".join(item for item in fixed if item in shared)]
    )
    return labels, " ".join(columns), common


def _reference_lines(axes: plt.Axes, relation: str, v_thres: float) -> None:
    axes.axvline(1.0, color="black", linewidth=0.8)
    thresholds = (1 / v_thres, v_thres) if relation == "approx" else (v_thres,)
    for threshold in thresholds:
        axes.axvline(threshold, color=VERDICT_COLOURS[VIOLATED], linewidth=0.8, linestyle=":")


def forest_plot(
    rows: pd.DataFrame,
    keys: list[str],
    options: AnalysisOptions,
    title: str,
    footer: str,
    path: Path,
) -> None:
    """One row per group (in `rows`, top to bottom): its deciding test's ratio as the group's
    verdict mark and that test's interval."""
    figure, axes = plt.subplots(figsize=(10, 1.6 + ROW_INCHES * len(rows)))
    y = np.arange(len(rows))
    ratio = rows["violation_ratio"].to_numpy(dtype=float)
    low = rows["ratio_low"].to_numpy(dtype=float)
    high = rows["ratio_high"].to_numpy(dtype=float)
    verdicts = rows["group_verdict"].to_numpy(dtype=object)
    finite = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in (ratio, low, high)])
    span = (
        (min(finite.min(), 1 / options.v_thres), max(finite.max(), options.v_thres))
        if len(finite)
        else (1 / options.v_thres, options.v_thres)
    )
    # an unbounded side of an interval runs to the axis' edge
    left, right = span[0] / 1.05, span[1] * 1.05
    for verdict in VERDICTS:
        mine = verdicts == verdict
        if not mine.any():
            continue
        starts = np.where(np.isfinite(low[mine]) & (low[mine] > 0), low[mine], left)
        ends = np.where(np.isfinite(high[mine]), high[mine], right)
        axes.hlines(y[mine], starts, ends, color=VERDICT_COLOURS[verdict], linewidth=1.6)
        axes.scatter(ratio[mine], y[mine], marker=VERDICT_MARKERS[verdict], s=36, zorder=3,
                     color=VERDICT_COLOURS[verdict])  # fmt: skip
    _reference_lines(axes, str(rows["relation"].iloc[0]), options.v_thres)
    axes.set_xscale("log")
    axes.set_xlim(left, right)
    labels, columns, common = row_labels(rows, keys, options.varied)
    axes.set_yticks(y, labels, fontsize=7)
    # plain ratios, evenly spaced on the log axis, whatever its span
    ticks = sorted({float(f"{tick:.2g}") for tick in np.geomspace(left, right, 7)[1:-1]} | {1.0})
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.set_xlabel(
        f"violation_ratio (lhs / rhs median of run medians, log scale) with its one-sided "
        f"{100 * options.confidence:g} % bounds [ratio_low, ratio_high]; dotted: v_thres"
    )
    axes.grid(axis="x", which="both", linewidth=0.3, alpha=0.5)
    counts = {verdict: int((verdicts == verdict).sum()) for verdict in VERDICTS}
    axes.set_title(
        with_provenance(
            footer,
            f"{title}: {len(rows)} groups — {counts[VIOLATED]} {VIOLATED}, "
            f"{counts[UNDECIDED]} {UNDECIDED}, {counts[HOLDS]} {HOLDS}\n{common}\nrows: #group "
            f"{columns} @ {options.varied} of the group's test farthest from its relation among "
            "those with the group's verdict; ✗k ?u/n: k violated, u undecided of its n tests",
        ),
        fontsize=8,
    )
    axes.legend(handles=verdict_handles(), loc="upper left", bbox_to_anchor=(1.01, 1.0),
                fontsize=7, title="group verdict", title_fontsize=7)  # fmt: skip
    save_figure(figure, path)


def forest_plots(
    tests: pd.DataFrame, keys: list[str], options: AnalysisOptions, campaign: str, outdir: Path
) -> list[Path]:
    """Per guideline and deployment a forest plot of its groups below outdir; the paths
    written."""
    rows = deciding_tests(tests)
    where = pd.DataFrame(
        [forest_deployment(row, options.varied) for _, row in rows.iterrows()],
        columns=["_mpi", "_deployment"], index=rows.index,
    )  # fmt: skip
    written = []
    for (guideline, mpi, deployment), part in pd.concat([rows, where], axis=1).groupby(
        ["guideline", "_mpi", "_deployment"], sort=True
    ):
        path = outdir / forest_plot_path(str(guideline), mpi, deployment)
        path.parent.mkdir(parents=True, exist_ok=True)
        shown = f"{mpi} {deployment}"
        forest_plot(part, keys, options, f"{guideline} ({part['relation'].iloc[0]}), {shown}",
                    provenance(campaign, options, shown), path)  # fmt: skip
        written.append(path)
    return written
