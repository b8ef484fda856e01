"""A 2-node deployment in blocks on the two-node test cluster (MPIGUIDE_SLURM_NODES=2
tests/slurm/cluster.sh start, which the two_node_cluster fixture runs): one sbatch allocation
per block, each entry one srun step across both nodes. Skipped on a one-node cluster someone
else started."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from slurm_project import (
    SLURM_CAMPAIGN,
    SLURM_PROFILE_ARGS,
    Cluster,
    run,
    sacct_record,
    snakemake,
)

from workflow_project import TINY_CAMPAIGN, new_project

pytestmark = pytest.mark.slurm

# Open MPI between the two nodes: TCP over the veth pair that joins them (cluster.sh), the only
# interface both namespaces have.
TCP = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "169.254.77.0/30"}
BASE = {**TINY_CAMPAIGN["mpi"]["openmpi"], "srun": "srun --mpi=pmix"}
CAMPAIGN = "twonode"
RUNS = ("run00", "run01")
TWO_NODES = {
    **TINY_CAMPAIGN,
    "campaign": CAMPAIGN,
    "runs": len(RUNS),
    "blocking": "run",
    "deployments": [{"nodes": 2, "ppn": 1}],
    "mpi": {
        "openmpi": {**BASE, "env": {**BASE["env"], **TCP}},
        "openmpi-tuned": {
            **BASE,
            "env": {**BASE["env"], **TCP, "OMPI_MCA_coll_tuned_use_dynamic_rules": "true"},
        },
    },
}


def test_a_block_is_one_allocation_with_one_step_per_entry(
    two_node_cluster: Cluster, slurm_campaign: Path, tmp_path: Path
) -> None:
    nodes = run("sinfo", "-h", "-N", "-o", "%N").split()
    if len(nodes) < 2:
        pytest.skip("the test cluster has one node (start it with MPIGUIDE_SLURM_NODES=2)")
    project = new_project(tmp_path / "project", TWO_NODES)
    # Both entries' kernel: the one the package's campaign built through SLURM (test_campaign.py
    # tests that job), copied with its times, so that this campaign's jobs are its blocks.
    built = slurm_campaign / "results" / SLURM_CAMPAIGN["campaign"] / "build" / "openmpi"
    for mpi in TWO_NODES["mpi"]:
        shutil.copytree(built, project / "results" / CAMPAIGN / "build" / mpi)
    blocks = project / "results" / CAMPAIGN / "blocks" / "2x1"
    # The block records checked here, not the analysis of the runs.
    targets = [str((blocks / f"{run_name}.json").relative_to(project)) for run_name in RUNS]
    result = snakemake(project, *SLURM_PROFILE_ARGS, *targets, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule build_" not in result.stdout + result.stderr
    for run_name in RUNS:
        record = json.loads((blocks / f"{run_name}.json").read_text())
        launches = record["launches"]
        assert set(launches) == set(TWO_NODES["mpi"])
        (job_id,) = {launch["slurm_job_id"] for launch in launches.values()}
        for launch in launches.values():
            assert sorted(launch["hosts"]) == sorted(nodes)
            assert launch["attempt"] == 1
        allocation = sacct_record(job_id, ("NNodes", "State"))
        assert allocation == {"NNodes": "2", "State": "COMPLETED"}
        for step in range(len(launches)):
            assert sacct_record(f"{job_id}.{step}", ("NNodes", "State"))["NNodes"] == "2"
