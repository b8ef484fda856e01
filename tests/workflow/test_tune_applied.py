"""The settings file `tune` wrote, applied end to end on Debian Open MPI with real ranks.

Which algorithm a measured campaign chooses is the machine's to say, and on a loaded machine it
may be none (then verify never reaches `<entry>.applied`). Here the target `tune`'s own code
(`python -m mpiguide tune`) reads a tests.csv written for the purpose, in which ring beats
allreduce's default at 8 B: test input, from which tune writes algorithms.csv and the rules
file. `verify` then measures for real: `openmpi.applied` with that rules file in its launches'
environment and none of the experiments that force an algorithm (the rules file would override
them), the APPLIED tests in tests.csv, and verify.csv / verify.md with a row per check and an
outcome, whatever this machine's runs give.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.tune.applied import applied_name, default_guideline_id, runs_guideline_id
from mpiguide.tune.ompi_rules import rules_env
from mpiguide.tune.verify_report import FILE_BEATS, FILE_RUNS, FORCED
from workflow_project import (
    ROOT_ENV,
    algo_tests,
    block_entries,
    campaign_project,
    run_tune,
    sides,
    snakemake,
)

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

CAMPAIGN = "config/campaigns/tune-applied.yaml"
ENTRY = "openmpi"
APPLIED = applied_name(ENTRY)
CONFIG: dict[str, Any] = {
    "campaign": "tune-applied",
    "seed": 5,
    "runs": 2,
    "nrep": 5,
    "mpi": {
        ENTRY: {
            "mpicc": "mpicc.openmpi",
            "launcher": "mpirun.openmpi --oversubscribe",
            "env": {**ROOT_ENV, "OMPI_MCA_mpi_yield_when_idle": "1"},
            "library": "openmpi",
            "algorithms": {"allreduce": ["ring"]},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": [8, 1024]}],
    # evaluated in every entry: in openmpi.applied under the library's choice alone
    "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
    "analysis": {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0},
}
ARGS = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
OUTCOMES = {"confirmed", "not confirmed", "cannot tell"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = campaign_project(tmp_path_factory.mktemp("tune-applied") / "project", CAMPAIGN, CONFIG)
    # ring beats allreduce's default at 8 B (violated, 1.5x) and holds at 1 KiB
    rows = algo_tests(
        f"ALGO.{ENTRY}.allreduce.ring", ENTRY, "library-default|ring",
        [(8, 1.5, "violated"), (1024, 1.0, "holds")],
    )  # fmt: skip
    run_tune(root, rows, CAMPAIGN, root / "results" / "tune-applied" / "tuning")
    return root


def test_verify_measures_the_rules_file_tune_wrote(project: Path) -> None:
    tuning = project / "results" / "tune-applied" / "tuning"
    chosen = pd.read_csv(tuning / "algorithms.csv")
    assert chosen[chosen["verdict"] == "violated"][["msg_size", "algorithm"]].values.tolist() == [
        [8, "ring"]
    ]
    rules = tuning / f"{ENTRY}.ompi-rules.conf"
    assert "# ring" in rules.read_text()

    result = snakemake(project, "verify", *ARGS, "--config", "verify=True")
    verify = project / "results" / "tune-applied-verify"
    assert sorted(p.name for p in (verify / "raw").iterdir()) == [ENTRY, APPLIED]
    # the launches ran: openmpi.applied with the rules file in its environment, openmpi without
    launched = block_entries(result.stdout + result.stderr)
    assert {e["mpi"] for e in launched} == {ENTRY, APPLIED}
    assert len(launched) == 2 * CONFIG["runs"]
    for entry in launched:
        env = entry["env"]
        if entry["mpi"] == APPLIED:
            assert env == {**CONFIG["mpi"][ENTRY]["env"], **rules_env(rules)}
        else:
            assert "OMPI_MCA_coll_tuned_dynamic_rules_filename" not in env
        assert (project / entry["output"]).is_file() and (project / entry["input"]).is_file()
    # ring forced runs in openmpi's launches only: the rules file would override it in
    # openmpi.applied's, whose inputs hold the library's own call alone
    for entry in launched:
        with (project / entry["input"]).open(newline="") as stream:
            forced = {row.get("algorithm", "") for row in csv.DictReader(stream)}
        assert forced == ({""} if entry["mpi"] == APPLIED else {"", "ring"}), entry["mpi"]

    tests = pd.read_csv(verify / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    runs = tests[tests["guideline"] == runs_guideline_id(ENTRY, "allreduce", "ring")]
    beats = tests[tests["guideline"] == default_guideline_id(ENTRY, "allreduce")]
    assert len(runs) and len(beats)
    # no test takes a forced algorithm's rows from openmpi.applied: every algorithm label of a
    # test that reads it is the library's choice there
    read = tests[tests["mpi"].map(lambda cell: APPLIED in sides(cell))]
    assert len(read) > len(runs) + len(beats)  # the campaign's own guideline too
    for row in read.itertuples():
        for mpi, label in zip(sides(row.mpi), sides(row.algorithm), strict=True):
            assert mpi != APPLIED or label in ("", "library-default"), row

    checks = pd.read_csv(verify / "verify.csv", dtype={"msg_size": str})
    at_8 = checks[(checks["op"] == "allreduce") & (checks["msg_size"] == "8")]
    assert sorted(at_8["check"]) == sorted([FORCED, FILE_RUNS, FILE_BEATS])
    assert set(at_8["algorithm"]) == {"ring"}
    assert set(checks["outcome"]) <= OUTCOMES
    assert (at_8["verify_tests"] > 0).all()
    note = (verify / "verify.md").read_text()
    assert "## The settings file `tune` wrote, applied" in note
    for words in ("its settings file applied runs ring", "its settings file applied beats"):
        line = next(x for x in note.splitlines() if words in x and ", 8 B:" in x)
        assert any(f"— verify: {outcome} (" in line for outcome in OUTCOMES), line
