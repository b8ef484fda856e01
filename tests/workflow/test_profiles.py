"""`snakemake --profile local` and `--profile slurm`, typed in a checkout, find the project's
profiles (links in the checkout's top directory: Snakemake looks for a profile name in the
working directory before the user's and the site's configuration directories). Under the slurm
profile runs start with `srun` whatever the user's --config, and nothing is submitted that would
fail in SLURM: a dry run warns, a run stops while the workflow is read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from workflow_project import REPO, SNAKEMAKE, TINY_CAMPAIGN, new_project, snakemake_env

SLURM_COMMANDS = {
    "sacct", "sacctmgr", "salloc", "sbatch", "scancel", "scontrol", "sinfo", "squeue", "srun",
    "sshare", "sstat",
}  # fmt: skip
# What Snakemake prints once the workflow is read: the guards stop before it.
AFTER_PARSING = "Building DAG of jobs"

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


def run(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = subprocess.run(
        [str(SNAKEMAKE), *args], cwd=project, env=env or snakemake_env(),
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("profile", ["slurm", "profiles/slurm"])
def test_a_config_on_the_command_line_keeps_srun(project: Path, profile: str) -> None:
    """A --config replaces a profile's `config:` list: the launch follows the executor."""
    code, output = run(project, "--profile", profile, "--config", "runs=3", "-n", "-p")
    assert code == 0, output
    assert "srun --mpi=pmix -n 2 results/tiny/build/openmpi/mpiguide-bench" in output
    assert "mpirun" not in output and "1x2/run02.csv" in output


def test_an_explicit_launch_that_disagrees_with_the_executor_is_refused(project: Path) -> None:
    code, output = run(project, "--profile", "slurm", "--config", "launch=local", "-n")
    assert code != 0
    assert ("config/config.yaml: launch: 'local' disagrees with the executor Snakemake runs "
            "with (slurm)") in output  # fmt: skip
    assert AFTER_PARSING not in output


def test_analysis_only_under_the_slurm_profile(project: Path) -> None:
    """Nothing is built, run nor submitted: neither the launch nor SLURM's state matter."""
    code, output = run(project, "--profile", "slurm", "--config", "analysis_only=True", "-n")
    assert "disagrees with the executor" not in output and "placeholder" not in output
    assert "rule run_" not in output and "mpirun" not in output
    assert "nothing submitted to SLURM" not in output, output
    assert code != 0 and "MissingInputException" in output  # no raw files copied in


def test_the_placeholder_account_is_flagged_in_a_dry_run_and_refused_in_a_run(
    project: Path,
) -> None:
    lines = (project / "profiles" / "slurm" / "config.yaml").read_text().splitlines()
    account = 1 + next(i for i, line in enumerate(lines) if "'myaccount'" in line)
    partition = 1 + next(i for i, line in enumerate(lines) if "'mypartition'" in line)
    flagged = (
        f"slurm_account is still the profile's placeholder 'myaccount' "
        f"(slurm/config.yaml:{account}): edit it to your site's account"
    )
    code, output = run(project, "--profile", "slurm", "-n")
    assert code == 0, output
    assert f"mpiguide: {flagged}" in output and "(a run without -n stops here)" in output
    assert f"placeholder 'mypartition' (slurm/config.yaml:{partition})" in output
    code, output = run(project, "--profile", "slurm")
    assert code != 0
    assert "mpiguide: nothing submitted to SLURM:" in output and f"- {flagged}" in output
    assert AFTER_PARSING not in output


def test_the_test_cluster_s_profile_has_no_placeholders(project: Path) -> None:
    overlay = ("--profile", "profiles/slurm", "--profile", str(REPO / "tests/slurm/profile"))
    code, output = run(project, *overlay, "-n")
    assert code == 0, output
    assert "placeholder" not in output


def without_slurm(tmp_path: Path) -> dict[str, str]:
    """snakemake_env() with a PATH that has every command of it but SLURM's."""
    env = snakemake_env()
    commands = tmp_path / "bin"
    commands.mkdir()
    for directory in env["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            link = commands / name
            if name not in SLURM_COMMANDS and not link.exists() and not link.is_symlink():
                link.symlink_to(Path(directory, name))
    env["PATH"] = str(commands)
    return env


def test_without_slurm_commands_the_slurm_profile_stops_at_once(
    project: Path, tmp_path: Path
) -> None:
    env = without_slurm(tmp_path)
    advice = (
        "the SLURM commands sbatch, squeue or sacct, sacctmgr are not on PATH: run on a SLURM "
        "cluster's login node; on this machine start the test cluster (tests/slurm/cluster.sh "
        "start, as root) or use --profile local"
    )
    code, output = run(project, "--profile", "slurm", env=env)
    assert code != 0
    assert f"- {advice}" in output
    assert AFTER_PARSING not in output and "sacctmgr'" not in output
    code, output = run(project, "--profile", "slurm", "-n", env=env)
    assert code == 0, output
    assert f"mpiguide: {advice} (a run without -n stops here)" in output
