"""Cheap checks of the workflow itself: lint, conda env files, config errors at parse time."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from workflow_project import (
    ANALYSIS_JOBS,
    REPO,
    TINY_CAMPAIGN,
    new_project,
    scheduled_jobs,
    snakemake,
)

pytestmark = pytest.mark.workflow

ENVS = REPO / "workflow" / "envs"
# Import name -> conda-forge package that provides it.
CONDA_PACKAGE = {"yaml": "pyyaml", "matplotlib": "matplotlib-base", "seaborn": "seaborn-base"}


def env_packages(name: str) -> set[str]:
    env = yaml.safe_load((ENVS / name).read_text())
    assert env["channels"][0] == "conda-forge"
    packages = set()
    for spec in env["dependencies"]:
        package, _, version = spec.partition("=")
        assert version.strip(), f"{name}: {spec} is not pinned"
        packages.add(package.strip())
    return packages


def third_party_imports(package_dir: Path) -> set[str]:
    modules = set()
    for source in package_dir.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m != "mpiguide"}


def test_analysis_env_provides_every_package_import() -> None:
    imports = third_party_imports(REPO / "src" / "mpiguide")
    assert {"pandas", "scipy"} <= imports
    missing = {CONDA_PACKAGE.get(m, m) for m in imports} - env_packages("analysis.yaml")
    assert not missing, f"workflow/envs/analysis.yaml lacks {sorted(missing)}"


def test_kernel_env_has_toolchain_and_mpi() -> None:
    assert {"c-compiler", "make", "openmpi"} <= env_packages("kernel.yaml")


def test_rules_name_existing_envs() -> None:
    rules = REPO / "workflow" / "rules"
    named = set()
    for rule_file in rules.glob("*.smk"):
        named.update(re.findall(r'"\.\./envs/([\w.-]+\.yaml)"', rule_file.read_text()))
    assert named == {"analysis.yaml", "kernel.yaml"}
    assert all((ENVS / name).is_file() for name in named)


def test_lint_is_clean(tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", TINY_CAMPAIGN)
    result = snakemake(project, "--lint")
    assert "Lints for" not in result.stdout + result.stderr, result.stdout + result.stderr


def bad_config(change: dict[str, Any]) -> dict[str, Any]:
    return {**TINY_CAMPAIGN, **change}


@pytest.mark.parametrize(
    ("change", "named_key"),
    [
        ({"runs": 0}, "runs"),
        ({"guidelines": ["GL4", "GL99"]}, "GL99"),
        ({"deployments": [{"nodes": 1, "ppn": 1}]}, "deployments"),
        ({"launch": "pbs"}, "launch"),
    ],
    ids=["schema", "unknown-guideline", "one-rank", "launch"],
)
def test_bad_config_stops_before_any_job(
    tmp_path: Path, change: dict[str, Any], named_key: str
) -> None:
    project = new_project(tmp_path / "project", bad_config(change))
    result = snakemake(project, "--profile", "profiles/local", "-n", check=False)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert named_key in message
    assert "Traceback" not in message
    assert not (project / "results").exists()


def test_configfile_replaces_the_demo_campaign(tmp_path: Path) -> None:
    """--configfile must not be deep-merged into config/config.yaml (its mpi entries, env)."""
    project = new_project(tmp_path / "project", TINY_CAMPAIGN)
    other = {**TINY_CAMPAIGN, "campaign": "other", "mpi": {"mpich": TINY_CAMPAIGN["mpi"]["mpich"]}}
    (project / "other.yaml").write_text(yaml.safe_dump(other))
    rules = snakemake(project, "--list-rules", "--configfile", "other.yaml").stdout.split()
    assert "run_mpich" in rules
    assert "run_openmpi" not in rules


def test_a_campaign_is_not_merged_into_the_demo_config(tmp_path: Path) -> None:
    """Run as users run it: profiles/default names the demo config, the --configfile replaces
    it. Merged, the demo's `openmpi` entry would be measured in campaign `other` too."""
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert "mpich" not in demo["mpi"]
    project = new_project(tmp_path / "project", demo)
    other = {**TINY_CAMPAIGN, "campaign": "other", "mpi": {"mpich": TINY_CAMPAIGN["mpi"]["mpich"]}}
    (project / "other.yaml").write_text(yaml.safe_dump(other))
    dry_run = snakemake(project, "--profile", "profiles/local", "-n", "--configfile", "other.yaml")
    assert "results/other/" in dry_run.stdout
    assert f"results/{demo['campaign']}/" not in dry_run.stdout
    jobs = scheduled_jobs(project, "--configfile", "other.yaml")
    assert "run_mpich" in jobs
    assert "run_openmpi" not in jobs


def test_no_config_file_stops_with_how_to_give_one(tmp_path: Path) -> None:
    """Without profiles/default (--workflow-profile none) and no --configfile there is no
    campaign: one message, no traceback, nothing run."""
    project = new_project(tmp_path / "project", TINY_CAMPAIGN)
    result = snakemake(project, "--workflow-profile", "none", "-n", "--cores", "1", check=False)
    assert result.returncode == 1, result.stderr
    assert "no campaign config file: name one with --configfile FILE" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not (project / "results").exists()


def test_demo_campaign_plans_every_run(tmp_path: Path) -> None:
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    project = new_project(tmp_path / "project", demo)
    runs = demo["runs"] * len(demo["deployments"])
    assert scheduled_jobs(project) == {
        "build_openmpi": 1,
        "grid": 1,
        "inputs": runs,
        "run_openmpi": runs,
        **ANALYSIS_JOBS,
        "options_record": 6,
    }


def test_analysis_rules_run_on_the_submit_host() -> None:
    """docs/cluster.md: under SLURM only kernel builds and runs queue; every rule that runs
    mpiguide's pandas code is a local rule."""
    text = "\n".join(p.read_text() for p in sorted((REPO / "workflow" / "rules").glob("*.smk")))
    blocks = re.findall(r"^localrules:\n((?:[ \t]+\w+,\n)+)", text, re.MULTILINE)
    local = set(re.findall(r"\w+", "".join(blocks)))
    rules = re.findall(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.MULTILINE | re.DOTALL)
    analysis = {name for name, body in rules if "python -m mpiguide" in body}
    assert {"aggregate", "analyse", "selftest"} <= analysis
    assert analysis - local == set()
