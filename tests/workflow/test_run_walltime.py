"""`snakemake -n` says what a run typically costs, and refuses a campaign whose run jobs cannot
finish within their `runtime` resource, naming it (the floor: mpiguide.campaign.walltime)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workflow_project import REPO, new_project, snakemake

pytestmark = pytest.mark.workflow


def long_runs_project(root: Path) -> Path:
    """The demo campaign's experiments with char and int data (84) and 10^7 repetitions each:
    at least a second each, so a run takes more than a minute."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["nrep"] = 10_000_000
    for block in config["experiments"]:
        block["dtype"] = ["char", "int"]
    return new_project(root, config)


def test_a_run_longer_than_its_runtime_is_refused_by_a_dry_run(tmp_path: Path) -> None:
    project = long_runs_project(tmp_path / "project")
    refused = snakemake(
        project, "-n", "--profile", "profiles/local", "--default-resources", "runtime=1",
        check=False,
    )  # fmt: skip
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "job cannot finish within its runtime of 1 min" in said
    assert "raise `runtime`" in said and "Traceback" not in said
    planned = snakemake(
        project, "-n", "--profile", "profiles/local", "--default-resources", "runtime=600",
    )  # fmt: skip
    said = planned.stdout + planned.stderr
    assert "mpiguide: a run: about " in said
    # the floor decides refusals only: a run within its runtime is not told it
    assert "on any machine" not in said
