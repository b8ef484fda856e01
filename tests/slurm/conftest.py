"""Fixtures of the SLURM tests: the one-node cluster of cluster.sh for the whole package (two
nodes for the tests that ask for them), and a small campaign run through it once."""

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

from workflow_project import measured_once, new_project


@pytest.fixture(scope="package")
def cluster_is_ours() -> bool:
    """Whether these tests start the test cluster, and so may restart and stop it: not when it
    was already up (someone is using it)."""
    if os.geteuid() != 0:
        pytest.skip("the SLURM test cluster needs root (tests/slurm/cluster.sh)")
    missing = [cmd for cmd in (*DAEMONS, *CLIENTS, *MPICCS) if shutil.which(cmd) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (run: scripts/setup.sh slurm)")
    return cluster_script("status").returncode != 0


@pytest.fixture(scope="package")
def cluster(cluster_is_ours: bool) -> Iterator[Cluster]:
    """The one-node test cluster, started for the SLURM tests and stopped after them (left
    running if it was already up)."""
    started = cluster_script("start")
    assert started.returncode == 0, f"cluster.sh start failed:\n{started.stderr}"
    try:
        yield parse_start_output(started.stdout)
    finally:
        if cluster_is_ours:
            stopped = cluster_script("stop")
            assert stopped.returncode == 0, f"cluster.sh stop failed:\n{stopped.stderr}"


@pytest.fixture(scope="module")
def two_node_cluster(cluster: Cluster, cluster_is_ours: bool) -> Iterator[Cluster]:
    """The test cluster with a second node (MPIGUIDE_SLURM_NODES=2), one node again afterwards;
    a cluster someone else started is used as it is."""
    if not cluster_is_ours:
        yield cluster
        return
    started = cluster_script("start", nodes=2)
    assert started.returncode == 0, f"cluster.sh start (2 nodes) failed:\n{started.stderr}"
    try:
        yield parse_start_output(started.stdout)
    finally:
        again = cluster_script("start")
        assert again.returncode == 0, f"cluster.sh start (1 node) failed:\n{again.stderr}"


@pytest.fixture(scope="package")
def slurm_campaign(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small campaign, run to completion through SLURM once (the expensive part)."""

    def measure(project: Path) -> None:
        new_project(project, SLURM_CAMPAIGN)
        result = snakemake(project, *SLURM_PROFILE_ARGS)
        assert result.returncode == 0, f"snakemake on SLURM failed:\n{result.stdout}{result.stderr}"

    return measured_once(tmp_path_factory, "slurm", measure)
