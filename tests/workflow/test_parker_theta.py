"""config/campaigns/parker-theta.yaml and parker-theta-4096.yaml: validate and plan at the
published scale, and reduced local-scale runs (p = 2, 4 on this machine) fit the latency models
(eq. 1-4) and write the variability tables."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from workflow_project import REPO, new_project, scheduled_jobs, snakemake, validate_campaign

pytestmark = pytest.mark.workflow

NAME = "parker-theta"
CAMPAIGN = REPO / "config" / "campaigns" / f"{NAME}.yaml"
BCAST_4096 = REPO / "config" / "campaigns" / "parker-theta-4096.yaml"


def project_with(root: Path, config: dict[str, Any], name: str = NAME) -> Path:
    project = new_project(root, config)
    (project / "config" / "campaigns").mkdir()
    (project / "config" / "campaigns" / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return project


def test_blocks_are_the_papers_figures() -> None:
    """Figure 12 (Gather, Allgather, Reduce, Allreduce at 1 MB on every node count), eq. 1 on a
    one-way send fitted as hockney, Table 4's Allgather against the Alltoall emulation, and
    Figure 7's 4096-node Bcast in the companion campaign."""
    config = yaml.safe_load(CAMPAIGN.read_text())
    blocks = {str(block["op"]): block for block in config["experiments"]}
    figure_12 = blocks[str(["gather", "allgather", "reduce", "allreduce"])]
    assert figure_12["msg_size"] == 1000000 and "where" not in figure_12
    assert blocks["send"]["msg_size"][0] == 4 and blocks["send"]["msg_size"][-1] == 2**20
    assert {"model": "hockney", "ops": ["send"]} in config["models"]
    assert {"PARKER-SCALING", "PARKER-ALLGATHER-ALLTOALL"} <= set(config["guidelines"])
    assert any("allgather_as_alltoall" in block["op"] for block in config["experiments"])
    for scale in ("paper", "local"):
        validate_campaign(CAMPAIGN, scale)
        validate_campaign(BCAST_4096, scale)
    bcast = yaml.safe_load(BCAST_4096.read_text())
    assert bcast["deployments"] == [{"nodes": 4096, "ppn": 1}]
    assert [block["op"] for block in bcast["experiments"]] == ["bcast"]
    assert bcast["experiments"][0]["msg_size"] == config["experiments"][1]["msg_size"]


def test_bcast_4096_plans_and_runs_at_local_scale(tmp_path: Path) -> None:
    config = yaml.safe_load(BCAST_4096.read_text())
    name = config["campaign"]
    project = project_with(tmp_path / "project", config, name)
    campaign = f"config/campaigns/{name}.yaml"
    jobs = scheduled_jobs(project, "--configfile", campaign)
    assert jobs["run_cray-mpich"] == config["runs"] and jobs["fit_models"] == 1
    config["local"].update(runs=2, nrep=5)
    (project / campaign).write_text(yaml.safe_dump(config))
    # The fit only: the guideline tables and plots are other tests' to check.
    snakemake(project, f"results/{name}-local/models/models.csv", "--profile", "profiles/local",
              "--cores", "2", "--configfile", campaign, "--config", "scale=local")  # fmt: skip
    models = pd.read_csv(project / "results" / f"{name}-local" / "models" / "models.csv")
    assert set(models["model"]) == {"parker-bcast"}


def test_published_scale_plans_every_node_count_and_the_fit(tmp_path: Path) -> None:
    config = yaml.safe_load(CAMPAIGN.read_text())
    project = project_with(tmp_path / "project", config)
    jobs = scheduled_jobs(project, "--configfile", f"config/campaigns/{NAME}.yaml")
    assert jobs["run_cray-mpich"] == config["runs"] * 8  # 16, 32, ..., 2048 nodes
    assert jobs["fit_models"] == 1 and jobs["analyse"] == 1  # analyse: variability's too


def reduced_local() -> dict[str, Any]:
    """The local scale, shorter: 2 runs of 5 repetitions, two sizes and Figure 12's 1 MB, without
    the 8 MB block."""
    config = copy.deepcopy(yaml.safe_load(CAMPAIGN.read_text()))
    config["experiments"] = [b for b in config["experiments"] if b.get("dtype") != "double"]
    config["analysis"] = {"varied": "nprocs", "p_thres": 0.5, "v_thres": 1.0}
    config["local"].update(runs=2, nrep=5, restrict={"msg_size": [4, 16384, 1000000]})
    return config


def test_local_scale_fits_the_models(tmp_path: Path) -> None:
    project = project_with(tmp_path / "project", reduced_local())
    campaign = f"config/campaigns/{NAME}.yaml"
    # What is checked below, not the plots and report tables of the guidelines.
    targets = [f"results/{NAME}-local/{path}" for path in
               ("models/models.csv", "guidelines/tests.csv", "variability/runs.csv")]  # fmt: skip
    snakemake(project, *targets, "--profile", "profiles/local", "--cores", "2",
              "--configfile", campaign, "--config", "scale=local")  # fmt: skip
    results = project / "results" / f"{NAME}-local"
    models = pd.read_csv(results / "models" / "models.csv")
    assert models.groupby("model")["parameter"].apply(list).to_dict() == {
        "hockney": ["alpha", "beta"],
        "parker-allreduce": ["gamma", "delta", "alpha", "beta"],
        "parker-barrier": ["alpha", "beta"],
        "parker-bcast": ["alpha", "beta"],
    }
    assert (models["ci_low"] <= models["estimate"]).all()
    assert (models["estimate"] <= models["ci_high"]).all()
    residuals = pd.read_csv(results / "models" / "residuals.csv")
    assert set(residuals["nprocs"]) == {2, 4}
    assert len(list((results / "models" / "plots").glob("*.png"))) == 4
    tests = pd.read_csv(results / "guidelines" / "tests.csv", dtype=str)
    scaling = tests.loc[tests["guideline"] == "PARKER-SCALING"]
    assert set(scaling["nprocs"]) == {"2|4"}
    # Figure 12: Gather and Allgather at 1 MB along the node count
    at_1mb = scaling.loc[scaling["msg_size"] == "1000000", "op"]
    assert {"gather", "allgather"} <= set(at_1mb)
    runs = pd.read_csv(results / "variability" / "runs.csv")
    assert len(runs) == 2 * 2  # runs x deployments
