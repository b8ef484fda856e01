"""config/campaigns/parker-theta.yaml: validates and plans at the published scale, and a reduced
local-scale run (p = 2, 4 on this machine) fits the latency models and writes the variability
tables."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from workflow_project import REPO, new_project, scheduled_jobs, snakemake

pytestmark = pytest.mark.workflow

NAME = "parker-theta"
CAMPAIGN = REPO / "config" / "campaigns" / f"{NAME}.yaml"


def project_with(root: Path, config: dict[str, Any]) -> Path:
    project = new_project(root, config)
    (project / "config" / "campaigns").mkdir()
    (project / "config" / "campaigns" / f"{NAME}.yaml").write_text(yaml.safe_dump(config))
    return project


def test_published_scale_plans_every_node_count_and_the_fit(tmp_path: Path) -> None:
    config = yaml.safe_load(CAMPAIGN.read_text())
    project = project_with(tmp_path / "project", config)
    jobs = scheduled_jobs(project, "--configfile", f"config/campaigns/{NAME}.yaml")
    assert jobs["run_cray-mpich"] == config["runs"] * 8  # 16, 32, ..., 2048 nodes
    assert jobs["fit_models"] == 1 and jobs["variability"] == 1


def reduced_local() -> dict[str, Any]:
    """The local scale, shorter: 2 runs of 5 repetitions, two sizes, without the 8 MB block."""
    config = copy.deepcopy(yaml.safe_load(CAMPAIGN.read_text()))
    config["experiments"] = [b for b in config["experiments"] if b.get("dtype") != "double"]
    config["analysis"] = {"varied": "nprocs", "p_thres": 0.5, "v_thres": 1.0}
    config["local"].update(runs=2, nrep=5, restrict={"msg_size": [4, 16384]})
    return config


def test_local_scale_fits_the_models(tmp_path: Path) -> None:
    project = project_with(tmp_path / "project", reduced_local())
    campaign = f"config/campaigns/{NAME}.yaml"
    snakemake(project, "--profile", "profiles/local", "--cores", "2", "--configfile", campaign,
              "--config", "scale=local")  # fmt: skip
    results = project / "results" / f"{NAME}-local"
    models = pd.read_csv(results / "models" / "models.csv")
    assert models.groupby("model")["parameter"].apply(list).to_dict() == {
        "parker-allreduce": ["gamma", "delta", "alpha", "beta"],
        "parker-barrier": ["alpha", "beta"],
        "parker-bcast": ["alpha", "beta"],
    }
    assert (models["ci_low"] <= models["estimate"]).all()
    assert (models["estimate"] <= models["ci_high"]).all()
    residuals = pd.read_csv(results / "models" / "residuals.csv")
    assert set(residuals["nprocs"]) == {2, 4}
    assert len(list((results / "models" / "plots").glob("*.png"))) == 3
    tests = pd.read_csv(results / "guidelines" / "tests.csv", dtype=str)
    scaling = tests.loc[tests["guideline"] == "PARKER-SCALING"]
    assert set(scaling["nprocs"]) == {"2|4"}
    runs = pd.read_csv(results / "variability" / "runs.csv")
    assert len(runs) == 2 * 2  # runs x deployments
