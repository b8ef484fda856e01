"""Lübbe 2017's published campaigns (config/campaigns/nbhcoll-*.yaml, full-*.yaml): each is
Table 2's column as printed, validates and plans with `snakemake -n` as it is, and runs on this
machine at `scale=local`; full-jupiter runs end to end there with real MPI.

Table 3/4 counts at the published scale: tests/unit/analysis/test_paper_tables.py.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from mpiguide.analysis.paper_tables import LUBBE_TABLE4
from mpiguide.campaign.config import load_campaign
from mpiguide.campaign.installs import with_installs
from mpiguide.campaign.scale import apply_scale
from workflow_project import (
    REPO,
    new_project,
    run_jobs,
    scheduled_jobs,
    skip_unless_installed,
    snakemake,
    validate_campaign,
)

CAMPAIGNS_DIR = REPO / "config" / "campaigns"
CORES = 2
MPICH_MAX_RANKS = 2
# Table 2 as printed: n_run, operations, orderings, reorder levels per campaign.
TABLE2: dict[str, dict[str, Any]] = {
    "nbhcoll-jupiter": {"runs": 30, "ops": {"neighbor_allgather", "neighbor_alltoall"},
                        "orderings": {"FMAJ", "LMAJ", "RAND"}, "reorder": {0, 1}},
    "nbhcoll-vsc3": {"runs": 15, "ops": {"neighbor_allgather", "neighbor_alltoall"},
                     "orderings": {"FMAJ", "LMAJ", "RAND"}, "reorder": {0, 1}},
    "full-jupiter": {"runs": 15, "ops": {"neighbor_allgather", "neighbor_alltoall", "allgather",
                                         "alltoall"},
                     "orderings": {"LINEAR", "RAND"}, "reorder": {0, 1}},
    "full-rand-jupiter": {"runs": 15, "ops": {"neighbor_alltoall", "alltoall"},
                          "orderings": {"RAND"}, "reorder": {0}},
    "full-tuned-jupiter": {"runs": 15, "ops": {"neighbor_alltoall", "alltoall"},
                           "orderings": {"LINEAR", "RAND"}, "reorder": {0}},
}  # fmt: skip
CAMPAIGNS = tuple(TABLE2)
# "256 B, 362 B, 512 B, ..., 32 KiB (factor √2 between sizes)", cut to whole bytes.
SIZES = [int(256 * math.sqrt(2) ** k) for k in range(15)]


def campaign_path(name: str) -> Path:
    return CAMPAIGNS_DIR / f"{name}.yaml"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load(campaign_path(name).read_text(encoding="utf-8"))


def local(name: str) -> dict[str, Any]:
    """The campaign as `--config scale=local` runs it, the installs its entries name filled in."""
    config = load_campaign(campaign_path(name)) | {"scale": "local"}
    scaled = apply_scale(config, REPO / "config" / "local-mpi.yaml", str(campaign_path(name)))
    with_installs(scaled)
    return scaled


def grid_levels(config: dict[str, Any], parameter: str) -> set[Any]:
    levels: set[Any] = set()
    for block in config["experiments"]:
        value = block.get(parameter)
        levels |= set(value if isinstance(value, list) else [value]) - {None}
    return levels


# --- the published campaigns are Table 2's columns ----------------------------------------------


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_campaign_is_table2s_column(name: str) -> None:
    config, printed = load(name), TABLE2[name]
    header = campaign_path(name).read_text(encoding="utf-8").split("\ncampaign:", 1)[0]
    assert "Lübbe 2017" in header and f'Table 2, column "{name}"' in header
    assert config["campaign"] == name
    assert (config["runs"], config["nrep"]) == (printed["runs"], 50)
    # §3.2: the Wilcoxon rank-sum test on the run medians
    assert config["analysis"]["test"] == "ranksum"
    assert grid_levels(config, "op") == printed["ops"]
    assert grid_levels(config, "ordering") == printed["orderings"]
    assert grid_levels(config, "reorder") == printed["reorder"]
    assert all(block["msg_size"] == SIZES for block in config["experiments"])
    assert grid_levels(config, "constructor") <= {"cart", "graph_adj"}
    assert {(d["nodes"], d["ppn"]) for d in config["deployments"]} <= {(10, 16), (20, 16), (35, 16)}
    if name.startswith("nbhcoll"):
        assert grid_levels(config, "ndim") == {1, 2, 3, 4}
        assert grid_levels(config, "radius") == {1}
        assert len(config["deployments"]) == 3


def test_full_tuned_sets_tables_mca_parameters() -> None:
    for config in (load("full-tuned-jupiter"), local("full-tuned-jupiter")):
        (entry,) = config["mpi"].values()
        assert entry["env"]["OMPI_MCA_coll_tuned_use_dynamic_rules"] == "true"
        assert entry["env"]["OMPI_MCA_coll_tuned_alltoall_intermediate_msg"] == "256"


@pytest.mark.parametrize("name", CAMPAIGNS)
@pytest.mark.parametrize("scale", ["paper", "local"])
def test_campaign_validates(name: str, scale: str) -> None:
    validate_campaign(campaign_path(name), scale)


# --- local scale: safe and able to report a violation here --------------------------------------


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_local_scale_is_safe_and_can_reach_the_p_threshold(name: str) -> None:
    config = local(name)
    ranks = max(d["nodes"] * d["ppn"] for d in config["deployments"])
    assert ranks <= CORES
    for entry in config["mpi"].values():
        assert "mpich" not in entry["mpicc"] or ranks <= MPICH_MAX_RANKS
    # with n runs a side the smallest one-sided rank-sum p-value is 1/C(2n, n)
    assert 1 / math.comb(2 * config["runs"], config["runs"]) <= config["analysis"]["p_thres"]


@pytest.mark.workflow
@pytest.mark.parametrize("name", CAMPAIGNS)
@pytest.mark.parametrize("scale", ["paper", "local"])
def test_campaign_dry_run_plans_every_run(name: str, scale: str, tmp_path: Path) -> None:
    """`snakemake -n --configfile config/campaigns/<name>.yaml [--config scale=local]` schedules
    one kernel build per mpi entry and one run per (mpi entry, deployment, run)."""
    skip_unless_installed(campaign_path(name), scale)
    config = load(name) if scale == "paper" else local(name)
    project = new_project(tmp_path / "project", load(name))
    jobs = scheduled_jobs(
        project, "--configfile", str(campaign_path(name)), "--config", f"scale={scale}"
    )
    for entry in config["mpi"]:
        assert jobs.get(f"build_{entry}") == 1, jobs
    launches = run_jobs(
        config["mpi"], config["runs"], config["deployments"], config.get("blocking")
    )
    for rule, count in launches.items():
        assert jobs.get(rule) == count, jobs
    assert jobs.get("analyse") == 1, jobs


# --- full-jupiter end to end at local scale -----------------------------------------------------


@pytest.mark.workflow
def test_full_jupiter_runs_at_local_scale(tmp_path: Path) -> None:
    """Table 4 regenerated on this machine: the paper's rows, and in each row the paper's number
    of groups (groups do not depend on the sizes measured; tests = groups x 2 local sizes)."""
    project = new_project(tmp_path / "project", load("full-jupiter"))
    out = project / "results" / "full-jupiter-local" / "guidelines"
    # The summary only: the plots of every group are the demo's end-to-end test's to check.
    snakemake(
        project, *(f"results/full-jupiter-local/guidelines/summary.{ext}" for ext in ("csv", "md")),
        "--profile", "profiles/local",
        "--cores", str(CORES), "--configfile", str(campaign_path("full-jupiter")),
        "--config", "scale=local",
    )  # fmt: skip
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["row"]) == [label for label, _ in LUBBE_TABLE4.rows]
    groups = {"Allgather ≼ Neigh_allgather": 2, "Alltoall ≼ Neigh_alltoall": 2,
              "Neigh_allgather ≼ Neigh_alltoall": 4, "LINEAR ≼ RAND": 4,
              "reorder=1 ≼ reorder=0": 6}  # fmt: skip
    assert dict(zip(summary["row"], summary["groups"], strict=True)) == groups
    assert (summary["tests"] == 2 * summary["groups"]).all()
    markdown = (out / "summary.md").read_text()
    assert "Lübbe 2017, Table 4" in markdown and "| reorder=1 ≼ reorder=0 |" in markdown
