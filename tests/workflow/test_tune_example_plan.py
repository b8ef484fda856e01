"""config/campaigns/tune-example.yaml planned, not run (`snakemake -n`): its entry's algorithm sweep
is experiments of that entry, so the target `tune` schedules one entry's launches and `verify`
adds `<entry>.applied` (its settings file) alone: no entry and no launch per algorithm."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workflow_project import REPO, new_project, scheduled_jobs

pytestmark = pytest.mark.workflow

CAMPAIGN = "config/campaigns/tune-example.yaml"
RUNS = 5  # the campaign's runs, at its one deployment


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_project(tmp_path_factory.mktemp("tune-plan") / "project", {})
    (root / CAMPAIGN).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / CAMPAIGN, root / CAMPAIGN)
    return root


def test_tune_runs_one_entry_in_the_campaigns_launches(project: Path) -> None:
    jobs = scheduled_jobs(project, "tune", "--configfile", CAMPAIGN)
    assert jobs == {
        "build_openmpi": 1,
        "grid": 1,
        "inputs": RUNS,
        "run_openmpi": RUNS,
        "aggregate": 1,
        "analyse": 1,
        "tune": 1,
    }


def test_verify_measures_the_chosen_algorithms_in_the_entrys_launches(project: Path) -> None:
    """After `tune` chose ring for Allreduce at 8 B: the verify campaign runs the entry (ring
    beside the library's choice within its launches) and `openmpi.applied` (the entry with the
    rules file in its environment) in the same blocks, on the entry's one kernel build, and
    writes verify.md; no `.tuned` entry, as no libmpiguide-tune file replaces a collective."""
    tuning = project / "results" / "tune-example" / "tuning"
    tuning.mkdir(parents=True)
    (tuning / "algorithms.csv").write_text(
        "mpi,library,op,nodes,ppn,msg_size,algorithm,number,median_s,default_median_s,speedup,"
        "speedup_low,speedup_high,verdict\n"
        "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,2e-5,2.0,1.5,2.5,violated\n"
    )
    # the rules file of that choice (ring, algorithm 4, at 2 ranks from 8 B), as tune writes it
    (tuning / "openmpi.ompi-rules.conf").write_text(
        "1\n2 # allreduce\n2 # communicator sizes\n0 # ranks\n1 # message sizes\n0 0 0 0\n"
        "2 # ranks\n2 # message sizes\n0 0 0 0\n8 4 0 0 # ring\n"
    )
    jobs = scheduled_jobs(project, "verify", "--configfile", CAMPAIGN, "--config", "verify=True")
    assert jobs["run_block"] == RUNS
    assert jobs["inputs"] == 2 * RUNS
    assert jobs["build_openmpi"] == 1
    assert jobs["verify_report"] == 1
    assert "verify_entry" not in jobs
    assert not any(
        rule.startswith(("run_", "build_")) and rule not in ("run_block", "build_openmpi")
        for rule in jobs
    )
