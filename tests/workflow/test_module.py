"""mpiguide as a Snakemake module of another workflow (docs/workflow.md, "Use from another
workflow"): a directory of its own holds an outer Snakefile that imports this checkout's
Snakefile by path, and a campaign. It schedules the jobs the workflow schedules run directly,
and runs a campaign whose junit.xml, with violated, holding and undecided groups, is valid
against the JUnit schema of CI services."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from junit_schema import assert_valid_junit
from workflow_project import REPO, ROOT_ENV, job_counts, new_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

LOCAL_PROFILE = str(REPO / "profiles" / "local")
OUTER_SNAKEFILE = """\
configfile: "config/campaign.yaml"


module mpiguide:
    snakefile:
        {snakefile!r}
    config:
        config


use rule * from mpiguide
"""

OPENMPI: dict[str, Any] = {
    "mpicc": "mpicc.openmpi",
    "launcher": "mpirun.openmpi --oversubscribe",
    "env": {**ROOT_ENV, "OMPI_MCA_mpi_yield_when_idle": "1"},
}


def guideline(
    gid: str, text: str, relation: str, lhs: dict[str, Any], rhs: dict[str, Any]
) -> dict[str, Any]:
    """An inline guideline of the campaign."""
    source = "tests/workflow/test_module.py"
    return {"id": gid, "source": source, "text": text, "relation": relation, "lhs": lhs, "rhs": rhs}


WORK = 2_000_000  # iterations of simulated work, some 2 ms: far above a 2-rank exchange
# Two identical Open MPI entries (blocked), and guidelines chosen so that every verdict occurs:
# `work` slows an operation a thousandfold (violated one way, holds the other), and the two
# entries are the same library, whose `approx` comparison can never hold at v_thres 1 (both
# bounds would have to lie inside (1, 1)) and is violated only by chance at p_thres. Six runs:
# on a busy machine a run or two of the unslowed operation can be descheduled for as long as
# the work takes, and the paired t-test of three runs (2 degrees of freedom) then cannot
# decide; with six it still flags the thousandfold with two such runs.
CAMPAIGN: dict[str, Any] = {
    "campaign": "module",
    "seed": 3,
    "runs": 6,
    "nrep": 10,
    # copies: yaml.safe_dump writes one object twice as an anchor and an alias
    "mpi": {name: copy.deepcopy(OPENMPI) for name in ("a", "b")},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [
        {
            "op": ["ineighbor_allgather"],
            "topology": ["cart"],
            "ndim": [1],
            "work": [0, WORK],
            "msg_size": [8, 64],
        }
    ],
    "guidelines": [
        guideline("WORK-NOT-SLOWER", "work ≼ no work", "le", {"work": WORK}, {"work": 0}),
        guideline("NO-WORK-NOT-SLOWER", "no work ≼ work", "le", {"work": 0}, {"work": WORK}),
        guideline("SAME-LIBRARY", "b ≈ a", "approx", {"mpi": "b"}, {"mpi": "a"}),
    ],
    "analysis": {"varied": "msg_size", "p_thres": 0.01, "v_thres": 1.0},
}
# `snakemake -n`'s "output: a, b" line of each job.
OUTPUT_LINE = re.compile(r"^\s+output: (.+)$", re.MULTILINE)


def outer_workflow(root: Path) -> Path:
    """A workflow of its own that imports this checkout's workflow, with the campaign."""
    root.mkdir(parents=True)
    (root / "Snakefile").write_text(OUTER_SNAKEFILE.format(snakefile=str(REPO / "Snakefile")))
    (root / "config").mkdir()
    (root / "config" / "campaign.yaml").write_text(yaml.safe_dump(CAMPAIGN, sort_keys=False))
    return root


def dry_run(project: Path, profile: str) -> tuple[dict[str, int], set[str]]:
    """The jobs per rule and the output files that `snakemake -n` plans in `project`."""
    result = snakemake(project, "--profile", profile, "-n")
    outputs = {path for line in OUTPUT_LINE.findall(result.stdout) for path in line.split(", ")}
    return job_counts(result.stdout + result.stderr), outputs


def test_dry_run_schedules_the_jobs_of_the_workflow_run_directly(tmp_path: Path) -> None:
    direct = new_project(tmp_path / "direct", CAMPAIGN)
    outer = outer_workflow(tmp_path / "outer")
    jobs, outputs = dry_run(outer, LOCAL_PROFILE)
    assert (jobs, outputs) == dry_run(direct, "profiles/local")
    assert jobs["run_block"] == CAMPAIGN["runs"] and jobs["build_a"] == jobs["build_b"] == 1
    assert "results/module/guidelines/junit.xml" in outputs


@pytest.fixture(scope="module")
def completed_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    outer = outer_workflow(tmp_path_factory.mktemp("module") / "outer")
    snakemake(outer, "--profile", LOCAL_PROFILE, "--cores", "2")
    return outer


def test_campaign_runs_as_a_module(completed_module: Path) -> None:
    results = completed_module / "results" / "module"
    for mpi in ("a", "b"):
        assert (results / "build" / mpi / "mpiguide-bench").is_file()
        assert len(list((results / "raw" / mpi / "1x2").glob("run*.csv"))) == CAMPAIGN["runs"]
    assert (results / "guidelines" / "tests.csv").is_file()
    assert dry_run(completed_module, LOCAL_PROFILE)[0] == {}


def test_junit_of_a_real_campaign_is_valid(completed_module: Path) -> None:
    junit = completed_module / "results" / "module" / "guidelines" / "junit.xml"
    assert_valid_junit(junit)
    outcomes: dict[str, list[str]] = {}
    for suite in ET.parse(junit).getroot().findall("testsuite"):
        outcomes[suite.get("name") or ""] = [
            case[0].tag if len(case) else "passed" for case in suite.findall("testcase")
        ]
    # msg_size varies within a group: a group per entry for the work guidelines, per work for
    # the comparison of the entries
    assert outcomes["WORK-NOT-SLOWER"] == ["failure"] * 2
    assert outcomes["NO-WORK-NOT-SLOWER"] == ["passed"] * 2
    assert "skipped" in outcomes["SAME-LIBRARY"]
    assert "passed" not in outcomes["SAME-LIBRARY"]
