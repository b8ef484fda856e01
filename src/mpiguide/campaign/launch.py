"""Shell words for launching runs: the mpi entry's env and launcher, quoted for a shell.

Config strings never reach a shell unquoted: env values become one `K=V` word each, and a
launcher with arguments ("mpirun.openmpi --oversubscribe") is split like a shell would split
it, then every word is quoted again, so `;`, `$(...)`, backticks and newlines stay literal.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from mpiguide.core.errors import ConfigError

# Set in every launch's environment unless the mpi entry's `env` sets it. srun ends a step when a
# task fails only if told so (-K, or SLURM_KILL_BAD_EXIT; slurm.conf's KillOnBadExit is 0 by
# default): otherwise a rank the library crashed leaves the others waiting in a collective until
# the job's time limit. Other launchers ignore it (mpirun stops the ranks itself).
LAUNCH_ENV = {"SLURM_KILL_BAD_EXIT": "1"}


def launch_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a launch adds to the entry's `env`: LAUNCH_ENV, but for what `env` sets itself."""
    return {key: value for key, value in LAUNCH_ENV.items() if key not in env}


def env_prefix(env: Mapping[str, str]) -> str:
    """`env K=V ...` with every assignment one quoted word; empty for an empty env."""
    if not env:
        return ""
    return "env " + " ".join(shlex.quote(f"{key}={value}") for key, value in env.items())


def command_words(command: str, key_path: str) -> list[str]:
    """The words of a command string; `key_path` names the config key in errors."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"{key_path}: cannot split {command!r} into words: {exc}") from None
    if not words:
        raise ConfigError(f"{key_path}: {command!r} holds no command")
    return words


def quoted_launcher(command: str, key_path: str = "launcher") -> str:
    """The command re-quoted word by word, ready to paste into a shell command line."""
    return shlex.join(command_words(command, key_path))


def heap_option(entry: Mapping[str, Any]) -> str:
    """`--heap SETTING`: the entry's allocator setting, applied by the kernel per launch."""
    return f"--heap {entry.get('heap', 'default')}"


def node_size_option(deployment: Mapping[str, Any]) -> str:
    """`--node-size K` for a deployment that treats each K consecutive ranks as one node (to run
    node-aware operations on one machine); empty otherwise."""
    node_size = deployment.get("node_size")
    return "" if node_size is None else f"--node-size {int(node_size)}"
