"""Run jobs that SLURM ends: one cancelled with scancel, one killed at its time limit. Snakemake
reports both (the cancelled one: not yet, see test_cancelled_job_is_reported), every other
run's output is intact, and the next invocation runs only the runs that are missing.

The campaign of the package fixture is extended from 3 to 5 runs per library. MPICH's new runs
start their step through stall_step.sh (an `srun --prolog`), so they are still running when
the test cancels one and when the other reaches its 1-minute limit; Open MPI's new runs finish.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from slurm_project import (
    CAMPAIGN,
    DEPLOYMENT,
    HERE,
    SLURM_CAMPAIGN,
    SLURM_PROFILE_ARGS,
    SNAKEMAKE,
    results,
    run,
    sacct_record,
    slurm_env,
    snakemake,
)

from workflow_project import write_config

pytestmark = pytest.mark.slurm

NEW_RUNS = ("03", "04")
CANCELLED_RUN, TIMED_OUT_RUN = NEW_RUNS
MPICH_SRUN = SLURM_CAMPAIGN["mpi"]["mpich"]["srun"]


@dataclass(frozen=True)
class FailedInvocation:
    project: Path
    returncode: int
    output: str
    cancelled_job: str
    # Snakemake was still waiting for the cancelled job and had to be interrupted.
    interrupted: bool
    # sha256 and mtime of every raw file that existed before the failing invocation.
    raw_before: dict[Path, tuple[str, int]]


def raw_files(project: Path) -> dict[Path, tuple[str, int]]:
    return {
        path: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted((results(project) / "raw").rglob("*"))
        if path.is_file()
    }


def extended_campaign(stall_mpich: bool) -> dict:
    config = copy.deepcopy(SLURM_CAMPAIGN)
    config["runs"] = int(NEW_RUNS[-1]) + 1
    if stall_mpich:
        config["mpi"]["mpich"]["srun"] = f"{MPICH_SRUN} --prolog={HERE / 'stall_step.sh'}"
    return config


def running_job(comment: str, process: subprocess.Popen[str], timeout: float = 120) -> str:
    """The id of the job with this plugin comment, once SLURM reports it running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "snakemake ended before the job ran"
        for line in run("squeue", "-h", "-t", "RUNNING", "-o", "%i %k").splitlines():
            job_id, _, job_comment = line.partition(" ")
            if job_comment == comment:
                return job_id
        time.sleep(1)
    raise AssertionError(f"no running job with comment {comment}")


def stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C as a user would press it. The first cancels the jobs and then waits for the job
    it takes for running; the second ends Snakemake."""
    for grace in (5, 20):
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def failed_invocation(
    slurm_campaign: Path, tmp_path_factory: pytest.TempPathFactory
) -> FailedInvocation:
    project = tmp_path_factory.mktemp("failures") / "project"
    shutil.copytree(slurm_campaign, project, symlinks=True)
    raw_before = raw_files(project)
    write_config(project, extended_campaign(stall_mpich=True))
    nodes, ppn = DEPLOYMENT.split("x")
    log = project / "snakemake.out"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(SNAKEMAKE), *SLURM_PROFILE_ARGS, "--set-resources", "run_mpich:runtime=1"],
            cwd=project,
            env=slurm_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        interrupted = False
        try:
            cancelled = running_job(
                f"rule_run_mpich_wildcards_{nodes}_{ppn}_{CANCELLED_RUN}", process
            )
            run("scancel", cancelled)
            # The time limit ends the other job after 60-90 s, long after sacct has shown the
            # cancelled job's final state: with both reported, Snakemake has nothing left to
            # wait for. If it still runs 10 s on, it waits for a job that will never change.
            deadline = time.monotonic() + 240
            while "SLURM status is: 'TIMEOUT'" not in log.read_text():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"no job timed out:\n{log.read_text()}"
                time.sleep(1)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                interrupted = True
                stop(process)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    return FailedInvocation(
        project, process.returncode, log.read_text(), cancelled, interrupted, raw_before
    )


def reported_job_status(output: str) -> dict[str, str]:
    """SLURM job id -> status, from the plugin's failure reports."""
    return dict(re.findall(r"SLURM-job '(\d+)' failed, SLURM status is: '([A-Z_]+)'", output))


def test_timeout_is_reported(failed_invocation: FailedInvocation) -> None:
    output = failed_invocation.output
    assert failed_invocation.returncode != 0, output
    statuses = reported_job_status(output)
    timed_out = [job for job, status in statuses.items() if status == "TIMEOUT"]
    assert len(timed_out) == 1, output
    assert sacct_record(timed_out[0], ("State",)) == {"State": "TIMEOUT"}
    assert set(statuses) <= {*timed_out, failed_invocation.cancelled_job}, output


@pytest.mark.xfail(
    strict=True,
    reason="snakemake-executor-plugin-slurm 2.8.0 compares sacct's state 'CANCELLED by <uid>' "
    "with 'CANCELLED', takes the job for running and waits forever"
    " (README.md#running-on-a-cluster)",
)
def test_cancelled_job_is_reported(failed_invocation: FailedInvocation) -> None:
    assert sacct_record(failed_invocation.cancelled_job, ("State",))["State"].startswith(
        "CANCELLED"
    )
    assert not failed_invocation.interrupted, "Snakemake kept waiting for the cancelled job"
    statuses = reported_job_status(failed_invocation.output)
    assert statuses.get(failed_invocation.cancelled_job) == "CANCELLED"


def test_other_runs_are_intact(failed_invocation: FailedInvocation) -> None:
    after = raw_files(failed_invocation.project)
    for path, fingerprint in failed_invocation.raw_before.items():
        assert after[path] == fingerprint, f"{path} changed"
    raw = results(failed_invocation.project) / "raw"
    for run_id in NEW_RUNS:
        assert (raw / "openmpi" / DEPLOYMENT / f"run{run_id}.csv").stat().st_size > 0
        assert (raw / "openmpi" / DEPLOYMENT / f"run{run_id}.json").stat().st_size > 0
        assert not list((raw / "mpich" / DEPLOYMENT).glob(f"run{run_id}.*"))


def test_next_invocation_runs_only_missing_runs(failed_invocation: FailedInvocation) -> None:
    project = failed_invocation.project
    write_config(project, extended_campaign(stall_mpich=False))
    before = raw_files(project)

    plan = snakemake(project, *SLURM_PROFILE_ARGS, "-n")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    summary = plan.stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", summary, flags=re.MULTILINE))
    assert jobs == {
        "run_mpich": "2",
        "aggregate": "1",
        "check_guidelines": "1",
        "plot": "1",
        "all": "1",
        "total": "6",
    }, summary

    missing = [f"results/{CAMPAIGN}/raw/mpich/{DEPLOYMENT}/run{run_id}.csv" for run_id in NEW_RUNS]
    rerun = snakemake(project, *SLURM_PROFILE_ARGS, *missing)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    after = raw_files(project)
    assert {path: after[path] for path in before} == before
    assert set(after) - set(before) == {
        results(project) / "raw" / "mpich" / DEPLOYMENT / f"run{run_id}.{suffix}"
        for run_id in NEW_RUNS
        for suffix in ("csv", "json")
    }
