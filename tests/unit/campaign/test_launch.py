"""Env values and launcher strings reach the shell as literal words: a shell runs nothing
hidden in them (proved with bash)."""

import shlex
import subprocess
from pathlib import Path

import pytest

from mpiguide.campaign.launch import (
    command_words,
    env_prefix,
    heap_option,
    node_size_option,
    quoted_launcher,
)
from mpiguide.core.errors import ConfigError

HOSTILE = [
    "; touch {marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "$(shell touch {marker})",
    "' ; touch {marker} ; '",
    '" ; touch {marker} ; "',
    "a\ntouch {marker}",
    "&& touch {marker} || touch {marker} | cat > {marker}",
]


def bash(command: str, cwd: Path) -> str:
    result = subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=True
    )
    return result.stdout


@pytest.mark.parametrize("template", HOSTILE)
def test_env_values_stay_literal(tmp_path: Path, template: str) -> None:
    marker = tmp_path / "marker"
    value = template.format(marker=marker)
    prefix = env_prefix({"MPIGUIDE_HOSTILE": value, "OMPI_MCA_x": "1"})
    out = bash(f"{prefix} printenv MPIGUIDE_HOSTILE", tmp_path)
    assert out == value + "\n"
    assert not marker.exists()


@pytest.mark.parametrize("template", HOSTILE)
def test_quoted_launcher_stay_literal(tmp_path: Path, template: str) -> None:
    marker = tmp_path / "marker"
    # printf stands in for mpirun: it prints every word it receives, one per line
    launcher = "printf '%s\\n' " + shlex.quote(template.format(marker=marker)) + " --oversubscribe"
    out = bash(quoted_launcher(launcher), tmp_path)
    assert out == "".join(word + "\n" for word in shlex.split(launcher)[2:])
    assert not marker.exists()


def test_unquoted_metacharacters_in_a_launcher_are_arguments_not_operators(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    out = bash(quoted_launcher(f"echo go; touch {marker} `touch {marker}`"), tmp_path)
    assert out == f"go; touch {marker} `touch {marker}`\n"  # all of it: words for echo
    assert not marker.exists()


def test_plain_launcher_is_unchanged_and_empty_env_adds_nothing() -> None:
    assert quoted_launcher("mpirun.openmpi --oversubscribe") == "mpirun.openmpi --oversubscribe"
    assert env_prefix({}) == ""
    assert env_prefix({"A": "1", "B": "x y"}) == "env A=1 'B=x y'"


@pytest.mark.parametrize(
    ("command", "message"), [("mpirun 'x", "cannot split"), ("  ", "no command")]
)
def test_unusable_commands_name_the_key(command: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"^c\.yaml: mpi\.a\.launcher: .*{message}"):
        command_words(command, "c.yaml: mpi.a.launcher")


def test_kernel_options_of_an_entry_and_a_deployment() -> None:
    assert heap_option({}) == "--heap default"
    assert heap_option({"heap": "hugepages"}) == "--heap hugepages"
    assert node_size_option({"nodes": 1, "ppn": 4}) == ""
    assert node_size_option({"nodes": 1, "ppn": 4, "node_size": 2}) == "--node-size 2"
