"""docs/ci.md's commands, run here on a tiny copy of config/campaigns/ci-example.yaml whose two
entries (`main`, `change`) are both this machine's Open MPI: validate, the campaign with
`fail_on`, junit.xml kept when the gate fails, and `mpiguide diff` of the two entries."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from junit_schema import assert_valid_junit, skipped_cases
from workflow_project import REPO, ROOT_ENV, new_project, snakemake

pytestmark = pytest.mark.workflow

CAMPAIGN = "config/campaigns/ci-example.yaml"


def mpiguide(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mpiguide", *args],
        cwd=project, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = yaml.safe_load((REPO / CAMPAIGN).read_text())
    for entry in config["mpi"].values():
        entry.update(mpicc="mpicc.openmpi", launcher="mpirun.openmpi --oversubscribe")
        entry["env"] = {**entry["env"], **ROOT_ENV}
    # One launch per entry and a few repetitions: cheap, and every test is undecided (a t-test
    # needs two runs per side), so that what fails and what passes is known in advance.
    config.update(runs=1, nrep=5)
    root = new_project(tmp_path_factory.mktemp("ci") / "project", {})
    (root / CAMPAIGN).parent.mkdir(parents=True, exist_ok=True)
    (root / CAMPAIGN).write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def test_ci_commands(project: Path) -> None:
    validate = mpiguide(project, "validate", "--configfile", CAMPAIGN)
    assert validate.returncode == 0, validate.stderr
    assert "tests: 12 (GL4 4, CHANGE-NOT-SLOWER 8)" in validate.stdout
    assert "at least 2 runs" in validate.stderr

    args = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
    snakemake(project, *args, "--config", "fail_on=violated")
    guidelines = project / "results" / "ci" / "guidelines"
    assert (guidelines / "fail_on.txt").read_text().startswith("fail_on violated: passed;")
    assert_valid_junit(guidelines / "junit.xml")
    suites = ET.parse(guidelines / "junit.xml").getroot()
    assert (suites.get("tests"), suites.get("failures"), skipped_cases(suites)) == ("6", "0", 6)

    # undecided tests fail the job: the gate fails, the tables and junit.xml stay
    failed = snakemake(project, *args, "--config", "fail_on=undecided", check=False)
    assert failed.returncode != 0
    assert "mpiguide: failing: --fail-on undecided: 12 undecided" in failed.stderr
    assert (guidelines / "tests.csv").is_file() and not (guidelines / "fail_on.txt").exists()
    assert_valid_junit(guidelines / "junit.xml")
    suites = ET.parse(guidelines / "junit.xml").getroot()
    assert (suites.get("failures"), skipped_cases(suites)) == ("6", 0)
    check = mpiguide(
        project, "check", "--medians", "results/ci/medians.parquet", "--guidelines-json",
        '["GL4"]', "--analysis-json", "{}", "--outdir", "results/check", "--fail-on", "undecided",
    )  # fmt: skip
    assert check.returncode == 3, check.stderr

    diff = mpiguide(
        project, "diff", "results/ci", "results/ci", "--mpi-a", "main", "--mpi-b", "change",
        "--fail-on", "new", "--md", "results/ci/diff.md",
    )  # fmt: skip
    assert diff.returncode == 0, diff.stderr
    text = (project / "results" / "ci" / "diff.md").read_text()
    assert "2 tests matched: 0 new violation" in text  # GL4 at 2 sizes
