"""Forest plots: per guideline and deployment one figure of every group, each a row with the
effect of its deciding test, that test's interval and the group's verdict mark — what holds,
what is violated and what these runs cannot tell, side by side, in one file up to
FOREST_PAGE_ROWS groups and in pages of equal size beyond.

A group's row shows the test farthest from its relation among those whose verdict is the
group's (the most violated test of a violated group, the most nearly violated undecided test of
an undecided one, the one nearest to violation of a holding group): `violation_ratio` on a log
axis with [`ratio_low`, `ratio_high`] from tests.csv as they are, reference lines at 1 and at
`v_thres` (and 1/`v_thres` for `approx`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.backend_bases import RendererBase
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.analysis.comparisons import TEST_COLUMN
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.paths import FOREST_PAGE, PLOT_SUFFIX, forest_plot_path
from mpiguide.reports.figure_drawing import FigureJob, save_figure, verdict_handles
from mpiguide.reports.figure_style import (
    VERDICT_COLOURS,
    VERDICT_MARKERS,
    VERDICTS,
    bound_levels,
    deciding_tests,
    figure_footer,
    group_deployment,
    group_keys,
    row_levels,
    statistic_text,
    tests_used,
    value_label,
    with_provenance,
)

# The figure's geometry, in inches, fixed from what it holds instead of measured around every
# text (a tight bounding box lays thousands of row labels out twice more): a constant width,
# the ratio axis taking what the row labels and the legend leave, one row per group.
FIGURE_INCHES = 12.0
MIN_AXES_INCHES = 4.0
ROW_INCHES = 0.24
MARGIN_INCHES = 0.1
LABEL_GAP_INCHES = 0.06
LEGEND_GAP_INCHES = 0.1
TITLE_GAP_INCHES = 0.15
BOTTOM_INCHES = 0.75  # tick labels and a two-line axis label under the axes
DPI = 100
# At most this many groups in one file (a page, 120 inches tall): Agg draws at most 2^16 pixels
# a side, and a reader scrolls a taller one no better than several.
FOREST_PAGE_ROWS = 500
LABEL_POINTS = 7
TITLE_POINTS = 8


def row_labels(rows: pd.DataFrame, keys: list[str], varied: str) -> tuple[list[str], str, str]:
    """Each row's label — `#3 2 RAND @ 1 KiB ✗2 ?1/10`: the values of only the keys in
    which the rows differ, `n/a` where one does not apply; the names of those keys
    (`ndim ordering`), and what every row shares (`op: a vs b; nrep=10 ...`). Values without
    their keys keep the labels short: drawing them is most of a forest plot's time."""
    records = rows.to_dict("records")
    described = [group_keys(row, keys, varied) for row in records]
    shared = set.intersection(*({*differing, *fixed} for differing, fixed in described))
    values = [
        {item.key: item.value for item in (*differing, *fixed) if item not in shared}
        for differing, fixed in described
    ]
    columns = list(dict.fromkeys(key for row in values for key in row))
    labels = []
    for row, own in zip(records, values, strict=True):
        marks = [f"✗{row['n_violated']}"] if row["n_violated"] else []
        marks += [f"?{row['n_undecided']}"] if row["n_undecided"] else []
        # a holding group's mark says all its tests hold: no count to add
        tally = f" {' '.join(marks)}/{row['n_tests']}" if marks else ""
        cells = " ".join(own.get(column, "n/a") for column in columns)
        labels.append(f"#{int(row['group'])} {cells} @ {value_label(varied, row[varied])}{tally}")
    differing, fixed = described[0]
    common = "; ".join(
        [item.text for item in differing if item in shared]
        + [" ".join(item.text for item in fixed if item in shared)]
    )
    return labels, " ".join(columns), common


def _reference_lines(axes: plt.Axes, relation: str, v_thres: float) -> None:
    axes.axvline(1.0, color="black", linewidth=0.8)
    thresholds = (1 / v_thres, v_thres) if relation == "approx" else (v_thres,)
    for threshold in thresholds:
        axes.axvline(threshold, color=VERDICT_COLOURS[VIOLATED], linewidth=0.8, linestyle=":")


def _draw_rows(axes: plt.Axes, rows: pd.DataFrame, v_thres: float) -> np.ndarray:
    """Every row's interval and verdict mark, one collection per verdict; the verdicts."""
    y = np.arange(len(rows))
    ratio = rows["violation_ratio"].to_numpy(dtype=float)
    low = rows["ratio_low"].to_numpy(dtype=float)
    high = rows["ratio_high"].to_numpy(dtype=float)
    verdicts = rows["group_verdict"].to_numpy(dtype=object)
    finite = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in (ratio, low, high)])
    span = (
        (min(finite.min(), 1 / v_thres), max(finite.max(), v_thres))
        if len(finite)
        else (1 / v_thres, v_thres)
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
    _reference_lines(axes, str(rows["relation"].iloc[0]), v_thres)
    axes.set_xscale("log")
    axes.set_xlim(left, right)
    # plain ratios, evenly spaced on the log axis, whatever its span
    ticks = sorted({float(f"{tick:.2g}") for tick in np.geomspace(left, right, 7)[1:-1]} | {1.0})
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.yaxis.set_major_locator(NullLocator())
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.grid(axis="x", which="both", linewidth=0.3, alpha=0.5)
    return verdicts


def _widest(artists: Sequence[Artist], renderer: RendererBase) -> float:
    """The width, in inches, of the widest of `artists` as `renderer` lays them out."""
    return max(artist.get_window_extent(renderer).width for artist in artists) / DPI


def _lay_out(
    figure: plt.Figure, axes: plt.Axes, heading: Text, labels: list[Text], legend: Legend
) -> None:
    """Place the heading, the row labels, the axes and the legend, measured once: the row
    labels are measured by the renderer that then draws them (at the figure's final size, so
    that their layout is reused), and the figure widens only if they leave the axes too
    little."""
    rows = len(labels)
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    heading_inches = heading.get_window_extent(renderer).height / DPI
    height = (MARGIN_INCHES + heading_inches + TITLE_GAP_INCHES + rows * ROW_INCHES
              + BOTTOM_INCHES + MARGIN_INCHES)  # fmt: skip
    figure.set_size_inches(FIGURE_INCHES, height)
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    label_inches = _widest(labels, renderer) if labels else 0.0
    left = MARGIN_INCHES + label_inches + LABEL_GAP_INCHES
    beside = LEGEND_GAP_INCHES + _widest([legend], renderer) + MARGIN_INCHES
    width = max(
        FIGURE_INCHES,
        left + MIN_AXES_INCHES + beside,
        2 * MARGIN_INCHES + _widest([heading], renderer),
    )  # the axis label's two lines are narrower than the axes' least width
    if width > FIGURE_INCHES:
        figure.set_size_inches(width, height)
    axes_inches = width - left - beside
    axes.set_position((left / width, BOTTOM_INCHES / height, axes_inches / width,
                       rows * ROW_INCHES / height))  # fmt: skip
    heading.set_position((MARGIN_INCHES / width, 1 - MARGIN_INCHES / height))
    legend.set_bbox_to_anchor((1 + LEGEND_GAP_INCHES / axes_inches, 1.0), axes.transAxes)


def row_notes(rows: pd.DataFrame) -> list[str]:
    """What a row's label adds where the rows differ in it: the test that decided the row and
    the one-sided levels of its bounds (`welch_t 99.9|95 %`); nothing where all rows share
    them (the axis label states them)."""
    tests = rows[TEST_COLUMN].astype(str).tolist()
    levels = [row_levels(row) for row in rows.to_dict("records")]
    notes: list[list[str]] = [[] for _ in tests]
    for values in (tests, levels):
        if len(set(values)) > 1:
            for note, value in zip(notes, values, strict=True):
                note.append(value)
    return [" ".join(note) for note in notes]


def axis_label(rows: pd.DataFrame) -> str:
    """The ratio axis: what violation_ratio is and at which one-sided levels its bounds are,
    from the rows' `test`, `low_level` and `high_level` (after each row's label where they
    differ between rows)."""
    used = tests_used(rows)
    if len(used) > 1:
        what = f"the row's test after its label: {statistic_text(rows)}"
    else:
        what = statistic_text(rows)
    levels = {row_levels(row) for row in rows.to_dict("records")}
    if len(levels) > 1:
        bounds = "one-sided, at the levels lower|upper after each row's label"
    else:
        bounds = bound_levels(rows)
    return (f"violation_ratio ({what}; log scale)\nwith its bounds [ratio_low, ratio_high]: "
            f"{bounds}; dotted: v_thres")  # fmt: skip


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
    figure = plt.figure(dpi=DPI)
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    verdicts = _draw_rows(axes, rows, options.v_thres)
    labels, columns, common = row_labels(rows, keys, options.varied)
    labels = [f"{label}  {note}" if note else label
              for label, note in zip(labels, row_notes(rows), strict=True)]  # fmt: skip
    # Row labels as text beside the axes, not tick labels: ticks cost an artist each and are
    # laid out again for every title and axis label placed.
    beside_axes = blended_transform_factory(axes.transAxes, axes.transData)
    offset = ScaledTranslation(-LABEL_GAP_INCHES, 0, figure.dpi_scale_trans)
    texts = [
        axes.text(0.0, y, label, transform=beside_axes + offset, ha="right", va="center",
                  fontsize=LABEL_POINTS, clip_on=False)
        for y, label in enumerate(labels)
    ]  # fmt: skip
    axes.set_xlabel(axis_label(rows), fontsize=TITLE_POINTS)
    counts = {verdict: int((verdicts == verdict).sum()) for verdict in VERDICTS}
    heading = figure.text(
        0.0, 1.0,
        with_provenance(
            footer,
            f"{title}: {len(rows)} groups — {counts[VIOLATED]} {VIOLATED}, "
            f"{counts[UNDECIDED]} {UNDECIDED}, {counts[HOLDS]} {HOLDS}\n{common}\nrows: #group "
            f"{columns} @ {options.varied} of the group's test farthest from its relation among "
            "those with the group's verdict;\n✗k ?u/n: k violated, u undecided of its n tests",
        ),
        ha="left", va="top", fontsize=TITLE_POINTS,
    )  # fmt: skip
    legend = axes.legend(handles=verdict_handles(), loc="upper left", fontsize=7,
                         title="group verdict", title_fontsize=7)  # fmt: skip
    _lay_out(figure, axes, heading, texts, legend)
    save_figure(figure, path, tight=False)


def forest_pages(rows: int) -> list[slice]:
    """The rows of each page of a forest of `rows` rows: one page up to FOREST_PAGE_ROWS, else
    as many pages of equal size as hold them."""
    pages = -(-rows // FOREST_PAGE_ROWS)
    bounds = np.linspace(0, rows, pages + 1).round().astype(int)
    return [slice(int(start), int(stop)) for start, stop in itertools.pairwise(bounds)]


def forest_figures(
    tests: pd.DataFrame, keys: list[str], decisions: Decisions, campaign: str, outdir: Path
) -> list[FigureJob]:
    """Per guideline and deployment the forest plot of its groups below outdir (in pages where
    they are too many for one file), to draw (figure_drawing.FigureJob), the largest first."""
    rows = deciding_tests(tests)
    where = pd.DataFrame(
        [group_deployment(row, decisions.options.varied) for row in rows.to_dict("records")],
        columns=["_mpi", "_deployment"], index=rows.index,
    )  # fmt: skip
    figures = []
    for (guideline, mpi, deployment), forest in pd.concat([rows, where], axis=1).groupby(
        ["guideline", "_mpi", "_deployment"], sort=True
    ):
        shown = f"{mpi} {deployment}"
        title = f"{guideline} ({forest['relation'].iloc[0]}), {shown}"
        decided_with = decisions.for_guideline(str(guideline))
        footer = figure_footer(campaign, decisions, forest, shown)
        pages = forest_pages(len(forest))
        if len(pages) == 1:
            figures.append(
                (forest, title, decided_with, footer,
                 forest_plot_path(str(guideline), mpi, deployment))
            )  # fmt: skip
            continue
        for number, rows_of_page in enumerate(pages, start=1):
            part = forest.iloc[rows_of_page]
            figures.append((part, f"{title}, page {number} of {len(pages)}: groups "
                            f"#{int(part['group'].iloc[0])} to #{int(part['group'].iloc[-1])} of "
                            f"{len(forest)}, the others in {FOREST_PAGE}1 to {FOREST_PAGE}"
                            f"{len(pages)}{PLOT_SUFFIX} beside this file", decided_with, footer,
                            forest_plot_path(str(guideline), mpi, deployment, number)))  # fmt: skip
    jobs = []
    for part, title, decided_with, footer, name in sorted(
        figures, key=lambda figure: -len(figure[0])
    ):
        path = outdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        jobs.append(FigureJob(forest_plot, (part, keys, decided_with, title, footer, path)))
    return jobs
