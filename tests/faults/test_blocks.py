"""Faults inside a block (blocking: run): a rank dying in one entry, the block's job stopped
between its entries. Finished launches are never measured again, the missing ones are, and the
analysis knows which launches shared an attempt. Real snakemake and mpirun, 2 ranks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.campaign.blocks import block_order
from workflow_project import ANALYSIS_JOBS, scheduled_jobs, snakemake

from .conftest import (
    CAMPAIGN,
    DEPLOYMENT,
    SLOW_RUNS,
    campaign,
    measuring_ranks,
    start_snakemake,
    wait_until,
)

pytestmark = pytest.mark.workflow

MakeProject = Callable[[dict[str, Any]], Path]
ENTRIES = ("a", "b")


def blocked_campaign() -> dict[str, Any]:
    """Two Open MPI entries, one block (run 0 of 1x2)."""
    config = campaign(SLOW_RUNS)
    entry = config["mpi"]["openmpi"]
    config["mpi"] = {name: dict(entry) for name in ENTRIES}
    config["runs"] = 1
    config["blocking"] = "run"
    return config


def order() -> list[str]:
    config = blocked_campaign()
    return block_order(config["seed"], 1, 2, 0, list(ENTRIES))


def results(project: Path) -> Path:
    return project / "results" / CAMPAIGN


def raw_csv(project: Path, mpi: str) -> Path:
    return results(project) / "raw" / mpi / DEPLOYMENT / "run00.csv"


def stash(project: Path) -> Path:
    return results(project) / "blocks" / DEPLOYMENT / "run00.stash"


def wait_for_entry(
    run: subprocess.Popen[str], project: Path, mpi: str, timeout: float = 120
) -> dict[int, str]:
    """The ranks of `mpi`'s launch, once it measures (conftest.measuring_ranks)."""
    return wait_until(
        lambda: measuring_ranks(run, project, f"/build/{mpi}/"),
        f"the launch of {mpi} measuring",
        timeout,
        while_running=run,
    )


def ranks_of(project: Path) -> list[int]:
    """Live kernel processes of this project, wherever they were reparented."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if argv and argv[0].endswith(b"mpiguide-bench") and cwd == str(project):
            found.append(int(entry.name))
    return found


def finish(project: Path) -> dict[str, Any]:
    """Run the block and the aggregation to the end; the block's record."""
    snakemake(project, "--profile", "profiles/local", "--cores", "2",
              f"results/{CAMPAIGN}/medians.parquet")  # fmt: skip
    return json.loads((results(project) / "blocks" / DEPLOYMENT / "run00.json").read_text())


def attempts_in_medians(project: Path) -> dict[str, int]:
    medians = pd.read_parquet(results(project) / "medians.parquet")
    assert set(medians["block"].astype(str)) == {f"{DEPLOYMENT}/run00"}
    return medians.groupby("mpi", observed=True)["block_attempt"].max().to_dict()


def test_a_rank_dying_in_one_entry_re_measures_only_that_entry(
    make_project: MakeProject, running: list[subprocess.Popen[str]]
) -> None:
    first, second = order()
    project = make_project(blocked_campaign())
    run = start_snakemake(project)
    running.append(run)
    ranks = wait_for_entry(run, project, first)

    os.kill(next(iter(ranks)), signal.SIGKILL)
    output, _ = run.communicate(timeout=300)

    assert run.returncode != 0, output
    assert (
        f"block {DEPLOYMENT}/run00: {first} exited with status"
        in (results(project) / "logs" / "blocks" / DEPLOYMENT / "run00.log").read_text()
    )
    # The other entry still ran in this attempt; its launch waits in the stash.
    kept = (stash(project) / f"{second}.csv").read_bytes()
    assert not (stash(project) / f"{first}.csv").exists()
    # The records of what the campaign analyses wait for it (campaign, analysis, plots, fail_on).
    assert scheduled_jobs(project) == {"run_block": 1, **ANALYSIS_JOBS, "options_record": 3}

    record = finish(project)
    assert raw_csv(project, second).read_bytes() == kept
    attempts = {name: launch["attempt"] for name, launch in record["launches"].items()}
    assert attempts == {second: 1, first: 2}
    assert attempts_in_medians(project) == attempts
    assert not stash(project).exists()


def test_a_block_stopped_between_entries_keeps_the_finished_one(
    make_project: MakeProject, running: list[subprocess.Popen[str]]
) -> None:
    first, second = order()
    project = make_project(blocked_campaign())
    run = start_snakemake(project)
    running.append(run)
    wait_for_entry(run, project, second)  # the first entry has finished

    os.killpg(run.pid, signal.SIGTERM)
    run.communicate(timeout=300)
    wait_until(lambda: not ranks_of(project), "the stopped block's ranks exiting", 60)
    # Stopped, not finished: a rank that outlived the block would have measured to the end
    # and committed its output (the kernel renames OUTPUT.csv.tmp-<pid> as it exits).
    assert not raw_csv(project, second).exists(), "a rank outlived its stopped block"

    kept = (stash(project) / f"{first}.csv").read_bytes()
    record = finish(project)
    assert raw_csv(project, first).read_bytes() == kept
    attempts = {name: launch["attempt"] for name, launch in record["launches"].items()}
    assert attempts == {first: 1, second: 2}
    assert attempts_in_medians(project) == attempts
