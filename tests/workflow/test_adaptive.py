"""An adaptive campaign with real ranks at tiny scale: rounds happen, each later round measures
only the experiments its plan names, a restart after a kill re-measures nothing finished, and a
changed analysis option re-decides from the runs already measured."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from mpiguide.core.paths import (
    CAMPAIGN_COST_CSV,
    COST_CSV,
    DECIDED_WITH_JSON,
    SUMMARY_CSV,
    TESTS_CSV,
)
from workflow_project import (
    SNAKEMAKE,
    TINY_CAMPAIGN,
    new_project,
    read_config,
    scheduled_jobs,
    snakemake,
    snakemake_env,
    write_config,
)

pytestmark = pytest.mark.workflow

CAMPAIGN = copy.deepcopy(TINY_CAMPAIGN)
CAMPAIGN["campaign"] = "adaptive"
CAMPAIGN["mpi"] = {"openmpi": CAMPAIGN["mpi"]["openmpi"]}
CAMPAIGN["runs"] = {"min": 2, "max": 6, "step": 2}
CAMPAIGN["experiments"][0]["msg_size"] = [8, 64, 1024, 8192]
CAMPAIGN["experiments"][0]["reorder"] = [0]
# p_thres 0.5 and v_thres 1.0 decide about a test in three at each look: some rounds remain.
RESULTS = Path("results") / CAMPAIGN["campaign"]
# The tables the rounds decide and what they spent, not the plots and report tables: the
# rounds are what is tested here.
TARGETS = [
    str(RESULTS / "guidelines" / name)
    for name in (TESTS_CSV, SUMMARY_CSV, DECIDED_WITH_JSON, COST_CSV, CAMPAIGN_COST_CSV)
]


def exp_ids(csv: Path) -> list[int]:
    """The experiments of a kernel input (an interleaved one has a row per chunk)."""
    return sorted(set(pd.read_csv(csv)["exp_id"].tolist()))


def finished_runs(project: Path) -> dict[str, int]:
    """Every raw run with its provenance beside it, and its modification time."""
    raw = project / RESULTS / "raw"
    return {
        str(csv.relative_to(raw)): csv.stat().st_mtime_ns
        for csv in sorted(raw.rglob("run*.csv"))
        if csv.with_suffix(".json").is_file()
    }


def scheduled_outputs(project: Path) -> set[str]:
    """The output files of every job `snakemake -n` lists."""
    result = snakemake(project, "--profile", "profiles/local", "-n", *TARGETS)
    lines = re.findall(r"^\s+output: (.+)$", result.stdout + result.stderr, re.MULTILINE)
    return {path.strip() for line in lines for path in line.split(",")}


def wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.is_file():
        assert process.poll() is None, f"snakemake ended before {path} was written"
        assert time.monotonic() < deadline, f"no {path} after {timeout} s"
        time.sleep(0.2)


def test_rounds_measure_open_tests_only_and_resume_without_remeasuring(tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", CAMPAIGN)
    # Interrupted as soon as round 0 is planned: the first round's runs are finished.
    process = subprocess.Popen(
        [str(SNAKEMAKE), "--profile", "profiles/local", "--cores", "2", *TARGETS],
        cwd=project, env=snakemake_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        # The next round's first input: its plan is written and taken into the DAG.
        wait_for(project / RESULTS / "inputs" / "openmpi" / "1x2" / "run02.csv", process)
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    plan = json.loads((project / RESULTS / "rounds" / "round00.json").read_text())
    # Runs whose files exist but whose jobs the kill interrupted are measured again.
    rerun = scheduled_outputs(project)
    before = {name: mtime for name, mtime in finished_runs(project).items()
              if str(RESULTS / "raw" / name) not in rerun}  # fmt: skip
    assert {f"openmpi/1x2/run{run:02d}.csv" for run in range(2)} <= set(before)

    # A dry run lists the next round's launches that are not finished.
    jobs = scheduled_jobs(project, *TARGETS)
    if not plan["done"]:
        planned = [
            f"{item['mpi']}/{item['nodes']}x{item['ppn']}/run{run:02d}.csv"
            for item in plan["measure"]
            for run in range(*plan["next_runs"])
        ]
        assert jobs.get("run_openmpi", 0) == len(set(planned) - set(before))

    snakemake(project, "--profile", "profiles/local", "--cores", "2", *TARGETS)
    after = finished_runs(project)
    assert {name: after[name] for name in before} == before  # nothing finished measured again

    # Every later round's inputs hold exactly the experiments its plan named.
    rounds = sorted((project / RESULTS / "rounds").glob("round*.json"))
    measured_rounds = 1
    for path in rounds:
        plan = json.loads(path.read_text())
        if plan["done"]:
            break
        measured_rounds += 1
        for item in plan["measure"]:
            for run in range(*plan["next_runs"]):
                run_input = (project / RESULTS / "inputs" / item["mpi"]
                             / f"{item['nodes']}x{item['ppn']}" / f"run{run:02d}.csv")  # fmt: skip
                assert exp_ids(run_input) == item["exp_ids"]
    looks = (2, 4, 6)[:measured_rounds]
    assert len(after) == looks[-1]
    tests = pd.read_csv(project / RESULTS / "guidelines" / "tests.csv")
    assert set(tests["stop"]) <= {"decided", "futile", "max_runs", "open"}
    assert set(tests["look_runs"]) <= set(looks)
    assert (tests.loc[tests["stop"] == "decided", "verdict"] != "undecided").all()
    assert scheduled_jobs(project, *TARGETS) == {}
    # What the campaign spent: every run measured, against 6 of every experiment.
    spent = pd.read_csv(project / RESULTS / "guidelines" / "campaign_cost.csv").set_index("mpi")
    assert spent.loc["all", ["launches", "launches_fixed"]].tolist() == [looks[-1], 6]
    timings = pd.read_parquet(project / RESULTS / "timings.parquet")
    assert spent.loc["all", "kernel_s"] == pytest.approx(timings["time_s"].sum())
    # Each experiment at most max runs: never more than its mean per run times max.
    assert spent.loc["all", "kernel_share"] <= 1 + 1e-9
    cost = pd.read_csv(project / RESULTS / "guidelines" / "cost.csv")
    assert cost["runs_used"].sum() == tests["look_runs"].sum()

    # Changed analysis options re-decide from the runs measured; none is measured again.
    config = read_config(project)
    config["analysis"]["v_thres"] = 1.2
    write_config(project, config)
    snakemake(project, "--profile", "profiles/local", "--cores", "2", *TARGETS)
    again = finished_runs(project)
    assert {name: again[name] for name in after} == after
    record = json.loads((project / RESULTS / "guidelines" / "decided_with.json").read_text())
    assert record["analysis"]["v_thres"] == 1.2
    assert record["looks"] == [2, 4, 6]


def test_adaptive_workflow_lint_is_clean(tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", CAMPAIGN)
    result = snakemake(project, "--lint")
    assert "Lints for" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_blocked_rounds_launch_every_entry_on_the_deployments_needs(tmp_path: Path) -> None:
    campaign = copy.deepcopy(TINY_CAMPAIGN)
    campaign.update(campaign="blocked", runs={"min": 2, "max": 4, "step": 2}, blocking="run")
    campaign["experiments"][0]["reorder"] = [0]
    across = {"id": "ACROSS", "source": "test", "text": "mpich is not slower than openmpi",
              "relation": "le", "lhs": {"mpi": "mpich"}, "rhs": {"mpi": "openmpi"}}  # fmt: skip
    campaign["guidelines"] = ["GL4", across]
    project = new_project(tmp_path / "project", campaign)
    results = project / "results" / "blocked"
    snakemake(project, "--profile", "profiles/local", "--cores", "2",
              str(results.relative_to(project) / "guidelines" / TESTS_CSV))  # fmt: skip
    plan = json.loads((results / "rounds" / "round00.json").read_text())
    runs = range(4) if not plan["done"] else range(2)
    for run in runs:
        assert (results / "blocks" / "1x2" / f"run{run:02d}.json").is_file()
    if not plan["done"]:
        assert {item["mpi"] for item in plan["measure"]} == {"openmpi", "mpich"}
        (needs,) = {tuple(item["exp_ids"]) for item in plan["measure"]}
        for mpi in ("openmpi", "mpich"):
            for run in range(*plan["next_runs"]):
                assert exp_ids(results / "inputs" / mpi / "1x2" / f"run{run:02d}.csv") == list(
                    needs
                )
    tests = pd.read_csv(results / "guidelines" / "tests.csv")
    across_tests = tests[tests["guideline"] == "ACROSS"]
    assert set(across_tests["test"]) <= {"block_signed_rank", "welch_t"}
