"""The executor Snakemake runs with decides how runs start, and nothing is submitted to SLURM
that would fail there: SLURM commands missing, the profile's placeholder account or partition."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from snakemake.cli import get_profile_dir, parse_args

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.executor import (
    PROFILE_PLACEHOLDERS,
    CommandLine,
    check_submission,
    executor_launch,
    launch_mode,
    literal_text,
    missing_slurm_commands,
    placeholders,
    prepare_jobs,
    profile_resources,
    read_command_line,
)
from mpiguide.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
SLURM_PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
TEST_CLUSTER_PROFILE = REPO / "tests" / "slurm" / "profile" / "config.yaml"
SLURM = CommandLine(executor="slurm")
DRY_SLURM = CommandLine(executor="slurm", dry_run=True)


def on_path(*commands: str):
    return lambda command: f"/usr/bin/{command}" if command in commands else None


def everything_on_path(command: str) -> str:
    return f"/usr/bin/{command}"


@pytest.mark.parametrize(
    ("executor", "launch"),
    [
        ("slurm", "slurm"),
        ("slurm-jobstep", "slurm"),
        ("local", "local"),
        ("dryrun", "local"),
        ("touch", "local"),
        ("cluster-generic", None),
        (None, None),
    ],
)
def test_the_launch_an_executor_implies(executor: str | None, launch: str | None) -> None:
    assert executor_launch(executor) == launch


def test_the_executor_decides_and_an_explicit_launch_must_agree() -> None:
    assert launch_mode(SLURM, None, ["c.yaml"]) == "slurm"
    assert launch_mode(SLURM, "slurm", ["c.yaml"]) == "slurm"
    assert launch_mode(CommandLine(executor="local"), None, ["c.yaml"]) == "local"
    with pytest.raises(ConfigError) as err:
        launch_mode(SLURM, "local", ["c.yaml", "d.yaml"])
    assert str(err.value).startswith(
        "c.yaml, d.yaml: launch: 'local' disagrees with the executor Snakemake runs with "
        "(slurm), whose runs start with each mpi entry's `srun`; remove `launch`"
    )
    with pytest.raises(ConfigError, match=r"\(local\), whose runs start with each mpi entry's "
                       r"`launcher`"):  # fmt: skip
        launch_mode(CommandLine(executor="local"), "slurm", ["c.yaml"])


def test_an_unknown_executor_or_none_keeps_the_config_s_launch() -> None:
    assert launch_mode(CommandLine(executor="cluster-generic"), "slurm", ["c.yaml"]) == "slurm"
    assert launch_mode(CommandLine(executor="cluster-generic"), None, ["c.yaml"]) == "local"
    assert launch_mode(CommandLine(), "slurm", ["c.yaml"]) == "slurm"


def test_the_command_line_as_snakemake_reads_it_with_its_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Snakemake's own parser: the profile's executor survives a --config, which replaces
    only the profile's `config:`."""
    monkeypatch.chdir(tmp_path)
    profile = tmp_path / "cluster" / "config.yaml"
    profile.parent.mkdir()
    profile.write_text("executor: slurm\njobs: 5\nconfig:\n  - launch=slurm\n")
    argv = ["--profile", "cluster", "--config", "runs=3", "-n"]
    read = read_command_line(argv, parse_args, get_profile_dir)
    assert read == CommandLine("slurm", True, (Path("cluster/config.yaml"),))
    assert capsys.readouterr().err == ""  # "Using profile ..." is said once, by Snakemake
    assert read_command_line([], parse_args, get_profile_dir) == CommandLine("local", False, ())


def test_a_command_line_snakemake_refuses_reads_as_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Snakemake started through its API: sys.argv is some other program's."""
    assert read_command_line(["--no-such-option"], parse_args, get_profile_dir) == CommandLine()
    assert capsys.readouterr().err == ""


def test_profiles_are_read_as_their_config_files() -> None:
    def parse(argv: list[str]) -> tuple[None, argparse.Namespace]:
        return None, argparse.Namespace(
            executor=None, dryrun=False, profile=["a", "gone"], mode=None
        )

    def profile_file(name: str) -> tuple[Path, Path] | None:
        return (Path(name), Path(name, "config.yaml")) if name == "a" else None

    assert read_command_line([], parse, profile_file) == CommandLine(
        "local", False, (Path("a/config.yaml"),)
    )


def test_missing_slurm_commands() -> None:
    assert missing_slurm_commands(everything_on_path) == []
    assert missing_slurm_commands(on_path("sbatch", "sacct", "sacctmgr")) == []
    assert missing_slurm_commands(on_path()) == ["sbatch", "squeue or sacct", "sacctmgr"]
    assert missing_slurm_commands(on_path("sbatch", "sacctmgr")) == ["squeue or sacct"]


@pytest.mark.parametrize(
    ("raw", "text"),
    [("'debug'", "debug"), ('"myaccount"', "myaccount"), (30, None), ("attempt * 10", None)],
)
def test_literal_text(raw: Any, text: str | None) -> None:
    assert literal_text(raw) == text


def test_the_profile_s_edit_lines_are_the_placeholders_the_test_cluster_s_are_real() -> None:
    ours = yaml.safe_load(SLURM_PROFILE.read_text())["default-resources"]
    assert {key: literal_text(ours[key]) for key in PROFILE_PLACEHOLDERS} == PROFILE_PLACEHOLDERS
    cluster = yaml.safe_load(TEST_CLUSTER_PROFILE.read_text())["default-resources"]
    assert placeholders({"default-resources": cluster}, [TEST_CLUSTER_PROFILE]) == []


def test_a_placeholder_names_the_profile_line_to_edit() -> None:
    resources = yaml.safe_load(SLURM_PROFILE.read_text())["default-resources"]
    lines = SLURM_PROFILE.read_text().splitlines()
    account_line = 1 + next(i for i, line in enumerate(lines) if "'myaccount'" in line)
    partition_line = 1 + next(i for i, line in enumerate(lines) if "'mypartition'" in line)
    assert placeholders({"default-resources": resources}, [SLURM_PROFILE]) == [
        f"slurm_account is still the profile's placeholder 'myaccount' "
        f"({SLURM_PROFILE}:{account_line}): edit it to your site's account "
        "(docs/cluster.md#what-to-edit)",
        f"slurm_partition is still the profile's placeholder 'mypartition' "
        f"({SLURM_PROFILE}:{partition_line}): edit it to your site's partition "
        "(docs/cluster.md#what-to-edit)",
    ]


def test_a_placeholder_set_per_rule_or_on_the_command_line() -> None:
    resources = {"default-resources": {}, "run_block": {"slurm_account": "'myaccount'"}}
    (found,) = placeholders(resources, [])
    assert found.startswith("slurm_account (set-resources: run_block) is still the profile's "
                            "placeholder 'myaccount': edit it")  # fmt: skip


def resource(raw: Any) -> SimpleNamespace:
    return SimpleNamespace(raw=raw)


def test_profile_resources_as_the_profile_wrote_them() -> None:
    settings = SimpleNamespace(
        default_resources={"slurm_account": resource("'myaccount'"), "runtime": resource(30)},
        overwrite_resources={"run_block": {"runtime": resource(240)}},
    )
    assert profile_resources(settings) == {
        "default-resources": {"slurm_account": "'myaccount'", "runtime": 30},
        "run_block": {"runtime": 240},
    }
    assert profile_resources(SimpleNamespace(default_resources=None, overwrite_resources={})) == {}


def campaign(analysis_only: bool = False) -> Campaign:
    config = {"analysis_only": analysis_only}
    return Campaign(config, AnalysisOptions.with_defaults(), "c.yaml")


PLACEHOLDER_SETTINGS = {
    "default-resources": {"slurm_account": "'myaccount'", "slurm_partition": "'debug'"}
}
SITE_SETTINGS = {"default-resources": {"slurm_account": "'mpiguide'", "slurm_partition": "'debug'"}}


def test_a_dry_run_warns_of_each_problem() -> None:
    warned: list[str] = []
    check_submission(DRY_SLURM, campaign(), PLACEHOLDER_SETTINGS, warned.append, on_path())
    assert len(warned) == 2
    assert warned[0].startswith("mpiguide: the SLURM commands sbatch, squeue or sacct, "
                                "sacctmgr are not on PATH: run on a SLURM cluster's login node; "
                                "on this machine start the test cluster (tests/slurm/cluster.sh "
                                "start, as root) or use --profile local")  # fmt: skip
    assert warned[1].startswith("mpiguide: slurm_account is still the profile's placeholder")
    assert all(w.endswith("(a run without -n stops here)") for w in warned)


def test_a_run_stops_before_submitting_naming_every_problem() -> None:
    with pytest.raises(ConfigError) as err:
        check_submission(SLURM, campaign(), PLACEHOLDER_SETTINGS, print, on_path())
    lines = str(err.value).splitlines()
    assert lines[0] == "mpiguide: nothing submitted to SLURM:"
    assert lines[1].startswith("- the SLURM commands sbatch, squeue or sacct, sacctmgr are not")
    assert lines[2].startswith("- slurm_account is still the profile's placeholder")
    with pytest.raises(ConfigError, match="the SLURM commands sbatch, squeue or sacct, sacctmgr"):
        check_submission(SLURM, campaign(), SITE_SETTINGS, print, on_path())
    with pytest.raises(ConfigError, match="placeholder 'myaccount'"):
        check_submission(SLURM, campaign(), PLACEHOLDER_SETTINGS, print, everything_on_path)


def test_nothing_is_checked_where_nothing_is_submitted_to_slurm() -> None:
    def never(message: str) -> None:
        raise AssertionError(message)

    check_submission(SLURM, campaign(), SITE_SETTINGS, never, everything_on_path)
    check_submission(SLURM, campaign(True), PLACEHOLDER_SETTINGS, never, on_path())
    for executor in ("local", "slurm-jobstep", None):
        command_line = CommandLine(executor=executor)
        check_submission(command_line, campaign(), PLACEHOLDER_SETTINGS, never, on_path())


def fake_workflow(config_args: list[str] | None, account: str) -> SimpleNamespace:
    return SimpleNamespace(
        config_settings=SimpleNamespace(config_args=config_args),
        resource_settings=SimpleNamespace(
            default_resources={"slurm_account": resource(account)}, overwrite_resources={}
        ),
    )


def test_the_started_snakemake_passes_its_launch_on_to_the_jobs_it_spawns() -> None:
    """A SLURM job reads the rules again under slurm-jobstep, its step under a local executor:
    the launch the user's Snakemake decided reaches them in their --config."""
    slurm_campaign = Campaign(
        {"analysis_only": False, "launch": "slurm"}, AnalysisOptions.with_defaults(), "c.yaml"
    )
    workflow = fake_workflow(["runs=3"], "'mpiguide'")
    prepare_jobs(SLURM, slurm_campaign, workflow, print, everything_on_path)
    assert workflow.config_settings.config_args == ["runs=3", "launch=slurm"]
    workflow = fake_workflow(None, "'myaccount'")
    with pytest.raises(ConfigError, match="placeholder 'myaccount'"):
        prepare_jobs(SLURM, slurm_campaign, workflow, print, everything_on_path)
    spawned = CommandLine(executor="local", spawned=True)
    workflow = fake_workflow(["launch=slurm"], "'myaccount'")
    prepare_jobs(spawned, slurm_campaign, workflow, print, on_path())
    assert workflow.config_settings.config_args == ["launch=slurm"]
    assert launch_mode(spawned, "slurm", ["c.yaml"]) == "slurm"
    assert launch_mode(spawned, None, ["c.yaml"]) == "local"


def test_a_job_s_command_line_reads_as_spawned() -> None:
    argv = ["--executor", "slurm-jobstep", "--jobs", "1", "--mode", "remote"]
    read = read_command_line(argv, parse_args, get_profile_dir)
    assert (read.executor, read.spawned) == ("slurm-jobstep", True)
    assert read_command_line(["--mode", "subprocess"], parse_args, get_profile_dir).spawned
    assert not read_command_line([], parse_args, get_profile_dir).spawned
