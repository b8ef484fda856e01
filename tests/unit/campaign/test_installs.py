"""An mpi entry that names an install (`install: openmpi-5.0.11`) gets from it the keys and the
environment the library needs, the entry's own keys winning; a campaign refuses an install that
is not in place, and lists a swept library's algorithms with the install's own program."""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import pytest

from mpiguide.campaign import installs
from mpiguide.campaign.config import checked_campaign
from mpiguide.campaign.installs import (
    INSTALLS,
    build_env,
    build_env_prefix,
    with_installs,
)
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.core.errors import ConfigError

SOURCE = "c.yaml"
CAMPAIGN: dict[str, Any] = {
    "campaign": "t",
    "mpi": {},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": [8, 64]}],
    "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
}


def campaign(**entries: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(CAMPAIGN)
    config["mpi"] = copy.deepcopy(entries)
    return config


def filled(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as the schema step leaves it: the install's keys, then the schema's defaults."""
    config = campaign(e=entry)
    with_installs(config)
    validate_schema(config, load_schema(), SOURCE)
    result: dict[str, Any] = config["mpi"]["e"]
    return result


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every install in place below tmp_path (its stamp naming its wheels)."""
    monkeypatch.setattr(installs, "INSTALLS_DIR", tmp_path / ".mpi")
    for install in INSTALLS.values():
        install.prefix.mkdir(parents=True)
        install.stamp.write_text(" ".join(install.wheels) + "\n")
    return tmp_path / ".mpi"


def test_the_schema_names_every_install_and_its_library() -> None:
    entry = load_schema()["$defs"]["mpi_entry"]["properties"]
    assert entry["install"]["enum"] == list(INSTALLS)
    assert {i.library for i in INSTALLS.values()} <= set(entry["library"]["enum"])


def test_an_install_gives_the_entry_its_commands_library_and_environment() -> None:
    entry = filled({"install": "intelmpi-2021.19"})
    prefix = str(INSTALLS["intelmpi-2021.19"].prefix)
    assert entry["mpicc"] == f"{prefix}/bin/mpicc"
    assert shlex.split(entry["launcher"]) == [f"{prefix}/bin/mpiexec"]
    assert entry["library"] == "intelmpi"
    assert entry["env"] == {"I_MPI_ROOT": prefix}
    assert entry["srun"] == "srun --mpi=pmix"  # the schema's default: the install sets none
    assert shlex.split(entry["info"]) == [f"{prefix}/bin/impi_info"]

    openmpi = filled({"install": "openmpi-5.0.11"})
    prefix = str(INSTALLS["openmpi-5.0.11"].prefix)
    assert shlex.split(openmpi["launcher"]) == [f"{prefix}/bin/mpirun", "--oversubscribe"]
    assert shlex.split(openmpi["info"]) == [f"{prefix}/bin/ompi_info"]
    for variable in ("OMPI_ALLOW_RUN_AS_ROOT", "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM"):
        assert openmpi["env"][variable] == "1"
    assert filled({"install": "mpich-5.0.2"})["srun"] == "srun --mpi=pmi2"


def test_the_entry_s_own_keys_win_and_its_env_variable_by_variable() -> None:
    entry = filled(
        {
            "install": "openmpi-5.0.11",
            "launcher": "mpirun -n 1",
            "library": "mpich",
            "env": {"OMPI_ALLOW_RUN_AS_ROOT": "0", "OMPI_MCA_coll": "^han"},
        }
    )
    assert entry["launcher"] == "mpirun -n 1" and entry["library"] == "mpich"
    assert entry["env"]["OMPI_ALLOW_RUN_AS_ROOT"] == "0"
    assert entry["env"]["OMPI_MCA_coll"] == "^han"
    assert entry["env"]["PRTE_ALLOW_RUN_AS_ROOT"] == "1"
    assert entry["mpicc"] == INSTALLS["openmpi-5.0.11"].program("mpicc")


def test_filling_in_twice_changes_nothing() -> None:
    config = campaign(a={"install": "mpich-5.0.2", "env": {"X": "1"}}, b={"mpicc": "cc"})
    with_installs(config)
    once = copy.deepcopy(config)
    with_installs(config)
    assert config == once
    assert config["mpi"]["b"] == {"mpicc": "cc"}


def test_an_unknown_install_is_the_schema_s_to_refuse() -> None:
    config = campaign(e={"install": "openmpi-9"})
    with_installs(config)
    assert config["mpi"]["e"] == {"install": "openmpi-9"}
    with pytest.raises(ConfigError, match=r"mpi\.e\.install: .*openmpi-5\.0\.11"):
        validate_schema(config, load_schema(), SOURCE)


def test_only_intel_mpi_s_build_needs_an_environment() -> None:
    intel = filled({"install": "intelmpi-2021.19"})
    prefix = str(INSTALLS["intelmpi-2021.19"].prefix)
    assert build_env(intel) == {"I_MPI_ROOT": prefix}
    assert build_env_prefix(intel) == shlex.join(["env", f"I_MPI_ROOT={prefix}"])
    # The entry's own value reaches the build too (another copy of the same library).
    other = filled({"install": "intelmpi-2021.19", "env": {"I_MPI_ROOT": "/opt/intel mpi"}})
    assert build_env_prefix(other) == "env 'I_MPI_ROOT=/opt/intel mpi'"
    assert build_env(filled({"install": "openmpi-5.0.11"})) == {}
    assert build_env_prefix(filled({"mpicc": "mpicc.mpich"})) == ""


def test_a_campaign_refuses_an_install_not_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(installs, "INSTALLS_DIR", tmp_path / ".mpi")
    config = campaign(e={"install": "mpich-5.0.2"})
    with pytest.raises(ConfigError, match=r"mpi\.e\.install: mpich-5\.0\.2 is not installed in "):
        checked_campaign(config, SOURCE, tmp_path, tmp_path)
    # Nor with the stamp of other versions.
    install = INSTALLS["mpich-5.0.2"]
    install.prefix.mkdir(parents=True)
    install.stamp.write_text("mpich==5.0.1\n")
    with pytest.raises(ConfigError, match=r"run `make setup-mpi`"):
        checked_campaign(campaign(e={"install": "mpich-5.0.2"}), SOURCE, tmp_path, tmp_path)


def test_an_analysis_only_campaign_needs_no_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(installs, "INSTALLS_DIR", tmp_path / ".mpi")
    config = campaign(e={"install": "mpich-5.0.2"})
    config["analysis_only"] = True
    assert checked_campaign(config, SOURCE, tmp_path, tmp_path).mpi["e"]["library"] == "mpich"


@pytest.mark.usefixtures("installed")
def test_a_campaign_with_installs_is_checked_like_any_other(tmp_path: Path) -> None:
    config = campaign(**{name: {"install": name} for name in INSTALLS})
    checked = checked_campaign(config, SOURCE, tmp_path, tmp_path)
    assert {name: entry["library"] for name, entry in checked.mpi.items()} == {
        "openmpi-5.0.11": "openmpi",
        "mpich-5.0.2": "mpich",
        "intelmpi-2021.19": "intelmpi",
    }


@pytest.mark.usefixtures("installed")
def test_an_intel_mpi_sweep_lists_its_presets_with_the_install_s_impi_info(
    tmp_path: Path,
) -> None:
    """The install's impi_info, not one on PATH: here a prefix without it, so the listing fails
    naming the program it ran."""
    config = campaign(e={"install": "intelmpi-2021.19", "algorithms": {"allreduce": "all"}})
    with pytest.raises(
        ConfigError,
        match=r"mpi\.e\.info: cannot list intelmpi's algorithms with \S*/intelmpi-2021\.19/bin/",
    ):
        checked_campaign(config, SOURCE, tmp_path, tmp_path)


def test_the_setup_script_s_table_names_each_prefix_stamp_and_wheels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    installs.main()
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows == [
        [i.name, str(i.prefix), str(i.stamp), " ".join(i.wheels)] for i in INSTALLS.values()
    ]
    assert all(i.prefix.parent == installs.CHECKOUT / ".mpi" for i in INSTALLS.values())
