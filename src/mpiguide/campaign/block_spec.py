"""What `mpiguide run-block` is given for one block (`blocking: run`): run NN of every entry of
one deployment, each entry's launcher, env and modules as data, never through a shell
(mpiguide.campaign.blocks runs it).
"""

from __future__ import annotations

from typing import Any

from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.launches import block_record
from mpiguide.core.paths import INPUTS_TREE, RAW_TREE, RUN_LOGS_TREE, run_file


def block_spec(campaign: Campaign, nodes: int, ppn: int, run: int) -> dict[str, Any]:
    """The block's description; a launcher that cannot be split into words is refused here,
    naming its key (ConfigError)."""
    entries = []
    for mpi, entry in campaign.mpi.items():
        campaign.launch_command(mpi)
        entries.append(
            {
                "mpi": mpi,
                "launcher": entry[campaign.launch_key],
                "key_path": campaign.launch_key_path(mpi),
                "env": entry["env"],
                "modules": entry["modules"],
                "kernel": campaign.kernel_binary(mpi),
                "input": run_file(campaign.results, INPUTS_TREE, mpi, nodes, ppn, run, "csv"),
                "output": run_file(campaign.results, RAW_TREE, mpi, nodes, ppn, run, "csv"),
                "log": run_file(campaign.results, RUN_LOGS_TREE, mpi, nodes, ppn, run, "log"),
            }
        )
    return {
        "seed": campaign.config["seed"],
        "nodes": nodes,
        "ppn": ppn,
        "run": run,
        "node_size": campaign.deployment(nodes, ppn).get("node_size"),
        "record": block_record(campaign, nodes, ppn, run),
        "entries": entries,
    }
