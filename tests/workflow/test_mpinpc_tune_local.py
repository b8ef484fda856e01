"""config/campaigns/mpinpc-tune-local.yaml: mpinpc.yaml's guidelines on a workstation, for `tune`
and `verify` (docs/tuning.md). Only checked, not run (a run takes minutes): it
validates in this process, and stays mpinpc.yaml's campaign but for what its header lists as
departures (deployments, repetitions and time, the algorithms of its nine collectives)."""

from __future__ import annotations

from typing import Any

import yaml

from workflow_project import REPO, validate_campaign

CAMPAIGNS = REPO / "config" / "campaigns"
LOCAL = CAMPAIGNS / "mpinpc-tune-local.yaml"


def load(path: Any) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_it_validates() -> None:
    validate_campaign(LOCAL, "paper")


def test_it_is_mpinpc_at_2_and_4_ranks_on_open_mpi() -> None:
    local, published = load(LOCAL), load(CAMPAIGNS / "mpinpc.yaml")
    assert local["guidelines"] == published["guidelines"]
    assert local["analysis"] == published["analysis"]
    assert [block["op"] for block in local["experiments"]] == [
        block["op"] for block in published["experiments"]
    ]
    for mine, theirs in zip(local["experiments"], published["experiments"], strict=True):
        assert mine["msg_size"] == theirs["msg_size"]
        assert mine["sync"] == theirs["sync"]
    assert [d["nodes"] * d["ppn"] for d in local["deployments"]] == [2, 4]
    assert {d["nodes"] for d in local["deployments"]} == {1}
    (entry,) = local["mpi"].values()
    assert entry["launcher"].startswith("mpirun.openmpi --oversubscribe")
    assert entry["env"]["OMPI_MCA_mpi_yield_when_idle"] == "1"
    # every collective it measures with algorithms of its own, swept within its launches
    assert entry["algorithms"] == dict.fromkeys(
        ["bcast", "reduce", "allreduce", "scan", "scatter", "gather", "allgather", "alltoall",
         "reduce_scatter_block"],
        "all",
    )  # fmt: skip


def test_header_says_how_to_run_it_and_cites_the_paper() -> None:
    header = LOCAL.read_text(encoding="utf-8").split("\ncampaign:", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines() if line.strip())
    assert "Hunold 2023" in header and "Figure 4" in header
    assert (
        "snakemake tune --profile local --configfile config/campaigns/mpinpc-tune-local.yaml"
        in header
    )
    assert "--config verify=True" in header
    assert load(LOCAL)["campaign"] == "mpinpc-tune-local"
