"""`snakemake --profile local` and `--profile slurm`, typed in a checkout, find the project's
profiles (links in the checkout's top directory: Snakemake looks for a profile name in the
working directory before the user's and the site's configuration directories)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workflow_project import SNAKEMAKE, TINY_CAMPAIGN, new_project, snakemake_env

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return new_project(tmp_path_factory.mktemp("profiles") / "project", TINY_CAMPAIGN)


@pytest.mark.parametrize(
    ("profile", "launcher"),
    [
        ("local", "mpirun.openmpi"),
        ("slurm", "srun --mpi=pmix"),
        ("profiles/slurm", "srun --mpi=pmix"),
        ("profiles/local", "mpirun.openmpi"),
    ],
)
def test_profile_by_name_or_path(
    project: Path, tmp_path: Path, profile: str, launcher: str
) -> None:
    env = snakemake_env()
    # An empty home: a user's own profile of the same name must not be what is found, and the
    # test writes nothing into the real one.
    env["HOME"] = str(tmp_path)
    env["XDG_CONFIG_HOME"] = str(tmp_path / ".config")
    result = subprocess.run(
        [str(SNAKEMAKE), "--profile", profile, "-n", "-p"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"Using profiles {profile} and workflow specific profile profiles/default" in output
    assert "rule run_openmpi" in output
    assert launcher in output
    assert not (tmp_path / ".config").exists()
