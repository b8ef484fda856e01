"""What an adaptive campaign spent, against the same campaign at a fixed `runs: max`
(docs/analysis.md, "What an adaptive campaign spent").

- cost.csv, per guideline: its tests, the runs per side their verdicts rest on (each test's
  `look_runs`, summed) against every test at max runs.
- campaign_cost.csv, per mpi entry and deployment and over all (`mpi` = ALL): the launches and
  the kernel time (the sum of every repetition's time_s in timings.parquet) spent, against
  those of the fixed campaign. The fixed campaign's launches are exact (every entry and
  deployment, max runs); its kernel time is an estimate: each experiment's mean measured time
  per run (the sum of its repetitions in a run, averaged over the runs it has) times max.
- cost.rst: the campaign's line of the two, for the report's front page.
The tests decided per round are looks.csv (analysis/sequential.py).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS
from mpiguide.analysis.sequential import LOOK_RUNS, Looks
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import CAMPAIGN_COST_CSV, COST_CSV, COST_RST

COST_COLUMNS = ("guideline", "tests", "runs_used", "runs_fixed", "runs_share", "mean_runs")
CAMPAIGN_COST_COLUMNS = (
    *DEPLOYMENT_KEYS, "launches", "launches_fixed", "launches_share",
    "kernel_s", "kernel_fixed_s", "kernel_share",
)  # fmt: skip
# campaign_cost.csv's row over every entry and deployment: its `mpi`, the others empty.
ALL = "all"
_TIMING_COLUMNS = [*DEPLOYMENT_KEYS, "run", "exp_id", "time_s"]


def guideline_cost(tests: pd.DataFrame, looks: Looks) -> pd.DataFrame:
    """Per guideline (tests.csv's order): tests, the runs per side its tests stopped at (summed:
    `runs_used`; averaged: `mean_runs`) and every test at max runs (`runs_fixed`)."""
    runs = pd.to_numeric(tests[LOOK_RUNS], errors="raise")
    by_guideline = runs.groupby(tests["guideline"], sort=False)
    cost = pd.DataFrame({"tests": by_guideline.size(), "runs_used": by_guideline.sum()})
    cost["runs_fixed"] = cost["tests"] * looks.last
    cost["runs_share"] = cost["runs_used"] / cost["runs_fixed"]
    cost["mean_runs"] = by_guideline.mean()
    return cost.rename_axis("guideline").reset_index()[list(COST_COLUMNS)]


def campaign_cost(timings: pd.DataFrame, looks: Looks) -> pd.DataFrame:
    """Per mpi entry and deployment, then over all: launches and kernel time spent, against
    the fixed campaign's launches and its estimated kernel time."""
    keys = list(DEPLOYMENT_KEYS)
    per_run = timings.groupby([*keys, "exp_id", "run"], observed=True)["time_s"].sum()
    per_experiment = per_run.groupby(level=[*keys, "exp_id"], observed=True).mean()
    by_deployment = timings.groupby(keys, observed=True, sort=True)
    cost = pd.DataFrame({
        "launches": by_deployment["run"].nunique(),
        "launches_fixed": looks.last,
        "kernel_s": by_deployment["time_s"].sum(),
        "kernel_fixed_s": per_experiment.groupby(level=keys, observed=True).sum()
        * looks.last,
    }).reset_index()  # fmt: skip
    cost["mpi"] = cost["mpi"].astype(str)
    total = cost[["launches", "launches_fixed", "kernel_s", "kernel_fixed_s"]].sum()
    cost = pd.concat([cost, pd.DataFrame([{"mpi": ALL, **total.to_dict()}])], ignore_index=True)
    cost["launches_share"] = cost["launches"] / cost["launches_fixed"]
    cost["kernel_share"] = cost["kernel_s"] / cost["kernel_fixed_s"]
    counts = {"nodes": "Int64", "ppn": "Int64", "launches": int, "launches_fixed": int}
    return cost.astype(counts)[list(CAMPAIGN_COST_COLUMNS)]


def cost_rst(campaign: pd.DataFrame, looks: Looks) -> str:
    """The report's line: the campaign's launches and kernel time against a fixed campaign."""
    total = campaign.loc[campaign["mpi"] == ALL].iloc[0]
    return (
        f"**What the adaptive campaign spent**: {total.launches} launches and"
        f" {total.kernel_s:.3g} s of kernel time (every repetition's time summed), against"
        f" {total.launches_fixed} launches and an estimated {total.kernel_fixed_s:.3g} s for"
        f" the same campaign at a fixed ``runs: {looks.last}``"
        f" ({total.launches_share:.0%} of the launches, {total.kernel_share:.0%} of the kernel"
        " time; the estimate is each experiment's measured mean time per run times"
        f" {looks.last}). Per entry and deployment: campaign_cost.csv; the runs each"
        " guideline's tests used: cost.csv; the tests decided at each look: looks.csv.\n"
    )


def read_timings(timings_parquet: Path) -> pd.DataFrame:
    try:
        return pq.read_table(timings_parquet, columns=_TIMING_COLUMNS).to_pandas()
    except (OSError, ValueError, KeyError) as error:
        raise DataError(f"{timings_parquet}: cannot read the timings: {error}") from None


def write_cost(
    timings_parquet: str | Path, tests_csv: str | Path, looks: Looks, outdir: str | Path
) -> list[Path]:
    """cost.csv, campaign_cost.csv and cost.rst into outdir."""
    outdir = Path(outdir)
    try:
        tests = pd.read_csv(tests_csv, usecols=["guideline", LOOK_RUNS])
    except (OSError, ValueError) as error:
        raise DataError(
            f"{tests_csv}: cannot read the tests' looks (an adaptive campaign's): {error}"
        ) from None
    campaign = campaign_cost(read_timings(Path(timings_parquet)), looks)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = [outdir / name for name in (COST_CSV, CAMPAIGN_COST_CSV, COST_RST)]
    with atomic_path(paths[0]) as temporary:
        guideline_cost(tests, looks).to_csv(temporary, index=False)
    with atomic_path(paths[1]) as temporary:
        campaign.to_csv(temporary, index=False)
    with atomic_path(paths[2]) as temporary:
        Path(temporary).write_text(cost_rst(campaign, looks), encoding="utf-8")
    return paths
