"""Intel MPI's algorithm presets swept end to end with real ranks: `algorithms:` of an entry with
`library: intelmpi` become entries of their own, one per preset, each launched with
I_MPI_ADJUST_ALLREDUCE=<preset> (the library reads it at MPI_Init; nothing switches inside a
launch), in the same blocks as the entry, on the allreduce experiments only; the ALGO guidelines
compare the two entries' launches of each block (the signed-rank test), not within one launch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.analysis.comparisons import BLOCK_SIGNED_RANK
from mpiguide.campaign.installs import INSTALLS
from mpiguide.core.paths import RUN_LOGS_TREE
from workflow_project import campaign_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.kernel]

INSTALL = INSTALLS["intelmpi-2021.19"]
CAMPAIGN = "config/campaigns/intel-presets.yaml"
ENTRY = "intel"
# preset 3 is Reduce + Bcast, 8 Ring (Intel's 2021.12 numbering: data/intelmpi-presets.tsv)
PRESETS = {"reduce_bcast": 3, "ring": 8}
CONFIG: dict[str, Any] = {
    "campaign": "intel-presets",
    "seed": 11,
    "runs": 3,
    "nrep": 5,
    "interleave": 1,
    "mpi": {
        ENTRY: {
            "install": INSTALL.name,
            "algorithms": {"allreduce": list(PRESETS)},
            # the library says at MPI_Init which I_MPI_ variables it was started with
            "env": {"I_MPI_DEBUG": "5"},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allreduce", "bcast"], "msg_size": [8, 1024]}],
    "analysis": {"varied": "msg_size"},
}
ARGS = ("--profile", "profiles/local", "--cores", "2", "--configfile", CAMPAIGN)
RESULTS = Path("results") / "intel-presets"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = campaign_project(tmp_path_factory.mktemp("intel-presets") / "project", CAMPAIGN, CONFIG)
    snakemake(root, str(RESULTS / "guidelines" / "tests.csv"), *ARGS)
    return root


def test_each_preset_is_an_entry_launched_with_its_preset(project: Path) -> None:
    results = project / RESULTS
    presets = {f"{ENTRY}.allreduce.{name}": number for name, number in PRESETS.items()}
    assert sorted(p.name for p in (results / "raw").iterdir()) == sorted([ENTRY, *presets])
    # one kernel build, the entry's
    assert sorted(p.name for p in (results / "build").iterdir()) == [ENTRY]
    for name, number in presets.items():
        log = (results / RUN_LOGS_TREE / name / "1x2" / "run00.log").read_text()
        assert re.search(rf"I_MPI_ADJUST_ALLREDUCE={number}\b", log), log[-2000:]
        rows = pd.read_csv(results / "inputs" / name / "1x2" / "run00.csv")
        assert set(rows["op"]) == {"allreduce"}
    base_log = (results / RUN_LOGS_TREE / ENTRY / "1x2" / "run00.log").read_text()
    assert "I_MPI_ADJUST_ALLREDUCE=" not in base_log
    assert set(pd.read_csv(results / "inputs" / ENTRY / "1x2" / "run00.csv")["op"]) == {
        "allreduce",
        "bcast",
    }


def test_a_preset_s_guideline_compares_the_entries_block_by_block(project: Path) -> None:
    tests = pd.read_csv(
        project / RESULTS / "guidelines" / "tests.csv", dtype=str, keep_default_na=False
    )
    algo = tests[tests["guideline"].str.startswith("ALGO.")]
    assert sorted(set(algo["guideline"])) == sorted(
        f"ALGO.{ENTRY}.allreduce.{name}" for name in PRESETS
    )
    assert len(algo) == len(PRESETS) * 2  # two sizes, one deployment
    assert set(algo["test"]) == {BLOCK_SIGNED_RANK}
    assert set(algo["algorithm"]) == {"library-default"}  # one value: both sides
    assert set(algo["mpi"]) == {f"{ENTRY}|{ENTRY}.allreduce.{name}" for name in PRESETS}
