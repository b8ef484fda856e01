"""The env file `tune` wrote, applied end to end on Intel MPI 2021.19 with real ranks.

As for Open MPI (test_tune_applied), `tune` (`python -m mpiguide tune`) reads a tests.csv written
for the purpose: the preset recursive_doubling beats allreduce's default at both sizes, across
launches as Intel's presets are measured (block_signed_rank), and reduce_bcast does not. `verify`
then measures for real, all in the same blocks: `intel`, the chosen preset's own entry and
`intel.applied` with the env file's variable, and writes the APPLIED tests and verify.csv /
verify.md with a row per check and an outcome, whatever this machine's runs give.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.analysis.comparisons import BLOCK_SIGNED_RANK
from mpiguide.campaign.installs import INSTALLS
from mpiguide.core.paths import RUN_LOGS_TREE, intelmpi_env_name
from mpiguide.tune.applied import applied_name, default_guideline_id, runs_guideline_id
from mpiguide.tune.intelmpi_settings import applied_env
from mpiguide.tune.verify_report import FILE_BEATS, FILE_RUNS, FORCED
from mpiguide.tune.words import ACROSS, size_text
from workflow_project import algo_tests, block_entries, campaign_project, run_tune, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

INSTALL = INSTALLS["intelmpi-2021.19"]
CAMPAIGN = "config/campaigns/tune-applied-intel.yaml"
ENTRY = "intel"
APPLIED = applied_name(ENTRY)
CHOSEN, OTHER = "recursive_doubling", "reduce_bcast"
PRESET = f"{ENTRY}.allreduce.{CHOSEN}"
# recursive_doubling is allreduce's preset 1 (src/mpiguide/data/intelmpi-presets.tsv)
ADJUST = {"I_MPI_ADJUST_ALLREDUCE": "1"}
SIZES = (8, 4096)
CONFIG: dict[str, Any] = {
    "campaign": "tune-applied-intel",
    "seed": 5,
    "runs": 2,
    "nrep": 5,
    "interleave": 1,
    "mpi": {
        ENTRY: {
            "install": INSTALL.name,
            "algorithms": {"allreduce": [CHOSEN, OTHER]},
            # the library says at MPI_Init which I_MPI_ variables it was started with
            "env": {"I_MPI_DEBUG": "5"},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allreduce"], "msg_size": list(SIZES)}],
    "analysis": {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0},
}
ARGS = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
VERIFY = Path("results") / "tune-applied-intel-verify"
OUTCOMES = {"confirmed", "not confirmed", "cannot tell"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = campaign_project(
        tmp_path_factory.mktemp("tune-applied-intel") / "project", CAMPAIGN, CONFIG
    )
    # recursive_doubling beats the default at every size (violated), reduce_bcast nowhere
    rows = [
        row
        for name, verdicts in [
            (CHOSEN, [(size, 1.5, "violated") for size in SIZES]),
            (OTHER, [(size, 1.0, "holds") for size in SIZES]),
        ]
        for row in algo_tests(
            f"ALGO.{ENTRY}.allreduce.{name}", f"{ENTRY}|{ENTRY}.allreduce.{name}",
            "library-default", verdicts, test=BLOCK_SIGNED_RANK,
        )
    ]  # fmt: skip
    run_tune(root, rows, CAMPAIGN, root / "results" / "tune-applied-intel" / "tuning")
    return root


def test_verify_measures_the_env_file_tune_wrote(project: Path) -> None:
    tuning = project / "results" / "tune-applied-intel" / "tuning"
    chosen = pd.read_csv(tuning / "algorithms.csv")
    violated = chosen[chosen["verdict"] == "violated"]
    assert violated[["msg_size", "algorithm"]].values.tolist() == [[s, CHOSEN] for s in SIZES]
    env_file = (tuning / intelmpi_env_name(ENTRY)).read_text()
    assert applied_env(env_file) == ADJUST, env_file

    result = snakemake(project, "verify", *ARGS, "--config", "verify=True")
    verify = project / VERIFY
    assert sorted(p.name for p in (verify / "raw").iterdir()) == sorted([ENTRY, PRESET, APPLIED])
    # every launch ran in a block of the three, intel.applied and the preset's entry with the
    # preset's variable in their environment, intel without
    launched = block_entries(result.stdout + result.stderr)
    assert sorted(e["mpi"] for e in launched) == sorted([ENTRY, PRESET, APPLIED] * CONFIG["runs"])
    for entry in launched:
        adjust = {k: v for k, v in entry["env"].items() if k.startswith("I_MPI_ADJUST_")}
        assert adjust == ({} if entry["mpi"] == ENTRY else ADJUST), entry["mpi"]
    # and the library read it at MPI_Init (I_MPI_DEBUG=5 prints the variables it started with)
    for name in (APPLIED, ENTRY):
        log = (verify / RUN_LOGS_TREE / name / "1x2" / "run00.log").read_text()
        read = dict(re.findall(r"MPI startup\(\): (I_MPI_ADJUST_\w+)=(\S+)", log))
        assert read == (ADJUST if name == APPLIED else {}), log[-2000:]

    tests = pd.read_csv(verify / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    sides = {
        f"ALGO.{ENTRY}.allreduce.{CHOSEN}": f"{ENTRY}|{PRESET}",
        runs_guideline_id(ENTRY, "allreduce", CHOSEN): f"{PRESET}|{APPLIED}",
        default_guideline_id(ENTRY, "allreduce"): f"{ENTRY}|{APPLIED}",
    }
    for guideline, mpi in sides.items():
        mine = tests[tests["guideline"] == guideline]
        assert sorted(mine["msg_size"].astype(int)) == list(SIZES), guideline
        assert set(mine["mpi"]) == {mpi}, guideline
        assert set(mine["algorithm"]) == {"library-default"}, guideline
        assert set(mine["test"]) == {BLOCK_SIGNED_RANK}, guideline
    # only the chosen preset is swept again
    assert not tests["guideline"].str.contains(OTHER).any()

    checks = pd.read_csv(verify / "verify.csv")
    assert sorted(zip(checks["msg_size"], checks["check"], strict=True)) == sorted(
        (size, check) for size in SIZES for check in (FORCED, FILE_RUNS, FILE_BEATS)
    )
    assert set(checks["algorithm"]) == {CHOSEN}
    assert set(checks["comparison"]) == {ACROSS}
    assert set(checks["outcome"]) <= OUTCOMES
    assert (checks["verify_tests"] > 0).all()
    note = (verify / "verify.md").read_text()
    for words in (f"use {CHOSEN}", f"applied runs {CHOSEN} ({ACROSS})",
                  f"applied beats the old default ({ACROSS})"):  # fmt: skip
        for size in SIZES:
            at = f", {size_text(size)}:"
            line = next(x for x in note.splitlines() if words in x and at in x)
            assert any(f"— verify: {outcome} (" in line for outcome in OUTCOMES), line
