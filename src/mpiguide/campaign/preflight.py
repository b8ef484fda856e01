"""Before anything runs (also in a dry run): the commands the runs need, each entry's mpicc and
launch command, found on this machine, else the run stopped before any job; what a run costs,
said; a deployment that oversubscribes this machine warned about; a run job that cannot finish
within its walltime refused then rather than killed after hours, and one that typically would not
warned about.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.launch import command_words
from mpiguide.campaign.summary import available_cores, oversubscriptions, run_seconds, typical_run
from mpiguide.campaign.walltime import check_walltime, run_jobs, typical_walltime_warnings
from mpiguide.core.errors import ConfigError
from mpiguide.plan.grid import build_grid


def preflight(
    campaign: Campaign,
    runtime_minutes: Callable[[str], float | None],
    announce: Callable[[str], None],
    warn: Callable[[str], None],
    cores: int | None = None,
) -> None:
    """Announce the typical time of a run and warn of each deployment with more ranks than
    this machine's `cores` (default: those this process may run on), whose timings would
    measure time slices; then check each run rule's `runtime` (minutes, None: no limit)
    against the least time its jobs take (ConfigError), and warn of each whose typical
    estimate exceeds it."""
    config, source = campaign.config, campaign.source
    grid = build_grid(campaign.grid_spec(), source)
    typical = run_seconds(config, grid)
    # the floor of any machine decides a refusal only, which states it
    announce(f"mpiguide: {typical_run(typical)}, an estimate")
    for oversubscribed in oversubscriptions(config, cores or available_cores()):
        warn(f"mpiguide: {source}: {oversubscribed.warning()}")
    runtimes = {rule: runtime_minutes(rule) for rule in run_jobs(config, campaign.blocking)}
    check_walltime(config, grid, campaign.blocking, runtimes, source)
    for warning in typical_walltime_warnings(config, typical, campaign.blocking, runtimes, source):
        warn(f"mpiguide: {warning}")


# `env`'s options that take the next word as their value (GNU coreutils): a launcher written
# `env -u NAME mpirun` runs mpirun.
ENV_OPTIONS_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir"})
WHAT_TO_DO = "install it, give its path, or load it with the entry's `modules:`"

# which(command, path): the path of the program `command` names, searching `path` (PATH when
# None) as a shell would, else None (shutil.which's signature)
Which = Callable[..., str | None]


def program_of(command: str, key_path: str) -> str:
    """The program a command string of the config runs: its first word, or, for `env`, the
    first word after env's options and NAME=value assignments (`key_path` names the key in the
    error of a command that holds no words)."""
    words = command_words(command, key_path)
    if Path(words[0]).name != "env":
        return words[0]
    rest = iter(words[1:])
    for word in rest:
        if word in ENV_OPTIONS_WITH_VALUE:
            next(rest, None)
        elif not word.startswith("-") and "=" not in word:
            return word
    return words[0]


def _needed_commands(campaign: Campaign) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(entry, key, entry) of every command the runs of `campaign` start: the mpicc of each
    entry that builds a kernel, the launch command (`launcher` or `srun`, by `launch`) of every
    entry."""
    built = campaign.built_mpi()
    needed = [(name, "mpicc", entry) for name, entry in built.items()]
    needed += [(name, campaign.launch_key, entry) for name, entry in campaign.mpi.items()]
    return needed


def missing_commands(campaign: Campaign, which: Which = shutil.which) -> list[str]:
    """One message per command a run of `campaign` needs that this machine does not have:
    each entry's mpicc and launch command, looked up on PATH (the launch command on the PATH
    the entry's `env` sets, if it sets one: `env` starts it), or as a file where it names a
    path. Not looked up: an entry's commands when it loads modules (they come with them), and
    anything of an analysis-only campaign, which runs neither."""
    if campaign.config["analysis_only"]:
        return []
    found = []
    for name, key, entry in _needed_commands(campaign):
        if entry["modules"]:
            continue
        where = f"{campaign.source}: mpi.{name}.{key}"
        program = program_of(entry[key], where)
        search = entry["env"].get("PATH") if key == campaign.launch_key else None
        if which(program, path=search) is not None:
            continue
        if os.sep in program:
            said = "no such file" if not Path(program).exists() else "not an executable file"
        else:
            said = "not on PATH" + (f" {search!r}" if search is not None else "")
        found.append(f"{where}: {program!r}: {said}; {WHAT_TO_DO}")
    return found


def require_commands(
    campaign: Campaign,
    dry_run: bool,
    warn: Callable[[str], None],
    conda: bool = False,
    which: Which = shutil.which,
) -> None:
    """Before any job of the workflow: a run whose mpicc or launch command is missing
    (missing_commands) stops, naming each; a dry run warns. Under --sdm conda (`conda`) the
    kernel's conda environment brings both: nothing is looked up."""
    problems = [] if conda else missing_commands(campaign, which)
    if not problems:
        return
    if dry_run:
        for problem in problems:
            warn(f"mpiguide: {problem} (a run without -n stops here)")
        return
    raise ConfigError("\n".join(problems) + "\nmpiguide: nothing was run")
