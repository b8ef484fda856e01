"""The self-test with `interleave: 1` and `interleave: 5` in one sitting, in blocked order.

Prints, does not assert. Measures config/campaigns/selftest-back-to-back.yaml (K = 1) and
config/campaigns/selftest.yaml (K = 5, the campaign default) block by block: block 0 of one,
block 0 of the other, block 1 of the other, block 1 of the one, … (the order alternates per
block, so neither campaign always runs first after a pause), so that both see the same state
of the machine over the sitting instead of one campaign measured after the other. Then each
campaign's analysis and self-test run (no new measurements), and the table docs/selftest.md
shows is printed: the within-launch rows of both `selftest.csv`, side by side, and the spread
of the per-run log-ratios of the null comparisons.

Run it alone on the machine (no builds or tests beside it), with the venv's Python:
`.venv/bin/python benchmarks/interleave_sitting.py [--runs 30] [--suffix s10]`. The results
go to `results/selftest-<suffix>-k1/` and `results/selftest-<suffix>-k5/`; a re-run resumes
with the blocks that are missing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import REPO, load, run_snakemake
from mpiguide.core.paths import (
    BLOCK_RECORD_SUFFIX,
    BLOCKS_TREE,
    MEDIANS_PARQUET,
    SELFTEST_CSV,
    block_path,
    campaign_results,
)

CAMPAIGNS = {
    1: REPO / "config" / "campaigns" / "selftest-back-to-back.yaml",
    5: REPO / "config" / "campaigns" / "selftest.yaml",
}
DEPLOYMENT = (1, 2)
# The within-launch rows docs/selftest.md compares.
ROWS = [(0, 5), (0, 10), (0, 30), (5, 5), (5, 10), (10, 5), (10, 10), (10, 20), (20, 10), (20, 30)]


def snakemake(campaign: str, config_file: Path, runs: int, *targets: str) -> None:
    run_snakemake(
        REPO,
        *targets,
        "--profile",
        "profiles/local",
        "--quiet",
        "rules",
        "--configfile",
        str(config_file),
        "--config",
        f"campaign={campaign}",
        f"runs={runs}",
        own_package=False,
    )


def campaign_name(suffix: str, interleave: int) -> str:
    return f"selftest-{suffix}-k{interleave}"


def cell(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "-"
    row = frame.iloc[0]
    return (
        f"{100 * row['flagged_test_rate']:.1f} / {100 * row['holds_test_rate']:.1f} / "
        f"{100 * row['undecided_test_rate']:.1f} ({100 * row['detected_group_rate']:.0f})"
    )


def table(suffix: str) -> None:
    rates = {
        k: pd.read_csv(REPO / campaign_results(campaign_name(suffix, k)) / SELFTEST_CSV)
        for k in CAMPAIGNS
    }
    print("| within a launch | runs | `interleave: 1` | `interleave: 5` |")
    print("|---|---|---|---|")
    for planted, runs in ROWS:
        cells = []
        for k in CAMPAIGNS:
            frame = rates[k]
            cells.append(
                cell(
                    frame[
                        (frame["slowdown_pct"] == planted)
                        & (frame["launches"] == "same")
                        & (frame["test"] == "auto")
                        & (frame["op"] == "all")
                        & (frame["runs"] == runs)
                    ]
                )
            )
        label = "null" if planted == 0 else f"planted {planted} %"
        print(f"| {label} | {runs} | {cells[0]} | {cells[1]} |")
    for k in CAMPAIGNS:
        medians = pd.read_parquet(
            REPO / campaign_results(campaign_name(suffix, k)) / MEDIANS_PARQUET
        )
        medians = medians[medians["mpi"].isin(["a", "b"])]
        wide = medians.pivot_table(
            index=["mpi", "run", "op", "msg_size"],
            columns="dtype",
            values="median_s",
            observed=True,
        )
        sd = np.log(wide["int"] / wide["char"]).groupby(level=["mpi", "op", "msg_size"]).std()
        quartiles = " / ".join(f"{q:.3f}" for q in sd.quantile([0.25, 0.5, 0.75]))
        print(f"interleave {k}: sd of the null per-run log-ratios, quartiles {quartiles}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--suffix", default="sitting")
    args = parser.parse_args()
    order = list(CAMPAIGNS)
    start = time.perf_counter()
    print(f"start {time.strftime('%H:%M:%S')}, {load()}", flush=True)
    for run in range(args.runs):
        for k in order:
            name = campaign_name(args.suffix, k)
            block = block_path(*DEPLOYMENT, run)
            record = f"{campaign_results(name)}/{BLOCKS_TREE}/{block}{BLOCK_RECORD_SUFFIX}"
            snakemake(name, CAMPAIGNS[k], args.runs, record)
        print(f"block {run:02d} ({order}) done, {load()}", flush=True)
        order.reverse()
    measured = time.perf_counter() - start
    for k in CAMPAIGNS:
        snakemake(campaign_name(args.suffix, k), CAMPAIGNS[k], args.runs, "all", "selftest")
    print(f"measured in {measured / 60:.1f} min; analysed, {load()}")
    table(args.suffix)


if __name__ == "__main__":
    main()
