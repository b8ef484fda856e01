"""Plots of the verdicts: per violated group an overview and a focus plot; one heatmap.

- overview/<guideline>-group<NNNN>.png: median of run medians of lhs and rhs against the varied
  parameter (log scales), violated points marked.
- focus/<guideline>-group<NNNN>.png: box plots of every run's repetitions of lhs and rhs at the
  group's most violated value, normalised to lhs's median of run medians.
- heatmap.png: median violation ratio per guideline and lhs operation by varied value.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import seaborn as sns

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, PROCESS_COUNT_KEYS, AnalysisOptions
from mpiguide.analysis.pairing import LINKED_KEYS, PAIR_SEPARATOR, lhs_side, split_pair
from mpiguide.analysis.tables import effect_ratio, parameter_columns
from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import STATUS, VALID
from mpiguide.core.errors import DataError
from mpiguide.core.paths import HEATMAP, PLOT_SUFFIX, deployment_name, group_plot_name

NUMERIC_COLUMNS = (
    "group", "lhs_exp_id", "rhs_exp_id", "n_lhs", "n_rhs", "median_lhs", "median_rhs",
    "violation_ratio", "p_value", "p_adjusted", "hl_ratio", "hl_low", "hl_high",
)  # fmt: skip
SIDES = ("lhs", "rhs")
SIDE_COLOURS = {"lhs": "tab:red", "rhs": "tab:blue"}


def read_tests(tests_csv: Path) -> pd.DataFrame:
    """tests.csv with parameter cells as text ("" = not applicable) and numeric statistics."""
    if not tests_csv.is_file():
        raise DataError(f"{tests_csv}: no such file (written by `mpiguide check`)")
    try:
        tests = pd.read_csv(tests_csv, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise DataError(f"{tests_csv}: cannot read the tests: {error}") from None
    missing = [c for c in (*NUMERIC_COLUMNS, "guideline", "violated") if c not in tests]
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
    """Title of a group: guideline, deployment and the keys where lhs and rhs differ."""
    first = group.iloc[0]
    deployment = (
        first["mpi"]
        if varied in PROCESS_COUNT_KEYS
        else f"{first['mpi']} {deployment_name(first['nodes'], first['ppn'])}"
    )
    differing = [
        f"{key}: {' vs '.join(value or 'n/a' for value in split_pair(first[key]))}"
        for key in keys
        if key not in (varied, *LINKED_KEYS.get(varied, ())) and PAIR_SEPARATOR in first[key]
    ]
    fixed = [
        f"{key}={first[key]}"
        for key in keys
        if key not in (varied, *DEPLOYMENT_KEYS, *PROCESS_COUNT_KEYS)
        and first[key]
        and PAIR_SEPARATOR not in first[key]
    ]
    return (
        f"{first['guideline']} group {first['group']} ({deployment}): {'; '.join(differing)}\n"
        + " ".join(fixed)
    )


def save_figure(figure: plt.Figure, path: Path) -> None:
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=100, bbox_inches="tight")
    plt.close(figure)


def overview_plot(group: pd.DataFrame, keys: list[str], varied: str, path: Path) -> None:
    x, numeric = _x_values(group[varied])
    frame = group.assign(_x=x).sort_values("_x")
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for side in SIDES:
        axes.plot(frame["_x"], frame[f"median_{side}"], marker="o", label=side,
                  color=SIDE_COLOURS[side])  # fmt: skip
    violated = frame.loc[frame["violated"]]
    axes.scatter(violated["_x"], violated["median_lhs"], s=160, facecolors="none",
                 edgecolors="black", linewidths=1.5, label="violated", zorder=3)  # fmt: skip
    axes.set_yscale("log")
    if numeric and (frame["_x"] > 0).all():
        # process counts on log2, as Parker's scaling figures
        axes.set_xscale("log", base=2 if varied in PROCESS_COUNT_KEYS else 10)
    axes.set_xlabel(varied)
    axes.set_ylabel("median of run medians [s]")
    axes.set_title(_describe_group(frame, keys, varied), fontsize=8)
    axes.legend()
    save_figure(figure, path)


def focus_plot(test: pd.Series, repetitions: pd.DataFrame, varied: str, path: Path) -> None:
    """Box plots per run of the repetitions of one test, normalised to lhs's median."""
    normalised = repetitions.assign(time=repetitions["time_s"] / test["median_lhs"])
    figure, axes = plt.subplots(figsize=(max(6, 0.5 * normalised["run"].nunique() + 2), 4.5))
    sns.boxplot(data=normalised, x="run", y="time", hue="side", hue_order=list(SIDES),
                palette=SIDE_COLOURS, ax=axes, fliersize=2)  # fmt: skip
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_ylabel("time / lhs median of run medians")
    axes.set_title(
        f"{test['guideline']} group {test['group']} at {varied}={test[varied]}: "
        f"ratio {test['violation_ratio']:.3g} "
        f"(HL {test['hl_ratio']:.3g} [{test['hl_low']:.3g}, {test['hl_high']:.3g}]), "
        f"p = {test['p_adjusted']:.2g}",
        fontsize=9,
    )
    save_figure(figure, path)


def heatmap(tests: pd.DataFrame, varied: str, path: Path) -> None:
    """Median violation ratio per (guideline, lhs op) and varied value, colour on log2."""
    figure, axes = plt.subplots(figsize=(8, 1.5 + 0.35 * max(1, tests["guideline"].nunique())))
    if tests.empty:
        axes.text(0.5, 0.5, "no tests", ha="center", va="center")
        axes.set_axis_off()
        save_figure(figure, path)
        return
    x, numeric = _x_values(tests[varied])
    row = tests["guideline"] + " " + lhs_side(tests["op"])
    frame = pd.DataFrame({"row": row, "x": x, "ratio": effect_ratio(tests)}).dropna()
    table = frame.pivot_table(index="row", columns="x", values="ratio", aggfunc="median")
    table = table.reindex(pd.unique(frame["row"]))  # guidelines in the campaign's order
    if numeric:
        table = table.reindex(sorted(table.columns), axis=1)
    figure.set_size_inches(max(6, 0.9 * table.shape[1] + 3), 1.5 + 0.4 * table.shape[0])
    sns.heatmap(np.log2(table), center=0, cmap="RdBu_r", annot=table, fmt=".2f",
                cbar_kws={"label": "log2 median ratio"}, ax=axes)  # fmt: skip
    axes.set_xlabel(varied)
    axes.set_ylabel("guideline, lhs operation")
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
    analysis: Mapping[str, Any],
    outdir: str | Path,
    source: str = "config",
) -> None:
    """Write overview/, focus/ and heatmap.png into outdir."""
    timings_parquet, outdir = Path(timings_parquet), Path(outdir)
    options = AnalysisOptions.from_mapping(analysis, source)
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
    violated_groups = tests.loc[tests["violated"], ["guideline", "group"]].drop_duplicates()
    groups = tests.merge(violated_groups, on=["guideline", "group"])
    worst = groups.loc[groups["violated"]].sort_values("_effect", ascending=False)
    worst = worst.drop_duplicates(["guideline", "group"])
    timings = _repetitions(timings_parquet, worst) if len(worst) else None
    for (guideline, group_id), group in groups.groupby(["guideline", "group"], sort=True):
        name = group_plot_name(guideline, int(group_id))
        overview_plot(group, keys, options.varied, outdir / "overview" / name)
    for _, test in worst.iterrows():
        name = group_plot_name(test["guideline"], int(test["group"]))
        focus_plot(test, _side_repetitions(test, timings), options.varied, outdir / "focus" / name)
    heatmap(tests, options.varied, outdir / (HEATMAP + PLOT_SUFFIX))
