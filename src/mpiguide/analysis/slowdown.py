"""MPINPC's output: slowdown.csv in the shape of Figure 2 and the overview plot of Figure 3.

S. Hunold, "Verifying Performance Guidelines for MPI Collectives at Scale" (SC-W 2023):
- Figure 2: per collective and message size, the median of the default call, and where a
  competitor is "statistically found to be faster" the fastest such competitor, its median and
  the slowdown (default median / competitor median); blank where none is.
- §4: severity "low" below a 10 % slowdown; medium, medium high, high and very high "represent a
  maximum runtime slowdown of 50 %, 100 %, 400 %, or more than 400 %".
- Figure 3: collectives by message size, coloured by severity (slowdown_plot.py, so that `check`
  does not load matplotlib).

A row per lhs experiment of the `le` tests (mpi, deployment and its own parameters); the
competitors are the rhs experiments of its tests, significantly faster where the test is
`violated` (the analysis' verdict: p and v thresholds, docs/analysis.md). Figure 2 leaves a row
without such a competitor blank, and §4's classes are of violations only; mpiguide adds the
row's `verdict`, so that a blank row says whether its tests rule a violation out (`holds`) or
these runs cannot tell (`undecided`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS
from mpiguide.analysis.pairing import PAIR_SEPARATOR, lhs_side, split_pair
from mpiguide.analysis.verdicts import VERDICTS, VIOLATED, group_verdicts
from mpiguide.core.csv_table import write_csv_table
from mpiguide.core.errors import DataError
from mpiguide.plan.operations import load_operations

# Hunold 2023, §4: a slowdown below LOW_BELOW is low; each other class up to and including its
# bound; above the last bound very high.
LOW_BELOW = 1.10
SEVERITY_BOUNDS = (1.50, 2.00, 5.00)
SEVERITY_LABELS = ("low", "medium", "medium high", "high", "very high")
# Figure 2's columns; mpiguide adds `mpi` first (a campaign may measure several libraries),
# the other parameters its lhs experiments differ in after `count`, and ADDED_COLUMNS last.
FIGURE2_COLUMNS = [
    "collective", "count", "N", "ppn", "n", "default_median", "slowdown", "fastest_mockup",
    "mockup_median",
]  # fmt: skip
# The row's verdict over its tests (violated if any is, holds if all hold, else undecided) and,
# for a violated row, §4's severity of its slowdown.
ADDED_COLUMNS = ["verdict", "severity"]


def severity(slowdown: pd.Series) -> pd.Series:
    """Hunold 2023, §4: low < 1.1 ≤ medium ≤ 1.5 < medium high ≤ 2 < high ≤ 5 < very high;
    "" where there is no slowdown (NaN)."""
    values = slowdown.to_numpy(dtype=float)
    index = np.where(
        values < LOW_BELOW, 0, 1 + np.searchsorted(SEVERITY_BOUNDS, values, side="left")
    )
    labels = np.array(SEVERITY_LABELS, dtype=object)[index]
    return pd.Series(np.where(np.isnan(values), "", labels), index=slowdown.index, dtype=object)


def mpi_names(ops: pd.Series) -> pd.Series:
    """MPI's name of each kernel operation that is an MPI call (bcast -> MPI_Bcast), else op."""
    calls = {
        name for name, operation in load_operations().items()
        if operation.family in ("collective", "neighbor")
    }  # fmt: skip
    names = {op: "MPI_" + op[:1].upper() + op[1:] if op in calls else op for op in ops.unique()}
    return ops.map(names)


def competitor(tests: pd.DataFrame, keys: Sequence[str]) -> pd.Series:
    """The rhs of each test: its op, and in parentheses its values where they differ from the
    lhs's other than op (e.g. `halo (constructor=nodecart)`)."""
    text = {key: tests[key].astype(str) for key in keys}
    differing = [
        key for key in keys
        if key != "op" and text[key].str.contains(PAIR_SEPARATOR, regex=False).any()
    ]  # fmt: skip
    # Each distinct combination of the cells that name the rhs is described once.
    factorised = [pd.factorize(text[key], use_na_sentinel=False) for key in ("op", *differing)]
    codes = np.stack([key_codes for key_codes, _ in factorised], axis=1)
    combinations, combination_of_test = np.unique(codes, axis=0, return_inverse=True)
    names = []
    for combination in combinations:
        op, *others = (
            str(cells[code]) for code, (_, cells) in zip(combination, factorised, strict=True)
        )
        described = [
            f"{key}={split_pair(cell)[1]}"
            for key, cell in zip(differing, others, strict=True)
            if PAIR_SEPARATOR in cell
        ]
        names.append(split_pair(op)[1] + (f" ({' '.join(described)})" if described else ""))
    return pd.Series(np.array(names, dtype=object)[combination_of_test.ravel()], index=tests.index)


def slowdown_table(tests: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Figure 2 for every lhs experiment of the `le` tests in `tests` (tests.csv rows; `keys`
    its parameter columns, mpi, nodes and ppn among them), with its verdict and severity
    (ADDED_COLUMNS)."""
    le = tests.loc[(tests["relation"] == "le") & tests["median_rhs"].notna()]
    if le.empty:
        return pd.DataFrame(columns=["mpi", *FIGURE2_COLUMNS, *ADDED_COLUMNS])
    lhs = pd.DataFrame({key: lhs_side(le[key]) for key in keys}, index=le.index)
    # "" is not applicable (e.g. root of an op without one): not a level that tells rows apart
    named = {*DEPLOYMENT_KEYS, "op", "msg_size"}
    extra = [key for key in keys if key not in named and lhs[key][lhs[key] != ""].nunique() > 1]
    columns = ["mpi", *FIGURE2_COLUMNS[:2], *extra, *FIGURE2_COLUMNS[2:], *ADDED_COLUMNS]
    frame = lhs.assign(
        lhs_exp_id=le["lhs_exp_id"].to_numpy(),
        n=le["n_lhs"].to_numpy(),
        default_median=le["median_lhs"].to_numpy(),
        fastest_mockup=competitor(le, keys).to_numpy(),
        mockup_median=le["median_rhs"].to_numpy(),
        verdict=le["verdict"].to_numpy(),
    )
    experiment = [*DEPLOYMENT_KEYS, "lhs_exp_id"]
    # A row's tests are a group: its verdict is the group's, by the rule tests.csv's groups use.
    row_of_test = frame.groupby(experiment, sort=False).ngroup().to_numpy()
    frame["verdict"] = group_verdicts(frame["verdict"].to_numpy(), row_of_test)
    rows = frame.drop_duplicates(experiment).set_index(experiment)
    faster = frame.loc[le["verdict"].to_numpy() == VIOLATED]
    fastest = faster.loc[faster.groupby(experiment, sort=False)["mockup_median"].idxmin()]
    fastest = fastest.set_index(experiment)[["fastest_mockup", "mockup_median"]]
    rows = rows.drop(columns=["fastest_mockup", "mockup_median"]).join(fastest).reset_index()
    rows["slowdown"] = rows["default_median"] / rows["mockup_median"]
    rows["severity"] = severity(rows["slowdown"])
    rows["fastest_mockup"] = rows["fastest_mockup"].fillna("")
    rows["collective"] = mpi_names(rows["op"])
    rows = rows.rename(columns={"msg_size": "count", "nodes": "N"})
    order = ["mpi", "N", "ppn", "collective", *extra, "count"]
    numeric = {c: pd.to_numeric(rows[c], errors="coerce") for c in ("N", "ppn", "count")}
    rows = rows.assign(**{f"_{c}": v for c, v in numeric.items()})
    by = [f"_{c}" if c in numeric else c for c in order]
    return rows.sort_values(by, kind="stable")[columns].reset_index(drop=True)


def write_slowdown(tests: pd.DataFrame, keys: Sequence[str], path: Path) -> None:
    write_csv_table(slowdown_table(tests, keys), path)


def read_slowdown(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"{path}: no such file (written by `mpiguide check`)")
    try:
        table = pd.read_csv(path, dtype={"verdict": str, "severity": str}, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read the slowdown table: {error}") from None
    missing = [c for c in ("mpi", *FIGURE2_COLUMNS, *ADDED_COLUMNS) if c not in table]
    if missing:
        # e.g. a table of an earlier mpiguide, without `verdict`
        raise DataError(
            f"{path}: column {missing[0]!r} missing (`mpiguide check` writes it: run it again)"
        )
    unknown = sorted(set(table["verdict"]) - set(VERDICTS))
    if unknown:
        raise DataError(f"{path}: verdict {unknown[0]!r}: one of {', '.join(VERDICTS)}")
    unknown = sorted(set(table["severity"]) - {"", *SEVERITY_LABELS})
    if unknown:
        allowed = ", ".join(SEVERITY_LABELS)
        raise DataError(f"{path}: severity {unknown[0]!r}: one of {allowed}, or empty")
    # A severity is a violation's: a row with one and not the other was not written by check.
    mismatched = (table["verdict"] == VIOLATED) != (table["severity"] != "")
    if mismatched.any():
        line = int(mismatched.to_numpy().argmax()) + 2  # the header is line 1
        raise DataError(f"{path}:{line}: a severity belongs to a violated row, and to it only")
    return table
