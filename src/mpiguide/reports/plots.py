"""Plots of the verdicts: per violated or undecided group an overview and a focus plot; one
heatmap.

- overview/<guideline>-group<NNNN>-<verdict>.png: median of run medians of both sides against the
  varied parameter (log scales), violated points circled, undecided ones boxed.
- focus/<guideline>-group<NNNN>-<verdict>.png: box plots of every run's repetitions of both sides
  at the group's most violated (or, in an undecided group, most nearly violated) value,
  normalised to lhs's median of run medians; the title gives the verdict's effect with its
  confidence bounds and the test that decided.
- heatmap.png: median effect ratio per guideline and operation by varied value, each cell marked
  with the verdict of its tests.

The two sides are named by what tells them apart (the operations, or e.g. `reorder=1`), message
sizes in bytes (`8 B`, `1 KiB`).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import seaborn as sns
from matplotlib.colors import LogNorm
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, PROCESS_COUNT_KEYS, AnalysisOptions
from mpiguide.analysis.pairing import LINKED_KEYS, PAIR_SEPARATOR, lhs_side, split_pair
from mpiguide.analysis.tables import effect_ratio, parameter_columns
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import STATUS, VALID
from mpiguide.core.errors import DataError
from mpiguide.core.paths import HEATMAP, PLOT_SUFFIX, deployment_name, group_plot_name

NUMERIC_COLUMNS = (
    "group", "lhs_exp_id", "rhs_exp_id", "n_lhs", "n_rhs", "median_lhs", "median_rhs",
    "violation_ratio", "ratio_low", "ratio_high", "p_value", "p_adjusted", "hl_ratio", "hl_low",
    "hl_high",
)  # fmt: skip
TEXT_COLUMNS = ("guideline", "violated", "test", "verdict", "group_verdict")
SIDES = ("lhs", "rhs")
SIDE_COLOURS = {"lhs": "tab:red", "rhs": "tab:blue"}
# Groups that get overview and focus plots: a reader must see what is undecided, not only what
# is violated; holding groups are summarised by the heatmap.
PLOTTED_VERDICTS = (VIOLATED, UNDECIDED)
# The heatmap's mark under a cell's ratio; a holding cell has none.
CELL_MARKS = {VIOLATED: "✗", UNDECIDED: "?", HOLDS: ""}
# Ratios the heatmap's colour bar may label inside its range, rounder ones first.
RATIO_TICKS = (1.0, 2.0, 0.5, 4.0, 0.25, 1.5, 0.67, 1.25, 0.8, 1.1, 0.9, 1.05, 0.95)
MSG_SIZE = "msg_size"  # bytes (docs/architecture.md, the operation table)


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


def size_label(size: float) -> str:
    """A message size in bytes as people write it: `8 B`, `1 KiB`, `1.5 MiB`."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor:
            return f"{size / factor:.4g} {unit}"
    return f"{size:.4g} B"


def value_label(key: str, value: object) -> str:
    """A parameter's value for an axis or a title: sizes with their unit, others as they are."""
    if key == MSG_SIZE:
        number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
        if pd.notna(number):
            return size_label(float(number))
    return str(value)


def _number(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3g}"


def side_labels(test: pd.Series, keys: list[str], exclude: Collection[str] = ()) -> tuple[str, str]:
    """What tells a test's two sides apart, as two legend labels: the operations, or `key=value`
    of the other keys where lhs and rhs differ (`reorder=1`, `msg_size=1 KiB`). A key that
    applies to one side only (`ordering` = `|LINEAR`) is left out unless nothing else differs;
    `lhs`/`rhs` when even that is the same."""
    differing = [
        key for key in keys if key not in exclude and PAIR_SEPARATOR in str(test[key])
    ]  # fmt: skip
    both_sides = [key for key in differing if all(split_pair(str(test[key])))]
    labels: list[list[str]] = [[], []]
    for key in both_sides or differing:
        for index, value in enumerate(split_pair(str(test[key]))):
            shown = value_label(key, value) if value else "n/a"
            labels[index].append(shown if key == "op" else f"{key}={shown}")
    lhs, rhs = (" ".join(parts) or side for parts, side in zip(labels, SIDES, strict=True))
    return (f"{lhs} (lhs)", f"{rhs} (rhs)") if lhs == rhs else (lhs, rhs)


def _x_values(values: pd.Series) -> tuple[pd.Series, bool]:
    """The lhs side of the varied parameter, as numbers when all of them are numbers."""
    lhs = lhs_side(values)
    numbers = pd.to_numeric(lhs, errors="coerce")
    return (numbers, True) if numbers.notna().all() else (lhs, False)


def _varied_keys(varied: str) -> tuple[str, ...]:
    return (varied, *LINKED_KEYS.get(varied, ()))


def _pair_labels(key: str, cell: str) -> list[str]:
    return [value_label(key, value) if value else "n/a" for value in split_pair(cell)]


def _describe_group(group: pd.DataFrame, keys: list[str], varied: str) -> str:
    """Title of a group: guideline, its verdict, deployment and the keys where lhs and rhs
    differ."""
    first = group.iloc[0]
    deployment = (
        first["mpi"]
        if varied in PROCESS_COUNT_KEYS
        else f"{first['mpi']} {deployment_name(first['nodes'], first['ppn'])}"
    )
    differing = [
        f"{key}: {' vs '.join(_pair_labels(key, first[key]))}"
        for key in keys
        if key not in _varied_keys(varied) and PAIR_SEPARATOR in first[key]
    ]  # fmt: skip
    fixed = [
        f"{key}={value_label(key, first[key])}"
        for key in keys
        if key not in (varied, *DEPLOYMENT_KEYS, *PROCESS_COUNT_KEYS)
        and first[key]
        and PAIR_SEPARATOR not in first[key]
    ]
    return (
        f"{first['guideline']} group {first['group']} ({deployment}): "
        f"{first['group_verdict']}; {'; '.join(differing)}\n" + " ".join(fixed)
    )


def save_figure(figure: plt.Figure, path: Path) -> None:
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=100, bbox_inches="tight")
    plt.close(figure)


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


def overview_plot(group: pd.DataFrame, keys: list[str], varied: str, path: Path) -> None:
    x, numeric = _x_values(group[varied])
    frame = group.assign(_x=x).sort_values("_x")
    names = side_labels(frame.iloc[0], keys, exclude=_varied_keys(varied))
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for side, name in zip(SIDES, names, strict=True):
        axes.plot(frame["_x"], frame[f"median_{side}"], marker="o", label=name,
                  color=SIDE_COLOURS[side])  # fmt: skip
    violated = frame.loc[frame["verdict"] == VIOLATED]
    if len(violated):
        axes.scatter(violated["_x"], violated["median_lhs"], s=160, facecolors="none",
                     edgecolors="black", linewidths=1.5, label="violated", zorder=3)  # fmt: skip
    undecided = frame.loc[frame["verdict"] == UNDECIDED]
    if len(undecided):
        axes.scatter(undecided["_x"], undecided["median_lhs"], s=160, marker="s",
                     facecolors="none", edgecolors="grey", linewidths=1.2, linestyles="--",
                     label="undecided", zorder=3)  # fmt: skip
    axes.set_yscale("log")
    if numeric and (frame["_x"] > 0).all():
        # process counts and sizes on log2 (both are mostly powers of two), as Parker's figures
        axes.set_xscale("log", base=2)
    _label_x_axis(axes, frame, varied, numeric)
    axes.set_ylabel("median of run medians [s]")
    axes.set_title(_describe_group(frame, keys, varied), fontsize=8)
    axes.legend(fontsize=8)
    save_figure(figure, path)


def _whisker_span(values: pd.Series) -> tuple[float, float]:
    """The ends of a box plot's whiskers: the extreme values within 1.5 IQR of the quartiles."""
    q1, q3 = values.quantile([0.25, 0.75])
    inside = values[(values >= q1 - 1.5 * (q3 - q1)) & (values <= q3 + 1.5 * (q3 - q1))]
    return float(inside.min()), float(inside.max())


def _clip_outliers(axes: plt.Axes, boxes: pd.DataFrame) -> None:
    """The y axis over every box's whiskers: a few repetitions 10x slower (a preempted process)
    would otherwise flatten every box; how many lie outside is printed."""
    spans = [_whisker_span(part["time"]) for _, part in boxes.groupby(["run", "side"])]
    low, high = min(span[0] for span in spans), max(span[1] for span in spans)
    pad = 0.05 * (high - low) or 0.05 * high
    low, high = low - pad, high + pad
    outside = int(((boxes["time"] < low) | (boxes["time"] > high)).sum())
    if outside:
        axes.set_ylim(low, high)
        axes.text(0.01, 0.01, f"{outside} of {len(boxes)} repetitions outside the axis",
                  transform=axes.transAxes, fontsize=7, color="dimgrey")  # fmt: skip


def focus_plot(
    test: pd.Series,
    repetitions: pd.DataFrame,
    keys: list[str],
    varied: str,
    confidence: float,
    path: Path,
) -> None:
    """Box plots per run of the repetitions of one test, normalised to lhs's median; the title
    gives the verdict, its effect with bounds and the test that decided, and the Hodges-Lehmann
    reading as a second one."""
    names = dict(zip(SIDES, side_labels(test, keys), strict=True))
    normalised = repetitions.assign(
        time=repetitions["time_s"] / test["median_lhs"], side=repetitions["side"].map(names)
    )
    figure, axes = plt.subplots(figsize=(max(6, 0.5 * normalised["run"].nunique() + 2), 4.5))
    sns.boxplot(data=normalised, x="run", y="time", hue="side", hue_order=list(names.values()),
                palette={names[side]: SIDE_COLOURS[side] for side in SIDES}, ax=axes,
                fliersize=2)  # fmt: skip
    axes.axhline(1.0, color=SIDE_COLOURS["lhs"], linewidth=0.8, linestyle="--")
    axes.axhline(test["median_rhs"] / test["median_lhs"], color=SIDE_COLOURS["rhs"],
                 linewidth=0.8, linestyle="--")  # fmt: skip
    axes.set_ylabel("time / median of lhs run medians")
    _clip_outliers(axes, normalised)
    axes.legend(title=None, fontsize=8)
    level = f"{100 * confidence:g} %"
    at = value_label(varied, test[varied])
    axes.set_title(
        f"{test['guideline']} group {test['group']} at {varied}={at}:"
        f" {test['verdict']} (group {test['group_verdict']})\n"
        f"violation_ratio {_number(test['violation_ratio'])}, one-sided {level} bounds "
        f"[{_number(test['ratio_low'])}, {_number(test['ratio_high'])}]; "
        f"{test['test']}, p = {_number(test['p_adjusted'])}\n"
        f"Hodges-Lehmann reading (not used by the verdict): {_number(test['hl_ratio'])} "
        f"[{_number(test['hl_low'])}, {_number(test['hl_high'])}]",
        fontsize=8,
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
    text = (ratios.map(_number) + "\n" + marks.fillna("")).map(str.strip)
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


def heatmap(tests: pd.DataFrame, varied: str, path: Path) -> None:
    """Median effect ratio per (guideline, operations) and varied value, coloured on a log scale
    symmetric about 1 with the colour bar in ratio units; each cell marked with its verdict."""
    figure, axes = plt.subplots(figsize=(8, 1.5 + 0.35 * max(1, tests["guideline"].nunique())))
    if tests.empty:
        axes.text(0.5, 0.5, "no tests", ha="center", va="center")
        axes.set_axis_off()
        save_figure(figure, path)
        return
    table, cells, marks = heatmap_cells(tests, varied)
    annotations = cell_annotations(table, marks)
    # symmetric about 1 on a log scale, so that 1/r and r are equally far from white
    reach = float(np.nanmax(np.abs(np.log(table.to_numpy(dtype=float)))))
    reach = max(reach, np.log(1.1))
    norm = LogNorm(vmin=np.exp(-reach), vmax=np.exp(reach))
    figure.set_size_inches(max(6, 1.0 * table.shape[1] + 4), 2.0 + 0.55 * table.shape[0])
    sns.heatmap(table, norm=norm, cmap="RdBu_r", annot=annotations, fmt="", ax=axes,
                annot_kws={"fontsize": 8},
                cbar_kws={"label": "median violation ratio (log scale)"})  # fmt: skip
    colour_bar = axes.collections[0].colorbar
    assert colour_bar is not None  # sns.heatmap draws one unless told not to
    colour_bar.ax.yaxis.set_major_locator(FixedLocator(ratio_ticks(reach)))
    colour_bar.ax.yaxis.set_minor_locator(NullLocator())
    colour_bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    for (i, j), verdict in np.ndenumerate(cells.to_numpy(dtype=object)):
        if verdict == UNDECIDED:
            axes.add_patch(Rectangle((j, i), 1, 1, fill=False, hatch="//", edgecolor="darkgrey",
                                     linewidth=0))  # fmt: skip
    axes.set_xticklabels([value_label(varied, value) for value in table.columns],
                         rotation=45 if table.shape[1] > 6 else 0)  # fmt: skip
    axes.set_xlabel(f"{varied} (lhs)")
    axes.set_ylabel("guideline, operations")
    axes.set_title(
        "effect ratio v (approx: max(v, 1/v)), median over a cell's tests\n"
        "✗ k/n: violated (k of the cell's n tests are)   ? k/n: undecided, hatched (none "
        "violated, k undecided)   unmarked: all hold",
        fontsize=8,
    )
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
        measured = set(pq.read_table(timings_parquet, columns=["exp_id"]).column(0).to_pylist())
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


def plot(
    timings_parquet: str | Path,
    tests_csv: str | Path,
    options: AnalysisOptions,
    outdir: str | Path,
) -> None:
    """Write overview/, focus/ (violated and undecided groups) and heatmap.png into outdir."""
    timings_parquet, outdir = Path(timings_parquet), Path(outdir)
    if not timings_parquet.is_file():
        raise DataError(f"{timings_parquet}: no such file (written by `mpiguide aggregate`)")
    tests = read_tests(Path(tests_csv))
    if not tests.empty:
        _check_experiments(timings_parquet, tests, Path(tests_csv))
    for sub in ("overview", "focus"):
        (outdir / sub).mkdir(parents=True, exist_ok=True)
    if tests.empty:
        heatmap(tests, options.varied, outdir / (HEATMAP + PLOT_SUFFIX))
        return
    keys = parameter_columns(tests)
    if options.varied not in keys:
        raise DataError(f"{tests_csv}: no column for analysis.varied {options.varied!r}")
    tests = tests.assign(_effect=effect_ratio(tests))
    groups = tests.loc[tests["group_verdict"].isin(PLOTTED_VERDICTS)]
    # the focus of a group: its test farthest from its relation among those whose verdict is
    # the group's (a violated test of a violated group, an undecided one of an undecided group)
    focus = groups.loc[groups["verdict"] == groups["group_verdict"]]
    focus = focus.sort_values("_effect", ascending=False).drop_duplicates(["guideline", "group"])
    timings = _repetitions(timings_parquet, focus) if len(focus) else None
    for (guideline, group_id), group in groups.groupby(["guideline", "group"], sort=True):
        name = group_plot_name(guideline, int(group_id), group["group_verdict"].iloc[0])
        overview_plot(group, keys, options.varied, outdir / "overview" / name)
    for _, test in focus.iterrows():
        name = group_plot_name(test["guideline"], int(test["group"]), test["group_verdict"])
        focus_plot(test, _side_repetitions(test, timings), keys, options.varied,
                   options.confidence, outdir / "focus" / name)  # fmt: skip
    heatmap(tests, options.varied, outdir / (HEATMAP + PLOT_SUFFIX))
