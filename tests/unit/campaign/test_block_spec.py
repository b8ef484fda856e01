"""The block spec the workflow hands `mpiguide run-block`: every entry's launch as data, read
back by the block runner as it wrote it."""

from __future__ import annotations

import json

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.block_spec import block_spec
from mpiguide.campaign.blocks import BlockSpec
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.options_record import canonical_json
from mpiguide.core.errors import ConfigError


def entry(launcher: str, **more: object) -> dict[str, object]:
    return {"launcher": launcher, "srun": "srun --mpi=pmix", "env": {}, "modules": [], **more}


def campaign(launch: str = "local", launcher: str = "mpirun --oversubscribe") -> Campaign:
    config = {
        "campaign": "c",
        "seed": 3,
        "launch": launch,
        "mpi": {
            "openmpi": entry(launcher, env={"A": "1"}, modules=["openmpi/4"]),
            "openmpi.tuned": entry("mpirun"),
        },
        "deployments": [{"nodes": 1, "ppn": 4, "node_size": 2}],
    }
    kernel_of = {"openmpi.tuned": "openmpi"}
    return Campaign(config, AnalysisOptions.with_defaults(), "c.yaml", kernel_of=kernel_of)


def test_the_spec_names_every_entry_s_launch_files_and_record() -> None:
    spec = block_spec(campaign(), 1, 4, 7)
    assert {key: spec[key] for key in ("seed", "nodes", "ppn", "run", "node_size")} == {
        "seed": 3, "nodes": 1, "ppn": 4, "run": 7, "node_size": 2,
    }  # fmt: skip
    assert spec["record"] == "results/c/blocks/1x4/run07.json"
    first, added = spec["entries"]
    assert first == {
        "mpi": "openmpi",
        "launcher": "mpirun --oversubscribe",
        "key_path": "c.yaml: mpi.openmpi.launcher",
        "env": {"A": "1"},
        "modules": ["openmpi/4"],
        "kernel": "results/c/build/openmpi/mpiguide-bench",
        "input": "results/c/inputs/openmpi/1x4/run07.csv",
        "output": "results/c/raw/openmpi/1x4/run07.csv",
        "log": "results/c/logs/run/openmpi/1x4/run07.log",
    }
    assert added["kernel"] == "results/c/build/openmpi/mpiguide-bench"  # its base entry's build
    parsed = BlockSpec.from_json(canonical_json(spec))
    assert parsed.record == spec["record"]
    assert [e.launcher for e in parsed.entries] == ["mpirun --oversubscribe", "mpirun"]


def test_under_slurm_every_entry_starts_with_its_srun() -> None:
    spec = block_spec(campaign("slurm"), 1, 4, 0)
    assert {e["launcher"] for e in spec["entries"]} == {"srun --mpi=pmix"}
    assert spec["entries"][0]["key_path"] == "c.yaml: mpi.openmpi.srun"


def test_a_launcher_that_cannot_be_split_is_refused_naming_its_key() -> None:
    with pytest.raises(ConfigError, match=r"c.yaml: mpi.openmpi.launcher: cannot split"):
        block_spec(campaign(launcher="mpirun 'unbalanced"), 1, 4, 0)
    json.dumps(block_spec(campaign(), 1, 4, 0))  # plain JSON data


@pytest.mark.parametrize("launch", ["local", "slurm"])
def test_a_run_s_launch_command_ends_its_srun_step_when_a_rank_fails(launch: str) -> None:
    tested = campaign(launch)
    command = {"local": "mpirun --oversubscribe", "slurm": "srun --mpi=pmix"}[launch]
    assert tested.launch_command("openmpi") == f"env SLURM_KILL_BAD_EXIT=1 {command}"
    tested.mpi["openmpi"]["env"]["SLURM_KILL_BAD_EXIT"] = "0"
    assert tested.launch_command("openmpi") == command
