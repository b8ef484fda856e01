"""Fixtures of the SLURM tests: the one-node cluster of cluster.sh for the whole package, and a
small campaign run through it once."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_project import (
    CLIENTS,
    DAEMONS,
    MPICCS,
    SLURM_CAMPAIGN,
    SLURM_PROFILE_ARGS,
    Cluster,
    cluster_script,
    parse_start_output,
    snakemake,
)

from workflow_project import new_project


@pytest.fixture(scope="package")
def cluster() -> Iterator[Cluster]:
    """The test cluster, started for the SLURM tests and stopped after them (left running if
    it was already up: someone is using it)."""
    if os.geteuid() != 0:
        pytest.skip("the SLURM test cluster needs root (tests/slurm/cluster.sh)")
    missing = [cmd for cmd in (*DAEMONS, *CLIENTS, *MPICCS) if shutil.which(cmd) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (run: scripts/setup.sh slurm)")
    was_running = cluster_script("status").returncode == 0
    started = cluster_script("start")
    assert started.returncode == 0, f"cluster.sh start failed:\n{started.stderr}"
    try:
        yield parse_start_output(started.stdout)
    finally:
        if not was_running:
            stopped = cluster_script("stop")
            assert stopped.returncode == 0, f"cluster.sh stop failed:\n{stopped.stderr}"


@pytest.fixture(scope="package")
def slurm_campaign(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small campaign, run to completion through SLURM once (the expensive part)."""
    project = new_project(tmp_path_factory.mktemp("slurm") / "project", SLURM_CAMPAIGN)
    result = snakemake(project, *SLURM_PROFILE_ARGS)
    assert result.returncode == 0, f"snakemake on SLURM failed:\n{result.stdout}{result.stderr}"
    return project
