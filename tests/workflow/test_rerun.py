"""Re-run semantics after a complete campaign, read from `snakemake -n`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from workflow_project import (
    ANALYSIS_JOBS,
    TINY_CAMPAIGN,
    new_project,
    read_config,
    scheduled_jobs,
    snakemake,
)

pytestmark = pytest.mark.workflow

ANALYSIS = {job: count for job, count in ANALYSIS_JOBS.items() if job != "aggregate"}
EditConfig = Callable[[Callable[[dict[str, Any]], None]], None]


def test_complete_campaign_is_up_to_date(campaign_copy: Path) -> None:
    assert scheduled_jobs(campaign_copy) == {}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda config: config["analysis"].update(v_thres=1.5), id="analysis"),
        pytest.param(lambda config: config.update(guidelines=["GL4", "GL12"]), id="guidelines"),
    ],
)
def test_analysis_change_reruns_only_analysis(
    campaign_copy: Path, edit_config: EditConfig, change: Callable[[dict[str, Any]], None]
) -> None:
    edit_config(change)
    assert scheduled_jobs(campaign_copy) == ANALYSIS


def test_a_dry_run_writes_no_option_record(campaign_copy: Path, edit_config: EditConfig) -> None:
    records = campaign_copy / "results" / TINY_CAMPAIGN["campaign"] / "options"
    before = {path.name: path.read_bytes() for path in records.iterdir()}
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    assert scheduled_jobs(campaign_copy) == ANALYSIS
    assert {path.name: path.read_bytes() for path in records.iterdir()} == before


def test_catalogue_change_reruns_only_analysis(campaign_copy: Path) -> None:
    # The catalogue is the package's one copy: an edited file (as after an upgrade) is the
    # change. Snakemake compares the content of a small newer input with its metadata's
    # checksum, so the edit must change bytes, and the package's file gets them back.
    before, text = GUIDELINE_CATALOGUE.stat(), GUIDELINE_CATALOGUE.read_bytes()
    try:
        GUIDELINE_CATALOGUE.write_bytes(text + b"\n# edited\n")
        assert scheduled_jobs(campaign_copy) == ANALYSIS
    finally:
        GUIDELINE_CATALOGUE.write_bytes(text)
        os.utime(GUIDELINE_CATALOGUE, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_models_change_reruns_only_the_fit(campaign_copy: Path, edit_config: EditConfig) -> None:
    edit_config(lambda config: config.update(models=[{"model": "hockney",
                                                      "ops": ["neighbor_allgather"]}]))  # fmt: skip
    assert scheduled_jobs(campaign_copy) == {"fit_models": 1, "all": 1}


def test_more_runs_schedule_only_the_new_runs(campaign_copy: Path, edit_config: EditConfig) -> None:
    edit_config(lambda config: config.update(runs=config["runs"] + 1))
    per_mpi = {"inputs": len(TINY_CAMPAIGN["mpi"])}
    runs = {f"run_{mpi}": 1 for mpi in TINY_CAMPAIGN["mpi"]}
    assert scheduled_jobs(campaign_copy) == {**per_mpi, **runs, "aggregate": 1, **ANALYSIS}


def test_new_deployment_schedules_only_its_runs(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    edit_config(lambda config: config["deployments"].append({"nodes": 2, "ppn": 1}))
    n_runs = TINY_CAMPAIGN["runs"]
    runs = {f"run_{mpi}": n_runs for mpi in TINY_CAMPAIGN["mpi"]}
    expected = {"inputs": n_runs * len(TINY_CAMPAIGN["mpi"]), **runs, "aggregate": 1, **ANALYSIS}
    assert scheduled_jobs(campaign_copy) == expected


def test_copied_raw_is_analysed_without_kernel(completed_campaign: Path, tmp_path: Path) -> None:
    """A fresh clone (no .snakemake/, no build) with only results/<campaign>/raw copied in."""
    clone = new_project(tmp_path / "clone", read_config(completed_campaign))
    shutil.rmtree(clone / "src" / "kernel")
    raw = Path("results") / "tiny" / "raw"
    shutil.copytree(completed_campaign / raw, clone / raw)

    analysis_only = ("--config", "analysis_only=True")
    planned = scheduled_jobs(clone, *analysis_only)
    assert planned == {
        "grid": 1,
        "inputs": len(TINY_CAMPAIGN["mpi"]) * TINY_CAMPAIGN["runs"],
        "aggregate": 1,
        **ANALYSIS,
    }
    snakemake(clone, "--profile", "profiles/local", "--cores", "2", *analysis_only)

    assert not (clone / "results" / "tiny" / "build").exists()
    original, analysed = completed_campaign / "results" / "tiny", clone / "results" / "tiny"
    for name in ("medians.parquet", "timings.parquet"):
        expected = pd.read_parquet(original / name)
        pd.testing.assert_frame_equal(pd.read_parquet(analysed / name), expected)
    tests = Path("guidelines") / "tests.csv"
    pd.testing.assert_frame_equal(pd.read_csv(analysed / tests), pd.read_csv(original / tests))
