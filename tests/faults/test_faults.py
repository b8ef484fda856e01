"""Faults during a campaign: a campaign that runs for days must never lose or
silently corrupt measured data. Real snakemake, local profile, real mpirun, 2 ranks."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mpiguide.core.columns import RAW_COLUMNS
from mpiguide.store import provenance as run_provenance
from workflow_project import ANALYSIS_JOBS, scheduled_jobs, snakemake

from .conftest import (
    CAMPAIGN,
    DEPLOYMENT,
    RUNS,
    SLOW_RUNS,
    campaign,
    measuring_ranks,
    start_snakemake,
    wait_until,
)

pytestmark = pytest.mark.workflow

MakeProject = Callable[[dict[str, Any]], Path]


def raw_dir(project: Path) -> Path:
    return project / "results" / CAMPAIGN / "raw" / "openmpi" / DEPLOYMENT


def rows_of(raw_csv: Path) -> int:
    with raw_csv.open(newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == list(RAW_COLUMNS)
        return sum(1 for _ in reader)


def wait_for_ranks(
    snakemake_run: subprocess.Popen[str], project: Path, timeout: float = 120
) -> dict[int, str]:
    """The kernel ranks of the first run, once it measures (conftest.measuring_ranks)."""
    return wait_until(
        lambda: measuring_ranks(snakemake_run, project),
        "a kernel run measuring",
        timeout,
        while_running=snakemake_run,
    )


def start_measuring(
    make_project: MakeProject, running: list[subprocess.Popen[str]]
) -> tuple[Path, subprocess.Popen[str], dict[int, str]]:
    """A campaign of slow runs started in a fresh project; returns once a run is measuring,
    with the project, the snakemake process and the ranks of that run."""
    project = make_project(campaign(SLOW_RUNS))
    first = start_snakemake(project)
    running.append(first)
    return project, first, wait_for_ranks(first, project)


def test_killed_rank_fails_only_its_run(
    make_project: MakeProject, running: list[subprocess.Popen[str]]
) -> None:
    project, first, ranks = start_measuring(make_project, running)
    killed_run = next(word for word in next(iter(ranks.values())).split() if "inputs" in word)
    killed_name = Path(killed_run).name  # run<NN>.csv

    os.kill(next(iter(ranks)), signal.SIGKILL)
    output, _ = first.communicate(timeout=300)

    assert first.returncode != 0, output
    names = sorted(p.name for p in raw_dir(project).iterdir())
    assert killed_name not in names, names
    assert Path(killed_name).with_suffix(".json").name not in names
    survivors = [f"run{run:02d}.csv" for run in range(RUNS) if f"run{run:02d}.csv" != killed_name]
    for name in survivors:  # complete: as many rows as the provenance says were measured
        provenance = json.loads((raw_dir(project) / name).with_suffix(".json").read_text())
        reps = sum(e[run_provenance.PROV_REPS] for e in provenance[run_provenance.PROV_EXPERIMENTS])
        assert rows_of(raw_dir(project) / name) == reps > 0
    # The next invocation measures only the lost run, then analyses; the records of what it
    # analyses wait for that (campaign, analysis, plots, fail_on).
    assert scheduled_jobs(project) == {"run_openmpi": 1, **ANALYSIS_JOBS, "options_record": 3}


def test_second_snakemake_is_refused_while_one_runs(
    make_project: MakeProject, running: list[subprocess.Popen[str]]
) -> None:
    project, first, _ = start_measuring(make_project, running)

    second = snakemake(project, "--profile", "profiles/local", "--cores", "1", check=False)

    assert second.returncode != 0
    assert "LockException" in second.stdout + second.stderr
    output, _ = first.communicate(timeout=300)
    assert first.returncode == 0, output
    assert sorted(p.name for p in raw_dir(project).glob("*.csv")) == [
        f"run{run:02d}.csv" for run in range(RUNS)
    ]
    assert scheduled_jobs(project) == {}


FAST_RUNS = [{"op": ["allreduce", "bcast"], "msg_size": [8, 1024], "nrep": [5]}]


def test_truncated_raw_csv_stops_the_aggregate_naming_it(make_project: MakeProject) -> None:
    project = make_project(campaign(FAST_RUNS))
    snakemake(project, "--profile", "profiles/local", "--cores", "2")
    damaged = raw_dir(project) / "run01.csv"
    lines = damaged.read_text().splitlines(keepends=True)
    damaged.write_text("".join(lines[:-3]))  # a copy cut short, newer than the outputs

    result = snakemake(project, "--profile", "profiles/local", "--cores", "2", check=False)

    assert result.returncode != 0
    log = (project / "results" / CAMPAIGN / "logs" / "aggregate.log").read_text()
    assert f"raw/openmpi/{DEPLOYMENT}/run01.csv" in log
    assert "Traceback" not in log
    # Nothing downstream claims to be up to date with the damaged file.
    assert not (project / "results" / CAMPAIGN / "medians.parquet").exists()


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[None]:
    """A small tmpfs mounted at `where` for the block; skips the test if mounting is denied."""
    where.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(where)], check=True)


# 8 experiments x 400 repetitions: about 70 kB of raw CSV per run; a 160 kB file system holds
# two runs and fills up during the third.
FILLING_RUNS = [
    {"op": ["allreduce", "bcast", "allgather", "alltoall"], "msg_size": [8, 64], "nrep": [400]}
]


def test_full_output_directory_leaves_no_file_that_looks_complete(
    make_project: MakeProject,
) -> None:
    project = make_project(campaign(FILLING_RUNS))
    raw = raw_dir(project)
    with tmpfs(raw, "160k"):
        result = snakemake(project, "--profile", "profiles/local", "--cores", "2", check=False)
        names = sorted(p.name for p in raw.iterdir())
        complete = {name: rows_of(raw / name) for name in names if name.endswith(".csv")}

    assert result.returncode != 0
    logs = project / "results" / CAMPAIGN / "logs" / "run" / "openmpi" / DEPLOYMENT
    errors = "".join(log.read_text() for log in logs.glob("*.log"))
    assert "No space left on device" in errors
    # Every file under a final name is whole: the runs before the disk filled up, not the one
    # it filled up in.
    assert all(rows == 8 * 400 for rows in complete.values()), complete
    assert 1 <= len(complete) < RUNS, names
    # Nor does the failed run leave its temporary files to fill the disk further.
    assert [name for name in names if ".tmp-" in name] == []


def test_read_only_output_directory_is_a_clear_error(make_project: MakeProject) -> None:
    project = make_project(campaign(FAST_RUNS))
    raw = raw_dir(project)
    with tmpfs(raw, "1m"):
        subprocess.run(["mount", "-o", "remount,ro", str(raw)], check=True)
        result = snakemake(project, "--profile", "profiles/local", "--cores", "2", check=False)
        names = sorted(p.name for p in raw.iterdir())

    assert result.returncode != 0
    # Snakemake, clearing the outputs before a job, or else the kernel, opening its output,
    # names the error and the file.
    logs = project / "results" / CAMPAIGN / "logs" / "run" / "openmpi" / DEPLOYMENT
    errors = result.stdout + result.stderr + "".join(log.read_text() for log in logs.glob("*.log"))
    raw_path = f"results/{CAMPAIGN}/raw/openmpi/{DEPLOYMENT}/run"
    assert any(
        "Read-only file system" in line and raw_path in line for line in errors.splitlines()
    ), errors
    assert names == []
