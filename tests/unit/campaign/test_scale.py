"""`local:` blocks: a published campaign shrunk to a workstation at `scale: local`."""

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpiguide.campaign.config import load_campaign
from mpiguide.campaign.scale import apply_scale
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.cli import main
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import expand

REPO = Path(__file__).resolve().parents[3]
LOCAL_MPI = REPO / "config" / "local-mpi.yaml"
SOURCE = "paper.yaml"
PAPER: dict[str, Any] = {
    "campaign": "paper",
    "runs": 30,
    "nrep": 50,
    "mpi": {"site": {"mpicc": "mpicc", "launcher": "mpirun"}},
    "deployments": [{"nodes": 10, "ppn": 16}, {"nodes": 20, "ppn": 16}],
    "experiments": [
        {
            "op": ["neighbor_allgather", "neighbor_alltoall"],
            "topology": ["cart", "moore"],
            "ndim": [1, 2, 3, 4],
            "msg_size": [256, 362, 512],
        },
        {"op": "allgather", "msg_size": [256, 512]},
    ],
    "guidelines": ["GL4"],
    "local": {
        "runs": 10,
        "nrep": 20,
        "deployments": [{"nodes": 1, "ppn": 2}],
        "mpi": ["openmpi", "mpich"],
        "restrict": {"msg_size": [256, 512], "ndim": [1, 2]},
    },
}


def valid(scale: str, **changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(PAPER) | {"scale": scale} | copy.deepcopy(changes)
    validate_schema(config, load_schema(), SOURCE)
    return config


def test_the_paper_scale_is_the_file_as_written() -> None:
    config = valid("paper")
    assert apply_scale(config, LOCAL_MPI, SOURCE) == config


def test_local_scale_replaces_what_the_block_names() -> None:
    scaled = apply_scale(valid("local"), LOCAL_MPI, SOURCE)
    assert scaled["campaign"] == "paper-local"
    assert (scaled["runs"], scaled["nrep"]) == (10, 20)
    assert scaled["deployments"] == [{"nodes": 1, "ppn": 2}]
    assert list(scaled["mpi"]) == ["openmpi", "mpich"]
    assert scaled["mpi"]["mpich"]["mpicc"] == "mpicc.mpich"
    assert scaled["experiments"][0]["msg_size"] == [256, 512]
    assert scaled["experiments"][0]["ndim"] == [1, 2]
    assert scaled["experiments"][1] == {"op": "allgather", "msg_size": [256, 512]}
    # the guidelines and analysis stay the paper's
    assert scaled["guidelines"] == ["GL4"]
    assert {row["msg_size"] for row in expand(scaled, SOURCE)} == {256, 512}


def test_keys_the_block_omits_stay_as_published() -> None:
    scaled = apply_scale(valid("local", local={}), LOCAL_MPI, SOURCE)
    assert (scaled["runs"], scaled["nrep"]) == (30, 50)
    assert scaled["deployments"] == PAPER["deployments"]
    assert list(scaled["mpi"]) == ["openmpi"]
    assert scaled["experiments"] == PAPER["experiments"]


@pytest.mark.parametrize(
    ("local", "message"),
    [
        (None, r"paper\.yaml: scale: local needs a `local:` block"),
        ({"mpi": ["intelmpi"]}, r"local\.mpi: 'intelmpi' is not an entry of .*local-mpi\.yaml"),
        ({"restrict": {"msg_size": [1024]}}, r"local\.restrict\.msg_size: 1024 is not a level"),
        ({"restrict": {"colour": ["red"]}}, r"local\.restrict\.colour: not an experiment param"),
        (
            {"restrict": {"msg_size": [362]}},
            r"local\.restrict\.msg_size leaves experiments\[1\] without any msg_size",
        ),
    ],
)
def test_a_block_that_cannot_apply_is_named(local: dict[str, Any] | None, message: str) -> None:
    config = valid("local")
    if local is None:
        del config["local"]
    else:
        config["local"] = local
    with pytest.raises(ConfigError, match=message):
        apply_scale(config, LOCAL_MPI, SOURCE)


def test_the_schema_refuses_unknown_keys_in_the_block() -> None:
    with pytest.raises(ConfigError, match=r"paper\.yaml: local: .*'nodes'"):
        valid("local", local={"nodes": 2})


def test_validate_checks_a_campaign_at_either_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "paper.yaml"
    path.write_text(yaml.safe_dump(PAPER, sort_keys=False))
    catalogue = GUIDELINE_CATALOGUE
    assert load_campaign(path, catalogue)["campaign"] == "paper"
    local = load_campaign(path, catalogue, "local")
    # the local entries got the schema's defaults, like any entry
    assert local["mpi"]["mpich"]["env"] == {}
    assert local["campaign"] == "paper-local"
    args = ["validate", "--config", str(path), "--catalogue", str(catalogue), "--scale", "local"]
    main(args)
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"{path}: ok")
