"""The contract of every undocumented Snakemake name the workflow relies on
(mpiguide.campaign.snakemake_internals; docs/workflow.md, "Snakemake internals we use"), held
against the installed Snakemake: a test per name fails naming it and the Snakemake version when
an upgrade removed or changed it. Each test asks what the workflow needs of the name, as far as
one can without a campaign; the workflow tests (tests/workflow/test_rerun.py,
test_measured_runs.py) prove the whole."""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mpiguide.campaign import snakemake_internals as internals
from mpiguide.campaign.snakemake_internals import (
    TESTED_SNAKEMAKE,
    Arguments,
    SnakemakeChanged,
    installed_snakemake,
)
from workflow_project import job_counts, snakemake

REPO = next(path for path in Path(__file__).parents if (path / "pyproject.toml").exists())
SNAKEMAKE = installed_snakemake()


def holds(condition: bool, what: str) -> None:
    """The contract `what` holds in the installed Snakemake, or the test fails naming both."""
    assert condition, (
        f"Snakemake {SNAKEMAKE} changed {what} (mpiguide was tested with Snakemake "
        f'{TESTED_SNAKEMAKE}; docs/workflow.md, "Snakemake internals we use", says what '
        "relies on it)"
    )


def source(function: Any) -> str:
    return inspect.getsource(function)


def workflow_class() -> Any:
    """snakemake.workflow.Workflow (imported through snakemake.api, as Snakemake does: alone,
    the two import each other)."""
    import snakemake.api  # noqa: F401
    from snakemake.workflow import Workflow

    return Workflow


def holds_a_workflow_field(name: str) -> None:
    """The `workflow` object has the setting `name` (a field of the Workflow dataclass)."""
    fields = {field.name for field in dataclasses.fields(workflow_class())}
    holds(name in fields, f"Workflow.{name}")


# --- the pin ------------------------------------------------------------------------------------


def test_pyproject_pins_the_tested_minor_version() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [
        requirement
        for requirement in project["project"]["optional-dependencies"]["workflow"]
        if re.match(r"snakemake\b(?!-)", requirement)
    ]
    major, minor = map(int, TESTED_SNAKEMAKE.split("."))
    assert pin == f"snakemake>={major}.{minor},<{major}.{minor + 1}", pin


def test_the_installed_snakemake_is_the_tested_minor_version() -> None:
    """After an upgrade: run this file; where every other test passes, move TESTED_SNAKEMAKE and
    pyproject.toml's pin to the new version."""
    holds(SNAKEMAKE.startswith(f"{TESTED_SNAKEMAKE}."), f"its version to {SNAKEMAKE} (the pin)")


def test_a_missing_name_stops_with_the_name_and_the_tested_version() -> None:
    with pytest.raises(SnakemakeChanged) as err:
        internals.is_main_process(SimpleNamespace())
    message = str(err.value)
    assert "Workflow.is_main_process" in message
    assert f"Snakemake {SNAKEMAKE}" in message
    assert f"tested with Snakemake {TESTED_SNAKEMAKE}" in message
    with pytest.raises(SnakemakeChanged, match=r"Workflow\._build_dag\(\) taking no arguments"):
        internals.force_as_dag_is_built(SimpleNamespace(_build_dag=lambda force: None), list)


# --- the changed records' forcing (options.smk) -------------------------------------------------


def test_the_workflow_builds_its_dag_through_build_dag() -> None:
    Workflow = workflow_class()
    build = getattr(Workflow, internals.BUILD_DAG, None)
    holds(callable(build), f"Workflow.{internals.BUILD_DAG}")
    holds(
        list(inspect.signature(build).parameters) == ["self"],
        f"Workflow.{internals.BUILD_DAG}'s signature (self)",
    )
    # Called on the instance, after the DAG object is made, so an instance's replacement runs.
    holds(
        f"self.{internals.BUILD_DAG}()" in source(Workflow.execute)
        and source(Workflow.execute).index("self._prepare_dag(")
        < source(Workflow.execute).index(f"self.{internals.BUILD_DAG}()"),
        f"Workflow.execute calling self.{internals.BUILD_DAG}() after self._prepare_dag()",
    )
    holds(isinstance(inspect.getattr_static(Workflow, "dag"), property), "Workflow.dag")


def test_the_dag_forces_the_rules_and_files_of_its_force_sets() -> None:
    from snakemake.dag import DAG

    made = source(DAG.__init__)
    for name in ("forcerules", "forcefiles"):
        holds(f"self.{name} = set()" in made, f"DAG.{name} (a set made in DAG.__init__)")
    needrun = source(DAG.update_needrun)
    holds("job.rule in self.forcerules" in needrun, "DAG.update_needrun's use of forcerules")
    holds(
        "self.forcefiles.isdisjoint(job.output)" in needrun,
        "DAG.update_needrun's use of forcefiles",
    )


FORCED_WORKFLOW = """\
from mpiguide.campaign.snakemake_internals import (
    force_as_dag_is_built, is_main_process, plain_outputs, snakemake_rule,
)

rule all:
    input: "c.txt", "record/x.json", "record/y.json"

rule a:
    output: "a.txt"
    shell: "touch {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "touch {output}"

rule c:
    input: "b.txt"
    output: "c.txt"
    shell: "touch {output}"

rule d:
    output: "d.txt"
    shell: "touch {output}"

rule record:
    output: "record/{name}.json"
    shell: "touch {output}"

assert snakemake_rule(rules, "undefined") is None
assert plain_outputs(snakemake_rule(rules, "b")) == ["b.txt"]
assert plain_outputs(snakemake_rule(rules, "record")) is None
if is_main_process(workflow) and config.get("force"):
    force_as_dag_is_built(
        workflow,
        lambda: (
            [snakemake_rule(rules, "b"), snakemake_rule(rules, "d")],
            expand(rules.record.output[0], name=["x"]),
        ),
    )
"""


def test_forcing_through_the_dag_runs_what_the_targets_need_and_what_follows(
    tmp_path: Path,
) -> None:
    """A real Snakemake: forced rule `b` runs and `c` after it, the forced file's job runs, and
    `d` (forced, but no target needs it), `a` and the other record's job do not."""
    (tmp_path / "Snakefile").write_text(FORCED_WORKFLOW)
    # Every output exists, each newer than its input: unforced, nothing would run.
    for age, name in enumerate(("record/y.json", "record/x.json", "d.txt", "c.txt", "b.txt")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).touch()
        os.utime(tmp_path / name, (1e9 - age, 1e9 - age))
    (tmp_path / "a.txt").touch()
    os.utime(tmp_path / "a.txt", (1e9 - 10, 1e9 - 10))
    dry_run = ("-n", "--cores", "1", "--workflow-profile", "none", "--config", "force=1")
    output = snakemake(tmp_path, *dry_run).stdout
    jobs = job_counts(output)
    holds(
        jobs == {"all": 1, "b": 1, "c": 1, "record": 1},
        f"which jobs Workflow.dag's forcerules and forcefiles force ({jobs})",
    )
    holds("reason: Forced execution" in output, "the reason of a forced job")


# --- the scheduler's wake-up timers (common.smk's onsuccess and onerror) ------------------------


def test_the_scheduler_wakes_itself_with_timers_that_can_be_cancelled() -> None:
    import threading

    from snakemake.scheduling.job_scheduler import JobScheduler

    owner, name = internals.SCHEDULER_TIMER.split(".")
    start = getattr(JobScheduler, name, None)
    holds(owner == JobScheduler.__name__ and callable(start), internals.SCHEDULER_TIMER)
    woken = threading.Semaphore(0)
    assert start is not None
    start(SimpleNamespace(_open_jobs=woken), 60)
    holds(
        internals.cancel_scheduler_timers() == 1,
        f"{internals.SCHEDULER_TIMER} starting a threading.Timer that releases _open_jobs",
    )
    assert not woken.acquire(timeout=0.2)  # cancelled: it never wakes anything
    assert internals.cancel_scheduler_timers() == 0


def test_the_hooks_run_once_scheduling_has_ended() -> None:
    execute = source(workflow_class().execute)
    scheduled = execute.index("self.scheduler.schedule()")
    holds(
        scheduled < execute.index("self._onsuccess(")
        and scheduled < execute.index("self._onerror("),
        "Workflow.execute calling the onsuccess and onerror hooks after scheduling",
    )


TIMED_WORKFLOW = """\
from mpiguide.campaign.snakemake_internals import cancel_scheduler_timers

rule all:
    output: "a.txt"
    shell: "touch {output}"

onsuccess:
    print(f"cancelled {cancel_scheduler_timers()}")
"""


def test_a_finished_invocation_has_a_timer_to_cancel(tmp_path: Path) -> None:
    """A real Snakemake that ran a job: when its onsuccess hook runs, the scheduler's last
    wake-up timer is pending, and is cancelled."""
    (tmp_path / "Snakefile").write_text(TIMED_WORKFLOW)
    result = snakemake(tmp_path, "--cores", "1", "--workflow-profile", "none")
    holds(
        "cancelled 1" in result.stdout + result.stderr,
        f"the {internals.SCHEDULER_TIMER} timer pending at onsuccess",
    )


# --- one Snakemake decides; the jobs it spawns follow (options.smk, common.smk, executor.py) ----


def test_a_workflow_knows_whether_a_user_started_it() -> None:
    Workflow = workflow_class()
    found = inspect.getattr_static(Workflow, "is_main_process", None)
    holds(isinstance(found, property), "Workflow.is_main_process (a property)")
    holds(
        "ExecMode.DEFAULT" in source(found.fget),
        "Workflow.is_main_process (the exec mode of a Snakemake a user started)",
    )


def test_a_spawned_job_gets_the_config_entries_passed_on() -> None:
    from snakemake.settings.types import ConfigSettings
    from snakemake.spawn_jobs import SpawnedJobArgsFactory

    holds_a_workflow_field("config_settings")
    holds(
        "config_args" in {field.name for field in dataclasses.fields(ConfigSettings)},
        "ConfigSettings.config_args",
    )
    # Read when a job is spawned, long after the rules are read.
    property_to_argument = 'w2a("config_settings.config_args", flag="--config")'
    holds(
        property_to_argument in source(SpawnedJobArgsFactory.general_args),
        "the --config of a spawned job (SpawnedJobArgsFactory.general_args)",
    )
    for given, expected in (
        (["runs=3"], "--config 'runs=3' 'launch=slurm'"),
        (None, "--config 'launch=slurm'"),
    ):
        workflow = SimpleNamespace(config_settings=ConfigSettings(config_args=given))
        internals.pass_config_on(workflow, "launch", "slurm")
        spawned = SpawnedJobArgsFactory(workflow).workflow_property_to_arg(
            "config_settings.config_args", flag="--config"
        )
        holds(spawned == expected, f"a spawned job's --config ({spawned})")


# --- the command line (executor.py) -------------------------------------------------------------


def test_snakemake_s_parser_reads_executor_dry_run_profiles_and_mode() -> None:
    profile = str(REPO / "profiles" / "local")
    argv = ["--executor", "slurm-jobstep", "--jobs", "1", "--mode", "remote", "-n"]
    holds(
        internals.parse_arguments([*argv, "--profile", profile])
        == Arguments("slurm-jobstep", True, (profile,), True),
        "snakemake.cli.parse_args (its executor, dryrun, profile, mode)",
    )
    holds(
        internals.parse_arguments(["--cores", "1"]) == Arguments(None, False, (), False),
        "snakemake.cli.parse_args's defaults",
    )
    holds(internals.parse_arguments(["--no-such-option"]) is None, "parse_args's refusal")
    holds(
        internals.parse_arguments(["--config", "nrep=7", "scale=local"])
        == Arguments(None, False, (), False, ("nrep=7", "scale=local")),
        "snakemake.cli.parse_args's config",
    )
    holds(
        internals.profile_config_file(profile) == Path(profile, "config.yaml"),
        "snakemake.cli.get_profile_dir",
    )


def test_snakemake_reads_config_entries_as_mpiguide_expects() -> None:
    """`validate --config` and the raw guard read KEY=VALUE entries, and validate merges them
    and several files, as the workflow's config gets them."""
    parsed = internals.parse_config(
        ["nrep=7", "remeasure=True", "scale=local", "p_thres=0.01", "runs={min: 4, max: 8}"]
    )
    holds(
        parsed
        == {
            "nrep": 7,
            "remeasure": True,
            "scale": "local",
            "p_thres": 0.01,
            "runs": {"min": "4", "max": "8"},
        },
        "snakemake.cli.parse_config",
    )
    with pytest.raises(internals.ConfigError, match=r"^--config nrep: Invalid config definition"):
        internals.parse_config(["scale=local", "nrep"])
    merged = {"mpi": {"a": {"mpicc": "cc", "env": {"X": "1"}}}, "runs": 3}
    internals.update_config(merged, {"mpi": {"a": {"env": {"Y": "2"}}}, "runs": 4})
    holds(
        merged == {"mpi": {"a": {"mpicc": "cc", "env": {"X": "1", "Y": "2"}}}, "runs": 4},
        "snakemake.utils.update_config",
    )


# --- resources (common.smk's walltime check, executor.py's SLURM check) -------------------------


def test_resources_read_as_the_profile_wrote_them() -> None:
    from snakemake.cli import parse_args
    from snakemake.settings.types import ResourceSettings

    holds_a_workflow_field("resource_settings")
    # What the command line makes of a profile's default-resources and set-resources.
    args = parse_args(
        ["--default-resources", "runtime=30", "slurm_account='site'",
         "--set-resources", "run_block:runtime=4h", "run_block:slurm_partition='debug'"]
    )[1]  # fmt: skip
    settings = ResourceSettings(
        default_resources=args.default_resources, overwrite_resources=args.set_resources
    )
    written = internals.profile_resources(settings)
    holds(
        written["default-resources"]["slurm_account"] == "'site'"
        and written["run_block"] == {"runtime": 240, "slurm_partition": "'debug'"},
        f"Resource.raw ({written})",
    )
    holds(
        internals.runtime_minutes(settings, "run_block") == 240.0
        and internals.runtime_minutes(settings, "build") == 30.0,
        "Resource.is_evaluable and Resource.value of a runtime",
    )
    holds(
        internals.runtime_minutes(ResourceSettings(), "build") is None,
        "the resources of a command line that sets none",
    )


# --- where the workflow runs from and with what (common.smk) ------------------------------------


def test_the_snakefile_being_read_names_its_folder() -> None:
    from snakemake.sourcecache import GithubFile, LocalSourceFile

    Workflow = workflow_class()
    holds(
        isinstance(inspect.getattr_static(Workflow, "current_basedir"), property),
        "Workflow.current_basedir",
    )
    local = SimpleNamespace(current_basedir=LocalSourceFile("/checkout/workflow/rules"))
    holds(
        internals.snakefile_dir(local) == Path("/checkout/workflow/rules"),
        "LocalSourceFile.get_path_or_uri",
    )
    remote = GithubFile(repo="owner/mpiguide", path="workflow/rules/common.smk", tag="v1")
    shown = internals.snakefile_dir(SimpleNamespace(current_basedir=remote.get_basedir()))
    holds(
        isinstance(shown, str) and "owner/mpiguide" in shown,
        f"a remote SourceFile's get_path_or_uri ({shown})",
    )


def test_the_workflow_lists_its_config_files() -> None:
    Workflow = workflow_class()
    holds(
        "self.configfiles = list(self.config_settings.configfiles)"
        in source(Workflow.__post_init__),
        "Workflow.configfiles (from --configfile)",
    )
    holds(
        "self.configfiles.append(fp)" in source(Workflow.configfile),
        "Workflow.configfiles (a `configfile:` directive's)",
    )


def test_the_deployment_method_says_whether_jobs_run_in_conda() -> None:
    from snakemake.cli import parse_args
    from snakemake.settings.types import DeploymentSettings

    holds_a_workflow_field("deployment_settings")
    conda = parse_args(["--sdm", "conda"])[1].software_deployment_method
    for method, expected in ((conda, True), (frozenset(), False)):
        workflow = SimpleNamespace(deployment_settings=DeploymentSettings(deployment_method=method))
        holds(
            internals.uses_conda(workflow) is expected,
            "DeploymentSettings.deployment_method holding DeploymentMethod.CONDA",
        )


# --- rule objects (options.smk) -----------------------------------------------------------------


def test_a_rule_is_named_through_rules() -> None:
    from snakemake.common import Rules
    from snakemake.rules import Rule, RuleProxy

    holds(internals.snakemake_rule(Rules(), "undefined") is None, "rules.<undefined name>")
    rule = object()
    holds(RuleProxy(rule).rule is rule, "RuleProxy.rule")
    holds(callable(getattr(Rule, "has_wildcards", None)), "Rule.has_wildcards")
    holds(isinstance(inspect.getattr_static(Rule, "output"), property), "Rule.output")
