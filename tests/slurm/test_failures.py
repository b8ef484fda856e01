"""Run jobs that SLURM ends: one cancelled with scancel, one killed at its time limit. Snakemake
reports both, every other run's output is intact, and the next invocation runs only the runs
that are missing. The cancelled job is reported only when the plugin polls squeue: with sacct
(the slurmdbd path) it is not, see test_cancelled_job_is_reported.

Two Snakemake invocations run side by side, each in its own copy of the package fixture's
project, one per status command (`--slurm-status-command`; the profile sets squeue, the sacct
invocation is also the failure tests' slurmdbd path):
- sacct: the campaign grows from 3 to 5 runs per library; one new MPICH run is cancelled, the
  other reaches its 1-minute limit;
- squeue: the campaign grows to 4 runs; the new MPICH run is cancelled (done while the sacct
  invocation waits for its time limit, so it costs no extra wall time).
MPICH's new runs start their step through stall_step.sh (an `srun --prolog`), so they are still
running when the test cancels them or their limit comes; Open MPI's new runs finish.
"""

from __future__ import annotations

import copy
import hashlib
import re
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
    RUNS,
    SLURM_CAMPAIGN,
    SLURM_PROFILE_ARGS,
    SNAKEMAKE,
    results,
    run,
    sacct_record,
    slurm_env,
    snakemake,
)

from workflow_project import ANALYSIS_JOBS, copy_project, write_config

pytestmark = pytest.mark.slurm

# The runs each invocation adds; the first of them is cancelled, a second one times out.
NEW_RUNS = {"sacct": ("03", "04"), "squeue": ("03",)}
STATUS_COMMANDS = tuple(NEW_RUNS)
MPICH_SRUN = SLURM_CAMPAIGN["mpi"]["mpich"]["srun"]


@dataclass(frozen=True)
class FailedInvocation:
    status_command: str
    new_runs: tuple[str, ...]
    project: Path
    returncode: int
    output: str
    cancelled_job: str
    # Snakemake was still waiting for the cancelled job and had to be interrupted.
    interrupted: bool
    # sha256 and mtime of every raw file that existed before the failing invocation.
    raw_before: dict[Path, tuple[str, int]]


@dataclass
class Invocation:
    """A failing invocation while it runs."""

    status_command: str
    project: Path
    raw_before: dict[Path, tuple[str, int]]
    process: subprocess.Popen[str]
    log: Path
    cancelled_job: str = ""
    interrupted: bool = False

    def output(self) -> str:
        return self.log.read_text()

    def wait(self, timeout: float) -> None:
        """Wait for Snakemake to end by itself; interrupt it (as a user would) if it does not."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.interrupted = True
            stop(self.process)

    def result(self) -> FailedInvocation:
        return FailedInvocation(
            self.status_command,
            NEW_RUNS[self.status_command],
            self.project,
            self.process.returncode,
            self.output(),
            self.cancelled_job,
            self.interrupted,
            self.raw_before,
        )


def raw_files(project: Path) -> dict[Path, tuple[str, int]]:
    return {
        path: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted((results(project) / "raw").rglob("*"))
        if path.is_file()
    }


def extended_campaign(new_runs: tuple[str, ...], stall_mpich: bool) -> dict:
    config = copy.deepcopy(SLURM_CAMPAIGN)
    config["runs"] = len(RUNS) + len(new_runs)
    if stall_mpich:
        config["mpi"]["mpich"]["srun"] = f"{MPICH_SRUN} --prolog={HERE / 'stall_step.sh'}"
    return config


def start(
    slurm_campaign: Path, tmp_path_factory: pytest.TempPathFactory, status_command: str
) -> Invocation:
    """Snakemake on a copy of the campaign, extended by this status command's new runs."""
    project = copy_project(
        slurm_campaign, tmp_path_factory.mktemp(f"failures-{status_command}") / "project"
    )
    raw_before = raw_files(project)
    write_config(project, extended_campaign(NEW_RUNS[status_command], stall_mpich=True))
    log = project / "snakemake.out"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                str(SNAKEMAKE),
                *SLURM_PROFILE_ARGS,
                "--slurm-status-command",
                status_command,
                "--set-resources",
                "run_mpich:runtime=1",
            ],
            cwd=project,
            env=slurm_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    return Invocation(status_command, project, raw_before, process, log)


def running_job(invocation: Invocation, comment: str, timeout: float = 120) -> str:
    """The id of this invocation's job with this plugin comment, once SLURM reports it running
    (both invocations submit jobs with the same comments; their working directories differ)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert invocation.process.poll() is None, (
            f"snakemake ended before the job ran:\n{invocation.output()}"
        )
        for line in run("squeue", "-h", "-t", "RUNNING", "-o", "%i %k %Z").splitlines():
            job_id, job_comment, workdir = line.split(" ", 2)
            if job_comment == comment and Path(workdir) == invocation.project:
                return job_id
        time.sleep(1)
    raise AssertionError(f"no running job with comment {comment} in {invocation.project}")


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
def failed_invocations(
    slurm_campaign: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, FailedInvocation]:
    invocations = {
        command: start(slurm_campaign, tmp_path_factory, command) for command in STATUS_COMMANDS
    }
    sacct, squeue = invocations["sacct"], invocations["squeue"]
    nodes, ppn = DEPLOYMENT.split("x")
    try:
        for invocation in invocations.values():
            cancelled_run = NEW_RUNS[invocation.status_command][0]
            invocation.cancelled_job = running_job(
                invocation, f"rule_run_mpich_wildcards_{nodes}_{ppn}_{cancelled_run}"
            )
            run("scancel", invocation.cancelled_job)
        # squeue shows CANCELLED within a status check (1 s here) and the invocation's other
        # new job, Open MPI's, takes seconds: 60 s is ample.
        squeue.wait(timeout=60)
        # The time limit ends the other job after 60-90 s, long after sacct has shown the
        # cancelled job's final state: with both reported, Snakemake has nothing left to
        # wait for. If it still runs 10 s on, it waits for a job that will never change.
        deadline = time.monotonic() + 240
        while "SLURM status is: 'TIMEOUT'" not in sacct.output():
            assert sacct.process.poll() is None, sacct.output()
            assert time.monotonic() < deadline, f"no job timed out:\n{sacct.output()}"
            time.sleep(1)
        sacct.wait(timeout=10)
    finally:
        for invocation in invocations.values():
            if invocation.process.poll() is None:
                invocation.process.kill()
                invocation.process.wait()
    return {command: invocation.result() for command, invocation in invocations.items()}


def reported_job_status(output: str) -> dict[str, str]:
    """SLURM job id -> status, from the plugin's failure reports."""
    return dict(re.findall(r"SLURM-job '(\d+)' failed, SLURM status is: '([A-Z_]+)'", output))


def test_timeout_is_reported(failed_invocations: dict[str, FailedInvocation]) -> None:
    failed_invocation = failed_invocations["sacct"]
    output = failed_invocation.output
    assert failed_invocation.returncode != 0, output
    statuses = reported_job_status(output)
    timed_out = [job for job, status in statuses.items() if status == "TIMEOUT"]
    assert len(timed_out) == 1, output
    assert sacct_record(timed_out[0], ("State",)) == {"State": "TIMEOUT"}
    assert set(statuses) <= {*timed_out, failed_invocation.cancelled_job}, output


@pytest.mark.parametrize(
    "status_command",
    [
        pytest.param(
            "sacct",
            marks=pytest.mark.xfail(
                strict=True,
                reason="snakemake-executor-plugin-slurm 2.8.0 compares sacct's state "
                "'CANCELLED by <uid>' with 'CANCELLED', takes the job for running and waits "
                "forever (docs/cluster.md#job-states-squeue-or-sacct)",
            ),
        ),
        "squeue",
    ],
)
def test_cancelled_job_is_reported(
    failed_invocations: dict[str, FailedInvocation], status_command: str
) -> None:
    failed_invocation = failed_invocations[status_command]
    output = failed_invocation.output
    assert sacct_record(failed_invocation.cancelled_job, ("State",))["State"].startswith(
        "CANCELLED"
    )
    assert not failed_invocation.interrupted, "Snakemake kept waiting for the cancelled job"
    assert failed_invocation.returncode != 0, output
    # The plugin used the status command asked for (it falls back to sacct where MinJobAge is
    # below 3 x slurm-init-seconds-before-status-checks).
    assert "Falling back to 'sacct'" not in output, output
    statuses = reported_job_status(output)
    assert statuses.get(failed_invocation.cancelled_job) == "CANCELLED", output


@pytest.mark.parametrize("status_command", STATUS_COMMANDS)
def test_other_runs_are_intact(
    failed_invocations: dict[str, FailedInvocation], status_command: str
) -> None:
    failed_invocation = failed_invocations[status_command]
    after = raw_files(failed_invocation.project)
    for path, fingerprint in failed_invocation.raw_before.items():
        assert after[path] == fingerprint, f"{path} changed"
    raw = results(failed_invocation.project) / "raw"
    for run_id in failed_invocation.new_runs:
        assert (raw / "openmpi" / DEPLOYMENT / f"run{run_id}.csv").stat().st_size > 0
        assert (raw / "openmpi" / DEPLOYMENT / f"run{run_id}.json").stat().st_size > 0
        assert not list((raw / "mpich" / DEPLOYMENT).glob(f"run{run_id}.*"))


@pytest.mark.parametrize("status_command", STATUS_COMMANDS)
def test_next_invocation_runs_only_missing_runs(
    failed_invocations: dict[str, FailedInvocation], status_command: str
) -> None:
    failed_invocation = failed_invocations[status_command]
    project = failed_invocation.project
    new_runs = failed_invocation.new_runs
    write_config(project, extended_campaign(new_runs, stall_mpich=False))
    before = raw_files(project)

    plan = snakemake(project, *SLURM_PROFILE_ARGS, "-n")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    summary = plan.stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", summary, flags=re.MULTILINE))
    # The aggregate never ran: the record of `runs` waits for it, forcing it again.
    expected = {"run_mpich": len(new_runs), **ANALYSIS_JOBS, "options_record": 1}
    assert {job: int(count) for job, count in jobs.items()} == {
        **expected,
        "total": sum(expected.values()),
    }, summary

    if failed_invocation.interrupted:
        # A second Ctrl-C can end Snakemake before it removes its lock on the working
        # directory (it did under load); Snakemake then names the user's next step, --unlock.
        unlock = snakemake(project, *SLURM_PROFILE_ARGS, "--unlock")
        assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    missing = [f"results/{CAMPAIGN}/raw/mpich/{DEPLOYMENT}/run{run_id}.csv" for run_id in new_runs]
    rerun = snakemake(project, *SLURM_PROFILE_ARGS, *missing)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    after = raw_files(project)
    assert {path: after[path] for path in before} == before
    assert set(after) - set(before) == {
        results(project) / "raw" / "mpich" / DEPLOYMENT / f"run{run_id}.{suffix}"
        for run_id in new_runs
        for suffix in ("csv", "json")
    }
