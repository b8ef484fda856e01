"""The tiny campaign with the local profile and real MPI: every output file is there and holds
what the contracts say (docs/kernel.md, README's results table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from mpiguide.core.columns import RAW_COLUMNS
from workflow_project import DEPLOYMENT, N_EXPERIMENTS, TINY_CAMPAIGN, snakemake

pytestmark = pytest.mark.workflow

MPIS = tuple(TINY_CAMPAIGN["mpi"])
RUNS = ("00", "01")
NREP = TINY_CAMPAIGN["nrep"]


def results(project: Path) -> Path:
    return project / "results" / "tiny"


def test_grid_and_inputs(completed_campaign: Path) -> None:
    root = results(completed_campaign)
    grid = pd.read_csv(root / "grid.csv")
    assert len(grid) == N_EXPERIMENTS
    assert grid["exp_id"].is_unique
    shuffles = []
    for mpi in MPIS:
        for run in RUNS:
            run_input = pd.read_csv(root / "inputs" / mpi / DEPLOYMENT / f"run{run}.csv")
            # every experiment, one row per chunk of its interleave
            chunks = run_input["exp_id"].value_counts().sort_index()
            assert chunks.to_dict() == grid.set_index("exp_id")["interleave"].to_dict()
            shuffles.append(tuple(run_input["exp_id"]))
    assert len(set(shuffles)) > 1, "every run has the same experiment order"


def test_raw_output_and_provenance(completed_campaign: Path) -> None:
    root = results(completed_campaign)
    for mpi in MPIS:
        raw_dir = root / "raw" / mpi / DEPLOYMENT
        for run in RUNS:
            raw = pd.read_csv(raw_dir / f"run{run}.csv")
            assert list(raw.columns) == list(RAW_COLUMNS)
            assert len(raw) == N_EXPERIMENTS * NREP
            assert (raw["time_s"] > 0).all()
            provenance = json.loads((raw_dir / f"run{run}.json").read_text())
            assert provenance["nprocs"] == 2
        assert (root / "build" / mpi / "mpiguide-bench").exists()


def test_timings_and_medians(completed_campaign: Path) -> None:
    root = results(completed_campaign)
    timings = pd.read_parquet(root / "timings.parquet")
    assert len(timings) == len(MPIS) * len(RUNS) * N_EXPERIMENTS * NREP
    assert set(timings["mpi"].astype(str)) == set(MPIS)
    for column in ("nodes", "ppn", "run", "rep", "time_s", "status"):
        assert column in timings.columns
    # the parameters of a repetition: grid.csv's row of its exp_id (docs/analysis.md)
    joined = timings.merge(pd.read_csv(root / "grid.csv"), on="exp_id", validate="many_to_one")
    assert len(joined) == len(timings) and {"op", "msg_size"} <= set(joined.columns)
    medians = pd.read_parquet(root / "medians.parquet")
    assert len(medians) == len(MPIS) * len(RUNS) * N_EXPERIMENTS


def test_guideline_tables(completed_campaign: Path) -> None:
    guidelines = results(completed_campaign) / "guidelines"
    tests = pd.read_csv(guidelines / "tests.csv")
    # GL4 pairs allgather with alltoall at each of 2 sizes and 2 reorder flags, per MPI and
    # deployment.
    assert len(tests) == 4 * len(MPIS)
    assert set(tests["guideline"]) == {"GL4"}
    summary = pd.read_csv(guidelines / "summary.csv")
    assert len(summary) >= 1
    assert "GL4" in (guidelines / "summary.md").read_text()
    assert (guidelines / "slowdown.csv").stat().st_size > 0
    assert (guidelines / "slowdown.png").read_bytes().startswith(b"\x89PNG")


def test_plots(completed_campaign: Path) -> None:
    plots = results(completed_campaign) / "plots"
    assert plots.is_dir()
    assert (plots / "heatmap.png").exists()


def test_report(campaign_copy: Path) -> None:
    report = campaign_copy / "results" / "tiny" / "report.html"
    snakemake(campaign_copy, "--profile", "profiles/local", "--report", str(report))
    html = report.read_text(errors="replace")
    tables = ("library_table.csv", "verdict_lines.csv", "violated_undecided.csv")
    for expected in ("tests.csv", "summary.csv", "slowdown.csv", "slowdown.png", "Plots", "tiny",
                     *tables):  # fmt: skip
        assert expected in html
    # the front page opens with one line per guideline: GL4's tests over both MPI libraries
    line = re.search(
        r"<strong>GL4</strong> \(le\): (\d+) hold, (\d+) violated, (\d+) undecided of (\d+) tests;"
        r" groups: \d+ hold, \d+ violated, \d+ undecided of \d+; median detectable ratio",
        html,
    )
    assert line is not None, "no verdict line for GL4 on the report's front page"
    holds, violated, undecided, tests = map(int, line.groups())
    assert holds + violated + undecided == tests == 4 * len(MPIS)
    assert "System Message" not in html  # the included RST and the captions rendered cleanly


def test_every_job_left_a_log(completed_campaign: Path) -> None:
    logs = results(completed_campaign) / "logs"
    rules = ("grid", "aggregate", "analyse")
    expected = [logs / f"{rule}.log" for rule in rules]
    for mpi in MPIS:
        expected.append(logs / "build" / f"{mpi}.log")
        for tree in ("inputs", "run"):
            expected += [logs / tree / mpi / DEPLOYMENT / f"run{run}.log" for run in RUNS]
    assert [path for path in expected if not path.is_file()] == []
