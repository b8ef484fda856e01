"""Re-run semantics after a complete campaign, read from `snakemake -n`."""

from __future__ import annotations

import json
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


def files_below(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time, by its path below `folder`."""
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def without_metadata(project: Path) -> Path:
    """The fresh-clone case: results kept, Snakemake's .snakemake/ (params, input lists) lost."""
    shutil.rmtree(project / ".snakemake")
    return project


METADATA = [
    pytest.param(lambda project: project, id="with .snakemake"),
    pytest.param(without_metadata, id="without .snakemake"),
]


def test_complete_campaign_is_up_to_date(campaign_copy: Path) -> None:
    assert scheduled_jobs(campaign_copy) == {}


# check's decided_with.json holds the analysis options and the guideline selection: no options
# record job (models.json holds only the analysis keys a fit reads, unchanged here).
@pytest.mark.parametrize("metadata", METADATA)
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda config: config["analysis"].update(v_thres=1.5), id="analysis"),
        pytest.param(lambda config: config.update(guidelines=["GL4", "GL12"]), id="guidelines"),
    ],
)
def test_analysis_change_reruns_only_analysis(
    campaign_copy: Path,
    edit_config: EditConfig,
    change: Callable[[dict[str, Any]], None],
    metadata: Callable[[Path], Path],
) -> None:
    edit_config(change)
    assert scheduled_jobs(metadata(campaign_copy)) == ANALYSIS


@pytest.mark.parametrize("metadata", METADATA)
def test_a_plots_change_reruns_only_the_analysis(
    campaign_copy: Path, edit_config: EditConfig, metadata: Callable[[Path], Path]
) -> None:
    edit_config(lambda config: config.update(plots={"focus": "violated", "max": 5}))
    expected = {"analyse": 1, "options_record": 1, "all": 1}
    assert scheduled_jobs(metadata(campaign_copy)) == expected


@pytest.mark.parametrize("metadata", METADATA)
def test_results_without_records_rerun_only_the_record_jobs(
    campaign_copy: Path, metadata: Callable[[Path], Path]
) -> None:
    shutil.rmtree(campaign_copy / "results" / TINY_CAMPAIGN["campaign"] / "options")
    assert scheduled_jobs(metadata(campaign_copy)) == {"options_record": 6, "all": 1}


@pytest.mark.parametrize(
    "arguments", [("-n",), ("--lint",), ("--list-rules",)], ids=["dry run", "lint", "list"]
)
def test_reading_the_workflow_writes_nothing_below_the_results(
    campaign_copy: Path, edit_config: EditConfig, arguments: tuple[str, ...]
) -> None:
    results = campaign_copy / "results"
    before = files_below(results)
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    snakemake(campaign_copy, "--profile", "profiles/local", *arguments)
    assert files_below(results) == before


@pytest.mark.parametrize("metadata", METADATA)
def test_a_changed_option_is_recorded_once_its_rules_ran(
    campaign_copy: Path, edit_config: EditConfig, metadata: Callable[[Path], Path]
) -> None:
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    snakemake(metadata(campaign_copy), "--profile", "profiles/local", "--cores", "2")
    guidelines = campaign_copy / "results" / TINY_CAMPAIGN["campaign"] / "guidelines"
    assert json.loads((guidelines / "decided_with.json").read_text())["analysis"]["v_thres"] == 1.5
    assert scheduled_jobs(campaign_copy) == {}
    assert scheduled_jobs(without_metadata(campaign_copy)) == {}


def test_a_target_forces_only_the_consumers_it_needs(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    # the analysis is forced for tests.csv, and nothing before it; once it ran, nothing is left
    # to do, with or without Snakemake's metadata
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    tests = f"results/{TINY_CAMPAIGN['campaign']}/guidelines/tests.csv"
    assert scheduled_jobs(campaign_copy, tests) == {"analyse": 1}
    snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2", tests)
    assert scheduled_jobs(campaign_copy, f"results/{TINY_CAMPAIGN['campaign']}/grid.csv") == {}
    assert scheduled_jobs(without_metadata(campaign_copy)) == {}


def test_a_failed_check_is_forced_again(campaign_copy: Path, edit_config: EditConfig) -> None:
    """The analysis fails after an analysis change (here: its medians unreadable): Snakemake
    removes its outputs, decided_with.json too, so the next invocation decides again (and
    writes again options/fail_on.json and options/plots.json, whose jobs wait for the outputs
    the analysis lost)."""
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    results = campaign_copy / "results" / TINY_CAMPAIGN["campaign"]
    medians = results / "medians.parquet"
    kept = medians.read_bytes()
    stat = medians.stat()
    medians.write_bytes(b"not parquet")
    os.utime(medians, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    failed = snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2", check=False)
    assert failed.returncode != 0
    medians.write_bytes(kept)
    os.utime(medians, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    expected = {**ANALYSIS, "options_record": 2}
    assert scheduled_jobs(without_metadata(campaign_copy)) == expected


def test_a_rule_whose_input_list_changed_re_plans_nothing(campaign_copy: Path) -> None:
    """A release that takes an input off `grid` and `inputs` (the options records once were
    their inputs): with Snakemake's metadata of the old lists, the workflow profile's rerun
    triggers leave the planned inputs, and so the measured runs, alone."""
    plan = campaign_copy / "workflow" / "rules" / "plan.smk"
    text = plan.read_text()
    # Both rules' input lists grow by a file that exists and is older than their outputs.
    listed = 'grid=f"{RESULTS}/{GRID_CSV}",\n        plan=input_plan,'
    grown = text.replace(listed, listed + '\n        extra=ancient("Snakefile"),')
    assert grown != text, "plan.smk's inputs rule changed: update this test"
    plan.write_text(grown)
    assert scheduled_jobs(campaign_copy) == {}
    # Snakemake's default triggers would plan every input again, and so measure every run.
    default = ("--rerun-triggers", "mtime", "params", "software-env", "code", "input")
    assert "inputs" in scheduled_jobs(campaign_copy, *default)


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
    assert scheduled_jobs(campaign_copy) == {"fit_models": 1, "options_record": 1, "all": 1}


def test_more_runs_schedule_only_the_new_runs(campaign_copy: Path, edit_config: EditConfig) -> None:
    edit_config(lambda config: config.update(runs=config["runs"] + 1))
    per_mpi = {"inputs": len(TINY_CAMPAIGN["mpi"])}
    runs = {f"run_{mpi}": 1 for mpi in TINY_CAMPAIGN["mpi"]}
    # The campaign's record, and the seed's, which waits for every run's input.
    records = {"options_record": 2}
    assert scheduled_jobs(campaign_copy) == {
        **per_mpi, **runs, "aggregate": 1, **ANALYSIS, **records
    }  # fmt: skip


def test_new_deployment_schedules_only_its_runs(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    edit_config(lambda config: config["deployments"].append({"nodes": 2, "ppn": 1}))
    n_runs = TINY_CAMPAIGN["runs"]
    runs = {f"run_{mpi}": n_runs for mpi in TINY_CAMPAIGN["mpi"]}
    inputs = n_runs * len(TINY_CAMPAIGN["mpi"])
    expected = {"inputs": inputs, **runs, "aggregate": 1, **ANALYSIS, "options_record": 2}
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
        "options_record": 6,
    }
    snakemake(clone, "--profile", "profiles/local", "--cores", "2", *analysis_only)

    assert not (clone / "results" / "tiny" / "build").exists()
    original, analysed = completed_campaign / "results" / "tiny", clone / "results" / "tiny"
    for name in ("medians.parquet", "timings.parquet"):
        expected = pd.read_parquet(original / name)
        pd.testing.assert_frame_equal(pd.read_parquet(analysed / name), expected)
    tests = Path("guidelines") / "tests.csv"
    pd.testing.assert_frame_equal(pd.read_csv(analysed / tests), pd.read_csv(original / tests))
