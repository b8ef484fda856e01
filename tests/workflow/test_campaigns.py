"""The campaigns of config/campaigns/: each validates, each plans with `snakemake -n`, each is
runnable on this machine (small, safe deployments) and says what it replicates; collectives.yaml,
reduced, runs end to end with real MPI. Lübbe 2017's published campaigns (nbhcoll-*, full-*)
are tested in test_lubbe_campaigns.py, manwade.yaml in test_manwade_campaign.py.

Dry-runs happen in a throw-away project whose config/config.yaml is the campaign itself:
`--configfile` is merged into the Snakefile's `configfile:` (config/config.yaml), and the
demo's `mpi:` entries must not leak into a campaign under test.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from workflow_project import REPO, new_project, scheduled_jobs, snakemake

CAMPAIGNS_DIR = REPO / "config" / "campaigns"
CAMPAIGNS = ("collectives", "nodecart")
CORES = 2  # this machine; Open MPI deployments above it must oversubscribe and yield
MPICH_MAX_RANKS = 2
APPROX_IDS = {
    gid
    for gid, entry in yaml.safe_load((REPO / "config" / "guidelines.yaml").read_text()).items()
    if entry["relation"] == "approx"
}


def campaign_path(name: str) -> Path:
    return CAMPAIGNS_DIR / f"{name}.yaml"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load(campaign_path(name).read_text(encoding="utf-8"))


def campaign_project(root: Path, name: str, config: dict[str, Any] | None = None) -> Path:
    """A fresh project running campaign `name` (or `config`, a changed copy of it) as
    config/campaigns/<name>.yaml and as config/config.yaml."""
    project = new_project(root, config or load(name))
    (project / "config" / "campaigns").mkdir()
    if config is None:
        (project / "config" / "campaigns" / f"{name}.yaml").write_bytes(
            campaign_path(name).read_bytes()
        )
    else:
        (project / "config" / "campaigns" / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return project


# --- static: what every campaign file must say and must not do --------------------------------


def test_the_published_campaigns_exist() -> None:
    # Other campaigns (e.g. selftest.yaml) are tested where they are defined.
    assert set(CAMPAIGNS) <= {p.stem for p in CAMPAIGNS_DIR.glob("*.yaml")}


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_header_says_what_was_published_and_how_to_scale_up(name: str) -> None:
    text = campaign_path(name).read_text(encoding="utf-8")
    header = text.split("\ncampaign:", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines() if line.strip())
    assert "Published campaign" in header or "Published campaigns" in header
    assert "Scaling up on a cluster" in header
    assert load(name)["campaign"] == name  # results/<name>/ as the file name says


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_deployments_are_safe_on_this_machine(name: str) -> None:
    """MPICH at most 2 ranks; Open MPI beyond the cores oversubscribes with idle ranks
    yielding; Open MPI may start as root (containers, CI)."""
    config = load(name)
    ranks = max(d["nodes"] * d["ppn"] for d in config["deployments"])
    for entry_name, entry in config["mpi"].items():
        if "mpich" in entry.get("mpicc", ""):
            assert ranks <= MPICH_MAX_RANKS, f"{entry_name}: MPICH with {ranks} ranks"
        if "openmpi" in entry.get("mpicc", ""):
            env = entry.get("env", {})
            assert env.get("OMPI_ALLOW_RUN_AS_ROOT") == "1", entry_name
            assert env.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1", entry_name
            if ranks > CORES:
                assert "--oversubscribe" in entry["launcher"], entry_name
                assert env.get("OMPI_MCA_mpi_yield_when_idle") == "1", entry_name


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_enough_runs_to_reach_the_p_threshold(name: str) -> None:
    """With n runs a side, the smallest rank-sum p-value is 1/C(2n, n) one-sided (twice that
    two-sided): above p_thres no guideline could ever be reported violated."""
    config = load(name)
    p_thres = config.get("analysis", {}).get("p_thres", 0.001)
    approx = any(not isinstance(g, str) and g["relation"] == "approx" for g in config["guidelines"])
    approx = approx or any(isinstance(g, str) and g in APPROX_IDS for g in config["guidelines"])
    smallest = (2 if approx else 1) / math.comb(2 * config["runs"], config["runs"])
    assert smallest <= p_thres, f"runs: {config['runs']} cannot reach p <= {p_thres}"


def test_collectives_cover_sizes_one_to_a_million_with_a_time_budget() -> None:
    for block in load("collectives")["experiments"]:
        assert block["msg_size"] == [10**k for k in range(7)]
        assert block["max_time"] > 0


# --- validation and planning -----------------------------------------------------------------


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_campaign_validates(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mpiguide", "validate", "--config", str(campaign_path(name))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(": ok")


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_campaign_dry_run_plans_every_run(name: str, tmp_path: Path) -> None:
    """`snakemake -n --configfile config/campaigns/<name>.yaml` succeeds and schedules one
    kernel build per mpi entry and one run per (mpi entry, deployment, run)."""
    config = load(name)
    project = campaign_project(tmp_path / "project", name)
    jobs = scheduled_jobs(project, "--configfile", f"config/campaigns/{name}.yaml")
    runs = config["runs"] * len(config["deployments"])
    for entry in config["mpi"]:
        assert jobs.get(f"build_{entry}") == 1, jobs
        assert jobs.get(f"run_{entry}") == runs, jobs
    assert not {rule for rule in jobs if rule.startswith("run_")} - {
        f"run_{entry}" for entry in config["mpi"]
    }
    assert jobs.get("check_guidelines") == 1, jobs


def test_nodecart_runs_pass_node_size_to_the_kernel(tmp_path: Path) -> None:
    """Each nodecart deployment's node_size reaches its runs as `--node-size K`."""
    project = campaign_project(tmp_path / "project", "nodecart")
    result = snakemake(
        project, "--profile", "profiles/local", "-n", "-p",
        "--configfile", "config/campaigns/nodecart.yaml",
    )  # fmt: skip
    output = result.stdout + result.stderr
    commands = [line for line in output.splitlines() if "mpiguide-bench" in line]
    for deployment in load("nodecart")["deployments"]:
        ranks = deployment["nodes"] * deployment["ppn"]
        mine = [c for c in commands if f"--nprocs {ranks} " in c]
        assert mine and all(f"--node-size {deployment['node_size']}" in c for c in mine)


# --- short real runs ---------------------------------------------------------------------------


def reduced(name: str, sizes: list[int]) -> dict[str, Any]:
    """The campaign on 2 ranks, 2 runs of 5 repetitions, a few sizes, loose thresholds."""
    config = load(name)
    config.update(runs=2, nrep=5, deployments=[{"nodes": 1, "ppn": 2}])
    for block in config["experiments"]:
        block["msg_size"] = sizes
    config["analysis"] = {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0}
    return config


def run_end_to_end(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    project = campaign_project(tmp_path / "project", name, config)
    snakemake(
        project,
        "--profile",
        "profiles/local",
        "--cores",
        str(CORES),
        "--configfile",
        f"config/campaigns/{name}.yaml",
    )
    return project / "results" / name


def assert_every_guideline_tested(results: Path, config: dict[str, Any]) -> pd.DataFrame:
    tests = pd.read_csv(results / "guidelines" / "tests.csv")
    selected = {g if isinstance(g, str) else g["id"] for g in config["guidelines"]}
    assert set(tests["guideline"]) == selected
    assert tests["p_value"].between(0, 1).all()
    assert (tests["violation_ratio"] > 0).all()
    for name in ("summary.csv", "summary.md", "slowdown.csv"):
        assert (results / "guidelines" / name).stat().st_size > 0
    return tests


@pytest.mark.workflow
def test_collectives_campaign_runs_end_to_end(tmp_path: Path) -> None:
    """Every collective against every mock-up (hierarchical and lane ones included), two sizes."""
    config = reduced("collectives", [1, 1000])
    results = run_end_to_end(tmp_path, "collectives", config)
    tests = assert_every_guideline_tested(results, config)
    mockups = tests[tests["guideline"].str.startswith("TGT-") & (tests["relation"] == "le")]
    assert (mockups.groupby("guideline").size() >= 2).all()  # both sizes of every mock-up
