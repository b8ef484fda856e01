"""config/campaigns/manwade.yaml: Manwade & Kulkarni 2018 as published (OSU sizes, eq. 3-7 and
Table 1, several P, both libraries), validated and dry-run at the paper's scale; run end to end
at `scale=local`, where it yields their Table 2 layout (guidelines/library_table.*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from workflow_project import (
    REPO,
    new_project,
    run_jobs,
    scheduled_jobs,
    snakemake,
    validate_campaign,
)

CAMPAIGN = REPO / "config" / "campaigns" / "manwade.yaml"
OSU_SIZES = [1024, 1048576]  # their section IV
MK_IDS = [f"MK-EQ{n}" for n in range(3, 8)] + [f"MK-T1-R{n:02d}" for n in range(1, 18)]


def load() -> dict[str, Any]:
    return yaml.safe_load(CAMPAIGN.read_text(encoding="utf-8"))


def project_of(root: Path, config: dict[str, Any] | None = None) -> Path:
    """A project running the campaign file, or `config`, a changed copy of it."""
    project = new_project(root, config or load())
    (project / "config" / "campaigns").mkdir()
    copy = project / "config" / "campaigns" / "manwade.yaml"
    if config is None:
        copy.write_bytes(CAMPAIGN.read_bytes())
    else:
        copy.write_text(yaml.safe_dump(config))
    return project


def test_campaign_follows_the_paper() -> None:
    config = load()
    header = CAMPAIGN.read_text(encoding="utf-8").split("\ncampaign:", 1)[0]
    assert "Published campaign" in header and "Scaling up on a cluster" in header
    assert config["campaign"] == "manwade"
    assert all(block["msg_size"] == OSU_SIZES for block in config["experiments"])
    assert [g for g in config["guidelines"] if g.startswith("MK-")] == MK_IDS
    assert set(config["mpi"]) == {"openmpi", "mpich"}
    assert len({d["nodes"] * d["ppn"] for d in config["deployments"]}) >= 3  # several P
    # local scale: both libraries on this machine, MPICH (busy-polling) at most 2 ranks
    assert config["local"]["mpi"] == ["openmpi", "mpich"]
    assert max(d["nodes"] * d["ppn"] for d in config["local"]["deployments"]) <= 2


@pytest.mark.parametrize("scale", ["paper", "local"])
def test_campaign_validates(scale: str) -> None:
    validate_campaign(CAMPAIGN, scale)


@pytest.mark.workflow
def test_paper_scale_dry_run_plans_every_run(tmp_path: Path) -> None:
    config = load()
    jobs = scheduled_jobs(
        project_of(tmp_path / "project"), "--configfile", "config/campaigns/manwade.yaml"
    )
    launches = run_jobs(
        config["mpi"], config["runs"], config["deployments"], config.get("blocking")
    )
    for rule, count in launches.items():
        assert jobs.get(rule) == count, jobs
    assert jobs.get("analyse") == 1, jobs  # it writes library_table.*


@pytest.mark.workflow
def test_local_scale_runs_and_writes_the_table(tmp_path: Path) -> None:
    """Every MK guideline is tested on both libraries at both OSU sizes (2 ranks). The local
    block's runs and repetitions are cut further to keep this test short, and only the library
    table is asked for: the plots of its many groups are the demo's end-to-end test's to check."""
    config = load()
    config["local"].update(runs=2, nrep=5)
    config["analysis"].update(p_thres=0.5, v_thres=1.0)
    project = project_of(tmp_path / "project", config)
    guidelines = project / "results" / "manwade-local" / "guidelines"
    targets = [f"results/manwade-local/guidelines/library_table.{ext}" for ext in ("csv", "md")]
    snakemake(
        project, *targets, "--profile", "profiles/local", "--cores", "2",
        "--configfile", "config/campaigns/manwade.yaml", "--config", "scale=local",
    )  # fmt: skip
    table = pd.read_csv(guidelines / "library_table.csv")
    mk = table[table["guideline"].str.startswith("MK-")]
    cells = set(zip(mk["guideline"], mk["mpi"], mk["msg_size"], strict=True))
    assert cells == {(g, m, s) for g in MK_IDS for m in ("openmpi", "mpich") for s in OSU_SIZES}
    # two runs decide little: a cell may also say that its runs cannot tell
    assert set(mk["verdict"]) <= {"holds", "violated", "undecided"}
    approx = set(mk.loc[mk["relation"] == "approx", "guideline"])
    assert approx == {"MK-T1-R12", "MK-T1-R13"}
    cross = table[table["guideline"] == "XLIB-OPENMPI-MPICH"]
    assert set(cross["mpi"]) == {"openmpi|mpich"} and set(cross["msg_size"]) == set(OSU_SIZES)
    markdown = (guidelines / "library_table.md").read_text()
    assert "| guideline | relation | mpich 1024 | mpich 1048576 | openmpi 1024 |" in markdown
