"""Measured data is tamper-evident and verdicts never outlive their inputs: the kernel's
output_sha256, raw runs deleted or edited after a complete campaign, and options changed
without Snakemake's metadata. Real snakemake, local profile, real mpirun, 2 ranks."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest
import yaml

from workflow_project import ANALYSIS_JOBS, measured_once, scheduled_jobs, snakemake

from .conftest import CAMPAIGN, campaign, new_project_with_kernel

pytestmark = pytest.mark.workflow

MakeProject = Callable[[dict[str, Any]], Path]
EXPERIMENTS = [{"op": ["allreduce", "bcast"], "msg_size": [8, 1024], "nrep": [5]}]
DEPLOYMENTS = [{"nodes": 1, "ppn": 2}, {"nodes": 2, "ppn": 1}]
ANALYSIS = {job: count for job, count in ANALYSIS_JOBS.items() if job != "aggregate"}
BCAST_LE_ALLREDUCE = {
    "id": "BCAST", "source": "a test", "text": "bcast <= allreduce", "relation": "le",
    "lhs": {"op": "bcast"}, "rhs": {"op": "allreduce"},
}  # fmt: skip
RESULTS = Path("results") / CAMPAIGN


def tamper_campaign() -> dict[str, Any]:
    config = campaign(EXPERIMENTS)
    config["deployments"] = DEPLOYMENTS
    config["mpi"]["openmpi"]["launcher"] = "mpirun.openmpi --oversubscribe"
    return config


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory, openmpi_kernel: Path) -> Path:
    """A complete two-deployment campaign, run once for the module."""

    def measure(project: Path) -> None:
        new_project_with_kernel(project, tamper_campaign(), openmpi_kernel)
        snakemake(project, "--profile", "profiles/local", "--cores", "2")

    return measured_once(tmp_path_factory, "tamper", measure)


@pytest.fixture
def project(completed: Path, project_copy: Callable[[Path], Path]) -> Path:
    return project_copy(completed)


def raw(project: Path, run: int, deployment: str = "1x2", suffix: str = "csv") -> Path:
    return project / RESULTS / "raw" / "openmpi" / deployment / f"run{run:02d}.{suffix}"


def edit_config(project: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = project / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    change(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def test_the_provenance_holds_the_sha256_of_the_csv_as_written(completed: Path) -> None:
    for run in (0, 1, 2):
        provenance = json.loads(raw(completed, run, suffix="json").read_text())
        assert provenance["output_sha256"] == sha256(raw(completed, run).read_bytes()).hexdigest()


# -- a deleted raw run ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_a_deleted_raw_run_is_measured_again(project: Path, suffix: str) -> None:
    raw(project, 1, suffix=suffix).unlink()
    assert scheduled_jobs(project) == {"run_openmpi": 1, "aggregate": 1, **ANALYSIS}


def test_analysis_only_stops_naming_the_missing_run(project: Path) -> None:
    raw(project, 2, "2x1").unlink()
    result = snakemake(
        project, "--profile", "profiles/local", "-n", "--config", "analysis_only=True",
        check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"{RESULTS}/raw/openmpi/2x1/run02.csv" in result.stdout + result.stderr


# -- options changed without .snakemake/ metadata --------------------------------------------


def test_without_metadata_a_complete_campaign_stays_up_to_date(project: Path) -> None:
    shutil.rmtree(project / ".snakemake")
    assert scheduled_jobs(project) == {}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # check's decided_with.json holds analysis and guidelines: no record job (models.json
        # holds only the analysis keys a fit reads); a deployment's record job (campaign.json).
        pytest.param(lambda c: c["analysis"].update(p_thres=0.01), ANALYSIS, id="p_thres"),
        pytest.param(
            lambda c: c.update(guidelines=[BCAST_LE_ALLREDUCE]), ANALYSIS, id="guidelines"
        ),
        pytest.param(
            lambda c: c.update(deployments=DEPLOYMENTS[:1]),
            {"aggregate": 1, **ANALYSIS, "options_record": 1},
            id="deployment removed",
        ),
    ],
)
def test_without_metadata_a_changed_option_reruns_what_depends_on_it(
    project: Path, change: Callable[[dict[str, Any]], None], expected: dict[str, int]
) -> None:
    shutil.rmtree(project / ".snakemake")
    edit_config(project, change)
    assert scheduled_jobs(project) == expected


# An option every run's input is planned from would measure every run again over its raw files:
# the workflow stops, naming it, and with `remeasure` (which first moves the runs aside) the
# records alone still tell it what to measure again.
@pytest.mark.parametrize(
    ("change", "named", "expected"),
    [
        pytest.param(
            lambda c: c.update(nrep=7),
            "nrep 20 → 7",
            {
                "grid": 1,
                "inputs": 6,
                "run_openmpi": 6,
                "aggregate": 1,
                **ANALYSIS,
                "options_record": 1,
            },
            id="nrep",
        ),
        pytest.param(
            lambda c: c.update(seed=6),
            "seed 5 → 6",
            {"inputs": 6, "run_openmpi": 6, "aggregate": 1, **ANALYSIS, "options_record": 1},
            id="seed",
        ),
    ],
)
def test_without_metadata_a_changed_input_option_stops_unless_remeasured(
    project: Path, change: Callable[[dict[str, Any]], None], named: str, expected: dict[str, int]
) -> None:
    shutil.rmtree(project / ".snakemake")
    edit_config(project, change)
    stopped = snakemake(project, "--profile", "profiles/local", "-n", check=False)
    assert stopped.returncode != 0
    assert named in stopped.stderr
    assert scheduled_jobs(project, "--config", "remeasure=True") == expected


# -- edited raw data: aggregate refuses it, naming the file -----------------------------------


def rewrite_rows(path: Path, change: Callable[[list[list[str]]], None]) -> None:
    """Rewrite a raw CSV's data rows; the header and the file's format stay as the kernel's."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    body = rows[1:]
    change(body)
    path.write_text("\n".join(",".join(row) for row in [rows[0], *body]) + "\n")


def one_value_edited(project: Path) -> Path:
    def change(rows: list[list[str]]) -> None:
        rows[3][2] = f"{float(rows[3][2]) * 0.5:.9e}"

    rewrite_rows(raw(project, 1), change)
    return raw(project, 1)


def run_times_1000(project: Path) -> Path:
    def change(rows: list[list[str]]) -> None:
        for row in rows:
            row[2] = f"{float(row[2]) * 1000:.9e}"

    rewrite_rows(raw(project, 1), change)
    return raw(project, 1)


def exp_ids_swapped(project: Path) -> Path:
    def change(rows: list[list[str]]) -> None:
        first, second = rows[0][0], next(r[0] for r in rows if r[0] != rows[0][0])
        for row in rows:
            row[0] = {first: second, second: first}.get(row[0], row[0])

    rewrite_rows(raw(project, 1), change)
    return raw(project, 1)


def other_runs_csv_copied_in(project: Path) -> Path:
    shutil.copyfile(raw(project, 0), raw(project, 1))
    return raw(project, 1)


def same_run_given_twice(project: Path) -> Path:
    """Both files of run 0 copied over run 1: each pair is consistent, but one measurement
    would count twice."""
    for suffix in ("csv", "json"):
        shutil.copyfile(raw(project, 0, suffix=suffix), raw(project, 1, suffix=suffix))
    return raw(project, 1)


def aggregate(project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    results = project / RESULTS
    return subprocess.run(
        [sys.executable, "-m", "mpiguide", "aggregate", "--grid", str(results / "grid.csv"),
         "--raw-root", str(results / "raw"), "--inputs-root", str(results / "inputs"),
         "--timings", str(out / "timings.parquet"), "--medians", str(out / "medians.parquet"),
         *map(str, sorted((results / "raw").glob("*/*/*.csv")))],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_untouched_raw_runs_aggregate(project: Path, tmp_path: Path) -> None:
    result = aggregate(project, tmp_path)
    assert result.returncode == 0, result.stderr


TAMPERINGS = [
    pytest.param(one_value_edited, id="one value edited"),
    pytest.param(run_times_1000, id="a run multiplied by 1000"),
    pytest.param(exp_ids_swapped, id="exp_ids swapped"),
    pytest.param(other_runs_csv_copied_in, id="another run copied in"),
    pytest.param(same_run_given_twice, id="the same run twice"),
]


@pytest.mark.parametrize("tamper", TAMPERINGS)
def test_aggregate_refuses_tampered_raw_data_naming_the_file(
    project: Path, tmp_path: Path, tamper: Callable[[Path], Path]
) -> None:
    tampered = tamper(project)
    result = aggregate(project, tmp_path)
    assert result.returncode == 2, result.stderr
    assert str(tampered.relative_to(project / RESULTS / "raw")) in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "timings.parquet").exists()
