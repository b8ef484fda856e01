"""The executor Snakemake runs with decides how runs start, and nothing is submitted to SLURM
that would fail there: SLURM commands missing, the profile's placeholder account or partition."""

from __future__ import annotations

import argparse
import subprocess
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
    controller_problem,
    executor_launch,
    launch_mode,
    literal_text,
    missing_slurm_commands,
    placeholders,
    prepare_jobs,
    profile_resources,
    read_command_line,
    without_config,
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


def answers() -> None:
    """A SLURM controller that answers `scontrol ping`."""


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
    read = read_command_line(argv, parse_args, get_profile_dir, {})
    assert read == CommandLine(
        "slurm", True, (Path("cluster/config.yaml"),), config_args=("runs=3",), argv=tuple(argv)
    )
    assert capsys.readouterr().err == ""  # "Using profile ..." is said once, by Snakemake
    assert read_command_line([], parse_args, get_profile_dir, {}) == CommandLine("local", False, ())
    profiled = read_command_line(["--profile", "cluster"], parse_args, get_profile_dir, {})
    assert profiled.config_args == ("launch=slurm",)  # the profile's, without a --config


def test_a_command_line_snakemake_refuses_reads_as_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Snakemake started through its API: sys.argv is some other program's."""
    assert read_command_line(["--no-such-option"], parse_args, get_profile_dir) == CommandLine()
    assert capsys.readouterr().err == ""


def test_profiles_are_read_as_their_config_files() -> None:
    def parse(argv: list[str]) -> tuple[None, argparse.Namespace]:
        return None, argparse.Namespace(
            executor=None, dryrun=False, profile=["a", "gone"], mode=None, config=None
        )

    def profile_file(name: str) -> tuple[Path, Path] | None:
        return (Path(name), Path(name, "config.yaml")) if name == "a" else None

    assert read_command_line([], parse, profile_file, {}) == CommandLine(
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
        check_submission(
            SLURM, campaign(), PLACEHOLDER_SETTINGS, print, everything_on_path, answers
        )


def test_nothing_is_checked_where_nothing_is_submitted_to_slurm() -> None:
    def never(message: str) -> None:
        raise AssertionError(message)

    check_submission(SLURM, campaign(), SITE_SETTINGS, never, everything_on_path, answers)
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
    prepare_jobs(SLURM, slurm_campaign, workflow, print, everything_on_path, answers)
    assert workflow.config_settings.config_args == ["runs=3", "launch=slurm"]
    workflow = fake_workflow(None, "'myaccount'")
    with pytest.raises(ConfigError, match="placeholder 'myaccount'"):
        prepare_jobs(SLURM, slurm_campaign, workflow, print, everything_on_path, answers)
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


def ping(returncode: int, stdout: str = "", stderr: str = "", timeout: bool = False) -> Any:
    """subprocess.run as `scontrol ping` answers, recording the command."""
    calls: list[list[str]] = []

    def run(command: list[str], **settings: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        assert settings["timeout"] <= 10
        if timeout:
            raise subprocess.TimeoutExpired(command, settings["timeout"])
        return subprocess.CompletedProcess(command, returncode, stdout, stderr)

    run.calls = calls  # type: ignore[attr-defined]
    return run


def test_a_controller_that_answers_scontrol_ping_is_no_problem() -> None:
    up = ping(0, "Slurmctld(primary) at ctl is UP\n")
    assert controller_problem(everything_on_path, up) is None
    assert up.calls == [["/usr/bin/scontrol", "ping"]]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (ping(1, "Slurmctld(primary) at ctl is DOWN\n"), "(Slurmctld(primary) at ctl is DOWN)"),
        (
            ping(1, stderr="scontrol: fatal: Could not establish a configuration source\n"),
            "(scontrol: fatal: Could not establish a configuration source)",
        ),
        (ping(0, timeout=True), "(no answer within 5 s)"),
        (ping(1), "(exit status 1)"),
    ],
)
def test_a_controller_that_does_not_answer_is_named(answer: Any, said: str) -> None:
    problem = controller_problem(everything_on_path, answer)
    assert problem is not None
    assert problem.startswith(f"no SLURM controller answers `scontrol ping` {said}: run where")
    assert problem.endswith("or use --profile local")


def test_without_scontrol_the_controller_is_not_asked() -> None:
    never = ping(0)
    assert controller_problem(on_path("sbatch"), never) is None
    assert never.calls == []


def test_a_run_stops_and_a_dry_run_warns_when_no_controller_answers() -> None:
    def down() -> str:
        return "no SLURM controller answers"

    with pytest.raises(ConfigError) as err:
        check_submission(SLURM, campaign(), SITE_SETTINGS, print, everything_on_path, down)
    assert str(err.value).splitlines()[1] == "- no SLURM controller answers"
    warned: list[str] = []
    check_submission(DRY_SLURM, campaign(), SITE_SETTINGS, warned.append, everything_on_path, down)
    assert warned == ["mpiguide: no SLURM controller answers (a run without -n stops here)"]


def never_asked() -> str:
    raise AssertionError("the controller was asked although SLURM commands are missing")


def test_the_controller_is_asked_only_where_the_slurm_commands_are() -> None:
    with pytest.raises(ConfigError, match="the SLURM commands sbatch"):
        check_submission(SLURM, campaign(), SITE_SETTINGS, print, on_path(), never_asked)


# -- how the user types the command again --------------------------------------------------------


def test_the_command_again_with_config_entries_added() -> None:
    """Snakemake keeps only the last --config: the entries already given stay in the one shown."""
    argv = ["--profile", "profiles/local", "--config", "nrep=7", "seed=2", "-n", "--cores", "2"]
    read = read_command_line(argv, parse_args, get_profile_dir, {})
    assert read.config_keys() == {"nrep", "seed"}
    assert read.with_config("remeasure=True") == (
        "snakemake --profile profiles/local -n --cores 2 --config nrep=7 seed=2 remeasure=True"
    )
    plain = read_command_line(["--cores", "2"], parse_args, get_profile_dir, {})
    assert plain.config_keys() == frozenset()
    assert plain.with_config("remeasure=True") == "snakemake --cores 2 --config remeasure=True"


def test_the_command_again_as_the_command_that_started_snakemake() -> None:
    argv = ["--profile", "profiles/local", "--config", "nrep=7"]
    make = read_command_line(
        argv, parse_args, get_profile_dir, {"MPIGUIDE_COMMAND": "make demo SNAKEMAKE_ARGS="}
    )
    assert make.with_config("remeasure=True") == (
        "make demo SNAKEMAKE_ARGS='--config nrep=7 remeasure=True'"
    )
    script = read_command_line(argv, parse_args, get_profile_dir, {"MPIGUIDE_COMMAND": "./go"})
    assert script.with_config("a={'b': 1}") == "./go --config nrep=7 'a={'\"'\"'b'\"'\"': 1}'"


@pytest.mark.parametrize(
    ("argv", "kept"),
    [
        (["--config", "a=1", "b=2", "-n"], ["-n"]),
        (["-C", "a=1", "--configfile", "f.yaml"], ["--configfile", "f.yaml"]),
        (["--config=a=1", "-Cb=2", "--cores", "1"], ["--cores", "1"]),
        (["-n", "--config"], ["-n"]),
    ],
)
def test_a_command_line_without_its_config(argv: list[str], kept: list[str]) -> None:
    assert without_config(argv) == kept
