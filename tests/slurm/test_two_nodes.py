"""A 2-node deployment in blocks on the two-node test cluster (MPIGUIDE_SLURM_NODES=2
tests/slurm/cluster.sh start, which the two_node_cluster fixture runs): one sbatch allocation
per block, each entry one srun step across both nodes; a rank the library crashes on one node
ends the step on both; Open MPI 5's coll/han, which answers calls only on a communicator that
spans nodes, never takes an algorithm the kernel forced. Skipped on a one-node cluster someone
else started."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from slurm_project import (
    SLURM_CAMPAIGN,
    SLURM_PROFILE_ARGS,
    Cluster,
    run,
    sacct_record,
    slurm_env,
    snakemake,
)

from fingerprint_support import FINGERPRINT_SOURCE, functions_entered, read_fingerprints
from mpi_support import MPI_LIBRARIES, OPENMPI_OVERSUBSCRIBED_ENV
from mpiguide.core.paths import KERNEL_BINARY
from preload_support import build_test_library
from workflow_project import TINY_CAMPAIGN, new_project

if TYPE_CHECKING:
    from collections.abc import Callable

    from mpi_support import Kernel

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


# A PMPI library whose MPI_Allgather of CRASH_ALLGATHER_COUNT elements dies of SIGSEGV on rank
# CRASH_RANK, and an input that calls it in its second experiment.
CRASHER = Path(__file__).parents[1] / "kernel" / "crash_in_op.c"
CRASH_INPUT = "exp_id,op,msg_size,nrep\n0,allreduce,8,3\n1,allgather,64,3\n2,bcast,8,3\n"
# The crash test's job limit: a step left hanging would hold the job this long, then TIMEOUT.
CRASH_LIMIT_MINUTES = 3


def both_nodes() -> list[str]:
    """The cluster's nodes; skips the test on a one-node cluster."""
    nodes = run("sinfo", "-h", "-N", "-o", "%N").split()
    if len(nodes) < 2:
        pytest.skip("the test cluster has one node (start it with MPIGUIDE_SLURM_NODES=2)")
    return nodes


def test_a_block_is_one_allocation_with_one_step_per_entry(
    two_node_cluster: Cluster, slurm_campaign: Path, tmp_path: Path
) -> None:
    nodes = both_nodes()
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


def test_a_rank_crashed_on_one_node_ends_the_step_and_the_log_names_the_experiment(
    two_node_cluster: Cluster, slurm_campaign: Path, tmp_path: Path
) -> None:
    """`mpiguide run-block` launches with SLURM_KILL_BAD_EXIT=1 (mpiguide.campaign.launch):
    without it the rank left on the other node waits in the collective until the time limit."""
    both_nodes()
    library = build_test_library(MPI_LIBRARIES["openmpi"], CRASHER, tmp_path / "libcrash.so")
    infile = tmp_path / "in.csv"
    infile.write_text(CRASH_INPUT)
    kernel = slurm_campaign / "results" / SLURM_CAMPAIGN["campaign"] / "build" / "openmpi"
    entry = TWO_NODES["mpi"]["openmpi"]
    log = tmp_path / "run.log"
    crash = {"LD_PRELOAD": str(library), "CRASH_ALLGATHER_COUNT": "64", "CRASH_RANK": "1"}
    spec = {
        "seed": 1, "nodes": 2, "ppn": 1, "run": 0, "node_size": None,
        "record": str(tmp_path / "block.json"),
        "entries": [{
            "mpi": "openmpi", "launcher": entry["srun"], "modules": [],
            "env": {**entry["env"], **crash}, "kernel": str(kernel / KERNEL_BINARY),
            "input": str(infile), "output": str(tmp_path / "out.csv"), "log": str(log),
        }],
    }  # fmt: skip
    block = [sys.executable, "-m", "mpiguide", "run-block", "--spec-json", json.dumps(spec)]
    submitted = subprocess.run(
        ["sbatch", "--parsable", "--wait", "-p", two_node_cluster.partition,
         "-A", two_node_cluster.account, "-N", "2", "--ntasks-per-node", "1",
         "-t", str(CRASH_LIMIT_MINUTES), "-o", str(tmp_path / "job.out"),
         "--wrap", shlex.join(block)],
        env=slurm_env(), cwd=tmp_path, capture_output=True, text=True,
        timeout=60 * (CRASH_LIMIT_MINUTES + 2), check=False,
    )  # fmt: skip
    job = submitted.stdout.strip().split(";")[0]
    output = (tmp_path / "job.out").read_text() + submitted.stderr
    assert submitted.returncode != 0, output
    assert sacct_record(job, ("State",)) == {"State": "FAILED"}, output
    said = (
        f"mpiguide-bench: rank 1 got SIGSEGV while running {infile}:3 (exp_id 1: op allgather,"
        " msg_size 64, nrep 3, chunk 1 of 1; every value on that line)"
    )
    assert said in log.read_text(), log.read_text()
    assert said.removeprefix("mpiguide-bench: ") in output
    assert not (tmp_path / "out.csv").exists()


# Each forced algorithm beside the library's own choice at a count 16 elements larger (floats:
# the fingerprint library's mark of an experiment's call).
HAN_INPUT = """exp_id,op,msg_size,dtype,nrep,algorithm
0,bcast,16384,float,3,chain
1,bcast,16448,float,3,
2,allgather,4096,float,3,ring
3,allgather,4160,float,3,
"""
FORCED = {
    ("bcast", 4096): "ompi_coll_base_bcast_intra_chain",
    ("allgather", 1024): "ompi_coll_base_allgather_intra_ring",
}
OWN = {
    ("bcast", 4112): "mca_coll_han_bcast_intra_dynamic",
    ("allgather", 1040): "mca_coll_han_allgather_intra_dynamic",
}


@pytest.mark.parametrize("ppn", [1, 2])
def test_open_mpi_5s_han_takes_the_librarys_own_calls_across_nodes_never_a_forced_one(
    two_node_cluster: Cluster, kernel_for: Callable[[str], Kernel], tmp_path: Path, ppn: int
) -> None:
    """coll/han (priority 35, above coll/tuned's 30 in Open MPI 5) answers bcast and allgather
    on a communicator spanning nodes once a node holds two of its ranks; with one rank per node
    it hands every call back at the first (coll_han_subcomms.c). The algorithms the kernel
    forced run in coll/tuned either way: their duplicates prefer it (docs/kernel.md)."""
    both_nodes()
    kernel = kernel_for("openmpi-5.0.11")
    library = build_test_library(kernel.mpi, FINGERPRINT_SOURCE, tmp_path / "fingerprint.so")
    infile = tmp_path / "in.csv"
    infile.write_text(HAN_INPUT)
    nprocs = 2 * ppn
    env = {
        **slurm_env(), **kernel.mpi.env, **TCP, **OPENMPI_OVERSUBSCRIBED_ENV,
        "OMPI_MCA_btl": "self,sm,tcp", "OMPI_MCA_coll_tuned_use_dynamic_rules": "true",
        "LD_PRELOAD": str(library), "FINGERPRINT_DIR": str(tmp_path),
    }  # fmt: skip
    launched = subprocess.run(
        ["srun", "-p", two_node_cluster.partition, "-A", two_node_cluster.account, "-N", "2",
         "--ntasks-per-node", str(ppn), "--mpi=pmix", "-t", "5", str(kernel.binary),
         "--nprocs", str(nprocs), str(infile), str(tmp_path / "out.csv")],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stdout + launched.stderr
    entered = functions_entered(read_fingerprints(tmp_path, nprocs))
    for call, function in FORCED.items():
        assert entered[call] == {function}, (call, entered)
    for call, function in OWN.items():
        if ppn == 1:
            assert not any(f.startswith("mca_coll_han_") for f in entered[call]), (call, entered)
        else:
            assert entered[call] == {function}, (call, entered)
