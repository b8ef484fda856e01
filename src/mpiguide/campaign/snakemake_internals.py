"""Every name of Snakemake's that the workflow relies on and Snakemake does not document: the rule
files and the campaign modules call these functions, never the names themselves.

Snakemake documents its Snakefile language, its command line and its Python API; what a
Snakefile's `workflow` object holds beyond `source_path` and `cores`, the DAG it builds, its
command-line parser, its rule and resource objects are its own and may change in any release.
docs/workflow.md ("Snakemake internals we use") says why each is used and which public
mechanisms were tried instead; tests/unit/test_snakemake_internals.py holds each against the
installed Snakemake; pyproject.toml pins the minor version they were tested with
(TESTED_SNAKEMAKE). Where an upgrade removed or changed one, the workflow stops with
SnakemakeChanged naming it and that version, not with an AttributeError's traceback.

Snakemake is imported inside the functions (by name, through `_snakemake`): the package runs
without it, and `workflow` and the other objects are passed in.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mpiguide.core.errors import ConfigError, MpiguideError

# The Snakemake minor version every function here was tested with; pyproject.toml pins it
# (tests/unit/test_snakemake_internals.py holds the two equal).
TESTED_SNAKEMAKE = "9.27"
INTERNALS_DOC = 'docs/workflow.md, "Snakemake internals we use"'

# The changed-records forcing (options.smk) replaces this method of the `workflow` object.
BUILD_DAG = "_build_dag"


def installed_snakemake() -> str:
    try:
        return version("snakemake")
    except PackageNotFoundError:
        return "(not installed)"


class SnakemakeChanged(MpiguideError):
    """An undocumented name of Snakemake's that mpiguide relies on is gone or changed."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"mpiguide: the installed Snakemake {installed_snakemake()} has no {what} as "
            f"mpiguide relies on it (tested with Snakemake {TESTED_SNAKEMAKE}; {INTERNALS_DOC}): "
            "install the Snakemake that pyproject.toml pins, pip install -e '.[workflow]' in "
            "the checkout"
        )


def _attribute(owner: Any, name: str, what: str) -> Any:
    """`owner.name`, or SnakemakeChanged naming `what` when the object has no such attribute."""
    try:
        return getattr(owner, name)
    except AttributeError:
        raise SnakemakeChanged(what) from None


def _snakemake(module: str, name: str) -> Any:
    """`name` from Snakemake's `module`, or SnakemakeChanged naming both."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise SnakemakeChanged(f"{module}.{name}") from None


# --- the `workflow` object of a Snakefile -------------------------------------------------------


def is_main_process(workflow: Any) -> bool:
    """Whether this is the Snakemake the user started, not one it spawned to run a job (a SLURM
    job, its step: they read the rules again)."""
    return bool(_attribute(workflow, "is_main_process", "Workflow.is_main_process"))


def snakefile_dir(workflow: Any) -> Path | str:
    """The folder of the Snakefile being read (call it while the file is read): a Path on this
    machine, or, for one read from a URL, its address as text without secrets."""
    local = _snakemake("snakemake.sourcecache", "LocalSourceFile")
    folder = _attribute(workflow, "current_basedir", "Workflow.current_basedir")
    shown = _attribute(folder, "get_path_or_uri", "SourceFile.get_path_or_uri")
    try:
        if isinstance(folder, local):
            return Path(shown(secret_free=False))
        return str(shown(secret_free=True))
    except TypeError:
        raise SnakemakeChanged("SourceFile.get_path_or_uri(secret_free)") from None


def config_files(workflow: Any) -> list[Path]:
    """The config files Snakemake read (--configfile, a profile's `configfile`, `configfile:`)."""
    return [Path(path) for path in _attribute(workflow, "configfiles", "Workflow.configfiles")]


def uses_conda(workflow: Any) -> bool:
    """Whether the jobs run in conda environments (--sdm conda)."""
    conda = _attribute(
        _snakemake("snakemake.settings.types", "DeploymentMethod"), "CONDA", "DeploymentMethod"
    )
    settings = _attribute(workflow, "deployment_settings", "Workflow.deployment_settings")
    methods = _attribute(settings, "deployment_method", "DeploymentSettings.deployment_method")
    return conda in methods


def resource_settings(workflow: Any) -> Any:
    """The resources of the command line and profiles (default-resources, set-resources), for
    profile_resources and runtime_minutes."""
    return _attribute(workflow, "resource_settings", "Workflow.resource_settings")


def pass_config_on(workflow: Any, key: str, value: str) -> None:
    """Add `key=value` to the --config Snakemake gives every job it spawns, after the user's
    entries. Call it while the rules are read, before any job is spawned."""
    settings = _attribute(workflow, "config_settings", "Workflow.config_settings")
    entries = _attribute(settings, "config_args", "ConfigSettings.config_args")
    settings.config_args = [*(entries or ()), f"{key}={value}"]


def force_as_dag_is_built(
    workflow: Any, forced: Callable[[], tuple[Iterable[Any], Iterable[str]]]
) -> None:
    """Have Snakemake force, in the DAG it builds next, the rule objects and output files that
    `forced()` returns (`reason: Forced execution`), as --forcerun forces them: only jobs the
    targets need, and whatever runs after them. `forced` is called as the DAG is built, once
    every rule is defined; nothing is forced where no DAG is built (--lint, --list-rules)."""
    build = _attribute(workflow, BUILD_DAG, f"Workflow.{BUILD_DAG}")
    if not callable(build) or inspect.signature(build).parameters:
        raise SnakemakeChanged(f"Workflow.{BUILD_DAG}() taking no arguments")

    def build_forcing() -> None:
        rules, files = forced()
        dag = _attribute(workflow, "dag", "Workflow.dag")
        for name, items in (("forcerules", rules), ("forcefiles", files)):
            found = _attribute(dag, name, f"DAG.{name}")
            if not isinstance(found, set):
                raise SnakemakeChanged(f"DAG.{name} as a set")
            found.update(items)
        build()

    setattr(workflow, BUILD_DAG, build_forcing)


# --- rules --------------------------------------------------------------------------------------


def snakemake_rule(rules: Any, name: str) -> Any | None:
    """The rule object of `rules.<name>` (what --forcerun compares jobs with), or None where the
    workflow defines no rule `name`."""
    undefined = _snakemake("snakemake.exceptions", "WorkflowError")
    try:
        proxy = getattr(rules, name)
    except undefined:
        return None
    return _attribute(proxy, "rule", "RuleProxy.rule")


def plain_outputs(rule: Any) -> list[str] | None:
    """The output files of a rule object; None for a rule with wildcards (its jobs' files)."""
    if _attribute(rule, "has_wildcards", "Rule.has_wildcards")():
        return None
    return [str(path) for path in _attribute(rule, "output", "Rule.output")]


# --- the scheduler ------------------------------------------------------------------------------

# Each round of Snakemake's scheduler starts a timer that wakes the next (with the default
# --max-jobs-per-timespan, 100/1s, one second long); the interpreter waits for the last one,
# which no scheduler awaits any more, before the invocation ends.
SCHEDULER_TIMER = "JobScheduler._schedule_reevalutation"


def cancel_scheduler_timers() -> int:
    """Cancel the scheduler's pending wake-up timers, once its scheduling has ended (onsuccess,
    onerror): Snakemake then exits at once instead of up to a second later. The number
    cancelled; other threads' timers are left alone."""
    import threading

    cancelled = 0
    for thread in threading.enumerate():
        wakes = getattr(getattr(thread, "function", None), "__qualname__", "")
        if isinstance(thread, threading.Timer) and wakes.startswith(f"{SCHEDULER_TIMER}."):
            thread.cancel()
            cancelled += 1
    return cancelled


# --- resources ----------------------------------------------------------------------------------

DEFAULT_RESOURCES = "default-resources"


def _by_scope(settings: Any) -> dict[str, Any]:
    """default-resources, then set-resources by rule (None where unset)."""
    return {
        DEFAULT_RESOURCES: _attribute(
            settings, "default_resources", "ResourceSettings.default_resources"
        ),
        **_attribute(settings, "overwrite_resources", "ResourceSettings.overwrite_resources"),
    }


def profile_resources(settings: Any) -> dict[str, dict[str, Any]]:
    """The resources of Snakemake's resource settings as written (the profile's text, e.g.
    `"'myaccount'"`): default-resources, then set-resources by rule."""
    return {
        scope: {
            name: _attribute(resource, "raw", "Resource.raw")
            for name, resource in resources.items()
        }
        for scope, resources in _by_scope(settings).items()
        if resources is not None
    }


def runtime_minutes(settings: Any, rule: str) -> float | None:
    """The `runtime` resource (minutes) of the rule's jobs: set-resources, else the profile's
    default-resources; None when neither sets a plain number."""
    scopes = _by_scope(settings)
    for resources in (scopes.get(rule), scopes[DEFAULT_RESOURCES]):
        found = dict(resources.items()).get("runtime") if resources is not None else None
        if found is None:
            continue
        if not _attribute(found, "is_evaluable", "Resource.is_evaluable")():
            return float(_attribute(found, "value", "Resource.value"))
    return None


# --- the command line ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Arguments:
    """What mpiguide reads of Snakemake's command line, as Snakemake's parser reads it."""

    executor: str | None
    dry_run: bool
    profiles: tuple[str, ...]
    spawned: bool  # --mode remote|subprocess: a job's Snakemake, started by another
    config: tuple[str, ...] = ()  # the KEY=VALUE entries of --config (else the profile's)


def parse_arguments(
    argv: Sequence[str], parse: Callable[[list[str]], tuple[Any, Any]] | None = None
) -> Arguments | None:
    """`argv` as Snakemake's parser reads it, its profiles applied (`parse`: snakemake.cli's
    parse_args unless given); None for arguments it refuses (Snakemake was started otherwise)."""
    parse = parse or _snakemake("snakemake.cli", "parse_args")
    try:
        # It says "Using profiles ..." once more, and a parser error goes to stderr.
        with contextlib.redirect_stderr(io.StringIO()):
            args = parse(list(argv))[1]
    except SystemExit:
        return None

    def argument(name: str) -> Any:
        return _attribute(args, name, f"parse_args's argument {name}")

    mode = argument("mode")  # an ExecMode; DEFAULT for the Snakemake a user started
    return Arguments(
        executor=argument("executor"),
        dry_run=bool(argument("dryrun")),
        profiles=tuple(map(str, argument("profile") or ())),
        spawned=mode is not None and _attribute(mode, "name", "ExecMode.name") != "DEFAULT",
        config=tuple(map(str, argument("config") or ())),
    )


def update_config(config: dict[str, Any], overwrite: Mapping[str, Any]) -> None:
    """`overwrite` merged into `config` key by key, mappings recursively, as Snakemake merges
    config files and --config (snakemake.utils.update_config: public, imported here as every
    Snakemake name is, so that the package runs without Snakemake)."""
    _snakemake("snakemake.utils", "update_config")(config, overwrite)


def parse_config(entries: Sequence[str]) -> dict[str, Any]:
    """The config values of --config's KEY=VALUE `entries` as Snakemake reads them
    (snakemake.cli's parse_config: `3` an integer, `True` a boolean, `{a: 1}` YAML whose
    scalars stay strings; the last of two equal keys wins); ConfigError naming the first entry
    it refuses, with its reason."""
    parse = _snakemake("snakemake.cli", "parse_config")
    try:
        return dict(parse(list(entries)))
    except ValueError as error:
        for entry in entries:
            try:
                parse([entry])
            except ValueError as refused:
                raise ConfigError(f"--config {entry}: {refused}") from None
        raise ConfigError(f"--config {' '.join(entries)}: {error}") from None


def profile_config_file(
    profile: str, profile_dir: Callable[[str], tuple[Path, Path] | None] | None = None
) -> Path | None:
    """The config file of the profile named on the command line (`profile_dir`: snakemake.cli's
    get_profile_dir unless given); None when there is none."""
    profile_dir = profile_dir or _snakemake("snakemake.cli", "get_profile_dir")
    found = profile_dir(profile)
    return None if found is None else Path(found[1])
