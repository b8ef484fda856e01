"""No config string reaches a shell or make where either would act on it: every field that ends
up in a command is refused at validation (naming the key) or provably inert (the marker file a
hostile value tries to create never appears)."""

from __future__ import annotations

import copy
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mpiguide.analysis.catalogue import load_catalogue
from mpiguide.campaign.config import check_campaign
from mpiguide.campaign.launch import env_prefix, quoted_launcher
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

REPO = Path(__file__).resolve().parents[3]
SOURCE = "c.yaml"
# What a shell or make would act on, each trying to create {marker}.
HOSTILE = {
    "backticks": "`touch {marker}`",
    "subst": "$(touch {marker})",
    "make_shell": "$(shell touch {marker})",
    "semicolon": "x; touch {marker}",
    "newline": "x\ntouch {marker}",
}
BASE: dict[str, Any] = {
    "campaign": "t",
    "mpi": {"openmpi": {"mpicc": "mpicc.openmpi", "launcher": "mpirun.openmpi"}},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allgather", "alltoall"], "msg_size": [8, 64]}],
}


def validated(config: dict[str, Any]) -> dict[str, Any]:
    validate_schema(config, load_schema(), SOURCE)
    check_campaign(config, load_catalogue(GUIDELINE_CATALOGUE), SOURCE)
    return config


def with_entry(**entry: Any) -> dict[str, Any]:
    config = copy.deepcopy(BASE)
    config["mpi"]["openmpi"].update(entry)
    return config


REFUSED = {
    "mpicc": (lambda v: with_entry(mpicc=f"mpicc.openmpi {v}"), "mpi.openmpi.mpicc: "),
    "modules": (lambda v: with_entry(modules=[f"openmpi{v}"]), "mpi.openmpi.modules[0]: "),
    "env key": (lambda v: with_entry(env={f"A{v}": "1"}), "mpi.openmpi.env: name "),
    "LD_PRELOAD built": (
        lambda v: with_entry(env={"LD_PRELOAD": f"{v}/libmpiguide-inject.so"}),
        "mpi.openmpi.env.LD_PRELOAD: ",
    ),
    "LD_PRELOAD": (lambda v: with_entry(env={"LD_PRELOAD": f"/lib/{v}.so"}), "no such file"),
    "mpi name": (
        lambda v: {**copy.deepcopy(BASE), "mpi": {f"o{v}": {"mpicc": "mpicc.openmpi"}}},
        "mpi: name ",
    ),
    "campaign": (lambda v: {**copy.deepcopy(BASE), "campaign": f"c{v}"}, "campaign: "),
}


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("field", REFUSED)
def test_a_hostile_value_is_refused_naming_its_key(tmp_path: Path, field: str, kind: str) -> None:
    make, key = REFUSED[field]
    value = HOSTILE[kind].format(marker=tmp_path / "marker")
    with pytest.raises(ConfigError, match=rf"^c\.yaml: .*{key}".replace("[0]", r"\[0\]")) as error:
        validated(make(value))
    assert key in str(error.value)
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("field", ["launcher", "srun", "env value"])
def test_a_hostile_command_value_validates_and_stays_literal(
    tmp_path: Path, field: str, kind: str
) -> None:
    """launcher, srun and env values may hold anything: common.smk passes them through
    quoted_launcher / env_prefix, and bash then runs nothing hidden in them."""
    marker = tmp_path / "marker"
    value = HOSTILE[kind].format(marker=marker)
    if field == "env value":
        config = validated(with_entry(env={"MPIGUIDE_VALUE": value}))
        command = f"{env_prefix(config['mpi']['openmpi']['env'])} printenv MPIGUIDE_VALUE"
        expected = value + "\n"
    else:
        # printf stands in for mpirun: it prints the word it receives
        launcher = f"printf {shlex.quote('%s')} {shlex.quote(value)}"
        config = validated(with_entry(**{field: launcher}))
        command = quoted_launcher(config["mpi"]["openmpi"][field], field)
        expected = value
    out = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert out == expected
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("makefile", ["src/kernel", "src/mockups", "src/inject", "src/tune"])
def test_make_never_expands_mpicc_from_the_environment(
    tmp_path: Path, makefile: str, kind: str
) -> None:
    """The build rules pass mpicc in the environment; the Makefiles' recipes use "$$MPICC", so
    neither make (`$(shell …)`) nor the recipe's shell (`;`, backticks) acts on it — even for
    a value the schema would refuse."""
    marker = tmp_path / "marker"
    hostile = HOSTILE[kind].format(marker=marker)
    env = {**os.environ, "MPICC": f"cc {hostile}"}
    subprocess.run(
        ["make", "-C", str(REPO / makefile), f"BUILD={tmp_path / 'build'}"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert not marker.exists()
