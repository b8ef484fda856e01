"""What the executor Snakemake runs with means for a campaign, decided while the workflow is read:
how its runs start (each mpi entry's `srun` inside SLURM jobs, its `launcher` otherwise), and,
before anything is submitted to SLURM, that the SLURM commands are there, that a controller
answers and that the profile's placeholder account and partition were replaced.

The executor is a command-line option (a profile's `executor:`): unlike `launch` in the config,
a user's `--config` cannot replace it. While the rules are read Snakemake's `workflow` holds
neither the executor nor the profiles, so its own reading of its command line is asked. The
Snakemake the user started decides; the jobs it spawns read the rules again under other
executors (`slurm-jobstep` in a SLURM job, then a local one in the job step), so it passes its
decision on to them in their `--config`. What this asks of Snakemake that it does not document
goes through mpiguide.campaign.snakemake_internals.
"""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiguide.campaign.checked import LAUNCH_KEYS, Campaign
from mpiguide.campaign.snakemake_internals import (
    DEFAULT_RESOURCES,
    parse_arguments,
    parse_config,
    pass_config_on,
    profile_config_file,
    profile_resources,
    resource_settings,
)
from mpiguide.core.errors import ConfigError

# Executors whose jobs are SLURM jobs: `slurm` submits them; `slurm-jobstep` is what Snakemake
# runs inside each job, where the job's rule is read again and must build the same command.
SLURM_EXECUTORS = frozenset({"slurm", "slurm-jobstep"})
SUBMITTING_EXECUTOR = "slurm"
# Snakemake's own executors: jobs run on this machine (a dry run or --touch runs none).
LOCAL_EXECUTORS = frozenset({"local", "dryrun", "touch"})
# What profiles/slurm/config.yaml says until a site edits it (a unit test holds the two equal).
PROFILE_PLACEHOLDERS = {"slurm_account": "myaccount", "slurm_partition": "mypartition"}
# What the SLURM executor plugin calls: sbatch submits; squeue or sacct (the profile's
# slurm-status-command) report job states; sacctmgr checks the account.
SLURM_COMMANDS = (("sbatch",), ("squeue", "sacct"), ("sacctmgr",))
# Set in Snakemake's environment by a command that starts it for the user (the Makefile's
# `make demo`): how the user types that command again, for the messages that tell them what to
# type. A value ending in `=` (`make demo SNAKEMAKE_ARGS=`) takes the Snakemake arguments as its
# value, one shell word; any other is followed by them. Unset: Snakemake's own command line.
STARTED_AS_VARIABLE = "MPIGUIDE_COMMAND"
CONFIG_OPTIONS = ("--config", "-C")
# `scontrol ping` asks the controller whether it is up; one that has not answered within this
# time is taken for unreachable (the executor plugin's first sbatch would wait on it the same).
CONTROLLER_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class CommandLine:
    """What the workflow needs of Snakemake's command line, its profiles applied. `executor`
    is None when Snakemake was not started from its command line (its Python API)."""

    executor: str | None = None
    dry_run: bool = False
    profile_files: tuple[Path, ...] = ()
    spawned: bool = False  # a job's Snakemake, started by another (--mode remote|subprocess)
    config_args: tuple[str, ...] = ()  # --config's KEY=VALUE entries (else a profile's)
    argv: tuple[str, ...] = ()  # Snakemake's arguments, as the user gave them
    started_as: str | None = None  # STARTED_AS_VARIABLE's value

    def config_keys(self) -> frozenset[str]:
        """The config keys --config sets (the top-level ones), as Snakemake reads its entries."""
        return frozenset(parse_config(self.config_args)) if self.config_args else frozenset()

    def with_config(self, *entries: str) -> str:
        """The command the user types to run this invocation again with `entries` added to its
        --config (Snakemake keeps only the last --config: the entries it has stay in it)."""
        config = ["--config", *self.config_args, *entries]
        if self.started_as is not None:
            if self.started_as.endswith("="):
                return self.started_as + shlex.quote(shlex.join(config))
            return f"{self.started_as} {shlex.join(config)}"
        return shlex.join(["snakemake", *without_config(self.argv), *config])


def without_config(argv: Sequence[str]) -> list[str]:
    """`argv` without its --config options and their entries (the words after one, up to the
    next option)."""
    kept: list[str] = []
    entries = False
    for word in argv:
        if entries and not word.startswith("-"):
            continue
        entries = word in CONFIG_OPTIONS
        if entries or word.startswith(("--config=", "-C")):
            continue
        kept.append(word)
    return kept


def read_command_line(
    argv: Sequence[str],
    parse: Callable[[list[str]], tuple[Any, Any]] | None = None,
    profile_file: Callable[[str], tuple[Path, Path] | None] | None = None,
    environment: Mapping[str, str] | None = None,
) -> CommandLine:
    """The CommandLine of `argv` as Snakemake's own parser reads it, the profiles applied, and
    the profiles resolved to their config files (`parse`, `profile_file`: Snakemake's, unless
    given; snakemake_internals.parse_arguments, profile_config_file), and the command that
    started it (STARTED_AS_VARIABLE in `environment`, os.environ unless given). Arguments
    Snakemake's parser refuses: a CommandLine of nothing (Snakemake was started otherwise)."""
    arguments = parse_arguments(argv, parse)
    if arguments is None:
        return CommandLine()
    found = [profile_config_file(profile, profile_file) for profile in arguments.profiles]
    return CommandLine(
        executor=arguments.executor or "local",
        dry_run=arguments.dry_run,
        profile_files=tuple(shown_path(path) for path in found if path is not None),
        spawned=arguments.spawned,
        config_args=arguments.config,
        argv=tuple(argv),
        started_as=(os.environ if environment is None else environment).get(STARTED_AS_VARIABLE),
    )


def shown_path(path: Path) -> Path:
    """`path` relative to the working directory when it is below it, as a user would type it."""
    here = Path.cwd()
    return path.relative_to(here) if path.is_absolute() and path.is_relative_to(here) else path


def executor_launch(executor: str | None) -> str | None:
    """The `launch` an executor implies: `slurm` for SLURM jobs, `local` for Snakemake's own;
    None for an executor not known here."""
    if executor in SLURM_EXECUTORS:
        return "slurm"
    if executor in LOCAL_EXECUTORS:
        return "local"
    return None


def launch_mode(command_line: CommandLine, configured: Any, config_files: Sequence[str]) -> str:
    """How runs start under the command line's executor: its implied launch; a `launch` the
    config sets (`configured`, None when unset) must agree with it (ConfigError naming
    `config_files`), and decides under an executor not known here (default `local`) and in a
    spawned job (the launch its Snakemake passed on, prepare_jobs)."""
    executor = command_line.executor
    implied = executor_launch(executor)
    if implied is None or (command_line.spawned and configured is not None):
        return str(configured or "local")
    if configured is not None and configured != implied:
        raise ConfigError(
            f"{', '.join(config_files)}: launch: {configured!r} disagrees with the executor "
            f"Snakemake runs with ({executor}), whose runs start with each mpi entry's "
            f"`{LAUNCH_KEYS[implied]}`; "
            "remove `launch` from the config and from --config: the executor decides (--profile "
            "slurm for SLURM jobs, --profile local for this machine)"
        )
    return implied


def missing_slurm_commands(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The SLURM commands the executor plugin calls that are not on PATH ("squeue or sacct"
    when neither of the two is)."""
    return [
        " or ".join(alternatives)
        for alternatives in SLURM_COMMANDS
        if not any(which(command) for command in alternatives)
    ]


def literal_text(raw: Any) -> str | None:
    """The string a profile's resource value is (`"'debug'"` -> `debug`); None for a number or
    an expression evaluated per job."""
    if not isinstance(raw, str):
        return None
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def placeholder_lines(resource: str, placeholder: str, files: Sequence[Path]) -> list[str]:
    """`file:line` of every line of the profile files that sets `resource` to `placeholder`."""
    found = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            code = line.split("#", 1)[0]
            if f"{resource}:" in code and placeholder in code:
                found.append(f"{path}:{number}")
    return found


def placeholders(
    resources: Mapping[str, Mapping[str, Any]], profile_files: Sequence[Path]
) -> list[str]:
    """One message per resource still at the profile's placeholder, naming the line to edit."""
    found = []
    for scope, values in resources.items():
        for resource, placeholder in PROFILE_PLACEHOLDERS.items():
            if literal_text(values.get(resource)) != placeholder:
                continue
            where = ", ".join(placeholder_lines(resource, placeholder, profile_files))
            rule = "" if scope == DEFAULT_RESOURCES else f" (set-resources: {scope})"
            found.append(
                f"{resource}{rule} is still the profile's placeholder {placeholder!r}"
                + (f" ({where})" if where else "")
                + f": edit it to your site's {resource.removeprefix('slurm_')} "
                "(docs/cluster.md#what-to-edit)"
            )
    return found


def controller_problem(
    which: Callable[[str], str | None] = shutil.which,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> str | None:
    """Why no SLURM controller answers `scontrol ping` within CONTROLLER_TIMEOUT_SECONDS; None
    when one does, or when scontrol is not on PATH (missing_slurm_commands says what is)."""
    scontrol = which("scontrol")
    if scontrol is None:
        return None
    try:
        ping = run(
            [scontrol, "ping"],
            capture_output=True,
            text=True,
            timeout=CONTROLLER_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        said = f"no answer within {CONTROLLER_TIMEOUT_SECONDS:g} s"
    except OSError as error:
        said = error.strerror or str(error)
    else:
        if ping.returncode == 0 and " is UP" in ping.stdout:
            return None
        lines = [line.strip() for line in (ping.stdout + ping.stderr).splitlines() if line.strip()]
        said = lines[-1] if lines else f"exit status {ping.returncode}"
    return (
        f"no SLURM controller answers `scontrol ping` ({said}): run where the cluster's "
        "slurmctld can be reached (a login node); on this machine start the test cluster "
        "(tests/slurm/cluster.sh start, as root) or use --profile local"
    )


def slurm_problems(
    resources: Mapping[str, Mapping[str, Any]],
    profile_files: Sequence[Path],
    which: Callable[[str], str | None] = shutil.which,
    controller: Callable[[], str | None] | None = None,
) -> list[str]:
    """Why jobs submitted to SLURM now would fail: SLURM commands missing, else a controller
    that does not answer (`controller`: controller_problem unless given), placeholders."""
    problems = placeholders(resources, profile_files)
    missing = missing_slurm_commands(which)
    if missing:
        problems.insert(
            0,
            f"the SLURM commands {', '.join(missing)} are not on PATH: run on a SLURM cluster's "
            "login node; on this machine start the test cluster (tests/slurm/cluster.sh start, "
            "as root) or use --profile local",
        )
    else:
        unanswered = controller() if controller is not None else controller_problem(which)
        if unanswered is not None:
            problems.insert(0, unanswered)
    return problems


def prepare_jobs(
    command_line: CommandLine,
    campaign: Campaign,
    workflow: Any,
    warn: Callable[[str], None],
    which: Callable[[str], str | None] = shutil.which,
    controller: Callable[[], str | None] | None = None,
) -> None:
    """In the Snakemake the user started (`workflow`: Snakemake's), before any job: the launch
    passed on to the jobs it spawns, and what would fail in SLURM refused (check_submission)."""
    if command_line.spawned:
        return
    pass_config_on(workflow, "launch", campaign.config["launch"])
    resources = profile_resources(resource_settings(workflow))
    check_submission(command_line, campaign, resources, warn, which, controller)


def check_submission(
    command_line: CommandLine,
    campaign: Campaign,
    resources: Mapping[str, Mapping[str, Any]],
    warn: Callable[[str], None],
    which: Callable[[str], str | None] = shutil.which,
    controller: Callable[[], str | None] | None = None,
) -> None:
    """Under the SLURM executor, before any job is submitted: a run that would fail in SLURM
    stops (ConfigError, every problem named); a dry run warns of each. `resources` as
    profile_resources gives them; `which`, `controller` as slurm_problems takes them. An
    analysis-only campaign submits nothing."""
    if command_line.executor != SUBMITTING_EXECUTOR or campaign.config["analysis_only"]:
        return
    problems = slurm_problems(resources, command_line.profile_files, which, controller)
    if not problems:
        return
    if command_line.dry_run:
        for problem in problems:
            warn(f"mpiguide: {problem} (a run without -n stops here)")
        return
    raise ConfigError(
        "mpiguide: nothing submitted to SLURM:\n" + "\n".join(f"- {p}" for p in problems)
    )
