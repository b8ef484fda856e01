"""The test cluster itself: idempotent start, accounting, rejection of impossible requests, and
which `srun --mpi=` plugin starts which MPI library (the pitfalls the profile's docs name)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from slurm_project import (
    CLUSTER_SH,
    Cluster,
    cluster_script,
    parse_start_output,
    run,
    sacct_record,
    slurm_env,
)

pytestmark = pytest.mark.slurm

STATE_DIR = Path(os.environ.get("MPIGUIDE_SLURM_DIR", "/tmp/mpiguide-slurm"))


PIDFILES = {
    "munged": "munge/munged.pid",
    "mariadbd": "mariadb/mariadbd.pid",
    "slurmdbd": "slurm/slurmdbd.pid",
    "slurmctld": "slurm/slurmctld.pid",
    "slurmd": "slurm/slurmd.pid",
}


def daemon_pids() -> dict[str, str]:
    return {name: (STATE_DIR / path).read_text().strip() for name, path in PIDFILES.items()}


def test_start_is_idempotent(cluster: Cluster) -> None:
    before = daemon_pids()
    again = cluster_script("start")
    assert again.returncode == 0, again.stderr
    assert parse_start_output(again.stdout) == cluster
    assert daemon_pids() == before, "a second start restarted daemons"
    status = cluster_script("status")
    assert status.returncode == 0
    assert f"{cluster.partition}*" in status.stdout


def cluster_processes() -> dict[str, set[int]]:
    """Daemon -> pids of the running daemons of this test cluster, found as cluster.sh finds
    them (the environment cluster.sh starts them with), whatever the pid files say."""
    conf = f"SLURM_CONF={STATE_DIR / 'etc' / 'slurm.conf'}".encode()
    found: dict[str, set[int]] = {}
    for proc in Path("/proc").iterdir():
        try:
            name = (proc / "comm").read_text().strip()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # not a process, or ended meanwhile
            continue
        if name in PIDFILES and state != "Z" and conf in environ:
            found.setdefault(name, set()).add(int(proc.name))
    return found


def test_start_and_stop_recover_from_an_interrupted_run(
    cluster: Cluster, cluster_is_ours: bool
) -> None:
    """A run killed half-way leaves daemons behind that no pid file names (slurmdbd still
    holding its port) or pid files naming dead daemons: start ends the former and restarts
    the latter, stays idempotent, and stop ends every daemon, pid file or not."""
    if not cluster_is_ours:
        pytest.skip("the test cluster was started by someone else: not killing it")
    before = daemon_pids()
    orphan = int(before["slurmdbd"])
    (STATE_DIR / PIDFILES["slurmdbd"]).unlink()
    os.kill(int(before["slurmctld"]), signal.SIGKILL)

    recovered = cluster_script("start")
    assert recovered.returncode == 0, recovered.stderr
    assert parse_start_output(recovered.stdout) == cluster
    pids = daemon_pids()
    assert {name: {int(pid)} for name, pid in pids.items()} == cluster_processes()
    assert int(pids["slurmdbd"]) != orphan
    again = cluster_script("start")
    assert again.returncode == 0, again.stderr
    assert daemon_pids() == pids, "a start after the recovery restarted daemons"
    assert batch_job_record(cluster)["State"] == "COMPLETED"

    (STATE_DIR / PIDFILES["munged"]).unlink()
    stopped = cluster_script("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert cluster_processes() == {}
    restarted = cluster_script("start")
    assert restarted.returncode == 0, restarted.stderr


def batch_job_record(cluster: Cluster) -> dict[str, str]:
    """The accounting record of a one-task batch job, run to its end."""
    job_id = run(
        "sbatch",
        "--parsable",
        "--wait",
        "--output",
        "/dev/null",  # not slurm-<id>.out in the working directory
        "-p",
        cluster.partition,
        "-A",
        cluster.account,
        "-n",
        "1",
        "-t",
        "1",
        "--wrap",
        "true",
    ).strip()
    return sacct_record(job_id, ("State", "Account", "Partition"))


def test_batch_job_is_accounted(cluster: Cluster) -> None:
    assert batch_job_record(cluster) == {
        "State": "COMPLETED",
        "Account": cluster.account,
        "Partition": cluster.partition,
    }


def test_finished_jobs_stay_visible_to_squeue(cluster: Cluster) -> None:
    """MinJobAge keeps finished jobs in slurmctld long enough for the plugin's squeue status
    queries, which it spaces up to 180 s apart (and uses only from 3 x 40 s on)."""
    config = run("scontrol", "show", "config")
    match = re.search(r"^MinJobAge\s*=\s*(\d+) sec$", config, flags=re.MULTILINE)
    assert match, config
    assert int(match.group(1)) >= 300


@pytest.mark.parametrize(
    ("request_args", "message"),
    [
        (("-N", "2"), "Node count specification invalid"),
        (("-t", "61"), "time limit"),
        (("-A", "no-such-account"), "Invalid account"),
    ],
    ids=["nodes", "time", "account"],
)
def test_impossible_request_is_rejected(
    cluster: Cluster, request_args: tuple[str, ...], message: str
) -> None:
    """EnforcePartLimits=ALL and enforced associations: rejected at submission, never left
    pending forever."""
    result = subprocess.run(
        ["sbatch", "-p", cluster.partition, "-A", cluster.account, *request_args, "--wrap", "true"],
        env=slurm_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize(
    ("library", "plugin", "works"),
    [
        ("openmpi", "pmix", True),
        ("openmpi", "pmi2", False),  # aborts in MPI_Init
        ("openmpi", "none", False),
        ("mpich", "pmi2", True),
        ("mpich", "pmix", False),  # two one-rank jobs: --nprocs 2 turns that into a failure
        ("mpich", "none", False),  # the same
    ],
)
def test_srun_mpi_plugin(
    cluster: Cluster,
    kernel_for: Callable,
    tmp_path: Path,
    library: str,
    plugin: str,
    works: bool,
) -> None:
    kernel = kernel_for(library)
    experiment = tmp_path / "input.csv"
    experiment.write_text("exp_id,op,msg_size,nrep,topology\n0,allgather,8,3,none\n")
    output = tmp_path / "output.csv"
    result = subprocess.run(
        [
            "srun",
            "-p",
            cluster.partition,
            "-A",
            cluster.account,
            "-n",
            "2",
            f"--mpi={plugin}",
            str(kernel.binary),
            "--nprocs",
            "2",
            str(experiment),
            str(output),
        ],
        env=slurm_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode == 0) == works, result.stderr
    assert output.exists() == works
    if works:
        provenance = json.loads(output.with_suffix(".json").read_text())
        assert provenance["nprocs"] == 2
        assert provenance["slurm_job_id"]


def test_cluster_script_usage() -> None:
    result = subprocess.run([str(CLUSTER_SH)], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "usage" in result.stderr
