"""Plots of the verdicts: per guideline and deployment a forest plot of every group
(reports/forest.py); overview and focus plots of the groups the campaign's `plots:` selects; one
heatmap. Every figure marks violated, undecided and holding apart (reports/figure_style.py) and
says with it which campaign and thresholds it shows, and at which one-sided levels the bounds
of its tests are (tests.csv's low_level, high_level) and what their effect is.

- overview/<guideline>-group<NNNN>-<verdict>.png: median of run medians of both sides against the
  varied parameter (log scales), violated points circled, undecided ones boxed.
- focus/<guideline>-group<NNNN>-<verdict>.png: box plots of every run's repetitions of both sides
  at the group's most violated (or, in an undecided group, most nearly violated) value,
  normalised to lhs's median of run medians; the title gives the verdict's effect, what it is
  (the test that decided), and its bounds, each at its one-sided level.
- heatmap.png: median effect ratio per guideline and operation by varied value, each cell marked
  and framed with the verdict of its tests.

The two sides are named by what tells them apart (the operations, or e.g. `reorder=1`), message
sizes in bytes (`8 B`, `1 KiB`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
from matplotlib.collections import PolyCollection
from matplotlib.colorbar import Colorbar
from matplotlib.colors import LogNorm, Normalize, to_rgba_array
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, Decisions
from mpiguide.analysis.pairing import PAIR_SEPARATOR, lhs_side, split_pair
from mpiguide.analysis.tables import effect_ratio, parameter_columns
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.columns import STATUS, VALID
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.core.paths import HEATMAP, PLOT_SUFFIX, group_plot_name
from mpiguide.core.strict_yaml import load_package_yaml
from mpiguide.reports.figure_drawing import FigureJob, below_drawn, figure_drawer, save_figure
from mpiguide.reports.figure_style import (
    MSG_SIZE,
    SIDES,
    VERDICT_COLOURS,
    VERDICT_LEGEND,
    deployment_of,
    figure_footer,
    group_keys,
    levels_of_test,
    number_text,
    side_labels,
    statistic_text,
    value_label,
    varied_keys,
    with_provenance,
)
from mpiguide.reports.forest import forest_figures

NUMERIC_COLUMNS = (
    "group", "lhs_exp_id", "rhs_exp_id", "n_lhs", "n_rhs", "median_lhs", "median_rhs",
    "violation_ratio", "ratio_low", "ratio_high", "low_level", "high_level", "p_value",
    "p_adjusted", "hl_ratio", "hl_low", "hl_high",
)  # fmt: skip
TEXT_COLUMNS = ("guideline", "relation", "violated", "test", "verdict", "group_verdict")
SIDE_COLOURS = {"lhs": "tab:red", "rhs": "tab:blue"}
# The heatmap's mark under a cell's ratio; a holding cell has none.
CELL_MARKS = {VIOLATED: "✗", UNDECIDED: "?", HOLDS: ""}
# Ratios the heatmap's colour bar may label inside its range, rounder ones first.
RATIO_TICKS = (1.0, 2.0, 0.5, 4.0, 0.25, 1.5, 0.67, 1.25, 0.8, 1.1, 0.9, 1.05, 0.95)
NO_FOCUS = "none"
# The group verdicts each `plots.focus` selects, the most telling first.
FOCUS_VERDICTS = {VIOLATED: (VIOLATED,), UNDECIDED: (VIOLATED, UNDECIDED), NO_FOCUS: ()}


def plots_schema() -> dict[str, Any]:
    return load_package_yaml(CONFIG_SCHEMA)["properties"]["plots"]["properties"]


@dataclass(frozen=True)
class PlotOptions:
    """The campaign's `plots:` options, `focus` and `max`; every default is the schema's."""

    focus: str
    max: int

    @classmethod
    def from_mapping(cls, plots: Mapping[str, Any], source: str) -> PlotOptions:
        """Options from the config's `plots:` block, defaults for missing keys."""
        schema = plots_schema()
        unknown = set(plots) - set(schema)
        if unknown:
            raise ConfigError(
                f"{source}: plots.{sorted(unknown)[0]} is not an option; allowed: "
                f"{', '.join(schema)}"
            )
        options = cls(**{key: plots.get(key, spec["default"]) for key, spec in schema.items()})
        if options.focus not in FOCUS_VERDICTS:
            raise ConfigError(
                f"{source}: plots.focus is {options.focus!r}; allowed: {', '.join(FOCUS_VERDICTS)}"
            )
        maximum = schema["max"]["maximum"]
        if (
            not isinstance(options.max, int)
            or isinstance(options.max, bool)
            or not (0 <= options.max <= maximum)
        ):
            raise ConfigError(f"{source}: plots.max is {options.max!r}; allowed: 0 to {maximum}")
        return options

    @property
    def verdicts(self) -> tuple[str, ...]:
        """The group verdicts that get overview and focus plots."""
        return FOCUS_VERDICTS[self.focus]


def read_tests(tests_csv: Path) -> pd.DataFrame:
    """tests.csv with parameter cells as text ("" = not applicable) and numeric statistics."""
    if not tests_csv.is_file():
        raise DataError(f"{tests_csv}: no such file (written by `mpiguide check`)")
    try:
        tests = pd.read_csv(tests_csv, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise DataError(f"{tests_csv}: cannot read the tests: {error}") from None
    missing = [c for c in (*NUMERIC_COLUMNS, *TEXT_COLUMNS) if c not in tests]
    if missing and len(tests.columns):
        raise DataError(f"{tests_csv}: column {missing[0]!r} missing")
    for column in NUMERIC_COLUMNS:
        if column in tests:
            numbers = pd.to_numeric(tests[column], errors="coerce")
            bad = numbers.isna() & (tests[column] != "")
            if bad.any():
                line = int(bad.to_numpy().argmax()) + 2  # the header is line 1
                raise DataError(
                    f"{tests_csv}:{line}: {column} {tests[column][bad].iloc[0]!r} is not a number"
                )
            tests[column] = numbers
    if "violated" in tests:
        tests["violated"] = tests["violated"] == "True"
    return tests


def _x_values(values: pd.Series) -> tuple[pd.Series, bool]:
    """The lhs side of the varied parameter, as numbers when all of them are numbers."""
    lhs = lhs_side(values)
    numbers = pd.to_numeric(lhs, errors="coerce")
    return (numbers, True) if numbers.notna().all() else (lhs, False)


def _describe_group(group: pd.DataFrame, keys: list[str], varied: str) -> str:
    """Title of a group: guideline, its verdict, deployment and the keys where lhs and rhs
    differ."""
    first = group.iloc[0]
    deployment = deployment_of(first, varied)
    differing, fixed = group_keys(first, keys, varied)
    return (
        f"{first['guideline']} group {first['group']} ({deployment}): "
        f"{first['group_verdict']}; {'; '.join(item.text for item in differing)}\n"
        + " ".join(item.text for item in fixed)
    )


def _label_x_axis(axes: plt.Axes, frame: pd.DataFrame, varied: str, numeric: bool) -> None:
    """The varied parameter's measured values as ticks, sizes with their unit."""
    axes.set_xlabel(f"{varied} (bytes)" if varied == MSG_SIZE else varied)
    if not numeric:
        return
    values = sorted(frame["_x"].unique())
    axes.xaxis.set_major_locator(FixedLocator(values))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xticks(values, [value_label(varied, value) for value in values],
                    rotation=45 if len(values) > 6 else 0)  # fmt: skip


def overview_plot(
    group: pd.DataFrame, keys: list[str], varied: str, footer: str, path: Path
) -> None:
    x, numeric = _x_values(group[varied])
    frame = group.assign(_x=x).sort_values("_x")
    names = side_labels(frame.iloc[0], keys, exclude=varied_keys(varied))
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for side, name in zip(SIDES, names, strict=True):
        axes.plot(frame["_x"], frame[f"median_{side}"], marker="o", label=name,
                  color=SIDE_COLOURS[side])  # fmt: skip
    # every verdict in the legend, so that an unmarked point reads as a holding one
    for verdict, marker, style in ((VIOLATED, "o", "-"), (UNDECIDED, "s", "--")):
        marked = frame.loc[frame["verdict"] == verdict]
        axes.scatter(marked["_x"], marked["median_lhs"], s=160, marker=marker,
                     facecolors="none", edgecolors=VERDICT_COLOURS[verdict], linewidths=1.8,
                     linestyles=style, label=VERDICT_LEGEND[verdict], zorder=3)  # fmt: skip
    axes.plot([], [], linestyle="none", label=f"unmarked: {VERDICT_LEGEND[HOLDS]}")
    axes.set_yscale("log")
    if numeric and (frame["_x"] > 0).all():
        # process counts and sizes on log2 (both are mostly powers of two), as Parker's figures
        axes.set_xscale("log", base=2)
    _label_x_axis(axes, frame, varied, numeric)
    axes.set_ylabel("median of run medians [s]")
    axes.set_title(with_provenance(footer, _describe_group(frame, keys, varied)), fontsize=8,
                   color=VERDICT_COLOURS[frame["group_verdict"].iloc[0]])  # fmt: skip
    # beside the axes: searching for the best place inside costs more than the drawing
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(figure, path)


def box_statistics(boxes: pd.DataFrame) -> pd.DataFrame:
    """Per run and side of `boxes` (run, side, time) a box plot's figures, as matplotlib's
    boxplot computes them: quartiles, median and the whiskers' ends (the extreme values within
    1.5 IQR of the quartiles)."""
    grouped = boxes.groupby(["run", "side"], sort=True)["time"]
    stats = grouped.quantile([0.25, 0.5, 0.75]).unstack()
    stats.columns = ["q1", "median", "q3"]
    reach = 1.5 * (stats["q3"] - stats["q1"])
    bounds = boxes.join((stats["q1"] - reach).rename("_low"), on=["run", "side"]).join(
        (stats["q3"] + reach).rename("_high"), on=["run", "side"]
    )
    inside = boxes.loc[(bounds["time"] >= bounds["_low"]) & (bounds["time"] <= bounds["_high"])]
    whiskers = inside.groupby(["run", "side"], sort=True)["time"].agg(["min", "max"])
    return stats.join(whiskers.rename(columns={"min": "whisker_low", "max": "whisker_high"}))


def _clip_outliers(axes: plt.Axes, boxes: pd.DataFrame, stats: pd.DataFrame) -> None:
    """The y axis over every box's whiskers: a few repetitions 10x slower (a preempted process)
    would otherwise flatten every box; how many lie outside is printed."""
    low, high = float(stats["whisker_low"].min()), float(stats["whisker_high"].max())
    pad = 0.05 * (high - low) or 0.05 * high
    low, high = low - pad, high + pad
    outside = int(((boxes["time"] < low) | (boxes["time"] > high)).sum())
    if outside:
        axes.set_ylim(low, high)
        axes.text(0.01, 0.01, f"{outside} of {len(boxes)} repetitions outside the axis",
                  transform=axes.transAxes, fontsize=7, color="dimgrey")  # fmt: skip


BOX_WIDTH = 0.4  # of one side's box: a run's two boxes side by side fill 0.8 of its slot
BOX_LINES = "#404040"


def _draw_boxes(
    axes: plt.Axes, boxes: pd.DataFrame, stats: pd.DataFrame, side: str, slot: dict[int, float]
) -> None:
    """One side's box plots at x = slot[run]: one collection each for the boxes, the medians,
    the whiskers and their caps, one line of outliers (a box plot of matplotlib's or seaborn's
    draws half a dozen artists per box)."""
    mine = stats.xs(side, level="side")
    x = mine.index.map(slot).to_numpy(dtype=float)
    left, right = x - 0.45 * BOX_WIDTH, x + 0.45 * BOX_WIDTH
    q1, q3 = mine["q1"].to_numpy(), mine["q3"].to_numpy()
    corners = np.stack([left, q1, right, q1, right, q3, left, q3], axis=1).reshape(-1, 4, 2)
    axes.add_collection(PolyCollection(list(corners), facecolors=SIDE_COLOURS[side],
                                       edgecolors=BOX_LINES, linewidths=1.0))  # fmt: skip
    axes.hlines(mine["median"], left, right, colors=BOX_LINES, linewidth=1.5, zorder=3)
    ends = np.concatenate([mine["whisker_low"], mine["whisker_high"]])
    axes.vlines(np.tile(x, 2), ends, np.concatenate([q1, q3]), colors=BOX_LINES, linewidth=1.0)
    axes.hlines(ends, np.tile(x - BOX_WIDTH / 4, 2), np.tile(x + BOX_WIDTH / 4, 2),
                colors=BOX_LINES, linewidth=1.0)  # fmt: skip
    reps = boxes.loc[boxes["side"] == side].join(mine, on="run")
    beyond = reps.loc[(reps["time"] < reps["whisker_low"]) | (reps["time"] > reps["whisker_high"])]
    axes.plot(beyond["run"].map(slot), beyond["time"], linestyle="none", marker="o",
              markersize=2, markerfacecolor="none", color=BOX_LINES)  # fmt: skip


def focus_plot(
    test: pd.Series,
    repetitions: pd.DataFrame,
    keys: list[str],
    varied: str,
    footer: str,
    path: Path,
) -> None:
    """Box plots per run of the repetitions of one test, normalised to lhs's median; the title
    gives the verdict (in its colour), its effect, what the effect is, and its bounds each at
    its own one-sided level (tests.csv's low_level, high_level), and the Hodges-Lehmann reading
    as a second one."""
    names = dict(zip(SIDES, side_labels(test, keys), strict=True))
    normalised = repetitions.assign(time=repetitions["time_s"] / test["median_lhs"])
    runs = sorted(normalised["run"].unique())
    figure, axes = plt.subplots(figsize=(max(6, 0.5 * len(runs) + 2), 4.5))
    stats = box_statistics(normalised)
    for side, offset in zip(SIDES, (-BOX_WIDTH / 2, BOX_WIDTH / 2), strict=True):
        _draw_boxes(axes, normalised, stats, side,
                    {run: index + offset for index, run in enumerate(runs)})  # fmt: skip
    axes.set_xlim(-0.5, len(runs) - 0.5)
    axes.set_xticks(np.arange(len(runs)), [str(run) for run in runs])
    axes.set_xlabel("run")
    axes.axhline(1.0, color=SIDE_COLOURS["lhs"], linewidth=0.8, linestyle="--")
    axes.axhline(test["median_rhs"] / test["median_lhs"], color=SIDE_COLOURS["rhs"],
                 linewidth=0.8, linestyle="--")  # fmt: skip
    axes.set_ylabel("time / median of lhs run medians")
    _clip_outliers(axes, normalised, stats)
    axes.legend(handles=[Patch(facecolor=SIDE_COLOURS[side], edgecolor=BOX_LINES, label=name)
                         for side, name in names.items()],
                fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # fmt: skip
    at = value_label(varied, test[varied])
    low, high = levels_of_test(test)
    axes.set_title(
        f"{footer}\n{test['guideline']} group {test['group']} at {varied}={at}:"
        f" {test['verdict']} (group {test['group_verdict']})\n"
        f"violation_ratio {number_text(test['violation_ratio'])}: "
        f"{statistic_text(test.to_frame().T)}, p_adjusted {number_text(test['p_adjusted'])}\n"
        f"bounds one-sided: lower {number_text(test['ratio_low'])} at {low} %, upper "
        f"{number_text(test['ratio_high'])} at {high} %\n"
        f"Hodges-Lehmann reading (not used by the verdict): {number_text(test['hl_ratio'])} "
        f"[{number_text(test['hl_low'])}, {number_text(test['hl_high'])}]",
        fontsize=8,
        color=VERDICT_COLOURS[test["verdict"]],
    )  # fmt: skip
    save_figure(figure, path)


def _cell_verdict(verdicts: pd.Series) -> str:
    """A heatmap cell's verdict, as a group's: violated if any test is, holds if all do."""
    if (verdicts == VIOLATED).any():
        return VIOLATED
    return HOLDS if (verdicts == HOLDS).all() else UNDECIDED


def _cell_mark(verdicts: pd.Series) -> str:
    """A cell's mark and how many of its tests carry the cell's verdict (`✗ 1/10`): the median
    ratio printed beside it can hide the one violated test."""
    verdict = _cell_verdict(verdicts)
    if verdict == HOLDS:
        return CELL_MARKS[HOLDS]
    return f"{CELL_MARKS[verdict]} {int((verdicts == verdict).sum())}/{len(verdicts)}"


def heatmap_cells(
    tests: pd.DataFrame, varied: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The heatmap's cells, rows (guideline, operations) in the campaign's order by the varied
    parameter's lhs values: the median effect ratio of each cell's tests, their verdict and the
    cell's mark."""
    x, numeric = _x_values(tests[varied])
    row = tests["guideline"] + " " + tests["op"].str.replace(PAIR_SEPARATOR, " vs ", regex=False)
    frame = pd.DataFrame(
        {"row": row, "x": x, "ratio": effect_ratio(tests), "verdict": tests["verdict"]}
    ).dropna(subset=["ratio"])
    cells = frame.groupby(["row", "x"], sort=False)
    order = pd.unique(frame["row"])
    columns = sorted(frame["x"].unique()) if numeric else list(pd.unique(frame["x"]))

    def laid_out(part: pd.Series) -> pd.DataFrame:
        return part.unstack().reindex(index=order, columns=columns)

    return (
        laid_out(cells["ratio"].median()),
        laid_out(cells["verdict"].agg(_cell_verdict)),
        laid_out(cells["verdict"].agg(_cell_mark)),
    )


def cell_annotations(ratios: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """Each cell's text: its median ratio, under it the mark of its verdict (none where all
    tests hold)."""
    text = (ratios.map(number_text) + "\n" + marks.fillna("")).map(str.strip)
    return text.where(ratios.notna(), "")


def ratio_ticks(reach: float) -> list[float]:
    """Ratios to label on a colour bar spanning exp(-reach) .. exp(reach): those of RATIO_TICKS
    inside it, rounder first, at least an eighth of the bar apart so that labels do not
    overlap."""
    gap = 2 * reach / 8
    chosen: list[float] = []
    for tick in (t for t in RATIO_TICKS if abs(np.log(t)) <= reach):
        if all(abs(np.log(tick) - np.log(other)) >= gap for other in chosen):
            chosen.append(tick)
    return sorted(chosen)


# A cell's annotation is dark on a light fill, white on a dark one: the relative luminance
# (WCAG) above which a fill counts as light, as seaborn's heatmap decides.
LIGHT_FILL = 0.408


def _luminance(colours: Any) -> np.ndarray:
    """The relative luminance of colours (WCAG 2.0), of anything matplotlib reads as colours."""
    rgb = to_rgba_array(colours)[:, :3]
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def _draw_cells(
    axes: plt.Axes, table: pd.DataFrame, annotations: pd.DataFrame, norm: Normalize
) -> Colorbar:
    """The heatmap's cells: `table` coloured on `norm`, first row at the top, each cell with
    its annotation (none where the ratio is missing), rows and columns labelled, a colour bar
    without outline; no spines."""
    values = np.ma.masked_invalid(table.to_numpy(dtype=float))
    mesh = axes.pcolormesh(values, cmap="RdBu_r", norm=norm, linewidths=0, edgecolor="white")
    axes.set_xlim(0, table.shape[1])
    axes.set_ylim(table.shape[0], 0)
    axes.spines[:].set_visible(False)
    colour_bar = axes.figure.colorbar(mesh, ax=axes, label="median violation ratio (log scale)")
    colour_bar.outline.set_linewidth(0)
    axes.set_xticks(np.arange(table.shape[1]) + 0.5)  # labelled by the caller
    axes.set_yticks(np.arange(table.shape[0]) + 0.5, [str(row) for row in table.index],
                    va="center")  # fmt: skip
    mesh.update_scalarmappable()
    shown = ~np.ma.getmaskarray(values).ravel()
    light = _luminance(mesh.get_facecolor())[shown] > LIGHT_FILL
    rows, columns = np.indices(table.shape)
    for i, j, text, on_light in zip(rows.ravel()[shown], columns.ravel()[shown],
                                    annotations.to_numpy().ravel()[shown], light,
                                    strict=True):  # fmt: skip
        axes.text(j + 0.5, i + 0.5, str(text), color=".15" if on_light else "w", ha="center",
                  va="center", fontsize=8)  # fmt: skip
    return colour_bar


def heatmap(tests: pd.DataFrame, varied: str, footer: str, path: Path) -> None:
    """Median effect ratio per (guideline, operations) and varied value, coloured on a log scale
    symmetric about 1 with the colour bar in ratio units; each cell marked with its verdict and
    framed in its colour where it does not hold."""
    figure, axes = plt.subplots(figsize=(8, 1.5 + 0.35 * max(1, tests["guideline"].nunique())))
    if tests.empty:
        axes.text(0.5, 0.5, "no tests", ha="center", va="center")
        axes.set_axis_off()
        axes.set_title(footer, fontsize=8)
        save_figure(figure, path)
        return
    table, cells, marks = heatmap_cells(tests, varied)
    annotations = cell_annotations(table, marks)
    # symmetric about 1 on a log scale, so that 1/r and r are equally far from white
    reach = float(np.nanmax(np.abs(np.log(table.to_numpy(dtype=float)))))
    reach = max(reach, np.log(1.1))
    norm = LogNorm(vmin=np.exp(-reach), vmax=np.exp(reach))
    figure.set_size_inches(max(6, 1.0 * table.shape[1] + 4), 2.0 + 0.55 * table.shape[0])
    colour_bar = _draw_cells(axes, table, annotations, norm)
    colour_bar.ax.yaxis.set_major_locator(FixedLocator(ratio_ticks(reach)))
    colour_bar.ax.yaxis.set_minor_locator(NullLocator())
    colour_bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    for (i, j), verdict in np.ndenumerate(cells.to_numpy(dtype=object)):
        if verdict in (VIOLATED, UNDECIDED):
            # the frame, not the fill, carries the verdict: the fill is the ratio's colour
            axes.add_patch(Rectangle((j + 0.04, i + 0.04), 0.92, 0.92, fill=False,
                                     edgecolor=VERDICT_COLOURS[verdict], linewidth=2.5,
                                     linestyle="-" if verdict == VIOLATED else "--"))  # fmt: skip
    axes.set_xticklabels([value_label(varied, value) for value in table.columns],
                         rotation=45 if table.shape[1] > 6 else 0)  # fmt: skip
    axes.set_xlabel(f"{varied} (lhs)")
    axes.set_ylabel("guideline, operations")
    axes.set_title(
        with_provenance(
            footer,
            "effect ratio v (approx: max(v, 1/v)), median over a cell's tests; the mark and "
            "frame, not the colour, give the verdict",
        ),
        fontsize=8,
    )
    figure.legend(
        handles=[
            Patch(fill=False, edgecolor=VERDICT_COLOURS[VIOLATED], linewidth=2.5,
                  label=f"✗ k/n: {VIOLATED} (k of the cell's n tests are)"),
            Patch(fill=False, edgecolor=VERDICT_COLOURS[UNDECIDED], linewidth=2.5,
                  linestyle="--", label=f"? k/n: {VERDICT_LEGEND[UNDECIDED]} (none violated, "
                  "k undecided)"),
            Patch(fill=False, edgecolor="none", label=f"unframed: all {HOLDS}"),
        ],
        loc="upper left", bbox_to_anchor=(0.01, below_drawn(figure)), fontsize=7,
        frameon=False,
    )  # fmt: skip
    save_figure(figure, path)


def _repetitions(timings_parquet: Path, tests: pd.DataFrame) -> pd.DataFrame:
    """Repetitions of the lhs and rhs experiments of `tests` (one Parquet read, filtered)."""
    exp_ids = {*tests["lhs_exp_id"].astype(int), *tests["rhs_exp_id"].astype(int)}
    return read_repetitions(timings_parquet, exp_ids)


def read_repetitions(timings_parquet: Path, exp_ids: set[int]) -> pd.DataFrame:
    """Valid repetitions of the experiments `exp_ids` in every deployment, deployment keys as
    text."""
    columns = ["exp_id", *DEPLOYMENT_KEYS, "run", "time_s"]
    # pyarrow's DNF filter terms: (column, operator, value)
    filters: list[tuple[str, str, object]] = [("exp_id", "in", sorted(exp_ids))]
    try:
        # Timings written before repetitions had a status hold valid ones only.
        if STATUS in pq.read_schema(timings_parquet).names:
            filters.append((STATUS, "==", VALID))
        table = pq.read_table(timings_parquet, columns=columns, filters=filters)
    except (OSError, ValueError) as error:
        raise DataError(f"{timings_parquet}: cannot read the timings: {error}") from None
    timings = table.to_pandas()
    for key in DEPLOYMENT_KEYS:
        timings[key] = timings[key].astype(str)
    return timings


def _check_experiments(timings_parquet: Path, tests: pd.DataFrame, tests_csv: Path) -> None:
    """Every experiment the tests name has timings: tests.csv of another campaign (or an edited
    one) would otherwise plot empty sides."""
    named = {*tests["lhs_exp_id"].astype(int), *tests["rhs_exp_id"].astype(int)}
    try:
        exp_ids = pq.read_table(timings_parquet, columns=["exp_id"]).column(0)
        measured = set(pc.unique(exp_ids).to_pylist())
    except (OSError, ValueError, KeyError) as error:
        raise DataError(f"{timings_parquet}: cannot read the timings: {error}") from None
    absent = sorted(named - measured)
    if absent:
        shown = ", ".join(map(str, absent[:10])) + (", ..." if len(absent) > 10 else "")
        raise DataError(
            f"{tests_csv}: names experiments that {timings_parquet} lacks (exp_id {shown}); "
            "are both of the same campaign?"
        )


def _side_repetitions(test: pd.Series, timings: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for index, side in enumerate(SIDES):
        mask = timings["exp_id"] == test[f"{side}_exp_id"]
        for key in DEPLOYMENT_KEYS:
            mask &= timings[key] == split_pair(test[key])[index]
        parts.append(timings.loc[mask].assign(side=side))
    return pd.concat(parts, ignore_index=True)


def focus_tests(tests: pd.DataFrame, plot_options: PlotOptions) -> pd.DataFrame:
    """The focus of each group `plot_options` selects, at most `plots.max` of them: its test
    farthest from its relation among those whose verdict is the group's (a violated test of a
    violated group, an undecided one of an undecided group); violated groups first, then the
    farthest from their relation."""
    verdicts = list(plot_options.verdicts)
    groups = tests.loc[tests["group_verdict"].isin(verdicts)]
    focus = groups.loc[groups["verdict"] == groups["group_verdict"]]
    # stable, as figure_style.deciding_tests: a tie picks the test the group's forest row shows
    focus = focus.sort_values("_effect", ascending=False, kind="stable")
    focus = focus.drop_duplicates(["guideline", "group"])
    rank = focus["group_verdict"].map(verdicts.index)
    focus = focus.assign(_rank=rank).sort_values(["_rank", "_effect"], ascending=[True, False])
    return focus.head(plot_options.max).drop(columns="_rank")


def plot(
    timings_parquet: str | Path,
    tests_csv: str | Path,
    decisions: Decisions,
    outdir: str | Path,
    plot_options: PlotOptions | None = None,
    campaign: str = "",
    processes: int = 1,
) -> None:
    """Write forest/ (every group), overview/ and focus/ (the groups `plot_options` selects)
    and heatmap.png into outdir, drawn in `processes` processes."""
    with figure_drawer(processes) as draw:
        draw_plots(timings_parquet, tests_csv, decisions, outdir, draw, plot_options, campaign)


def draw_plots(
    timings_parquet: str | Path,
    tests_csv: str | Path,
    decisions: Decisions,
    outdir: str | Path,
    draw: Callable[[FigureJob], None],
    plot_options: PlotOptions | None = None,
    campaign: str = "",
) -> None:
    """plot's figures, each handed to `draw` (figure_drawing.figure_drawer's) as soon as what it
    shows is read, the largest first."""
    timings_parquet, outdir = Path(timings_parquet), Path(outdir)
    options = decisions.options
    plot_options = plot_options or PlotOptions.from_mapping({}, "plots")
    if not timings_parquet.is_file():
        raise DataError(f"{timings_parquet}: no such file (written by `mpiguide aggregate`)")
    tests = read_tests(Path(tests_csv))
    if not tests.empty:
        _check_experiments(timings_parquet, tests, Path(tests_csv))
    for sub in ("overview", "focus"):
        (outdir / sub).mkdir(parents=True, exist_ok=True)
    heatmap_path = outdir / (HEATMAP + PLOT_SUFFIX)
    if tests.empty:
        draw(FigureJob(heatmap, (tests, options.varied, figure_footer(campaign, decisions, tests),
                                 heatmap_path)))  # fmt: skip
        return
    keys = parameter_columns(tests)
    if options.varied not in keys:
        raise DataError(f"{tests_csv}: no column for analysis.varied {options.varied!r}")
    tests = tests.assign(_effect=effect_ratio(tests))
    for job in forest_figures(tests, keys, decisions, campaign, outdir):
        draw(job)
    draw(FigureJob(heatmap, (tests, options.varied, figure_footer(campaign, decisions, tests),
                             heatmap_path)))  # fmt: skip
    # read while the forests are drawn
    focus = focus_tests(tests, plot_options)
    timings = _repetitions(timings_parquet, focus) if len(focus) else None
    by_group = tests.groupby(["guideline", "group"], sort=False)
    for _, test in focus.iterrows():
        name = group_plot_name(test["guideline"], int(test["group"]), test["group_verdict"])
        where = deployment_of(test, options.varied)
        group = by_group.get_group((test["guideline"], test["group"]))
        draw(FigureJob(overview_plot, (
            group, keys, options.varied, figure_footer(campaign, decisions, group, where),
            outdir / "overview" / name)))  # fmt: skip
        # its title states the one test's levels
        footer = figure_footer(campaign, decisions, test.to_frame().T, where, levels=False)
        draw(FigureJob(focus_plot, (
            test, _side_repetitions(test, timings), keys, options.varied, footer,
            outdir / "focus" / name)))  # fmt: skip
