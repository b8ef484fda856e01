"""config/campaigns/mpi-versions.yaml: the same guidelines on two versions of Open MPI, two of
MPICH and Intel MPI, in blocks. It validates at both scales, runs safely on two cores at
`scale=local`, and its versions are paired as the page compares them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mpiguide.campaign.config import load_campaign
from mpiguide.reports.versions import VersionPair, version_pairs
from workflow_project import (
    REPO,
    new_project,
    run_jobs,
    scheduled_jobs,
    skip_unless_installed,
    validate_campaign,
)

CAMPAIGN = REPO / "config" / "campaigns" / "mpi-versions.yaml"
CORES = 2
PAIRS = [
    VersionPair("openmpi", "openmpi", "openmpi-5.0.11"),
    VersionPair("mpich", "mpich", "mpich-5.0.2"),
]


def loaded(scale: str) -> dict[str, Any]:
    """The campaign as the workflow checks it at `scale` (installs filled in)."""
    skip_unless_installed(CAMPAIGN, scale)
    return load_campaign(CAMPAIGN, scale=scale)


@pytest.mark.parametrize("scale", ["paper", "local"])
def test_the_campaign_validates(scale: str) -> None:
    validate_campaign(CAMPAIGN, scale)


@pytest.mark.parametrize("scale", ["paper", "local"])
def test_five_libraries_in_blocks_two_versions_each_of_open_mpi_and_mpich(scale: str) -> None:
    config = loaded(scale)
    assert config["blocking"] == "run"
    libraries = {name: entry["library"] for name, entry in config["mpi"].items()}
    assert libraries == {
        "openmpi": "openmpi", "openmpi-5.0.11": "openmpi", "mpich": "mpich",
        "mpich-5.0.2": "mpich", "intelmpi-2021.19": "intelmpi",
    }  # fmt: skip
    assert version_pairs(config["mpi"]) == PAIRS


def test_local_scale_fits_two_cores() -> None:
    config = loaded("local")
    assert config["campaign"] == "mpi-versions-local"
    assert max(d["nodes"] * d["ppn"] for d in config["deployments"]) <= CORES
    # the paired t-test decides within an entry from 2 runs; 10 as the other local blocks
    assert config["runs"] >= 10


@pytest.mark.workflow
def test_local_dry_run_builds_every_library_and_runs_in_blocks(tmp_path: Path) -> None:
    config = loaded("local")
    project = new_project(tmp_path / "project", yaml.safe_load(CAMPAIGN.read_text()))
    jobs = scheduled_jobs(project, "--configfile", str(CAMPAIGN), "--config", "scale=local")
    for entry in config["mpi"]:
        assert jobs.get(f"build_{entry}") == 1, jobs
    launches = run_jobs(config["mpi"], config["runs"], config["deployments"], "run")
    for rule, count in launches.items():
        assert jobs.get(rule) == count, jobs
